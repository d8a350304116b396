// fleetsim public SDK: environment layers (the DEECo playground's SensoryInputsProcessor).
//
// A layer is a named value per robot that the environment computes every tick from the robots,
// the objects and the field: a scalar field sampled at the robot (a temperature map), the
// distance to the nearest object of a tag (a charging station), an energy that drains as the
// robot moves and fills near a station, anything. It is declared in the experiment:
//
//   <layers> <layer name="heat" type="bitmap" file="heat.png" min="0" max="250"/> </layers>
//
// and implemented by a Layer plug-in (C++, PluginRegistry::add_layer) or a Lua script
// (type="lua", docs/lua-api.md, "Layers"). One instance per <layer> element. A robot's
// controller reads the layer by name (ControllerSetup::layer, RobotIO::layer; in Lua
// robot.layer(name, type)), as the playground's robots call getInputFromSensor(name, type).
//
// When: once per tick, after the loop functions' pre_step and before the ensembles and the
// robots' sensing (every round of the tick reads the same values), each layer in file order,
// on the run's main thread. A layer sees the world as the previous tick left it (the
// playground's processors likewise compute the inputs of a cycle from the positions the last
// one's actions gave). The results do not depend on the number of threads. A run on several
// processes is refused while the experiment declares layers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetsim/controller.hpp"
#include "fleetsim/random.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// A robot as a layer sees it.
struct LayerRobot {
  EntityId id = kNoEntity;
  std::string_view name;  ///< its id in the experiment
  std::string_view kind;
  Vec2 position;        ///< metres
  double heading = 0;   ///< radians, CCW from +x
  double radius_m = 0;  ///< its kind's radius
  std::string_view tag;
  /// A robot with deeco_wheels: its current action as its controller last set it (speed
  /// fraction, angle, then the actuator's extras), and the extras' names (its `extras`
  /// parameter): the playground's RobotPlacement.currentAction, an extinguisher's flag for
  /// instance. Empty for a robot without deeco_wheels.
  std::span<const double> action;
  std::span<const std::string> action_extras;
};

/// An object (<object> in the arena) as a layer sees it.
struct LayerObject {
  EntityId id = kNoEntity;
  std::string_view name;  ///< its id in the experiment
  std::string_view object_class;
  Vec2 position;    ///< metres
  double size = 0;  ///< full width, metres
  std::string_view tag;
};

/// The world during Layer::compute (implemented by the engine).
class LayerWorld {
 public:
  virtual ~LayerWorld() = default;
  virtual Tick tick() const = 0;  ///< the tick about to be simulated
  virtual double dt_s() const = 0;
  /// Every robot in the run, in increasing id order (the order of compute's values).
  virtual std::span<const LayerRobot> robots() const = 0;
  /// Every object, in increasing id order.
  virtual std::span<const LayerObject> objects() const = 0;
  /// Whether `p` is an obstacle of the field: outside the arena, or on a black pixel of its
  /// bitmap. Walls and segments are not counted.
  virtual bool obstacle(Vec2 p) const = 0;
  /// Randomness for this layer in this tick: the same every run (one stream per layer and
  /// tick; draw from it in a fixed order).
  virtual CounterRng& rng() const = 0;
};

/// Given to Layer::init.
class LayerSetup {
 public:
  virtual ~LayerSetup() = default;
  virtual std::string_view name() const = 0;  ///< the layer's name in the experiment
  /// The arena's corners, metres.
  virtual Vec2 arena_min() const = 0;
  virtual Vec2 arena_max() const = 0;
};

/// A grid of values over the arena that a viewer may draw (Layer::map). Cell (i, j) covers
/// [min.x + i*w, min.x + (i+1)*w] x [max.y - (j+1)*h, max.y - j*h] (row 0 at the top), with
/// w, h = the arena's size over width, height.
struct LayerMap {
  int width = 0, height = 0;
  std::vector<double> values;  ///< row-major from the top row
  double low = 0, high = 1;    ///< the range drawn from black to white
};

/// A layer plug-in: one instance per <layer> element.
class Layer {
 public:
  virtual ~Layer() = default;
  /// Once, before the run, with the element's other attributes (checked against the plug-in's
  /// ParamDocs). Throw SetupError for a problem: reported at the element (or at a script's
  /// line), before the run.
  virtual void init(const Params& params, const LayerSetup& setup) {}
  /// Numbers per robot (read after init); at least 1.
  virtual std::uint32_t size() const { return 1; }
  /// This tick's values: `values` holds size() numbers per robot of world.robots(), in that
  /// order, filled with each robot's values of the previous tick (the element's `initial` for a
  /// robot's first tick), to be overwritten or updated.
  virtual void compute(const LayerWorld& world, std::span<double> values) = 0;
  /// Back to the state right after init (Simulation::reset).
  virtual void reset() {}
  /// A picture of the layer over the arena for viewers, or null (the default: nothing to
  /// draw). Called after init, outside compute.
  virtual const LayerMap* map() const { return nullptr; }
};

}  // namespace fleetsim
