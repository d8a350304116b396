// Robot kinds assembled from the registry's parts: one sensor and actuator instance per kind
// and part, set up once (parameters read, columns declared into the WorldState), and the
// ControllerSetup that controllers use to find their parts. Built by the experiment parser,
// so part and controller problems are reported at load with file:line; owned by the run.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostics.hpp"
#include "fleetsim/plugin.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// One kind's parts, in the kind's order.
struct AssembledKind {
  std::vector<std::unique_ptr<Sensor>> sensors;
  std::vector<std::unique_ptr<Actuator>> actuators;
  /// Views with name and type (interface) filled in, pointing into the WorldModel's PartDecls
  /// (which never change during a run); the engine copies them per robot.
  std::vector<SensorView> sensor_views;
  std::vector<ActuatorView> actuator_views;
  /// The actuators whose act() does something (asked once here, not per robot and tick); the
  /// act phase skips robots of kinds where this is empty.
  std::vector<Actuator*> acting;
  /// Indices of the sensors (actuators) the engine calls by batch (their batches() is true)
  /// and of those it calls robot by robot, just before each controller.
  std::vector<std::uint32_t> batch_sensors, single_sensors, batch_actuators, single_actuators;
  double near_reach_m = 0;
};

/// Fills every PartDecl's `interface` from the registry (the part's type when unknown).
void resolve_interfaces(WorldModel& model, const PluginRegistry& registry);

/// Creates and sets up the parts of every kind of `model`, declaring their columns into
/// `state` (before any robot is added, or with zeros for existing ones). Problems (unknown
/// types, bad parameters, column clashes) go to `diags` at the part's location.
/// Only the kinds `in_run` are assembled (an unused built-in kind adds no parts, no columns).
std::vector<AssembledKind> assemble_kinds(const WorldModel& model, WorldState& state,
                                          const PluginRegistry& registry, int workers,
                                          Diagnostics& diags);

/// The columns a sensor or actuator type declares with its default parameters (on a kind
/// with the e-puck's body): what `fleetsim list` prints, from the part's own declaration.
std::vector<ColumnDesc> part_columns(const PluginRegistry& registry, PluginKind kind,
                                     const std::string& type);

/// A controller asked for a part its robot's kind lacks: an error of the pairing of a
/// controller and a kind, so the parser reports it at the <robot> or <distribute> that makes
/// the pair, where other SetupErrors are reported at the <controller> element.
class MissingPartError : public SetupError {
 public:
  using SetupError::SetupError;
};

/// The ControllerSetup of one robot (or, for a shared controller, of its kind: no robot, no
/// name, no pose).
class KindControllerSetup final : public ControllerSetup {
 public:
  KindControllerSetup(const RobotKind& kind, const AssembledKind& parts, EntityId robot,
                      std::string_view name = {}, std::span<const double> start_pose = {})
      : kind_(kind), parts_(parts), robot_(robot), name_(name), start_pose_(start_pose) {}
  EntityId robot() const override { return robot_; }
  std::string_view robot_name() const override { return name_; }
  std::span<const double> start_pose() const override { return start_pose_; }
  const KindInfo& kind() const override { return kind_; }
  std::size_t sensor(std::string_view name, std::string_view type) const override;
  std::size_t actuator(std::string_view name, std::string_view type) const override;
  std::optional<std::size_t> find_sensor_type(std::string_view type) const override;
  std::optional<std::size_t> find_actuator_type(std::string_view type) const override;
  std::span<const SensorView> sensors() const override { return parts_.sensor_views; }
  std::span<const ActuatorView> actuators() const override { return parts_.actuator_views; }
  std::span<const std::string> knowledge_fields() const override {
    return model_ ? std::span<const std::string>(model_->knowledge_names)
                  : std::span<const std::string>();
  }
  std::span<const std::uint32_t> knowledge_sizes() const override {
    return model_ ? std::span<const std::uint32_t>(model_->knowledge_sizes)
                  : std::span<const std::uint32_t>();
  }
  std::span<const std::string> layer_names() const override {
    return model_ ? std::span<const std::string>(model_->layer_names)
                  : std::span<const std::string>();
  }
  std::span<const std::uint32_t> layer_sizes() const override {
    return model_ ? std::span<const std::uint32_t>(model_->layer_sizes)
                  : std::span<const std::uint32_t>();
  }
  /// The run's knowledge fields and layers come from `model`.
  void set_model(const WorldModel* model) { model_ = model; }

 private:
  const WorldModel* model_ = nullptr;
  const RobotKind& kind_;
  const AssembledKind& parts_;
  EntityId robot_;
  std::string_view name_;
  std::span<const double> start_pose_;
};

/// Robot `row`'s pose as the `positioning` sensor gives it (x, y, heading, then the altitude
/// for a flyer): what ControllerSetup::start_pose shows its controller. Returns the count of
/// values written to `out`.
std::size_t robot_pose(const WorldModel& model, const WorldState& state, std::size_t row,
                       std::array<double, 4>& out);

}  // namespace fleetsim
