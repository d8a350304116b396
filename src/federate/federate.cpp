// The federate API (include/fleetsim/federate.hpp, docs/federate-api.md) on the time layer: a
// FlowNode on a ZeroMQ port decides, by the DSAAM rules, when each message is emitted and
// consumed; the time requests only cut that sequence at the times the program asks for.
#include "fleetsim/federate.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/diagnostics.hpp"
#include "core/little_endian.hpp"
#include "federation/datastream.hpp"
#include "federation/federation_file.hpp"
#include "federation/launcher.hpp"
#include "federation/node_runner.hpp"
#include "time/flow_node.hpp"
#include "time/trace.hpp"
#include "transport/open_port.hpp"
#include "transport/shm_transport.hpp"
#include "transport/zmq_transport.hpp"

namespace fleetsim {

namespace {

std::string fmt_time(SimTime t) {
  return fmt::format("{} ns", t);
}

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

SimTime add_saturated(SimTime a, SimTime b) {
  return a > kNever - b ? kNever : a + b;
}

/// A region's ranges as they travel after a message's value: per dimension of the flow, f64
/// lower then f64 upper, little-endian.
void append_region(std::vector<std::uint8_t>& payload, const std::vector<Range>& region) {
  for (const Range& r : region) {
    append_le(payload, r.lower);
    append_le(payload, r.upper);
  }
}

/// Takes the region off the end of `payload` (its `dims` dimensions); false when too short.
bool take_region(std::vector<std::uint8_t>& payload, std::size_t dims, std::vector<Range>& out) {
  if (payload.size() < 16 * dims) return false;
  const std::size_t at = payload.size() - 16 * dims;
  out.resize(dims);
  for (std::size_t k = 0; k < dims; ++k)
    out[k] = {get_le<double>(&payload[at + 16 * k]), get_le<double>(&payload[at + 16 * k + 8])};
  payload.resize(at);
  return true;
}

bool overlap(const std::vector<Range>& a, const std::vector<Range>& b) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k].lower <= b[k].upper && b[k].lower <= a[k].upper)) return false;
  return true;
}

/// attributes() or decode() on a flow without a class.
FederateError untyped(const std::string& context) {
  return FederateError(context +
                       ": the flow is untyped (opaque bytes; expected class=\"...\" on its ports "
                       "in the federation file)");
}

}  // namespace

struct Federate::Impl {
  federation::Federation fed;
  std::size_t index = 0;
  FederateOptions options;
  std::unique_ptr<transport::Port> port;
  std::optional<time::TraceWriter> trace;
  std::unique_ptr<time::FlowNode> node;
  struct Output {
    std::string name, flow;
    std::vector<SimTime> periods;
    std::uint64_t sent = 0;
    std::optional<std::vector<std::uint8_t>> value;
    std::function<std::vector<std::uint8_t>(SimTime)> emitter;
    transport::FlowKind kind = transport::FlowKind::kPeriodic;
    SimTime lookahead = 0;  ///< event outputs
    /// Event outputs: the events sent and not yet due, in timestamp order.
    std::deque<std::pair<SimTime, std::vector<std::uint8_t>>> events;
    std::shared_ptr<const ClassLayout> data_class;  ///< nullptr: untyped
    /// Flows with dimensions: the region attached to the messages, per dimension of the flow.
    std::vector<Range> region;
  };
  std::vector<Output> outputs;
  /// Per input of a flow with dimensions: the subscription's changes, (from, region; nothing:
  /// every message), in time order.
  std::vector<std::vector<std::pair<SimTime, std::optional<std::vector<Range>>>>> subscriptions;
  std::vector<std::pair<std::string, std::string>> inputs;  ///< (input, flow) names
  std::function<void(const Delivered&)> handler;
  /// What the node's inputs do to each message before it is delivered (class checks,
  /// modifiers).
  std::optional<federation::Datastreams> streams;
  SimTime granted = -1;
  SimTime last_consumed = -1;
  /// The time of the request under way (kNever for run()): after it the program may send
  /// events from there on, so the null messages sent meanwhile announce no later time.
  SimTime horizon = -1;
  /// The timestamp of the step under way, while a handler or an emitter runs (else -1).
  SimTime current = -1;
  bool resigned = false;
  /// Receive-order inputs: what arrived at the end, when the federate resigned (arrived()
  /// still gives it).
  std::vector<std::vector<Delivered>> arrived_at_end;

  const federation::NodeDecl& decl() const { return fed.nodes[index]; }

  std::size_t input_index(const std::string& name) const {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].first == name) return i;
      names.push_back(inputs[i].first);
    }
    throw FederateError(
        fmt::format("node '{}' has no input '{}'{}", decl().name, name, did_you_mean(name, names)));
  }

  std::size_t output_index(const std::string& name) const {
    for (std::size_t o = 0; o < outputs.size(); ++o)
      if (outputs[o].name == name) return o;
    std::vector<std::string> names;
    for (const auto& o : outputs) names.push_back(o.name);
    throw FederateError(fmt::format("node '{}' has no output '{}' (its outputs: {}){}", decl().name,
                                    name,
                                    names.empty() ? "none" : fmt::to_string(fmt::join(names, ", ")),
                                    did_you_mean(name, names)));
  }

  Output& periodic_output(const char* what, const std::string& name) {
    Output& o = outputs[output_index(name)];
    if (o.kind == transport::FlowKind::kReceiveOrder)
      throw FederateError(fmt::format(
          "node '{}': {}(\"{}\"): flow '{}' is a receive-order flow (send its messages with "
          "send_receive_order)",
          decl().name, what, name, o.flow));
    if (o.kind == transport::FlowKind::kEvent)
      throw FederateError(
          fmt::format("node '{}': {}(\"{}\"): flow '{}' is an event flow (send its messages with "
                      "send_event)",
                      decl().name, what, name, o.flow));
    return o;
  }

  void live(const char* what) const {
    if (resigned) throw FederateError(fmt::format("{}: node '{}' has resigned", what, decl().name));
  }
  void check_time(const char* what, SimTime t) const {
    live(what);
    if (t < granted)
      throw FederateError(fmt::format(
          "node '{}': {}({}) is below the time already granted, {} (time never goes back)",
          decl().name, what, fmt_time(t), fmt_time(granted)));
  }

  /// Refuses a payload that is not a value of output `o`'s class, naming the node, the flow
  /// and the timestamp it is for.
  void check_payload(const Output& o, SimTime at, const std::vector<std::uint8_t>& payload) const {
    if (!o.data_class) return;
    const std::string problem = o.data_class->layout_problem(payload);
    if (!problem.empty())
      throw FederateError(fmt::format("node '{}', flow '{}' at {}: {}", decl().name, o.flow,
                                      fmt_time(at), problem));
  }

  /// Refuses a value of another class than output `o`'s.
  void check_class(const Output& o, SimTime at, const AttributeSet& value) const {
    if (o.data_class && &value.class_layout() == o.data_class.get()) return;
    throw FederateError(
        fmt::format("node '{}', flow '{}' at {}: a value of class '{}' (expected {})", decl().name,
                    o.flow, fmt_time(at), value.class_layout().name,
                    o.data_class ? "class '" + o.data_class->name + "', the output's"
                                 : std::string("bytes: the flow is untyped")));
  }

  /// The federate's own time: the granted time, or the step's during a callback.
  SimTime now() const { return std::max(granted, current); }

  /// `region` as the ranges of flow `f`'s dimensions (the unnamed ones unbounded), refusing a
  /// dimension that is not the flow's, lower > upper and a range outside the dimension's.
  std::vector<Range> ranges_of(const char* what, const std::string& port_name,
                               const federation::FlowDecl& f, const Region& region) const {
    const auto context = [&] {
      return fmt::format("node '{}', flow '{}': {}(\"{}\")", decl().name, f.name, what, port_name);
    };
    if (f.dimensions.empty())
      throw FederateError(fmt::format(
          "{}: the flow has no regions (expected dimensions=\"...\" on it in the federation "
          "file)",
          context()));
    std::vector<Range> out;
    std::vector<std::string> names;
    for (std::size_t d : f.dimensions) {
      const auto& dim = fed.dimensions[d];
      out.push_back(
          {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()});
      names.push_back(dim.name);
    }
    for (const auto& [name, range] : region) {
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end())
        throw FederateError(fmt::format("{}: dimension '{}' is not one of the flow's ({}){}",
                                        context(), name, fmt::join(names, ", "),
                                        did_you_mean(name, names)));
      const auto& dim = fed.dimensions[f.dimensions[static_cast<std::size_t>(it - names.begin())]];
      if (!(range.lower <= range.upper) || range.lower < dim.lower || range.upper > dim.upper)
        throw FederateError(fmt::format(
            "{}: dimension '{}' gets [{}, {}] (expected lower <= upper, within the dimension's "
            "range [{}, {}])",
            context(), name, range.lower, range.upper, dim.lower, dim.upper));
      out[static_cast<std::size_t>(it - names.begin())] = range;
    }
    return out;
  }

  /// Takes the region off message `m` of input `input` (a flow with dimensions) and tells
  /// whether it overlaps the input's subscription at the message's timestamp.
  bool in_region(std::size_t input, transport::Message& m) const {
    const auto& f = fed.flow_into(index, input);
    if (f.dimensions.empty()) return true;
    std::vector<Range> region;
    if (!take_region(m.payload, f.dimensions.size(), region))
      throw FederateError(fmt::format(
          "node '{}', flow '{}' at {}: a message of {} bytes carries no region (expected its "
          "value, then 16 bytes per dimension of the flow, {})",
          decl().name, f.name, fmt_time(m.timestamp), m.payload.size(), f.dimensions.size()));
    const std::optional<std::vector<Range>>* in_force = nullptr;
    for (const auto& change : subscriptions[input])
      if (change.first <= m.timestamp) in_force = &change.second;
    return !in_force || !*in_force || overlap(**in_force, region);
  }

  /// A receive-order message as delivered: the sender's time (the 8 bytes before the value),
  /// then the value through the input's datastream (class check, frame conversion).
  Delivered received_in_order_of_arrival(std::size_t input, transport::Message m) {
    const std::string& flow = inputs[input].second;
    if (m.payload.size() < 8)
      throw FederateError(fmt::format(
          "node '{}', flow '{}': a receive-order message of {} bytes (expected the sender's "
          "time, 8 bytes, then the value)",
          decl().name, flow, m.payload.size()));
    m.timestamp = get_le<SimTime>(m.payload.data());
    m.payload.erase(m.payload.begin(), m.payload.begin() + 8);
    streams->apply(input, m);
    return Delivered{inputs[input].first, flow, m.timestamp, std::move(m.payload)};
  }

  /// The message due on event output `o` at `at`: the event sent for that time, or a null
  /// message. Either announces the next timestamp: the next event sent, or the earliest time
  /// the program could still send one (its lookahead after the next input it will be given,
  /// or after the request under way), whichever comes first, and never within the lookahead.
  time::Emission event_emission(Output& o, SimTime at) const {
    time::Emission e;
    e.timestamp = at;
    if (!o.events.empty() && o.events.front().first == at) {
      e.payload = std::move(o.events.front().second);
      o.events.pop_front();
    } else {
      e.null = true;
    }
    SimTime next_input = kNever;
    const auto& in = node->layout().inputs;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (in[i].kind != transport::FlowKind::kObservation &&
          in[i].kind != transport::FlowKind::kReceiveOrder)
        next_input = std::min(next_input, node->input_next()[i]);
    SimTime next = add_saturated(std::min(next_input, horizon), o.lookahead);
    if (!o.events.empty()) next = std::min(next, o.events.front().first);
    next = std::max(next, add_saturated(at, std::max<SimTime>(o.lookahead, 1)));
    // Nothing is sent at or after the end: announce the end rather than overflow.
    if (next > fed.until)
      next = std::max(fed.until, add_saturated(at, std::max<SimTime>(o.lookahead, 1)));
    e.period = next - at;
    return e;
  }

  /// Does the next step if its timestamp is <= t (and, for `only_consume_at`, if it consumes
  /// at that very timestamp); returns what it did.
  enum class Did { kNothing, kEmitted, kConsumed, kNull, kDone };
  Did step(SimTime t, std::vector<Delivered>* out,
           const std::function<void(const Delivered&)>* on_message) {
    const auto s = node->next();
    if (s.kind == time::FlowNode::Step::Kind::kDone) return Did::kDone;
    if (s.timestamp > t) return Did::kNothing;
    if (s.kind == time::FlowNode::Step::Kind::kEmit) {
      Output& o = outputs[s.index];
      if (o.kind == transport::FlowKind::kEvent) {
        node->emit(s.index, event_emission(o, s.timestamp));
        ++o.sent;
        return Did::kEmitted;
      }
      time::Emission e;
      e.timestamp = s.timestamp;
      e.period = o.periods[o.sent % o.periods.size()];
      if (o.emitter) {
        current = s.timestamp;
        e.payload = o.emitter(s.timestamp);
        current = -1;
        check_payload(o, s.timestamp, e.payload);
      } else if (o.value) {
        e.payload = *o.value;
      } else {
        throw FederateError(fmt::format(
            "node '{}': output '{}' has no value to send at {} (call update(\"{}\", ...) or "
            "set_emitter before asking for a time >= its next message)",
            decl().name, o.name, fmt_time(s.timestamp), o.name));
      }
      if (!o.region.empty()) append_region(e.payload, o.region);
      node->emit(s.index, std::move(e));
      ++o.sent;
      return Did::kEmitted;
    }
    transport::Message m = node->consume();
    if (m.null) return Did::kNull;                       // moves time on, delivered to no one
    if (!in_region(s.index, m)) return Did::kNull;       // outside the subscription: the same
    if (!streams->apply(s.index, m)) return Did::kNull;  // down-sampled: the same
    Delivered d{inputs[s.index].first, inputs[s.index].second, m.timestamp, std::move(m.payload)};
    current = m.timestamp;
    if (on_message && *on_message) {
      (*on_message)(d);
    } else if (handler) {
      handler(d);
    } else if (out) {
      out->push_back(std::move(d));
    }
    current = -1;
    last_consumed = m.timestamp;
    return Did::kConsumed;
  }
};

Federate::Federate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Federate::Federate(Federate&&) noexcept = default;
Federate& Federate::operator=(Federate&&) noexcept = default;

Federate::~Federate() {
  try {
    if (impl_) resign();
  } catch (...) {
  }
}

Federate::Federate(const std::string& federation_file, const std::string& name,
                   const FederateOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.options = options;
  Diagnostics diags;
  auto fed = federation::load_federation(federation_file, diags);
  if (!fed) throw FederateError(diags.str());
  m.fed = std::move(*fed);
  if (options.until) m.fed.until = *options.until;
  const auto* decl = m.fed.find(name);
  if (!decl) {
    std::vector<std::string> names;
    for (const auto& n : m.fed.nodes) names.push_back(n.name);
    throw FederateError(fmt::format("{}: error: no node called '{}'{}", federation_file, name,
                                    did_you_mean(name, names)));
  }
  m.index = m.fed.index_of(name);
  if (!options.ipc_dir.empty()) federation::assign_ipc_endpoints(m.fed, options.ipc_dir);
  if (options.transport != "auto" && options.transport != "shm" && options.transport != "zmq")
    throw FederateError("transport '" + options.transport + "' (expected auto, shm or zmq)");
  const bool shm = transport::use_shm(m.fed.layout(), options.transport);
  for (const auto& n : m.fed.nodes)
    if (n.endpoint.empty() && !shm)
      throw FederateError(fmt::format(
          "{}:{}: error: node '{}' has no endpoint (expected endpoint=\"tcp://host:port\" or "
          "\"ipc://path\", or FederateOptions::ipc_dir; `fleetsim launch --transport zmq` "
          "gives one)",
          n.where.file, n.where.line, n.name));
  for (std::size_t o = 0; o < decl->outputs.size(); ++o) {
    const auto& f = m.fed.flow_from(m.index, o);
    m.outputs.push_back({decl->outputs[o].name,
                         f.name,
                         f.periods,
                         0,
                         std::nullopt,
                         {},
                         f.kind,
                         f.lookahead,
                         {},
                         f.data_class});
  }
  for (std::size_t o = 0; o < decl->outputs.size(); ++o)
    if (!m.fed.flow_from(m.index, o).dimensions.empty())
      m.outputs[o].region =
          m.ranges_of("set_update_region", decl->outputs[o].name, m.fed.flow_from(m.index, o), {});
  for (std::size_t i = 0; i < decl->inputs.size(); ++i)
    m.inputs.emplace_back(decl->inputs[i].name, m.fed.flow_into(m.index, i).name);
  m.subscriptions.resize(decl->inputs.size());
  m.streams.emplace(m.fed, m.index);

  transport::PortConfig pc;
  // An optional node reads and writes taps only: no one connects to it or waits for it.
  pc.carrier = decl->optional ? transport::Carrier::kTap
               : shm          ? transport::Carrier::kShm
                              : transport::Carrier::kZmq;
  try {
    pc.zmq =
        federation::zmq_options_for(m.fed, name, options.secret_keys_dir, options.zmq_io_thread);
  } catch (const std::runtime_error& e) {
    throw FederateError(e.what());
  }
  transport::PortOptions& po = pc.port;
  po.jitter_us = options.jitter_us;
  po.run_id = options.run_id;
  po.wait_report_after = std::chrono::milliseconds(
      std::max<std::int64_t>(1, std::llround(options.wait_report_s * 1000)));
  po.log = federation::log_line;
  Impl* self = &m;
  po.on_wait = [self](const transport::WaitReport& r) {
    if (self->node) federation::log_line(self->node->describe_wait(r));
  };
  const auto layout = m.fed.layout();
  m.port = transport::open_port(layout, name, std::move(pc));
  if (!options.trace_dir.empty()) {
    std::filesystem::create_directories(options.trace_dir);
    m.trace.emplace((std::filesystem::path(options.trace_dir) / (name + ".trace")).string(), name);
  }
  time::FlowNodeOptions fo;
  fo.until = m.fed.until;
  if (!time::parse_time_mode(options.time_mode, fo.mode))
    throw FederateError("time mode '" + options.time_mode +
                        "' (expected afap, realtime or linear)");
  fo.speedup = options.speedup;
  fo.trace = m.trace ? &*m.trace : nullptr;
  fo.log = federation::log_line;
  fo.run_id = options.run_id;
  m.node = std::make_unique<time::FlowNode>(layout.nodes[m.index], *m.port, fo);
}

Federate Federate::from_command_line(int argc, char** argv) {
  std::string federation, name;
  FederateOptions o;
  std::int64_t until_ns = -1;
  long parent_pid = 0;
  std::string run_id;
  CLI::App app{
      "A federate of a fleetsim federation (docs/federate-api.md). `fleetsim launch "
      "--transport shm|zmq` starts it as: PROGRAM FEDERATION --name NODE [options]"};
  app.add_option("FEDERATION", federation, "The federation file")->required();
  app.add_option("--name", name, "Which node of the federation this program is")->required();
  app.add_option("--ipc-dir", o.ipc_dir, "Give nodes without an endpoint ipc://DIR/NODE");
  app.add_option("--trace", o.trace_dir, "Write DIR/NODE.trace");
  app.add_option("--jitter-us", o.jitter_us, "Delay every message by 0..N microseconds");
  app.add_option("--time-mode", o.time_mode, "afap, realtime or linear")
      ->check(CLI::IsMember({"afap", "realtime", "linear"}));
  app.add_option("--speedup", o.speedup, "Speed-up of linear time")->check(CLI::PositiveNumber);
  app.add_option("--until-ns", until_ns, "End time, ns (overrides the file's)");
  app.add_option("--wait-report", o.wait_report_s, "Seconds before reporting a wait");
  app.add_flag("--quiet", o.quiet, "No summary line");
  app.add_option("--secret-keys", o.secret_keys_dir, "Directory of NODE.key");
  app.add_option("--run-id", run_id, "This run's identity (16 hex digits, as launch gives)");
  app.add_option("--transport", o.transport, "auto, shm or zmq (as launch gives)")
      ->check(CLI::IsMember({"auto", "shm", "zmq"}));
  app.add_option("--zmq-io-thread", o.zmq_io_thread, "zmq: any or dedicated (as launch gives)")
      ->check(CLI::IsMember({"any", "dedicated"}));
  app.add_option("--parent-pid", parent_pid, "Exit when this process (the launcher) dies")
      ->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    throw FederateError(std::string(argc > 0 ? argv[0] : "federate") + ": " + e.what() +
                        " (usage: PROGRAM FEDERATION --name NODE [options]; --help lists them)");
  }
  if (parent_pid > 0) {
    // Never outlive the launcher, even if it is killed with SIGKILL.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != static_cast<pid_t>(parent_pid)) std::_Exit(1);
  }
  if (until_ns > 0) o.until = until_ns;
  if (!run_id.empty()) {
    const auto id = transport::parse_run_id(run_id);
    if (!id)
      throw FederateError(
          fmt::format("--run-id '{}' is not a run id (1 to 16 hexadecimal digits)", run_id));
    o.run_id = *id;
  }
  return Federate(federation, name, o);
}

const std::string& Federate::name() const {
  return impl_->decl().name;
}

std::vector<std::string> Federate::outputs() const {
  std::vector<std::string> out;
  for (const auto& o : impl_->outputs) out.push_back(o.name);
  return out;
}

std::vector<std::string> Federate::inputs() const {
  std::vector<std::string> out;
  for (const auto& i : impl_->inputs) out.push_back(i.first);
  return out;
}

SimTime Federate::granted() const {
  return impl_->granted;
}
SimTime Federate::until() const {
  return impl_->fed.until;
}

SimTime Federate::next_emission(const std::string& output) const {
  const std::size_t o = impl_->output_index(output);
  if (impl_->outputs[o].kind == transport::FlowKind::kReceiveOrder) return impl_->fed.until;
  return impl_->node->output_next()[o];
}

SimTime Federate::next_emission() const {
  SimTime t = impl_->fed.until;  // no output: nothing to send before the end
  for (std::size_t o = 0; o < impl_->outputs.size(); ++o)
    if (impl_->outputs[o].kind != transport::FlowKind::kReceiveOrder)
      t = std::min(t, impl_->node->output_next()[o]);
  return t;
}

void Federate::update(const std::string& output, std::vector<std::uint8_t> payload) {
  impl_->live("update");
  auto& o = impl_->periodic_output("update", output);
  impl_->check_payload(o, next_emission(output), payload);
  o.value = std::move(payload);
  o.emitter = nullptr;
}

void Federate::update(const std::string& output, const AttributeSet& value) {
  impl_->live("update");
  auto& o = impl_->periodic_output("update", output);
  impl_->check_class(o, next_emission(output), value);
  o.value = value.bytes();
  o.emitter = nullptr;
}

const ClassLayout* Federate::data_class(const std::string& port) const {
  const Impl& m = *impl_;
  for (const auto& o : m.outputs)
    if (o.name == port) return o.data_class.get();
  for (std::size_t i = 0; i < m.inputs.size(); ++i)
    if (m.inputs[i].first == port) return m.fed.flow_into(m.index, i).data_class.get();
  std::vector<std::string> names;
  for (const auto& o : m.outputs) names.push_back(o.name);
  for (const auto& i : m.inputs) names.push_back(i.first);
  throw FederateError(fmt::format("node '{}' has no output or input '{}'{}", m.decl().name, port,
                                  did_you_mean(port, names)));
}

AttributeSet Federate::attributes(const std::string& port) const {
  const Impl& m = *impl_;
  const ClassLayout* cls = data_class(port);
  std::shared_ptr<const ClassLayout> shared;
  std::string flow;
  SimTime next = 0;
  for (std::size_t o = 0; o < m.outputs.size(); ++o)
    if (m.outputs[o].name == port) {
      shared = m.outputs[o].data_class;
      flow = m.outputs[o].flow;
      next = m.node->output_next()[o];
    }
  for (std::size_t i = 0; i < m.inputs.size() && flow.empty(); ++i)
    if (m.inputs[i].first == port) {
      shared = m.fed.flow_into(m.index, i).data_class;
      flow = m.inputs[i].second;
      next = m.node->input_next()[i];
    }
  const std::string context =
      fmt::format("node '{}', flow '{}' at {}", m.decl().name, flow, fmt_time(next));
  if (!cls) throw untyped(context);
  return AttributeSet(shared, context);
}

AttributeSet Federate::decode(const Delivered& message) const {
  const Impl& m = *impl_;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    if (m.inputs[i].first != message.input) continue;
    const auto& cls = m.fed.flow_into(m.index, i).data_class;
    const std::string context = fmt::format("node '{}', flow '{}' at {}", m.decl().name,
                                            m.inputs[i].second, fmt_time(message.timestamp));
    if (!cls) throw untyped(context);
    return AttributeSet(cls, message.payload, context);
  }
  std::vector<std::string> names;
  for (const auto& i : m.inputs) names.push_back(i.first);
  throw FederateError(fmt::format("node '{}' has no input '{}'{}", m.decl().name, message.input,
                                  did_you_mean(message.input, names)));
}

void Federate::set_emitter(const std::string& output,
                           std::function<std::vector<std::uint8_t>(SimTime)> emitter) {
  impl_->live("set_emitter");
  impl_->periodic_output("set_emitter", output).emitter = std::move(emitter);
}

void Federate::send_event(const std::string& output, SimTime t, std::vector<std::uint8_t> payload) {
  Impl& m = *impl_;
  m.live("send_event");
  const std::size_t index = m.output_index(output);
  Impl::Output& o = m.outputs[index];
  const std::string& node = m.decl().name;
  if (o.kind != transport::FlowKind::kEvent)
    throw FederateError(fmt::format(
        "node '{}': send_event(\"{}\", {}): flow '{}' is not an event flow (its timestamps are "
        "its periods': use update or set_emitter)",
        node, output, fmt_time(t), o.flow));
  if (t < m.granted)
    throw FederateError(
        fmt::format("node '{}', flow '{}': send_event at {} is below the time already granted, {}",
                    node, o.flow, fmt_time(t), fmt_time(m.granted)));
  // The lookahead bound: the timestamp the flow's last message announced, the federate's
  // time plus the lookahead, and the last event sent plus the lookahead (at least 1 ns).
  const SimTime announced = m.node->output_next()[index];
  const SimTime own = m.now() < 0 ? 0 : add_saturated(m.now(), o.lookahead);
  if (t < announced || t < own)
    throw FederateError(fmt::format(
        "node '{}', flow '{}': send_event at {} is below its lookahead bound {} (the flow's "
        "last message announced its next at {}; the federate's time is {}, its lookahead {})",
        node, o.flow, fmt_time(t), fmt_time(std::max(announced, own)), fmt_time(announced),
        fmt_time(std::max<SimTime>(m.now(), 0)), fmt_time(o.lookahead)));
  if (!o.events.empty()) {
    const SimTime after = add_saturated(o.events.back().first, std::max<SimTime>(o.lookahead, 1));
    if (t < after)
      throw FederateError(fmt::format(
          "node '{}', flow '{}': send_event at {} is below its lookahead bound {} (the event "
          "sent before it is at {}; events on a flow come in timestamp order, at least the "
          "lookahead {} apart and never two at one time)",
          node, o.flow, fmt_time(t), fmt_time(after), fmt_time(o.events.back().first),
          fmt_time(o.lookahead)));
  }
  if (t >= m.fed.until)
    throw FederateError(
        fmt::format("node '{}', flow '{}': send_event at {} is at or beyond the end time {}", node,
                    o.flow, fmt_time(t), fmt_time(m.fed.until)));
  m.check_payload(o, t, payload);
  if (!o.region.empty()) append_region(payload, o.region);
  o.events.emplace_back(t, std::move(payload));
}

void Federate::send_event(const std::string& output, SimTime t, const AttributeSet& value) {
  impl_->live("send_event");
  impl_->check_class(impl_->outputs[impl_->output_index(output)], t, value);
  send_event(output, t, value.bytes());
}

void Federate::send_receive_order(const std::string& output, std::vector<std::uint8_t> payload) {
  Impl& m = *impl_;
  m.live("send_receive_order");
  const std::size_t index = m.output_index(output);
  const Impl::Output& o = m.outputs[index];
  if (o.kind != transport::FlowKind::kReceiveOrder)
    throw FederateError(fmt::format(
        "node '{}': send_receive_order(\"{}\"): flow '{}' is not a receive-order flow (its "
        "messages go in time-stamp order: use {})",
        m.decl().name, output, o.flow,
        o.kind == transport::FlowKind::kEvent ? "send_event" : "update or set_emitter"));
  const SimTime at = std::max<SimTime>(m.now(), 0);
  m.check_payload(o, at, payload);
  std::vector<std::uint8_t> bytes;
  append_le(bytes, at);
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  try {
    m.node->send_receive_order(index, std::move(bytes));
  } catch (const std::logic_error& e) {
    throw FederateError(e.what());
  }
}

void Federate::send_receive_order(const std::string& output, const AttributeSet& value) {
  impl_->live("send_receive_order");
  impl_->check_class(impl_->outputs[impl_->output_index(output)],
                     std::max<SimTime>(impl_->now(), 0), value);
  send_receive_order(output, value.bytes());
}

std::vector<Delivered> Federate::arrived(const std::string& input) {
  Impl& m = *impl_;
  const std::size_t index = m.input_index(input);
  if (m.node->layout().inputs[index].kind != transport::FlowKind::kReceiveOrder)
    throw FederateError(fmt::format(
        "node '{}': arrived(\"{}\"): flow '{}' is not a receive-order flow (its messages are "
        "delivered in time-stamp order{})",
        m.decl().name, input, m.inputs[index].second,
        m.node->layout().inputs[index].kind == transport::FlowKind::kObservation
            ? "; read it with observe"
            : ""));
  std::vector<Delivered> out;
  if (m.resigned) {
    if (!m.arrived_at_end.empty()) out = std::move(m.arrived_at_end[index]);
    return out;
  }
  while (auto msg = m.node->poll(index))
    out.push_back(m.received_in_order_of_arrival(index, std::move(*msg)));
  return out;
}

std::optional<Delivered> Federate::observe(const std::string& input) {
  Impl& m = *impl_;
  m.live("observe");
  const std::size_t index = m.input_index(input);
  if (m.node->layout().inputs[index].kind != transport::FlowKind::kObservation)
    throw FederateError(fmt::format(
        "node '{}': observe(\"{}\"): flow '{}' is not an observation flow (its messages are "
        "delivered in time-stamp order)",
        m.decl().name, input, m.inputs[index].second));
  const transport::Message* latest = m.node->observe(index, std::max<SimTime>(m.now(), 0));
  if (!latest) return std::nullopt;
  transport::Message seen = m.streams->applied(index, *latest);
  return Delivered{m.inputs[index].first, m.inputs[index].second, seen.timestamp,
                   std::move(seen.payload)};
}

void Federate::set_update_region(const std::string& output, const Region& region) {
  Impl& m = *impl_;
  m.live("set_update_region");
  const std::size_t o = m.output_index(output);
  m.outputs[o].region =
      m.ranges_of("set_update_region", output, m.fed.flow_from(m.index, o), region);
}

void Federate::subscribe_region(const std::string& input, std::optional<Region> region,
                                SimTime from) {
  Impl& m = *impl_;
  m.live("subscribe_region");
  const std::size_t i = m.input_index(input);
  const auto& f = m.fed.flow_into(m.index, i);
  std::optional<std::vector<Range>> ranges;
  if (region)
    ranges = m.ranges_of("subscribe_region", input, f, *region);
  else if (f.dimensions.empty())
    m.ranges_of("subscribe_region", input, f, {});  // refuses
  if (from <= m.now())
    throw FederateError(fmt::format(
        "node '{}', flow '{}': subscribe_region(\"{}\") from {} is not after the federate's "
        "time, {} (a subscription changes for messages not yet received, so that it repeats)",
        m.decl().name, f.name, input, fmt_time(from), fmt_time(m.now())));
  auto& changes = m.subscriptions[i];
  while (!changes.empty() && changes.back().first >= from) changes.pop_back();
  // Messages still to come are stamped after now: of the changes in force by now, only the
  // last matters (a federate that moves its region every step keeps a short list).
  std::size_t in_force = 0;
  while (in_force + 1 < changes.size() && changes[in_force + 1].first <= m.now()) ++in_force;
  changes.erase(changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(in_force));
  changes.emplace_back(from, std::move(ranges));
}

void Federate::set_message_handler(std::function<void(const Delivered&)> handler) {
  impl_->live("set_message_handler");
  impl_->handler = std::move(handler);
}

Grant Federate::time_advance_request(SimTime t) {
  Impl& m = *impl_;
  m.check_time("time_advance_request", t);
  m.horizon = t;
  Grant g;
  for (;;) {
    const auto did = m.step(t, &g.messages, nullptr);
    if (did == Impl::Did::kDone) g.done = true;
    if (did == Impl::Did::kDone || did == Impl::Did::kNothing) break;
  }
  m.granted = t;
  g.time = t;
  return g;
}

Grant Federate::next_event_request(SimTime t) {
  Impl& m = *impl_;
  m.check_time("next_event_request", t);
  m.horizon = t;
  Grant g;
  g.time = t;
  for (;;) {
    const auto did = m.step(t, &g.messages, nullptr);
    if (did == Impl::Did::kDone) g.done = true;
    if (did == Impl::Did::kDone || did == Impl::Did::kNothing) break;
    if (did == Impl::Did::kConsumed) {
      // Every message with the same timestamp, then the grant at that time.
      const SimTime at = m.last_consumed;
      for (;;) {
        const auto s = m.node->next();
        if (s.kind != time::FlowNode::Step::Kind::kConsume || s.timestamp != at) break;
        m.step(at, &g.messages, nullptr);
      }
      g.time = at;
      break;
    }
  }
  m.granted = g.time;
  return g;
}

void Federate::run(const std::function<void(const Delivered&)>& on_message) {
  Impl& m = *impl_;
  m.live("run");
  m.horizon = kNever;
  while (m.step(std::numeric_limits<SimTime>::max(), nullptr, &on_message) != Impl::Did::kDone) {
  }
  m.granted = m.fed.until;
}

void Federate::resign() {
  Impl& m = *impl_;
  if (m.resigned) return;
  m.resigned = true;
  // At the end, read the observation inputs to the end time: their sources never wait for
  // this node, so they must not find it gone.
  if (m.node->next().kind == time::FlowNode::Step::Kind::kDone) {
    std::vector<std::pair<std::size_t, transport::Message>> taken;
    try {
      taken = m.node->finish();
    } catch (const transport::PeerLost& e) {
      // A source that left early (an optional node) sends nothing more: nothing to wait for.
      if (!m.decl().optional) throw;
      if (!m.options.quiet) federation::log_line(e.what());
    }
    m.arrived_at_end.resize(m.inputs.size());
    for (auto& [input, msg] : taken)
      m.arrived_at_end[input].push_back(m.received_in_order_of_arrival(input, std::move(msg)));
  }
  m.port->close();
  if (m.trace) m.trace->close();
  if (!m.options.quiet)
    federation::log_line(fmt::format("node {}: consumed {}, emitted {} (federate)", m.decl().name,
                                     m.node->consumed(), m.node->emitted()));
}

std::uint64_t Federate::consumed() const {
  return impl_->node->consumed();
}
std::uint64_t Federate::emitted() const {
  return impl_->node->emitted();
}

}  // namespace fleetsim
