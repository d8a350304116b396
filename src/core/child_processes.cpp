#include "core/child_processes.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace fleetsim {

ChildProcesses::~ChildProcesses() {
  reap(std::chrono::seconds(0));
}

void ChildProcesses::adopt(pid_t pid, int fd) {
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  Child c;
  c.pid = pid;
  c.fd = fd;
  children_.push_back(std::move(c));
}

void ChildProcesses::poll() {
  char buf[65536];
  for (Child& c : children_) {
    for (ssize_t n; c.fd >= 0 && (n = read(c.fd, buf, sizeof buf)) > 0;)
      c.out.append(buf, static_cast<std::size_t>(n));
    int st = 0;
    const pid_t w = c.exited ? 0 : waitpid(c.pid, &st, WNOHANG | WUNTRACED | WCONTINUED);
    if (w == c.pid) {
      if (WIFSTOPPED(st) || WIFCONTINUED(st)) {
        c.stopped = WIFSTOPPED(st);
      } else {
        c.status = st;
        c.exited = true;
        c.stopped = false;
      }
    } else if (w < 0 && errno == ECHILD) {  // (waited for elsewhere: gone, status unknown)
      c.exited = true;
      c.stopped = false;
    }
    if (c.exited && c.fd >= 0) {  // (it writes no more: what is in the pipe is all)
      for (ssize_t n; (n = read(c.fd, buf, sizeof buf)) > 0;)
        c.out.append(buf, static_cast<std::size_t>(n));
      close(c.fd);
      c.fd = -1;
    }
  }
}

void ChildProcesses::wait(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  for (const Child& c : children_)
    if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
  if (fds.empty())
    std::this_thread::sleep_for(timeout);
  else
    ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  poll();
}

void ChildProcesses::reap(std::chrono::steady_clock::duration patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  while (true) {
    poll();
    bool all = true;
    for (const Child& c : children_) all = all && (c.exited || c.stopped);
    if (all || std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (Child& c : children_)
    if (!c.exited) {
      ::kill(c.pid, SIGKILL);
      waitpid(c.pid, &c.status, 0);
      c.exited = true;
      c.stopped = false;
    }
  poll();
}

void ChildProcesses::kill(std::size_t k, int signal) const {
  if (!children_[k].exited) ::kill(children_[k].pid, signal);
}

bool ChildProcesses::all_ended() const {
  for (const Child& c : children_)
    if (!c.exited && !c.stopped) return false;
  return true;
}

}  // namespace fleetsim
