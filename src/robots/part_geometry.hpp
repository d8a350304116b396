// Small helpers the long-range parts (range-and-bearing, camera) share: the bearing convention,
// sorting neighbours by id, and finding a kind's parts by interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

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
inline double bearing_atan2(double y, double x) {
  // Written with selects only, so that the loops below run it on vectors (the compiler turns
  // the selects into masks there); scalar callers get the same IEEE operations.
  const double ax = std::fabs(x), ay = std::fabs(y);
  const double num = ax < ay ? ax : ay, den = ax < ay ? ay : ax;
  constexpr double kTanPi8 = 0.41421356237309504880;
  const bool upper = num > kTanPi8 * den;
  const double n = upper ? num - den : num;
  double d = upper ? num + den : den;
  d = d == 0 ? 1.0 : d;  // atan2(0, 0) = 0
  const double t = n / d;
  const double s = t * t;
  const double p =
      ((((-0.060263052276584590988 * s + 0.10569828806414448072) * s - 0.14239532669648974578) * s +
        0.19998183041083205602) *
           s -
       0.33333306893048512837) *
          s +
      0.99999999937122815559;
  double a = (upper ? kPi / 4 : 0.0) + t * p;
  a = ay > ax ? kPi / 2 - a : a;  // steep: pi/2 - a
  a = x < 0 ? kPi - a : a;        // left half-plane: pi - a
  return y < 0 ? -a : a;
}

/// The bearing of the point (lx, ly) of a robot's frame (x ahead, y to the left): radians in
/// (-pi, pi], 0 straight ahead, positive counter-clockwise (to the left). (Rounded to float
/// for a view, pi becomes the float just above it.)
inline double frame_bearing(double lx, double ly) {
  const double a = bearing_atan2(ly, lx);
  return a <= -kPi ? kPi : a;
}

/// Bearings of n points given relative to a robot in the world frame (dx, dy), seen from the
/// robot whose heading has cosine c and sine s: out[k] = frame_bearing of the rotated point,
/// the same bits. A loop over arrays of selects only, which the compiler runs on vectors (with
/// the robots target's -fno-trapping-math -fno-math-errno).
inline void frame_bearings(std::size_t n, const double* __restrict dx, const double* __restrict dy,
                           double c, double s, double* __restrict out) {
  for (std::size_t k = 0; k < n; ++k)
    out[k] = frame_bearing(c * dx[k] + s * dy[k], c * dy[k] - s * dx[k]);
}

/// Sorts `items` (row << 32 | anything, rows distinct) by row, i.e. by entity id. Up to 64
/// items by rank (an item's place is the number of smaller rows: a branch-free loop the
/// compiler vectorises, several times faster than a comparison sort at the tens of neighbours
/// a robot usually has); more with std::sort. `rows` and `sorted` are scratch.
inline void sort_by_row(std::vector<std::uint64_t>& items, std::vector<std::uint32_t>& rows,
                        std::vector<std::uint64_t>& sorted) {
  const std::size_t m = items.size();
  if (m > 64) {
    std::sort(items.begin(), items.end());
    return;
  }
  rows.resize(m);
  for (std::size_t i = 0; i < m; ++i) rows[i] = static_cast<std::uint32_t>(items[i] >> 32);
  sorted.resize(m);
  const std::uint32_t* r = rows.data();
  for (std::size_t i = 0; i < m; ++i) {
    std::uint32_t rank = 0;
    for (std::size_t j = 0; j < m; ++j) rank += r[j] < r[i];
    sorted[rank] = items[i];
  }
  items.swap(sorted);
}

/// True when `part` provides `interface` (its resolved interface, or its type when the
/// interface was not resolved, e.g. a kind built by hand in a test).
inline bool provides(const PartDecl& part, std::string_view interface) {
  return (part.interface.empty() ? part.type : part.interface) == interface;
}

}  // namespace fleetsim
