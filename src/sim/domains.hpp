// The arena decomposed into domains, one per process of a distributed run
// (docs/distributed.md, "Domains").
//
// A domain is the part of the arena whose robots a process moves, for the regions of the
// engine types that may be split (kinematics2d, pointmass3d: each robot's step reads only its
// own row and, for kinematics2d, its neighbours' motions, which cross a domain border in the
// contact rounds). The decomposition is a question of speed only: robots collide, sense and
// communicate across a border exactly as inside a domain, so the results are the same bits
// for any number of domains. It is built once, at the start, by recursive bisection balanced
// by robot count, and is a pure function of the robots' positions (or of the robots planned per
// placement tile, bisect_tiles) and the domain count (every process computes it alike).
// Domains tile the plane: the ones at the arena's edges reach to infinity beyond it, so every
// point is in exactly one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim {

class Domains {
 public:
  /// An axis-aligned box; its bounds may be infinite.
  struct Box {
    Vec2 min, max;
  };
  /// No decomposition (a run whose processes simulate whole regions).
  Domains() = default;
  /// `count` domains by recursive bisection of the box [lo, hi]: a box for k domains is cut
  /// across its longer side so that the first half holds round(n * floor(k/2) / k) of its n
  /// points (the cut midway between two points, ties in order of their other coordinate then
  /// of their index), and each side is cut again.
  static Domains bisect(std::span<const Vec2> points, Vec2 lo, Vec2 hi, int count);
  /// The same over robots counted per tile (`counts`, nx x ny tiles of side `side` from `lo`,
  /// row-major): cuts lie on tile borders, so every robot of a tile is in the tile's domain.
  /// A box is cut where the robots below come nearest round(n * floor(k/2) / k).
  static Domains bisect_tiles(std::span<const std::uint64_t> counts, Vec2 lo, double side, int nx,
                              int ny, int count);
  bool empty() const { return boxes_.empty(); }
  int count() const { return static_cast<int>(boxes_.size()); }
  /// The domain holding p (a point on a cut belongs to the upper side).
  int at(Vec2 p) const;
  const Box& box(int d) const { return boxes_[static_cast<std::size_t>(d)]; }
  /// True when a domain other than `d` lies within `reach` of p (p in domain d).
  bool near_other(Vec2 p, int d, double reach) const { return to_other(p, d, reach) <= reach; }
  /// The distance from p (in domain d) to the nearest other domain, or infinity when none is
  /// within `limit`.
  double to_other(Vec2 p, int d, double limit) const;
  /// Distance from p to box b (0 inside).
  static double distance(Vec2 p, const Box& b);
  /// Distance between boxes a and b (0 when they touch or overlap).
  static double distance(const Box& a, const Box& b);

 private:
  /// A cut: points with coordinate < at on `axis` (0 x, 1 y) go to `below`, the others to
  /// `above`; a child < 0 is domain ~child.
  struct Cut {
    std::uint8_t axis = 0;
    double at = 0;
    std::int32_t below = 0, above = 0;
  };
  std::int32_t build(std::vector<std::uint32_t>& idx, std::size_t b, std::size_t e,
                     std::span<const Vec2> points, Box box, Box bounds, int first, int k);
  struct TileSums;
  std::int32_t build_tiles(const TileSums& sums, int x0, int y0, int x1, int y1, Box bounds,
                           int first, int k);
  std::vector<Cut> cuts_;  ///< cuts_[0] is the root (when count > 1)
  std::vector<Box> boxes_;
};

}  // namespace fleetsim
