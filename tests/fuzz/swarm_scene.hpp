// The scene of the swarm-message fuzzer (fuzz_swarm.cpp) and of its generated seeds
// (make_seeds.cpp): two regions, robots that cross between them, two processes, and a robot
// pinned to each process by an affinity (so the rounds include the actuation).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "sim/distribution.hpp"

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

}  // namespace fleetsim::fuzz
