#include "robots/body_parts.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include "fleetsim/controller.hpp"
#include "robots/deeco_wheels.hpp"
#include "robots/engine_world.hpp"
#include "robots/part_geometry.hpp"

namespace fleetsim {

std::uint32_t led_count(const RobotKind& kind) {
  for (const PartDecl& a : kind.actuators)
    if (a.name == kViewerLedColumn && provides(a, "leds"))
      return static_cast<std::uint32_t>(a.params.integer("count", 1));
  return 0;
}

namespace {

class CollisionSensor final : public BatchedSensor<CollisionSensor> {
 public:
  void setup(PartSetup& setup) override { kind_ = setup.kind().index; }
  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    WorldState& s = engine_world(ctx).state();
    const std::size_t r = robot.row;
    out.angles = {s.contact_angle().data() + r * kMaxContacts, s.contact_count()[r]};
    out.scalar = s.realization()[r];
    // A kind with deeco_wheels: the last action, and the playground's degree of realization.
    std::call_once(resolved_, [&] { resolve(engine_world(ctx)); });
    if (echo_ != kNoColumn) {
      const double* a = static_cast<const double*>(s.robots.data(echo_)) + 3 * r;
      out.reals = {a, 3};
      out.scalar = deeco_degree_of_realization(a[2], out.scalar);
    }
  }

 private:
  // The kind's actuators are set up after its sensors: the echo column is looked up at the
  // first sense (once per kind; the columns never change during a run).
  void resolve(const EngineWorld& world) {
    const RobotKind& kind = world.model().kinds[kind_];
    for (const PartDecl& a : kind.actuators)
      if (provides(a, "deeco_wheels")) echo_ = world.state().robots.find(kDeecoActionColumn);
  }
  std::uint16_t kind_ = 0;
  std::once_flag resolved_;
  ColumnHandle echo_ = kNoColumn;
};

class PositioningSensor final : public Sensor {
 public:
  void setup(PartSetup& setup) override {
    pose_.resize(static_cast<std::size_t>(setup.workers()));
    if (setup.kind().flies) z_ = setup.find_column("z");
  }
  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const WorldState& s = engine_world(ctx).state();
    auto& pose = pose_[static_cast<std::size_t>(ctx.worker)];
    pose = {s.x()[robot.row], s.y()[robot.row], s.theta()[robot.row], 0.0};
    if (z_ == kNoColumn) {
      out.reals = std::span<const double>(pose.data(), 3);
    } else {  // a flyer: its altitude too
      pose[3] = static_cast<const double*>(s.robots.data(z_))[robot.row];
      out.reals = pose;
    }
  }
  // One pose per worker: valid until that worker senses its next robot.
  std::vector<std::array<double, 4>> pose_;
  ColumnHandle z_ = kNoColumn;
};

class DifferentialDrive final : public BatchedActuator<DifferentialDrive> {
 public:
  void setup(PartSetup& setup) override {
    const Params& p = setup.params();
    constants_[0] = p.real("axle_length", 0.053);
    constants_[1] = p.real("max_wheel_speed", 0.13);
    if (constants_[0] <= 0)
      setup.error("actuator '" + setup.name() + "': axle_length must be > 0 (metres)");
    if (constants_[1] < 0)
      setup.error("actuator '" + setup.name() + "': max_wheel_speed must be >= 0 (m/s)");
    column_ = setup.column({setup.name(), ColumnType::kF64, 2, true, false,
                            "wheel speed commands: left, right, m/s", "differential_drive", false});
  }
  void describe(ActuatorView& out) const override { out.constants = constants_; }
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    auto* w = static_cast<double*>(engine_world(ctx).state().robots.data(column_));
    out.values = {w + 2 * std::size_t{robot.row}, 2};
    out.constants = constants_;
  }
  void act(const PartContext& ctx, RobotRef robot) override {
    WorldState& s = engine_world(ctx).state();
    const auto* w = static_cast<const double*>(s.robots.data(column_)) + 2 * std::size_t{robot.row};
    const double max = constants_[1];
    const double l = std::clamp(w[0], -max, max);
    const double r = std::clamp(w[1], -max, max);
    s.speed_cmd()[robot.row] = (l + r) / 2;
    s.turn_cmd()[robot.row] = (r - l) / constants_[0];
  }

 private:
  double constants_[2] = {0.053, 0.13};
  ColumnHandle column_ = kNoColumn;
};

/// A flyer's speed control (ARGoS's quadrotor speed actuator): the controller writes the target
/// velocity x, y, z (m/s, world frame) and yaw rate (rad/s) into the pointmass3d engine's
/// `velocity_cmd` column, which the engine reads in the physics phase.
class QuadrotorSpeed final : public BatchedActuator<QuadrotorSpeed> {
 public:
  void setup(PartSetup& setup) override {
    column_ = setup.find_column("velocity_cmd");
    if (column_ == kNoColumn)
      setup.error("actuator '" + setup.name() +
                  "': needs a pointmass3d engine in the run "
                  "(expected <physics><pointmass3d/></physics> and a flying kind)");
    constants_[0] = setup.kind().max_speed_m_per_s;
  }
  void describe(ActuatorView& out) const override { out.constants = constants_; }
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    auto* v = static_cast<double*>(engine_world(ctx).state().robots.data(column_));
    out.values = {v + 4 * std::size_t{robot.row}, 4};
    out.constants = constants_;
  }
  bool acts() const override { return false; }

 private:
  double constants_[1] = {0};
  ColumnHandle column_ = kNoColumn;
};

/// LEDs: the controller writes `<name>_cmd`; the act phase makes it the visible `<name>`
/// column (logged), which cameras read in the next sense phase (so no robot ever reads a LED
/// another worker is writing).
class Leds final : public BatchedActuator<Leds> {
 public:
  void setup(PartSetup& setup) override {
    const auto count = setup.params().integer("count", 1);
    if (count < 1 || count > 64) {
      setup.error("actuator '" + setup.name() + "': count=" + std::to_string(count) +
                  " is out of range (expected 1 to 64 LEDs)");
      return;
    }
    count_ = static_cast<std::uint32_t>(count);
    visible_ = setup.column({setup.name(), ColumnType::kColor, count_, true, true,
                             "LED colours as others see them (ring, then beacon)", "leds"});
    command_ = setup.column({setup.name() + "_cmd", ColumnType::kColor, count_, true, false,
                             "LED colours set by the controller this tick", "leds", false});
  }
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    ColumnStore& store = engine_world(ctx).state().robots;
    const std::size_t width = store.desc(command_).width;
    out.colors = {static_cast<Color*>(store.data(command_)) + robot.row * width, count_};
  }
  void act(const PartContext& ctx, RobotRef robot) override {
    ColumnStore& store = engine_world(ctx).state().robots;
    const std::size_t width = store.desc(command_).width;
    const Color* from = static_cast<const Color*>(store.data(command_)) + robot.row * width;
    std::copy(from, from + count_, static_cast<Color*>(store.data(visible_)) + robot.row * width);
  }

 private:
  std::uint32_t count_ = 1;
  ColumnHandle visible_ = kNoColumn, command_ = kNoColumn;
};

}  // namespace

std::unique_ptr<Actuator> make_quadrotor_speed() {
  return std::make_unique<QuadrotorSpeed>();
}
std::unique_ptr<Actuator> make_leds() {
  return std::make_unique<Leds>();
}

std::unique_ptr<Sensor> make_collision_sensor() {
  return std::make_unique<CollisionSensor>();
}
std::unique_ptr<Sensor> make_positioning_sensor() {
  return std::make_unique<PositioningSensor>();
}
std::unique_ptr<Actuator> make_differential_drive() {
  return std::make_unique<DifferentialDrive>();
}

}  // namespace fleetsim
