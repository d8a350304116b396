// The built-in parts every wheeled kind is made of besides its proximity rays:
//
// `collision` (sensor, DEECo playground): the contacts the physics engine recorded at the end
//   of the last tick (SensorView::angles, radians from the heading, sorted, at most 4) and
//   the degree of realization of the last move (SensorView::scalar, 1 = the whole commanded
//   motion was done). Reads the body's columns; declares none.
// `positioning` (sensor, ARGoS's positioning): the robot's pose, SensorView::reals = x, y
//   (metres), theta (radians). Declares none.
// `differential_drive` (actuator): two wheel speeds, ActuatorView::values = left, right in m/s,
//   clamped to `max_wheel_speed`; ActuatorView::constants = axle_length, max_wheel_speed. In
//   the act phase it sets the body's commanded speed (l + r) / 2 and turn rate (r - l) / axle.
//   XML: axle_length (real, 0.053 m), max_wheel_speed (real, 0.13 m/s).
//   Column: `<name>` (f64 x 2, the wheel commands), hashed, not logged.
// `leds` (actuator): `count` RGB LEDs (ActuatorView::colors). The controller's colours become
//   visible (to cameras, the log and the viewer) in the act phase. XML: count (integer, 1).
//   Columns: `<name>` (color x count, logged) and `<name>_cmd` (color x count).
#pragma once

#include <memory>

#include "fleetsim/parts.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// The column the viewer shows as a robot's LEDs: the one of the `leds` actuator named "leds"
/// (its default name). A kind may have other LED actuators under other names; they are logged
/// as ordinary columns.
inline constexpr const char* kViewerLedColumn = "leds";

/// Number of LEDs in `kind`'s kViewerLedColumn actuator; 0 when it has none. (For the log
/// header's per-kind `led_count`.)
std::uint32_t led_count(const RobotKind& kind);

std::unique_ptr<Sensor> make_collision_sensor();
std::unique_ptr<Sensor> make_positioning_sensor();
std::unique_ptr<Actuator> make_differential_drive();
std::unique_ptr<Actuator> make_leds();
std::unique_ptr<Actuator> make_quadrotor_speed();

}  // namespace fleetsim
