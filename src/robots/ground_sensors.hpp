// The foot-bot's ground sensors, as ARGoS's rot_z_only implementations compute them: each
// reads the floor's colour (WorldModel::floor) under a point fixed to the body, as a grey level
// (0.299 R + 0.587 G + 0.114 B) / 255, plus uniform noise in [-noise_level, noise_level]
// (the counter-based generator: the same every run).
//
// `footbot_motor_ground`: 4 readings near the wheels, at (6.3, 1.16), (-6.3, 1.16),
//   (-6.3, -1.16), (6.3, -1.16) cm in the robot's frame (x ahead, y to the left); the grey
//   level clamped to [0, 1].
// `footbot_base_ground`: 8 readings on a ring of 8 cm, from ahead counter-clockwise: (8, 0),
//   (4.2, 6.5), (0, 8), (-4.2, 6.5), (-8, 0), (-4.2, -6.5), (0, -8), (4.2, -6.5) cm; each
//   0 when the grey level is below 0.5, else 1.
// SensorView: values (the readings) and directions (each reading's offset from the centre, in
// metres, robot frame). They read the floor only: no other robot.
//
// XML parameters: noise_level (real, 0). Column: `<name>` (f32 x 4 or 8), hashed, not logged.
#pragma once

#include <memory>

#include "fleetsim/parts.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// A colour's grey level in [0, 1], as ARGoS's ground sensors compute it.
double floor_gray(Color c);

std::unique_ptr<Sensor> make_footbot_motor_ground_sensor();
std::unique_ptr<Sensor> make_footbot_base_ground_sensor();

}  // namespace fleetsim
