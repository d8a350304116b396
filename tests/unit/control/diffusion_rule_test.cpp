// The diffusion controller's two obstacle-avoidance rules (rule="fleetsim", the default, and
// rule="argos", ARGoS's footbot_diffusion): one control step on hand-made readings of the
// e-puck's 8 rays, and whole runs loaded from an experiment file.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>

#include "control/diffusion.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

// The e-puck's rays, degrees counter-clockwise from the heading (docs/experiment-format.md).
constexpr std::array<double, 8> kAnglesDeg = {17.5, 49, 90, 150, -150, -90, -49, -17.5};

std::array<Vec2, 8> directions() {
  std::array<Vec2, 8> d{};
  for (std::size_t k = 0; k < 8; ++k)
    d[k] = {std::cos(kAnglesDeg[k] * kPi / 180), std::sin(kAnglesDeg[k] * kPi / 180)};
  return d;
}

DiffusionParams params(const std::string& rule) {
  return DiffusionParams::from(Params(std::map<std::string, std::string>{{"rule", rule}}));
}

struct Wheels {
  double left = -1, right = -1;
};

/// One step of the rule in `prm` on readings r (ray order as kAnglesDeg), through both the
/// unrolled (N = 8) and the generic path, which must agree.
Wheels step(const DiffusionParams& prm, const std::array<float, 8>& r, float realization = 1) {
  const auto d = directions();
  Wheels a, b;
  diffusion_step<8>(prm, r, d, realization, a.left, a.right);
  diffusion_step(prm, r, d, realization, b.left, b.right);
  EXPECT_EQ(a.left, b.left);
  EXPECT_EQ(a.right, b.right);
  return a;
}

constexpr double kSpeed = 0.1;  // the default `speed`

TEST(DiffusionRule, ParameterIsReadAndDefaultsToFleetsim) {
  EXPECT_EQ(DiffusionParams::from(Params()).rule, DiffusionRule::kFleetsim);
  EXPECT_EQ(params("fleetsim").rule, DiffusionRule::kFleetsim);
  EXPECT_EQ(params("argos").rule, DiffusionRule::kArgos);
  // The default rule's cone is the one it always had.
  EXPECT_EQ(DiffusionParams::from(Params()).cos_alpha, std::cos(7.5 * kPi / 180.0));
  try {
    params("sideways");
    ADD_FAILURE() << "rule=\"sideways\" was accepted";
  } catch (const SetupError& e) {
    EXPECT_STREQ(e.what(), "parameter 'rule' is 'sideways' (expected fleetsim or argos)");
  }
}

// (a) Nothing seen: both rules go straight.
TEST(DiffusionRule, NothingSeenBothGoStraight) {
  for (const char* rule : {"fleetsim", "argos"}) {
    Wheels w = step(params(rule), {});
    EXPECT_EQ(w.left, kSpeed) << rule;
    EXPECT_EQ(w.right, kSpeed) << rule;
  }
}

// (b) An obstacle straight ahead (the two front rays equal, angle 0). ARGoS averages over the
// 8 rays: 2 x 0.3 x cos(17.5 deg) / 8 = 0.072 < delta goes straight; 2 x 0.8 x ... = 0.19
// turns, by stopping one wheel.
TEST(DiffusionRule, ArgosGoesStraightPastAWeakObstacleAheadAndCurvesAwayFromAStrongOne) {
  const DiffusionParams argos = params("argos");
  Wheels weak = step(argos, {0.3f, 0, 0, 0, 0, 0, 0, 0.3f});
  EXPECT_EQ(weak.left, kSpeed);
  EXPECT_EQ(weak.right, kSpeed);
  // The default sums instead: 2 x 0.3 x cos(17.5 deg) = 0.57 >= delta, in the cone: it turns.
  Wheels weak_fleetsim = step(params("fleetsim"), {0.3f, 0, 0, 0, 0, 0, 0, 0.3f});
  EXPECT_NE(weak_fleetsim.left, weak_fleetsim.right);

  // Strong, exactly ahead (angle 0, not > 0): the left wheel stops.
  Wheels ahead = step(argos, {0.8f, 0, 0, 0, 0, 0, 0, 0.8f});
  EXPECT_EQ(ahead.left, 0);
  EXPECT_EQ(ahead.right, kSpeed);

  // Strong, slightly on the left (angle 2.3 deg, inside the cone but long): curve right, the
  // right wheel stopped. The default turns on the spot there.
  const std::array<float, 8> left_ahead = {0.9f, 0, 0, 0, 0, 0, 0, 0.7f};
  Wheels l = step(argos, left_ahead);
  EXPECT_EQ(l.left, kSpeed);
  EXPECT_EQ(l.right, 0);
  Wheels l_fleetsim = step(params("fleetsim"), left_ahead);
  EXPECT_EQ(l_fleetsim.left, kSpeed);
  EXPECT_EQ(l_fleetsim.right, -kSpeed);

  // The mirror image: on the right, curve left, the left wheel stopped.
  Wheels r = step(argos, {0.7f, 0, 0, 0, 0, 0, 0, 0.9f});
  EXPECT_EQ(r.left, 0);
  EXPECT_EQ(r.right, kSpeed);
}

// (c) An obstacle at 90 deg on the left, touching (reading 1): its mean, 1/8 = 0.125, reaches
// delta, so ARGoS's rule turns although it is outside the cone; the default goes straight
// (outside the cone, not blocked).
TEST(DiffusionRule, ObstacleOnTheSideTurnsArgosButNotTheDefault) {
  const std::array<float, 8> side = {0, 0, 1.0f, 0, 0, 0, 0, 0};
  Wheels argos = step(params("argos"), side);
  EXPECT_EQ(argos.left, kSpeed);
  EXPECT_EQ(argos.right, 0);
  Wheels fleetsim = step(params("fleetsim"), side);
  EXPECT_EQ(fleetsim.left, kSpeed);
  EXPECT_EQ(fleetsim.right, kSpeed);
  EXPECT_NE(argos.right, fleetsim.right);

  // Blocked (realization < 1): the default turns on the spot; the argos rule ignores it.
  Wheels blocked = step(params("fleetsim"), side, 0.5f);
  EXPECT_EQ(blocked.left, kSpeed);
  EXPECT_EQ(blocked.right, -kSpeed);
  Wheels argos_blocked = step(params("argos"), side, 0.5f);
  EXPECT_EQ(argos_blocked.left, argos.left);
  EXPECT_EQ(argos_blocked.right, argos.right);

  // On the right (ray at -90 deg): the left wheel stops.
  Wheels right = step(params("argos"), {0, 0, 0, 0, 0, 1.0f, 0, 0});
  EXPECT_EQ(right.left, 0);
  EXPECT_EQ(right.right, kSpeed);
}

// The angle range includes its bounds: a weak obstacle exactly at +alpha goes straight.
TEST(DiffusionRule, ArgosConeIncludesItsBounds) {
  DiffusionParams prm = params("argos");
  prm.alpha_radians = kPi / 2;      // atan2(y > 0, 0) is the double nearest pi/2, kPi / 2
  const float reading[1] = {0.4f};  // mean 0.4 / 1
  const Vec2 up[1] = {{0, 1}};
  double left = -1, right = -1;
  prm.delta = 0.5;
  diffusion_step(prm, reading, up, 1.0f, left, right);
  EXPECT_EQ(left, kSpeed);
  EXPECT_EQ(right, kSpeed);
  prm.alpha_radians = std::nextafter(kPi / 2, 0.0);  // just inside: now outside the range
  diffusion_step(prm, reading, up, 1.0f, left, right);
  EXPECT_EQ(left, kSpeed);
  EXPECT_EQ(right, 0);
}

// A crowded 2 m x 2 m arena: robots meet walls and each other within a few seconds.
std::string experiment(const std::string& rule_attribute) {
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"5\" seed=\"7\" threads=\"1\"/>\n"
         "  <controllers>\n"
         "    <controller id=\"c\" type=\"diffusion\"" +
         rule_attribute +
         "/>\n"
         "  </controllers>\n"
         "  <arena size=\"2,2\">\n"
         "    <distribute count=\"60\" kind=\"epuck\" controller=\"c\" id_prefix=\"ep\"/>\n"
         "  </arena>\n"
         "</fleetsim>\n";
}

struct RunResult {
  bool loaded = false;
  std::string diagnostics;
  std::uint64_t hash = 0;
};

RunResult run(const std::string& rule_attribute, int threads = 1) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  ExperimentOverrides o;
  o.threads = threads;
  auto ex = parse_experiment(experiment(rule_attribute), "diffusion_rule.xml", registry, o, diags);
  RunResult r;
  r.diagnostics = diags.str();
  if (!ex) return r;
  r.loaded = true;
  Simulation sim(std::move(*ex), registry);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  r.hash = sim.state().hash();
  return r;
}

// (d) rule="argos" loads and runs; it ends elsewhere than the default, the same on any
// number of threads; rule="fleetsim" is the default exactly.
TEST(DiffusionRule, ArgosRuleRunsAndDiffersFromTheDefault) {
  RunResult fleetsim_default = run("");
  RunResult fleetsim = run(" rule=\"fleetsim\"");
  RunResult argos = run(" rule=\"argos\"");
  RunResult argos2 = run(" rule=\"argos\"", 2);
  ASSERT_TRUE(fleetsim_default.loaded) << fleetsim_default.diagnostics;
  ASSERT_TRUE(fleetsim.loaded) << fleetsim.diagnostics;
  ASSERT_TRUE(argos.loaded) << argos.diagnostics;
  ASSERT_TRUE(argos2.loaded) << argos2.diagnostics;
  EXPECT_EQ(fleetsim.hash, fleetsim_default.hash);
  EXPECT_NE(argos.hash, fleetsim_default.hash);
  EXPECT_EQ(argos2.hash, argos.hash);
}

// (e) An unknown rule is refused at load, naming the parameter and the allowed values.
TEST(DiffusionRule, UnknownRuleIsAnErrorAtLoad) {
  RunResult r = run(" rule=\"sideways\"");
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.diagnostics.find("diffusion_rule.xml:"), std::string::npos) << r.diagnostics;
  EXPECT_NE(r.diagnostics.find(": error: controller 'c' (type 'diffusion'): parameter 'rule' is "
                               "'sideways' (expected fleetsim or argos)"),
            std::string::npos)
      << r.diagnostics;
}

}  // namespace
}  // namespace fleetsim
