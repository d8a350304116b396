// ZeroMQ transport: nodes are processes, on one machine or several, linked by tcp:// or
// ipc:// sockets.
//
// Wiring: a node binds one PULL socket per node that feeds it (a *link*), and connects one
// PUSH socket per node it feeds. One socket per link keeps back-pressure exact: a node stops
// reading a link only when the input the next message is for is full, and messages on one
// link arrive in the sender's (timestamp, flow) order, so the message a blocked node needs is
// never stuck behind one it has no room for (docs/time-management.md, "Progress").
//
// Where ZeroMQ's I/O thread runs: every message crosses from the node's thread to ZeroMQ's I/O
// thread (which writes it to the TCP connection) and, at the sink, from the I/O thread to the
// node's thread: about four thread wake-ups per message, and on a machine with more node
// processes than cores they are most of a message's cost. Two settings (ZmqOptions, off by
// default) trade latency under foreign load for fewer of them, on machines given to the
// federation:
// - io_thread_cpu = kIoThreadCpuByNode pins the I/O thread to one CPU, a different one for
//   consecutive nodes of the federation file, so the K node processes of a machine are spread
//   over its cores and a node's thread is woken beside its I/O thread;
// - io_thread_batch makes it SCHED_BATCH: woken by a send, it does not preempt the running
//   thread but runs when that thread blocks, and then writes every message sent meanwhile in
//   one wake-up. The price: while another program keeps the cores busy, every hand-off waits
//   for that program's time slice (measured: 13 µs per step at K = 2 became 0.5–1.2 ms).
// Together, on a quiet 2-core machine, all-to-all DSAAM takes 2.2x fewer µs per step at K = 4
// and 1.5x at K = 8, and about 10 µs of CPU per message instead of 14-19 (docs/benchmarks.md,
// "ZeroMQ's I/O thread"); pinning alone gained nothing measurable.
//
// Liveness: ZeroMQ heartbeats (ZMQ_HEARTBEAT_IVL / _TIMEOUT) and socket monitors detect a
// peer that died, hangs or left; a port then throws PeerLost naming the peer, the last
// timestamp received from it and the flows left waiting — but only if messages were still
// owed on a link with that peer: a peer that finished normally leaves silently.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "transport/port.hpp"

namespace fleetsim::transport {

/// ZmqOptions::io_thread_cpu: the node's position in the federation file modulo the number of
/// CPUs this process may run on picks the CPU (the k-th of those it may run on).
inline constexpr int kIoThreadCpuByNode = -1;
/// ZmqOptions::io_thread_cpu: the scheduler places the I/O thread (ZeroMQ's default).
inline constexpr int kIoThreadCpuAny = -2;

/// ZeroMQ-specific settings.
struct ZmqOptions {
  /// The CPU that ZeroMQ's I/O thread (and its other background threads) run on:
  /// kIoThreadCpuByNode, kIoThreadCpuAny, or a CPU number this process may run on. The node's
  /// own threads are never pinned.
  int io_thread_cpu = kIoThreadCpuAny;
  /// Run ZeroMQ's background threads as SCHED_BATCH (they never preempt a running thread on
  /// waking; see the top of this file: only where nothing else keeps the cores busy). Applied
  /// only when the node's thread is SCHED_OTHER.
  bool io_thread_batch = false;
  int heartbeat_interval_ms = 200;  ///< ZMQ_HEARTBEAT_IVL
  int heartbeat_timeout_ms = 600;   ///< ZMQ_HEARTBEAT_TIMEOUT: a silent peer is dead after this
  /// After a peer's connection closed, how long its last messages may still be drained from
  /// the socket before the peer is declared lost.
  std::chrono::milliseconds drain_grace{100};
  /// How long close() waits for the nodes this node feeds to receive everything and leave.
  std::chrono::milliseconds linger{10000};
  /// This node's CURVE secret key (Z85), required when the layout lists public keys: the
  /// node's links then accept only the nodes that feed them, each proving it holds the secret
  /// key of the public key listed for it, and every message is encrypted (transport/curve.hpp).
  std::string secret_key;
};

/// The endpoint that node `sink` binds for the link from node `source`: for
/// "tcp://host:port" it is port + k, for "ipc://path" it is "ipc://path.k", where k is the
/// position of `source` among the sink's feeding nodes sorted by name.
std::string link_endpoint(const FederationLayout& layout, const std::string& sink,
                          const std::string& source);

/// Creates the port of node `name`: binds its links, connects to its sinks. Throws
/// std::runtime_error naming the endpoint if a bind fails, or when the layout lists public
/// keys and `zmq_options.secret_key` is not the secret half of this node's.
std::unique_ptr<Port> make_zmq_port(const FederationLayout& layout, const std::string& name,
                                    PortOptions options, ZmqOptions zmq_options = {});

}  // namespace fleetsim::transport
