#include "core/id_map.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

namespace fleetsim {
namespace {

// The paged map answers every call as the dense one does, through random inserts, updates
// and erases, and its storage follows the ids it holds, not the largest id.
TEST(IdMap, PagedAnswersAsDenseThroughRandomChanges) {
  IdMap<std::int16_t> dense(-1), paged(-1);
  paged.make_sparse([](EntityId) { return true; });
  EXPECT_TRUE(paged.sparse());
  std::map<EntityId, std::int16_t> truth;
  std::mt19937 rng(7);
  for (int step = 0; step < 200000; ++step) {
    // Ids in runs, as a process's robots are (tiles of consecutive ids), over a large range.
    const EntityId id = static_cast<EntityId>((rng() % 64) * 100000 + rng() % 40);
    const auto v = static_cast<std::int16_t>(rng() % 8);
    if (rng() % 3 < 2) {
      dense.set(id, v);
      paged.set(id, v);
      truth[id] = v;
    } else {
      dense.erase(id);
      paged.erase(id);
      truth.erase(id);
    }
    if (step % 997 == 0) {
      for (EntityId probe = 0; probe < 6400000; probe += 99991) {
        ASSERT_EQ(paged.get(probe), dense.get(probe));
      }
    }
  }
  for (const auto& [id, v] : truth) {
    ASSERT_EQ(paged.get(id), v);
    ASSERT_EQ(dense.get(id), v);
  }
  std::vector<EntityId> visited;
  paged.for_each([&](EntityId id, std::int16_t v) {
    visited.push_back(id);
    EXPECT_EQ(v, truth.at(id));
  });
  ASSERT_EQ(visited.size(), truth.size());
  EXPECT_TRUE(std::is_sorted(visited.begin(), visited.end()));
  // The dense map has a slot for each id up to the largest (6.3 million); the paged one a
  // page for each run held (64) and a directory of a pointer per 1,024 ids (which grows as a
  // vector does: up to twice its size).
  EXPECT_GT(dense.bytes(), std::size_t{6300000} * sizeof(std::int16_t));
  EXPECT_LE(paged.bytes(), 64 * 1024 * sizeof(std::int16_t) + 2 * (6400000 / 1024 + 1) * 8);
  // Once the ids of a run have no value, its page goes.
  const std::size_t before = paged.bytes();
  paged.retain([](EntityId id) { return id >= 3200000; });
  EXPECT_LE(paged.bytes(), before - 30 * 1024 * sizeof(std::int16_t));
  EXPECT_EQ(paged.get(100000 + 5), -1);
}

TEST(IdMap, RetainKeepsWhatThePredicateAcceptsAndNothingElse) {
  IdMap<std::uint32_t> m(0xffffffffu);
  for (EntityId id = 0; id < 5000; ++id) m.set(id * 3, id);
  m.make_sparse([](EntityId id) { return id % 2 == 0; });
  m.retain([](EntityId id) { return id % 4 == 0; });
  for (EntityId id = 0; id < 15000; ++id) {
    const bool kept = id % 3 == 0 && id % 4 == 0;
    ASSERT_EQ(m.find(id) != nullptr, kept) << id;
    if (kept) {
      ASSERT_EQ(m.get(id), id / 3);
    }
  }
  // The id that marks an empty slot is never found, though empty slots are everywhere.
  EXPECT_EQ(m.find(kNoEntity), nullptr);
}

TEST(IdMap, HoldsMoveOnlyValuesAndDropsThemOnErase) {
  auto alive = std::make_shared<int>(0);
  IdMap<std::unique_ptr<std::shared_ptr<int>>> m;
  m.make_sparse([](EntityId) { return true; });
  for (EntityId id = 0; id < 100; ++id) m.at(id) = std::make_unique<std::shared_ptr<int>>(alive);
  EXPECT_EQ(alive.use_count(), 101);
  for (EntityId id = 0; id < 100; id += 2) m.erase(id);
  EXPECT_EQ(alive.use_count(), 51);
  EXPECT_EQ(m.find(4), nullptr);
  ASSERT_NE(m.find(5), nullptr);
  EXPECT_EQ(**m.find(5), alive);
}

}  // namespace
}  // namespace fleetsim
