// Tests that run fleetsim: a command through the shell with its output in files, or in the
// background, its child processes, and waiting for it with a bound (a hang fails the test
// rather than the suite).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_files.hpp"

extern char** environ;

namespace fleetsim::testing {

/// What a command did: its exit status (-1 when a signal ended it) and its output.
struct CommandResult {
  int status = -1;
  std::string out, err;
};

/// Runs `command` through the shell, bounded by time_limited(`seconds`), its standard output
/// and error into DIR/stdout.txt and DIR/stderr.txt.
inline CommandResult run_command(const std::string& command, const std::filesystem::path& dir,
                                 int seconds = 300) {
  const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  const int raw = std::system((time_limited(command, seconds) + " >" + out + " 2>" + err).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

/// Starts `program` with `args`, its standard output and error into the files `out` and `err`;
/// returns its pid.
inline pid_t spawn_with_output(const std::string& program, std::vector<std::string> args,
                               const std::string& out, const std::string& err) {
  args.insert(args.begin(), program);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

/// The child processes of `pid`, oldest first.
inline std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

/// The children of `pid` once there are `n` of them (polled every 25 ms for up to 10 s); fewer
/// when they did not all come.
inline std::vector<pid_t> wait_for_children(pid_t pid, std::size_t n) {
  std::vector<pid_t> kids;
  for (int t = 0; t < 400 && kids.size() < n; ++t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    kids = children_of(pid);
  }
  return kids;
}

/// Waits for child `pid` up to `limit`; its exit status, -1 when a signal ended it. After the
/// limit it is killed, the test fails and the result is -2.
inline int wait_for(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int st = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  ADD_FAILURE() << "the process did not stop within " << limit.count() << " s";
  return -2;
}

/// The live view's URL with its token that a `fleetsim run --view` printed into the file
/// `out`, waiting up to `tries` × 10 ms for it; "" if none came.
inline std::string wait_for_view_url(const std::string& out, int tries) {
  static const std::regex printed(R"(http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32})");
  for (int i = 0; i < tries; ++i) {
    std::ostringstream text;
    text << std::ifstream(out).rdbuf();
    const std::string s = text.str();
    std::smatch m;
    if (std::regex_search(s, m, printed)) return m[0].str();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

/// The port of a view URL (http://127.0.0.1:PORT/?token=...).
inline int view_url_port(const std::string& url) {
  const auto colon = url.rfind(':', url.find('/', 7));
  return std::stoi(url.substr(colon + 1));
}

}  // namespace fleetsim::testing
