#include "robots/gripper.hpp"

#include <cmath>
#include <mutex>

#include "physics/gripping.hpp"
#include "robots/engine_world.hpp"
#include "robots/rotating_motor.hpp"

namespace fleetsim {
namespace {

/// ARGoS's turret modes (`footbot_turret_entity.h`), as the command's first value.
enum TurretMode : int { kTurretOff = 0, kTurretPassive = 1, kTurretSpeed = 2, kTurretPosition = 3 };

/// The P and D gains of ARGoS's turret position control (`dynamics2d_footbot_model.cpp`).
constexpr double kTurretP = 0.4, kTurretD = 0.2;

class FootbotGripper final : public BatchedActuator<FootbotGripper> {
 public:
  void setup(PartSetup& setup) override {
    if (setup.kind().engine != "dynamics2d")
      setup.error("actuator '" + setup.name() + "': the gripper holds bodies with a dynamics2d " +
                  "joint (this kind's engine is '" + setup.kind().engine +
                  "'; expected engine=\"dynamics2d\")");
    aperture_ = setup.column({kGripperColumn, ColumnType::kF64, 1, true, false,
                              "gripper aperture command, radians (pi/2 and -pi/2 lock, 0 unlocks)",
                              "footbot_gripper", false});
    setup.column({kGrippedColumn, ColumnType::kU32, 1, true, false,
                  "the body the gripper holds: its entity id + 1, 0 for none (dynamics2d)",
                  "footbot_gripper", false});
    setup.column({kGripAnchorColumn, ColumnType::kF64, 3, true, false,
                  "where the gripper holds it: anchor x, y in the held body's frame and rest "
                  "length from the robot's centre, metres (dynamics2d)",
                  "footbot_gripper", false});
  }
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    auto* a = static_cast<double*>(engine_world(ctx).state().robots.data(aperture_));
    out.values = {a + robot.row, 1};
  }
  bool acts() const override { return false; }  // dynamics2d reads the aperture

 private:
  ColumnHandle aperture_ = kNoColumn;
};

class FootbotTurret final : public RotatingMotor<FootbotTurret> {
 public:
  void setup(PartSetup& setup) override {
    declare(setup, "footbot_turret",
            "turret command: mode (0 off, 1 passive, 2 speed, 3 position), target rotation "
            "(rad), target speed (rad/s)",
            kTurretColumn, 2,
            "turret rotation relative to the heading (rad) and the position control's last "
            "error (rad)");
  }
  /// t: the rotation and the last error.
  void turn(double dt, int mode, const double* c, double* t) const {
    double rate = 0;
    if (mode == kTurretSpeed) {
      rate = std::isfinite(c[2]) ? c[2] : 0;
    } else if (mode == kTurretPosition) {
      // ARGoS's PD controller on the error to the target, as a turn rate of the turret.
      const double target = std::isfinite(c[1]) ? wrap_angle(c[1]) : 0;
      const double error = wrap_angle(target - t[0]);
      rate = kTurretP * error + kTurretD * (error - t[1]) / dt;
      t[1] = error;
    }
    t[0] = wrap_angle(t[0] + rate * dt);
  }
};

class FootbotTurretEncoder final : public BatchedSensor<FootbotTurretEncoder> {
 public:
  void setup(PartSetup&) override {}
  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    // The kind's actuators are set up after its sensors: the turret's column is found at the
    // first sense (a kind without the turret reads 0, as ARGoS's encoder of a turret never
    // moved).
    std::call_once(resolved_,
                   [&] { turret_ = engine_world(ctx).state().robots.find(kTurretColumn); });
    if (turret_ == kNoColumn) {
      out.reals = {&kZero, 1};
      return;
    }
    const auto* t = static_cast<const double*>(engine_world(ctx).state().robots.data(turret_));
    out.reals = {t + 2 * std::size_t{robot.row}, 1};
  }

 private:
  static constexpr double kZero = 0;
  std::once_flag resolved_;
  ColumnHandle turret_ = kNoColumn;
};

}  // namespace

std::unique_ptr<Actuator> make_footbot_gripper() {
  return std::make_unique<FootbotGripper>();
}
std::unique_ptr<Actuator> make_footbot_turret() {
  return std::make_unique<FootbotTurret>();
}
std::unique_ptr<Sensor> make_footbot_turret_encoder() {
  return std::make_unique<FootbotTurretEncoder>();
}

}  // namespace fleetsim
