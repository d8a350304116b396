#include "sim/domains.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace fleetsim {

Domains Domains::bisect(std::span<const Vec2> points, Vec2 lo, Vec2 hi, int count) {
  Domains d;
  if (count < 1) return d;
  d.boxes_.resize(static_cast<std::size_t>(count));
  std::vector<std::uint32_t> idx(points.size());
  std::iota(idx.begin(), idx.end(), 0u);
  const double inf = std::numeric_limits<double>::infinity();
  d.build(idx, 0, idx.size(), points, Box{lo, hi}, Box{{-inf, -inf}, {inf, inf}}, 0, count);
  return d;
}

std::int32_t Domains::build(std::vector<std::uint32_t>& idx, std::size_t b, std::size_t e,
                            std::span<const Vec2> points, Box box, Box bounds, int first, int k) {
  if (k == 1) {
    boxes_[static_cast<std::size_t>(first)] = bounds;
    return ~static_cast<std::int32_t>(first);
  }
  const int k_below = k / 2;
  // Across the longer side of the arena's part of the box.
  const int axis = (box.max.x - box.min.x) >= (box.max.y - box.min.y) ? 0 : 1;
  auto coord = [&](std::uint32_t i) { return axis == 0 ? points[i].x : points[i].y; };
  auto other = [&](std::uint32_t i) { return axis == 0 ? points[i].y : points[i].x; };
  std::sort(idx.begin() + static_cast<std::ptrdiff_t>(b), idx.begin() + static_cast<std::ptrdiff_t>(e),
            [&](std::uint32_t u, std::uint32_t v) {
              if (coord(u) != coord(v)) return coord(u) < coord(v);
              if (other(u) != other(v)) return other(u) < other(v);
              return u < v;
            });
  const std::size_t n = e - b;
  const double lo = axis == 0 ? box.min.x : box.min.y, hi = axis == 0 ? box.max.x : box.max.y;
  double at;
  std::size_t m = b;  // the first point above the cut
  if (n == 0) {
    at = lo + (hi - lo) * k_below / k;
  } else {
    const std::size_t want = (n * static_cast<std::size_t>(k_below) * 2 + static_cast<std::size_t>(k)) /
                             (2 * static_cast<std::size_t>(k));
    m = b + want;
    if (want == 0) {
      at = (lo + coord(idx[b])) / 2;
    } else if (want == n) {
      at = (coord(idx[e - 1]) + hi) / 2;
    } else {
      at = (coord(idx[m - 1]) + coord(idx[m])) / 2;
    }
    // Points on the cut are above it: the points below are those with coordinate < at.
    m = b;
    while (m < e && coord(idx[m]) < at) ++m;
  }
  const auto cut = static_cast<std::int32_t>(cuts_.size());
  cuts_.push_back(Cut{static_cast<std::uint8_t>(axis), at, 0, 0});
  Box box_below = box, box_above = box, bounds_below = bounds, bounds_above = bounds;
  (axis == 0 ? box_below.max.x : box_below.max.y) = at;
  (axis == 0 ? box_above.min.x : box_above.min.y) = at;
  (axis == 0 ? bounds_below.max.x : bounds_below.max.y) = at;
  (axis == 0 ? bounds_above.min.x : bounds_above.min.y) = at;
  const std::int32_t below = build(idx, b, m, points, box_below, bounds_below, first, k_below);
  const std::int32_t above =
      build(idx, m, e, points, box_above, bounds_above, first + k_below, k - k_below);
  cuts_[static_cast<std::size_t>(cut)].below = below;
  cuts_[static_cast<std::size_t>(cut)].above = above;
  return cut;
}

int Domains::at(Vec2 p) const {
  if (boxes_.size() <= 1) return 0;
  std::int32_t node = 0;
  while (node >= 0) {
    const Cut& c = cuts_[static_cast<std::size_t>(node)];
    node = (c.axis == 0 ? p.x : p.y) < c.at ? c.below : c.above;
  }
  return ~node;
}

double Domains::distance(Vec2 p, const Box& b) {
  const double dx = std::max({b.min.x - p.x, 0.0, p.x - b.max.x});
  const double dy = std::max({b.min.y - p.y, 0.0, p.y - b.max.y});
  return std::sqrt(dx * dx + dy * dy);
}

double Domains::to_other(Vec2 p, int d, double limit) const {
  const double inf = std::numeric_limits<double>::infinity();
  if (boxes_.size() <= 1) return inf;
  // Deep inside its own box: no other box is within the limit.
  const Box& own = box(d);
  if (p.x - own.min.x > limit && own.max.x - p.x > limit && p.y - own.min.y > limit &&
      own.max.y - p.y > limit)
    return inf;
  double best = inf;
  for (int q = 0; q < count(); ++q)
    if (q != d) best = std::min(best, distance(p, box(q)));
  return best;
}

}  // namespace fleetsim
