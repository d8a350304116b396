// The foot-bot's distance scanner (ARGoS's `footbot_distance_scanner` actuator and its
// `rot_z_only` sensor, `footbot_distance_scanner_rotzonly_sensor.cpp` in argos3).
//
// Four rays turn together in the plane 0.1232 m above the floor, from the body's edge
// (ARGoS's foot-bot radius): two short-range rays, ahead and behind the scanner's rotation,
// 0.26 m long, and two long-range rays at 90 and 270 degrees from it, 1.42 m long. A reading is
// the distance from the body's edge to the first wall, obstacle or body the ray meets (a body
// when the ray's height crosses it), or -1 when that is nearer than the ray's least distance
// (0 for the short range, 0.12 m for the long range), or -2 when the ray meets nothing.
//
// `footbot_distance_scanner` (actuator, interface `distance_scanner`): ActuatorView::values =
//   mode (0 off, 1 position control, 2 speed control: ARGoS's), angle (radians), speed (rad/s).
//   In the act phase the scanner's rotation (relative to the heading) becomes the angle in
//   position control, or moves by speed x the tick in speed control. Columns:
//   `footbot_distance_scanner` (the command) and `footbot_distance_scanner_rotation` (f64 x 3:
//   the mode applied, the rotation before and after the tick's act phase).
// `footbot_distance_scanner` (sensor, interface `distance_scanner`): off, no readings; in
//   position control, one reading per ray at the rotation; in speed control six per ray, spread
//   over the angle the scanner swept in the last tick, from where it started. SensorView::values
//   = the short-range readings then the long-range ones (metres, or -1, -2), each group sorted
//   by angle (one reading per angle), SensorView::angles = their angles (radians, (-pi, pi],
//   relative to the heading), SensorView::scalar = how many are short-range. Column `<name>`
//   (f32 x 49: the count of short readings, 24 readings, 24 angles).
#pragma once

#include <memory>

#include "fleetsim/parts.hpp"

namespace fleetsim {

std::unique_ptr<Actuator> make_footbot_distance_scanner_actuator();
std::unique_ptr<Sensor> make_footbot_distance_scanner_sensor();

}  // namespace fleetsim
