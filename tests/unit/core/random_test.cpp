#include "fleetsim/random.hpp"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(CounterRng, IsAPureFunctionOfItsKey) {
  CounterRng a(42, 7, 100, RandomStream::kController);
  CounterRng b(42, 7, 100, RandomStream::kController);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  CounterRng c(42, 8, 100, RandomStream::kController);
  CounterRng d(42, 7, 101, RandomStream::kController);
  CounterRng e(43, 7, 100, RandomStream::kController);
  CounterRng f(42, 7, 100, RandomStream::kPlacement);
  std::uint64_t x = CounterRng(42, 7, 100, RandomStream::kController).next();
  EXPECT_NE(x, c.next());
  EXPECT_NE(x, d.next());
  EXPECT_NE(x, e.next());
  EXPECT_NE(x, f.next());
}

TEST(CounterRng, UniformIsRoughlyUniform) {
  CounterRng r(1, 2, 3, RandomStream::kUser);
  int bins[10] = {};
  for (int i = 0; i < 100000; ++i) {
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    bins[static_cast<int>(u * 10)]++;
  }
  for (int b : bins) EXPECT_NEAR(b, 10000, 500);
}

}  // namespace
}  // namespace fleetsim
