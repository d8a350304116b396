// Checks that a robot fits where it is placed: inside the arena, clear of obstacles and of
// the robots placed before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "physics/kinematics2d.hpp"
#include "physics/spatial_grid.hpp"
#include "scenario/robot_plan.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// Places bodies without overlap: a bucket grid over the arena for robot-robot checks, and
/// the static segment grid for obstacles.
class Placement {
 public:
  /// `bodies`: how many will be placed (the grid gets about one cell per body).
  Placement(const WorldModel& m, double rmax, std::size_t bodies) : model_(m) {
    Vec2 lo = m.arena_min(), hi = m.arena_max();
    // No robot kind in the run (rmax 0): no robot is placed, and robot-sized cells would be
    // 1 mm ones, hundreds of MB and seconds up to the cap below; one cell does.
    cell_ = rmax > 0 ? std::max(2 * rmax + 1e-6, 1e-3) : std::max({hi.x - lo.x, hi.y - lo.y, 1e-3});
    lo_ = lo;
    // Counted in doubles: a cell count can exceed an int before the cap makes cells larger.
    // About a cell per body at most (robot-sized cells in a dense swarm were 13 bytes a robot
    // at a million, more than the robots' own placement records).
    auto cells = [&](double extent) { return std::max(1.0, std::ceil(extent / cell_)); };
    const double most = std::clamp(static_cast<double>(bodies), 4096.0, 64e6);
    while (cells(hi.x - lo.x) * cells(hi.y - lo.y) > most) cell_ *= 1.5;
    nx_ = static_cast<int>(cells(hi.x - lo.x));
    ny_ = static_cast<int>(cells(hi.y - lo.y));
    head_.assign(static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_), -1);
    segs_.build(m.segments, lo, hi, cell_, rmax + 1e-6);
  }

  /// "" when a robot of radius r fits at p; otherwise what it hits (a robot placed by hand by
  /// its name in `named`, whose index it was added with).
  std::string check(Vec2 p, double r, const std::vector<PlannedRobot>& named) const {
    Vec2 lo = model_.arena_min(), hi = model_.arena_max();
    if (p.x - r < lo.x || p.x + r > hi.x || p.y - r < lo.y || p.y + r > hi.y)
      return "lies outside the arena";
    if (model_.inside_obstacle(p)) return "lies inside an obstacle";
    for (std::uint32_t si : segs_.near(p))
      if (distance_to_segment(p, segs_.segments()[si]) < r + 2 * kSkin)
        return "overlaps an obstacle";
    int cx = cell_x(p.x), cy = cell_y(p.y);
    for (int gy = std::max(0, cy - 1); gy <= std::min(ny_ - 1, cy + 1); ++gy)
      for (int gx = std::max(0, cx - 1); gx <= std::min(nx_ - 1, cx + 1); ++gx)
        for (int k = head_[static_cast<std::size_t>(gy) * nx_ + gx]; k >= 0; k = next_[k]) {
          const auto slot = static_cast<std::size_t>(k);
          Vec2 d = p - pos_[slot];
          double rs = r + model_.kinds[kind_[slot]].radius_m + 2 * kSkin;
          if (dot(d, d) < rs * rs)
            return row_[slot] == kNoIndex ? "overlaps another robot"
                                          : "overlaps robot '" + named[row_[slot]].name + "'";
        }
    return "";
  }
  /// Records a placed robot of kind `kind`: the robot placed by hand `row` of `named`, or
  /// kNoIndex for one placed at random; returns its slot.
  int add(Vec2 p, std::uint16_t kind, std::uint32_t row) {
    int k = static_cast<int>(pos_.size());
    pos_.push_back(p);
    kind_.push_back(kind);
    row_.push_back(row);
    std::size_t c = static_cast<std::size_t>(cell_y(p.y)) * nx_ + cell_x(p.x);
    next_.push_back(head_[c]);
    head_[c] = k;
    return k;
  }
  /// Room for `more` robots (no growth while they are placed).
  void reserve(std::size_t more) {
    pos_.reserve(pos_.size() + more);
    kind_.reserve(kind_.size() + more);
    row_.reserve(row_.size() + more);
    next_.reserve(next_.size() + more);
  }

 private:
  int cell_x(double x) const {
    return std::clamp(static_cast<int>((x - lo_.x) / cell_), 0, nx_ - 1);
  }
  int cell_y(double y) const {
    return std::clamp(static_cast<int>((y - lo_.y) / cell_), 0, ny_ - 1);
  }
  const WorldModel& model_;
  double cell_;
  Vec2 lo_;
  int nx_, ny_;
  // Per robot: 30 bytes with the grid (a million robots' placement records are the parse's
  // peak over the world it builds).
  std::vector<int> head_, next_;
  std::vector<Vec2> pos_;
  std::vector<std::uint16_t> kind_;
  std::vector<std::uint32_t> row_;  ///< its index in `named`, for names in errors
  SegmentGrid segs_;
};

}  // namespace fleetsim
