// fleetsim public SDK: robot controllers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fleetsim/parts.hpp"
#include "fleetsim/random.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// Parameters of a plug-in (controller, part, loop functions): the XML attributes of the
/// element that names it, already checked against the plug-in's documented ParamDoc list and
/// completed with the defaults. Values are strings; the getters convert.
class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string text(const std::string& name, const std::string& fallback = "") const;
  double real(const std::string& name, double fallback) const;
  std::int64_t integer(const std::string& name, std::int64_t fallback) const;
  bool boolean(const std::string& name, bool fallback) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// Thrown by ControllerSetup when a controller asks for a part its robot's kind lacks, and by
/// controllers whose init finds their input wrong (a script that does not parse). The engine
/// reports it before the run starts as a user error: at `file:line` when given (a script's
/// line), else at the element that declared the controller.
class SetupError : public std::runtime_error {
 public:
  explicit SetupError(const std::string& message, std::string at_file = {}, int at_line = 0)
      : std::runtime_error(message), file(std::move(at_file)), line(at_line) {}
  std::string file;
  int line = 0;
};

/// Receives tags a controller sets (the engine interns them in robot order after the phase).
class TagSink {
 public:
  virtual ~TagSink() = default;
  virtual void stage(std::uint32_t row, const std::string& tag) = 0;
};

/// Where the run's knowledge fields (docs/experiment-format.md, <knowledge>) are stored: per
/// field, the start of its column and its size (numbers per robot). Engine-owned.
struct KnowledgeColumns {
  std::vector<double*> data;
  std::vector<std::uint32_t> size;
};

/// What a controller reads and writes for one robot in one tick. Valid only during step().
/// Sensors are those of the robot's kind, in the kind's order, with this tick's readings;
/// actuators likewise, pointing at this tick's commands.
struct RobotIO {
  EntityId id = kNoEntity;
  std::uint32_t row = 0;  ///< engine-internal; pass it back only through set_tag
  Tick tick = 0;
  double dt_s = 0;  ///< seconds per tick
  const KindInfo* kind = nullptr;
  std::span<const SensorView> sensors;
  std::span<ActuatorView> actuators;

  /// Randomness for this robot in this tick (stream kController): the same every run.
  CounterRng rng{0, 0, 0, RandomStream::kController};

  /// The robot's tag (reading is free); set_tag interns a new one after the phase.
  const std::string* tag = nullptr;
  TagSink* tag_sink = nullptr;
  void set_tag(const std::string& t) const {
    if (tag_sink) tag_sink->stage(row, t);
  }

  /// The run's knowledge columns (null when the experiment declares no knowledge).
  const KnowledgeColumns* knowledge_columns = nullptr;
  /// This robot's knowledge field at a handle from ControllerSetup::knowledge: its `size`
  /// numbers, readable and writable (only this robot's).
  std::span<double> knowledge(std::size_t field) const {
    const std::uint32_t n = knowledge_columns->size[field];
    return {knowledge_columns->data[field] + std::size_t{row} * n, n};
  }

  /// The run's environment layers' values (fleetsim/layer.hpp), stored as knowledge is; null
  /// when the experiment declares no layer.
  const KnowledgeColumns* layer_columns = nullptr;
  /// This robot's value of the layer at a handle from ControllerSetup::layer: its `size`
  /// numbers, this tick's (read only).
  std::span<const double> layer(std::size_t handle) const {
    const std::uint32_t n = layer_columns->size[handle];
    return {layer_columns->data[handle] + std::size_t{row} * n, n};
  }
  /// The sensor or actuator at a handle from ControllerSetup.
  const SensorView& sensor(std::size_t handle) const { return sensors[handle]; }
  ActuatorView& actuator(std::size_t handle) const { return actuators[handle]; }
};

/// Given to Controller::init: the robot (or, for a shared controller, the kind) it will
/// drive. Look the parts up here, once: a missing part is an error before the run starts.
class ControllerSetup {
 public:
  virtual ~ControllerSetup() = default;
  /// The robot this instance drives; kNoEntity for a shared controller (one per kind).
  virtual EntityId robot() const = 0;
  virtual const KindInfo& kind() const = 0;
  /// Handle of the sensor called `name` in the kind (when `type` is not empty, it must also
  /// be of that registry type). Throws SetupError naming the kind and the sensor if absent.
  virtual std::size_t sensor(std::string_view name, std::string_view type = {}) const = 0;
  virtual std::size_t actuator(std::string_view name, std::string_view type = {}) const = 0;
  /// The first sensor / actuator of a registry type, if any (optional parts).
  virtual std::optional<std::size_t> find_sensor_type(std::string_view type) const = 0;
  virtual std::optional<std::size_t> find_actuator_type(std::string_view type) const = 0;
  /// The kind's parts, in order (names and types), as RobotIO::sensors/actuators will have them,
  /// with what never changes during a run filled in (Sensor::describe, Actuator::describe: ray
  /// angles, an axle length), so a controller can show it before the first step.
  virtual std::span<const SensorView> sensors() const = 0;
  virtual std::span<const ActuatorView> actuators() const = 0;
  /// The robot's name: its `id` in the experiment file, or the one <distribute id_prefix=...>
  /// gave it ("fb12"). Empty for a shared controller; in the check made at load (robot() is
  /// kNoEntity), the name of the first robot the controller will drive.
  virtual std::string_view robot_name() const { return {}; }
  /// Where the robot is when its controller is made, as the `positioning` sensor's `reals` give
  /// it: x, y (metres), heading (radians), then a flyer's altitude (metres). Empty for a shared
  /// controller and in the check made at load.
  virtual std::span<const double> start_pose() const { return {}; }
  /// Handle of the experiment's knowledge field `name` (RobotIO::knowledge); throws SetupError
  /// naming the declared fields when absent.
  std::size_t knowledge(std::string_view name) const {
    const std::span<const std::string> fields = knowledge_fields();
    std::string declared;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (fields[i] == name) return i;
      declared += (i ? ", " : "") + fields[i];
    }
    throw SetupError("no knowledge field '" + std::string(name) + "' (the experiment's <knowledge> " +
                     (fields.empty() ? std::string("declares none") : "declares: " + declared) +
                     ")");
  }
  /// The knowledge fields' names and sizes, in declaration order (handle i is field i).
  virtual std::span<const std::string> knowledge_fields() const { return {}; }
  virtual std::span<const std::uint32_t> knowledge_sizes() const { return {}; }
  /// Handle of the experiment's environment layer `name` (RobotIO::layer), as the playground's
  /// getInputFromSensor(name, type): `size`, when not 0, is the numbers per robot expected.
  /// Throws SetupError naming the declared layers when absent, or the layer's size when it
  /// differs.
  std::size_t layer(std::string_view name, std::uint32_t size = 0) const {
    const std::span<const std::string> names = layer_names();
    std::string declared;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) {
        if (size != 0 && layer_sizes()[i] != size)
          throw SetupError("layer '" + std::string(name) + "' gives " +
                           std::to_string(layer_sizes()[i]) + " number(s) per robot, not " +
                           std::to_string(size));
        return i;
      }
      declared += (i ? ", " : "") + names[i];
    }
    throw SetupError("no layer '" + std::string(name) + "' (the experiment's <layers> " +
                     (names.empty() ? std::string("declares none") : "declares: " + declared) +
                     ")");
  }
  /// The environment layers' names and sizes, in declaration order (handle i is layer i).
  virtual std::span<const std::string> layer_names() const { return {}; }
  virtual std::span<const std::uint32_t> layer_sizes() const { return {}; }
};

/// A controller plug-in. Per-robot controllers (the default) get one instance per robot;
/// shared controllers (registered as such) one instance per controller declaration and kind,
/// whose step() must then keep no per-robot state. step() is called once per tick,
/// concurrently for different robots: it must only touch its own members and io.
class Controller {
 public:
  virtual ~Controller() = default;
  /// Called once, before the run, with the controller's XML parameters.
  virtual void init(const Params& params, const ControllerSetup& setup) {}
  /// Sense + control: read io's sensors, write io's actuators.
  virtual void step(RobotIO& io) = 0;
  /// Back to the state right after init.
  virtual void reset() {}
  /// Called once when the robot leaves the run or the run ends.
  virtual void destroy() {}

  /// Distributed runs move a robot to the process that simulates its new region, controller
  /// and all (docs/distributed.md). save() appends what step() depends on beyond init() to
  /// `out` and returns true; restore() receives exactly those bytes, on a new instance of the
  /// same controller right after its init() for the same robot. A controller without state
  /// returns true and writes nothing. The default returns false: "cannot", and a run on
  /// several processes with per-robot controllers of this type is refused before it starts,
  /// naming the controller. Shared controllers are never saved (they keep no robot's state).
  virtual bool save(std::vector<std::uint8_t>& out) const { return false; }
  /// Throws std::runtime_error when `state` is not something save() wrote.
  virtual void restore(std::span<const std::uint8_t> state) {}
};

}  // namespace fleetsim
