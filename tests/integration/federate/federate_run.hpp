// What the federate tests share: a federation run with its built-in nodes in threads and one
// node played, in the test's own thread, by a federate.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "federation/launcher.hpp"
#include "fleetsim/federate.hpp"

namespace fleetsim::testing {

/// Runs federation `file`: the nodes `builtin` in threads, `play` as node `federate` in this
/// thread, every node on `transport` (shm, or ZeroMQ over ipc) with `jitter_us`, traces in
/// `traces`. Expects every node to finish normally; returns the federation read (nothing
/// when it has errors).
inline std::optional<federation::Federation> run_federate(
    const std::string& file, const std::vector<std::string>& builtin, const std::string& federate,
    const std::filesystem::path& traces, const std::function<void(Federate&)>& play,
    std::uint32_t jitter_us, const std::string& transport) {
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
  std::vector<std::thread> peers;
  std::vector<int> status(builtin.size(), -1);
  for (std::size_t k = 0; k < builtin.size(); ++k)
    peers.emplace_back([&, k] { status[k] = federation::run_node_process(*fed, builtin[k], o); });
  try {
    FederateOptions fo;
    fo.ipc_dir = ipc.string();
    fo.trace_dir = traces.string();
    fo.jitter_us = jitter_us;
    fo.quiet = true;
    fo.transport = transport;
    Federate me(file, federate, fo);
    play(me);
    me.resign();
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  for (auto& t : peers) t.join();
  EXPECT_EQ(status, std::vector<int>(builtin.size(), 0));
  std::filesystem::remove_all(ipc);
  return fed;
}

}  // namespace fleetsim::testing
