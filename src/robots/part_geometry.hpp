// Small helpers the long-range parts (range-and-bearing, camera) share: the bearing convention
// and finding a kind's parts by interface.
#pragma once

#include <cmath>
#include <string_view>

#include "fleetsim/types.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// The bearing of the point (lx, ly) of a robot's frame (x ahead, y to the left): radians in
/// (-pi, pi], 0 straight ahead, positive counter-clockwise (to the left).
inline float frame_bearing(double lx, double ly) {
  const double a = std::atan2(ly, lx);
  return static_cast<float>(a <= -kPi ? kPi : a);
}

/// True when `part` provides `interface` (its resolved interface, or its type when the
/// interface was not resolved, e.g. a kind built by hand in a test).
inline bool provides(const PartDecl& part, std::string_view interface) {
  return (part.interface.empty() ? part.type : part.interface) == interface;
}

}  // namespace fleetsim
