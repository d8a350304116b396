// The built-in robot kinds, each a body plus parts from the registry (one home per robot).
//
// epuck:   radius 0.035 m, max speed 0.13 m/s; 8 proximity rays (range 0.1 m), collision,
//          differential drive (axle 0.053 m), 1 LED.
// footbot: the ARGoS foot-bot: radius 0.085 m, height 0.146 m, max speed 0.3 m/s; 24 proximity
//          rays (range 0.1 m), collision, positioning, range-and-bearing (3 m, 10 bytes),
//          omnidirectional coloured-blob camera (range 3 m), a ring of 12 LEDs plus a beacon,
//          differential drive (axle 0.14 m).
#pragma once

#include <vector>

#include "world/world.hpp"

namespace fleetsim {

RobotKind epuck_kind();
RobotKind footbot_kind();
/// Every built-in kind, in the order experiments see them (index 0 is the default).
std::vector<RobotKind> builtin_kinds();

}  // namespace fleetsim
