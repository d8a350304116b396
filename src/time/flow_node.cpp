#include "time/flow_node.hpp"

#include <limits>
#include <tuple>

#include <fmt/format.h>

namespace fleetsim::time {

namespace {
constexpr SimTime kNever = std::numeric_limits<SimTime>::max();
}

FlowNode::FlowNode(const transport::NodeLayout& layout, transport::Port& port,
                   FlowNodeOptions options)
    : layout_(layout),
      port_(port),
      options_(std::move(options)),
      pacer_(options_.mode, options_.speedup, options_.log) {
  for (const auto& in : layout_.inputs) t_.push_back(in.initial);
  for (const auto& out : layout_.outputs) {
    s_.push_back(out.initial);
    taps_.push_back(out.tapped && !layout_.optional
                        ? std::make_unique<transport::TapWriter>(options_.run_id, out.flow_name)
                        : nullptr);
  }
}

FlowNode::Step FlowNode::next() const {
  // The smallest (timestamp, phase, flow id) among the steps before the end time; phase 0:
  // outputs with a lookahead, 1: inputs, 2: zero-lookahead outputs (the tie order above).
  Step best{};
  std::tuple<SimTime, int, FlowId> best_key{kNever, 0, 0};
  auto offer = [&](Step::Kind kind, std::size_t index, SimTime t, int phase, FlowId flow) {
    const std::tuple<SimTime, int, FlowId> key{t, phase, flow};
    if (t >= options_.until || (best.kind != Step::Kind::kDone && !(key < best_key))) return;
    best = Step{kind, index, t};
    best_key = key;
  };
  for (std::size_t j = 0; j < s_.size(); ++j) {
    const auto& out = layout_.outputs[j];
    if (out.kind == transport::FlowKind::kReceiveOrder) continue;
    offer(Step::Kind::kEmit, j, s_[j], out.zero_lookahead() ? 2 : 0, out.flow);
  }
  for (std::size_t i = 0; i < t_.size(); ++i) {
    const auto& in = layout_.inputs[i];
    if (in.kind != transport::FlowKind::kObservation &&
        in.kind != transport::FlowKind::kReceiveOrder)
      offer(Step::Kind::kConsume, i, t_[i], 1, in.flow);
  }
  return best;
}

void FlowNode::check_received(std::size_t input, const Message& m) const {
  const auto& in = layout_.inputs[input];
  // The peer's side of the contract: exactly the announced timestamp, a positive period, at
  // least the lookahead on an event flow, null messages on event flows only and empty.
  std::string problem;
  if (m.flow != in.flow || m.timestamp != t_[input] || m.period <= 0 ||
      m.timestamp > kNever - m.period)
    problem = fmt::format(
        "received timestamp {} ns with period {} ns, expected timestamp {} ns "
        "and a positive period",
        m.timestamp, m.period, t_[input]);
  else if (in.kind == transport::FlowKind::kEvent && m.period < in.lookahead)
    problem = fmt::format(
        "received timestamp {} ns announcing the next at {} ns, below the "
        "flow's lookahead bound {} ns",
        m.timestamp, m.timestamp + m.period, m.timestamp + in.lookahead);
  else if (m.null && (in.kind == transport::FlowKind::kReceiveOrder
                          ? !m.payload.empty() || m.timestamp + m.period < options_.until
                          : in.kind != transport::FlowKind::kEvent || !m.payload.empty()))
    problem = fmt::format(
        "received a null message at {} ns (null messages are for event flows "
        "and carry no payload)",
        m.timestamp);
  if (!problem.empty())
    throw ContractViolation(layout_.name, in.flow_name, t_[input], m.timestamp,
                            fmt::format("node '{}', flow '{}' from node '{}': {}", layout_.name,
                                        in.flow_name, in.source, problem));
}

Message FlowNode::consume() {
  Step step = next();
  if (step.kind != Step::Kind::kConsume) {
    if (step.kind == Step::Kind::kEmit)
      violation(step.index, step.timestamp, step.timestamp,
                fmt::format("consume called while the message at {} ns on this output must be "
                            "emitted first (rule 2)",
                            step.timestamp));
    throw std::logic_error(
        fmt::format("node '{}': consume called after the end time", layout_.name));
  }
  const auto& in = layout_.inputs[step.index];
  Message m = port_.receive(step.index);
  check_received(step.index, m);
  t_[step.index] = m.timestamp + m.period;
  last_consumed_ = m.timestamp;
  now_ = m.timestamp;
  ++consumed_;
  if (options_.trace) options_.trace->record(false, in.flow_name, m);
  return m;
}

const Message* FlowNode::observe(std::size_t input, SimTime at) {
  const auto& in = layout_.inputs.at(input);
  if (in.kind != transport::FlowKind::kObservation)
    throw std::logic_error(fmt::format("node '{}': input '{}' is not an observation flow",
                                       layout_.name, in.flow_name));
  if (latest_.empty()) {
    latest_.resize(t_.size());
    observed_at_.assign(t_.size(), -1);
  }
  if (at < observed_at_[input])
    throw std::logic_error(fmt::format(
        "node '{}': observed flow '{}' at {} ns after observing it at {} ns (time never goes "
        "back)",
        layout_.name, in.flow_name, at, observed_at_[input]));
  observed_at_[input] = at;
  // Everything stamped <= at, in order; only the latest is kept.
  while (t_[input] <= at && t_[input] < options_.until) {
    Message m = port_.receive(input);
    check_received(input, m);
    t_[input] = m.timestamp + m.period;
    ++consumed_;
    if (options_.trace) options_.trace->record(false, in.flow_name, m);
    latest_[input] = std::move(m);
  }
  return latest_[input] ? &*latest_[input] : nullptr;
}

void FlowNode::send_receive_order(std::size_t output, std::vector<std::uint8_t> payload) {
  const auto& out = layout_.outputs.at(output);
  if (out.kind != transport::FlowKind::kReceiveOrder)
    throw std::logic_error(fmt::format("node '{}': flow '{}' is not a receive-order flow",
                                       layout_.name, out.flow_name));
  // The last message, at the end, needs a number below the end time too.
  if (s_[output] + 1 >= options_.until)
    throw std::logic_error(fmt::format(
        "node '{}', flow '{}': no room for message {} (a receive-order flow carries at most the "
        "end time in ns minus one, {})",
        layout_.name, out.flow_name, s_[output], options_.until - 1));
  Message m;
  m.flow = out.flow;
  m.kind = transport::MessageKind::kData;
  m.timestamp = s_[output];
  m.period = 1;
  m.payload = std::move(payload);
  port_.send(output, m);
  s_[output] += 1;
  ++emitted_;
}

std::optional<Message> FlowNode::poll(std::size_t input) {
  const auto& in = layout_.inputs.at(input);
  if (in.kind != transport::FlowKind::kReceiveOrder)
    throw std::logic_error(fmt::format("node '{}': input '{}' is not a receive-order flow",
                                       layout_.name, in.flow_name));
  while (t_[input] < options_.until) {
    std::optional<Message> m = port_.poll(input);
    if (!m) return std::nullopt;
    check_received(input, *m);
    t_[input] = m->timestamp + m->period;
    if (m->null) continue;  // the last: it only announces the end
    ++consumed_;
    return m;
  }
  return std::nullopt;
}

std::vector<std::pair<std::size_t, Message>> FlowNode::finish() {
  for (std::size_t i = 0; i < t_.size(); ++i)
    if (layout_.inputs[i].kind == transport::FlowKind::kObservation && t_[i] < options_.until)
      observe(i, options_.until - 1);
  // A receive-order flow ends with a null message announcing the end time.
  for (std::size_t j = 0; j < s_.size(); ++j) {
    const auto& out = layout_.outputs[j];
    if (out.kind != transport::FlowKind::kReceiveOrder || s_[j] >= options_.until) continue;
    Message m;
    m.flow = out.flow;
    m.kind = transport::MessageKind::kData;
    m.timestamp = s_[j];
    m.period = options_.until - s_[j];
    m.null = true;
    port_.send(j, m);
    s_[j] = options_.until;
  }
  std::vector<std::pair<std::size_t, Message>> taken;
  for (std::size_t i = 0; i < t_.size(); ++i)
    while (layout_.inputs[i].kind == transport::FlowKind::kReceiveOrder && t_[i] < options_.until) {
      Message m = port_.receive(i);
      check_received(i, m);
      t_[i] = m.timestamp + m.period;
      if (m.null) continue;
      ++consumed_;
      taken.emplace_back(i, std::move(m));
    }
  return taken;
}

void FlowNode::violation(std::size_t output, SimTime expected, SimTime offending,
                         const std::string& what) const {
  const auto& flow = layout_.outputs.at(output).flow_name;
  throw ContractViolation(layout_.name, flow, expected, offending,
                          fmt::format("node '{}', flow '{}': {}", layout_.name, flow, what));
}

void FlowNode::emit(std::size_t output, Emission e) {
  check_emission(output, e);
  Message m = message(output, e);
  m.payload = std::move(e.payload);
  if (options_.trace) options_.trace->record(true, layout_.outputs[output].flow_name, m);
  port_.send(output, m);
  if (taps_[output]) taps_[output]->append(m);
  book_emission(output, e);
}

void FlowNode::emit_each(std::size_t output, Emission e,
                         std::vector<std::vector<std::uint8_t>> per_sink) {
  check_emission(output, e);
  if (taps_[output])
    throw std::logic_error(
        fmt::format("node '{}': output '{}' has a tap, which every sink's message must be",
                    layout_.name, layout_.outputs[output].flow_name));
  std::vector<Message> each(per_sink.size(), message(output, e));
  for (std::size_t k = 0; k < each.size(); ++k) {
    each[k].payload = std::move(per_sink[k]);
    if (options_.trace) options_.trace->record(true, layout_.outputs[output].flow_name, each[k]);
  }
  port_.send_each(output, each);
  book_emission(output, e);
}

void FlowNode::check_emission(std::size_t output, const Emission& e) {
  if (output >= s_.size())
    throw std::logic_error(fmt::format("node '{}': no output {}", layout_.name, output));
  const SimTime expected = s_[output];
  if (e.timestamp != expected)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns, expected {} ns (announced by the previous "
                          "message's period)",
                          e.timestamp, expected));
  const auto& out = layout_.outputs[output];
  if (e.period <= 0 || e.timestamp > kNever - e.period)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns with period {} ns (expected a positive period)",
                          e.timestamp, e.period));
  if (out.kind == transport::FlowKind::kEvent && e.period < out.lookahead)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns announcing the next at {} ns, below its "
                          "lookahead bound {} ns (timestamp + lookahead {} ns)",
                          e.timestamp, e.timestamp + e.period, e.timestamp + out.lookahead,
                          out.lookahead));
  if (e.null && (out.kind != transport::FlowKind::kEvent || !e.payload.empty()))
    violation(output, expected, e.timestamp,
              fmt::format("emitted a null message at {} ns (null messages are for event flows "
                          "and carry no payload)",
                          e.timestamp));
  Step step = next();
  if (step.kind == Step::Kind::kDone)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns at or beyond the end time {} ns", e.timestamp,
                          options_.until));
  if (step.kind == Step::Kind::kConsume)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns while input '{}' must first consume its message "
                          "at {} ns (rule 2)",
                          e.timestamp, layout_.inputs[step.index].flow_name, step.timestamp));
  if (step.index != output)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns before output '{}' emitted its message at {} "
                          "ns (outputs emit in timestamp, then flow id, order)",
                          e.timestamp, layout_.outputs[step.index].flow_name, step.timestamp));
  // Rule 3; a zero-lookahead output may emit at the timestamp it just consumed.
  if (out.zero_lookahead() ? e.timestamp < last_consumed_ : e.timestamp <= last_consumed_)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns after consuming {} ns (rule 3)", e.timestamp,
                          last_consumed_));

  pacer_.wait_until(e.timestamp, fmt::format("node '{}'", layout_.name));
}

Message FlowNode::message(std::size_t output, const Emission& e) const {
  Message m;
  m.flow = layout_.outputs[output].flow;
  m.kind = transport::MessageKind::kData;
  m.timestamp = e.timestamp;
  m.period = e.period;
  m.null = e.null;
  return m;
}

void FlowNode::book_emission(std::size_t output, const Emission& e) {
  s_[output] = e.timestamp + e.period;
  last_emitted_ = e.timestamp;
  now_ = e.timestamp;
  ++emitted_;
}

void FlowNode::run(NodeBehaviour& behaviour) {
  pacer_.start();
  while (true) {
    Step step = next();
    if (step.kind == Step::Kind::kDone) {
      finish();
      break;
    }
    if (step.kind == Step::Kind::kConsume) {
      std::size_t input = step.index;
      Message m = consume();
      if (!m.null) behaviour.consume(input, m);
    } else {
      // Observation inputs are read at every emission: the latest value stamped <= its time.
      for (std::size_t i = 0; i < t_.size(); ++i)
        if (layout_.inputs[i].kind == transport::FlowKind::kObservation)
          behaviour.observe(i, observe(i, step.timestamp), step.timestamp);
      emit(step.index, behaviour.emit(step.index, step.timestamp));
    }
  }
}

std::string FlowNode::describe_wait(const transport::WaitReport& r) const {
  std::string last = r.peer_last < 0 ? std::string("none yet") : fmt::format("{} ns", r.peer_last);
  double waited = static_cast<double>(r.waited.count()) / 1000.0;
  if (r.sending) {
    const auto& out = layout_.outputs.at(r.index);
    return fmt::format(
        "node '{}' has waited {:.1f} s to deliver flow '{}' at {} ns to node '{}' "
        "(its input buffer is full); last timestamp received from '{}': {}",
        layout_.name, waited, out.flow_name, s_.at(r.index), r.peer, r.peer, last);
  }
  const auto& in = layout_.inputs.at(r.index);
  return fmt::format(
      "node '{}' has waited {:.1f} s for flow '{}' at {} ns from node '{}'; last "
      "timestamp received from '{}': {}",
      layout_.name, waited, in.flow_name, t_.at(r.index), r.peer, r.peer, last);
}

}  // namespace fleetsim::time
