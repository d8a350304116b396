// The e-puck-like robot's proximity sensors: kProximityCount rays from the body surface at
// kProximityAngles. A reading is 0 when nothing is within `proximity_range_m` of the sensor
// and rises linearly to 1 when touching: reading = 1 - distance / range. Rays hit other
// robots (of any engine) and static obstacles. Noise-free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "physics/kinematics2d.hpp"

namespace fleetsim {

/// Fills the proximity readings of robot i (kProximityCount floats at out). Reads only the
/// spatial index and robot i's pose: safe to call concurrently for different robots.
void read_proximity(const WorldModel& model, const WorldState& state, const SpatialIndex& index,
                    std::size_t i, float* out);

/// The same for the robot in grid slot `slot` (index.robots.order()[slot]); the hot path, which
/// visits robots in slot order so that neighbours are read from contiguous memory. Gives
/// exactly the readings of read_proximity.
void read_proximity_slot(const WorldModel& model, const WorldState& state,
                         const SpatialIndex& index, std::uint32_t slot, float* out);

}  // namespace fleetsim
