// An out-of-tree plug-in library: what a user writes to add sensors, controllers and loop
// functions. Built by CMake as build/examples/plugins/libexample_plugins.so and loaded by
// examples/plugins/plugins.xml through <plugins><library path="libexample_plugins.so"/>.
// It includes only the public SDK (include/fleetsim); docs/robot-parts.md walks through it.
//
//   light        a sensor: light readings toward one light source (a parameter), with walls
//                casting shadows
//   phototaxis   a controller that drives toward the light with that sensor
//   blinker      a controller that blinks its LED and flips its tag
//   follow_centroid  loop functions that keep an object at the robots' centroid
//   progress     a reward term for learning: how much closer each agent came to a point
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleetsim/plugin.hpp"

namespace {

using namespace fleetsim;

/// `light`: `count` light receptors around the body, receptor k facing k * 360 / count degrees
/// counter-clockwise from the heading. With the light at distance d and bearing b (robot
/// frame), receptor k reads
///     max(0, cos(angle_k - b)) * intensity,   intensity = 1 / (1 + (d / half_distance)^2),
/// and every receptor reads 0 when `shadows` is on and a wall, box or bitmap edge lies between
/// the robot's centre and the light.
///   XML: light (string "x,y", metres, required), count (integer, 8), half_distance (real, 1,
///   metres: where the intensity is 1/2), shadows (bool, true).
///   SensorView: values (one per receptor, in [0, 1]), angles, directions, scalar = intensity.
///   Column: `<name>_intensity` (f32, hashed): the intensity at the robot in the last tick.
class LightSensor final : public Sensor {
 public:
  void setup(PartSetup& setup) override {
    const Params& p = setup.params();
    const std::string where = "sensor '" + setup.name() + "': ";
    std::istringstream at(p.text("light"));
    char comma = 0;
    if (!(at >> light_.x >> comma >> light_.y) || comma != ',' || !(at >> std::ws).eof())
      setup.error(where + "light=\"" + p.text("light") +
                  "\" is not a position (expected \"x,y\" in metres, e.g. light=\"1,-1\")");
    const auto count = p.integer("count", 8);
    if (count < 1 || count > 64) {
      setup.error(where + "count=" + std::to_string(count) + " is out of range (expected 1 to 64)");
      return;
    }
    half_distance_ = p.real("half_distance", 1.0);
    if (!(half_distance_ > 0)) setup.error(where + "half_distance must be > 0 (metres)");
    shadows_ = p.boolean("shadows", true);
    for (std::int64_t k = 0; k < count; ++k) {
      const double a = 2 * kPi * static_cast<double>(k) / static_cast<double>(count);
      angles_.push_back(static_cast<float>(a <= kPi ? a : a - 2 * kPi));
      directions_.push_back({std::cos(a), std::sin(a)});
    }
    // Width 1, so kinds with different receptor counts can share it.
    intensity_ = setup.column({setup.name() + "_intensity", ColumnType::kF32, 1, true, false,
                               "light intensity at the robot in the last tick, 0 to 1", "light"});
    readings_.resize(static_cast<std::size_t>(std::max(1, setup.workers())));
  }

  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const WorldView& w = *ctx.world;
    const Vec2 p = w.robot_position(robot.row);
    const Vec2 to = light_ - p;
    const double d = length(to);
    double intensity = 1.0 / (1.0 + (d / half_distance_) * (d / half_distance_));
    if (shadows_ && w.line_blocked(p, light_)) intensity = 0;
    const double b = std::atan2(to.y, to.x) - w.robot_heading(robot.row);
    std::vector<float>& values = readings_[static_cast<std::size_t>(ctx.worker)];
    values.resize(angles_.size());
    for (std::size_t k = 0; k < angles_.size(); ++k)
      values[k] = static_cast<float>(std::max(0.0, std::cos(angles_[k] - b)) * intensity);
    w.column<float>(intensity_)[robot.row] = static_cast<float>(intensity);
    out.values = values;
    out.angles = angles_;
    out.directions = directions_;
    out.scalar = static_cast<float>(intensity);
  }

 private:
  Vec2 light_;
  double half_distance_ = 1;
  bool shadows_ = true;
  std::vector<float> angles_;
  std::vector<Vec2> directions_;
  ColumnHandle intensity_ = kNoColumn;
  /// One worker's readings: valid until that worker senses its next robot.
  std::vector<std::vector<float>> readings_;
};

/// `phototaxis`: turns toward the light (the receptors' readings summed as vectors) while
/// driving on; goes straight in the dark. When its proximity rays see something ahead, or its
/// last move was blocked (collision sensor), it turns on the spot away from what it sees. Its
/// LEDs show the light intensity (yellow, brighter when nearer). Parts: a `light` sensor and
/// `differential_drive`; optional `proximity`, `collision` and `leds`.
class Phototaxis final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    speed_ = p.real("speed", 0.08);
    light_ = setup.sensor("light");
    wheels_ = setup.actuator("differential_drive");
    proximity_ = setup.find_sensor_type("proximity");
    collision_ = setup.find_sensor_type("collision");
    leds_ = setup.find_actuator_type("leds");
  }
  /// No state beyond init(): a robot may move to another process as it is.
  bool save(std::vector<std::uint8_t>&) const override { return true; }
  void step(RobotIO& io) override {
    const SensorView& light = io.sensor(light_);
    double lx = 0, ly = 0;
    for (std::size_t k = 0; k < light.values.size(); ++k) {
      lx += light.values[k] * light.directions[k].x;
      ly += light.values[k] * light.directions[k].y;
    }
    double ox = 0, oy = 0;
    if (proximity_) {
      const SensorView& prox = io.sensor(*proximity_);
      for (std::size_t k = 0; k < prox.values.size(); ++k) {
        ox += prox.values[k] * prox.directions[k].x;
        oy += prox.values[k] * prox.directions[k].y;
      }
    }
    const bool blocked = collision_ && io.sensor(*collision_).scalar < 1.0f;
    std::span<double> w = io.actuator(wheels_).values;
    if (ox > 0.1 || (blocked && ox * ox + oy * oy > 0)) {  // turn away on the spot
      w[0] = oy > 0 ? speed_ : -speed_;
      w[1] = -w[0];
    } else if (lx * lx + ly * ly > 1e-6) {  // the light: turn toward it while driving
      const double turn = std::clamp(std::atan2(ly, lx) / (kPi / 2), -1.0, 1.0);
      w[0] = speed_ * (1 - turn);
      w[1] = speed_ * (1 + turn);
    } else {  // dark: straight on
      w[0] = w[1] = speed_;
    }
    if (leds_) {
      const auto v = static_cast<std::uint8_t>(std::lround(255 * light.scalar));
      for (Color& c : io.actuator(*leds_).colors) c = Color{v, v, 0, 255};
    }
  }

 private:
  double speed_ = 0.08;
  std::size_t light_ = 0, wheels_ = 0;
  std::optional<std::size_t> proximity_, collision_, leds_;
};

/// `blinker`: drives forward, turns when blocked, blinks its LED and flips its tag between
/// "on" and "off" every `period` ticks. `fail_at_tick` (a test aid) makes it throw at that tick.
/// Parts: `differential_drive` and `leds`; optional `collision`.
class Blinker final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    period_ = std::max<std::int64_t>(1, p.integer("period", 10));
    speed_ = p.real("speed", 0.08);
    fail_at_ = p.integer("fail_at_tick", -1);
    phase_ = setup.robot() == kNoEntity ? 0 : static_cast<std::int64_t>(setup.robot()) % period_;
    wheels_ = setup.actuator("differential_drive");
    leds_ = setup.actuator("leds");
    collision_ = setup.find_sensor_type("collision");
  }
  /// No state beyond init() (the phase comes from the robot's id).
  bool save(std::vector<std::uint8_t>&) const override { return true; }
  void step(RobotIO& io) override {
    if (io.tick == fail_at_) throw std::runtime_error("blinker asked to fail at this tick");
    const bool on = ((io.tick + phase_) / period_) % 2 == 0;
    for (Color& c : io.actuator(leds_).colors)
      c = on ? Color{0, 160, 255, 255} : Color{0, 0, 0, 255};
    if ((io.tick + phase_) % period_ == 0) io.set_tag(on ? "on" : "off");
    const bool blocked = collision_ && io.sensor(*collision_).scalar < 1.0f;
    std::span<double> w = io.actuator(wheels_).values;
    w[0] = blocked ? -speed_ : speed_;
    w[1] = speed_;
  }

 private:
  std::int64_t period_ = 10, fail_at_ = -1, phase_ = 0;
  double speed_ = 0.08;
  std::size_t wheels_ = 0, leds_ = 0;
  std::optional<std::size_t> collision_;
};

/// `follow_centroid`: keeps one object at the centroid of all robots and reports it in the
/// status string; ends the run when the robots' spread falls below `end_spread` metres.
class FollowCentroid final : public LoopFunctions {
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
  // Checkpoints: the last spread and the marker (the parameters come back through restore).
  bool save(std::vector<std::uint8_t>& out) const override {
    const std::size_t at = out.size();
    out.resize(at + sizeof spread_ + sizeof marker_);
    std::memcpy(out.data() + at, &spread_, sizeof spread_);
    std::memcpy(out.data() + at + sizeof spread_, &marker_, sizeof marker_);
    return true;
  }
  void restore(const Params& p, WorldAccess&, std::span<const std::uint8_t> state) override {
    if (state.size() != sizeof spread_ + sizeof marker_)
      throw std::runtime_error("follow_centroid: not a saved state");
    end_spread_ = p.real("end_spread", 0.0);
    std::memcpy(&spread_, state.data(), sizeof spread_);
    std::memcpy(&marker_, state.data() + sizeof spread_, sizeof marker_);
  }

 private:
  double end_spread_ = 0, spread_ = 1e300;
  EntityId marker_ = kNoEntity;
};

/// `progress`: a reward term (fleetsim/reward.hpp) for Python's fleetsim.Env: the metres each
/// agent came closer to the point `to` in the last step (negative when it went away). It keeps
/// each agent's last distance, so it starts again at every episode (reset).
///   XML: <learning><reward type="progress" weight="1" to="x,y"/></learning>, or from Python
///   Env(path, rewards={"progress": {"to": (x, y)}}).
class Progress final : public Reward {
 public:
  void init(const Params& p, const RewardSetup& setup) override {
    std::istringstream at(p.text("to"));
    char comma = 0;
    if (!(at >> to_.x >> comma >> to_.y) || comma != ',' || !(at >> std::ws).eof())
      throw SetupError("to=\"" + p.text("to") + "\" is not a point (expected \"x,y\" in metres)");
    agents_.assign(setup.agents().begin(), setup.agents().end());
    last_.assign(agents_.size(), 0.0);
  }
  void reset(const RewardWorld& world) override {
    for (std::size_t i = 0; i < agents_.size(); ++i)
      last_[i] = length(world.robot_position(agents_[i]) - to_);
  }
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const double d = length(world.robot_position(agents[i]) - to_);
      values[i] = last_[i] - d;
      last_[i] = d;
    }
  }

 private:
  Vec2 to_;
  std::vector<std::uint32_t> agents_;  ///< their rows
  std::vector<double> last_;           ///< each agent's distance after the last step
};

}  // namespace

extern "C" int fleetsim_plugin_abi_version() {
  return FLEETSIM_PLUGIN_ABI_VERSION;
}

extern "C" void fleetsim_register_plugins(fleetsim::PluginRegistry& registry) {
  registry.add_sensor(
      {PluginKind::kSensor,
       "light",
       "light receptors around the body toward one light source (values in [0, 1], angles, "
       "directions; scalar = intensity); walls cast shadows",
       {{"light", "string", "", "position of the light, \"x,y\" in metres"},
        {"count", "integer", "8", "number of receptors, evenly spaced from the heading"},
        {"half_distance", "real", "1", "distance at which the intensity is 1/2, metres"},
        {"shadows", "bool", "true", "walls, boxes and bitmap edges block the light"}}},
      [] { return std::make_unique<LightSensor>(); });
  registry.add_controller(
      {PluginKind::kController,
       "phototaxis",
       "drives toward the light of a `light` sensor, avoiding what its proximity rays see",
       {{"speed", "real", "0.08", "wheel speed, m/s"}}},
      [] { return std::make_unique<Phototaxis>(); }, ControllerScope::kShared);
  registry.add_controller(
      {PluginKind::kController,
       "blinker",
       "forward, blinking its LED and flipping its tag",
       {{"period", "integer", "10", "ticks between LED changes"},
        {"speed", "real", "0.08", "wheel speed, m/s"},
        {"fail_at_tick", "integer", "-1", "throw at this tick (a test aid); -1 = never"}}},
      [] { return std::make_unique<Blinker>(); });
  registry.add_loop_functions({PluginKind::kLoopFunctions,
                               "follow_centroid",
                               "keeps the first object at the robots' centroid; status shows it",
                               {{"end_spread", "real", "0",
                                 "end the run when all robots are within this of the "
                                 "centroid, metres"}}},
                              [] { return std::make_unique<FollowCentroid>(); });
  registry.add_reward({PluginKind::kReward,
                       "progress",
                       "metres the agent came closer to a point in the last step",
                       {{"to", "string", "", "the point, \"x,y\" in metres"}}},
                      [] { return std::make_unique<Progress>(); });
}
