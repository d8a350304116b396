// `proximity` and `proximity_noisy`: infrared rays from the body surface (the e-puck's 8, the
// foot-bot's 24, or any list of angles). A reading is 0 when nothing is within `range` of the
// sensor and 1 when touching; in between, `response` says: linear (reading = 1 - distance /
// range, fleetsim's own), or ARGoS's foot-bot or e-puck curves (the built-in kinds' default).
// Rays hit other robots (of any engine) and static obstacles. `noise_level` adds ARGoS's
// uniform noise, `proximity_noisy` Gaussian noise (standard deviation `noise`), both from the
// counter-based RNG (the same every run), clamped to [0, 1].
//
// XML parameters (attributes of <sensor type="proximity">):
//   rays    integer  8      number of rays
//   angles  string   ""     ray angles, degrees CCW from the heading, comma-separated; "" =
//                           the e-puck's for 8 rays, else evenly spaced from half a spacing
//   range   real     0.1    metres from the body surface
//   response string  linear linear, footbot or epuck (ProximityResponse)
//   noise_level real 0      half-width of ARGoS's uniform noise
//   noise   real     0.05   (proximity_noisy only) standard deviation of the added noise
// Column: `proximity` (f32 x rays), hashed, not logged.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/det_math.hpp"
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

/// The ray angles, radians CCW from the heading, that a proximity sensor's parameters give:
/// `angles` when set, else the e-puck's for 8 rays, else `rays` evenly spaced. On a bad
/// parameter, `error` says what is wrong and the result is empty. (The sensor and the ROS 2
/// bridge's laser scans read the same rays.)
std::vector<double> proximity_ray_angles(const Params& p, std::string& error);

/// No hit: the value ray_circle_hit returns for a ray that misses.
inline constexpr float kRayMiss = 3.0e38f;

/// One ray against one circle, in the sensor's arithmetic: single precision, relative to the
/// sensing robot's centre. The ray starts on the body (radius r) in direction (ux, uy) (unit);
/// the circle of radius rj is centred at (relx, rely). `a` = (relx, rely) . (ux, uy); per
/// circle q = rj^2 - |rel|^2 and e = r^2 - q, and two_r = 2 r. Returns the distance from the
/// ray's origin to the first hit (0 when the origin is inside the circle), or kRayMiss when
/// the ray misses or points away. Selects only, no branches, so the ray loop runs on vectors;
/// every caller (the kernel and the tests' brute force) uses this function, so every path
/// gives the same bits. Exact geometry: a ray from the centre along u meets the line through
/// the circle's centre at a; the chord's half length is sqrt(rj^2 - (|rel|^2 - a^2)).
[[gnu::always_inline]] inline float ray_circle_hit(float a, float q, float e, float r,
                                                   float two_r) {
  const float disc = q + a * a;
  const float h = a - r;  // origin to the point of closest approach
  float t = h - std::sqrt(disc >= 0 ? disc : 0.0f);
  t = t < 0 ? 0.0f : t;
  float v = disc >= 0 ? t : kRayMiss;
  v = h >= 0 ? v : kRayMiss;
  return e - two_r * a <= 0 ? 0.0f : v;  // |origin - centre|^2 <= rj^2: inside
}

/// The same for one ray and one circle given directly (tests).
inline float ray_circle_hit(float relx, float rely, float ux, float uy, float r, float rj) {
  const float d2 = relx * relx + rely * rely;
  const float q = rj * rj - d2;
  return ray_circle_hit(relx * ux + rely * uy, q, r * r - q, r, 2 * r);
}

/// Ray k's world direction for a robot heading theta: (ux[k], uy[k]), rounded to float from
/// the exact rotation of the layout's direction (det_sincos, so the same bits everywhere).
[[gnu::always_inline]] inline void ray_directions(double theta, const RayLayout& layout, float* ux,
                                                  float* uy) {
  double st, ct;
  det_sincos(theta, st, ct);
  const double* dc = layout.cos.data();
  const double* ds = layout.sin.data();
  for (std::size_t k = 0; k < layout.count(); ++k) {
    ux[k] = static_cast<float>(ct * dc[k] - st * ds[k]);
    uy[k] = static_cast<float>(st * dc[k] + ct * ds[k]);
  }
}

/// How a ray's distance becomes a reading (the `response` parameter).
enum class ProximityResponse : std::uint8_t {
  kLinear,   ///< fleetsim's: 1 - d / range
  kFootbot,  ///< ARGoS's foot-bot: 1 within 9.9 mm, else 0.0100527 / (d + 0.000163144)
  kEpuck,    ///< ARGoS's e-puck: 298.701 d^2 - 36.8961 d + 1.08212 to 5 cm, clamped; 0 beyond
};

/// The reading of response R for a ray whose linear reading (1 - d / range, 0 = nothing in
/// range) is `linear`. Selects only, so the cast's loop over the rays runs on vectors; the
/// distance is the one the linear reading stands for (exact to a few nanometres).
template <ProximityResponse R>
[[gnu::always_inline]] inline float proximity_response(float linear, double range) {
  if constexpr (R == ProximityResponse::kLinear) return linear;
  const double d = range * (1.0 - static_cast<double>(linear));
  double v;
  if constexpr (R == ProximityResponse::kFootbot) {
    // ARGoS's footbot_proximity_default_sensor.cpp: saturated within about 1 cm, then the
    // inverse of the distance (0.1 at the 10 cm range).
    v = d < 0.009889556 ? 1.0 : 0.0100527 / (d + 0.000163144);
  } else {
    // ARGoS's epuck_proximity_default_sensor.cpp: a quadratic fit to 5 cm, clamped.
    v = 298.701 * d * d - 36.8961 * d + 1.08212;
    v = v < 0.0 ? 0.0 : v;
    v = v > 1.0 ? 1.0 : v;
    v = d > 0.05 ? 0.0 : v;
  }
  return linear > 0 ? static_cast<float>(v) : 0.0f;  // 0: nothing within range
}

/// The same with the response chosen at run time.
float proximity_response(ProximityResponse response, float linear, double range);

/// How far response R can read non-zero for a sensor of `range`, metres from the body: the
/// cast looks for robots and walls within this distance only. ARGoS's e-puck curve reads 0
/// beyond 5 cm, so its 0.1 m rays need not find what lies farther: a hit there reads 0 whether
/// it is found or not, the same bits (half the area to search). The margin covers the rounding
/// between a hit and the distance its reading stands for (the linear reading is a float):
/// a hit at `seen` or beyond stands for more than 5 cm at any range. The other curves read
/// non-zero up to `range`.
inline double proximity_seen_range(ProximityResponse response, double range) {
  if (response != ProximityResponse::kEpuck) return range;
  const double seen = 0.05 * 1.001 + 1e-5 * range;
  return seen < range ? seen : range;
}

/// What the cast makes of the rays' distances: the response curve, then the noise, both
/// applied where the readings are produced. The noise comes from the counter-based generator
/// keyed by (seed, robot, tick), so it is the same every run and on every path.
struct ProximityReadingModel {
  ProximityResponse response = ProximityResponse::kLinear;
  double noise_level = 0;  ///< half-width of ARGoS's uniform noise (0: none)
  double noise_sd = 0;     ///< standard deviation of proximity_noisy's Gaussian noise (0: none)
  std::uint64_t seed = 0;  ///< the experiment's seed
  EntityId robot = 0;      ///< the sensing robot's id
  Tick tick = 0;           ///< the tick sensed
};

/// Fills `out` (layout.count() floats) with the readings of the robot in grid slot `slot`
/// (index.robots.order()[slot]) for a body of radius `r` and rays of length `range`: the hot
/// path, reading neighbours from contiguous memory. `z` (per robot row, or null): altitudes;
/// robots higher than `height` (the sensing robot's) are not seen. `model`: the response and
/// noise (linear and noise-free by default).
void read_proximity_slot(const WorldState& state, const SpatialIndex& index, std::uint32_t slot,
                         double r, double range, const RayLayout& layout, float* out,
                         const double* z = nullptr, double height = 0,
                         const ProximityReadingModel& model = {});

/// The same for robot index i, by a slower path (tests compare the two).
void read_proximity(const WorldState& state, const SpatialIndex& index, std::size_t i, double r,
                    double range, const RayLayout& layout, float* out, const double* z = nullptr,
                    double height = 0, const ProximityReadingModel& model = {});

std::unique_ptr<Sensor> make_proximity_sensor(bool noisy);

}  // namespace fleetsim
