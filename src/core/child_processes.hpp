// The supervision of child processes, one way for every command that starts them: the
// processes of `fleetsim run --processes` (forked) and of a swarm node (started as programs).
// Each child writes its report (and any lines before it) into a pipe the supervisor reads; the
// supervisor notes which children exited, with what status, and which a signal stopped (a
// stopped process cannot end on its own, so it is never waited for).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <string>
#include <vector>

namespace fleetsim {

class ChildProcesses {
 public:
  struct Child {
    pid_t pid = -1;
    int fd = -1;           ///< the read end of its pipe; -1 once drained after its exit
    std::string out;       ///< everything it wrote so far
    bool exited = false;   ///< waited for: `status` holds its wait status
    bool stopped = false;  ///< stopped by a signal (SIGSTOP) and not continued
    int status = 0;
  };

  ChildProcesses() = default;
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;
  /// Kills and waits for the children still running.
  ~ChildProcesses();

  /// Takes over child `pid`, which writes into the pipe whose read end is `fd` (made
  /// non-blocking here; closed by this object), or -1 for a child whose output goes elsewhere.
  void adopt(pid_t pid, int fd = -1);
  /// Reads what the children wrote so far, without blocking, and notes those that exited or
  /// were stopped or continued; an exited child's pipe is read to its end and closed.
  void poll();
  /// Waits up to `timeout` for a child to write (or close its pipe), then poll().
  void wait(std::chrono::milliseconds timeout);
  /// Waits up to `patience` for every child to exit (stopped ones excepted), then kills and
  /// waits for those left.
  void reap(std::chrono::steady_clock::duration patience);
  /// Sends child k `signal` (SIGKILL by default) unless it has exited; poll() notes its end.
  void kill(std::size_t k, int signal = SIGKILL) const;

  std::size_t size() const { return children_.size(); }
  const Child& operator[](std::size_t k) const { return children_[k]; }
  /// Every child exited, or is stopped by a signal.
  bool all_ended() const;

 private:
  std::vector<Child> children_;
};

}  // namespace fleetsim
