#include <gtest/gtest.h>

#include <cmath>

#include "fleetsim/random.hpp"
#include "robots/part_geometry.hpp"

namespace fleetsim {
namespace {

TEST(PartGeometry, BearingAtan2AgreesWithTheLibraryToBetterThanAFloatStep) {
  CounterRng rng(7, 0, 0, RandomStream::kUser);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    // Every octant and scale, including points on the axes and diagonals.
    double x = rng.uniform(-1, 1) * std::pow(10.0, rng.uniform(-6, 3));
    double y = rng.uniform(-1, 1) * std::pow(10.0, rng.uniform(-6, 3));
    if (i % 5 == 1) y = 0;
    if (i % 5 == 2) x = 0;
    if (i % 5 == 3) y = (i % 2 ? 1 : -1) * x;
    if (x == 0 && y == 0) continue;
    worst = std::max(worst, std::fabs(bearing_atan2(y, x) - std::atan2(y, x)));
  }
  EXPECT_LT(worst, 1e-9);
}

TEST(PartGeometry, FrameBearingIsCounterClockwiseInMinusPiToPi) {
  EXPECT_EQ(frame_bearing(1, 0), 0.0);
  EXPECT_NEAR(frame_bearing(0, 1), kPi / 2, 1e-7);    // left
  EXPECT_NEAR(frame_bearing(0, -1), -kPi / 2, 1e-7);  // right
  EXPECT_EQ(frame_bearing(-1, 0), kPi);
  EXPECT_EQ(frame_bearing(-1, -0.0), kPi);  // never -pi
  EXPECT_NEAR(frame_bearing(-1, -1e-12), -kPi, 1e-7);
}

}  // namespace
}  // namespace fleetsim
