// The built-in `diffusion` controller (the ARGoS report's algorithm 2, obstacle avoidance).
//
// Sum the proximity readings as 2D vectors (reading x sensor direction). If nothing is seen
// (sum shorter than `delta`) or the obstacle direction is outside the frontal cone of
// half-angle `alpha`, go straight; otherwise turn on the spot away from it.
// One addition to the report's algorithm: a robot whose last move was blocked (the collision
// sensor's degree of realization below 1) and that sees something also turns away. With
// kinematic stop-at-contact (no sliding), a robot brushing a wall at a shallow angle sees the
// wall outside the cone and would otherwise push against it forever.
//
// XML parameters (attributes of <controller type="diffusion">):
//   alpha_degrees  real  7.5   half-angle of the frontal cone, degrees
//   delta          real  0.1   minimum length of the summed readings to react
//   speed          real  0.1   wheel speed, m/s
#pragma once

#include "fleetsim/controller.hpp"

namespace fleetsim {

struct DiffusionParams {
  double cos_alpha = 0.99144486137381;  ///< cos(7.5 deg)
  double delta = 0.1;
  double speed_m_per_s = 0.1;
  /// The sensors' directions, copied here so the kernel reads them with the parameters.
  ProximityDirections directions = proximity_directions();
  static DiffusionParams from(const Params& p);
};

/// One robot's control step: readings in, wheel commands out. Pure and allocation-free.
inline void diffusion_step(const DiffusionParams& prm, const float* proximity, float realization,
                           double& left, double& right) {
  double vx = 0, vy = 0;
  for (int k = 0; k < kProximityCount; ++k) {
    vx += proximity[k] * prm.directions.cos[k];
    vy += proximity[k] * prm.directions.sin[k];
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

}  // namespace fleetsim
