// Small helpers the long-range parts (range-and-bearing, camera) share: the bearing convention
// and finding a kind's parts by interface.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "fleetsim/types.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// atan2(y, x) in [-pi, pi] to within 3e-10 radians, for results rounded to float (which has
/// 2e-7 steps near pi). Why not std::atan2: glibc's is correctly rounded and costs ~50 ns;
/// range-and-bearing takes one per message, tens of messages per robot per tick, and its
/// bearings are floats anyway. Plain IEEE arithmetic (no contraction, see CMakeLists), so the
/// same bits on every run and thread. Method: reduce to t = min/max in [0, 1]; above
/// tan(pi/8) use atan(t) = pi/4 + atan((t - 1) / (t + 1)); then atan(t) = t p(t^2) on
/// |t| <= tan(pi/8), p a degree-5 Chebyshev fit (coefficients computed with mpmath's chebyfit
/// of atan(sqrt(s)) / sqrt(s) on [0, tan(pi/8)^2]); finally undo the octant.
/// `v` when `c`, else +0: a select by bit mask, which compilers keep branch-free.
inline double keep_if(bool c, double v) {
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) &
                               (std::uint64_t{0} - static_cast<std::uint64_t>(c)));
}

inline double bearing_atan2(double y, double x) {
  // No branches: the octant is a coin toss for the branch predictor (neighbours lie all
  // around), so every choice is a bit-mask select; adding +0 is exact.
  const double ax = std::fabs(x), ay = std::fabs(y);
  const double num = std::min(ax, ay), den = std::max(ax, ay);
  constexpr double kTanPi8 = 0.41421356237309504880;
  const bool upper = num > kTanPi8 * den;
  const double n = num - keep_if(upper, den);
  double d = den + keep_if(upper, num);
  d += keep_if(d == 0, 1.0);  // atan2(0, 0) = 0
  const double t = n / d;
  const double s = t * t;
  const double p =
      ((((-0.060263052276584590988 * s + 0.10569828806414448072) * s - 0.14239532669648974578) * s +
        0.19998183041083205602) *
           s -
       0.33333306893048512837) *
          s +
      0.99999999937122815559;
  double a = keep_if(upper, kPi / 4) + t * p;
  a += keep_if(ay > ax, kPi / 2 - 2 * a);  // steep: pi/2 - a
  a += keep_if(x < 0, kPi - 2 * a);        // left half-plane: pi - a
  // y's sign onto a (so y = -0 with x < 0 gives -pi; frame_bearing maps it to pi).
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(a) ^
                               (std::bit_cast<std::uint64_t>(y) & 0x8000000000000000ull));
}

/// The bearing of the point (lx, ly) of a robot's frame (x ahead, y to the left): radians in
/// (-pi, pi], 0 straight ahead, positive counter-clockwise (to the left). (Round it to float
/// for a view: every value then stays in (-pi, pi] as floats go.)
inline double frame_bearing(double lx, double ly) {
  const double a = bearing_atan2(ly, lx);
  return a + keep_if(a <= -kPi, 2 * kPi);
}

/// True when `part` provides `interface` (its resolved interface, or its type when the
/// interface was not resolved, e.g. a kind built by hand in a test).
inline bool provides(const PartDecl& part, std::string_view interface) {
  return (part.interface.empty() ? part.type : part.interface) == interface;
}

}  // namespace fleetsim
