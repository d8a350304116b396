// WorldState::hash(): what a determinism check relies on. It must see any change of any robot,
// and a world split over processes (each holding some robots, every one of them the newest row
// somewhere) must give the hash of the whole world held by one process.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "world/world.hpp"

namespace fleetsim {
namespace {

WorldState world(int robots) {
  WorldState s;
  s.tick = 42;
  s.status = "running";
  for (int i = 0; i < robots; ++i)
    s.add_robot(1, 0, {0.1 * i, 0.2 * i}, 0.01 * i, 0, "r" + std::to_string(i));
  return s;
}

TEST(WorldHash, SeesAnyChangeOfAnyRobot) {
  const WorldState a = world(50);
  const std::uint64_t h = a.hash();
  EXPECT_EQ(world(50).hash(), h) << "the same world, the same hash";
  WorldState b = world(50);
  b.x()[17] += 1e-12;
  EXPECT_NE(b.hash(), h) << "one robot moved by a picometre";
  WorldState c = world(50);
  std::swap(c.x()[3], c.x()[4]);
  std::swap(c.y()[3], c.y()[4]);
  std::swap(c.theta()[3], c.theta()[4]);
  EXPECT_NE(c.hash(), h) << "two robots traded places: each robot's row is keyed by its id";
  WorldState d = world(50);
  d.tick = 43;
  EXPECT_NE(d.hash(), h);
  EXPECT_NE(world(49).hash(), world(50).hash());
}

TEST(WorldHash, AWorldSplitOverProcessesHashesAsTheWhole) {
  const WorldState whole = world(300);
  // Three "processes": process p holds the robots with id % 3 == p as its own, plus ghost
  // copies (here stale ones) of a few others', which it leaves out of its sums.
  std::vector<std::uint64_t> sums(whole.robots.schema().size(), 0);
  std::size_t total = 0;
  for (int p = 0; p < 3; ++p) {
    WorldState part = world(300);
    std::vector<std::uint8_t> take(300);
    for (int i = 0; i < 300; ++i) {
      take[i] = i % 3 == p;
      if (!take[i]) part.x()[i] = -1.0;  // a ghost, out of date
      total += take[i];
    }
    const auto own = part.robot_digests(take);
    for (std::size_t c = 0; c < sums.size(); ++c) sums[c] += own[c];
  }
  EXPECT_EQ(total, 300u);
  EXPECT_EQ(whole.hash_with(total, sums), whole.hash());
  // A robot counted twice, or left out, is not the whole world.
  const auto again = whole.robot_digests();
  std::vector<std::uint64_t> twice(sums);
  for (std::size_t c = 0; c < sums.size(); ++c) twice[c] += again[c];
  EXPECT_NE(whole.hash_with(total, twice), whole.hash());
  EXPECT_NE(whole.hash_with(total - 1, sums), whole.hash());
}

}  // namespace
}  // namespace fleetsim
