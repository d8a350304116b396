#include "federation/node_runner.hpp"

#include <filesystem>
#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "federation/datastream.hpp"
#include "federation/example_nodes.hpp"

namespace fleetsim::federation {

namespace {

// A node whose inputs are typed: every message goes through its datastream (class check,
// modifiers) before the simulator sees it; a message down-sampling drops is not delivered.
class DatastreamBehaviour final : public time::NodeBehaviour {
 public:
  DatastreamBehaviour(std::unique_ptr<time::NodeBehaviour> inner, Datastreams streams)
      : inner_(std::move(inner)), streams_(std::move(streams)) {}
  void consume(std::size_t input, const time::Message& m) override {
    time::Message copy = m;
    if (streams_.apply(input, copy)) inner_->consume(input, copy);
  }
  time::Emission emit(std::size_t output, SimTime timestamp) override {
    return inner_->emit(output, timestamp);
  }
  void observe(std::size_t input, const time::Message* latest, SimTime at) override {
    if (!latest) return inner_->observe(input, latest, at);
    const time::Message copy = streams_.applied(input, *latest);
    inner_->observe(input, &copy, at);
  }
  void finish() override { inner_->finish(); }
  std::uint64_t state_hash() const override { return inner_->state_hash(); }

 private:
  std::unique_ptr<time::NodeBehaviour> inner_;
  Datastreams streams_;
};

}  // namespace

void log_line(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard g(mutex);
  std::cerr << line << std::endl;
}

std::string summary_line(const NodeResult& r) {
  std::string s = fmt::format("node {}: consumed {}, emitted {}, state {:016x}", r.name, r.consumed,
                              r.emitted, r.state_hash);
  if (r.max_lag_ns > 0)
    s += fmt::format(" (fell behind the wall clock by up to {:.1f} ms)",
                     static_cast<double>(r.max_lag_ns) / 1e6);
  return s;
}

NodeRun::NodeRun(const Federation& fed, std::size_t node, const RunOptions& options)
    : fed_(fed), node_(node), options_(options) {}

transport::PortOptions NodeRun::port_options() {
  transport::PortOptions po;
  po.jitter_us = options_.jitter_us;
  po.run_id = options_.run_id;
  po.wait_report_after = options_.wait_report_after;
  po.log = log_line;
  po.on_wait = [this](const transport::WaitReport& r) {
    if (flow_node_) log_line(flow_node_->describe_wait(r));
  };
  return po;
}

NodeResult NodeRun::run(transport::Port& port) {
  NodeResult result;
  result.name = fed_.nodes[node_].name;
  try {
    auto layout = fed_.layout();
    std::optional<time::TraceWriter> trace;
    if (!options_.trace_dir.empty()) {
      std::filesystem::create_directories(options_.trace_dir);
      trace.emplace((std::filesystem::path(options_.trace_dir) / (result.name + ".trace")).string(),
                    result.name);
    }
    time::FlowNodeOptions fo;
    fo.until = options_.until.value_or(fed_.until);
    fo.mode = options_.mode;
    fo.speedup = options_.speedup;
    fo.trace = trace ? &*trace : nullptr;
    fo.log = log_line;
    fo.run_id = options_.run_id;
    time::FlowNode node(layout.nodes[node_], port, fo);
    flow_node_ = &node;
    SwarmNodeRuntime runtime;
    runtime.threads = options_.transport == "inproc";
    runtime.jitter_us = options_.jitter_us;
    runtime.program = options_.node_program;
    std::unique_ptr<time::NodeBehaviour> behaviour = make_behaviour(fed_, node_, runtime);
    if (Datastreams streams(fed_, node_); streams.typed())
      behaviour = std::make_unique<DatastreamBehaviour>(std::move(behaviour), std::move(streams));
    try {
      node.run(*behaviour);
      behaviour->finish();
    } catch (...) {
      flow_node_ = nullptr;
      result.consumed = node.consumed();
      result.emitted = node.emitted();
      throw;
    }
    flow_node_ = nullptr;
    port.close();
    if (trace) trace->close();
    result.consumed = node.consumed();
    result.emitted = node.emitted();
    result.state_hash = behaviour->state_hash();
    result.max_lag_ns = node.pacer().max_lag_ns();
    result.ok = true;
  } catch (const transport::FederationStopped& e) {
    result.stopped_by_peer = true;
    result.error = e.what();
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  result.stats = port.stats();
  return result;
}

}  // namespace fleetsim::federation
