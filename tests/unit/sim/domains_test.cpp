// The arena's domains (sim/domains.hpp): recursive bisection balanced by robot count, a
// partition of the plane (every point in exactly one domain), the same for the same input,
// and the border test the contact rounds use.
#include "sim/domains.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace fleetsim {
namespace {

std::vector<Vec2> random_points(std::size_t n, unsigned seed, double w, double h) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> ux(-w / 2, w / 2), uy(-h / 2, h / 2);
  std::vector<Vec2> p(n);
  for (auto& v : p) v = {ux(g), uy(g)};
  return p;
}

TEST(Domains, BisectionBalancesRobotsForAnyCount) {
  const auto points = random_points(10007, 1, 40, 10);
  for (int count : {1, 2, 3, 4, 5, 7, 8, 16, 100}) {
    SCOPED_TRACE(count);
    const Domains d = Domains::bisect(points, {-20, -5}, {20, 5}, count);
    ASSERT_EQ(d.count(), count);
    std::vector<std::size_t> held(static_cast<std::size_t>(count), 0);
    for (Vec2 p : points) ++held[static_cast<std::size_t>(d.at(p))];
    const double fair = static_cast<double>(points.size()) / count;
    for (std::size_t h : held) {
      EXPECT_GE(static_cast<double>(h), std::floor(fair) - 8);  // rounding at each level
      EXPECT_LE(static_cast<double>(h), std::ceil(fair) + 8);
    }
  }
}

TEST(Domains, CutAlongTilesEveryTileIsInOneDomainAndTheCountsBalance) {
  // 40 x 25 tiles of side 0.5 from (-10, -6), robots per tile uneven (a dense band).
  const int nx = 40, ny = 25;
  const double side = 0.5;
  const Vec2 lo{-10, -6};
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(nx * ny));
  std::mt19937_64 g(4);
  std::uint64_t total = 0, most = 0;
  for (int ty = 0; ty < ny; ++ty)
    for (int tx = 0; tx < nx; ++tx) {
      const std::uint64_t c = (ty > 10 && ty < 15 ? 60 : 10) + g() % 7;
      counts[static_cast<std::size_t>(ty * nx + tx)] = c;
      total += c;
      most = std::max(most, c);
    }
  for (int count : {1, 2, 3, 4, 7, 8}) {
    SCOPED_TRACE(count);
    const Domains d = Domains::bisect_tiles(counts, lo, side, nx, ny, count);
    ASSERT_EQ(d.count(), count);
    std::vector<std::uint64_t> held(static_cast<std::size_t>(count), 0);
    for (int ty = 0; ty < ny; ++ty)
      for (int tx = 0; tx < nx; ++tx) {
        // Every point of a tile (its corners, just inside) is in the same domain.
        const double x0 = lo.x + side * tx, y0 = lo.y + side * ty;
        const int at = d.at({x0, y0});
        for (Vec2 p : {Vec2{x0 + side * 0.999999, y0}, Vec2{x0, y0 + side * 0.999999},
                       Vec2{x0 + side * 0.5, y0 + side * 0.5}})
          ASSERT_EQ(d.at(p), at) << tx << "," << ty;
        held[static_cast<std::size_t>(at)] += counts[static_cast<std::size_t>(ty * nx + tx)];
      }
    // Balanced to within a row or column of tiles at each of the (few) levels.
    const double fair = static_cast<double>(total) / count;
    for (std::uint64_t h : held) EXPECT_NEAR(static_cast<double>(h), fair, 3.0 * 25 * most);
    if (count == 2) {
      EXPECT_NEAR(static_cast<double>(held[0]), fair, 25.0 * most);  // one column's worth
    }
  }
}

TEST(Domains, EveryPointIsInTheBoxOfItsDomainOnly) {
  const auto points = random_points(500, 2, 10, 10);
  const Domains d = Domains::bisect(points, {-5, -5}, {5, 5}, 6);
  // Points of the arena, outside it, and on the cuts themselves.
  auto probes = random_points(2000, 3, 30, 30);
  for (int q = 0; q < d.count(); ++q)
    probes.push_back(d.box(q).min), probes.push_back(d.box(q).max);
  for (Vec2 p : probes) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const int at = d.at(p);
    ASSERT_GE(at, 0);
    ASSERT_LT(at, d.count());
    EXPECT_EQ(Domains::distance(p, d.box(at)), 0.0) << p.x << "," << p.y;
  }
  // The boxes tile the plane: the ones at the arena's edges reach to infinity.
  int unbounded = 0;
  for (int q = 0; q < d.count(); ++q)
    unbounded += std::isinf(d.box(q).min.x) || std::isinf(d.box(q).max.x) ||
                 std::isinf(d.box(q).min.y) || std::isinf(d.box(q).max.y);
  EXPECT_EQ(unbounded, d.count());  // (6 domains of a square: each touches an edge)
}

TEST(Domains, TheSameInputGivesTheSameDomainsWhateverThePointsOrder) {
  auto points = random_points(3000, 4, 8, 8);
  // Many robots on one line: ties are broken by the other coordinate.
  for (std::size_t i = 0; i < 300; ++i) points[i].x = 0.5;
  const Domains a = Domains::bisect(points, {-4, -4}, {4, 4}, 5);
  std::vector<Vec2> reversed(points.rbegin(), points.rend());
  const Domains b = Domains::bisect(reversed, {-4, -4}, {4, 4}, 5);
  for (int q = 0; q < 5; ++q) {
    EXPECT_EQ(a.box(q).min.x, b.box(q).min.x);
    EXPECT_EQ(a.box(q).min.y, b.box(q).min.y);
    EXPECT_EQ(a.box(q).max.x, b.box(q).max.x);
    EXPECT_EQ(a.box(q).max.y, b.box(q).max.y);
  }
}

TEST(Domains, NoRobotsCutsTheArenaEvenlyAndNearOtherSeesTheBorder) {
  const Domains d = Domains::bisect({}, {0, 0}, {4, 2}, 2);
  EXPECT_EQ(d.box(0).max.x, 2.0);  // across the longer side, at its middle
  EXPECT_EQ(d.at({1.99, 1}), 0);
  EXPECT_EQ(d.at({2.0, 1}), 1);  // a point on the cut is above it
  EXPECT_TRUE(d.near_other({1.95, 1}, 0, 0.1));
  EXPECT_FALSE(d.near_other({1.85, 1}, 0, 0.1));
  EXPECT_FALSE(d.near_other({-100, 1}, 0, 0.1));  // beyond the arena, far from the cut
  EXPECT_FALSE(Domains::bisect({}, {0, 0}, {4, 2}, 1).near_other({2, 1}, 0, 10));
}

}  // namespace
}  // namespace fleetsim
