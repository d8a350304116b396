// The world, split as in MuJoCo: WorldModel (built once from the experiment, never changed)
// and WorldState (everything that changes, in columns).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/diagnostics.hpp"
#include "core/id_map.hpp"
#include "fleetsim/controller.hpp"
#include "fleetsim/types.hpp"
#include "world/column_store.hpp"

namespace fleetsim {

/// Maximum number of contacts the collision sensor reports per tick.
inline constexpr int kMaxContacts = 4;

/// A part (sensor or actuator) listed in a robot kind: a registry type and its parameters.
struct PartDecl {
  std::string name;       ///< unique within the kind; defaults to the type
  std::string type;       ///< registry name, e.g. "proximity_noisy"
  std::string interface;  ///< what it provides, e.g. "proximity" (from the registry)
  Params params;          ///< checked against the type's ParamDocs, defaults filled in
  SourceLocation where;
};

/// A robot kind is a composition: a body (KindInfo: radius, speed limit, height, the physics
/// engine type that accepts it) plus sensors and actuators from the registry. Data, not a
/// class; heterogeneous swarms mix kinds. Built-in kinds live in src/robots/.
struct RobotKind : KindInfo {
  std::vector<PartDecl> sensors;
  std::vector<PartDecl> actuators;
  SourceLocation where;
  /// False for a built-in kind the experiment file never names: it has no parts and no robots
  /// in the run, and does not size the spatial grid (a larger unused kind would slow it down).
  bool in_run = true;
  std::uint8_t engine_type = 0;  ///< index of `engine` in WorldModel::engine_types
  /// ARGoS's `dynamics2d` model of the robot: its mass (kg) and the largest force (N) and
  /// torque (N m) its velocity control exerts (`dynamics2d_footbot_model.cpp`,
  /// `dynamics2d_epuck_model.cpp` in ARGoS). 0: none, the engine's region defaults apply.
  /// Read by dynamics2d's model="argos" only; an explicit `mass` (mass_kg) comes first.
  double argos_mass_kg = 0, argos_max_force_n = 0, argos_max_torque_n_m = 0;
};

/// A declared controller: a built-in or plug-in type and its parameters.
struct ControllerDecl {
  std::string id;    ///< the name robots refer to
  std::string type;  ///< registry name, e.g. "diffusion"
  Params params;
  SourceLocation where;
};

/// A physics engine instance (an element of <physics>): its region (axis-aligned box,
/// metres), its type and parameters.
struct EngineRegion {
  std::string id;
  Vec2 min, max;
  std::string type = "kinematics2d";  ///< registry name
  std::uint8_t type_index = 0;        ///< into WorldModel::engine_types
  Params params;                      ///< the element's attributes but id and region
  SourceLocation where;
};

/// A light (ARGoS's light entity): a point source at a height, static, held by every process
/// like the obstacles. Light sensors read it (docs/robot-parts.md, `footbot_light`).
struct Light {
  std::string id;
  Vec2 position;         ///< metres
  double z_m = 0;        ///< height above the floor, metres
  Color color;           ///< drawn by the viewer; light sensors see every colour alike
  double intensity = 1;  ///< ARGoS's reference intensity: distances are divided by it
};

/// The floor's colour, which ground sensors read: a plain colour, or an image stretched over
/// a rectangle (the plain colour outside it). Static, on every process.
struct Floor {
  Color color{255, 255, 255, 255};  ///< everywhere without an image, and outside it
  int width = 0, height = 0;        ///< the image's pixels (0: no image)
  std::vector<Color> pixels;        ///< row-major from the top row
  Vec2 min, max;                    ///< the rectangle the image covers, metres
  /// The colour under point p. Pixel column floor((x - min.x) * width / (max.x - min.x)), row
  /// counted from the bottom likewise (as ARGoS samples its floor image).
  Color color_at(Vec2 p) const;
};

/// Built once, never changed during a run; shared read-only by every thread.
struct WorldModel {
  std::string name;  ///< experiment file
  std::uint64_t seed = 0;
  /// <framework processing_time>: the DEECo playground's processingTime. Every tick runs
  /// processing_time + 1 rounds of ensembles, controllers and object behaviours on the same
  /// sensed world before the actuators act (docs/experiment-format.md, <framework>).
  int processing_time = 0;
  SimTime tick_period_ns = 100'000'000;
  Tick length_ticks = 0;  ///< 0 = until the loop functions end the run

  Vec2 arena_center;
  double arena_width_m = 0, arena_height_m = 0;
  Vec2 arena_min() const {
    return {arena_center.x - arena_width_m / 2, arena_center.y - arena_height_m / 2};
  }
  Vec2 arena_max() const {
    return {arena_center.x + arena_width_m / 2, arena_center.y + arena_height_m / 2};
  }

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
  /// One per segment: the obstacle's height, metres (infinity: as tall as anything; the
  /// bitmap and the arena's border). Only light sensors read it: a ray to a light passes over
  /// an obstacle lower than the ray where it crosses.
  std::vector<double> segment_heights;
  std::vector<Light> lights;  ///< in the file's order
  Floor floor;

  std::vector<RobotKind> kinds;
  std::vector<ControllerDecl> controllers;
  std::vector<EngineRegion> engines;      ///< at least one; each type's regions tile the arena
  std::vector<std::string> engine_types;  ///< the types of `engines`, in order of first use
  std::vector<std::string> object_classes;
  /// <knowledge>: every robot's knowledge fields, in declaration order (field i's column is
  /// `knowledge.<name>`, f64 x size), docs/experiment-format.md.
  std::vector<std::string> knowledge_names;
  std::vector<std::uint32_t> knowledge_sizes;
  /// <layers>: the environment layers, in declaration order (layer i's column is
  /// `layer.<name>`, f64 x size), docs/experiment-format.md.
  std::vector<std::string> layer_names;
  std::vector<std::uint32_t> layer_sizes;

  double max_radius_m() const;
  /// The height of the tallest kind in the run that does not fly (what can block a light ray
  /// low over the floor).
  double tallest_ground_body_m() const;
  /// True when `p` lies in a filled obstacle (black pixel or inside a box).
  bool inside_obstacle(Vec2 p) const;
  /// Index of the engine of kind k's type owning point p (first region of that type
  /// containing it; outside them all, the nearest).
  int engine_at(Vec2 p, std::uint16_t k) const;
};

/// Interned strings (tags). Index 0 is "". Only grows during a run, so indices stay valid and
/// logs can write the table incrementally. Written only on the main thread or under the
/// sense+control phase's per-worker staging (see Simulation).
class TagTable {
 public:
  TagTable() {
    strings_.emplace_back();
    index_.emplace("", 0);
  }
  std::uint32_t intern(const std::string& s);
  const std::string& str(std::uint32_t i) const { return strings_[i]; }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

inline constexpr std::uint32_t kNoIndex = 0xffffffffu;

/// The body's columns, declared by the engine for every robot (world.cpp, body_columns()),
/// first in the robot column list and so at these fixed handles. Parts' columns follow.
namespace body {
enum : ColumnHandle {
  kId,            ///< u32 entity id
  kKind,          ///< u16 index into WorldModel::kinds
  kController,    ///< u16 index into WorldModel::controllers
  kEngine,        ///< u8 owning physics engine (region)
  kX,             ///< f64 metres
  kY,             ///< f64 metres
  kTheta,         ///< f64 radians
  kSpeedCmd,      ///< f64 commanded linear speed, m/s (locomotion actuators, act phase)
  kTurnCmd,       ///< f64 commanded turn rate, rad/s (same)
  kRealization,   ///< f32 degree of realization of the last motion (physics)
  kContactAngle,  ///< f32 x kMaxContacts, contact angles at the end of the last tick (physics)
  kContactCount,  ///< u8 (physics)
  kTag,           ///< tag
  kName,          ///< string, the user's id
  kCount
};
}  // namespace body
/// The object columns, at fixed handles.
namespace object {
enum : ColumnHandle { kId, kClass, kX, kY, kSize, kTag, kName, kCount };
}  // namespace object

/// The body's and the objects' column declarations (the one list; see fleetsim/columns.hpp).
const std::vector<ColumnDesc>& body_columns();
const std::vector<ColumnDesc>& object_columns();

/// Everything that changes, in columns indexed by a dense robot index (robots kept sorted by
/// id, so iteration order is a function of the experiment only; a process of a partitioned
/// run appends the robots it takes in, see ids_in_order). Why columns: the hot phases
/// stream through x/y/theta and the readings of every robot each tick; each phase writes only
/// its own robot's rows, from whichever worker owns that index range. The robot columns are
/// the body's (fixed handles in `body`) followed by those the kinds' parts declare.
struct WorldState {
  WorldState();

  Tick tick = 0;
  std::string status;
  bool end_requested = false;
  TagTable tags;
  EntityId next_id = 0;

  ColumnStore robots;   ///< one row per robot
  ColumnStore objects;  ///< one row per object

  // Entity id -> dense index (robots and objects share the id space): a robot's row, an
  // object's row | kObjectRow, or kNoIndex. Use robot_index() and object_index(). A slot per
  // id of the world, or, on a process that holds only its part of a partitioned run
  // (make_index_sparse), per entity it holds.
  static constexpr std::uint32_t kObjectRow = 0x80000000u;
  IdMap<std::uint32_t> index_of{kNoIndex};
  /// From now on the index keeps the entities held only (no slot per id of the world).
  void make_index_sparse() {
    index_of.make_sparse([](EntityId) { return true; });
  }

  std::size_t robot_count() const { return robots.rows(); }
  std::size_t object_count() const { return objects.rows(); }
  /// Appends a robot (ids are increasing, so order stays sorted); its part columns are zero.
  EntityId add_robot(std::uint16_t kind, std::uint16_t controller, Vec2 p, double heading,
                     std::uint32_t tag, const std::string& name);
  /// The same, with id `id`, above the ids of the robots held (rows stay in id order); ids
  /// skipped are no one's here.
  void add_robot_at(EntityId id, std::uint16_t kind, std::uint16_t controller, Vec2 p,
                    double heading, std::uint32_t tag, const std::string& name);
  /// Ids up to `end` are taken (by robots this process does not hold).
  void skip_robot_ids_to(EntityId end) {
    if (end > next_id) next_id = end;
    index_of.cover(next_id);
  }
  EntityId add_object(std::uint16_t cls, Vec2 p, double size, std::uint32_t tag,
                      const std::string& name);
  /// Makes room for `more` robots beyond those there are (no growth, no slack while they are
  /// added).
  void reserve_robots(std::size_t more);
  /// Removes a robot, keeping the others in id order. O(N).
  void remove_robot(EntityId id);
  /// A process that holds only some robots of the world (docs/distributed.md, "What a
  /// process holds"): keeps the robots whose flag in `keep` (one per row) is set, in one pass.
  void retain_robots(std::span<const std::uint8_t> keep);
  /// The same: takes in the robots `ids` (increasing, none held, all below next_id) as rows
  /// of zeros but their id, after the others (no pass over the rows; ids_in_order turns false
  /// when one is below a robot held); returns their rows.
  std::vector<std::uint32_t> insert_robots(std::span<const EntityId> ids);
  /// The same: a robot added elsewhere takes the next id here too, without a row.
  EntityId skip_robot_id() {
    index_of.cover(next_id + 1);
    return next_id++;
  }
  /// The rows are in id order: always, but on a process that took robots in (insert_robots).
  /// The spatial grid then orders each cell by id, and the parts that list other robots sort
  /// them by id, so every phase visits robots in id order either way.
  bool ids_in_order = true;
  void remove_object(EntityId id);
  std::uint32_t robot_index(EntityId id) const;   ///< kNoIndex if not a live robot
  std::uint32_t object_index(EntityId id) const;  ///< kNoIndex if not a live object

  /// A hash of every hashed column (the determinism tests compare it across thread counts).
  /// Robots enter it as one sum per column of digests of (id, column, row): the robots'
  /// rows in any order or spread over processes give the same hash (robot_digests).
  std::uint64_t hash() const;
  /// The per-column digest sums of the robot rows flagged in `take` (all if empty), one per
  /// robot column (ColumnStore::add_row_digests).
  std::vector<std::uint64_t> robot_digests(std::span<const std::uint8_t> take = {}) const;
  /// hash() of a world whose robots are `robots` rows with digest sums `digests` (this state
  /// held only a part of them): the tick, status, objects and tags are this state's.
  std::uint64_t hash_with(std::size_t robots, std::span<const std::uint64_t> digests) const;

  // The body's columns, typed (spans over all rows; re-fetch after adding robots).
  std::span<EntityId> robot_id() { return robots.span<EntityId>(body::kId); }
  std::span<const EntityId> robot_id() const { return robots.span<EntityId>(body::kId); }
  std::span<std::uint16_t> robot_kind() { return robots.span<std::uint16_t>(body::kKind); }
  std::span<const std::uint16_t> robot_kind() const {
    return robots.span<std::uint16_t>(body::kKind);
  }
  std::span<std::uint16_t> robot_controller() {
    return robots.span<std::uint16_t>(body::kController);
  }
  std::span<const std::uint16_t> robot_controller() const {
    return robots.span<std::uint16_t>(body::kController);
  }
  std::span<std::uint8_t> robot_engine() { return robots.span<std::uint8_t>(body::kEngine); }
  std::span<const std::uint8_t> robot_engine() const {
    return robots.span<std::uint8_t>(body::kEngine);
  }
  std::span<double> x() { return robots.span<double>(body::kX); }
  std::span<const double> x() const { return robots.span<double>(body::kX); }
  std::span<double> y() { return robots.span<double>(body::kY); }
  std::span<const double> y() const { return robots.span<double>(body::kY); }
  std::span<double> theta() { return robots.span<double>(body::kTheta); }
  std::span<const double> theta() const { return robots.span<double>(body::kTheta); }
  std::span<double> speed_cmd() { return robots.span<double>(body::kSpeedCmd); }
  std::span<const double> speed_cmd() const { return robots.span<double>(body::kSpeedCmd); }
  std::span<double> turn_cmd() { return robots.span<double>(body::kTurnCmd); }
  std::span<const double> turn_cmd() const { return robots.span<double>(body::kTurnCmd); }
  std::span<float> realization() { return robots.span<float>(body::kRealization); }
  std::span<const float> realization() const { return robots.span<float>(body::kRealization); }
  std::span<float> contact_angle() { return robots.span<float>(body::kContactAngle); }
  std::span<const float> contact_angle() const { return robots.span<float>(body::kContactAngle); }
  std::span<std::uint8_t> contact_count() { return robots.span<std::uint8_t>(body::kContactCount); }
  std::span<const std::uint8_t> contact_count() const {
    return robots.span<std::uint8_t>(body::kContactCount);
  }
  std::span<std::uint32_t> robot_tag() { return robots.span<std::uint32_t>(body::kTag); }
  std::span<const std::uint32_t> robot_tag() const {
    return robots.span<std::uint32_t>(body::kTag);
  }
  StringColumn& robot_name() { return robots.strings(body::kName); }
  const StringColumn& robot_name() const { return robots.strings(body::kName); }

  std::span<EntityId> object_id() { return objects.span<EntityId>(object::kId); }
  std::span<const EntityId> object_id() const { return objects.span<EntityId>(object::kId); }
  std::span<std::uint16_t> object_class() { return objects.span<std::uint16_t>(object::kClass); }
  std::span<const std::uint16_t> object_class() const {
    return objects.span<std::uint16_t>(object::kClass);
  }
  std::span<double> object_x() { return objects.span<double>(object::kX); }
  std::span<const double> object_x() const { return objects.span<double>(object::kX); }
  std::span<double> object_y() { return objects.span<double>(object::kY); }
  std::span<const double> object_y() const { return objects.span<double>(object::kY); }
  std::span<double> object_size() { return objects.span<double>(object::kSize); }
  std::span<const double> object_size() const { return objects.span<double>(object::kSize); }
  std::span<std::uint32_t> object_tag() { return objects.span<std::uint32_t>(object::kTag); }
  std::span<const std::uint32_t> object_tag() const {
    return objects.span<std::uint32_t>(object::kTag);
  }
  StringColumn& object_name() { return objects.strings(object::kName); }
  const StringColumn& object_name() const { return objects.strings(object::kName); }

 private:
  void reindex_robots(std::size_t from);
  void reindex_objects(std::size_t from);
};

}  // namespace fleetsim
