// The world, split as in MuJoCo: WorldModel (built once from the experiment, never changed)
// and WorldState (everything that changes, in columns).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fleetsim/controller.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// A robot kind: data, not a class. Heterogeneous swarms mix kinds.
struct RobotKind {
  std::string name;
  double radius_m = 0.035;
  double max_speed_m_per_s = 0.15;       ///< limit on the body's linear speed
  double max_wheel_speed_m_per_s = 0.15; ///< limit on each wheel command
  double wheel_distance_m = 0.053;       ///< axle length (differential drive)
  double proximity_range_m = 0.1;        ///< from the body surface; 0 = no proximity sensors
};

/// A declared controller: a built-in or plug-in type and its parameters.
struct ControllerDecl {
  std::string id;    ///< the name robots refer to
  std::string type;  ///< registry name, e.g. "diffusion"
  Params params;
};

/// A physics engine's region (axis-aligned box, metres).
struct EngineRegion {
  std::string id;
  Vec2 min, max;
};

/// Built once, never changed during a run; shared read-only by every thread.
struct WorldModel {
  std::string name;       ///< experiment file
  std::uint64_t seed = 0;
  SimTime tick_period_ns = 100'000'000;
  Tick length_ticks = 0;  ///< 0 = until the loop functions end the run

  Vec2 arena_center;
  double arena_width_m = 0, arena_height_m = 0;
  Vec2 arena_min() const { return {arena_center.x - arena_width_m / 2, arena_center.y - arena_height_m / 2}; }
  Vec2 arena_max() const { return {arena_center.x + arena_width_m / 2, arena_center.y + arena_height_m / 2}; }

  /// Static obstacles: walls, box sides, bitmap edges, arena border. Shared by all engines.
  std::vector<Segment> segments;
  /// Filled boxes (for "inside an obstacle" tests), as 4 corners CCW.
  std::vector<std::array<Vec2, 4>> boxes;
  /// The bitmap field (width 0 = none): 1 = obstacle, row-major from the top row.
  int bitmap_width = 0, bitmap_height = 0;
  double bitmap_resolution_m = 0;
  Vec2 bitmap_top_left;
  std::vector<std::uint8_t> bitmap;
  std::size_t bitmap_segment_count = 0;  ///< segments[0..n) come from the bitmap

  std::vector<RobotKind> kinds;
  std::vector<ControllerDecl> controllers;
  std::vector<EngineRegion> engines;  ///< at least one; regions tile the arena
  std::vector<std::string> object_classes;

  double max_radius_m() const;
  /// True when `p` lies in a filled obstacle (black pixel or inside a box).
  bool inside_obstacle(Vec2 p) const;
  /// Index of the engine owning point p (first region containing it; clamped to the arena).
  int engine_at(Vec2 p) const;
};

/// Interned strings (tags). Index 0 is "". Only grows during a run, so indices stay valid and
/// logs can write the table incrementally. Written only on the main thread or under the
/// sense+control phase's per-worker staging (see Simulation).
class TagTable {
 public:
  TagTable() { strings_.emplace_back(); index_.emplace("", 0); }
  std::uint32_t intern(const std::string& s);
  const std::string& str(std::uint32_t i) const { return strings_[i]; }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

inline constexpr std::uint32_t kNoIndex = 0xffffffffu;

/// Everything that changes, in columns indexed by a dense robot index (robots kept sorted by
/// id, so iteration order is a function of the experiment only). Why columns: the hot phases
/// stream through x/y/theta and the readings of every robot each tick; each phase writes only
/// its own robot's row, from whichever worker owns that index range.
struct WorldState {
  Tick tick = 0;
  std::string status;
  bool end_requested = false;
  TagTable tags;
  EntityId next_id = 0;

  // Robots (dense index r).
  std::vector<EntityId> robot_id;
  std::vector<std::uint16_t> robot_kind;
  std::vector<std::uint16_t> robot_controller;  ///< index into WorldModel::controllers
  std::vector<std::uint8_t> robot_engine;       ///< owning physics engine
  std::vector<double> x, y, theta;              ///< metres, radians
  std::vector<double> cmd_left, cmd_right;      ///< wheel commands, m/s
  std::vector<float> proximity;                 ///< kProximityCount per robot
  std::vector<float> contact_angle;             ///< kMaxContacts per robot
  std::vector<std::uint8_t> contact_count;
  std::vector<float> realization;               ///< degree of realization of last motion
  std::vector<std::uint32_t> robot_tag;
  std::vector<Color> led;
  std::vector<std::string> robot_name;          ///< the user's id string

  // Objects (dense index o), sorted by id.
  std::vector<EntityId> object_id;
  std::vector<std::uint16_t> object_class;
  std::vector<double> object_x, object_y, object_size;
  std::vector<std::uint32_t> object_tag;
  std::vector<std::string> object_name;

  // Entity id -> dense index (robots and objects share the id space).
  std::vector<std::uint32_t> index_of;
  std::vector<std::uint8_t> is_object;

  std::size_t robot_count() const { return robot_id.size(); }
  std::size_t object_count() const { return object_id.size(); }
  /// Appends a robot (ids are increasing, so order stays sorted). Returns its id.
  EntityId add_robot(std::uint16_t kind, std::uint16_t controller, Vec2 p, double heading,
                     std::uint32_t tag, const std::string& name);
  EntityId add_object(std::uint16_t cls, Vec2 p, double size, std::uint32_t tag,
                      const std::string& name);
  /// Removes a robot, keeping the others in id order. O(N).
  void remove_robot(EntityId id);
  void remove_object(EntityId id);
  std::uint32_t robot_index(EntityId id) const;   ///< kNoIndex if not a live robot
  std::uint32_t object_index(EntityId id) const;  ///< kNoIndex if not a live object

  /// A hash of every column (the determinism tests compare it across thread counts).
  std::uint64_t hash() const;

  /// Calls f(column, values_per_robot) for every robot column: the one list that removal,
  /// hashing and any other whole-state pass share, so a new column cannot be forgotten.
  template <class Self, class F>
  static void for_each_robot_column(Self& s, F&& f) {
    f(s.robot_id, 1);
    f(s.robot_kind, 1);
    f(s.robot_controller, 1);
    f(s.robot_engine, 1);
    f(s.x, 1);
    f(s.y, 1);
    f(s.theta, 1);
    f(s.cmd_left, 1);
    f(s.cmd_right, 1);
    f(s.proximity, kProximityCount);
    f(s.contact_angle, kMaxContacts);
    f(s.contact_count, 1);
    f(s.realization, 1);
    f(s.robot_tag, 1);
    f(s.led, 1);
    f(s.robot_name, 1);
  }
  /// Same for the object columns.
  template <class Self, class F>
  static void for_each_object_column(Self& s, F&& f) {
    f(s.object_id, 1);
    f(s.object_class, 1);
    f(s.object_x, 1);
    f(s.object_y, 1);
    f(s.object_size, 1);
    f(s.object_tag, 1);
    f(s.object_name, 1);
  }

 private:
  void reindex_robots(std::size_t from);
  void reindex_objects(std::size_t from);
};

}  // namespace fleetsim
