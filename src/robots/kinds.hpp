// The built-in robot kinds, each a body plus parts from the registry (one home per robot).
//
// epuck:   radius 0.035 m, max speed 0.13 m/s; 8 proximity rays (range 0.1 m), collision,
//          differential drive (axle 0.053 m), 1 LED.
// footbot: the ARGoS foot-bot: radius 0.085 m, height 0.146 m, max speed 0.3 m/s; 24 proximity
//          rays (range 0.1 m), collision, positioning, range-and-bearing (3 m, 10 bytes),
//          omnidirectional coloured-blob camera (range 3 m), a ring of 12 LEDs plus a beacon,
//          differential drive (axle 0.14 m).
// cylinder: a passive body (no parts): radius 0.1 m, height 0.2 m, 1 kg.
// box:      a passive body: 0.2 m x 0.2 m, height 0.2 m, 1 kg (dynamics2d only: kinematics2d
//           bodies are circles).
// eyebot:   a flyer (ARGoS's eye-bot) for pointmass3d: radius 0.25 m, max speed 1 m/s;
//           quadrotor_speed, positioning, range-and-bearing (10 m, 10 bytes), omnidirectional
//           coloured-blob camera (3 m), 1 LED. Starts on the ground (z = 0).
// Passive bodies need no controller; dynamics2d lets robots push them against the floor's
// friction.
#pragma once

#include <vector>

#include "world/world.hpp"

namespace fleetsim {

RobotKind epuck_kind();
RobotKind footbot_kind();
RobotKind cylinder_kind();
RobotKind box_kind();
RobotKind eyebot_kind();
/// Every built-in kind, in the order experiments see them (index 0 is the default).
std::vector<RobotKind> builtin_kinds();

}  // namespace fleetsim
