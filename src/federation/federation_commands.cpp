#include "federation/federation_commands.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "core/diagnostics.hpp"
#include "federation/example_nodes.hpp"
#include "federation/launcher.hpp"
#include "transport/curve.hpp"
#include "transport/shm_transport.hpp"

namespace fleetsim::federation {

namespace {

/// Options as typed on the command line, before checking.
struct CommandLine {
  std::string federation;
  std::string name;
  std::string transport = "inproc";
  std::string trace_dir;
  std::uint32_t jitter_us = 0;
  std::string time_mode = "afap";
  double speedup = 1.0;
  double until_s = -1;
  std::int64_t until_ns = -1;
  double wait_report_s = 1.0;
  std::string ipc_dir;
  long parent_pid = 0;
  bool quiet = false;
  std::string secret_keys;
  std::string run_id;
  std::string zmq_io_thread = "any";
  int swarm_process = 0;     ///< >= 1: run that process of swarm node `name` (its child)
  std::string swarm_run_id;  ///< the swarm node's processes' run id
};

void add_common(CLI::App& cmd, CommandLine& cl) {
  cmd.add_option("FEDERATION", cl.federation, "Federation file (XML, docs/federation-format.md)")
      ->required();
  cmd.add_option("--trace", cl.trace_dir,
                 "Write DIR/NODE.trace for every node: each consumed and emitted (flow, "
                 "timestamp, period, payload hash), in order; identical across correct runs");
  cmd.add_option("--jitter-us", cl.jitter_us,
                 "Delay every message by a random 0..N microseconds (a test aid: the traces "
                 "must not change)");
  cmd.add_option("--time-mode", cl.time_mode,
                 "afap: as fast as possible; realtime: simulated time follows the wall clock; "
                 "linear: wall clock times --speedup (nodes that cannot keep up report their lag)")
      ->check(CLI::IsMember({"afap", "realtime", "linear"}));
  cmd.add_option("--speedup", cl.speedup, "Speed-up factor of linear time (> 0)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--until", cl.until_s, "End time in simulated seconds (overrides the file's)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--wait-report", cl.wait_report_s,
                 "Seconds a node may block before it reports whom it is waiting for")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--quiet", cl.quiet, "Do not print the per-node summary lines");
  cmd.add_option("--secret-keys", cl.secret_keys,
                 "zmq, authenticated federations: the directory holding NODE.key, the secret "
                 "keys of the nodes run here (`fleetsim keygen`; never the directory of public "
                 "keys the federation file names)");
  cmd.add_option("--zmq-io-thread", cl.zmq_io_thread,
                 "zmq: any (ZeroMQ places its I/O thread) or dedicated (each node's I/O thread "
                 "pinned to its own CPU and run as SCHED_BATCH: about 1.5x fewer microseconds "
                 "per step on a machine that runs nothing else, much slower on a busy one; "
                 "docs/benchmarks.md)")
      ->check(CLI::IsMember({"any", "dedicated"}));
}

// Loads the federation and applies the options; prints diagnostics. Status 2 on errors.
int prepare(const CommandLine& cl, Federation& fed, RunOptions& options) {
  Diagnostics diags;
  auto loaded = load_federation(cl.federation, diags);
  // Swarm nodes against their experiments, every error before any node starts: all of them for
  // launch; for node, the one it runs (the others' experiments may be on other machines).
  if (loaded) check_swarm_nodes(*loaded, diags, cl.name);
  // (A swarm node's own process prints no warnings: the node has printed them.)
  if (cl.swarm_process == 0 || diags.has_errors()) diags.print(std::cerr);
  if (!loaded || diags.has_errors()) return kExitUserError;
  fed = std::move(*loaded);
  if (cl.until_ns > 0)
    fed.until = cl.until_ns;
  else if (cl.until_s > 0)
    fed.until = static_cast<SimTime>(std::llround(cl.until_s * 1e9));
  options.trace_dir = cl.trace_dir;
  options.jitter_us = cl.jitter_us;
  time::parse_time_mode(cl.time_mode, options.mode);
  options.speedup = cl.speedup;
  options.wait_report_after =
      std::chrono::milliseconds(std::max<std::int64_t>(1, std::llround(cl.wait_report_s * 1000)));
  options.quiet = cl.quiet;
  options.secret_keys_dir = cl.secret_keys;
  options.zmq_io_thread = cl.zmq_io_thread;
  if (!cl.run_id.empty()) {
    const auto id = transport::parse_run_id(cl.run_id);
    if (!id) {
      std::cerr << "error: --run-id '" << cl.run_id
                << "' is not a run id (1 to 16 hexadecimal digits, as `fleetsim launch` gives)\n";
      return kExitUserError;
    }
    options.run_id = *id;
  }
  return kExitOk;
}

}  // namespace

void add_commands(CLI::App& app, int& status) {
  auto launch_cl = std::make_shared<CommandLine>();
  auto* launch = app.add_subcommand(
      "launch",
      "Run every node of a federation on this machine and wait for all of them.\n"
      "Nodes advance by DSAAM flows (docs/time-management.md): the run is repeatable bit for "
      "bit, whatever the transport, the load or --jitter-us.\n"
      "Exit status: 0 when every node finished, 1 when one failed, 2 for a bad file or option.");
  add_common(*launch, *launch_cl);
  launch
      ->add_option("--transport", launch_cl->transport,
                   "inproc: nodes as threads of this process; shm: nodes as child processes "
                   "linked by shared-memory rings; zmq: nodes as child processes linked by "
                   "ZeroMQ (endpoints from the file, else ipc:// in a private directory)")
      ->check(CLI::IsMember({"inproc", "shm", "zmq"}));
  launch->callback([launch_cl, &status] {
    Federation fed;
    RunOptions options;
    status = prepare(*launch_cl, fed, options);
    if (status != kExitOk) return;
    options.transport = launch_cl->transport;
    if (launch_cl->transport == "inproc")
      status = launch_threads(fed, options);
    else
      status = launch_processes(fed, launch_cl->federation, options);
  });

  struct KeygenArgs {
    std::vector<std::string> names;
    std::string public_dir = "public-keys", secret_dir = "secret-keys";
  };
  auto keygen_cl = std::make_shared<KeygenArgs>();
  auto* keygen = app.add_subcommand(
      "keygen",
      "Make CURVE key pairs for the nodes of an authenticated federation "
      "(docs/federation-format.md, \"Authentication\"): NAME.pub (the public key: the "
      "federation's <authentication public_keys=\"DIR\"> names its directory) and NAME.key (the "
      "secret key, mode 0600: give its directory to the node's machine with --secret-keys; never "
      "share it).");
  keygen->add_option("NAME", keygen_cl->names, "node names")->required();
  keygen->add_option("--public-dir", keygen_cl->public_dir,
                     "where the public keys go (default: public-keys)");
  keygen->add_option("--secret-dir", keygen_cl->secret_dir,
                     "where the secret keys go (default: secret-keys)");
  keygen->callback([keygen_cl, &status] {
    status = kExitOk;
    for (const auto& name : keygen_cl->names) {
      try {
        auto [pub, sec] =
            transport::write_curve_key_files(name, keygen_cl->public_dir, keygen_cl->secret_dir);
        std::cout << name << ": public key " << pub << ", secret key " << sec << "\n";
      } catch (const std::exception& e) {
        std::cerr << "fleetsim keygen: error: " << e.what() << "\n";
        status = kExitUserError;
      }
    }
  });

  auto node_cl = std::make_shared<CommandLine>();
  node_cl->transport = "auto";
  auto* node = app.add_subcommand(
      "node",
      "Run one node of a federation in this process: start `fleetsim node FED --name N` once "
      "per node (any order). Nodes on one machine meet in shared memory; nodes spread over "
      "several machines find each other through the endpoints of the federation file "
      "(ZeroMQ).\n"
      "If a peer dies or leaves early, the node stops within a second naming it; status 1.");
  add_common(*node, *node_cl);
  node->add_option("--name", node_cl->name, "Which node of the federation to run")->required();
  node->add_option("--transport", node_cl->transport,
                   "shm: shared-memory rings (every node on this machine); zmq: ZeroMQ at the "
                   "endpoints of the file; auto (default): shm when every endpoint is on this "
                   "machine (ipc://, tcp://127.x or none) and the federation is not "
                   "authenticated, else zmq. Every node of a run must use the same")
      ->check(CLI::IsMember({"auto", "shm", "zmq"}));
  node->add_option("--ipc-dir", node_cl->ipc_dir,
                   "Give nodes without an endpoint the endpoint ipc://DIR/NODE");
  node->add_option("--run-id", node_cl->run_id,
                   "This run's identity, 16 hex digits, the same on every node (default 0): a "
                   "node refuses messages stamped with another (a process of an earlier run "
                   "still sending). `fleetsim launch` draws one per run");
  node->add_option("--until-ns", node_cl->until_ns, "End time in ns (used by launch)")->group("");
  node->add_option("--parent-pid", node_cl->parent_pid,
                   "Exit when this process (the launcher) dies")
      ->group("");
  // A swarm node with processes="N" starts its processes 1..N-1 as `fleetsim node FED --name
  // NODE --swarm-process P --swarm-run-id HEX` (distributed/swarm_node.hpp).
  node->add_option("--swarm-process", node_cl->swarm_process, "")->group("");
  node->add_option("--swarm-run-id", node_cl->swarm_run_id, "")->group("");
  node->callback([node_cl, &status] {
    if (node_cl->parent_pid > 0) {
      // Never outlive the launcher, even if it is killed with SIGKILL.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != static_cast<pid_t>(node_cl->parent_pid)) std::_Exit(kExitRuntimeError);
    }
    Federation fed;
    RunOptions options;
    status = prepare(*node_cl, fed, options);
    if (status != kExitOk) return;
    if (!fed.find(node_cl->name)) {
      std::vector<std::string> names;
      for (const auto& n : fed.nodes) names.push_back(n.name);
      std::cerr << fmt::format("{}: error: no node called '{}'{}\n", node_cl->federation,
                               node_cl->name, did_you_mean(node_cl->name, names));
      status = kExitUserError;
      return;
    }
    if (node_cl->swarm_process > 0) {
      const auto id = transport::parse_run_id(node_cl->swarm_run_id);
      const std::size_t n = fed.index_of(node_cl->name);
      if (!id || !swarm_process_main() || fed.nodes[n].kind != NodeKind::kSwarm ||
          node_cl->swarm_process >= fed.nodes[n].processes) {
        std::cerr << "error: --swarm-process " << node_cl->swarm_process << " does not fit node '"
                  << node_cl->name
                  << "' (only a swarm node starts its own processes, 1 to processes - 1, with "
                     "a --swarm-run-id)\n";
        status = kExitUserError;
        return;
      }
      status = swarm_process_main()(fed, n, node_cl->swarm_process, *id, options.jitter_us);
      return;
    }
    if (!node_cl->ipc_dir.empty()) assign_ipc_endpoints(fed, node_cl->ipc_dir);
    options.transport = node_cl->transport;
    const bool shm = transport::use_shm(fed.layout(), node_cl->transport);
    for (const auto& n : fed.nodes)
      if (n.endpoint.empty() && !shm) {
        std::cerr << fmt::format(
            "{}:{}: error: node '{}' has no endpoint (expected "
            "endpoint=\"tcp://host:port\" or \"ipc://path\", or --ipc-dir)\n",
            n.where.file, n.where.line, n.name);
        status = kExitUserError;
        return;
      }
    status = run_node_process(fed, node_cl->name, options);
  });
}

}  // namespace fleetsim::federation
