// The one explicit list of built-in plug-ins. `fleetsim list` prints it; a test checks that
// every entry is documented.
#include <algorithm>
#include <cmath>

#include "sim/simulation.hpp"

namespace fleetsim {

namespace {

/// `random_walk`: a controller written against the public plug-in API (one virtual object per
/// robot), kept built-in as a reference and to measure the cost of plug-in controllers.
class RandomWalkController : public Controller {
 public:
  void init(const Params& p, EntityId) override {
    speed_ = p.real("speed", 0.1);
    turn_probability_ = p.real("turn_probability", 0.1);
  }
  void step(RobotIO& io) override {
    if (turning_ > 0) {
      --turning_;
    } else if (io.degree_of_realization < 1.0f || io.rng.uniform() < turn_probability_) {
      turning_ = 1 + static_cast<int>(io.rng.below(10));
      direction_ = io.rng.uniform() < 0.5 ? -1 : 1;
    }
    if (turning_ > 0) {
      *io.left_wheel_m_per_s = -direction_ * speed_;
      *io.right_wheel_m_per_s = direction_ * speed_;
    } else {
      *io.left_wheel_m_per_s = *io.right_wheel_m_per_s = speed_;
    }
  }
  void reset() override { turning_ = 0; }

 private:
  double speed_ = 0.1, turn_probability_ = 0.1;
  int turning_ = 0, direction_ = 1;
};

/// `tag_on_contact`: tags every robot that touches something, shows the count in the status,
/// and ends the run when every robot is tagged (if asked to).
class TagOnContact : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess& w) override {
    tag_ = p.text("tag", "bumped");
    end_when_all_ = p.boolean("end_when_all", false);
    update_status(w);
  }
  void post_step(WorldAccess& w) override {
    for (EntityId id : w.robots())
      if (w.robot_contact_count(id) > 0 && w.robot_tag(id) != tag_) w.set_robot_tag(id, tag_);
    update_status(w);
  }
  bool is_finished(const WorldAccess&) const override { return end_when_all_ && all_; }

 private:
  void update_status(WorldAccess& w) {
    std::size_t tagged = 0;
    auto ids = w.robots();
    for (EntityId id : ids)
      if (w.robot_tag(id) == tag_) ++tagged;
    all_ = !ids.empty() && tagged == ids.size();
    w.set_status("tick " + std::to_string(w.tick()) + ": " + std::to_string(tagged) + " of " +
                 std::to_string(ids.size()) + " robots " + tag_);
  }
  std::string tag_;
  bool end_when_all_ = false, all_ = false;
};

}  // namespace

void register_builtins(PluginRegistry& r) {
  r.add_builtin({PluginKind::kSensor, "proximity",
                 "8 infrared rays from the body surface at the e-puck's angles; 0 = nothing in "
                 "range, 1 = touching, linear in between",
                 {{"proximity_range", "real", "0.1", "range from the body surface, metres "
                                                     "(attribute of <kind>)"}}});
  r.add_builtin({PluginKind::kSensor, "collision",
                 "contact angles relative to the heading and the degree of realization of the "
                 "last move (DEECo playground)",
                 {}});
  r.add_builtin({PluginKind::kActuator, "differential_drive",
                 "two wheel speeds; the body's speed is clamped to the kind's max_speed",
                 {{"max_wheel_speed", "real", "0.13", "m/s (attribute of <kind>)"},
                  {"wheel_distance", "real", "0.053", "axle length, metres (attribute of <kind>)"}}});
  r.add_builtin({PluginKind::kActuator, "led", "one RGB LED colour, logged each frame", {}});
  r.add_controller({PluginKind::kController, "diffusion",
                    "obstacle avoidance (ARGoS report, algorithm 2): straight unless an obstacle "
                    "is in the frontal cone, then turn away",
                    {{"alpha_degrees", "real", "7.5", "half-angle of the frontal cone, degrees"},
                     {"delta", "real", "0.1", "minimum length of the summed readings to react"},
                     {"speed", "real", "0.1", "wheel speed, m/s"}}},
                   nullptr);
  r.add_controller({PluginKind::kController, "idle", "stands still (wheels at 0)", {}}, nullptr);
  r.add_controller({PluginKind::kController, "random_walk",
                    "straight, with random on-the-spot turns (a plug-in-API controller)",
                    {{"speed", "real", "0.1", "wheel speed, m/s"},
                     {"turn_probability", "real", "0.1", "chance per tick of starting a turn"}}},
                   [] { return std::make_unique<RandomWalkController>(); });
  r.add_builtin({PluginKind::kPhysicsEngine, "kinematics2d",
                 "2D kinematics (DEECo playground): circular bodies stop at first contact, never "
                 "overlap; one engine per region",
                 {{"id", "string", "kinematics2d", "engine name"},
                  {"region", "string", "whole arena", "\"xmin,ymin,xmax,ymax\", metres; regions "
                                                      "must tile the arena"}}});
  r.add_loop_functions({PluginKind::kLoopFunctions, "tag_on_contact",
                        "tags robots that bump into something; status shows the count",
                        {{"tag", "string", "bumped", "the tag given"},
                         {"end_when_all", "bool", "false", "end the run when all are tagged"}}},
                       [] { return std::make_unique<TagOnContact>(); });
  r.add_builtin({PluginKind::kLogWriter, "frames",
                 "binary frame log: zstd-compressed columns with a seek index (docs/log-format.md)",
                 {{"path", "string", "", "output file"},
                  {"every", "integer", "1", "log every k ticks"}}});
  r.add_builtin({PluginKind::kLogWriter, "deeco",
                 "DEECo playground text log, its exact grammar (docs/log-format.md)",
                 {{"path", "string", "", "output file"},
                  {"every", "integer", "1", "log every k ticks"}}});
}

}  // namespace fleetsim
