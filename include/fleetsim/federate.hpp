// The federate API (docs/federate-api.md): a program that is not fleetsim joins a federation
// declared in a federation file (docs/federation-format.md) as one of its nodes, and advances
// its time through HLA-style services on DSAAM flows: time_advance_request for time-stepped
// simulators, next_event_request for event-driven ones. Messages arrive in time-stamp order
// (ties by flow id), whatever the network does, so a federation repeats bit for bit.
//
//   auto fed = fleetsim::Federate::from_command_line(argc, argv);  // as `fleetsim launch` starts
//   it fed.set_message_handler([&](const fleetsim::Delivered& m) { model.take(m); });
//   fed.set_emitter("state", [&](fleetsim::SimTime t) { return model.state_at(t); });
//   for (fleetsim::SimTime t = 0; !fed.time_advance_request(t).done; t += step) {}
//
// Link the `fleetsim_federate` library. One thread uses a Federate.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleetsim/attributes.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// One message delivered by a grant (or read by observe()).
struct Delivered {
  std::string input;  ///< the input's name (in the federation file)
  std::string flow;   ///< the flow's name
  SimTime timestamp = 0;
  std::vector<std::uint8_t> payload;
};

/// A closed range [lower, upper] of one dimension.
struct Range {
  double lower = 0;
  double upper = 0;
};

/// A region (HLA's data distribution management): a box over some of the federation's
/// dimensions (<dimension> in the federation file), by name. A dimension it does not name is
/// unbounded. Two regions overlap when their ranges intersect in every dimension.
using Region = std::map<std::string, Range>;

/// What a time request returns.
struct Grant {
  SimTime time = 0;  ///< the granted time: every message stamped <= time has been delivered
  /// The messages delivered since the previous grant, in time-stamp order (ties by flow id).
  std::vector<Delivered> messages;
  /// The federation's end time is reached: nothing more will be sent or delivered.
  bool done = false;
};

/// How to join. `fleetsim launch` passes these to a program node on its command line
/// (from_command_line reads them).
struct FederateOptions {
  std::string ipc_dir;             ///< endpoints ipc://DIR/NODE for nodes without one
  std::string secret_keys_dir;     ///< authenticated federations: DIR/NODE.key
  std::string trace_dir;           ///< "" = no trace; else DIR/NODE.trace (docs/time-management.md)
  std::uint32_t jitter_us = 0;     ///< a test aid: delay every message by 0..N µs
  std::optional<SimTime> until;    ///< overrides the file's end time (ns)
  std::string time_mode = "afap";  ///< afap, realtime or linear
  double speedup = 1.0;            ///< linear only
  double wait_report_s = 1.0;      ///< report whom it waits for after this long
  bool quiet = false;              ///< no summary line when it resigns
  /// This run's identity, the same on every node: messages stamped with another are refused
  /// (a process of an earlier run still sending). `fleetsim launch` gives one (--run-id).
  std::uint64_t run_id = 0;
  /// How it meets the other nodes: "shm" (shared-memory rings, every node on this machine),
  /// "zmq" (ZeroMQ at the file's endpoints) or "auto": shm when every endpoint is on this
  /// machine (or none is given) and the federation is not authenticated, else zmq. Every node
  /// of a run must make the same choice (`fleetsim launch` passes its own with --transport).
  std::string transport = "auto";
  /// ZeroMQ: "any" (ZeroMQ places its I/O thread) or "dedicated" (pinned to a CPU per node and
  /// SCHED_BATCH; for machines that run nothing else). `fleetsim launch --zmq-io-thread`.
  std::string zmq_io_thread = "any";
};

class Federate {
 public:
  /// Joins the federation of `federation_file` as node `name` (a node with program="..." or
  /// any node the program replaces), over shared memory or ZeroMQ (FederateOptions::transport).
  /// Throws FederateError when the file has errors (every one, FILE:LINE: error: ...), the node
  /// does not exist, or an endpoint is missing.
  Federate(const std::string& federation_file, const std::string& name,
           const FederateOptions& options = {});
  /// Reads `PROGRAM FEDERATION --name NODE [options]`, the command line `fleetsim launch`
  /// gives a program node; --help prints the usage and exits. Throws FederateError on a bad
  /// command line.
  static Federate from_command_line(int argc, char** argv);
  Federate(Federate&&) noexcept;
  Federate& operator=(Federate&&) noexcept;
  /// Resigns (resign()), unless already done.
  ~Federate();

  const std::string& name() const;
  /// The node's outputs and inputs, by name, in file order.
  std::vector<std::string> outputs() const;
  std::vector<std::string> inputs() const;
  /// The last granted time (-1 before the first grant).
  SimTime granted() const;
  /// The federation's end time (ns).
  SimTime until() const;
  /// The timestamp of output `output`'s next message (its flow's schedule: initial, then the
  /// periods in turn); of the earliest of all outputs without an argument. >= until() when
  /// nothing more will be sent.
  SimTime next_emission(const std::string& output) const;
  SimTime next_emission() const;

  /// Sets the value output `output` sends at its next timestamps, until changed (HLA's
  /// attribute update; the flow's period gives the lookahead). On a typed flow, a payload
  /// that is not a value of its class is refused (FederateError naming the node, the flow and
  /// the next timestamp); so is an emitter's, or send_event's, at its timestamp.
  void update(const std::string& output, std::vector<std::uint8_t> payload);
  /// Typed flows (docs/federation-format.md, "Classes"): a value of the class of port `port`
  /// (an output or an input), every attribute zero, to fill with AttributeSet::set and pass
  /// to update() or send_event(). Its errors name the node, the flow and the port's next
  /// timestamp. Throws FederateError for an unknown port or an untyped flow.
  AttributeSet attributes(const std::string& port) const;
  /// The class of port `port`'s flow, or nullptr for an untyped flow (opaque bytes).
  const ClassLayout* data_class(const std::string& port) const;
  /// Reads a typed message by attribute name. Throws FederateError (naming the node, the flow
  /// and the timestamp) when its input is untyped or the payload is not a value of the class.
  AttributeSet decode(const Delivered& message) const;
  /// update() with a value built by attributes(output); it must be of the output's class.
  void update(const std::string& output, const AttributeSet& value);

  /// Instead of update(): computes output `output`'s message when it is due, at timestamp t,
  /// after every message stamped before t has been delivered to a grant or to `on_message`.
  void set_emitter(const std::string& output,
                   std::function<std::vector<std::uint8_t>(SimTime t)> emitter);

  /// Event flows (kind="event" in the file): sends `payload` on output `output` at timestamp
  /// t. Events go out in timestamp order; when the output has nothing to send at its next
  /// timestamp, a null message goes instead (never delivered) and announces the next one:
  /// the next event already sent, or else the earliest time the federate could still send
  /// (its next input's timestamp, or the end of the request under way, plus the lookahead).
  /// t must be >= granted(), >= next_emission(output) (what the last message announced),
  /// >= the federate's time plus the flow's lookahead, at least the lookahead (and 1 ns) after
  /// the previous event sent, and < until(); otherwise FederateError names the node, the flow
  /// and the timestamps. With lookahead 0, a message handler may send at the timestamp of
  /// the message it is given (a reaction): the output waits for every input stamped <= t.
  void send_event(const std::string& output, SimTime t, std::vector<std::uint8_t> payload);
  /// send_event() with a value built by attributes(output).
  void send_event(const std::string& output, SimTime t, const AttributeSet& value);

  /// Observation flows (kind="observation"): the latest message of input `input` stamped <=
  /// the federate's time (the granted time; inside a handler or an emitter, the time of the
  /// message or emission under way), or nothing when none is. Waits until the source has
  /// passed that time. The source never waits for this federate; older values are dropped.
  std::optional<Delivered> observe(const std::string& input);

  /// Receive-order flows (kind="receive-order"; HLA's receive-order delivery): sends `payload`
  /// on output `output` now, outside time management: it goes at once, in the order of the
  /// calls, and is delivered when it arrives. Delivered::timestamp then holds this federate's
  /// time at the call (granted(), or the step's in a handler). Not repeatable. Throws
  /// FederateError for another kind of flow, or a payload that is not a value of its class.
  void send_receive_order(const std::string& output, std::vector<std::uint8_t> payload);
  /// send_receive_order() with a value built by attributes(output).
  void send_receive_order(const std::string& output, const AttributeSet& value);
  /// Receive-order input `input`: every message that has arrived since the last call, in the
  /// order of arrival (its source's order), without waiting. After resign(), what arrived while
  /// it resigned (resign waits for every receive-order source to send its last).
  std::vector<Delivered> arrived(const std::string& input);

  /// Regions (flows with dimensions="..." in the file; HLA's data distribution management):
  /// the region attached to output `output`'s messages from now on: those emitted from now
  /// (update, an emitter, which may call it), and those send_event sends from now. Until the
  /// first call, the whole space. Throws FederateError for a flow without dimensions, a
  /// dimension that is not the flow's, lower > upper or a range outside the dimension's.
  void set_update_region(const std::string& output, const Region& region);
  /// Subscribes input `input` to `region` for its messages stamped >= `from`: a message whose
  /// region does not overlap it is not delivered (it still moves the federate's time on, as a
  /// null message). std::nullopt: every message (the default). `from` must be after the
  /// federate's time (now: the granted time, or the step's in a handler or an emitter), so
  /// the change repeats; it replaces any change of the input at or after `from`.
  void subscribe_region(const std::string& input, std::optional<Region> region, SimTime from);

  /// Delivers every message to `handler` as it is consumed, in time-stamp order, during the
  /// time requests (HLA's reflect callbacks) instead of in Grant::messages: an emitter then
  /// sees every message stamped before its time.
  void set_message_handler(std::function<void(const Delivered&)> handler);

  /// Time-stepped advance (HLA's timeAdvanceRequest): sends and receives everything stamped
  /// <= t, then grants t. t must be >= granted().
  Grant time_advance_request(SimTime t);
  /// Event-driven advance (HLA's nextEventRequest): delivers the earliest messages stamped
  /// <= t (all those with that timestamp) and grants their timestamp; grants t when none come
  /// before. t must be >= granted().
  Grant next_event_request(SimTime t);
  /// Runs to the end time, delivering each message to `on_message` as it is consumed (the
  /// callback style of the built-in nodes).
  void run(const std::function<void(const Delivered&)>& on_message);

  /// Leaves the federation: every message sent is delivered before the peers see it go.
  /// Idempotent. A federate that resigns before the end time stops the nodes that still
  /// expected its messages (they report it); an optional node (optional="true") stops only the
  /// optional nodes that read it.
  void resign();

  /// Messages consumed and emitted so far.
  std::uint64_t consumed() const;
  std::uint64_t emitted() const;

 private:
  struct Impl;
  explicit Federate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleetsim
