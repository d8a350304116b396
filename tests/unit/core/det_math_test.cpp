// det_sincos: the engine's own sine and cosine, against the C library's (correctly rounded in
// practice) over the angles the engine uses and far beyond.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/det_math.hpp"

namespace fleetsim {
namespace {

// Distance in units in the last place between two doubles of the same sign (or both tiny).
double ulps(double a, double b) {
  if (a == b) return 0;
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) / (std::nextafter(scale, INFINITY) - scale);
}

TEST(DetSincos, WithinTwoUlpsOfTheLibraryOnHeadings) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> heading(-4.0, 4.0), wide(-1e5, 1e5);
  double worst_s = 0, worst_c = 0;
  for (int i = 0; i < 400000; ++i) {
    const double x = i % 4 == 3 ? wide(rng) : heading(rng);
    double s, c;
    det_sincos(x, s, c);
    // Near a zero of sin or cos the absolute error is what matters (the value is tiny).
    const double es =
        std::fabs(std::sin(x)) < 1e-3 ? std::fabs(s - std::sin(x)) / 2.3e-16 : ulps(s, std::sin(x));
    const double ec =
        std::fabs(std::cos(x)) < 1e-3 ? std::fabs(c - std::cos(x)) / 2.3e-16 : ulps(c, std::cos(x));
    worst_s = std::max(worst_s, es);
    worst_c = std::max(worst_c, ec);
  }
  EXPECT_LE(worst_s, 2.0);
  EXPECT_LE(worst_c, 2.0);
  // Beyond 1e5 radians the argument is first reduced by 2 pi rounded to a double: still a sine
  // and a cosine, to about 1e-11 at 1e6 radians.
  for (double x : {2e5, -7.5e5, 1e6}) {
    double s, c;
    det_sincos(x, s, c);
    EXPECT_NEAR(s, std::sin(x), 1e-10) << x;
    EXPECT_NEAR(c, std::cos(x), 1e-10) << x;
  }
}

TEST(DetSincos, ExactAtZeroOddEvenAndIdentityHolds) {
  double s, c;
  det_sincos(0.0, s, c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
  for (double x : {0.1, 0.7853981633974483, 1.5707963267948966, 2.5, 3.141592653589793, 100.0}) {
    double s1, c1, s2, c2;
    det_sincos(x, s1, c1);
    det_sincos(-x, s2, c2);
    EXPECT_EQ(s1, -s2) << x;  // odd, bit for bit
    EXPECT_EQ(c1, c2) << x;   // even
    EXPECT_NEAR(s1 * s1 + c1 * c1, 1.0, 4e-16) << x;
  }
  det_sincos(NAN, s, c);
  EXPECT_TRUE(std::isnan(s) && std::isnan(c));
}

// The four-wide form the engine's motion uses with AVX2 gives det_sincos's bits, in every
// quadrant, for negative zero, beyond 1e5 radians (scalar fallback) and for NaN.
TEST(DetSincos, FourWideFormGivesTheSameBits) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "no AVX2 here";
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> heading(-8.0, 8.0), wide(-1e5, 1e5), huge(-1e7, 1e7);
  std::vector<double> x;
  for (int i = 0; i < 100000; ++i) x.push_back(i % 5 == 4 ? wide(rng) : heading(rng));
  for (double v : {0.0, -0.0, 1e5, -1e5, 1.0000001e5, 3.14159265358979, -1.5707963267948966,
                   static_cast<double>(NAN), static_cast<double>(INFINITY)})
    x.push_back(v);
  for (int i = 0; i < 50; ++i) x.push_back(huge(rng));
  x.push_back(0.5);  // a length that leaves a tail of scalar calls
  std::vector<double> s(x.size()), c(x.size());
  det_sincos_avx2(x.data(), s.data(), c.data(), x.size());
  auto bits = [](double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    double es, ec;
    det_sincos(x[i], es, ec);
    ASSERT_EQ(bits(s[i]), bits(es)) << "sin of " << x[i];
    ASSERT_EQ(bits(c[i]), bits(ec)) << "cos of " << x[i];
  }
}

}  // namespace
}  // namespace fleetsim
