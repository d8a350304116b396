// What a node refuses from outside, and how much of it reaches the log: frames that fail the
// wire format's checks (transport/link_port.hpp), connections that fail ZeroMQ's handshake or
// CURVE authentication (a federation's links, a distributed swarm's join port). Every refusal
// is counted; the first ten per link are logged, then one in a thousand, so that garbage sent
// in a loop cannot flood a node's standard error (docs/wire-format.md, "Refusal").
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace fleetsim::transport {

/// The refusals of one link (or port) so far, and which of them to log. The one rate limiter
/// of every refusal a node logs.
class RefusalCount {
 public:
  /// Counts one more refusal; true when it is to be logged (the first ten, then every 1000th).
  bool count() {
    ++n_;
    return n_ <= 10 || n_ % 1000 == 0;
  }
  /// Refusals counted so far.
  std::uint64_t total() const { return n_; }

 private:
  std::uint64_t n_ = 0;
};

/// Follows the ZeroMQ monitor events (zmq_socket_monitor) of one bound socket and finds the
/// connections it refused before any message could pass: those that failed the handshake
/// (ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL or _NO_DETAIL: no CURVE key, a broken or replayed
/// CURVE handshake, a connection closed before its greeting) and those that ZeroMQ dropped
/// without any handshake event, which libzmq 4.3 does for bytes that are not a ZeroMQ greeting
/// (garbage, an HTTP request) on a socket with authentication: for those it reports only
/// ZMQ_EVENT_ACCEPTED and then ZMQ_EVENT_DISCONNECTED. Connections that CURVE authenticated
/// with a key that is not listed (ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) are the ZAP handler's to log
/// (transport/curve.hpp), with the peer's address; they are not counted here.
///
/// libzmq does not say which connection a handshake event is about: each is taken to be about
/// the oldest connection still handshaking. When several connections handshake at once a
/// refusal may then be counted when another of them closes, but every refused connection is
/// counted once, by the time they have all closed.
class HandshakeWatch {
 public:
  /// The events to ask zmq_socket_monitor for.
  static int events();
  /// A refusal found by one event.
  struct Refusal {
    std::string reason;       ///< "it did not authenticate (...)"
    std::uint64_t count = 0;  ///< refusals on this socket so far, this one included
    bool log = false;         ///< this one is to be logged (RefusalCount)
  };
  /// Takes one monitor event (its number and value: the connection's descriptor for
  /// ZMQ_EVENT_ACCEPTED and ZMQ_EVENT_DISCONNECTED).
  std::optional<Refusal> take(std::uint16_t event, std::int32_t value);

 private:
  std::deque<std::int32_t> handshaking_;  ///< accepted connections without a handshake outcome
  RefusalCount refused_;
};

}  // namespace fleetsim::transport
