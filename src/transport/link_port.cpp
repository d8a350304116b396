#include "transport/link_port.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace fleetsim::transport {

namespace {

std::string ns(SimTime t) {
  return fmt::format("{} ns", t);
}

}  // namespace

std::vector<std::string> feeding_nodes(const NodeLayout& sink) {
  std::vector<std::string> sources;
  for (const auto& in : sink.inputs) sources.push_back(in.source);
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  return sources;
}

LinkPort::LinkPort(const FederationLayout& layout, const NodeLayout& self, PortOptions options)
    : Port(self, std::move(options)), until_(layout.until) {
  for (const auto& source : feeding_nodes(layout_)) links_.push_back({source, {}, {}, 0, {}});
  for (const auto& in : layout_.inputs) {
    Input st;
    st.capacity = std::max<std::size_t>(in.capacity, 1);
    st.next = in.initial;
    for (std::size_t k = 0; k < links_.size(); ++k)
      if (links_[k].peer == in.source) st.link = k;
    links_[st.link].inputs.push_back(in_.size());
    in_.push_back(std::move(st));
  }
}

bool LinkPort::accept(std::size_t k, std::variant<Message, WireError>&& decoded) {
  Link& l = links_[k];
  if (auto* err = std::get_if<WireError>(&decoded)) {
    // A peer of another release: every message it sends would be refused and the node would
    // wait for ever.
    if (err->other_version != 0)
      throw std::runtime_error(fmt::format(
          "node '{}': the link from '{}' carries wire version {}, this node speaks version "
          "{}: every node of a federation must run the same fleetsim release (and "
          "federates be built against it)",
          layout_.name, l.peer, err->other_version, kWireVersion));
    refuse(k, err->reason);
    return false;
  }
  Message& m = std::get<Message>(decoded);
  if (m.run != options_.run_id) {
    refuse(k, fmt::format("it belongs to another run (run id {:016x}, this run's is {:016x}): "
                          "a process of an earlier run still sending?",
                          m.run, options_.run_id));
    return false;
  }
  std::size_t input = in_.size();
  for (std::size_t i : l.inputs)
    if (layout_.inputs[i].flow == m.flow) input = i;
  if (input == in_.size()) {
    refuse(k, fmt::format("flow {} is not fed to this node by '{}'", m.flow, l.peer));
    return false;
  }
  Input& st = in_[input];
  if (m.timestamp != st.next) {
    refuse(k, fmt::format("flow '{}': timestamp {} out of sequence (expected {})",
                          layout_.inputs[input].flow_name, m.timestamp, st.next));
    return false;
  }
  st.next = m.timestamp + m.period;
  last_from_[l.peer] = m.timestamp;
  stats_.messages_received++;
  if (st.buffer.size() < st.capacity) {
    st.buffer.push_back(std::move(m));
  } else {
    l.held = std::move(m);
    l.held_input = input;
  }
  return true;
}

std::optional<Message> LinkPort::poll(std::size_t input) {
  Input& st = in_.at(input);
  if (st.buffer.empty() && !links_[st.link].held) read_arrived(st.link);
  if (st.buffer.empty()) return std::nullopt;
  return pop(input);
}

Message LinkPort::pop(std::size_t i) {
  Input& st = in_[i];
  Message m = std::move(st.buffer.front());
  st.buffer.pop_front();
  Link& l = links_[st.link];
  if (l.held) {
    Input& target = in_[l.held_input];
    if (target.buffer.size() < target.capacity) {
      target.buffer.push_back(std::move(*l.held));
      l.held.reset();
    }
  }
  return m;
}

bool LinkPort::owes(std::size_t k) const {
  for (std::size_t i : links_[k].inputs)
    if (in_[i].next < until_) return true;
  return false;
}

bool LinkPort::buffered(std::size_t k) const {
  for (std::size_t i : links_[k].inputs)
    if (!in_[i].buffer.empty()) return true;
  return false;
}

void LinkPort::lost_source(std::size_t k, const std::string& how) const {
  const Link& l = links_[k];
  std::string waiting;
  for (std::size_t i : l.inputs)
    if (in_[i].next < until_)
      waiting += fmt::format("{}'{}' (next timestamp {})", waiting.empty() ? "" : ", ",
                             layout_.inputs[i].flow_name, ns(in_[i].next));
  throw PeerLost(l.peer, fmt::format("node '{}': lost peer '{}' ({}); last timestamp received "
                                     "from it: {}; flows left waiting: {}",
                                     layout_.name, l.peer, how, last_text(l.peer), waiting));
}

void LinkPort::check_sink(const std::string& peer, const std::map<FlowId, SimTime>& next,
                          const std::string& how) const {
  std::string waiting;
  for (const auto& [flow, t] : next)
    if (t < until_)
      waiting += fmt::format("{}'{}' (next timestamp {})", waiting.empty() ? "" : ", ",
                             flow_name(flow), ns(t));
  if (!waiting.empty())
    throw PeerLost(peer, fmt::format("node '{}': lost peer '{}' ({}); last timestamp received "
                                     "from it: {}; flows it still had to receive from this "
                                     "node: {}",
                                     layout_.name, peer, how, last_text(peer), waiting));
}

void LinkPort::refuse(std::size_t k, const std::string& reason) {
  Link& l = links_[k];
  stats_.refused++;
  // The first few, then a sample: a flood of garbage must not flood the log.
  if (l.refused.count())
    log(fmt::format("node '{}': refused a message on the link from '{}': {}", layout_.name, l.peer,
                    reason));
}

std::string LinkPort::last_text(const std::string& peer) const {
  SimTime t = last_from(peer);
  return t < 0 ? std::string("none") : ns(t);
}

std::string LinkPort::flow_name(FlowId flow) const {
  for (const auto& o : layout_.outputs)
    if (o.flow == flow) return o.flow_name;
  return std::to_string(flow);
}

}  // namespace fleetsim::transport
