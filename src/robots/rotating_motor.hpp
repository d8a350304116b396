// A foot-bot motor that turns a device about the body's axis: the turret (src/robots/gripper.cpp)
// and the distance scanner (src/robots/distance_scanner.cpp), as ARGoS commands both: a mode,
// an angle and a speed.
#pragma once

#include <cmath>
#include <cstdint>

#include "fleetsim/parts.hpp"
#include "robots/engine_world.hpp"

namespace fleetsim {

/// The controller writes the command (mode, angle in radians, speed in rad/s) into the column
/// named after the part type (f64 x 3); the act phase turns the device's state (its own column,
/// f64 x `state_width`) by Part::turn(dt, mode, command, state). Both columns are hashed, not
/// logged, not halo (only the robot's own parts read them). ActuatorView::values = the command.
template <class Part>
class RotatingMotor : public BatchedActuator<Part> {
 public:
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    auto* c = static_cast<double*>(engine_world(ctx).state().robots.data(command_));
    out.values = {c + 3 * std::size_t{robot.row}, 3};
  }
  void act(const PartContext& ctx, RobotRef robot) override {
    WorldState& s = engine_world(ctx).state();
    const double* c =
        static_cast<const double*>(s.robots.data(command_)) + 3 * std::size_t{robot.row};
    double* state =
        static_cast<double*>(s.robots.data(state_)) + state_width_ * std::size_t{robot.row};
    const int mode = std::isfinite(c[0]) ? static_cast<int>(c[0]) : 0;  // 0: off
    static_cast<Part&>(*this).turn(ctx.dt_s, mode, c, state);
  }

 protected:
  /// Declares the two columns (in the part's setup).
  void declare(PartSetup& setup, const char* type, const char* command_doc, const char* state,
               std::uint32_t state_width, const char* state_doc) {
    command_ = setup.column({type, ColumnType::kF64, 3, true, false, command_doc, type, false});
    state_ =
        setup.column({state, ColumnType::kF64, state_width, true, false, state_doc, type, false});
    state_width_ = state_width;
  }

 private:
  ColumnHandle command_ = kNoColumn, state_ = kNoColumn;
  std::uint32_t state_width_ = 1;
};

}  // namespace fleetsim
