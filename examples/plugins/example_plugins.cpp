// An out-of-tree plug-in library: what a user writes to add controllers and loop functions.
// Built by CMake as build/examples/plugins/libexample_plugins.so and loaded by
// examples/plugins/plugins.xml through <plugins><library path="libexample_plugins.so"/>.
#include <cmath>
#include <stdexcept>

#include "fleetsim/plugin.hpp"

namespace {

using namespace fleetsim;

/// `blinker`: drives forward, turns when blocked, blinks its LED and flips its tag between
/// "on" and "off" every `period` ticks. `fail_at_tick` (a test aid) makes it throw at that tick.
class Blinker : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    period_ = std::max<std::int64_t>(1, p.integer("period", 10));
    speed_ = p.real("speed", 0.08);
    fail_at_ = p.integer("fail_at_tick", -1);
    phase_ = static_cast<std::int64_t>(setup.robot()) % period_;
    wheels_ = setup.actuator("differential_drive");
    leds_ = setup.actuator("leds");
    collision_ = setup.sensor("collision");
  }
  void step(RobotIO& io) override {
    if (io.tick == fail_at_) throw std::runtime_error("blinker asked to fail at this tick");
    bool on = ((io.tick + phase_) / period_) % 2 == 0;
    for (Color& c : io.actuator(leds_).colors) c = on ? Color{0, 160, 255, 255} : Color{0, 0, 0, 255};
    if ((io.tick + phase_) % period_ == 0) io.set_tag(on ? "on" : "off");
    bool blocked = io.sensor(collision_).scalar < 1.0f;
    std::span<double> w = io.actuator(wheels_).values;
    w[0] = blocked ? -speed_ : speed_;
    w[1] = speed_;
  }

 private:
  std::size_t wheels_ = 0, leds_ = 0, collision_ = 0;
  std::int64_t period_ = 10, fail_at_ = -1, phase_ = 0;
  double speed_ = 0.08;
};

/// `follow_centroid`: keeps one object at the centroid of all robots and reports it in the
/// status string; ends the run when the robots' spread falls below `end_spread` metres.
class FollowCentroid : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess& w) override {
    end_spread_ = p.real("end_spread", 0.0);
    auto objects = w.objects();
    marker_ = objects.empty() ? kNoEntity : objects.front();
  }
  void post_step(WorldAccess& w) override {
    Vec2 c{0, 0};
    auto ids = w.robots();
    if (ids.empty()) return;
    for (EntityId id : ids) c = c + w.robot_position(id);
    c = c * (1.0 / static_cast<double>(ids.size()));
    double spread = 0;
    for (EntityId id : ids) spread = std::max(spread, length(w.robot_position(id) - c));
    spread_ = spread;
    if (marker_ != kNoEntity) w.set_object(marker_, c, 0.1, "centroid");
    char buf[96];
    std::snprintf(buf, sizeof buf, "centroid %.3f,%.3f spread %.3f", c.x, c.y, spread);
    w.set_status(buf);
  }
  bool is_finished(const WorldAccess&) const override { return spread_ < end_spread_; }

 private:
  double end_spread_ = 0, spread_ = 1e300;
  EntityId marker_ = kNoEntity;
};

}  // namespace

extern "C" int fleetsim_plugin_abi_version() { return FLEETSIM_PLUGIN_ABI_VERSION; }

extern "C" void fleetsim_register_plugins(fleetsim::PluginRegistry& registry) {
  registry.add_controller(
      {PluginKind::kController, "blinker", "forward, blinking its LED and flipping its tag",
       {{"period", "integer", "10", "ticks between LED changes"},
        {"speed", "real", "0.08", "wheel speed, m/s"},
        {"fail_at_tick", "integer", "-1", "throw at this tick (a test aid); -1 = never"}}},
      [] { return std::make_unique<Blinker>(); });
  registry.add_loop_functions(
      {PluginKind::kLoopFunctions, "follow_centroid",
       "keeps the first object at the robots' centroid; status shows it",
       {{"end_spread", "real", "0", "end the run when all robots are within this of the "
                                    "centroid, metres"}}},
      [] { return std::make_unique<FollowCentroid>(); });
}
