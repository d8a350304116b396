// Small helpers the long-range parts (range-and-bearing, camera) share: the bearing convention,
// sorting neighbours by id, and finding a kind's parts by interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/det_math.hpp"
#include "fleetsim/types.hpp"
#include "world/world.hpp"

namespace fleetsim {

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

/// Sorts `items` (key << 32 | anything, keys distinct: robot ids) by key. Up to 64
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
