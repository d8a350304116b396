// The scenes of the swarm-message fuzzers (fuzz_swarm.cpp, fuzz_domains.cpp) and of their
// generated seeds (make_seeds.cpp), and the run both fuzzers make of process 1's messages.
// The swarm scene: two regions, robots that cross between them, two processes, and a robot
// pinned to each process by an affinity (so the rounds include the actuation). The domain
// scene: one crowded region split over two domains, with per-process loop functions (so the rounds
// include the contact rounds, reductions and the loop functions' changes) and a frame log (so
// they include the frame's blocks).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/tick_rounds.hpp"
#include "plugins/builtins.hpp"
#include "sim/distribution.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::fuzz {

inline const char* kSwarmScene = R"(<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="1" seed="5"/>
  <controllers><controller id="walk" type="random_walk" speed="0.3" turn_probability="0.3"/></controllers>
  <arena size="2,1">
    <distribute count="8" kind="epuck" controller="walk" id_prefix="w"/>
  </arena>
  <physics>
    <kinematics2d id="west" region="-1,-0.5,0,0.5"/>
    <kinematics2d id="east" region="0,-0.5,1,0.5"/>
  </physics>
  <distribution>
    <process regions="west" robots="w1"/>
    <process regions="east" robots="w2"/>
  </distribution>
</fleetsim>)";

inline const char* kDomainScene = R"(<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="3" seed="8"/>
  <controllers><controller id="walk" type="random_walk" speed="0.5" turn_probability="0.3"/></controllers>
  <arena size="1,1">
    <distribute count="60" kind="epuck" controller="walk" id_prefix="w"/>
  </arena>
  <loop_functions type="tag_on_contact"/>
</fleetsim>)";

/// Which scene a run is of.
enum class Scene { kSwarm, kDomains };

/// What the scene's process `p` loads it with: the domain scene writes a frame log, on process
/// 0 (in a file of its own in the temporary directory), so that its rounds carry the frame's
/// blocks (docs/distributed.md, "The log on several processes").
inline ExperimentOverrides overrides_of(Scene scene, int p) {
  ExperimentOverrides ov;
  if (scene == Scene::kDomains)
    ov.log_path =
        (std::filesystem::temp_directory_path() /
         ("fleetsim-fuzz-domains-" + std::to_string(getpid()) + "-" + std::to_string(p) + ".flog"))
            .string();
  return ov;
}

/// Process p's share of a two-process run of `scene`: the swarm scene's regions as its
/// <distribution> says, or the domain scene's arena in two domains (as `assign` makes them),
/// partitioned.
inline Distribution share_of(Scene scene, const Experiment& ex, int p, Exchange* exchange,
                             std::size_t part_bytes) {
  Distribution dist;
  dist.process = p;
  dist.processes = 2;
  if (scene == Scene::kSwarm) {
    dist.engine_process = {0, 1};
  } else {
    dist.engine_process = {-1};
    std::vector<Vec2> points;
    for (std::size_t i = 0; i < ex.state.robot_count(); ++i)
      points.push_back({ex.state.x()[i], ex.state.y()[i]});
    dist.domains = Domains::bisect(points, ex.model->arena_min(), ex.model->arena_max(), 2);
  }
  dist.kind_process = ex.kind_affinity;
  dist.robot_process = ex.robot_affinity;
  // The domain scene's processes hold only their part (docs/distributed.md, "What a process
  // holds"): robots arrive by id, in handoffs and border moves, and are dropped again.
  dist.partition_storage = scene == Scene::kDomains;
  dist.exchange = exchange;
  dist.make_rounds = distributed::make_tick_rounds;
  dist.part_bytes = part_bytes;
  return dist;
}

/// The fuzzer's input: the messages process 1 sends in rounds 1, 2, ... (round 0, the start,
/// is process 0's own), each as u32 length (little-endian) then the bytes.
inline void append_round(std::vector<std::uint8_t>& input, const std::vector<std::uint8_t>& m) {
  const auto n = static_cast<std::uint32_t>(m.size());
  const auto* b = reinterpret_cast<const std::uint8_t*>(&n);
  input.insert(input.end(), b, b + 4);
  input.insert(input.end(), m.begin(), m.end());
}

/// Two processes as two threads: every all_gather waits for the other (for the seeds).
class PairExchange final : public Exchange {
 public:
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::uint8_t> slot[2];
    std::uint64_t posted[2] = {0, 0}, read[2] = {0, 0};  ///< rounds posted / read, by process
    std::vector<std::uint8_t> recorded;  ///< process 1's messages from round 1 on, framed
  };
  PairExchange(Shared& s, int me) : s_(s), me_(me) {}
  std::vector<std::vector<std::uint8_t>> all_gather(std::vector<std::uint8_t> mine, bool) override {
    const int other = 1 - me_;
    std::unique_lock lock(s_.mutex);
    // My slot is free once the other process read my previous message.
    s_.changed.wait(lock, [&] { return s_.read[other] >= round_; });
    if (me_ == 1 && round_ > 0) append_round(s_.recorded, mine);
    s_.slot[me_] = mine;
    s_.posted[me_] = round_ + 1;
    s_.changed.notify_all();
    s_.changed.wait(lock, [&] { return s_.posted[other] >= round_ + 1; });
    std::vector<std::vector<std::uint8_t>> all(2);
    all[me_] = std::move(mine);
    all[other] = s_.slot[other];
    s_.read[me_] = ++round_;
    s_.changed.notify_all();
    return all;
  }

 private:
  Shared& s_;
  int me_;
  std::uint64_t round_ = 0;
};

/// Process 1's messages from the fuzzer's input (round 0, the start, is process 0's own).
class FedExchange final : public Exchange {
 public:
  FedExchange(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::vector<std::vector<std::uint8_t>> all_gather(std::vector<std::uint8_t> mine, bool) override {
    std::vector<std::vector<std::uint8_t>> all(2);
    if (round_++ == 0) {
      all[1] = mine;  // the start: the same world
    } else {
      if (end_ - p_ < 4) throw std::runtime_error("process 1 left");
      std::uint32_t n;
      std::memcpy(&n, p_, 4);
      p_ += 4;
      n = static_cast<std::uint32_t>(std::min<std::size_t>(n, static_cast<std::size_t>(end_ - p_)));
      all[1].assign(p_, p_ + n);
      p_ += n;
    }
    all[0] = std::move(mine);
    return all;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  int round_ = 0;
};

/// One fuzzer input: process 0 of a two-process run of `scene` with process 1's messages from
/// `data`. They apply, or stop the run with an error naming process 1 or the tick; anything
/// else (a crash, a sanitizer's report, an error naming neither) aborts.
inline int run_process_0(Scene scene, const std::uint8_t* data, std::size_t size) {
  static PluginRegistry* registry = [] {
    auto* r = new PluginRegistry;
    register_builtins(*r);
    return r;
  }();
  Diagnostics d;
  const char* xml = scene == Scene::kSwarm ? kSwarmScene : kDomainScene;
  const ExperimentOverrides ov = overrides_of(scene, 0);
  auto ex = parse_experiment(xml, "swarm.xml", *registry, ov, d);
  if (!ex) {
    std::fprintf(stderr, "fuzz: the scene does not load:\n%s", d.str().c_str());
    std::abort();
  }
  FedExchange exchange(data, size);
  Distribution dist = share_of(scene, *ex, 0, &exchange, 256);  // rounds in parts too
  try {
    Simulation sim(std::move(*ex), *registry, dist);
    sim.start();
    while (!sim.done()) sim.step();
    sim.gather_state();
    sim.finish();
  } catch (const RunError& e) {
    const std::string what = e.what();
    if (what.find("process 1") == std::string::npos && what.find("tick") == std::string::npos) {
      std::fprintf(stderr, "fuzz: an error that names neither the process nor the tick: %s\n",
                   what.c_str());
      std::abort();
    }
  } catch (const std::runtime_error&) {  // the input ran out: "process 1 left"
  }
  if (ov.log_path) {
    std::error_code ec;
    std::filesystem::remove(*ov.log_path, ec);
  }
  return 0;
}

}  // namespace fleetsim::fuzz
