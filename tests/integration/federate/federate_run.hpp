// What the federate tests share: a federation run with its built-in nodes in threads and one
// node played, in the test's own thread, by a federate.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "federation/launcher.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"
#include "time/trace.hpp"
#include "transport/shm_transport.hpp"

namespace fleetsim::testing {

/// `v` as 8 little-endian bytes: a payload.
inline std::vector<std::uint8_t> word(std::uint64_t v) {
  std::vector<std::uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return out;
}

/// Expects `call` to throw a FederateError whose message holds `expected`.
inline void expect_refused(const std::function<void()>& call, const std::string& expected) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected: " << expected;
  } catch (const FederateError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

/// Runs `fleetsim check` on `file`: its exit status (-1 when it did not exit) and its standard
/// error (through `err`, a file).
inline std::pair<int, std::string> check_federation(const std::filesystem::path& file,
                                                    const std::filesystem::path& err) {
  const int status = std::system(time_limited(std::string(FLEETSIM_EXE) + " check " +
                                              file.string() + " > /dev/null 2> " + err.string())
                                     .c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(err)};
}

/// One node played by a federate: its name and what it does.
struct FederatePlay {
  std::string name;
  std::function<void(Federate&)> play;
};

/// Runs federation `file`: the nodes `builtin` in threads, each of `federates` in a thread of
/// its own (the first in this thread), every node on `transport` (shm, or ZeroMQ over ipc)
/// with `jitter_us`, traces in `traces`, all with run id `run_id`. Expects every node to finish
/// normally; returns the federation read (nothing when it has errors). `node_program`: the
/// fleetsim executable a swarm node with processes="N" starts its processes with.
inline std::optional<federation::Federation> run_federates(
    const std::string& file, const std::vector<std::string>& builtin,
    const std::vector<FederatePlay>& federates, const std::filesystem::path& traces,
    std::uint32_t jitter_us, const std::string& transport, std::uint64_t run_id = 0,
    const std::string& node_program = "") {
  // Socket paths must be short (108 bytes): a fresh directory under /tmp.
  char tmpl[] = "/tmp/fleetsim-fed-XXXXXX";
  if (!mkdtemp(tmpl)) {
    ADD_FAILURE() << "mkdtemp failed";
    return std::nullopt;
  }
  const std::filesystem::path ipc = tmpl;
  Diagnostics d;
  auto fed = federation::load_federation(file, d);
  EXPECT_TRUE(fed) << d.str();
  if (!fed) return std::nullopt;
  federation::assign_ipc_endpoints(*fed, ipc.string());
  federation::RunOptions o;
  o.trace_dir = traces.string();
  o.jitter_us = jitter_us;
  o.quiet = true;
  o.transport = transport;
  o.run_id = run_id;
  o.node_program = node_program;
  std::vector<std::thread> peers;
  std::vector<int> status(builtin.size(), -1);
  for (std::size_t k = 0; k < builtin.size(); ++k)
    peers.emplace_back([&, k] { status[k] = federation::run_node_process(*fed, builtin[k], o); });
  auto join = [&](const FederatePlay& f) {
    try {
      FederateOptions fo;
      fo.ipc_dir = ipc.string();
      fo.trace_dir = traces.string();
      fo.jitter_us = jitter_us;
      fo.quiet = true;
      fo.transport = transport;
      fo.run_id = run_id;
      Federate me(file, f.name, fo);
      f.play(me);
      me.resign();
    } catch (const std::exception& e) {
      ADD_FAILURE() << f.name << ": " << e.what();
    }
  };
  for (std::size_t k = 1; k < federates.size(); ++k)
    peers.emplace_back([&, k] { join(federates[k]); });
  if (!federates.empty()) join(federates.front());
  for (auto& t : peers) t.join();
  EXPECT_EQ(status, std::vector<int>(builtin.size(), 0));
  std::filesystem::remove_all(ipc);
  return fed;
}

/// run_federates with one federate, node `federate`, playing `play` in this thread.
inline std::optional<federation::Federation> run_federate(
    const std::string& file, const std::vector<std::string>& builtin, const std::string& federate,
    const std::filesystem::path& traces, const std::function<void(Federate&)>& play,
    std::uint32_t jitter_us, const std::string& transport) {
  return run_federates(file, builtin, {{federate, play}}, traces, jitter_us, transport);
}

/// Runs node "swarm" of federation `path` in a thread over shared memory, and node "pilot",
/// played by `pilot`, in this one; returns the swarm node's result (its failure shows at the
/// pilot as a lost peer, which is not reported). `node_program`: as for run_federates.
inline federation::NodeResult run_swarm_and_pilot(const std::string& path,
                                                  const std::function<void(Federate&)>& pilot,
                                                  const std::string& node_program = "") {
  char tmpl[] = "/tmp/fleetsim-fed-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  Diagnostics d;
  auto fed = federation::load_federation(path, d);
  EXPECT_TRUE(fed) << d.str();
  if (!fed) return {};
  federation::assign_ipc_endpoints(*fed, tmpl);
  federation::RunOptions o;
  o.quiet = true;
  o.node_program = node_program;
  federation::NodeResult result;
  std::thread swarm([&] {
    federation::NodeRun r(*fed, fed->index_of("swarm"), o);
    try {
      auto port = transport::make_shm_port(fed->layout(), "swarm", r.port_options());
      result = r.run(*port);
    } catch (const std::exception& e) {
      result.error = e.what();
    }
  });
  try {
    FederateOptions fo;
    fo.ipc_dir = tmpl;
    fo.quiet = true;
    Federate me(path, "pilot", fo);
    pilot(me);
  } catch (const std::exception&) {
  }
  swarm.join();
  std::filesystem::remove_all(tmpl);
  return result;
}

/// Runs `fleetsim` with `arguments` (time-limited), its stderr into `err`; its exit status
/// (-1 when it did not exit).
inline int run_fleetsim(const std::string& arguments, const std::filesystem::path& err) {
  const std::string cmd =
      time_limited(std::string(FLEETSIM_EXE) + " " + arguments) + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The traces that `nodes` wrote in `traces` conform: the four rules, the lookahead, every
/// message (nulls too) consumed.
inline void expect_conformant_traces(const federation::Federation& fed,
                                     const std::filesystem::path& traces,
                                     const std::vector<std::string>& nodes) {
  std::map<std::string, std::vector<time::TraceEvent>> events;
  for (const auto& n : nodes) {
    std::string error;
    ASSERT_TRUE(time::read_trace((traces / (n + ".trace")).string(), events[n], error)) << error;
  }
  const auto bad = time::check_traces(fed.layout(), events);
  EXPECT_TRUE(bad.empty()) << bad.front();
}

}  // namespace fleetsim::testing
