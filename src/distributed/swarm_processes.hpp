// The processes 1..N-1 of a federation's swarm node with processes="N" (swarm_node.hpp): the
// node itself is process 0. Under `launch --transport inproc` they are threads of the node's
// process on in-process queues; otherwise child processes of it (`fleetsim node FED --name
// NODE --swarm-process P --swarm-run-id HEX`, which die with it) on shared-memory rings, as
// `fleetsim run --processes` links its processes. This is their supervision: starting them,
// noticing one that ends early, naming the one that failed first with its own error, and
// stopping the others.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/child_processes.hpp"
#include "federation/example_nodes.hpp"
#include "federation/federation_file.hpp"
#include "transport/inproc_transport.hpp"
#include "transport/port.hpp"

namespace fleetsim::distributed {

class SwarmProcesses {
 public:
  /// Runs process `p` (>= 1) of the node on `port` to its end, in a thread; returns "" when it
  /// ended well, else "error: WHY" (it failed by itself) or "stopped: WHY" (another failed).
  using ThreadBody = std::function<std::string(int p, transport::Port& port)>;

  /// Starts processes 1..N-1 of swarm node `node` of `fed` (which must outlive this) for
  /// ticks of `tick_ns`, and makes process 0's port among them. Throws std::runtime_error when
  /// one cannot be started.
  SwarmProcesses(const federation::Federation& fed, std::size_t node,
                 const federation::SwarmNodeRuntime& runtime, SimTime tick_ns, ThreadBody body);
  SwarmProcesses(const SwarmProcesses&) = delete;
  SwarmProcesses& operator=(const SwarmProcesses&) = delete;
  /// Stops them: the port first (the others then see process 0 leave), then threads are
  /// joined, children reaped (killed after a second), their shared memory removed.
  ~SwarmProcesses();

  /// Process 0's port among them.
  transport::Port& port() { return *port_; }

  /// After the last round: the port closed, every process ended; throws the error of one that
  /// did not end well.
  void end();

  /// Between rounds (process 0 is not waiting for them): a child process that has ended
  /// already stops the node at once, naming it (failure()).
  void check(const std::function<std::string(int)>& regions);

  /// Why the node's processes stopped: "swarm node 'NODE': process P (REGIONS): ERROR" for the
  /// first, in index order, that failed by itself (REGIONS: `regions(p)`), or "" when none did
  /// (process 0 itself failed). Children get up to 300 ms to report.
  std::string failure(const std::function<std::string(int)>& regions = {});

 private:
  /// failure(), among the processes that have ended so far.
  std::string first_failure(const std::function<std::string(int)>& regions);
  void spawn(const std::string& program, int p, std::uint32_t jitter_us);
  /// While process 0 waits in a round: a child that exited before the end is a lost peer.
  void check_children();

  const federation::Federation& fed_;
  std::size_t node_;
  int n_;
  std::unique_ptr<transport::InprocNetwork> net_;  ///< threads
  std::vector<std::thread> threads_;
  std::mutex errors_mutex_;
  std::vector<std::string> errors_;  ///< threads: per process, "error: ..." when it failed
  /// Processes 1..N-1; each one's stdout: "error: ..." or "stopped: ..." when it fails.
  ChildProcesses children_;
  std::uint64_t run_id_ = 0;  ///< children: their shared memory's
  std::unique_ptr<transport::Port> port_;
  bool ended_ = false;
};

}  // namespace fleetsim::distributed
