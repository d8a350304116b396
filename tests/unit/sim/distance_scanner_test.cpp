// The foot-bot's distance scanner (docs/robot-parts.md, `footbot_distance_scanner`) through
// ARGoS's Lua API: the distances to walls, obstacles and bodies at known geometry, ARGoS's -1
// (nearer than the ray's least distance) and -2 (nothing), the rays' angles in position and
// speed control, bodies below the rays unseen; the same bits on 1 and 2 threads and on 2
// processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_json.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

constexpr double kEdge = 0.085036758;  // ARGoS's foot-bot radius: where the rays start

/// One reading as the script logged it.
struct Reading {
  char range;  ///< 'S' short, 'L' long
  double angle, distance;
};

/// Runs `ticks` ticks of the scene and returns robot `id`'s readings per tick, as its Lua
/// script logged them. `setup` is Lua run in init(); `at` maps a tick to Lua run at its start.
std::map<int, std::vector<Reading>> scan(const std::string& bodies, const std::string& setup,
                                         int ticks, const std::string& at = "",
                                         const std::string& id = "s") {
  const fs::path dir = fs::temp_directory_path() / ("fleetsim_scanner_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "scan.lua")
      << "local t = 0\n"
         "function init() "
      << setup
      << " end\n"
         "function step()\n"
         "  t = t + 1\n"
      << at
      << "  for _, r in ipairs(robot.distance_scanner.short_range) do\n"
         "    log(string.format('%d S %.9f %.9f', t, r.angle, r.distance))\n"
         "  end\n"
         "  for _, r in ipairs(robot.distance_scanner.long_range) do\n"
         "    log(string.format('%d L %.9f %.9f', t, r.angle, r.distance))\n"
         "  end\n"
         "end\n";
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"0\" seed=\"3\"/>\n"
      "  <kinds>\n"
      "    <kind name=\"fb\" base=\"footbot\">\n"
      "      <sensor type=\"footbot_distance_scanner\"/>\n"
      "      <actuator type=\"footbot_distance_scanner\"/>\n"
      "    </kind>\n"
      "    <kind name=\"low\" base=\"cylinder\" radius=\"0.05\" height=\"0.05\"/>\n"
      "    <kind name=\"tall\" base=\"cylinder\" radius=\"0.05\" height=\"0.2\"/>\n"
      "    <kind name=\"crate\" base=\"box\" size=\"0.2,0.2\"/>\n"
      "  </kinds>\n"
      "  <controllers><controller id=\"c\" type=\"lua\" script=\"" +
      (dir / "scan.lua").string() +
      "\"/></controllers>\n"
      "  <arena size=\"4,4\">\n" +
      bodies + "  </arena>\n  <physics><dynamics2d/></physics>\n</fleetsim>\n";
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  ExperimentOverrides ov;
  ov.log_path = "";
  auto ex = parse_experiment(xml, "scan.xml", registry, ov, diags);
  if (!ex) {
    fs::remove_all(dir);
    ADD_FAILURE() << diags.str();
    return {};
  }
  Simulation sim(std::move(*ex), registry);
  testing::internal::CaptureStdout();
  sim.start();
  for (int k = 0; k < ticks; ++k) sim.step();
  const std::string out = testing::internal::GetCapturedStdout();
  fs::remove_all(dir);
  std::map<int, std::vector<Reading>> readings;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::string prefix = "[" + id + "] ";
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream in(line.substr(prefix.size()));
    int t;
    Reading r;
    in >> t >> r.range >> r.angle >> r.distance;
    readings[t].push_back(r);
  }
  return readings;
}

/// The readings of one range at one tick.
std::vector<Reading> of(const std::vector<Reading>& all, char range) {
  std::vector<Reading> v;
  for (const Reading& r : all)
    if (r.range == range) v.push_back(r);
  return v;
}

TEST(DistanceScanner, ReadsWallsAtKnownDistancesWithArgosConventions) {
  // At (0, 1.75) heading east: the arena's top wall 0.25 m to the left, a wall 0.3 m ahead.
  const std::string bodies =
      "    <wall from=\"0.3,1\" to=\"0.3,1.99\"/>\n"
      "    <robot id=\"s\" kind=\"fb\" controller=\"c\" position=\"0,1.75\" heading=\"0\"/>\n";
  auto r = scan(bodies, "robot.distance_scanner.set_angle(0)", 3,
                "  if t == 2 then robot.distance_scanner.set_angle(math.pi / 2) end\n");
  EXPECT_TRUE(r[1].empty()) << "off until the first act phase, as ARGoS's";
  // Position control at 0: the short rays ahead and behind, the long ones left and right.
  const auto s = of(r[2], 'S'), l = of(r[2], 'L');
  ASSERT_EQ(s.size(), 2u);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_NEAR(s[0].angle, 0, 1e-7);
  EXPECT_NEAR(s[0].distance, (0.3 - kEdge) * 100, 1e-4) << "cm from the body's edge";
  EXPECT_NEAR(s[1].angle, M_PI, 1e-6);
  EXPECT_EQ(s[1].distance, -2) << "nothing within 0.26 m behind";
  EXPECT_NEAR(l[0].angle, -M_PI / 2, 1e-6);
  EXPECT_EQ(l[0].distance, -2) << "the bottom wall is 3.75 m away";
  EXPECT_NEAR(l[1].angle, M_PI / 2, 1e-6);
  EXPECT_NEAR(l[1].distance, (0.25 - kEdge) * 100, 1e-4);
  // Turned to pi/2 (from tick 3): the short ray at pi/2 reads the top wall, the long one at 0
  // the wall ahead, the long one at pi nothing.
  const auto s3 = of(r[3], 'S'), l3 = of(r[3], 'L');
  ASSERT_EQ(s3.size(), 2u);
  ASSERT_EQ(l3.size(), 2u);
  EXPECT_NEAR(s3[0].angle, -M_PI / 2, 1e-6);
  EXPECT_NEAR(s3[1].angle, M_PI / 2, 1e-6);
  EXPECT_NEAR(s3[1].distance, (0.25 - kEdge) * 100, 1e-4);
  EXPECT_NEAR(l3[0].angle, 0, 1e-7);
  EXPECT_NEAR(l3[0].distance, (0.3 - kEdge) * 100, 1e-4);
  EXPECT_EQ(l3[1].distance, -2);
}

TEST(DistanceScanner, NearerThanTheLongRaysLeastDistanceReadsMinusOne) {
  // The top wall 0.15 m from the centre: 6.5 cm from the edge, under the long rays' 12 cm.
  auto r = scan(
      "    <robot id=\"s\" kind=\"fb\" controller=\"c\" position=\"0,1.85\" "
      "heading=\"0\"/>\n",
      "robot.distance_scanner.enable()", 2,
      "  if t == 2 then robot.distance_scanner.disable() end\n");
  const auto l = of(r[2], 'L');
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[1].distance, -1);
  EXPECT_EQ(of(r[2], 'S')[0].distance, -2);
  // The short rays read from 0: at pi/2 the same wall is a distance.
  auto q = scan(
      "    <robot id=\"s\" kind=\"fb\" controller=\"c\" position=\"0,1.85\" "
      "heading=\"90\"/>\n",
      "robot.distance_scanner.enable()", 2);
  ASSERT_EQ(of(q[2], 'S').size(), 2u);
  EXPECT_NEAR(of(q[2], 'S')[0].distance, (0.15 - kEdge) * 100, 1e-4) << "heading north";
}

TEST(DistanceScanner, DisabledItReadsNothing) {
  auto r = scan("    <robot id=\"s\" kind=\"fb\" controller=\"c\" position=\"0,0\"/>\n",
                "robot.distance_scanner.enable()", 4,
                "  if t == 2 then robot.distance_scanner.disable() end\n");
  EXPECT_EQ(r[2].size(), 4u);
  EXPECT_TRUE(r[3].empty());
  EXPECT_TRUE(r[4].empty());
}

TEST(DistanceScanner, SeesBodiesAtTheRaysHeightOnly) {
  // At the origin: a foot-bot 0.4 m ahead, a box 0.5 m to the right, a cylinder 0.3 m behind,
  // 5 cm tall (under the rays, 12.3 cm up) or 20 cm.
  const auto scene = [](const char* can) {
    return std::string(
               "    <robot id=\"s\" kind=\"fb\" controller=\"c\" position=\"0,0\" heading=\"0\"/>\n"
               "    <robot id=\"o\" kind=\"fb\" controller=\"c\" position=\"0.4,0\" "
               "heading=\"0\"/>\n"
               "    <robot id=\"b\" kind=\"crate\" position=\"0,-0.5\" heading=\"0\"/>\n"
               "    <robot id=\"k\" kind=\"") +
           can + "\" position=\"-0.3,0\"/>\n";
  };
  for (const char* can : {"low", "tall"}) {
    SCOPED_TRACE(can);
    auto r = scan(scene(can), "robot.distance_scanner.enable()", 2);
    const auto s = of(r[2], 'S'), l = of(r[2], 'L');
    ASSERT_EQ(s.size(), 2u);
    ASSERT_EQ(l.size(), 2u);
    EXPECT_NEAR(s[0].distance, (0.4 - 2 * kEdge) * 100, 0.05) << "the other foot-bot";
    EXPECT_NEAR(l[0].distance, (0.4 - kEdge) * 100, 1e-4) << "the box's face";
    if (std::string(can) == "low")
      EXPECT_EQ(s[1].distance, -2) << "a body under the rays";
    else
      EXPECT_NEAR(s[1].distance, (0.3 - 0.05 - kEdge) * 100, 1e-4);
  }
}

TEST(DistanceScanner, SpeedControlSweepsSixReadingsPerRayOverTheTicksTurn) {
  // 60 rpm: 2 pi rad/s, 0.2 pi a tick. At (0, 1.75) the top wall is 0.25 m away; the others
  // are beyond the long rays' reach.
  auto r = scan(
      "    <robot id=\"s\" kind=\"fb\" controller=\"c\" position=\"0,1.75\" "
      "heading=\"0\"/>\n",
      "robot.distance_scanner.set_rpm(60)", 5);
  for (int t = 2; t <= 5; ++t) {
    SCOPED_TRACE(t);
    const double start = 0.2 * M_PI * (t - 2), step = 0.2 * M_PI / 6;
    for (char range : {'S', 'L'}) {
      const auto v = of(r[t], range);
      ASSERT_EQ(v.size(), 12u);
      std::vector<double> want;
      for (double first : range == 'S' ? std::vector<double>{0, M_PI}
                                       : std::vector<double>{M_PI / 2, 3 * M_PI / 2})
        for (int k = 0; k < 6; ++k) want.push_back(wrap_angle(start + first + k * step));
      std::sort(want.begin(), want.end());
      const double length = range == 'S' ? 0.26 : 1.42, least = range == 'S' ? 0 : 0.12;
      for (std::size_t i = 0; i < v.size(); ++i) {
        EXPECT_NEAR(v[i].angle, want[i], 1e-6) << "sorted by angle, as ARGoS's map";
        const double a = want[i];
        const double d = std::sin(a) > 0 ? 0.25 / std::sin(a) - kEdge : 1e9;
        const double expected = d > length ? -2 : d <= least ? -1 : d * 100;
        EXPECT_NEAR(v[i].distance, expected, 1e-3) << "at " << a;
      }
    }
  }
}

TEST(DistanceScanner, SameBitsOnOneAndTwoThreadsAndTwoProcesses) {
  // Sixty foot-bots turning their scanners and steering away from what the short rays see.
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim_scanner_bits_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "avoid.lua")
      << "function init() robot.distance_scanner.set_rpm(30) end\n"
         "function step()\n"
         "  local near = false\n"
         "  for _, r in ipairs(robot.distance_scanner.short_range) do\n"
         "    if r.distance > 0 and math.abs(r.angle) < 0.8 then near = true end\n"
         "  end\n"
         "  for _, r in ipairs(robot.distance_scanner.long_range) do\n"
         "    if r.distance == -1 then near = true end\n"
         "  end\n"
         "  if near then robot.wheels.set_velocity(-5, 5) else robot.wheels.set_velocity(15, 15) "
         "end\n"
         "end\n";
  const std::string file = (dir / "avoid.xml").string();
  std::ofstream(file)
      << "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"20\" seed=\"11\"/>\n"
         "  <kinds><kind name=\"fb\" base=\"footbot\">\n"
         "    <sensor type=\"footbot_distance_scanner\"/>\n"
         "    <actuator type=\"footbot_distance_scanner\"/>\n"
         "    <actuator type=\"differential_drive\" axle_length=\"0.14\" "
         "max_wheel_speed=\"0.3\"/>\n"
         "  </kind></kinds>\n"
         "  <controllers><controller id=\"c\" type=\"lua\" script=\"avoid.lua\"/></controllers>\n"
         "  <arena size=\"6,6\">\n"
         "    <box center=\"1,1\" size=\"0.5,0.3\" angle=\"20\"/>\n"
         "    <distribute count=\"60\" kind=\"fb\" controller=\"c\" id_prefix=\"fb\"/>\n"
         "  </arena>\n"
         "  <physics><dynamics2d id=\"w\" region=\"-3,-3,0,3\"/>"
         "<dynamics2d id=\"e\" region=\"0,-3,3,3\"/></physics>\n"
         "</fleetsim>\n";
  int status = 0;
  const std::string one = test::run_fleetsim(file + " --threads 1", &status);
  ASSERT_EQ(status, 0) << one;
  const std::string two = test::run_fleetsim(file + " --threads 2", &status);
  ASSERT_EQ(status, 0) << two;
  const std::string procs = test::run_fleetsim(file + " --threads 1 --processes 2", &status);
  ASSERT_EQ(status, 0) << procs;
  fs::remove_all(dir);
  ASSERT_FALSE(test::json_field(one, "state_hash").empty()) << one;
  EXPECT_EQ(test::json_field(two, "state_hash"), test::json_field(one, "state_hash"));
  EXPECT_EQ(test::json_field(procs, "state_hash"), test::json_field(one, "state_hash"));
}

}  // namespace
}  // namespace fleetsim
