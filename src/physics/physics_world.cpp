#include "physics/physics_world.hpp"

#include <cmath>
#include <string>

#include "fleetsim/controller.hpp"

namespace fleetsim {

int engine_integer(PhysicsSetup& setup, std::size_t r, const char* name, int fallback, int lo,
                   int hi) {
  const std::int64_t v = setup.params(r).integer(name, fallback);
  if (v < lo || v > hi) {
    setup.error(r, std::string(name) + "=" + std::to_string(v) + " is out of range (expected " +
                       std::to_string(lo) + " to " + std::to_string(hi) + ")");
    return fallback;
  }
  return static_cast<int>(v);
}

double engine_real(PhysicsSetup& setup, std::size_t r, const char* name, double fallback,
                   bool positive) {
  const Params& p = setup.params(r);
  const double v = p.real(name, fallback);
  if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
    setup.error(r, std::string(name) + "=" + p.text(name, "") + " is not a " +
                       (positive ? "positive" : "non-negative") + " finite number");
    return fallback;
  }
  return v;
}

}  // namespace fleetsim
