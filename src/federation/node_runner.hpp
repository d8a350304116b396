// Runs one node of a federation on a port of any transport: builds its simulator, its
// FlowNode, its trace, and turns every failure into a result rather than an exception.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "federation/federation_file.hpp"
#include "time/flow_node.hpp"
#include "transport/port.hpp"

namespace fleetsim::federation {

/// Options shared by `fleetsim launch` and `fleetsim node`.
struct RunOptions {
  std::string trace_dir;  ///< "" = no traces; else DIR/NODE.trace
  std::uint32_t jitter_us = 0;
  time::TimeMode mode = time::TimeMode::kAsFastAsPossible;
  double speedup = 1.0;
  std::optional<SimTime> until;  ///< overrides the file's end time
  std::chrono::milliseconds wait_report_after{1000};
  std::string ipc_dir;  ///< zmq: endpoints ipc://DIR/NODE for nodes without one
  /// launch: the executable with a `node` subcommand started for every node; also the one a
  /// swarm node with processes="N" starts for its processes 1..N-1 (empty: this one).
  std::string node_program;
  /// "inproc" (launch_threads sets it: a swarm node's processes are then threads), "shm",
  /// "zmq" or "auto" (transport::use_shm).
  bool quiet = false;  ///< no per-node summary lines
  /// zmq, authenticated federations: the directory holding NODE.key, this machine's nodes'
  /// secret keys (never a directory the federation file names).
  std::string secret_keys_dir;
  /// Processes: this run's identity (transport::PortOptions::run_id); launch draws one.
  std::uint64_t run_id = 0;
  std::string transport = "auto";
  /// zmq: "any" or "dedicated" (federation::zmq_options_for).
  std::string zmq_io_thread = "any";
};

/// How a node ended.
struct NodeResult {
  std::string name;
  bool ok = false;
  bool stopped_by_peer = false;  ///< failed because another node failed first
  std::string error;
  std::uint64_t consumed = 0, emitted = 0, state_hash = 0;
  std::int64_t max_lag_ns = 0;
  transport::PortStats stats;
};

/// One summary line: "node N: consumed C, emitted E, state HASH" (no wall-clock data).
std::string summary_line(const NodeResult& r);

/// Writes a diagnostic line to stderr (thread-safe; whole lines).
void log_line(const std::string& line);

/// One node's run. Create it, pass port_options() to the transport, then run() on the port.
class NodeRun {
 public:
  NodeRun(const Federation& fed, std::size_t node, const RunOptions& options);
  /// Options for the node's port: jitter and "who am I waiting for" reports.
  transport::PortOptions port_options();
  /// Runs to the end time; never throws.
  NodeResult run(transport::Port& port);

 private:
  const Federation& fed_;
  std::size_t node_;
  RunOptions options_;
  const time::FlowNode* flow_node_ = nullptr;  ///< set while running, for wait reports
};

}  // namespace fleetsim::federation
