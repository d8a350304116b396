// The spatial index against brute force on random scenes: every neighbour query and every ray
// must give exactly what a scan over all robots and all segments gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "fleetsim/random.hpp"
#include "physics/spatial_grid.hpp"
#include "robots/proximity_sensor.hpp"
#include "scene.hpp"

namespace fleetsim::testing {
namespace {

// Proximity range per kind (the big kind's sensor reaches further).
double range_of(const RobotKind& k) {
  return k.name == "big" ? 0.25 : 0.1;
}

// A random scene: robots anywhere (overlaps allowed: the index must not care), a few random
// walls, random headings, and two kinds of radius if `mixed` (else only e-pucks: the AVX2
// kernel then gathers the robots within reach four at a time).
void fill_random(Scene& s, std::uint64_t seed, int robots, double size, bool mixed = true) {
  RobotKind big = epuck_kind();
  big.name = "big";
  big.radius_m = 0.09;
  big.in_run = mixed;
  s.model->kinds.push_back(big);
  CounterRng rng(seed, 0, 0, RandomStream::kPlacement);
  const double h = size / 2;
  for (int w = 0; w < 12; ++w) {
    Vec2 a{rng.uniform(-h, h), rng.uniform(-h, h)};
    Vec2 b = a + Vec2{rng.uniform(-1, 1), rng.uniform(-1, 1)};
    s.model->segments.push_back({a, b});
  }
  for (int i = 0; i < robots; ++i) {
    auto kind = static_cast<std::uint16_t>(rng.below(5) == 0 && mixed ? 1 : 0);
    s.state.add_robot(kind, 0, {rng.uniform(-h, h), rng.uniform(-h, h)}, rng.uniform(-kPi, kPi), 0,
                      "r");
  }
  s.index.init(*s.model, 0, 0.25);
  s.index.rebuild(*s.model, s.state, s.pool);
}

// Brute force: every robot and every segment against each of robot i's rays, in the sensor's
// arithmetic (ray_circle_hit, float) or, with `exact`, in double precision (ray_circle).
std::vector<float> brute_force_proximity(const Scene& s, std::size_t i, bool exact = false) {
  const RobotKind& kind = s.model->kinds[s.state.robot_kind()[i]];
  const double range = range_of(kind), r = kind.radius_m;
  std::vector<float> out(kEpuckRays, 0.0f);
  const Vec2 p{s.state.x()[i], s.state.y()[i]};
  float ux[kEpuckRays], uy[kEpuckRays];
  ray_directions(s.state.theta()[i], epuck_rays(), ux, uy);
  const double ct = std::cos(s.state.theta()[i]), st = std::sin(s.state.theta()[i]);
  for (int k = 0; k < kEpuckRays; ++k) {
    const double c = std::cos(kEpuckProximityAngles[k]), sn = std::sin(kEpuckProximityAngles[k]);
    const Vec2 u = exact ? Vec2{ct * c - st * sn, st * c + ct * sn} : Vec2{ux[k], uy[k]};
    const Vec2 o = p + u * r;
    double best = range;
    for (std::size_t j = 0; j < s.state.robot_count(); ++j) {
      if (j == i) continue;
      const double rj = s.model->kinds[s.state.robot_kind()[j]].radius_m;
      const double dx = s.state.x()[j] - p.x, dy = s.state.y()[j] - p.y;
      double t;
      if (exact) {
        t = ray_circle(o, u, best, {s.state.x()[j], s.state.y()[j]}, rj);
      } else {
        const float v = ray_circle_hit(static_cast<float>(dx), static_cast<float>(dy), ux[k], uy[k],
                                       static_cast<float>(r), static_cast<float>(rj));
        t = v == kRayMiss ? -1.0 : v;
      }
      if (t >= 0 && t < best) best = exact ? t : static_cast<float>(t);
    }
    for (const Segment& sg : s.model->segments) {
      double t = ray_segment(o, u, best, sg);
      if (t >= 0 && t < best) best = exact ? t : static_cast<float>(t);
    }
    const float rf = static_cast<float>(range), bf = static_cast<float>(best);
    out[static_cast<std::size_t>(k)] =
        exact ? (best < range ? static_cast<float>(1.0 - best / range) : 0.0f)
              : (bf < rf ? 1.0f - bf / rf : 0.0f);
  }
  return out;
}

TEST(SpatialGrid, RaysMatchBruteForceOnRandomScenes) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    // Dense enough that most rays hit something (~25 % of the floor covered).
    Scene s(4.0, seed % 2 ? 1 : 2);
    fill_random(s, seed, 1500, 4.0, seed <= 5);
    int hits = 0;
    for (std::size_t i = 0; i < s.state.robot_count(); ++i) {
      std::vector<float> grid(kEpuckRays), slot(kEpuckRays);
      const RobotKind& k = s.model->kinds[s.state.robot_kind()[i]];
      read_proximity(s.state, s.index, i, k.radius_m, range_of(k), epuck_rays(), grid.data());
      auto expected = brute_force_proximity(s, i);
      // Bit for bit: the grid only removes candidates that cannot be hit.
      ASSERT_EQ(grid, expected) << "seed " << seed << ", robot " << i;
      // And single precision is close to the exact geometry: within 2e-5 of a reading (two
      // micrometres of distance at the e-puck's 0.1 m range; the worst of these scenes is
      // 1.05e-5, a ray grazing a robot).
      auto exact = brute_force_proximity(s, i, true);
      for (int ray = 0; ray < kEpuckRays; ++ray)
        ASSERT_NEAR(grid[ray], exact[ray], 2e-5)
            << "seed " << seed << ", robot " << i << ", ray " << ray;
      for (float v : grid) hits += v > 0;
    }
    // The hot path (slot order) reads the same values, with the baseline (SSE2) kernel and
    // with the AVX2 one (when this processor has it).
    const auto& order = s.index.robots.order();
    const SimdPath before = simd_path();
    for (SimdPath path : {SimdPath::kBaseline, SimdPath::kAvx2}) {
      if (set_simd_path(path) != path) continue;  // no AVX2 here: the baseline was checked
      for (std::uint32_t slot = 0; slot < order.size(); ++slot) {
        std::vector<float> a(kEpuckRays), b(kEpuckRays);
        const RobotKind& k = s.model->kinds[s.state.robot_kind()[order[slot]]];
        read_proximity_slot(s.state, s.index, slot, k.radius_m, range_of(k), epuck_rays(),
                            a.data());
        set_simd_path(SimdPath::kBaseline);
        read_proximity(s.state, s.index, order[slot], k.radius_m, range_of(k), epuck_rays(),
                       b.data());
        set_simd_path(path);
        ASSERT_EQ(a, b) << "seed " << seed << ", slot " << slot << ", path "
                        << static_cast<int>(path);
      }
    }
    set_simd_path(before);
    EXPECT_GT(hits, 1000) << "the scene should make rays hit";
  }
}

// The response curve and the noise are applied inside the cast, where the readings are
// produced: each reading is the scalar curve of the linear reading, plus the generator's draws
// for that robot and tick, the same on the baseline and AVX2 kernels, for 8 rays (the
// e-puck's), 24 (the foot-bot's) and a count known only at run time (5).
TEST(SpatialGrid, ResponseAndNoiseAreAppliedInTheCastOnEveryPath) {
  Scene s(4.0, 1);
  fill_random(s, 3, 1500, 4.0, false);
  std::vector<RayLayout> layouts(3);
  layouts[0] = epuck_rays();
  for (int n : {24, 5}) {
    RayLayout& l = layouts[n == 24 ? 1 : 2];
    for (int k = 0; k < n; ++k) {
      const double a = (k + 0.5) * 2 * kPi / n;
      l.cos.push_back(std::cos(a));
      l.sin.push_back(std::sin(a));
    }
  }
  const auto& order = s.index.robots.order();
  const SimdPath before = simd_path();
  int curved = 0, noisy = 0;
  for (const RayLayout& layout : layouts) {
    const std::size_t n = layout.count();
    for (ProximityResponse response : {ProximityResponse::kFootbot, ProximityResponse::kEpuck}) {
      for (double level : {0.0, 0.05}) {
        for (double sd : {0.0, 0.02}) {
          for (std::uint32_t slot = 0; slot < order.size(); slot += 7) {
            const EntityId id = order[slot] + 100;
            const ProximityReadingModel model{response, level, sd, 42, id, 9};
            std::vector<float> linear(n), base(n), fast(n);
            set_simd_path(SimdPath::kBaseline);
            read_proximity_slot(s.state, s.index, slot, 0.035, 0.1, layout, linear.data());
            read_proximity_slot(s.state, s.index, slot, 0.035, 0.1, layout, base.data(), nullptr, 0,
                                model);
            // The expected readings, from the scalar curve and the generator's streams.
            std::vector<float> expected(n);
            CounterRng uniform(42, id, 9, RandomStream::kProximityNoise);
            CounterRng gauss(42, id, 9, RandomStream::kSensorNoise);
            for (std::size_t k = 0; k < n; ++k)
              expected[k] = proximity_response(response, linear[k], 0.1);
            for (std::size_t k = 0; level > 0 && k < n; ++k)
              expected[k] = static_cast<float>(
                  std::clamp(expected[k] + uniform.uniform(-level, level), 0.0, 1.0));
            for (std::size_t k = 0; sd > 0 && k < n; ++k)
              expected[k] =
                  static_cast<float>(std::clamp(expected[k] + sd * gauss.normal(), 0.0, 1.0));
            ASSERT_EQ(base, expected) << "slot " << slot << ", " << n << " rays";
            for (std::size_t k = 0; k < n; ++k) {
              curved += linear[k] > 0 && level == 0 && sd == 0 && base[k] != linear[k];
              noisy += linear[k] == 0 && base[k] > 0;
            }
            if (set_simd_path(SimdPath::kAvx2) != SimdPath::kAvx2) continue;
            read_proximity_slot(s.state, s.index, slot, 0.035, 0.1, layout, fast.data(), nullptr, 0,
                                model);
            ASSERT_EQ(fast, base) << "slot " << slot << ", " << n << " rays (AVX2)";
          }
        }
      }
    }
  }
  set_simd_path(before);
  EXPECT_GT(curved, 500) << "the scene should give readings the curves change";
  EXPECT_GT(noisy, 500) << "noise should lift rays that see nothing";
}

// ARGoS's e-puck curve reads 0 beyond 5 cm, so the cast looks no farther than
// proximity_seen_range: each reading must still be the curve of the reading over the whole
// range, bit for bit, for a robot or a wall at every gap around the cut (a cut too short would
// zero readings the curve keeps: the curve is positive up to ~4.8 cm), on both kernels and at
// ranges where the cut's margin matters.
TEST(SpatialGrid, TheEPuckCurveCutsTheSearchWithoutChangingAReading) {
  const SimdPath before = simd_path();
  int positive = 0, compared = 0;
  for (double range : {0.1, 0.3, 2.0}) {
    const double seen = proximity_seen_range(ProximityResponse::kEpuck, range);
    EXPECT_LT(seen, range);
    EXPECT_GT(seen, 0.05);
    EXPECT_EQ(proximity_seen_range(ProximityResponse::kLinear, range), range);
    EXPECT_EQ(proximity_seen_range(ProximityResponse::kFootbot, range), range);
    for (bool wall : {false, true}) {
      for (int step = 0; step < 400; ++step) {
        // Gaps from 4 cm to 6 cm from the body's surface, finest around the cut.
        const double gap = step < 200 ? 0.04 + step * 1e-4 : seen - 1e-6 + (step - 200) * 1e-8;
        Scene s(4.0, 1);
        const double x = 0.035 + gap;
        if (wall) {
          s.model->segments.push_back({{x, -1}, {x, 1}});
        } else {
          s.add(x + 0.035, 0.001 * (step % 7), 0);  // (off the axis by up to 6 mm)
        }
        s.add(0, 0, -kEpuckProximityAngles[0]);  // sensor 0 points along +x
        s.index.init(*s.model, 0, range);
        s.index.rebuild(*s.model, s.state, s.pool);
        const std::uint32_t slot = static_cast<std::uint32_t>(
            std::find(s.index.robots.order().begin(), s.index.robots.order().end(),
                      s.state.robot_count() - 1) -
            s.index.robots.order().begin());
        const ProximityReadingModel model{ProximityResponse::kEpuck, 0, 0, 1, 1, 0};
        for (SimdPath path : {SimdPath::kBaseline, SimdPath::kAvx2}) {
          if (set_simd_path(path) != path) continue;
          std::vector<float> linear(kEpuckRays), curved(kEpuckRays);
          read_proximity_slot(s.state, s.index, slot, 0.035, range, epuck_rays(), linear.data());
          read_proximity_slot(s.state, s.index, slot, 0.035, range, epuck_rays(), curved.data(),
                              nullptr, 0, model);
          for (int k = 0; k < kEpuckRays; ++k) {
            const float expected = proximity_response(ProximityResponse::kEpuck, linear[k], range);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(curved[k]),
                      std::bit_cast<std::uint32_t>(expected))
                << "range " << range << ", gap " << gap << ", ray " << k << (wall ? ", wall" : "");
            positive += curved[k] > 0;
            compared += linear[k] > 0;
          }
        }
      }
    }
  }
  set_simd_path(before);
  EXPECT_GT(positive, 100) << "the nearer gaps should read non-zero";
  EXPECT_GT(compared, 1000) << "the farther gaps should be within the linear range";
}

// The obstacle grid's line test (walls between robots for the range-and-bearing and the
// camera) walks only the cells a line crosses, row by row, and skips blocks of cells without a
// segment: it must answer as a scan of every segment does, for lines inside the grid, leaving
// it, level, upright and long, over sparse and dense walls. So must the sensors' shortcut (the
// walls near a robot, then each line against those).
TEST(SpatialGrid, ALineIsBlockedExactlyWhenItCrossesASegment) {
  auto side = [](Vec2 p, Vec2 q, Vec2 r) {
    const double v = (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
    return (v > 0) - (v < 0);
  };
  auto crosses = [&](Vec2 a, Vec2 b, const Segment& s) {
    return side(a, b, s.a) * side(a, b, s.b) < 0 && side(s.a, s.b, a) * side(s.a, s.b, b) < 0;
  };
  int blocked = 0, clear = 0;
  std::vector<std::uint32_t> near;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    CounterRng rng(seed, 0, 0, RandomStream::kPlacement);
    std::vector<Segment> walls;
    const int count = seed % 2 ? 6 : 200;
    for (int w = 0; w < count; ++w) {
      const Vec2 a{rng.uniform(-17, 17), rng.uniform(-17, 17)};  // (walls inside the grid)
      walls.push_back({a, a + Vec2{rng.uniform(-2, 2), rng.uniform(-2, 2)}});
    }
    SegmentGrid grid;
    grid.build(walls, {-20, -20}, {20, 20}, 0.17, 0.1);
    for (int k = 0; k < 4000; ++k) {
      const Vec2 a{rng.uniform(-22, 22), rng.uniform(-22, 22)};
      const double len = k % 4 == 0 ? 15.0 : 3.0;
      Vec2 b = a + Vec2{rng.uniform(-len, len), rng.uniform(-len, len)};
      if (k % 10 == 1) b.y = a.y;  // level
      if (k % 10 == 2) b.x = a.x;  // upright
      bool expected = false;
      for (const Segment& w : walls) expected = expected || crosses(a, b, w);
      ASSERT_EQ(grid.blocks(a, b), expected) << "seed " << seed << ", line " << k;
      // The sensors' shortcut: the walls near the line's start, listed once, hold every wall
      // the line crosses.
      grid.near_point(a, length(b - a), near);
      ASSERT_EQ(grid.crosses_any(a, b, near), expected) << "seed " << seed << ", line " << k;
      if (expected) {
        EXPECT_TRUE(grid.any_near_square(a, std::max(std::abs(b.x - a.x), std::abs(b.y - a.y))));
        ++blocked;
      } else {
        ++clear;
      }
    }
  }
  EXPECT_GT(blocked, 1000);
  EXPECT_GT(clear, 1000);
}

TEST(SpatialGrid, NeighbourQueriesHoldEveryRobotWithinReach) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Scene s(5.0, 2);
    fill_random(s, seed, 2000, 5.0);
    const RobotGrid& g = s.index.robots;
    const auto& order = g.order();
    // The index is a permutation, and its sorted copies match the robots they stand for.
    std::vector<std::uint32_t> sorted(order.begin(), order.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::uint32_t k = 0; k < sorted.size(); ++k) ASSERT_EQ(sorted[k], k);
    for (std::size_t slot = 0; slot < order.size(); ++slot) {
      ASSERT_EQ(g.sorted_x()[slot], s.state.x()[order[slot]]);
      ASSERT_EQ(g.sorted_y()[slot], s.state.y()[order[slot]]);
    }
    CounterRng rng(seed, 1, 0, RandomStream::kPlacement);
    // The 3x3 block holds every robot within a contact's distance (the grid's cell size).
    const double reach = s.index.contact_m;
    for (int q = 0; q < 500; ++q) {
      // Query points inside and a little outside the arena (clamped to the border cells).
      Vec2 p{rng.uniform(-2.7, 2.7), rng.uniform(-2.7, 2.7)};
      std::vector<std::uint32_t> visited;
      g.for_each_near(p, [&](std::uint32_t slot) { visited.push_back(slot); });
      // Each slot at most once, in increasing order (the fixed order results rely on).
      ASSERT_TRUE(std::is_sorted(visited.begin(), visited.end()));
      ASSERT_EQ(std::adjacent_find(visited.begin(), visited.end()), visited.end());
      std::set<std::uint32_t> near;
      for (auto slot : visited) near.insert(order[slot]);
      for (std::size_t j = 0; j < s.state.robot_count(); ++j) {
        Vec2 d = Vec2{s.state.x()[j], s.state.y()[j]} - p;
        if (dot(d, d) <= reach * reach) {
          ASSERT_TRUE(near.count(static_cast<std::uint32_t>(j)))
              << "robot " << j << " within " << reach << " m of the query is missing";
        }
      }
    }
    // A longer query (the rays' reach) reads the block its reach needs: every robot within it.
    for (int q = 0; q < 500; ++q) {
      Vec2 p{rng.uniform(-2.7, 2.7), rng.uniform(-2.7, 2.7)};
      const double far = s.index.interaction_m;
      std::uint32_t rb[16], re[16];
      const int runs = g.runs_within(p, far, rb, re, 16);
      ASSERT_GE(runs, 1);
      std::set<std::uint32_t> near;
      for (int k = 0; k < runs; ++k)
        for (std::uint32_t slot = rb[k]; slot < re[k]; ++slot) near.insert(order[slot]);
      for (std::size_t j = 0; j < s.state.robot_count(); ++j) {
        Vec2 d = Vec2{s.state.x()[j], s.state.y()[j]} - p;
        if (dot(d, d) <= far * far) {
          ASSERT_TRUE(near.count(static_cast<std::uint32_t>(j))) << "robot " << j;
        }
      }
      if (runs > 2) {
        EXPECT_EQ(g.runs_within(p, far, rb, re, 2), -1) << "more rows than the caller holds";
      }
    }
    // Static segments: every segment within the index's reach of a point is listed there.
    const auto& segs = s.index.segments.segments();
    for (int q = 0; q < 2000; ++q) {
      Vec2 p{rng.uniform(-2.5, 2.5), rng.uniform(-2.5, 2.5)};
      auto listed = s.index.segments.near(p);
      std::set<std::uint32_t> set(listed.begin(), listed.end());
      const double seg_reach = 0.09 + 0.25;  // the largest radius + range in the scene
      for (std::uint32_t k = 0; k < segs.size(); ++k) {
        if (distance_to_segment(p, segs[k]) > seg_reach) continue;
        ASSERT_TRUE(set.count(k)) << "segment " << k << " near " << p.x << "," << p.y;
      }
    }
  }
}

TEST(SpatialGrid, RebuildIsTheSameForAnyThreadCount) {
  Scene a(6.0, 1), b(6.0, 2);
  fill_random(a, 9, 3000, 6.0);
  fill_random(b, 9, 3000, 6.0);
  EXPECT_EQ(a.index.robots.order(), b.index.robots.order());
  EXPECT_EQ(a.index.robots.sorted_x(), b.index.robots.sorted_x());
}

// A process of a partitioned run appends the robots it takes in, so its rows are not in id
// order; the grid then lists each cell's robots by id, exactly as over the same robots with rows
// in id order: every query visits robots in the same order (docs/distributed.md, "What a
// process holds").
TEST(SpatialGrid, RowsOutOfIdOrderAreListedInIdOrderInEveryCell) {
  CounterRng rng(21, 0, 0, RandomStream::kPlacement);
  const std::size_t n = 5000;
  std::vector<double> x(n), y(n);
  std::vector<std::uint16_t> kind(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = rng.uniform(-3, 3);  // about 2 robots a cell of 0.1 m: many cells hold several
    y[i] = rng.uniform(-3, 3);
  }
  // Rows in another order: robot (id) k at row perm[k].
  std::vector<std::uint32_t> perm(n);
  for (std::size_t k = 0; k < n; ++k) perm[k] = static_cast<std::uint32_t>(k);
  for (std::size_t k = n - 1; k > 0; --k) std::swap(perm[k], perm[rng.below(k + 1)]);
  std::vector<double> px(n), py(n);
  std::vector<std::uint16_t> pk(n, 0);
  std::vector<std::uint32_t> ids(n);
  for (std::size_t k = 0; k < n; ++k) {
    px[perm[k]] = x[k];
    py[perm[k]] = y[k];
    ids[perm[k]] = static_cast<std::uint32_t>(k);
  }
  ThreadPool pool(2);
  RobotGrid sorted, shuffled;
  sorted.configure({-3, -3}, {3, 3}, 0.1, {0.035});
  shuffled.configure({-3, -3}, {3, 3}, 0.1, {0.035});
  sorted.rebuild(x, y, kind, pool);
  shuffled.rebuild(px, py, pk, pool, ids);
  ASSERT_EQ(sorted.order().size(), n);
  std::size_t crowded = 0;
  for (std::size_t s = 0; s < n; ++s) {
    ASSERT_EQ(ids[shuffled.order()[s]], sorted.order()[s]) << "slot " << s;
    EXPECT_EQ(shuffled.sorted_x()[s], sorted.sorted_x()[s]);
    crowded += s > 0 &&
               sorted.cell_x(sorted.sorted_x()[s]) == sorted.cell_x(sorted.sorted_x()[s - 1]) &&
               sorted.cell_y(sorted.sorted_y()[s]) == sorted.cell_y(sorted.sorted_y()[s - 1]);
  }
  EXPECT_GT(crowded, n / 10) << "too few cells hold several robots for the test to mean anything";
}

TEST(SpatialIndex, AnArenaWithNoRobotKindInTheRunTakesOneCell) {
  // A 40 m arena whose experiment uses no robot kind (objects and walls only): the grids must
  // not fall to 1 mm cells (0.6 GB before).
  Scene s(40);
  s.model->kinds[0].in_run = false;
  s.index.init(*s.model, 0, 0.0);  // as a run with no parts (no sensing reach) sets it up
  EXPECT_LT(s.index.robots.memory_bytes() + s.index.segments.memory_bytes(), 64u * 1024);
  s.step();  // and a step with no robot still works
}

}  // namespace
}  // namespace fleetsim::testing
