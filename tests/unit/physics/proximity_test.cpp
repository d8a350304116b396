#include <gtest/gtest.h>

#include <cmath>

#include "robots/proximity_sensor.hpp"
#include "scene.hpp"

namespace fleetsim::testing {
namespace {

constexpr double kR = 0.035;
constexpr double kRange = 0.1;

std::vector<float> read(Scene& s, EntityId id) {
  s.index.rebuild(*s.model, s.state, s.pool);
  std::vector<float> out(kEpuckRays);
  read_proximity(s.state, s.index, s.state.robot_index(id), kR, kRange, epuck_rays(), out.data());
  return out;
}

TEST(Proximity, NothingInRangeReadsZero) {
  Scene s(10);
  EntityId a = s.add(0, 0, 0);
  s.ready();
  for (float v : read(s, a)) EXPECT_EQ(v, 0.0f);
}

// A wall at x = d in front of a robot heading +x: sensor k (angle a) starts on the body at
// R(cos a, sin a) and meets the wall after (d - R cos a) / cos a metres.
TEST(Proximity, WallReadingsMatchHandComputedGeometry) {
  Scene s(10);
  const double d = 0.09;
  s.model->segments.push_back({{d, -1}, {d, 1}});
  EntityId a = s.add(0, 0, 0);
  s.ready();
  auto r = read(s, a);
  for (int k = 0; k < kEpuckRays; ++k) {
    double ang = kEpuckProximityAngles[k];
    double expected = 0;
    if (std::cos(ang) > 0) {
      double t = (d - kR * std::cos(ang)) / std::cos(ang);
      if (t < kRange) expected = 1 - t / kRange;
    }
    EXPECT_NEAR(r[k], expected, 1e-6) << "sensor " << k;
  }
  // The two front sensors see it: 17.5 degrees off the heading, 0.0565 m -> about 0.40.
  EXPECT_NEAR(r[0], 1 - ((d - kR * std::cos(0.3054326)) / std::cos(0.3054326)) / kRange, 1e-6);
  EXPECT_GT(r[0], 0.3f);
}

TEST(Proximity, RobotOnASensorAxisReadsOneMinusGapOverRange) {
  Scene s(10);
  EntityId a = s.add(0, 0, 0.4);
  double gap = 0.03;
  double ang = 0.4 + kEpuckProximityAngles[2];  // sensor 2, at 90 degrees left of the heading
  double dist = kR + gap + kR;
  s.add(dist * std::cos(ang), dist * std::sin(ang), 0);
  s.ready();
  auto r = read(s, a);
  EXPECT_NEAR(r[2], 1 - gap / kRange, 1e-6);
  EXPECT_EQ(r[6], 0.0f);  // the opposite side sees nothing
}

TEST(Proximity, TouchingReadsOne) {
  Scene s(10);
  EntityId a = s.add(0, 0, -kEpuckProximityAngles[0]);  // sensor 0 points along +x
  s.add(2 * kR, 0, 0);
  s.ready();
  EXPECT_NEAR(read(s, a)[0], 1.0f, 1e-6);
}

TEST(Proximity, SensingCrossesEngineBoundaries) {
  Scene s(10);
  s.model->engines = {{"w", {-5, -5}, {0, 5}}, {"e", {0, -5}, {5, 5}}};
  EntityId a = s.add(-0.05, 0, -kEpuckProximityAngles[0]);
  EntityId b = s.add(0.05, 0, 0);
  s.state.robot_engine()[s.state.robot_index(a)] = 0;
  s.state.robot_engine()[s.state.robot_index(b)] = 1;
  s.ready();
  EXPECT_GT(read(s, a)[0], 0.5f);
}

}  // namespace
}  // namespace fleetsim::testing
