#include "federation/launcher.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "core/child_processes.hpp"
#include "core/diagnostics.hpp"
#include "transport/curve.hpp"
#include "transport/inproc_transport.hpp"
#include "transport/open_port.hpp"
#include "transport/shm_transport.hpp"
#include "transport/tap.hpp"
#include "transport/zmq_transport.hpp"

extern char** environ;

namespace fleetsim::federation {

namespace {

std::atomic<bool> g_interrupted{false};

void on_interrupt(int) {
  g_interrupted.store(true);
}

}  // namespace

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

int spawn_program(std::vector<std::string> args, pid_t& pid, int stdout_fd) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

void assign_ipc_endpoints(Federation& fed, const std::string& dir) {
  for (auto& n : fed.nodes)
    if (n.endpoint.empty()) n.endpoint = "ipc://" + dir + "/" + n.name;
}

int launch_threads(const Federation& fed, const RunOptions& options) {
  for (const auto& n : fed.nodes)
    if (n.kind == NodeKind::kProgram) {
      log_line(
          fmt::format("{}:{}: error: node '{}' runs an external program (expected "
                      "--transport shm or zmq to run it)",
                      n.where.file, n.where.line, n.name));
      return kExitUserError;
    }
  transport::InprocNetwork net(fed.layout());
  std::vector<NodeResult> results(fed.nodes.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < fed.nodes.size(); ++i)
    threads.emplace_back([&, i] {
      RunOptions mine = options;
      mine.transport = "inproc";  // a swarm node's processes too are threads
      NodeRun run(fed, i, mine);
      auto port = net.port(fed.nodes[i].name, run.port_options());
      results[i] = run.run(*port);
      if (!results[i].ok && !results[i].stopped_by_peer)
        net.stop(fmt::format("node '{}' failed", fed.nodes[i].name));
    });
  for (auto& t : threads) t.join();
  int status = kExitOk;
  for (const auto& r : results) {
    if (r.ok) {
      if (!options.quiet) std::cout << summary_line(r) << "\n";
    } else {
      status = kExitRuntimeError;
      if (r.stopped_by_peer)
        log_line(fmt::format("node '{}' stopped: {}", r.name, r.error));
      else
        log_line(fmt::format("error: {}", r.error));
    }
  }
  std::cout.flush();
  return status;
}

int launch_processes(const Federation& fed_in, const std::string& federation_path,
                     const RunOptions& options) {
  Federation fed = fed_in;
  // Nodes without an endpoint talk over ipc:// in a private directory.
  std::string dir;
  bool need_dir = false;
  for (const auto& n : fed.nodes) need_dir |= n.endpoint.empty();
  if (need_dir) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fleetsim-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      log_line(fmt::format("error: cannot create a directory for ipc endpoints: {}",
                           std::strerror(errno)));
      return kExitRuntimeError;
    }
    dir = tmpl;
  }
  std::string program = options.node_program.empty() ? self_executable() : options.node_program;
  std::string fed_path = std::filesystem::absolute(federation_path).string();

  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  g_interrupted.store(false);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  ChildProcesses children;
  std::vector<std::string> names;  // per child
  int status = kExitOk;
  const std::uint64_t run = transport::new_run_id();
  const std::string run_id = transport::run_id_text(run);
  for (const auto& n : fed.nodes) {
    std::vector<std::string> args;
    if (n.kind == NodeKind::kProgram) {
      args = {n.program, fed_path};
    } else {
      args = {program, "node", fed_path};
    }
    args.insert(args.end(), {"--name", n.name, "--parent-pid", std::to_string(getpid()), "--run-id",
                             run_id, "--transport", options.transport});
    if (!dir.empty()) args.insert(args.end(), {"--ipc-dir", dir});
    if (!options.trace_dir.empty()) args.insert(args.end(), {"--trace", options.trace_dir});
    if (options.jitter_us)
      args.insert(args.end(), {"--jitter-us", std::to_string(options.jitter_us)});
    args.insert(args.end(), {"--time-mode", time::to_string(options.mode), "--speedup",
                             fmt::format("{}", options.speedup), "--until-ns",
                             std::to_string(options.until.value_or(fed.until)), "--wait-report",
                             fmt::format("{}", options.wait_report_after.count() / 1000.0)});
    if (options.quiet) args.push_back("--quiet");
    if (!options.secret_keys_dir.empty())
      args.insert(args.end(), {"--secret-keys", options.secret_keys_dir});
    if (options.zmq_io_thread != "any")
      args.insert(args.end(), {"--zmq-io-thread", options.zmq_io_thread});
    pid_t pid = 0;
    const int rc = spawn_program(args, pid);
    if (rc != 0) {
      log_line(fmt::format("error: cannot start node '{}' ({}): {}", n.name, args[0],
                           std::strerror(rc)));
      status = kExitRuntimeError;
      break;
    }
    children.adopt(pid);
    names.push_back(n.name);
  }

  // Reap every child. After the first failure, the others get a grace period to detect it and
  // stop on their own (they should within a second), then are killed. A node stopped by a
  // signal (SIGSTOP) cannot stop on its own: it is killed as soon as the run fails (the others
  // see it hang within a second), so that launch returns as soon as they have stopped.
  using Clock = std::chrono::steady_clock;
  bool failing = status != kExitOk;
  auto fail_at = Clock::now();
  bool terminated = false, killed = false;
  const auto grace = std::chrono::seconds(3);
  std::vector<char> reported(children.size(), 0), killed_stopped(children.size(), 0);
  while (true) {
    children.wait(std::chrono::milliseconds(5));
    bool running = false;
    for (std::size_t k = 0; k < children.size(); ++k) {
      const ChildProcesses::Child& c = children[k];
      if (!c.exited) {
        running = true;
        continue;
      }
      if (reported[k]) continue;
      reported[k] = 1;
      if (!(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0)) {
        if (!killed && !killed_stopped[k])
          log_line(fmt::format("node '{}' {}", names[k], describe_exit_status(c.status)));
        status = kExitRuntimeError;
        if (!failing) fail_at = Clock::now();
        failing = true;
      }
    }
    if (!running) break;
    if (g_interrupted.load() && !terminated) {
      terminated = true;
      status = kExitRuntimeError;
      failing = true;
      fail_at = Clock::now();
      for (std::size_t k = 0; k < children.size(); ++k) children.kill(k, SIGTERM);
    }
    if (failing)
      for (std::size_t k = 0; k < children.size(); ++k)
        if (children[k].stopped && !children[k].exited && !killed_stopped[k]) {
          killed_stopped[k] = 1;
          log_line(
              fmt::format("node '{}' is stopped (by a signal such as SIGSTOP): killed", names[k]));
          children.kill(k);
        }
    if (failing && !killed && Clock::now() - fail_at > grace) {
      killed = true;
      for (std::size_t k = 0; k < children.size(); ++k)
        if (!children[k].exited) {
          log_line(fmt::format("node '{}' did not stop within {} s of the failure: killed",
                               names[k], grace.count()));
          children.kill(k);
        }
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  transport::remove_stale_shm_segments(run);  // what killed nodes left in /dev/shm
  transport::remove_taps(run);                // the run is over: no optional node reads them
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return status;
}

transport::ZmqOptions zmq_options_for(const Federation& fed, const std::string& name,
                                      const std::string& secret_keys_dir,
                                      const std::string& io_thread) {
  const NodeDecl& node = fed.nodes[fed.index_of(name)];
  transport::ZmqOptions zo;
  if (io_thread != "any" && io_thread != "dedicated")
    throw std::runtime_error(fmt::format(
        "node '{}': ZeroMQ I/O thread '{}' (expected any or dedicated)", name, io_thread));
  if (io_thread == "dedicated") {
    zo.io_thread_cpu = transport::kIoThreadCpuByNode;
    zo.io_thread_batch = true;
  }
  const std::string& endpoint = node.endpoint;
  if (node.public_key.empty() && endpoint.rfind("tcp://", 0) == 0 &&
      endpoint.rfind("tcp://127.", 0) != 0 && endpoint.rfind("tcp://localhost:", 0) != 0)
    log_line(fmt::format(
        "warning: node '{}' listens on {} without authentication: anyone who can reach it "
        "can send it messages (add <authentication> to {}: docs/federation-format.md)",
        name, endpoint, fed.path));
  if (node.public_key.empty()) return zo;
  if (secret_keys_dir.empty())
    throw std::runtime_error(fmt::format(
        "node '{}': {} requires authentication: give --secret-keys DIR (DIR/{}.key, from "
        "`fleetsim keygen {}`)",
        name, fed.path, name, name));
  try {
    zo.secret_key = transport::read_curve_key_file(
        (std::filesystem::path(secret_keys_dir) / (name + ".key")).string());
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("node '{}': {} (its secret key, from `fleetsim "
                    "keygen {}`)",
                    name, e.what(), name));
  }
  return zo;
}

int run_node_process(const Federation& fed, const std::string& name, const RunOptions& options) {
  std::size_t index = fed.index_of(name);
  if (fed.nodes[index].kind == NodeKind::kProgram) {
    log_line(fmt::format("error: node '{}' runs an external program ('{}'), not fleetsim", name,
                         fed.nodes[index].program));
    return kExitUserError;
  }
  NodeRun run(fed, index, options);
  NodeResult result;
  try {
    const auto layout = fed.layout();
    transport::PortConfig pc;
    pc.carrier = transport::choose_carrier(layout, options.transport);
    pc.port = run.port_options();
    if (pc.carrier == transport::Carrier::kZmq)
      pc.zmq = zmq_options_for(fed, name, options.secret_keys_dir, options.zmq_io_thread);
    auto port = transport::open_port(layout, name, std::move(pc));
    result = run.run(*port);
  } catch (const std::exception& e) {
    result.name = name;
    result.error = e.what();
  }
  if (!result.ok) {
    log_line(fmt::format("error: {}", result.error));
    return kExitRuntimeError;
  }
  if (!options.quiet) std::cout << summary_line(result) << std::endl;
  return kExitOk;
}

}  // namespace fleetsim::federation
