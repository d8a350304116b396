// The foot-bot's and e-puck's proximity readings follow ARGoS's curves by default
// (footbot_proximity_default_sensor.cpp in ARGoS: 1 within 9.9 mm of the body, else
// 0.0100527 / (d + 0.000163144), so at least 0.1 whenever something is within the 10 cm
// range); fleetsim's linear curve stays available as response="linear"; ARGoS's uniform
// noise_level is drawn from the counter-based generator, so runs repeat.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::testing {
namespace {

constexpr double kRadius = 0.085;          ///< the built-in foot-bot's
constexpr double kRay0 = 7.5 * kPi / 180;  ///< the first of its 24 rays, from the heading

/// One foot-bot of kind `kind` (idle) facing a wall `gap` metres ahead of its body; returns its
/// proximity readings after one tick.
std::vector<float> readings(double gap, const std::string& kinds = "",
                            const std::string& kind = "footbot", std::uint64_t seed = 1) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"0\" seed=\"" +
      std::to_string(seed) +
      "\"/>\n"
      "  <controllers><controller id=\"idle\" type=\"idle\"/></controllers>\n"
      "  <arena size=\"4,4\">\n"
      "    <wall from=\"" +
      std::to_string(kRadius + gap) + ",-1\" to=\"" + std::to_string(kRadius + gap) +
      ",1\"/>\n"
      "    <robot id=\"fb\" kind=\"" +
      kind +
      "\" controller=\"idle\" position=\"0,0\" heading=\"0\"/>\n"
      "  </arena>\n" +
      kinds + "</fleetsim>\n";
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  auto ex = parse_experiment(xml, "prox.xml", registry, {}, diags);
  if (!ex) throw std::runtime_error(diags.str());
  Simulation sim(std::move(*ex), registry);
  sim.step();
  const ColumnStore& c = sim.state().robots;
  const ColumnHandle h = c.find("proximity");
  const float* v = static_cast<const float*>(c.data(h));
  return {v, v + c.desc(h).width};
}

/// The distance along ray 0 from the body to a wall `gap` ahead of the body.
double ray0_distance(double gap) {
  return (kRadius + gap - kRadius * std::cos(kRay0)) / std::cos(kRay0);
}

double argos_footbot(double d) {
  return d < 0.009889556 ? 1.0 : 0.0100527 / (d + 0.000163144);
}

TEST(ArgosProximity, TheFootBotReadsArgosCurve) {
  for (double gap : {0.002, 0.008, 0.02, 0.05, 0.08, 0.095}) {
    SCOPED_TRACE(gap);
    const double d = ray0_distance(gap);
    const auto v = readings(gap);
    ASSERT_EQ(v.size(), 24u);
    EXPECT_NEAR(v[0], argos_footbot(d), 1e-5) << "d = " << d;
    EXPECT_NEAR(v[23], v[0], 1e-6) << "the rays either side of the heading read alike";
    EXPECT_GE(v[0], 0.1f) << "something within range reads at least 0.1";
  }
  EXPECT_EQ(readings(0.002)[0], 1.0f) << "saturated within about 1 cm";
  EXPECT_EQ(readings(0.2)[0], 0.0f) << "nothing within range";
}

// The e-puck's (epuck_proximity_default_sensor.cpp in ARGoS): a quadratic fit to 5 cm, clamped
// to [0, 1], and 0 beyond. Its first ray is 17.5 degrees left of the heading, from a 3.5 cm body.
TEST(ArgosProximity, TheEPuckReadsArgosCurve) {
  const double a = 17.5 * kPi / 180, r = 0.035;
  for (double gap : {0.001, 0.01, 0.02, 0.04, 0.06}) {
    SCOPED_TRACE(gap);
    const double d = (r + gap - r * std::cos(a)) / std::cos(a);
    const double argos =
        d > 0.05 ? 0.0 : std::clamp(298.701 * d * d - 36.8961 * d + 1.08212, 0.0, 1.0);
    const std::string wall =
        "<fleetsim>\n"
        "  <framework ticks_per_second=\"10\" length=\"0\"/>\n"
        "  <controllers><controller id=\"idle\" type=\"idle\"/></controllers>\n"
        "  <arena size=\"4,4\">\n"
        "    <wall from=\"" +
        std::to_string(r + gap) + ",-1\" to=\"" + std::to_string(r + gap) +
        ",1\"/>\n"
        "    <robot id=\"ep\" controller=\"idle\" position=\"0,0\"/>\n"
        "  </arena>\n</fleetsim>\n";
    PluginRegistry registry;
    register_builtins(registry);
    Diagnostics diags;
    auto ex = parse_experiment(wall, "ep.xml", registry, {}, diags);
    ASSERT_TRUE(ex) << diags.str();
    Simulation sim(std::move(*ex), registry);
    sim.step();
    const ColumnStore& c = sim.state().robots;
    const float* v = static_cast<const float*>(c.data(c.find("proximity")));
    EXPECT_NEAR(v[0], argos, 1e-5) << "d = " << d;
  }
}

TEST(ArgosProximity, FleetsimsLinearCurveIsANamedVariant) {
  const std::string linear =
      "  <kinds><kind name=\"fbl\" base=\"footbot\">\n"
      "    <sensor type=\"proximity\" rays=\"24\" range=\"0.1\" response=\"linear\"/>\n"
      "    <actuator type=\"differential_drive\" axle_length=\"0.14\"/>\n"
      "  </kind></kinds>\n";
  for (double gap : {0.005, 0.05, 0.09}) {
    const double d = ray0_distance(gap);
    EXPECT_NEAR(readings(gap, linear, "fbl")[0], 1 - d / 0.1, 1e-5);
  }
}

TEST(ArgosProximity, NoiseLevelIsArgosUniformNoiseAndRepeats) {
  const std::string noisy =
      "  <kinds><kind name=\"fbn\" base=\"footbot\">\n"
      "    <sensor type=\"proximity\" rays=\"24\" range=\"0.1\" response=\"footbot\" "
      "noise_level=\"0.05\"/>\n"
      "    <actuator type=\"differential_drive\" axle_length=\"0.14\"/>\n"
      "  </kind></kinds>\n";
  const auto clean = readings(0.05);
  const auto a = readings(0.05, noisy, "fbn"), b = readings(0.05, noisy, "fbn");
  const auto other_seed = readings(0.05, noisy, "fbn", 2);
  EXPECT_EQ(a, b) << "the same seed gives the same noise";
  EXPECT_NE(a, other_seed);
  int changed = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_LE(std::abs(a[k] - clean[k]), 0.05f + 1e-6f);
    EXPECT_GE(a[k], 0.0f);
    changed += a[k] != clean[k];
  }
  // Rays that see nothing read 0 plus noise, clamped: about half stay 0.
  EXPECT_GT(changed, 6);
}

TEST(ArgosProximity, AnUnknownResponseIsAnErrorAtItsLine) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  const std::string xml =
      "<fleetsim>\n"
      "  <kinds><kind name=\"k\" base=\"footbot\">\n"
      "    <sensor type=\"proximity\" response=\"argos\"/>\n"
      "  </kind></kinds>\n"
      "</fleetsim>\n";
  EXPECT_FALSE(parse_experiment(xml, "bad.xml", registry, {}, diags));
  EXPECT_NE(diags.str().find("bad.xml:3: error:"), std::string::npos) << diags.str();
  EXPECT_NE(diags.str().find("response=\"argos\" is not a proximity response (expected linear, "
                             "footbot or epuck)"),
            std::string::npos)
      << diags.str();
}

}  // namespace
}  // namespace fleetsim::testing
