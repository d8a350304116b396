// ChildProcesses: what the supervisor of `run --processes`, a swarm node and `launch` learns of
// its children: all they wrote, how they ended, and which a signal stopped (never waited for).
#include "core/child_processes.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace fleetsim {
namespace {

/// Forks a child that runs `body` with its pipe's write end and exits with what it returns.
template <class F>
void start(ChildProcesses& children, F body) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    _exit(body(fds[1]));
  }
  close(fds[1]);
  children.adopt(pid, fds[0]);
}

TEST(ChildProcesses, GivesAllEachWroteAndHowItEnded) {
  ChildProcesses c;
  const std::string big(200000, 'x');  // more than a pipe holds: read while it runs
  start(c, [&](int fd) {
    for (std::size_t at = 0; at < big.size();) {
      const ssize_t n = write(fd, big.data() + at, big.size() - at);
      if (n <= 0) return 9;
      at += static_cast<std::size_t>(n);
    }
    return 0;
  });
  start(c, [](int fd) {
    (void)!write(fd, "error: no\n", 10);
    return 3;
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!c.all_ended() && std::chrono::steady_clock::now() < until)
    c.wait(std::chrono::milliseconds(20));
  ASSERT_TRUE(c.all_ended());
  EXPECT_EQ(c[0].out, big);
  EXPECT_TRUE(WIFEXITED(c[0].status) && WEXITSTATUS(c[0].status) == 0);
  EXPECT_EQ(c[1].out, "error: no\n");
  EXPECT_TRUE(WIFEXITED(c[1].status) && WEXITSTATUS(c[1].status) == 3);
  EXPECT_EQ(c[0].fd, -1) << "an ended child's pipe is read to its end and closed";
}

TEST(ChildProcesses, AStoppedChildIsNotWaitedForAndReapKillsIt) {
  ChildProcesses c;
  start(c, [](int) {
    pause();  // until a signal ends it
    return 0;
  });
  ASSERT_EQ(kill(c[0].pid, SIGSTOP), 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!c[0].stopped && std::chrono::steady_clock::now() < until)
    c.wait(std::chrono::milliseconds(10));
  EXPECT_TRUE(c[0].stopped);
  EXPECT_TRUE(c.all_ended()) << "a stopped child cannot end on its own";
  const auto t0 = std::chrono::steady_clock::now();
  c.reap(std::chrono::seconds(30));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10))
      << "reap does not wait for a stopped child";
  EXPECT_TRUE(c[0].exited);
  EXPECT_TRUE(WIFSIGNALED(c[0].status) && WTERMSIG(c[0].status) == SIGKILL);
}

}  // namespace
}  // namespace fleetsim
