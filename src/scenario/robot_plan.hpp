// Where the experiment's robots go: the robots placed by hand (<robot>) and the random
// placements (<distribute>), planned at load and placed tile by tile (docs/experiment-format.md,
// "How <distribute> places robots").
//
// A random placement does not depend on the order its robots are drawn in a whole arena: the
// arena is cut into square tiles, each <distribute>'s count is split over the tiles in
// proportion to their free area (a bisection tree whose splits draw from counter-based
// streams), and each tile draws its own robots from its own stream, checked against the robots
// already placed in the tiles around it. Tiles are placed in four colours (a tile's colour is
// the parity of its column and row), so a tile waits only for its neighbours of lower colours,
// never for the whole arena. That lets a process of a partitioned run place only the tiles
// near its domain, and get the same robots, with the same ids, as a process that places all.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"
#include "fleetsim/types.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// The square tiles of the arena that placements are made in.
struct TileGrid {
  Vec2 lo;          ///< the arena's lower corner
  double side = 1;  ///< a tile's side (at least a robot's diameter and the contact skin)
  int nx = 0, ny = 0;
  double x_at(int tx) const { return lo.x + side * tx; }
  double y_at(int ty) const { return lo.y + side * ty; }
  int tile_x(double x) const;  ///< the column holding x (clamped to the grid)
  int tile_y(double y) const;
  std::size_t tiles() const { return static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny); }
  std::size_t at(int tx, int ty) const {
    return static_cast<std::size_t>(ty) * static_cast<std::size_t>(nx) +
           static_cast<std::size_t>(tx);
  }
};

/// A robot placed by hand, checked at load.
struct PlannedRobot {
  EntityId id = 0;
  std::uint16_t kind = 0, controller = 0;
  Vec2 p;
  double heading = 0;
  std::uint32_t tag = 0;
  std::string name;
  std::optional<Color> led;  ///< every LED of its kind's first leds part
};

/// One <distribute>: `count` robots of one kind, ids first_id.., drawn in the box [lo, hi] of
/// their centres.
struct DistributePlan {
  SourceLocation where;
  int index = 0;  ///< among the file's <distribute> elements (its random streams)
  EntityId first_id = 0;
  std::int64_t count = 0;
  std::uint16_t kind = 0, controller = 0;
  std::uint32_t tag = 0;
  std::string prefix;
  std::int64_t tries = 1000;
  double radius = 0;
  Vec2 lo, hi;           ///< where centres may go
  int tx0 = 0, ty0 = 0;  ///< the first tile of its range in the grid
  int nx = 0, ny = 0;    ///< its range's tiles
  /// Per tile of the range (row-major): how many robots, and the first one's number (its id
  /// is first_id + number); the tiles in id order (those with robots).
  std::vector<std::uint32_t> count_of, first_of, order;
  /// Tile t of the range (row-major) as a column and a row of the grid.
  int tile_x(std::uint32_t t) const {
    return tx0 + static_cast<int>(t % static_cast<std::uint32_t>(nx));
  }
  int tile_y(std::uint32_t t) const {
    return ty0 + static_cast<int>(t / static_cast<std::uint32_t>(nx));
  }
};

/// The error of a placement past ExperimentOverrides::max_placement_tries.
std::string too_many_placement_tries(std::int64_t limit);

/// Sets every LED of robot kind `k`'s first leds part, as shown and as commanded, on row
/// `row`; false when the kind has no LEDs.
bool set_robot_leds(const WorldModel& m, WorldState& st, std::uint16_t k, std::uint32_t row,
                    Color colour);

class RobotPlan {
 public:
  TileGrid grid;
  std::vector<PlannedRobot> robots;         ///< in id order
  std::vector<DistributePlan> distributes;  ///< in id order
  std::uint64_t seed = 0;
  /// A bound on the random tries of all placements together (ExperimentOverrides).
  std::optional<std::int64_t> max_tries;

  /// The tiles and the distributes' shares of them, once `robots` and `distributes` (their
  /// boxes and counts) are known.
  void plan(const WorldModel& m);
  /// How many robots in all.
  std::size_t total() const;
  /// Robots per tile of `grid`, both kinds of placement.
  std::vector<std::uint64_t> tile_counts() const;
  /// Places the robots and adds to `st` those in the tiles flagged in `wanted` (one flag per
  /// tile of `grid`; nullptr: every robot), in id order, ids as planned; st.next_id ends past
  /// the last id of the plan. Robots that do not fit are reported to `d` (returns false).
  bool place(const WorldModel& m, WorldState& st, const std::vector<std::uint8_t>* wanted,
             Diagnostics& d) const;
  /// A hash of the plan: processes that placed different parts of one plan agree on it.
  std::uint64_t fingerprint() const;
  /// Calls f(first id, count, tile) for every tile's run of a distribute's ids.
  void for_each_run(const std::function<void(EntityId, std::uint32_t, std::size_t)>& f) const;
};

}  // namespace fleetsim
