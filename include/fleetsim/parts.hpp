// fleetsim public SDK: robot parts (sensors and actuators) and what controllers see of them.
//
// A robot kind is a body plus a list of parts, each created by the registry from its type
// name (built-in or from a plug-in library), one instance per kind that lists it:
//
//   <kind name="scout" radius="0.05" max_speed="0.2">
//     <sensor type="proximity" rays="8" range="0.1"/>
//     <actuator type="differential_drive" axle_length="0.053"/>
//   </kind>
//
// At build time each part reads its parameters and declares the per-robot columns it owns
// (PartSetup::column). During a run, a sensor computes one robot's readings in the sense phase
// (Sensor::sense) and an actuator exposes one robot's command storage to the controller
// (Actuator::bind), then applies the commands in the act phase (Actuator::act). Both are
// called concurrently for different robots: a call writes only its robot's rows of the
// part's own columns, or per-worker scratch of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetsim/columns.hpp"
#include "fleetsim/random.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

class Params;

/// A handle on a declared column (index into the run's robot column list).
using ColumnHandle = std::uint32_t;
inline constexpr ColumnHandle kNoColumn = 0xffffffffu;

/// A received range-and-bearing message (ARGoS's range_and_bearing sensor).
struct RabMessage {
  EntityId sender = kNoEntity;
  std::span<const std::uint8_t> data;  ///< the sender's payload of the previous tick
  float range_m = 0;                   ///< centre to centre, metres
  float horizontal_bearing = 0;        ///< radians, CCW from the receiver's heading
  float vertical_bearing = 0;          ///< radians, up from the receiver's horizontal plane
};

/// A coloured blob seen by a camera: one lit LED of another robot.
struct Blob {
  Color color;
  float distance_m = 0;  ///< from the camera (robot centre) to the LED
  float angle = 0;       ///< radians, CCW from the robot's heading
};

/// What a sensor gives a controller for one robot in one tick. Which fields a sensor fills is
/// part of its documentation (`fleetsim list`); the others stay empty. Valid until the
/// controller's step returns.
struct SensorView {
  std::string_view name;             ///< the name in the kind (defaults to the type)
  std::string_view type;             ///< the registry type, e.g. "proximity"
  std::span<const float> values;     ///< readings (proximity, ground, light, ...)
  std::span<const float> angles;     ///< one per reading, radians CCW from the heading
  std::span<const Vec2> directions;  ///< unit vectors of `angles` in the robot frame
  std::span<const double> reals;     ///< double-precision readings (e.g. a pose: x, y, theta)
  std::span<const RabMessage> messages;
  std::span<const Blob> blobs;
  float scalar = 0;         ///< one number (e.g. the degree of realization)
  bool* enabled = nullptr;  ///< sensors that can be switched on and off
};

/// What a controller writes to drive one actuator of its robot in one tick.
struct ActuatorView {
  std::string_view name;
  std::string_view type;
  std::span<double> values;           ///< e.g. differential_drive: left, right wheel m/s
  std::span<Color> colors;            ///< e.g. leds: one per LED
  std::span<std::uint8_t> data;       ///< e.g. range_and_bearing: the payload to broadcast
  std::span<const double> constants;  ///< documented per type, e.g. axle length, max speed
};

/// The DEECo playground's action types (its Action.Type), as the `deeco_wheels` actuator's
/// echo gives them: the collision sensor's `reals` = speed, angle, type code (the enum's value).
enum class DeecoActionType : std::uint8_t { kStay = 0, kMove = 1, kRotate = 2, kRotateAndMove = 3 };

/// "stay", "move", "rotate", "rotate_and_move" (what Lua's robot.collision.action.type shows).
inline const char* to_string(DeecoActionType type) {
  switch (type) {
    case DeecoActionType::kStay:
      return "stay";
    case DeecoActionType::kMove:
      return "move";
    case DeecoActionType::kRotate:
      return "rotate";
    case DeecoActionType::kRotateAndMove:
      return "rotate_and_move";
  }
  return "stay";
}

/// The outline of a body in the plane.
enum class BodyShape : std::uint8_t {
  kCircle,  ///< radius_m
  kBox,     ///< length_m (along the heading) x width_m; radius_m is its half-diagonal
};

/// A robot kind as parts and controllers see it. A kind without parts is a passive body (the
/// built-in `cylinder` and `box`): robots push it, others' sensors see it.
struct KindInfo {
  std::string name;
  double radius_m = 0;  ///< a circle's radius; a box's bounding circle (what sensors see)
  double height_m = 0;
  double max_speed_m_per_s = 0;
  std::string engine;  ///< physics engine type that accepts this body
  std::uint16_t index = 0;
  double mass_kg = 0;  ///< 0: the engine's default (dynamics2d's robot_mass)
  BodyShape shape = BodyShape::kCircle;
  double length_m = 0, width_m = 0;  ///< kBox only
  bool passive = false;              ///< no sensors and no actuators
  bool flies = false;                ///< a flyer: needs a 3D engine (pointmass3d), has an altitude
};

/// One robot during a phase: its dense row (columns) and its slot in the spatial grid.
struct RobotRef {
  std::uint32_t row = 0;
  std::uint32_t slot = 0;
  EntityId id = kNoEntity;
};

/// Most robots the engine hands to a part's batch methods at once.
inline constexpr std::size_t kPartBatch = 64;

/// The world as sensors see it during the sense phase (read-only, but for the calling part's
/// own columns of the robot being sensed). Implemented by the engine.
class WorldView {
 public:
  virtual ~WorldView() = default;
  virtual std::size_t robot_count() const = 0;
  virtual EntityId robot_id(std::uint32_t row) const = 0;
  virtual Vec2 robot_position(std::uint32_t row) const = 0;
  virtual double robot_heading(std::uint32_t row) const = 0;
  virtual const KindInfo& robot_kind(std::uint32_t row) const = 0;
  /// Start of a column's storage (row r's elements at r * width); cast to the column's type.
  virtual void* column_data(ColumnHandle column) const = 0;
  /// Elements per robot of a column: the widest any kind declared (row r starts at r * width).
  virtual std::uint32_t column_width(ColumnHandle column) const = 0;
  /// Calls f(row) for every robot whose centre may lie within `reach` of p (a superset; test
  /// the distance yourself), in an order that depends on the grid: sort what you keep.
  virtual void robots_near(Vec2 p, double reach,
                           const std::function<void(std::uint32_t)>& f) const = 0;
  /// Distance along the ray o + t u (|u| = 1) to the first static obstacle, or max_t.
  virtual double cast_ray_obstacles(Vec2 o, Vec2 u, double max_t) const = 0;
  /// True when the segment a-b crosses a static obstacle (wall, box side, bitmap edge).
  virtual bool line_blocked(Vec2 a, Vec2 b) const = 0;
  Vec2 arena_min, arena_max;

  template <class T>
  T* column(ColumnHandle c) const {
    return static_cast<T*>(column_data(c));
  }
};

/// The context of one sense or act call.
struct PartContext {
  const WorldView* world = nullptr;
  Tick tick = 0;
  double dt_s = 0;
  std::uint64_t seed = 0;
  int worker = 0;  ///< the calling worker, in [0, workers): index per-worker scratch with it
};

/// Given to a part once per kind at build time.
class PartSetup {
 public:
  virtual ~PartSetup() = default;
  virtual const KindInfo& kind() const = 0;
  /// The part's XML parameters (checked against its ParamDocs, defaults filled in).
  virtual const Params& params() const = 0;
  /// The part's name in the kind (its `name` attribute, or its type).
  virtual const std::string& name() const = 0;
  /// Declares a column this part owns. A column of the same name declared by the same part
  /// type in another kind is shared (widths merge to the largest); any other clash is an
  /// error at load. Returns its handle.
  virtual ColumnHandle column(const ColumnDesc& desc) = 0;
  /// A column declared by the body or another part (e.g. "x"), kNoColumn if none.
  virtual ColumnHandle find_column(const std::string& name) const = 0;
  /// How far this part looks beyond the body's surface, metres, when it reads neighbours
  /// through the spatial index's 3x3 block of cells (short-range sensors such as proximity
  /// rays; the cells are made at least this large). Long-range parts (range-and-bearing,
  /// cameras) query WorldView::robots_near instead and need not call this.
  virtual void set_near_reach(double metres) = 0;
  /// Number of workers (for per-worker scratch).
  virtual int workers() const = 0;
  /// Reports a parameter problem (shown as `file:line: error: ...` at load).
  virtual void error(const std::string& message) = 0;
};

/// A sensor plug-in.
class Sensor {
 public:
  virtual ~Sensor() = default;
  /// Reads parameters, declares columns. Once per kind, before the run.
  virtual void setup(PartSetup& setup) = 0;
  /// After setup: fills the fields of `out` that are the same for every robot of the kind and
  /// every tick (e.g. proximity ray angles), pointing at the part's own data. Controllers see
  /// them before the first step (ControllerSetup::sensors). The default fills nothing.
  virtual void describe(SensorView& out) const {}
  /// Sense phase: computes `robot`'s readings and points `out`'s spans at them (own columns
  /// or per-worker scratch). Called concurrently for different robots. `out` may still hold
  /// the previous robot's view of this part: set every field you use, every time.
  virtual void sense(const PartContext& ctx, RobotRef robot, SensorView& out) = 0;

  /// True when this sensor's views stay valid while it senses other robots (they point into
  /// columns or the part's own constant data, not per-worker scratch): the engine may then
  /// call sense_batch() on up to kPartBatch robots of one kind before their controllers step.
  /// Otherwise sense() runs just before each robot's controller.
  virtual bool batches() const { return false; }
  /// sense() for each of `robots` (all of this part's kind), robot k's view at
  /// out[k * stride]. Override it to save a virtual call per robot (the built-in parts do).
  virtual void sense_batch(const PartContext& ctx, std::span<const RobotRef> robots,
                           SensorView* out, std::size_t stride) {
    for (std::size_t k = 0; k < robots.size(); ++k) sense(ctx, robots[k], out[k * stride]);
  }
};

/// An actuator plug-in.
class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual void setup(PartSetup& setup) = 0;
  /// As Sensor::describe: the view's fields that never change (its `constants`).
  virtual void describe(ActuatorView& out) const {}
  /// Sense+control phase, before the controller runs: points `out` at `robot`'s commands.
  virtual void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) = 0;
  /// Act phase: applies `robot`'s commands to its state (e.g. a LED command becomes the
  /// colour others see). Called concurrently for different robots.
  virtual void act(const PartContext& ctx, RobotRef robot) {}
  /// False when act() does nothing (the engine then skips this part in the act phase).
  virtual bool acts() const { return true; }

  /// As Sensor::batches(), for bind(): true when the views stay valid while other robots are
  /// bound (they point into the part's command columns).
  virtual bool batches() const { return false; }
  /// bind() for each of `robots` (all of this part's kind), robot k's view at out[k * stride].
  virtual void bind_batch(const PartContext& ctx, std::span<const RobotRef> robots,
                          ActuatorView* out, std::size_t stride) {
    for (std::size_t k = 0; k < robots.size(); ++k) bind(ctx, robots[k], out[k * stride]);
  }
  /// act() for each of `robots` (all of this part's kind; the engine always calls this one).
  virtual void act_batch(const PartContext& ctx, std::span<const RobotRef> robots) {
    for (const RobotRef& r : robots) act(ctx, r);
  }
};

/// Base for a sensor class `Part` (final, CRTP) whose views point into columns or its own
/// constant data: batches() is true and sense_batch() calls Part::sense directly (no virtual
/// call per robot). `class MySensor final : public BatchedSensor<MySensor> { ... };`
template <class Part>
class BatchedSensor : public Sensor {
 public:
  bool batches() const override { return true; }
  void sense_batch(const PartContext& ctx, std::span<const RobotRef> robots, SensorView* out,
                   std::size_t stride) override {
    Part& self = static_cast<Part&>(*this);
    for (std::size_t k = 0; k < robots.size(); ++k)
      self.Part::sense(ctx, robots[k], out[k * stride]);
  }
};

/// The same for an actuator class whose views point into its command columns: bind_batch()
/// and act_batch() call Part::bind and Part::act directly.
template <class Part>
class BatchedActuator : public Actuator {
 public:
  bool batches() const override { return true; }
  void bind_batch(const PartContext& ctx, std::span<const RobotRef> robots, ActuatorView* out,
                  std::size_t stride) override {
    Part& self = static_cast<Part&>(*this);
    for (std::size_t k = 0; k < robots.size(); ++k)
      self.Part::bind(ctx, robots[k], out[k * stride]);
  }
  void act_batch(const PartContext& ctx, std::span<const RobotRef> robots) override {
    Part& self = static_cast<Part&>(*this);
    for (const RobotRef& r : robots) self.Part::act(ctx, r);
  }
};

}  // namespace fleetsim
