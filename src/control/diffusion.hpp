// The built-in controllers: `diffusion` (the ARGoS report's algorithm 2, obstacle avoidance),
// `idle` and `random_walk`. They go through the registry like any plug-in; `diffusion` and
// `idle` are shared (one instance per kind, no per-robot state), `random_walk` is per robot.
//
// diffusion: sum the proximity readings as 2D vectors (reading x sensor direction). If nothing
// is seen (sum shorter than `delta`) or the obstacle direction is outside the frontal cone of
// half-angle `alpha`, go straight; otherwise turn on the spot away from it. One addition to
// the report's algorithm: a robot whose last move was blocked (the collision sensor's degree
// of realization below 1) and that sees something also turns away. With kinematic
// stop-at-contact (no sliding), a robot brushing a wall at a shallow angle sees the wall
// outside the cone and would otherwise push against it forever.
//
// XML parameters (attributes of <controller type="diffusion">):
//   alpha_degrees  real  7.5   half-angle of the frontal cone, degrees
//   delta          real  0.1   minimum length of the summed readings to react
//   speed          real  0.1   wheel speed, m/s
// Parts: a `proximity` sensor and a `differential_drive` actuator (required), a `collision`
// sensor (optional).
#pragma once

#include <memory>

#include "fleetsim/controller.hpp"

namespace fleetsim {

struct DiffusionParams {
  double cos_alpha = 0.99144486137381;  ///< cos(7.5 deg)
  double delta = 0.1;
  double speed_m_per_s = 0.1;
  static DiffusionParams from(const Params& p);
};

/// One robot's control step: readings in, wheel commands out. Pure and allocation-free.
/// N > 0: a compile-time ray count (the sum unrolls); N = 0: proximity.size() rays. The sum is
/// in ray order either way, so both give the same bits.
template <std::size_t N = 0>
inline void diffusion_step(const DiffusionParams& prm, std::span<const float> proximity,
                           std::span<const Vec2> directions, float realization, double& left,
                           double& right) {
  const std::size_t n = N > 0 ? N : proximity.size();
  const float* p = proximity.data();
  const Vec2* d = directions.data();
  double vx = 0, vy = 0;
  for (std::size_t k = 0; k < n; ++k) {
    vx += p[k] * d[k].x;
    vy += p[k] * d[k].y;
  }
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
std::unique_ptr<Controller> make_idle_controller();
std::unique_ptr<Controller> make_random_walk_controller();

}  // namespace fleetsim
