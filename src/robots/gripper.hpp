// The foot-bot's gripper and turret (ARGoS's `footbot_gripper`, `footbot_turret` and
// `footbot_turret_encoder`).
//
// `footbot_gripper` (actuator, interface `gripper`): ActuatorView::values = the aperture,
//   radians (ARGoS's lock_positive() pi/2, lock_negative() -pi/2, unlock() 0). The gripper is a
//   1 cm circle on the body's edge in the turret's direction; the `dynamics2d` engine grips the
//   body it touches while locked and releases it when unlocked (src/physics/gripping.hpp).
//   Only for kinds whose engine is dynamics2d. Columns: `footbot_gripper` (f64, the aperture),
//   `gripped` (u32, the held body's id + 1), `grip_anchor` (f64 x 3).
// `footbot_turret` (actuator, interface `turret`): ActuatorView::values = mode (0 off,
//   1 passive, 2 speed control, 3 position control: ARGoS's), target rotation (radians,
//   relative to the heading), target speed (rad/s). In the act phase the turret turns: at the
//   target speed, or by ARGoS's PD controller toward the target rotation (0.4 e + 0.2 de/dt, as
//   a turn rate); off and passive, it stays. Column `footbot_turret_rotation` (f64 x 2: rotation,
//   last error) and `footbot_turret` (the command).
// `footbot_turret_encoder` (sensor, interface `turret_encoder`): SensorView::reals = the
//   turret's rotation, radians in (-pi, pi] (0 without a `footbot_turret`).
#pragma once

#include <memory>

#include "fleetsim/parts.hpp"

namespace fleetsim {

std::unique_ptr<Actuator> make_footbot_gripper();
std::unique_ptr<Actuator> make_footbot_turret();
std::unique_ptr<Sensor> make_footbot_turret_encoder();

}  // namespace fleetsim
