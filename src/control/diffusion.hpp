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
  static DiffusionParams from(const Params& p);
};

/// One robot's control step: readings in, wheel commands out. Pure and allocation-free.
inline void diffusion_step(const DiffusionParams& prm, const float* proximity, float realization,
                           double& left, double& right) {
  double vx = 0, vy = 0;
  for (int k = 0; k < kProximityCount; ++k) {
    static const double c[kProximityCount] = {0.95371695, 0.65605903, 0.0, -0.8660254,
                                              -0.8660254, 0.0,        0.65605903, 0.95371695};
    static const double s[kProximityCount] = {0.30070580, 0.75470958, 1.0,  0.5,
                                              -0.5,       -1.0,       -0.75470958, -0.30070580};
    vx += proximity[k] * c[k];
    vy += proximity[k] * s[k];
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
