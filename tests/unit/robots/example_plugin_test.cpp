// examples/plugins: the out-of-tree `light` sensor and `phototaxis` controller do what the
// example promises (the CLI test runs the same file end to end).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

const std::string kSrc = FLEETSIM_SOURCE_DIR;
const std::string kLibrary =
    std::string(FLEETSIM_BINARY_DIR) + "/examples/plugins/libexample_plugins.so";

std::string example(const std::string& from = "", const std::string& to = "") {
  std::ifstream in(kSrc + "/examples/plugins/plugins.xml");
  std::ostringstream s;
  s << in.rdbuf();
  std::string xml = s.str();
  xml.replace(xml.find("libexample_plugins.so"), 21, kLibrary);
  if (!from.empty()) xml.replace(xml.find(from), from.size(), to);
  return xml;
}

/// Mean distance of the seekers (tag "seeker") to the light.
double seekers_to_light(const WorldState& s) {
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < s.robot_count(); ++i)
    if (s.tags.str(s.robot_tag()[i]) == "seeker") {
      sum += std::hypot(s.x()[i] - 1.2, s.y()[i] + 1.2);
      ++n;
    }
  EXPECT_EQ(n, 10);
  return sum / n;
}

TEST(ExamplePlugins, SeekersWithThePluginLightSensorDriveToTheLight) {
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = parse_experiment(example("<log path=\"plugins.flog\"/>", ""), "plugins.xml", reg,
                             ExperimentOverrides{}, d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  const double before = seekers_to_light(sim.state());
  while (!sim.done()) sim.step();
  const double after = seekers_to_light(sim.state());
  sim.finish();
  EXPECT_GT(before, 1.5);
  EXPECT_LT(after, 0.6 * before) << "from " << before << " m to " << after << " m";
  // The sensor's column holds the intensity each seeker last sensed (1 / (1 + d^2) unless in
  // the box's shadow); the blinkers' rows stay 0.
  const WorldState& s = sim.state();
  const ColumnHandle c = s.robots.find("light_intensity");
  ASSERT_NE(c, kNoColumn);
  int lit = 0;
  for (std::size_t i = 0; i < s.robot_count(); ++i) {
    const float v = s.robots.span<float>(c)[i];
    if (s.tags.str(s.robot_tag()[i]) != "seeker") EXPECT_EQ(v, 0.0f);
    lit += v > 0.5f;
  }
  EXPECT_GE(lit, 5);
}

TEST(ExamplePlugins, ABadLightPositionIsAUserErrorAtItsLine) {
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = parse_experiment(example("light=\"1.2,-1.2\"", "light=\"north\""), "plugins.xml", reg,
                             ExperimentOverrides{}, d);
  EXPECT_FALSE(ex);
  EXPECT_NE(d.str().find("plugins.xml:17: error: kind 'seeker': sensor 'light': light=\"north\" "
                         "is not a position (expected \"x,y\" in metres"),
            std::string::npos)
      << d.str();
}

}  // namespace
}  // namespace fleetsim
