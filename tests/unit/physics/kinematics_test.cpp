#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/cpu_features.hpp"
#include "physics/contact_gap.hpp"
#include "scene.hpp"
#include "support/sanitizers.hpp"

namespace fleetsim::testing {
namespace {

constexpr double kR = 0.035;  // e-puck radius
constexpr double kV = 0.1;    // m/s
constexpr double kDt = 0.1;   // s per tick

// The motion of a tick is kept in single precision, rounded toward zero: a robot moves its
// command within a float's rounding (relative 6e-8), and never more.
constexpr double kFloatRounding = 1.2e-7;

TEST(Kinematics, FreeRobotMovesExactlyItsCommand) {
  Scene s;
  EntityId a = s.add(0, 0, kPi / 2);
  s.ready();
  s.drive(a, kV, kV);
  s.step();
  EXPECT_NEAR(s.pos(a).x, 0, 1e-12);
  EXPECT_NEAR(s.pos(a).y, kV * kDt, kV * kDt * kFloatRounding);
  EXPECT_LE(s.pos(a).y, kV * kDt);
  EXPECT_EQ(s.state.realization()[0], 1.0f);
  EXPECT_EQ(s.state.contact_count()[0], 0);
}

TEST(Kinematics, SpeedIsClampedToTheKindsLimit) {
  Scene s;
  EntityId a = s.add(0, 0, 0);
  s.ready();
  s.drive(a, 5.0, 5.0);  // far above max_wheel_speed 0.13
  s.step();
  EXPECT_NEAR(s.pos(a).x, 0.13 * kDt, 0.13 * kDt * kFloatRounding);
  EXPECT_LE(s.pos(a).x, 0.13 * kDt);
}

TEST(Kinematics, RobotStopsAtAWallAtFirstContact) {
  Scene s(10);
  EntityId a = s.add(4.9, 0, 0);  // heading +x toward the border at x = 5
  s.ready();
  for (int t = 0; t < 100; ++t) {
    s.drive(a, kV, kV);
    s.step();
  }
  // It stops touching the wall (kStopGap apart), never through it.
  EXPECT_NEAR(s.pos(a).x, 5 - kR - kStopGap, 1e-9);
  EXPECT_EQ(s.state.contact_count()[0], 1);
  EXPECT_NEAR(s.state.contact_angle()[0], 0.0, 1e-6);  // the wall is straight ahead
  EXPECT_LT(s.state.realization()[0], 1e-6f);          // pushing, not moving
}

// A corner where two walls end (as the edges of a bitmap's obstacle pixels do) is one wall
// point: the collision sensor reports it once, as the DEECo playground does.
TEST(Kinematics, ACornerOfTwoWallsIsOneContact) {
  Scene s(10);
  s.model->segments.push_back({{0, 0}, {1, 0}});  // the bottom edge of a block above and right
  s.model->segments.push_back({{0, 0}, {0, 1}});  // its left edge
  EntityId a = s.add(-0.2, -0.2, kPi / 4);        // heading for the corner
  s.ready();
  for (int t = 0; t < 100; ++t) {
    s.drive(a, kV, kV);
    s.step();
  }
  const Vec2 p = s.pos(a);
  EXPECT_NEAR(std::hypot(p.x, p.y), kR + kStopGap, 1e-9);  // stopped at the corner
  ASSERT_EQ(s.state.contact_count()[0], 1);
  EXPECT_NEAR(s.state.contact_angle()[0], 0.0, 1e-6);  // straight ahead
}

TEST(Kinematics, RealizationIsTheFractionDoneOnTheContactTick) {
  Scene s(10);
  // Gap to the wall 0.015 m: the first tick moves 0.01, the second only 0.005 of its 0.01.
  EntityId a = s.add(5 - kR - 0.015, 0, 0);
  s.ready();
  s.drive(a, kV, kV);
  s.step();
  EXPECT_FLOAT_EQ(s.state.realization()[0], 1.0f);
  s.step();
  EXPECT_NEAR(s.state.realization()[0], (0.005 - kStopGap) / 0.01, 1e-6);
}

TEST(Kinematics, HeadOnRobotsStopTouchingInTheMiddle) {
  Scene s;
  EntityId a = s.add(-0.1, 0, 0);
  EntityId b = s.add(0.1, 0, kPi);
  s.ready();
  for (int t = 0; t < 20; ++t) {
    s.drive(a, kV, kV);
    s.drive(b, kV, kV);
    s.step();
  }
  // Symmetric motions: each stops half the contact distance from the middle.
  EXPECT_NEAR(s.pos(a).x, -(kR + kStopGap / 2), 1e-9);
  EXPECT_NEAR(s.pos(b).x, kR + kStopGap / 2, 1e-9);
  EXPECT_NEAR(s.pos(a).y, 0, 1e-12);
  EXPECT_EQ(s.state.contact_count()[0], 1);
  EXPECT_NEAR(s.state.contact_angle()[0], 0.0, 1e-6);  // a sees b ahead
}

TEST(Kinematics, GlancingContactStopsWhereTheCirclesTouch) {
  Scene s;
  EntityId a = s.add(0, 0, 0);
  s.add(0.2, 0.05, 0);  // still, offset sideways by 5 cm (< 2R: they will touch)
  s.ready();
  for (int t = 0; t < 20; ++t) {
    s.drive(a, kV, kV);
    s.step();
  }
  double rs = 2 * kR + kStopGap;
  double expected_x = 0.2 - std::sqrt(rs * rs - 0.05 * 0.05);
  EXPECT_NEAR(s.pos(a).x, expected_x, 1e-9);
  // The contact is ahead and to the left.
  EXPECT_NEAR(s.state.contact_angle()[0], std::atan2(0.05, 0.2 - expected_x), 1e-5);
}

// The DEECo playground rolls a move back to the moment of contact exactly; fleetsim stops
// kStopGap (1 nm) short of it, plus the float rounding of the tick's fraction (at most 6e-8 of
// the 1 cm step here): never closer than contact, never more than 2 nm from it. Head-on, both
// moving at an angle, glancing on a still robot, and a wall.
TEST(Kinematics, BodiesStopWithinTwoNanometresOfContact) {
  Scene s;
  EntityId a = s.add(-0.1, 0, 0), b = s.add(0.1, 0, kPi);               // head-on
  EntityId c = s.add(-0.3, 0.5, 0.3), d = s.add(-0.1, 0.5, kPi - 0.9);  // both moving, crossing
  EntityId e = s.add(0.3, -0.5, 0);
  EntityId still = s.add(0.5, -0.47, 0);  // glancing: e's path passes 3 cm from its centre
  EntityId w = s.add(4.5, 2, 0.2);        // heading for the wall at x = 5
  s.ready();
  double closest[4] = {1, 1, 1, 1};
  for (int t = 0; t < 100; ++t) {
    for (EntityId id : {a, b, c, d, e, w}) s.drive(id, kV, kV);
    s.step();
    const double gaps[4] = {length(s.pos(a) - s.pos(b)) - 2 * kR,
                            length(s.pos(c) - s.pos(d)) - 2 * kR,
                            length(s.pos(e) - s.pos(still)) - 2 * kR, 5 - s.pos(w).x - kR};
    for (int k = 0; k < 4; ++k) {
      ASSERT_GE(gaps[k], 0.0) << "pair " << k << ", tick " << t;  // never overlapping
      closest[k] = std::min(closest[k], gaps[k]);
    }
  }
  for (int k = 0; k < 4; ++k) {
    EXPECT_GE(closest[k], kStopGap * 0.5) << "pair " << k;
    EXPECT_LE(closest[k], 2e-9) << "pair " << k;  // 1 µm before (kSkin): the playground's
  }                                               // robots parted from fleetsim's after it
}

TEST(Kinematics, RobotSqueezedBetweenTwoOthers) {
  Scene s;
  EntityId mid = s.add(0, 0, kPi / 2);  // still
  EntityId left = s.add(-0.2, 0, 0);
  EntityId right = s.add(0.2, 0, kPi);
  s.ready();
  for (int t = 0; t < 30; ++t) {
    s.drive(left, kV, kV);
    s.drive(right, kV, kV);
    s.step();
  }
  EXPECT_NEAR(s.pos(mid).x, 0, 1e-12);
  EXPECT_NEAR(s.pos(left).x, -(2 * kR + kStopGap), 1e-9);
  EXPECT_NEAR(s.pos(right).x, 2 * kR + kStopGap, 1e-9);
  auto i = s.state.robot_index(mid);
  ASSERT_EQ(s.state.contact_count()[i], 2);
  std::vector<float> angles(s.state.contact_angle().begin() + i * kMaxContacts,
                            s.state.contact_angle().begin() + i * kMaxContacts + 2);
  std::sort(angles.begin(), angles.end());
  // Heading +y: the right-hand robot is at -90 degrees, the left-hand one at +90.
  EXPECT_NEAR(angles[0], -kPi / 2, 1e-5);
  EXPECT_NEAR(angles[1], kPi / 2, 1e-5);
}

TEST(Kinematics, SeveralRobotsConvergingOnOnePointNeverOverlap) {
  Scene s;
  std::vector<EntityId> ids;
  for (int k = 0; k < 6; ++k) {
    double a = k * kPi / 3;
    ids.push_back(s.add(0.3 * std::cos(a), 0.3 * std::sin(a), a + kPi));
  }
  s.ready();
  for (int t = 0; t < 40; ++t) {
    for (EntityId id : ids) s.drive(id, 0.13, 0.13);
    s.step();
    for (std::size_t i = 0; i < ids.size(); ++i)
      for (std::size_t j = i + 1; j < ids.size(); ++j)
        ASSERT_GE(length(s.pos(ids[i]) - s.pos(ids[j])), 2 * kR) << "tick " << t;
  }
  // They got close: every robot touches its two neighbours' ring or stopped near the centre.
  for (EntityId id : ids) EXPECT_LT(length(s.pos(id)), 0.3 - 0.1);
}

// Building the same scene with robots created in another order (so other ids and another
// processing order) gives the same final positions.
TEST(Kinematics, ResultDoesNotDependOnProcessingOrder) {
  CounterRng rng(7, 0, 0, RandomStream::kUser);
  std::vector<Vec2> starts;
  std::vector<double> headings;
  for (int gx = 0; gx < 10; ++gx)
    for (int gy = 0; gy < 10; ++gy) {
      starts.push_back(
          {-0.9 + gx * 0.2 + rng.uniform(-0.05, 0.05), -0.9 + gy * 0.2 + rng.uniform(-0.05, 0.05)});
      headings.push_back(rng.uniform(-kPi, kPi));
    }
  auto run = [&](bool reversed) {
    Scene s(2.2);
    std::vector<std::size_t> order(starts.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = reversed ? order.size() - 1 - k : k;
    std::vector<EntityId> id_of(starts.size());
    for (std::size_t k : order) id_of[k] = s.add(starts[k].x, starts[k].y, headings[k]);
    s.ready();
    for (int t = 0; t < 200; ++t) {
      for (std::size_t k = 0; k < starts.size(); ++k) {
        CounterRng r(1, static_cast<EntityId>(k), t, RandomStream::kUser);
        s.drive(id_of[k], r.uniform(-0.13, 0.13), r.uniform(-0.13, 0.13));
      }
      s.step();
    }
    std::vector<double> out;
    for (std::size_t k = 0; k < starts.size(); ++k) {
      out.push_back(s.pos(id_of[k]).x);
      out.push_back(s.pos(id_of[k]).y);
    }
    return out;
  };
  EXPECT_EQ(run(false), run(true));
}

// Property: over random crowded scenes for 10,000 ticks (a third of them under a sanitizer), no
// two bodies ever overlap, no robot crosses a wall, and no robot moves faster than its limit.
TEST(Kinematics, PropertyNoOverlapNoTunnellingNoSpeeding) {
  for (int threads : {1, 2}) {
    Scene s(2.0, threads);
    s.model->segments.push_back({{-0.5, -0.3}, {0.5, 0.2}});  // an inner wall
    s.model->segments.push_back({{0.3, 0.6}, {0.3, 0.95}});
    CounterRng rng(11, 0, 0, RandomStream::kUser);
    std::vector<EntityId> ids;
    while (ids.size() < 120) {
      Vec2 p{rng.uniform(-0.95, 0.95), rng.uniform(-0.95, 0.95)};
      bool ok = true;
      for (EntityId o : ids) ok = ok && length(p - s.pos(o)) > 2 * kR + 1e-3;
      for (std::size_t w = 4; w < s.model->segments.size(); ++w)
        ok = ok && distance_to_segment(p, s.model->segments[w]) > kR + 1e-3;
      if (ok) ids.push_back(s.add(p.x, p.y, rng.uniform(-kPi, kPi)));
    }
    s.ready();
    const double max_step = 0.13 * kDt + 1e-12;
    const int ticks = property_cases(10000);
    for (int t = 0; t < ticks; ++t) {
      std::vector<Vec2> before;
      for (EntityId id : ids) {
        CounterRng r(3, id, t, RandomStream::kUser);
        s.drive(id, r.uniform(-0.2, 0.2), r.uniform(-0.2, 0.2));
        before.push_back(s.pos(id));
      }
      s.step();
      for (std::size_t i = 0; i < ids.size(); ++i) {
        Vec2 p = s.pos(ids[i]);
        ASSERT_LE(length(p - before[i]), max_step) << "tick " << t;
        for (const Segment& w : s.model->segments)
          ASSERT_GE(distance_to_segment(p, w), kR) << "tick " << t << " robot " << ids[i];
        for (std::size_t j = i + 1; j < ids.size(); ++j)
          ASSERT_GE(length(p - s.pos(ids[j])), 2 * kR) << "tick " << t;
      }
    }
  }
}

}  // namespace
}  // namespace fleetsim::testing

namespace fleetsim::testing {
namespace {

// A jammed crowd: every robot pushes toward the centre (with a random turn up to `jitter`),
// so many touch several others.
void drive_to_centre(Scene& s, const std::vector<EntityId>& ids, int tick, double jitter) {
  for (EntityId id : ids) {
    auto i = s.state.robot_index(id);
    CounterRng r(9, id, tick, RandomStream::kUser);
    double to_centre = std::atan2(-s.state.y()[i], -s.state.x()[i]);
    double turn = wrap_angle(to_centre - s.state.theta()[i]);
    double v = 0.13, w = std::clamp(turn, -1.0, 1.0) * 0.05 + r.uniform(-jitter, jitter);
    s.drive(id, v - w, v + w);
  }
}

// The grid's cell size is a performance choice (sparse swarms get larger cells): positions,
// readings and the collision sensor must not change with it.
TEST(Kinematics, ResultsDoNotDependOnTheGridCellSize) {
  auto run = [](std::size_t hint) {
    Scene s(3.0);
    CounterRng rng(5, 0, 0, RandomStream::kUser);
    std::vector<EntityId> ids;
    for (int gx = 0; gx < 12; ++gx)
      for (int gy = 0; gy < 12; ++gy)
        ids.push_back(s.add(-0.44 + gx * 0.08, -0.44 + gy * 0.08, rng.uniform(-kPi, kPi)));
    s.ready(hint);
    for (int t = 0; t < 300; ++t) {
      drive_to_centre(s, ids, t, 0.01);
      s.step();
    }
    int several = 0;  // the scene must exercise lists of several contacts
    for (auto c : s.state.contact_count()) several += c >= 2;
    EXPECT_GT(several, 10);
    return s.state.hash();
  };
  std::uint64_t fine = run(0);
  EXPECT_EQ(fine, run(10));  // cells of ~0.5 m instead of ~0.2 m
  EXPECT_EQ(fine, run(1));   // one cell for the whole arena
}

}  // namespace
}  // namespace fleetsim::testing

namespace fleetsim::testing {
namespace {

// Once few robots change in a round of the contacts' fixed point, the rounds visit only those
// robots and their candidates, on one thread. That is a shortcut, not another model: a jammed
// crowd ends every tick in the same state whether the rounds turn sparse right after round 0
// or never, on one thread or two.
// A jammed crowd around a wall for 300 ticks: the state's hash after each tick.
std::vector<std::uint64_t> jam_hashes(std::size_t sparse_below, int threads) {
  Scene s(3.0, threads);
  s.model->segments.push_back({{-0.2, 0.05}, {0.2, 0.05}});  // a wall inside the crowd
  CounterRng rng(5, 0, 0, RandomStream::kUser);
  std::vector<EntityId> ids;
  for (int gx = 0; gx < 14; ++gx)
    for (int gy = 0; gy < 14; ++gy)
      if (std::abs(-0.52 + gy * 0.08 - 0.05) > 0.04)
        ids.push_back(s.add(-0.52 + gx * 0.08, -0.52 + gy * 0.08, rng.uniform(-kPi, kPi)));
  s.ready();
  s.engine.set_sparse_below(sparse_below);
  std::vector<std::uint64_t> hashes;
  int most_rounds = 0;
  for (int t = 0; t < 300; ++t) {
    drive_to_centre(s, ids, t, 0.02);
    s.step();
    hashes.push_back(s.state.hash());
    most_rounds = std::max(most_rounds, s.engine.last_rounds());
  }
  // The crowd must need several rounds, or there is nothing to compare.
  EXPECT_GE(most_rounds, 4);
  return hashes;
}

TEST(Kinematics, SparseRoundsGiveTheStatesOfFullRounds) {
  const auto full = jam_hashes(0, 1);
  EXPECT_EQ(full, jam_hashes(~std::size_t{0} - 1, 1));  // sparse from round 1 on
  EXPECT_EQ(full, jam_hashes(~std::size_t{0} - 1, 2));
  EXPECT_EQ(full, jam_hashes(3, 2));
}

// Round 0 finds its candidates four slots at a time with AVX2 (one radius, one engine): the
// same candidates, so the same states, as the baseline kernel's one at a time.
TEST(Kinematics, BothSimdPathsGiveTheSameStates) {
  const SimdPath before = simd_path();
  if (set_simd_path(SimdPath::kAvx2) != SimdPath::kAvx2) GTEST_SKIP() << "no AVX2 here";
  const auto wide = jam_hashes(KinematicsEngine::kSparseAuto, 2);
  set_simd_path(SimdPath::kBaseline);
  const auto baseline = jam_hashes(KinematicsEngine::kSparseAuto, 2);
  set_simd_path(before);
  EXPECT_EQ(wide, baseline);
}

}  // namespace
}  // namespace fleetsim::testing
