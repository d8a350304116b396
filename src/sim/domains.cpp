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
  std::sort(idx.begin() + static_cast<std::ptrdiff_t>(b),
            idx.begin() + static_cast<std::ptrdiff_t>(e), [&](std::uint32_t u, std::uint32_t v) {
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
    const std::size_t want =
        (n * static_cast<std::size_t>(k_below) * 2 + static_cast<std::size_t>(k)) /
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

/// Robots per tile, summed: the robots of any block of tiles at once.
struct Domains::TileSums {
  Vec2 lo;
  double side;
  int nx, ny;
  std::vector<std::uint64_t> sum;  ///< (nx + 1) x (ny + 1): the tiles below and left of a corner
  std::uint64_t in(int x0, int y0, int x1, int y1) const {
    auto s = [&](int x, int y) {
      return sum[static_cast<std::size_t>(y) * static_cast<std::size_t>(nx + 1) +
                 static_cast<std::size_t>(x)];
    };
    return s(x1, y1) - s(x0, y1) - s(x1, y0) + s(x0, y0);
  }
};

Domains Domains::bisect_tiles(std::span<const std::uint64_t> counts, Vec2 lo, double side, int nx,
                              int ny, int count) {
  Domains d;
  if (count < 1 || nx < 1 || ny < 1) return d;
  d.boxes_.resize(static_cast<std::size_t>(count));
  TileSums t{lo, side, nx, ny, {}};
  const auto w = static_cast<std::size_t>(nx) + 1;
  t.sum.assign(w * (static_cast<std::size_t>(ny) + 1), 0);
  for (std::size_t y = 0; y < static_cast<std::size_t>(ny); ++y)
    for (std::size_t x = 0; x < static_cast<std::size_t>(nx); ++x)
      t.sum[(y + 1) * w + x + 1] = counts[y * static_cast<std::size_t>(nx) + x] +
                                   t.sum[y * w + x + 1] + t.sum[(y + 1) * w + x] - t.sum[y * w + x];
  const double inf = std::numeric_limits<double>::infinity();
  d.build_tiles(t, 0, 0, nx, ny, Box{{-inf, -inf}, {inf, inf}}, 0, count);
  return d;
}

std::int32_t Domains::build_tiles(const TileSums& t, int x0, int y0, int x1, int y1, Box bounds,
                                  int first, int k) {
  if (k == 1) {
    boxes_[static_cast<std::size_t>(first)] = bounds;
    return ~static_cast<std::int32_t>(first);
  }
  const int k_below = k / 2;
  // Across the longer side; a block one tile wide across the other; a single tile at its far
  // border (the domains above it then hold no robot at the start).
  int axis = (x1 - x0) >= (y1 - y0) ? 0 : 1;
  if ((axis == 0 ? x1 - x0 : y1 - y0) < 2 && (axis == 0 ? y1 - y0 : x1 - x0) >= 2) axis = 1 - axis;
  const int from = axis == 0 ? x0 : y0, to = axis == 0 ? x1 : y1;
  const std::uint64_t n = t.in(x0, y0, x1, y1);
  const std::uint64_t want =
      (n * static_cast<std::uint64_t>(k_below) * 2 + static_cast<std::uint64_t>(k)) /
      (2 * static_cast<std::uint64_t>(k));
  auto below = [&](int c) { return axis == 0 ? t.in(x0, y0, c, y1) : t.in(x0, y0, x1, c); };
  int cut = to;
  if (to - from >= 2) {
    // The tile border nearest the share wanted (the lower one on a tie), a tile on either side.
    cut = from + 1;
    std::uint64_t best = ~std::uint64_t{0};
    for (int c = from + 1; c < to; ++c) {
      const std::uint64_t b = below(c);
      const std::uint64_t off = b > want ? b - want : want - b;
      if (off < best) {
        best = off;
        cut = c;
      }
      if (b >= want) break;
    }
  }
  const double at = axis == 0 ? t.lo.x + t.side * cut : t.lo.y + t.side * cut;
  const auto index = static_cast<std::int32_t>(cuts_.size());
  cuts_.push_back(Cut{static_cast<std::uint8_t>(axis), at, 0, 0});
  Box bounds_below = bounds, bounds_above = bounds;
  (axis == 0 ? bounds_below.max.x : bounds_below.max.y) = at;
  (axis == 0 ? bounds_above.min.x : bounds_above.min.y) = at;
  const std::int32_t lower = axis == 0
                                 ? build_tiles(t, x0, y0, cut, y1, bounds_below, first, k_below)
                                 : build_tiles(t, x0, y0, x1, cut, bounds_below, first, k_below);
  const std::int32_t upper =
      axis == 0 ? build_tiles(t, cut, y0, x1, y1, bounds_above, first + k_below, k - k_below)
                : build_tiles(t, x0, cut, x1, y1, bounds_above, first + k_below, k - k_below);
  cuts_[static_cast<std::size_t>(index)].below = lower;
  cuts_[static_cast<std::size_t>(index)].above = upper;
  return index;
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

double Domains::distance(const Box& a, const Box& b) {
  const double dx = std::max({b.min.x - a.max.x, 0.0, a.min.x - b.max.x});
  const double dy = std::max({b.min.y - a.max.y, 0.0, a.min.y - b.max.y});
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
