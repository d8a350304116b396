#include "time/lockstep.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace fleetsim::time {

namespace {
constexpr std::size_t kStepHeader = 9;  // u64 iteration (little-endian), u8 paused
}

transport::FederationLayout make_lockstep_layout(const std::vector<std::string>& nodes,
                                                 SimTime until) {
  transport::FederationLayout layout;
  layout.until = until;
  transport::NodeLayout primary;
  primary.name = nodes.at(0);
  transport::FlowId flow = 0;
  for (std::size_t j = 1; j < nodes.size(); ++j) {
    transport::NodeLayout secondary;
    secondary.name = nodes[j];
    transport::FlowId step_flow = flow++;
    transport::FlowId ack_flow = flow++;
    primary.outputs.push_back({step_flow, "step." + nodes[j], {nodes[j]}, 0});
    secondary.inputs.push_back({step_flow, "step." + nodes[j], primary.name, 2, 0});
    secondary.outputs.push_back({ack_flow, "ack." + nodes[j], {primary.name}, 0});
    primary.inputs.push_back({ack_flow, "ack." + nodes[j], nodes[j], 2, 0});
    layout.nodes.push_back(std::move(secondary));
  }
  layout.nodes.insert(layout.nodes.begin(), std::move(primary));
  return layout;
}

LockstepPrimary::LockstepPrimary(transport::Port& port, SimTime step_size)
    : port_(port), step_size_(step_size) {
  acks_.resize(secondaries());
}

const std::vector<std::vector<std::uint8_t>>& LockstepPrimary::step(
    const std::vector<std::vector<std::uint8_t>>& payloads, bool paused) {
  publish(payloads, paused);
  return collect();
}

void LockstepPrimary::publish(const std::vector<std::vector<std::uint8_t>>& payloads, bool paused) {
  const auto& outs = port_.layout().outputs;
  transport::Message m;
  m.kind = transport::MessageKind::kStep;
  m.timestamp = time_;
  m.period = step_size_;
  // 1. Publish step k to every secondary.
  for (std::size_t j = 0; j < outs.size(); ++j) {
    m.flow = outs[j].flow;
    m.payload.assign(kStepHeader, 0);
    for (int b = 0; b < 8; ++b) m.payload[b] = static_cast<std::uint8_t>(iteration_ >> (8 * b));
    m.payload[8] = paused ? 1 : 0;
    if (j < payloads.size())
      m.payload.insert(m.payload.end(), payloads[j].begin(), payloads[j].end());
    port_.send(j, m);
  }
}

const std::vector<std::vector<std::uint8_t>>& LockstepPrimary::collect() {
  const auto& outs = port_.layout().outputs;
  // 3. Wait for every ack.
  for (std::size_t j = 0; j < outs.size(); ++j) {
    transport::Message ack = port_.receive(j);
    if (ack.kind != transport::MessageKind::kAck || ack.timestamp != time_)
      throw std::runtime_error(
          fmt::format("lockstep primary '{}': secondary '{}' acknowledged "
                      "time {} ns, expected {} ns",
                      port_.layout().name, outs[j].sinks.at(0), ack.timestamp, time_));
    acks_[j] = std::move(ack.payload);
  }
  // 5. The next iteration.
  ++iteration_;
  time_ += step_size_;
  return acks_;
}

LockstepSecondary::LockstepSecondary(transport::Port& port) : port_(port) {}

StepOrder LockstepSecondary::next_step() {
  transport::Message m = port_.receive(0);
  if (m.kind != transport::MessageKind::kStep || m.payload.size() < kStepHeader)
    throw std::runtime_error(
        fmt::format("lockstep secondary '{}': malformed step order", port_.layout().name));
  StepOrder s;
  for (int b = 0; b < 8; ++b) s.iteration |= static_cast<std::uint64_t>(m.payload[b]) << (8 * b);
  s.paused = m.payload[8] != 0;
  s.time = m.timestamp;
  s.step_size = m.period;
  s.payload.assign(m.payload.begin() + kStepHeader, m.payload.end());
  last_ = s;
  return s;
}

void LockstepSecondary::ack(std::vector<std::uint8_t> payload) {
  transport::Message m;
  m.kind = transport::MessageKind::kAck;
  m.flow = port_.layout().outputs.at(0).flow;
  m.timestamp = last_.time;
  m.period = last_.step_size;
  m.payload = std::move(payload);
  port_.send(0, m);
}

}  // namespace fleetsim::time
