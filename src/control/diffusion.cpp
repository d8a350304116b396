#include "control/diffusion.hpp"

#include <cmath>

namespace fleetsim {

DiffusionParams DiffusionParams::from(const Params& p) {
  DiffusionParams d;
  d.cos_alpha = std::cos(p.real("alpha_degrees", 7.5) * kPi / 180.0);
  d.delta = p.real("delta", 0.1);
  d.speed_m_per_s = p.real("speed", 0.1);
  return d;
}

}  // namespace fleetsim
