// A node's attachment to a transport: the one interface behind which in-process queues and
// ZeroMQ sockets sit. The time layer (DSAAM flows, lockstep) only ever talks to a Port.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "transport/message.hpp"

namespace fleetsim::transport {

/// How a flow's timestamps are chosen and read (docs/time-management.md, "Flow kinds").
enum class FlowKind : std::uint8_t {
  kPeriodic,     ///< the file's periods fix every timestamp
  kEvent,        ///< the source picks each next timestamp, at least `lookahead` later; nulls
  kObservation,  ///< periodic at the source; the sink reads the latest value, never in order
  /// Not time-managed: the source sends when it likes, the sink reads what has arrived
  /// (Port::poll). The timestamps on the wire are the messages' numbers on the flow, 0, 1, ...;
  /// a last null message announces the end time (docs/federate-api.md, "Receive-order
  /// channels").
  kReceiveOrder,
};

/// One input of a node: the flow that feeds it, the node that emits that flow, the size of its
/// bounded buffer and the timestamp of its first message.
struct InputLink {
  FlowId flow = 0;
  std::string flow_name;
  std::string source;         ///< name of the node whose output feeds this input
  std::size_t capacity = 16;  ///< messages; a full buffer blocks the sender
  SimTime initial = 0;        ///< ns, timestamp of the first message
  FlowKind kind = FlowKind::kPeriodic;
  SimTime lookahead = 0;  ///< ns, event flows: the next message comes at least this much later
};

/// One output of a node: a flow and the nodes whose inputs it feeds.
struct OutputLink {
  FlowId flow = 0;
  std::string flow_name;
  std::vector<std::string> sinks;  ///< node names, in the order messages are delivered
  SimTime initial = 0;             ///< ns, timestamp of the first message
  FlowKind kind = FlowKind::kPeriodic;
  SimTime lookahead = 0;  ///< ns, event flows: the next message comes at least this much later
  /// Some sinks are optional nodes: they are not in `sinks`, and read the flow's tap instead
  /// (transport/tap.hpp), which the source writes as it sends.
  bool tapped = false;

  /// An event flow with lookahead 0: its source may react at the timestamp of a message it
  /// consumed, so at equal timestamps it emits after consuming (the tie order).
  bool zero_lookahead() const { return kind == FlowKind::kEvent && lookahead == 0; }
};

/// How one node is wired: what the transports need to know about it.
struct NodeLayout {
  std::string name;
  std::string endpoint;  ///< zmq only: "tcp://host:port" or "ipc://path"
  std::vector<InputLink> inputs;
  std::vector<OutputLink> outputs;
  /// An optional node: it joins when it likes and talks through taps only, and no other node
  /// ever waits for it (transport/tap.hpp).
  bool optional = false;
  /// zmq only: the node's CURVE public key (Z85); empty when the federation is not
  /// authenticated (then every node's is empty). transport/curve.hpp.
  std::string public_key;
};

/// The wiring of every node of a federation (every process holds the whole of it).
struct FederationLayout {
  std::vector<NodeLayout> nodes;
  SimTime until = 0;  ///< ns: messages with timestamps >= until are never sent

  /// The node called `name`, or nullptr.
  const NodeLayout* find(const std::string& name) const;
};

/// Thrown by a port when a peer died or left while messages were still expected from it or
/// owed to it. `what()` names the peer, its last timestamp and the flows left waiting.
class PeerLost : public std::runtime_error {
 public:
  PeerLost(std::string peer, const std::string& message)
      : std::runtime_error(message), peer_(std::move(peer)) {}
  const std::string& peer() const { return peer_; }

 private:
  std::string peer_;
};

/// Thrown by a blocked port when the federation was stopped because another node failed.
class FederationStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a port has been blocked on for a while ("who am I waiting for").
struct WaitReport {
  bool sending = false;    ///< true: a sink's buffer is full; false: an input is empty
  std::size_t index = 0;   ///< output index (sending) or input index (receiving)
  std::string peer;        ///< the node waited for
  SimTime peer_last = -1;  ///< ns: last timestamp received from that peer (-1: none yet)
  std::chrono::milliseconds waited{0};
};

/// Options common to every transport.
struct PortOptions {
  /// Delay each sent message by a random 0..jitter_us microseconds (a test aid).
  std::uint32_t jitter_us = 0;
  /// Seed of the jitter draws; 0 draws one from std::random_device (jitter should differ
  /// from run to run: that is its purpose).
  std::uint64_t jitter_seed = 0;
  /// Call `on_wait` after being blocked this long, then again every such interval.
  std::chrono::milliseconds wait_report_after{1000};
  std::function<void(const WaitReport&)> on_wait;
  /// This run's identity, stamped on every message sent and required of every message
  /// received (0 when the nodes were started by hand without one; `fleetsim launch` and
  /// distributed swarm runs draw one at random per run). Transports between processes only.
  std::uint64_t run_id = 0;
  /// Where a port logs refused messages and other non-fatal events (default: stderr).
  std::function<void(const std::string&)> log;
};

/// A fresh run identity for PortOptions::run_id: 64 random bits, never 0.
std::uint64_t new_run_id();
/// `id` as 16 hex digits, and back (nullopt unless 1 to 16 hex digits).
std::string run_id_text(std::uint64_t id);
std::optional<std::uint64_t> parse_run_id(const std::string& text);

/// Counters of one port. Only data-plane messages travel: there is no other traffic to count
/// besides the transport's own heartbeats.
struct PortStats {
  std::uint64_t messages_sent = 0;  ///< per sink: a flow with 3 sinks counts 3
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t refused = 0;  ///< malformed or unexpected messages dropped on arrival
};

/// A node's attachment to the transport. One thread uses a port (the node's thread).
class Port {
 public:
  explicit Port(const NodeLayout& layout, PortOptions options);
  virtual ~Port() = default;
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  /// Delivers `m` to every sink of output `output`, in the order of the sinks, blocking while
  /// a sink's buffer is full (back-pressure; nothing is ever dropped). Throws PeerLost or
  /// FederationStopped.
  virtual void send(std::size_t output, const Message& m) = 0;
  /// Delivers `per_sink[k]` to sink k of output `output` (in the order of the layout's sinks),
  /// as send() would: one emission of the flow whose payload differs by sink (a routed round's
  /// parts go to their process only). Every message has the same flow, timestamp and period.
  /// Transports that cannot address one sink throw std::logic_error.
  virtual void send_each(std::size_t output, std::span<const Message> per_sink);
  /// Removes and returns the oldest message of input `input`, blocking until there is one.
  /// Throws PeerLost or FederationStopped.
  virtual Message receive(std::size_t input) = 0;
  /// Receive-order inputs: removes and returns the oldest message of input `input` that has
  /// arrived, without waiting; nothing when none has. Throws std::logic_error on a transport
  /// that has no such inputs (in-process nodes are never sinks of receive-order flows).
  virtual std::optional<Message> poll(std::size_t input);
  /// Normal end: every message sent is delivered before the peers see this node leave.
  virtual void close() = 0;

  const NodeLayout& layout() const { return layout_; }
  const PortStats& stats() const { return stats_; }

 protected:
  /// Sleeps a random 0..jitter_us microseconds (no-op without jitter).
  void jitter();
  /// Reports through options_.log (or stderr).
  void log(const std::string& line) const;
  /// Calls on_wait if set.
  void report_wait(bool sending, std::size_t index, const std::string& peer,
                   std::chrono::steady_clock::time_point since) const;
  /// Last timestamp received from `peer` (-1: none).
  SimTime last_from(const std::string& peer) const;

  NodeLayout layout_;
  PortOptions options_;
  PortStats stats_;
  std::map<std::string, SimTime> last_from_;  ///< per peer: last timestamp received

 private:
  std::uint64_t jitter_state_ = 0;
};

}  // namespace fleetsim::transport
