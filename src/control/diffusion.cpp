#include "control/diffusion.hpp"
#include "core/det_math.hpp"

#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace fleetsim {

DiffusionParams DiffusionParams::from(const Params& p) {
  DiffusionParams d;
  d.alpha_radians = p.real("alpha_degrees", 7.5) * kPi / 180.0;
  double sin_alpha;
  det_sincos(d.alpha_radians, sin_alpha, d.cos_alpha);
  d.delta = p.real("delta", 0.1);
  d.speed_m_per_s = p.real("speed", 0.1);
  const std::string rule = p.text("rule", "fleetsim");
  if (rule == "fleetsim")
    d.rule = DiffusionRule::kFleetsim;
  else if (rule == "argos")
    d.rule = DiffusionRule::kArgos;
  else
    throw SetupError("parameter 'rule' is '" + rule + "' (expected fleetsim or argos)");
  return d;
}

namespace {

class DiffusionController final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    params_ = DiffusionParams::from(p);
    proximity_ = setup.sensor("proximity");
    wheels_ = setup.actuator("differential_drive");
    collision_ = setup.find_sensor_type("collision");
  }
  bool save(std::vector<std::uint8_t>&) const override { return true; }  // no state
  void step(RobotIO& io) override {
    const SensorView& prox = io.sensor(proximity_);
    const float realization = collision_ ? io.sensor(*collision_).scalar : 1.0f;
    std::span<double> wheels = io.actuator(wheels_).values;
    if (prox.values.size() == 8)
      diffusion_step<8>(params_, prox.values, prox.directions, realization, wheels[0], wheels[1]);
    else
      diffusion_step(params_, prox.values, prox.directions, realization, wheels[0], wheels[1]);
  }

 private:
  DiffusionParams params_;
  std::size_t proximity_ = 0, wheels_ = 0;
  std::optional<std::size_t> collision_;
};

class IdleController final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    wheels_ = setup.find_actuator_type("differential_drive");
  }
  bool save(std::vector<std::uint8_t>&) const override { return true; }  // no state
  void step(RobotIO& io) override {
    if (wheels_)
      for (double& v : io.actuator(*wheels_).values) v = 0;
  }

 private:
  std::optional<std::size_t> wheels_;
};

/// A controller written against the public plug-in API with per-robot state, kept built-in as
/// a reference and to measure the cost of per-robot controllers.
class RandomWalkController final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    speed_ = p.real("speed", 0.1);
    turn_probability_ = p.real("turn_probability", 0.1);
    wheels_ = setup.actuator("differential_drive");
    collision_ = setup.find_sensor_type("collision");
  }
  void step(RobotIO& io) override {
    const float realization = collision_ ? io.sensor(*collision_).scalar : 1.0f;
    if (turning_ > 0) {
      --turning_;
    } else if (realization < 1.0f || io.rng.uniform() < turn_probability_) {
      turning_ = 1 + static_cast<int>(io.rng.below(10));
      direction_ = io.rng.uniform() < 0.5 ? -1 : 1;
    }
    std::span<double> w = io.actuator(wheels_).values;
    if (turning_ > 0) {
      w[0] = -direction_ * speed_;
      w[1] = direction_ * speed_;
    } else {
      w[0] = w[1] = speed_;
    }
  }
  void reset() override { turning_ = 0; }
  bool save(std::vector<std::uint8_t>& out) const override {
    const std::int32_t state[2] = {turning_, direction_};
    const auto* b = reinterpret_cast<const std::uint8_t*>(state);
    out.insert(out.end(), b, b + sizeof state);
    return true;
  }
  void restore(std::span<const std::uint8_t> in) override {
    std::int32_t state[2];
    if (in.size() != sizeof state)
      throw std::runtime_error("random_walk: a saved state of " + std::to_string(in.size()) +
                               " bytes (expected " + std::to_string(sizeof state) + ")");
    std::memcpy(state, in.data(), sizeof state);
    turning_ = state[0];
    direction_ = state[1];
  }

 private:
  double speed_ = 0.1, turn_probability_ = 0.1;
  int turning_ = 0, direction_ = 1;
  std::size_t wheels_ = 0;
  std::optional<std::size_t> collision_;
};

}  // namespace

std::unique_ptr<Controller> make_diffusion_controller() {
  return std::make_unique<DiffusionController>();
}
std::unique_ptr<Controller> make_idle_controller() {
  return std::make_unique<IdleController>();
}
std::unique_ptr<Controller> make_external_controller() {
  // The commands are set between steps from outside (Python); nothing to do here.
  class External final : public Controller {
   public:
    void init(const Params&, const ControllerSetup&) override {}
    bool save(std::vector<std::uint8_t>&) const override { return true; }  // no state
    void step(RobotIO&) override {}
  };
  return std::make_unique<External>();
}
std::unique_ptr<Controller> make_random_walk_controller() {
  return std::make_unique<RandomWalkController>();
}

}  // namespace fleetsim
