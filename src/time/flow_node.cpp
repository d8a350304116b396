#include "time/flow_node.hpp"

#include <limits>

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
  for (const auto& out : layout_.outputs) s_.push_back(out.initial);
}

FlowNode::Step FlowNode::next() const {
  // Smallest (timestamp, flow id) among the outputs and among the inputs still running.
  Step emit{Step::Kind::kEmit, 0, kNever};
  FlowId emit_flow = 0;
  for (std::size_t j = 0; j < s_.size(); ++j) {
    FlowId f = layout_.outputs[j].flow;
    if (s_[j] < options_.until &&
        (s_[j] < emit.timestamp || (s_[j] == emit.timestamp && f < emit_flow))) {
      emit.index = j;
      emit.timestamp = s_[j];
      emit_flow = f;
    }
  }
  Step consume{Step::Kind::kConsume, 0, kNever};
  FlowId consume_flow = 0;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    FlowId f = layout_.inputs[i].flow;
    if (t_[i] < options_.until &&
        (t_[i] < consume.timestamp || (t_[i] == consume.timestamp && f < consume_flow))) {
      consume.index = i;
      consume.timestamp = t_[i];
      consume_flow = f;
    }
  }
  if (emit.timestamp == kNever && consume.timestamp == kNever) return Step{};
  // Edge be of the paper: emit when an output is not later than every input (rule 3 forbids
  // emitting T after consuming T, so at equal timestamps the output goes first).
  if (emit.timestamp <= consume.timestamp) return emit;
  return consume;
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
  // The peer's side of the contract: exactly the announced timestamp, a positive period.
  if (m.flow != in.flow || m.timestamp != t_[step.index] || m.period <= 0 ||
      m.timestamp > kNever - m.period) {
    throw ContractViolation(
        layout_.name, in.flow_name, t_[step.index], m.timestamp,
        fmt::format("node '{}', flow '{}' from node '{}': received timestamp {} ns with period {} "
                    "ns, expected timestamp {} ns and a positive period",
                    layout_.name, in.flow_name, in.source, m.timestamp, m.period, t_[step.index]));
  }
  t_[step.index] = m.timestamp + m.period;
  last_consumed_ = m.timestamp;
  ++consumed_;
  if (options_.trace) options_.trace->record(false, in.flow_name, m);
  return m;
}

void FlowNode::violation(std::size_t output, SimTime expected, SimTime offending,
                         const std::string& what) const {
  const auto& flow = layout_.outputs.at(output).flow_name;
  throw ContractViolation(layout_.name, flow, expected, offending,
                          fmt::format("node '{}', flow '{}': {}", layout_.name, flow, what));
}

void FlowNode::emit(std::size_t output, Emission e) {
  if (output >= s_.size())
    throw std::logic_error(fmt::format("node '{}': no output {}", layout_.name, output));
  const SimTime expected = s_[output];
  if (e.timestamp != expected)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns, expected {} ns (announced by the previous "
                          "message's period)",
                          e.timestamp, expected));
  if (e.period <= 0 || e.timestamp > kNever - e.period)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns with period {} ns (expected a positive period)",
                          e.timestamp, e.period));
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
  if (e.timestamp <= last_consumed_)
    violation(output, expected, e.timestamp,
              fmt::format("emitted timestamp {} ns after consuming {} ns (rule 3)", e.timestamp,
                          last_consumed_));

  pacer_.wait_until(e.timestamp, fmt::format("node '{}'", layout_.name));
  Message m;
  m.flow = layout_.outputs[output].flow;
  m.kind = transport::MessageKind::kData;
  m.timestamp = e.timestamp;
  m.period = e.period;
  m.payload = std::move(e.payload);
  if (options_.trace) options_.trace->record(true, layout_.outputs[output].flow_name, m);
  port_.send(output, m);
  s_[output] = e.timestamp + e.period;
  last_emitted_ = e.timestamp;
  ++emitted_;
}

void FlowNode::run(NodeBehaviour& behaviour) {
  pacer_.start();
  while (true) {
    Step step = next();
    if (step.kind == Step::Kind::kDone) break;
    if (step.kind == Step::Kind::kConsume) {
      std::size_t input = step.index;
      Message m = consume();
      behaviour.consume(input, m);
    } else {
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
