// `deeco_wheels` (actuator): the DEECo playground's action model (its `Action` and `Wheels`).
//
// An action is a speed, a fraction in [0, 1] of the kind's `max_speed`, and a rotation angle
// (radians, counter-clockwise positive, as fleetsim's headings and the playground's angles
// both turn). In the act phase the robot turns at once by the angle, then the physics moves it
// along its new heading by speed x max_speed x the tick, never backwards, stopping at its
// first contact (kinematics2d). The command stays until the controller changes it, as the
// playground's SimpleWheels keep theirs (so a robot given an angle turns by it every tick).
//
// As in the playground, the action's type comes from the values as given (speed != 0: a
// move; angle != 0: a rotation; `stay` when both are 0), then the speed is clamped to [0, 1]
// and the angle wrapped to (-pi, pi]. The collision sensor echoes the last action
// (SensorView::reals = speed, angle, type code) with its degree of realization
// (SensorView::scalar): the fraction of the move made, 1 when nothing stopped it, and 0 for a
// `stay` or `rotate` action (the playground's rule).
//
// Custom actions (the playground's Action subclasses, such as firefighters'
// EnergyTemperatureAction with its extinguisher): `extras="extinguisher request"` names up to 8
// more numbers of the action, set by the controller with the speed and angle (Lua:
// robot.deeco_wheels.set_action(speed, angle, {1, 0})) and kept until it changes them. They
// move nothing: environment layers read them (LayerRobot::action, Lua r.action.extinguisher)
// as the playground's processors read robots' current actions.
//
// XML: `extras` (optional). Needs a kinematics2d kind (refused otherwise at load).
// Columns: `<name>` (f64 x (2 + extras): speed fraction, angle, the extras; the controller's
// command) and
// `deeco_action` (f64 x 3: speed, angle, type code of the last action applied), both hashed,
// not logged, not halo.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fleetsim/parts.hpp"

namespace fleetsim {

/// The echo column the collision sensor reads (one deeco_wheels per kind).
inline constexpr const char* kDeecoActionColumn = "deeco_action";

/// The degree of realization the playground reports for an action of `type` whose move was
/// made to `fraction` (kinematics2d's realization): 0 for stay and rotate.
inline float deeco_degree_of_realization(double type_code, float fraction) {
  return type_code == static_cast<double>(DeecoActionType::kMove) ||
                 type_code == static_cast<double>(DeecoActionType::kRotateAndMove)
             ? fraction
             : 0.0f;
}

/// At most this many extras (the `extras` parameter's words).
inline constexpr std::size_t kMaxDeecoActionExtras = 8;
/// The `extras` parameter's names (words separated by spaces or commas).
std::vector<std::string> deeco_action_extras(const std::string& text);

std::unique_ptr<Actuator> make_deeco_wheels();

}  // namespace fleetsim
