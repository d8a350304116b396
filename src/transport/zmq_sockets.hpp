// What every ZeroMQ socket of fleetsim's is given: heartbeats (a peer that dies or hangs is
// seen to leave within the timeout) and a monitor (its connections, handshakes and refusals).
// Used by the transport's links and by a distributed run's join port.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <zmq.hpp>

#include "transport/zmq_transport.hpp"

namespace fleetsim::transport {

/// ZeroMQ's heartbeats on `s`, with `options`' interval and timeout.
inline void set_heartbeats(zmq::socket_t& s, const ZmqOptions& options = {}) {
  s.set(zmq::sockopt::heartbeat_ivl, options.heartbeat_interval_ms);
  s.set(zmq::sockopt::heartbeat_timeout, options.heartbeat_timeout_ms);
  s.set(zmq::sockopt::heartbeat_ttl, options.heartbeat_timeout_ms);
}

/// A monitor of `s` (zmq_socket_monitor) for `events`, published at `address` (inproc://,
/// unique in the context) and connected.
inline zmq::socket_t monitor_socket(zmq::context_t& ctx, zmq::socket_t& s,
                                    const std::string& address, int events) {
  if (zmq_socket_monitor(s.handle(), address.c_str(), events) != 0) throw zmq::error_t();
  zmq::socket_t m(ctx, zmq::socket_type::pair);
  m.set(zmq::sockopt::linger, 0);
  m.connect(address);
  return m;
}

/// One event of a monitor, without waiting: its number and value (two frames: 6 bytes of
/// event and value, then the endpoint, read and dropped).
inline std::optional<std::pair<std::uint16_t, std::int32_t>> read_monitor_event(
    zmq::socket_t& monitor) {
  zmq::message_t head;
  if (!monitor.recv(head, zmq::recv_flags::dontwait)) return std::nullopt;
  std::uint16_t event = 0;
  std::int32_t value = 0;
  if (head.size() >= 6) {
    std::memcpy(&event, head.data(), 2);
    std::memcpy(&value, static_cast<const char*>(head.data()) + 2, 4);
  }
  zmq::message_t address;
  if (head.more()) (void)monitor.recv(address);
  return std::make_pair(event, value);
}

}  // namespace fleetsim::transport
