// The deeco_wheels actuator in whole runs (experiment file -> Simulation): a robot's path under
// known actions, worked out by hand from the DEECo playground's rules (turn at once, then move
// along the new heading, never backwards); the collision sensor's echo of the action and its
// degree of realization (the playground's: 0 for stay and rotate); contacts with a wall; and a
// kind whose engine cannot turn it so is refused at its line.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

/// An action given in a tick, and what the robot's collision sensor showed in that tick.
struct Action {
  double speed, angle;
};
struct Seen {
  double speed = 0, angle = 0, type = -1;
  float realization = -1;
  std::vector<float> contacts;
};

std::mutex g_mutex;
std::vector<Action> g_script;  ///< tick t's action (the last one stays)
std::vector<Seen> g_seen;      ///< what the sensor gave at the start of tick t

/// `scripted`: gives g_script's actions, one per tick, and records the echo.
class Scripted final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    wheels_ = setup.actuator("deeco_wheels");
    collision_ = setup.sensor("collision");
  }
  void step(RobotIO& io) override {
    const SensorView& c = io.sensor(collision_);
    std::lock_guard lock(g_mutex);
    Seen s;
    if (c.reals.size() == 3) s = {c.reals[0], c.reals[1], c.reals[2]};
    s.realization = c.scalar;
    s.contacts.assign(c.angles.begin(), c.angles.end());
    g_seen.push_back(s);
    const auto t = static_cast<std::size_t>(io.tick);
    if (t < g_script.size()) {
      io.actuator(wheels_).values[0] = g_script[t].speed;
      io.actuator(wheels_).values[1] = g_script[t].angle;
    }
  }
  std::size_t wheels_ = 0, collision_ = 0;
};

PluginRegistry registry() {
  PluginRegistry r;
  register_builtins(r);
  r.add_controller({PluginKind::kController, "scripted", "test", {}},
                   [] { return std::make_unique<Scripted>(); });
  return r;
}

/// One robot of radius 0.1 m and max_speed 1 m/s (0.1 m a tick at speed 1), at the origin
/// heading along +x, and `extra` elements in the arena.
std::string one_robot(int ticks, const std::string& extra = "") {
  return R"(<fleetsim>
  <framework ticks_per_second="10" length=")" +
         std::to_string(ticks / 10.0) + R"("/>
  <kinds>
    <kind name="deeco" base="epuck" radius="0.1" max_speed="1">
      <sensor type="collision"/>
      <actuator type="deeco_wheels"/>
    </kind>
  </kinds>
  <controllers><controller id="s" type="scripted"/></controllers>
  <arena size="4,4">
    <robot id="r" kind="deeco" controller="s" position="0,0" heading="0"/>)" +
         extra + R"(
  </arena>
</fleetsim>)";
}

struct Pose {
  double x, y, theta;
};

/// Runs `xml` and returns the robot's pose after every tick.
std::vector<Pose> run(const std::string& xml, std::vector<Action> script) {
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse_experiment(xml, "deeco_wheels.xml", reg, ExperimentOverrides{}, d);
  EXPECT_TRUE(ex) << d.str();
  if (!ex) return {};
  g_script = std::move(script);
  g_seen.clear();
  Simulation sim(std::move(*ex), reg);
  std::vector<Pose> poses;
  sim.start();
  while (!sim.done()) {
    sim.step();
    const WorldState& s = sim.state();
    poses.push_back({s.x()[0], s.y()[0], s.theta()[0]});
  }
  sim.finish();
  return poses;
}

constexpr double kStep = 0.1;  // metres a tick at speed 1
constexpr double kTol = 1e-7;  // each tick's step is rounded to float

TEST(DeecoWheels, ARobotTurnsAtOnceThenMovesAlongItsNewHeading) {
  // By hand, from the playground's SimulationEngine.moveRobots:
  //  tick 0: move 1         -> (0.1, 0), heading 0
  //  tick 1: 0.5, +pi/2     -> turns to pi/2 first, then 0.05 up: (0.1, 0.05)
  //  tick 2: 0, -pi/2       -> a rotation: back to heading 0, no move
  //  tick 3: 2, pi          -> speed clamped to 1; heading pi; 0.1 back along -x: (0, 0.05)
  //  tick 4: -1, 0          -> a move of speed 0 (never backwards): stays
  //  tick 5: 0, 0           -> stay
  //  tick 6: 0.5, 3pi/2     -> the angle wraps to -pi/2: heading pi/2; 0.05 up: (0, 0.1)
  const std::vector<Pose> p =
      run(one_robot(7),
          {{1, 0}, {0.5, kPi / 2}, {0, -kPi / 2}, {2, kPi}, {-1, 0}, {0, 0}, {0.5, 3 * kPi / 2}});
  const std::vector<Pose> expected = {
      {kStep, 0, 0},       {kStep, kStep / 2, kPi / 2}, {kStep, kStep / 2, 0}, {0, kStep / 2, kPi},
      {0, kStep / 2, kPi}, {0, kStep / 2, kPi},         {0, kStep, kPi / 2}};
  ASSERT_EQ(p.size(), expected.size());
  for (std::size_t t = 0; t < p.size(); ++t) {
    SCOPED_TRACE("tick " + std::to_string(t));
    EXPECT_NEAR(p[t].x, expected[t].x, kTol);
    EXPECT_NEAR(p[t].y, expected[t].y, kTol);
    EXPECT_NEAR(std::remainder(p[t].theta - expected[t].theta, 2 * kPi), 0, 1e-12);
  }
  // differential_drive would have moved along the mid-tick heading (pi/4) in tick 1.
  // The echo at the start of tick t + 1 is tick t's action: speed (clamped), angle (wrapped),
  // type, and the degree of realization (1 for a free move, 0 for stay and rotate).
  ASSERT_EQ(g_seen.size(), 7u);
  EXPECT_EQ(g_seen[0].type, 0);  // nothing yet: a stay
  EXPECT_EQ(g_seen[0].realization, 0.0f);
  struct Echo {
    double speed, angle;
    DeecoActionType type;
    float degree;
  };
  const Echo echoes[] = {{1, 0, DeecoActionType::kMove, 1},
                         {0.5, kPi / 2, DeecoActionType::kRotateAndMove, 1},
                         {0, -kPi / 2, DeecoActionType::kRotate, 0},
                         {1, kPi, DeecoActionType::kRotateAndMove, 1},
                         {0, 0, DeecoActionType::kMove, 1},
                         {0, 0, DeecoActionType::kStay, 0}};
  for (std::size_t t = 0; t < 6; ++t) {
    SCOPED_TRACE("echo of tick " + std::to_string(t));
    const Seen& s = g_seen[t + 1];
    EXPECT_EQ(s.speed, echoes[t].speed);
    EXPECT_NEAR(s.angle, echoes[t].angle, 1e-15);
    EXPECT_EQ(s.type, static_cast<double>(echoes[t].type));
    EXPECT_EQ(s.realization, echoes[t].degree);
    EXPECT_TRUE(s.contacts.empty());
  }
}

TEST(DeecoWheels, AWallStopsTheMoveAtContactAndTheEchoGivesTheFractionDone) {
  // A wall at x = 0.55: the body (radius 0.1) touches it at x = 0.45, half way through tick 4.
  // Then the robot turns left along the wall (a rotation, done in full: degree 0), then moves
  // up beside it (not blocked: degree 1, the wall still touching on its right).
  const std::vector<Pose> p =
      run(one_robot(8, R"(<wall from="0.55,-2" to="0.55,2"/>)"),
          {{1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {0, kPi / 2}, {1, 0}});
  ASSERT_EQ(p.size(), 8u);
  EXPECT_NEAR(p[3].x, 0.4, kTol);
  EXPECT_NEAR(p[4].x, 0.45, 1e-5);  // stopped 1 µm short of the wall
  EXPECT_LT(p[4].x, 0.45);
  EXPECT_NEAR(p[5].x, p[4].x, 1e-6);  // pushing: (almost) nothing more
  EXPECT_LT(p[5].x, 0.45);
  EXPECT_NEAR(p[6].theta, kPi / 2, 1e-12);
  EXPECT_EQ(p[6].x, p[5].x);
  EXPECT_NEAR(p[7].y, kStep, kTol);
  EXPECT_EQ(p[7].x, p[6].x);
  ASSERT_EQ(g_seen.size(), 8u);
  // Tick 4's move: half of it was done, against the wall straight ahead.
  EXPECT_NEAR(g_seen[5].realization, 0.5, 1e-4);
  ASSERT_EQ(g_seen[5].contacts.size(), 1u);
  EXPECT_NEAR(g_seen[5].contacts[0], 0, 1e-6);
  EXPECT_EQ(g_seen[5].type, static_cast<double>(DeecoActionType::kMove));
  // Tick 5's: none of it.
  EXPECT_LT(g_seen[6].realization, 1e-4);
  // Tick 6's rotation: degree 0 (the playground's rule), the wall now on the right.
  EXPECT_EQ(g_seen[7].type, static_cast<double>(DeecoActionType::kRotate));
  EXPECT_EQ(g_seen[7].realization, 0.0f);
  ASSERT_EQ(g_seen[7].contacts.size(), 1u);
  EXPECT_NEAR(g_seen[7].contacts[0], -kPi / 2, 1e-6);
}

TEST(DeecoWheels, AKindOutsideKinematics2dIsRefusedAtItsLine) {
  PluginRegistry reg = registry();
  Diagnostics d;
  const std::string xml = R"(<fleetsim>
  <physics><dynamics2d/></physics>
  <kinds>
    <kind name="deeco" base="epuck" engine="dynamics2d">
      <sensor type="collision"/>
      <actuator type="deeco_wheels"/>
    </kind>
  </kinds>
  <controllers><controller id="s" type="scripted"/></controllers>
  <arena size="4,4"><robot id="r" kind="deeco" controller="s" position="0,0"/></arena>
</fleetsim>)";
  auto ex = parse_experiment(xml, "bad.xml", reg, ExperimentOverrides{}, d);
  if (ex) {
    Simulation sim(std::move(*ex), reg);  // parts are assembled here when not in the parser
    (void)sim;
  }
  EXPECT_NE(d.str().find("bad.xml:6: error: kind 'deeco': actuator 'deeco_wheels': the DEECo "
                         "playground's action model needs a kinematics2d body"),
            std::string::npos)
      << d.str();
}

}  // namespace
}  // namespace fleetsim
