#include "time/trace.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "core/hash.hpp"

namespace fleetsim::time {

TraceWriter::TraceWriter(const std::string& path, const std::string& node) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw std::runtime_error("cannot write trace file '" + path + "'");
  fmt::print(file_, "# fleetsim trace 1 node {}\n", node);
}

TraceWriter::~TraceWriter() {
  close();
}

void TraceWriter::record(bool emit, const std::string& flow, const transport::Message& m) {
  if (!file_) return;
  fmt::print(file_, "{} {} {} {} {:016x}{}\n", emit ? "emit" : "consume", flow, m.timestamp,
             m.period, hash_bytes(m.payload.data(), m.payload.size()), m.null ? " null" : "");
}

void TraceWriter::close() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

bool read_trace(const std::string& path, std::vector<TraceEvent>& events, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read trace";
    return false;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string kind, hash, flag;
    TraceEvent e;
    e.line = n;
    if (!(s >> kind >> e.flow >> e.timestamp >> e.period >> hash) ||
        (kind != "emit" && kind != "consume") || hash.size() != 16 ||
        ((s >> flag) && flag != "null")) {
      error = fmt::format("{}:{}: malformed trace line '{}'", path, n, line);
      return false;
    }
    e.emit = kind == "emit";
    e.null = flag == "null";
    e.payload_hash = std::stoull(hash, nullptr, 16);
    events.push_back(std::move(e));
  }
  return true;
}

std::vector<std::string> check_traces(
    const transport::FederationLayout& layout,
    const std::map<std::string, std::vector<TraceEvent>>& traces) {
  std::vector<std::string> bad;
  std::map<std::string, transport::FlowId> flow_ids;
  std::map<std::string, const transport::OutputLink*> outputs;
  for (const auto& n : layout.nodes)
    for (const auto& o : n.outputs) {
      flow_ids[o.flow_name] = o.flow;
      outputs[o.flow_name] = &o;
    }
  // The emission order of flow_node.hpp: (timestamp, phase, flow id).
  auto emit_key = [&](const TraceEvent& e) {
    return std::tuple(e.timestamp, outputs[e.flow]->zero_lookahead() ? 2 : 0, flow_ids[e.flow]);
  };
  // Per node and flow, the messages seen, to compare sources with sinks afterwards.
  std::map<std::string, std::vector<const TraceEvent*>> emitted;
  std::map<std::pair<std::string, std::string>, std::vector<const TraceEvent*>> consumed;

  for (const auto& node : layout.nodes) {
    auto it = traces.find(node.name);
    if (it == traces.end()) {
      bad.push_back(fmt::format("node '{}': no trace", node.name));
      continue;
    }
    SimTime max_emitted = -1, max_consumed = -1;
    const TraceEvent* last_consumed = nullptr;
    const TraceEvent* last_emitted = nullptr;
    for (const auto& e : it->second) {
      auto where = fmt::format("node '{}', trace line {}", node.name, e.line);
      auto id = flow_ids.find(e.flow);
      if (id == flow_ids.end()) {
        bad.push_back(fmt::format("{}: unknown flow '{}'", where, e.flow));
        continue;
      }
      if (e.emit) {
        const bool zero = outputs[e.flow]->zero_lookahead();
        if (zero ? e.timestamp < max_consumed : e.timestamp <= max_consumed)
          bad.push_back(fmt::format("{}: rule 3: emitted {} at {} after consuming {}", where,
                                    e.flow, e.timestamp, max_consumed));
        if (last_emitted && emit_key(e) < emit_key(*last_emitted))
          bad.push_back(fmt::format("{}: emitted {} at {} after {} at {} (emission order)", where,
                                    e.flow, e.timestamp, last_emitted->flow,
                                    last_emitted->timestamp));
        max_emitted = std::max(max_emitted, e.timestamp);
        last_emitted = &e;
        emitted[e.flow].push_back(&e);
      } else if (outputs[e.flow]->kind == transport::FlowKind::kObservation) {
        consumed[{node.name, e.flow}].push_back(&e);  // read, not consumed in order
      } else {
        if (e.timestamp < max_emitted)
          bad.push_back(fmt::format("{}: rule 2: consumed {} at {} after emitting {}", where,
                                    e.flow, e.timestamp, max_emitted));
        if (last_consumed && std::pair(e.timestamp, id->second) <=
                                 std::pair(last_consumed->timestamp, flow_ids[last_consumed->flow]))
          bad.push_back(fmt::format("{}: rule 1: consumed {} at {} after {} at {}", where, e.flow,
                                    e.timestamp, last_consumed->flow, last_consumed->timestamp));
        max_consumed = std::max(max_consumed, e.timestamp);
        last_consumed = &e;
        consumed[{node.name, e.flow}].push_back(&e);
      }
    }
  }

  for (const auto& node : layout.nodes)
    for (const auto& o : node.outputs) {
      if (o.kind == transport::FlowKind::kReceiveOrder) continue;  // not traced: not repeatable
      const auto& sent = emitted[o.flow_name];
      // The period contract and completeness of the source's own sequence.
      SimTime expect = o.initial;
      for (const auto* e : sent) {
        if (e->timestamp != expect)
          bad.push_back(fmt::format("node '{}', trace line {}: flow {} emitted at {}, announced {}",
                                    node.name, e->line, o.flow_name, e->timestamp, expect));
        if (o.kind == transport::FlowKind::kEvent ? e->period < o.lookahead : e->null)
          bad.push_back(fmt::format("node '{}', trace line {}: flow {}: {} at {}", node.name,
                                    e->line, o.flow_name,
                                    e->null ? "a null message on a flow that is not an event flow"
                                            : "the next message announced within the lookahead",
                                    e->timestamp));
        expect = e->timestamp + e->period;
      }
      if (expect < layout.until)
        bad.push_back(fmt::format("node '{}': flow {} stops at {} before the end {}", node.name,
                                  o.flow_name, expect, layout.until));
      // Rule 4: each sink consumed exactly what was sent.
      for (const auto& sink : o.sinks) {
        const auto& got = consumed[{sink, o.flow_name}];
        std::size_t n = std::min(got.size(), sent.size());
        for (std::size_t i = 0; i < n; ++i)
          if (got[i]->timestamp != sent[i]->timestamp || got[i]->period != sent[i]->period ||
              got[i]->payload_hash != sent[i]->payload_hash || got[i]->null != sent[i]->null) {
            bad.push_back(
                fmt::format("node '{}', trace line {}: rule 4: flow {} message {} "
                            "differs from what '{}' emitted (line {})",
                            sink, got[i]->line, o.flow_name, i, node.name, sent[i]->line));
            break;
          }
        if (got.size() != sent.size())
          bad.push_back(
              fmt::format("node '{}': rule 4: consumed {} messages of flow {}, '{}' "
                          "emitted {}",
                          sink, got.size(), o.flow_name, node.name, sent.size()));
      }
    }
  return bad;
}

}  // namespace fleetsim::time
