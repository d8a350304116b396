// The built-in controllers: `diffusion` (the ARGoS report's algorithm 2, obstacle avoidance),
// `idle` and `random_walk`. They go through the registry like any plug-in; `diffusion` and
// `idle` are shared (one instance per kind, no per-robot state), `random_walk` is per robot.
//
// diffusion, rule="fleetsim" (the default): sum the proximity readings as 2D vectors (reading
// x sensor direction). If nothing is seen (sum shorter than `delta`) or the obstacle direction
// is outside the frontal cone of half-angle `alpha`, go straight; otherwise turn on the spot
// away from it. One addition to the report's algorithm: a robot whose last move was blocked
// (the collision sensor's degree of realization below 1) and that sees something also turns
// away. With kinematic stop-at-contact (no sliding), a robot brushing a wall at a shallow
// angle sees the wall outside the cone and would otherwise push against it forever.
//
// diffusion, rule="argos": ARGoS's own rule (its footbot_diffusion example controller), for
// like-for-like comparisons with ARGoS. It differs from the default in four ways: the readings
// are averaged (the vector sum divided by the number of rays), so `delta` compares with the
// mean; the robot goes straight only when the direction is inside the cone (bounds included)
// AND the mean is shorter than `delta` (an obstacle anywhere, strong enough, makes it turn);
// it turns by stopping one wheel (the one on the side away from the obstacle), curving instead
// of turning on the spot; and the degree of realization plays no part.
//
// XML parameters (attributes of <controller type="diffusion">):
//   alpha_degrees  real    7.5       half-angle of the frontal cone, degrees
//   delta          real    0.1       fleetsim: minimum length of the summed readings to react;
//                                    argos: minimum length of their mean
//   speed          real    0.1       wheel speed, m/s
//   rule           string  fleetsim  fleetsim or argos (above); anything else is a load error
// Parts: a `proximity` sensor and a `differential_drive` actuator (required), a `collision`
// sensor (optional; the argos rule ignores it).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

#include "fleetsim/controller.hpp"

namespace fleetsim {

/// Which obstacle-avoidance rule `diffusion` follows (the `rule` parameter).
enum class DiffusionRule : std::uint8_t {
  kFleetsim,  ///< "fleetsim": summed readings, turn on the spot, blocked robots turn too
  kArgos,     ///< "argos": ARGoS's footbot_diffusion (mean reading, one wheel stopped)
};

struct DiffusionParams {
  double cos_alpha = 0.99144486137381;        ///< cos(7.5 deg)
  double alpha_radians = 0.1308996938995747;  ///< 7.5 deg (the argos rule's angle range)
  double delta = 0.1;
  double speed_m_per_s = 0.1;
  DiffusionRule rule = DiffusionRule::kFleetsim;
  /// Reads the XML parameters; throws SetupError for a `rule` other than fleetsim or argos.
  static DiffusionParams from(const Params& p);
};

/// The readings summed as vectors (reading x sensor direction), in ray order. N as below.
template <std::size_t N = 0>
inline void reading_sum(std::span<const float> proximity, std::span<const Vec2> directions,
                        double& vx, double& vy) {
  const std::size_t n = N > 0 ? N : proximity.size();
  const float* p = proximity.data();
  const Vec2* d = directions.data();
  vx = 0;
  vy = 0;
  for (std::size_t k = 0; k < n; ++k) {
    vx += p[k] * d[k].x;
    vy += p[k] * d[k].y;
  }
}

/// The argos rule (ARGoS's footbot_diffusion): the mean of the readings as vectors; straight
/// when its angle is in [-alpha, alpha] and its length below delta, else stop the wheel on the
/// side away from the obstacle (obstacle on the left, angle > 0: right wheel stopped). Pure and
/// allocation-free; N as in diffusion_step.
template <std::size_t N = 0>
inline void diffusion_step_argos(const DiffusionParams& prm, std::span<const float> proximity,
                                 std::span<const Vec2> directions, double& left, double& right) {
  const std::size_t n = N > 0 ? N : proximity.size();
  double vx, vy;
  reading_sum<N>(proximity, directions, vx, vy);
  if (n > 0) {
    vx /= static_cast<double>(n);
    vy /= static_cast<double>(n);
  }
  const double angle = std::atan2(vy, vx);  // atan2(0, 0) = 0: nothing seen is straight ahead
  const double length = std::sqrt(vx * vx + vy * vy);
  if (angle >= -prm.alpha_radians && angle <= prm.alpha_radians && length < prm.delta) {
    left = right = prm.speed_m_per_s;
  } else if (angle > 0) {  // obstacle on the left: stop the right wheel, curve right
    left = prm.speed_m_per_s;
    right = 0;
  } else {
    left = 0;
    right = prm.speed_m_per_s;
  }
}

/// One robot's control step: readings in, wheel commands out. Pure and allocation-free.
/// N > 0: a compile-time ray count (the sum unrolls); N = 0: proximity.size() rays. The sum is
/// in ray order either way, so both give the same bits. Follows prm.rule (the argos rule
/// ignores `realization`).
template <std::size_t N = 0>
inline void diffusion_step(const DiffusionParams& prm, std::span<const float> proximity,
                           std::span<const Vec2> directions, float realization, double& left,
                           double& right) {
  if (prm.rule == DiffusionRule::kArgos) {
    diffusion_step_argos<N>(prm, proximity, directions, left, right);
    return;
  }
  double vx, vy;
  reading_sum<N>(proximity, directions, vx, vy);
  double len2 = vx * vx + vy * vy;
  // Inside the cone: the angle of (vx, vy) to the heading is below alpha.
  bool in_cone = vx > 0 && vx * vx >= prm.cos_alpha * prm.cos_alpha * len2;
  bool blocked = realization < 1.0f && len2 > 0;
  if (len2 < prm.delta * prm.delta || (!in_cone && !blocked)) {
    left = right = prm.speed_m_per_s;
  } else if (vy > 0) {  // obstacle on the left: turn right
    left = prm.speed_m_per_s;
    right = -prm.speed_m_per_s;
  } else {
    left = -prm.speed_m_per_s;
    right = prm.speed_m_per_s;
  }
}

std::unique_ptr<Controller> make_diffusion_controller();
/// Leaves every command as it is (a program outside the run sets them between steps).
std::unique_ptr<Controller> make_external_controller();
std::unique_ptr<Controller> make_idle_controller();
std::unique_ptr<Controller> make_random_walk_controller();

}  // namespace fleetsim
