#include "distributed/swarm_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "core/diagnostics.hpp"
#include "distributed/exchanges.hpp"
#include "distributed/swarm_run.hpp"
#include "federation/launcher.hpp"
#include "transport/shm_transport.hpp"

namespace fleetsim::distributed {

SwarmProcesses::SwarmProcesses(const federation::Federation& fed, std::size_t node,
                               const federation::SwarmNodeRuntime& runtime, SimTime tick_ns,
                               ThreadBody body)
    : fed_(fed), node_(node), n_(fed.nodes[node].processes) {
  const auto layout = make_swarm_layout(SyncMode::kDsaam, n_, tick_ns);
  transport::PortOptions po;
  po.jitter_us = runtime.jitter_us;
  po.log = log_refusal;
  if (runtime.threads) {
    net_ = std::make_unique<transport::InprocNetwork>(layout);
    po.log = [](const std::string&) {};
    errors_.assign(static_cast<std::size_t>(n_), "");
    port_ = net_->port(process_name(0), po);
    for (int p = 1; p < n_; ++p)
      threads_.emplace_back([this, p, po, body] {
        std::string result;
        try {
          auto port = net_->port(process_name(p), po);
          result = body(p, *port);
        } catch (const std::exception& e) {
          result = std::string("error: ") + e.what();
        }
        if (result.rfind("error: ", 0) != 0) return;
        {
          std::lock_guard lock(errors_mutex_);
          errors_[static_cast<std::size_t>(p)] = result;
        }
        net_->stop("process " + std::to_string(p) + " failed: " + result.substr(7));
      });
    return;
  }
  run_id_ = transport::new_run_id();
  const std::string program =
      runtime.program.empty() ? federation::self_executable() : runtime.program;
  try {
    for (int p = 1; p < n_; ++p) spawn(program, p, runtime.jitter_us);
    // A child that fails before it joins (its port never appears) is found by the waits.
    po.run_id = run_id_;
    po.wait_report_after = std::chrono::milliseconds(100);
    po.on_wait = [this](const transport::WaitReport&) { check_children(); };
    port_ = open_process_port(layout, 0, transport::Carrier::kShm, std::move(po));
  } catch (...) {
    children_.reap(std::chrono::seconds(0));  // (the destructor does not run)
    throw;
  }
}

SwarmProcesses::~SwarmProcesses() {
  if (net_ && !ended_) net_->stop("swarm node '" + fed_.nodes[node_].name + "' stopped");
  port_.reset();
  for (auto& t : threads_) t.join();
  children_.reap(std::chrono::seconds(1));
  if (run_id_) transport::remove_stale_shm_segments(run_id_);
}

void SwarmProcesses::end() {
  ended_ = true;
  port_->close();
  for (auto& t : threads_) t.join();
  threads_.clear();
  children_.reap(std::chrono::seconds(10));
  const std::string why = failure();
  if (!why.empty()) throw std::runtime_error(why);
}

void SwarmProcesses::check(const std::function<std::string(int)>& regions) {
  try {
    check_children();
  } catch (const transport::PeerLost& e) {
    const std::string why = failure(regions);
    throw std::runtime_error(why.empty() ? e.what() : why);
  }
}

std::string SwarmProcesses::failure(const std::function<std::string(int)>& regions) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (true) {
    children_.poll();
    const std::string why = first_failure(regions);
    if (!why.empty() || children_.all_ended() || std::chrono::steady_clock::now() >= until)
      return why;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string SwarmProcesses::first_failure(const std::function<std::string(int)>& regions) {
  for (int p = 1; p < n_; ++p) {
    std::string said;  // "error: ..." when it failed by itself
    int status = 0;
    if (net_) {
      std::lock_guard lock(errors_mutex_);
      said = errors_[static_cast<std::size_t>(p)];
    } else {
      const ChildProcesses::Child& c = children_[static_cast<std::size_t>(p - 1)];
      if (!c.exited && !c.stopped) continue;
      said = c.out.substr(0, c.out.find('\n'));
      status = c.status;
      if (!c.exited) said = "error: the process is stopped (by a signal such as SIGSTOP): it hangs";
    }
    std::string error;
    if (said.rfind("error: ", 0) == 0)
      error = said.substr(7);
    else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && said.rfind("stopped: ", 0) != 0)
      error = "the process " + describe_exit_status(status);
    if (error.empty()) continue;
    const std::string r = regions ? regions(p) : "";
    return "swarm node '" + fed_.nodes[node_].name + "': process " + std::to_string(p) +
           (r.empty() ? "" : " (" + r + ")") + ": " + error;
  }
  return "";
}

void SwarmProcesses::spawn(const std::string& program, int p, std::uint32_t jitter_us) {
  int fds[2];
  // (Close-on-exec: only the child's stdout, a dup, stays open in it.)
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot create a pipe for a swarm process");
  std::vector<std::string> args = {program,
                                   "node",
                                   fed_.path,
                                   "--name",
                                   fed_.nodes[node_].name,
                                   "--swarm-process",
                                   std::to_string(p),
                                   "--swarm-run-id",
                                   transport::run_id_text(run_id_),
                                   "--parent-pid",
                                   std::to_string(getpid()),
                                   "--jitter-us",
                                   std::to_string(jitter_us),
                                   "--quiet"};
  pid_t pid = -1;
  const int rc = federation::spawn_program(std::move(args), pid, fds[1]);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("swarm node '" + fed_.nodes[node_].name + "': cannot start process " +
                             std::to_string(p) + " (" + program + "): " + std::strerror(rc));
  }
  children_.adopt(pid, fds[0]);
}

void SwarmProcesses::check_children() {
  children_.poll();
  for (std::size_t k = 0; k < children_.size(); ++k)
    if (children_[k].exited)
      throw transport::PeerLost(process_name(static_cast<int>(k) + 1),
                                "swarm node '" + fed_.nodes[node_].name + "': process " +
                                    std::to_string(k + 1) + " left before the end");
}

}  // namespace fleetsim::distributed
