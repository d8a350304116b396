// `footbot_light`: ARGoS's foot-bot light sensor (its rot_z_only implementation), 24 readings
// around the body, one every 15 degrees from 7.5 degrees (angles CCW from the heading, in
// (-pi, pi]). For each light of intensity I > 0 that nothing occludes, with v the vector from
// the robot's centre on the floor to the light (3D) divided by I and d = |v|:
//   - the reading nearest the light's bearing and the six on each side gain
//     f(d) * max(0, 1 - 2 a / pi), f(d) = exp(-2 d) for d <= 2.5, else 0,
//     where a is the angle between the reading and the light's bearing;
//   - the sums over the lights, plus uniform noise in [-noise_level, noise_level] (the
//     counter-based generator: the same every run), are clamped to [0, 1].
// Occlusion, as ARGoS's dynamics2d checks its ray from the robot's centre to the light: another
// body (robot or passive body, by its bounding circle) blocks when the ray enters its outline
// no higher than the body's height; a static obstacle (wall, box side, bitmap edge) where the
// ray crosses it no higher than its height (WorldModel::segment_heights; the bitmap and the
// arena's border are as tall as anything). Flyers do not block.
//
// XML parameters (attributes of <sensor type="footbot_light">):
//   noise_level  real  0  half-width of the uniform noise added to each reading
// Column: `<name>` (f32 x 24), hashed, not logged.
#pragma once

#include <memory>

#include "fleetsim/parts.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// The foot-bot light sensor's reading count.
inline constexpr int kLightReadings = 24;

/// How far from a light sensor another body can occlude a light it reads, metres (centre to
/// centre; 0 without lights): what a partitioned process must hold around its domain.
double light_occlusion_reach_m(const WorldModel& model);

std::unique_ptr<Sensor> make_footbot_light_sensor();

}  // namespace fleetsim
