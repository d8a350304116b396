// `proximity` and `proximity_noisy`: infrared rays from the body surface (the e-puck's 8, the
// foot-bot's 24, or any list of angles). A reading is 0 when nothing is within `range` of the
// sensor and rises linearly to 1 when touching: reading = 1 - distance / range. Rays hit
// other robots (of any engine) and static obstacles. `proximity_noisy` adds Gaussian noise
// (standard deviation `noise`, from the counter-based RNG: the same every run), clamped to
// [0, 1].
//
// XML parameters (attributes of <sensor type="proximity">):
//   rays    integer  8      number of rays
//   angles  string   ""     ray angles, degrees CCW from the heading, comma-separated; "" =
//                           the e-puck's for 8 rays, else evenly spaced from half a spacing
//   range   real     0.1    metres from the body surface
//   noise   real     0.05   (proximity_noisy only) standard deviation of the added noise
// Column: `proximity` (f32 x rays), hashed, not logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fleetsim/parts.hpp"
#include "physics/kinematics2d.hpp"

namespace fleetsim {

/// The e-puck's proximity ray angles, radians CCW from the heading.
inline constexpr int kEpuckRays = 8;
inline constexpr double kEpuckProximityAngles[kEpuckRays] = {
    0.3054326, 0.8552113, 1.5707963, 2.6179939, -2.6179939, -1.5707963, -0.8552113, -0.3054326};

/// Ray geometry of one proximity sensor: unit directions in the robot frame.
struct RayLayout {
  std::vector<double> cos, sin;
  std::size_t count() const { return cos.size(); }
};

/// The e-puck's 8 rays.
const RayLayout& epuck_rays();

/// Fills `out` (layout.count() floats) with the readings of the robot in grid slot `slot`
/// (index.robots.order()[slot]) for a body of radius `r` and rays of length `range`: the hot
/// path, reading neighbours from contiguous memory. `z` (per robot row, or null): altitudes;
/// robots higher than `height` (the sensing robot's) are not seen.
void read_proximity_slot(const WorldState& state, const SpatialIndex& index, std::uint32_t slot,
                         double r, double range, const RayLayout& layout, float* out,
                         const double* z = nullptr, double height = 0);

/// The same for robot index i, by a slower path (tests compare the two).
void read_proximity(const WorldState& state, const SpatialIndex& index, std::size_t i, double r,
                    double range, const RayLayout& layout, float* out, const double* z = nullptr,
                    double height = 0);

std::unique_ptr<Sensor> make_proximity_sensor(bool noisy);

}  // namespace fleetsim
