// A DSAAM node (docs/time-management.md): inputs and outputs with exact next timestamps, and
// the operational semantics of the paper's section III-B as a small state machine. The node
// decides what happens next — emit on the output with the smallest timestamp, or consume the
// input with the smallest timestamp — and refuses any call that would break the four rules.
//
// Tie order (a total order, never the order of arrival): every step has a key (timestamp,
// phase, flow id) and the smallest goes first. Phase 0: emit on an output with a lookahead
// (periodic flows, event flows with lookahead > 0); phase 1: consume an input; phase 2: emit
// on a zero-lookahead event output. So at equal timestamps an output with a lookahead emits
// before the inputs are consumed (consuming T would forbid emitting T, rule 3), and a
// zero-lookahead output emits after every input message stamped <= T is consumed: it may react
// to them at T. Observation inputs are not in this order: the node reads them (observe()).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "time/pacer.hpp"
#include "time/trace.hpp"
#include "transport/port.hpp"
#include "transport/tap.hpp"

namespace fleetsim::time {

using transport::FlowId;
using transport::Message;

/// Raised when node code breaks the DSAAM contract, e.g. emits a timestamp other than the one
/// announced by the previous message's period. Names the node, the flow, the expected and the
/// offending timestamp.
class ContractViolation : public std::runtime_error {
 public:
  ContractViolation(std::string node, std::string flow, SimTime expected, SimTime offending,
                    const std::string& message)
      : std::runtime_error(message),
        node_(std::move(node)),
        flow_(std::move(flow)),
        expected_(expected),
        offending_(offending) {}
  const std::string& node() const { return node_; }
  const std::string& flow() const { return flow_; }
  SimTime expected() const { return expected_; }
  SimTime offending() const { return offending_; }

 private:
  std::string node_, flow_;
  SimTime expected_, offending_;
};

/// What a node emits on an output when asked to.
struct Emission {
  SimTime timestamp = 0;  ///< must equal the announced timestamp
  /// ns to this flow's next message, > 0; on an event flow, >= its lookahead as well
  SimTime period = 0;
  std::vector<std::uint8_t> payload;
  /// Event flows only: a null message (no payload; it only announces the next timestamp).
  bool null = false;
};

/// The simulator inside a node: consumes messages and produces emissions, in the order the
/// FlowNode decides. Called from the node's thread only.
class NodeBehaviour {
 public:
  virtual ~NodeBehaviour() = default;
  /// A message consumed on input `input` (index in the node's layout). Null messages of event
  /// flows and observation inputs never come here.
  virtual void consume(std::size_t input, const Message& m) = 0;
  /// The message due on output `output` at `timestamp`.
  virtual Emission emit(std::size_t output, SimTime timestamp) = 0;
  /// Observation input `input`'s latest message stamped <= `at` (nullptr: none yet), given by
  /// run() just before each emission at `at`, for every observation input in layout order.
  virtual void observe(std::size_t /*input*/, const Message* /*latest*/, SimTime /*at*/) {}
  /// Called once after the node ran to its end time (by federation::NodeRun, before
  /// state_hash()): a simulator that has more to do at the end does it here.
  virtual void finish() {}
  /// A hash of the simulator's final state (printed at the end, compared by tests).
  virtual std::uint64_t state_hash() const { return 0; }
};

/// Settings of a FlowNode.
struct FlowNodeOptions {
  SimTime until = 0;  ///< ns: the node stops when every next timestamp is >= until
  TimeMode mode = TimeMode::kAsFastAsPossible;
  double speedup = 1.0;                         ///< kLinear only
  TraceWriter* trace = nullptr;                 ///< optional, not owned
  std::function<void(const std::string&)> log;  ///< diagnostics (default stderr)
  /// The run's identity: names the taps of outputs that feed optional nodes
  /// (transport/tap.hpp), which the node writes as it sends.
  std::uint64_t run_id = 0;
};

/// A DSAAM node bound to a transport port. Single-threaded.
class FlowNode {
 public:
  /// The action the rules allow next.
  struct Step {
    enum class Kind { kConsume, kEmit, kDone } kind = Kind::kDone;
    std::size_t index = 0;  ///< input or output index
    SimTime timestamp = 0;
  };

  FlowNode(const transport::NodeLayout& layout, transport::Port& port, FlowNodeOptions options);

  /// What must happen next: a pure function of the next timestamps (see the tie order above).
  Step next() const;
  /// Consumes the next message (blocking until it arrives). Only when next() is kConsume.
  Message consume();
  /// Emits on output `output`; checks the contract first. Only when next() is that kEmit.
  void emit(std::size_t output, Emission e);
  /// Emits on output `output` a message of `e`'s timestamp and period whose payload differs by
  /// sink: `per_sink[k]` goes to the output's sink k (e.payload is not sent). The contract is
  /// the emission's, whatever each sink is sent. Not on an output with a tap.
  void emit_each(std::size_t output, Emission e, std::vector<std::vector<std::uint8_t>> per_sink);
  /// Runs `behaviour` until the end time: the whole life of a node in one call.
  void run(NodeBehaviour& behaviour);

  /// Observation input `input`: receives every message stamped <= `at` (blocking until the
  /// source has announced a timestamp > at) and returns the latest of them, or nullptr when
  /// none is. Older ones are dropped: the sink reads values, it does not consume a sequence.
  /// `at` must not decrease from one call to the next on the same input.
  const Message* observe(std::size_t input, SimTime at);
  /// Receive-order output `output` (outside the DSAAM order: next() never offers it): sends
  /// `payload` now, as the flow's next message (timestamps number the messages, 0, 1, ...).
  /// Throws std::logic_error when the flow has no room for another before the end time.
  void send_receive_order(std::size_t output, std::vector<std::uint8_t> payload);
  /// Receive-order input `input`: the oldest message that has arrived, without waiting; nothing
  /// when none has (or the source has sent its last).
  std::optional<Message> poll(std::size_t input);
  /// Reads every observation input to the end time, and ends every receive-order flow: sends
  /// the last message of its outputs, then takes what its inputs' sources still send until
  /// theirs. A node calls it before it leaves, so that no source still sends to a node that
  /// has gone. run() does it. Returns the receive-order messages taken, by input.
  std::vector<std::pair<std::size_t, Message>> finish();
  /// The timestamp of the node's current step: of the last message consumed or emitted (-1
  /// before any).
  SimTime now() const { return now_; }

  /// "Who am I waiting for": a sentence naming the input or output, the peer and its last
  /// timestamp, for a port's wait report.
  std::string describe_wait(const transport::WaitReport& r) const;

  const transport::NodeLayout& layout() const { return layout_; }
  /// Timestamp of the next message to consume on each input / emit on each output.
  const std::vector<SimTime>& input_next() const { return t_; }
  const std::vector<SimTime>& output_next() const { return s_; }
  std::uint64_t consumed() const { return consumed_; }
  std::uint64_t emitted() const { return emitted_; }
  const Pacer& pacer() const { return pacer_; }

 private:
  /// The contract's checks of an emission on `output` (violation() on a breach), then the
  /// pacer's wait for its timestamp.
  void check_emission(std::size_t output, const Emission& e);
  /// The message of emission `e` on `output`, without its payload.
  Message message(std::size_t output, const Emission& e) const;
  /// Books emission `e` on `output` as sent.
  void book_emission(std::size_t output, const Emission& e);
  /// Throws ContractViolation when message `m` breaks the source's side of the contract.
  void check_received(std::size_t input, const Message& m) const;
  [[noreturn]] void violation(std::size_t output, SimTime expected, SimTime offending,
                              const std::string& what) const;

  transport::NodeLayout layout_;
  transport::Port& port_;
  FlowNodeOptions options_;
  Pacer pacer_;
  std::vector<SimTime> t_;  ///< per input: timestamp of the next message to consume
  std::vector<SimTime> s_;  ///< per output: timestamp of the next message to emit
  SimTime last_consumed_ = -1;
  SimTime last_emitted_ = -1;
  SimTime now_ = -1;
  /// Per output: its tap when it feeds optional nodes (and this node is not one: an optional
  /// node's port writes its taps).
  std::vector<std::unique_ptr<transport::TapWriter>> taps_;
  std::vector<std::optional<Message>> latest_;  ///< per input: observation inputs' last value
  std::vector<SimTime> observed_at_;            ///< per input: the last `at` of observe()
  std::uint64_t consumed_ = 0;
  std::uint64_t emitted_ = 0;
};

}  // namespace fleetsim::time
