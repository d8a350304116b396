// Flyers: the pointmass3d engine and the eyebot kind. They climb and fly at the commanded
// velocity with bounded acceleration, pass over ground robots (no collision, and ground
// robots' proximity rays do not see a flyer above them, but do see a landed one), and share a
// run with a 2D engine, each kind going to the engine type that accepts it.
#include <gtest/gtest.h>

#include <cmath>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::testing {
namespace {

/// Climbs at 0.5 m/s for `climb` ticks (parameter), then flies along x at 0.5 m/s.
class Climb final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    climb_ = p.integer("climb", 20);
    speed_ = setup.actuator("quadrotor_speed");
  }
  bool save(std::vector<std::uint8_t>&) const override { return true; }
  void step(RobotIO& io) override {
    auto v = io.actuator(speed_).values;
    const bool up = io.tick < static_cast<Tick>(climb_);
    v[0] = up ? 0.0 : 0.5;
    v[1] = 0;
    v[2] = up ? 0.5 : 0.0;
    v[3] = 0;
  }

 private:
  std::int64_t climb_ = 20;
  std::size_t speed_ = 0;
};

/// Records the range and vertical bearing of the first message its range-and-bearing sensor
/// hears each tick (one robot listens per test).
class Listen final : public Controller {
 public:
  static inline float range = 0, vertical = 0;
  static inline int heard = 0;
  void init(const Params&, const ControllerSetup& setup) override {
    rab_ = setup.sensor("range_and_bearing");
  }
  void step(RobotIO& io) override {
    const auto& m = io.sensor(rab_).messages;
    heard = static_cast<int>(m.size());
    if (!m.empty()) {
      range = m[0].range_m;
      vertical = m[0].vertical_bearing;
    }
  }

 private:
  std::size_t rab_ = 0;
};

struct FlyRun {
  PluginRegistry registry;
  std::unique_ptr<Simulation> sim;
  explicit FlyRun(const std::string& xml, int threads = 1) {
    register_builtins(registry);
    registry.add_controller({PluginKind::kController,
                             "climb",
                             "test: climb, then fly along x",
                             {{"climb", "integer", "20", "ticks of climbing"}}},
                            [] { return std::make_unique<Climb>(); });
    registry.add_controller({PluginKind::kController, "listen", "test: records a message", {}},
                            [] { return std::make_unique<Listen>(); });
    Diagnostics diags;
    ExperimentOverrides ov;
    ov.threads = threads;
    auto ex = parse_experiment(xml, "fly.xml", registry, ov, diags);
    if (!ex) throw std::runtime_error(diags.str());
    sim = std::make_unique<Simulation>(std::move(*ex), registry);
  }
  std::uint32_t row(const std::string& name) const {
    const auto& names = sim->state().robot_name();
    for (std::uint32_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    throw std::runtime_error("no robot " + name);
  }
  double col(const char* column, const std::string& name) const {
    const auto& st = sim->state();
    return st.robots.span<double>(st.robots.find(column))[row(name)];
  }
};

std::string scene(const std::string& bodies, int climb = 20) {
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"0\" seed=\"7\"/>\n"
         "  <controllers>\n"
         "    <controller id=\"fly\" type=\"climb\" climb=\"" +
         std::to_string(climb) +
         "\"/>\n"
         "    <controller id=\"still\" type=\"idle\"/>\n"
         "    <controller id=\"d\" type=\"diffusion\"/>\n"
         "    <controller id=\"listen\" type=\"listen\"/>\n"
         "  </controllers>\n"
         "  <arena size=\"6,6\">\n" +
         bodies +
         "  </arena>\n"
         "  <physics>\n"
         "    <dynamics2d/>\n"
         "    <pointmass3d max_acceleration=\"1\" ceiling=\"3\"/>\n"
         "  </physics>\n"
         "</fleetsim>\n";
}

TEST(PointMass3d, AFlyerClimbsThenFliesOverGroundRobotsUnseen) {
  FlyRun run(
      scene("    <robot id=\"eye\" kind=\"eyebot\" controller=\"fly\" position=\"-2,0\"/>\n"
            "    <robot id=\"ground\" controller=\"still\" position=\"-1,0\"/>\n"));
  const auto& model = run.sim->model();
  EXPECT_EQ(model.engines[run.sim->state().robot_engine()[run.row("eye")]].type, "pointmass3d");
  EXPECT_EQ(model.engines[run.sim->state().robot_engine()[run.row("ground")]].type, "dynamics2d");
  EXPECT_EQ(run.col("z", "eye"), 0) << "flyers start on the ground";
  for (int t = 0; t < 20; ++t) run.sim->step();
  // 20 ticks of climbing: the vertical speed grows by 0.1 m/s a tick (1 m/s^2) up to 0.5,
  // and each tick moves by the new speed: 0.1 s x (0.1 + 0.2 + 0.3 + 0.4 + 16 x 0.5).
  EXPECT_NEAR(run.col("z", "eye"), 0.9, 1e-9);
  EXPECT_NEAR(run.col("x", "eye"), -2, 1e-12);
  bool saw_it = false;
  const auto& st = run.sim->state();
  const ColumnHandle prox = st.robots.find("proximity");
  for (int t = 0; t < 60; ++t) {
    run.sim->step();
    const float* p = st.robots.span<float>(prox).data() + run.row("ground") * 8;
    for (int k = 0; k < 8; ++k) saw_it = saw_it || p[k] > 0;
  }
  // Then 6 s at up to 0.5 m/s along x (less while the velocity turns from up to forward, at
  // 0.1 m/s a tick): over the e-puck at x = -1, staying well above it.
  EXPECT_GT(run.col("x", "eye"), -2 + 0.5 * 6 - 0.3);
  EXPECT_LT(run.col("x", "eye"), -2 + 0.5 * 6);
  EXPECT_GT(run.col("z", "eye"), 0.6);
  EXPECT_NEAR(run.col("y", "ground"), 0, 1e-9) << "the flyer pushed the ground robot";
  EXPECT_NEAR(run.col("x", "ground"), -1, 1e-9) << "the flyer pushed the ground robot";
  EXPECT_FALSE(saw_it) << "the e-puck's rays saw a flyer 0.9 m above it";
  EXPECT_LE(run.col("z", "eye"), 3.0);
}

TEST(PointMass3d, ALandedFlyerIsSeenAndTheCeilingHolds) {
  // climb=0: the flyer stays on the ground next to the e-puck, which sees it.
  FlyRun landed(
      scene("    <robot id=\"eye\" kind=\"eyebot\" controller=\"fly\" position=\"0,0\"/>\n"
            "    <robot id=\"ground\" controller=\"still\" position=\"0.33,0\" heading=\"180\"/>\n",
            0));
  landed.sim->step();
  landed.sim->step();
  const auto& st = landed.sim->state();
  const float* p =
      st.robots.span<float>(st.robots.find("proximity")).data() + landed.row("ground") * 8;
  float most = 0;
  for (int k = 0; k < 8; ++k) most = std::max(most, p[k]);
  EXPECT_GT(most, 0.0f);  // (ARGoS's e-puck curve: 0.03 at its 4.5 cm)
  // climb=1000: capped by the region's 3 m ceiling.
  FlyRun high(
      scene("    <robot id=\"eye\" kind=\"eyebot\" controller=\"fly\" position=\"0,0\"/>\n", 1000));
  for (int t = 0; t < 100; ++t) high.sim->step();
  EXPECT_EQ(high.col("z", "eye"), 3.0);
  EXPECT_EQ(high.col("body_vz", "eye"), 0.0);
}

TEST(PointMass3d, MixedRunsAreTheSameBitsOnOneAndTwoThreads) {
  const std::string xml = scene(
      "    <distribute count=\"20\" kind=\"eyebot\" controller=\"fly\" id_prefix=\"e\"/>\n"
      "    <distribute count=\"80\" controller=\"d\" id_prefix=\"g\"/>\n"
      "    <distribute count=\"10\" kind=\"cylinder\" id_prefix=\"c\"/>\n");
  FlyRun one(xml, 1), two(xml, 2);
  for (int t = 0; t < 150; ++t) {
    one.sim->step();
    two.sim->step();
  }
  EXPECT_EQ(one.sim->state().hash(), two.sim->state().hash());
}

// Range-and-bearing between a flyer and a ground robot is measured in 3D: each device sits at
// its robot's altitude plus its kind's height.
TEST(PointMass3d, RangeAndBearingReachesUpToAFlyer) {
  FlyRun run(
      scene("    <robot id=\"eye\" kind=\"eyebot\" controller=\"fly\" position=\"-1,0\"/>\n"
            "    <robot id=\"foot\" kind=\"footbot\" controller=\"listen\" position=\"0,0\"/>\n",
            1000));
  for (int t = 0; t < 21; ++t) run.sim->step();
  // The footbot sensed, in its 21st step, the flyer where 20 ticks of climbing left it: 0.9 m
  // up (see above), 1 m away; devices at the kinds' heights, 0.566 m and 0.146 m.
  ASSERT_EQ(Listen::heard, 1);
  const double dz = 0.9 + 0.566 - 0.146;
  EXPECT_NEAR(Listen::range, std::sqrt(1 + dz * dz), 1e-5);
  EXPECT_NEAR(Listen::vertical, std::atan2(dz, 1.0), 1e-5);
}

TEST(PointMass3d, AFlyerWithoutA3dEngineIsRefused) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  const std::string xml =
      "<fleetsim>\n  <framework/>\n"
      "  <controllers><controller id=\"still\" type=\"idle\"/></controllers>\n"
      "  <arena size=\"4,4\">\n"
      "    <robot id=\"eye\" kind=\"eyebot\" controller=\"still\" position=\"0,0\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n";
  EXPECT_FALSE(parse_experiment(xml, "fly.xml", registry, {}, diags));
  EXPECT_NE(diags.str().find("fly.xml:5: error: robot kind 'eyebot' cannot be simulated by "
                             "kinematics2d: it flies"),
            std::string::npos)
      << diags.str();
}

}  // namespace
}  // namespace fleetsim::testing
