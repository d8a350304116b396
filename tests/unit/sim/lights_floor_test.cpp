// Lights, the floor and the foot-bot's light and ground sensors (docs/robot-parts.md): the
// readings ARGoS's model gives, worked out here from its formulas; occlusion by bodies of their
// height and by walls; the floor image's orientation; and the same bits on 1 and 2 threads and
// on 2 processes.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli_json.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

class Idle final : public Controller {
 public:
  void init(const Params&, const ControllerSetup&) override {}
  void step(RobotIO&) override {}
};

struct Loaded {
  PluginRegistry reg;
  Diagnostics diags;
  std::optional<Experiment> ex;
};

std::unique_ptr<Loaded> load(const std::string& xml, int threads = 1,
                             const std::string& name = "exp.xml") {
  auto l = std::make_unique<Loaded>();
  register_builtins(l->reg);
  l->reg.add_controller({PluginKind::kController, "idle", "test", {}},
                        [] { return std::make_unique<Idle>(); });
  ExperimentOverrides ov;
  ov.threads = threads;
  ov.log_path = "";
  l->ex = parse_experiment(xml, name, l->reg, ov, l->diags);
  return l;
}

/// An experiment whose robots (kind "s", standing still) carry the three sensors.
std::string experiment(const std::string& arena, const std::string& sensor_params = "") {
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"1\" seed=\"3\"/>\n"
         "  <kinds><kind name=\"s\" base=\"footbot\">\n"
         "    <sensor type=\"footbot_light\" name=\"light\"" +
         sensor_params +
         "/>\n"
         "    <sensor type=\"footbot_motor_ground\" name=\"motor_ground\"" +
         sensor_params +
         "/>\n"
         "    <sensor type=\"footbot_base_ground\" name=\"base_ground\"" +
         sensor_params +
         "/>\n"
         "    <actuator type=\"differential_drive\"/>\n"
         "  </kind></kinds>\n"
         "  <controllers><controller id=\"c\" type=\"idle\"/></controllers>\n"
         "  <arena size=\"8,8\">\n" +
         arena +
         "  </arena>\n"
         "</fleetsim>\n";
}

/// Runs one tick; returns each robot's readings of `column`.
std::vector<std::vector<float>> readings(const std::string& xml, const char* column) {
  auto l = load(xml);
  EXPECT_TRUE(l->ex) << l->diags.str();
  if (!l->ex) return {};
  Simulation sim(std::move(*l->ex), l->reg);
  sim.start();
  sim.step();
  const ColumnStore& s = sim.state().robots;
  const ColumnHandle c = s.find(column);
  EXPECT_NE(c, kNoColumn) << column;
  std::vector<std::vector<float>> out;
  const std::size_t w = s.desc(c).width;
  const auto all = s.span<float>(c);
  for (std::size_t i = 0; i < sim.state().robot_count(); ++i)
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i * w),
                     all.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  return out;
}

const double kDegree = kPi / 180;

/// ARGoS's value for one light at 3D distance d (intensity 1) seen a degrees off a reading.
double argos_value(double d, double a_deg) {
  if (d > 2.5) return 0;
  const double a = std::abs(a_deg) * kDegree;
  return a > kPi / 2 ? 0 : std::exp(-2 * d) * (1 - 2 * a / kPi);
}

TEST(LightSensor, ReadsEachLightAsArgosDoes) {
  // A light 1 m ahead at 0.5 m: the readings at +-7.5 degrees see it 7.5 degrees off, those at
  // +-22.5 degrees 22.5 off, ..., those behind nothing.
  const std::string robot = "    <robot id=\"a\" kind=\"s\" controller=\"c\" position=\"0,0\"/>\n";
  auto r = readings(experiment(robot + "    <light position=\"1,0\" height=\"0.5\"/>\n"), "light");
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].size(), 24u);
  const double d = std::sqrt(1.25);
  for (int k = 0; k < 24; ++k) {
    const double angle = std::remainder(7.5 + 15 * k, 360);
    EXPECT_NEAR(r[0][k], argos_value(d, angle), 1e-6) << "reading " << k + 1;
  }
  EXPECT_GT(r[0][0], 0.05);
  // Intensity 2 halves the distance; two lights add up, clamped at 1; heading 90 degrees turns
  // the light to -90.
  auto r2 = readings(experiment("    <robot id=\"a\" kind=\"s\" controller=\"c\" position=\"0,0\" "
                                "heading=\"90\"/>\n"
                                "    <light position=\"1,0\" height=\"0.5\" intensity=\"2\"/>\n"),
                     "light");
  EXPECT_NEAR(r2[0][17], argos_value(d / 2, 7.5), 1e-6);  // at -97.5 degrees
  EXPECT_NEAR(r2[0][18], argos_value(d / 2, 7.5), 1e-6);  // at -82.5 degrees
  EXPECT_EQ(r2[0][5], 0.0f);                              // at 82.5 degrees: the light is behind
  auto r3 =
      readings(experiment(robot + "    <light position=\"0.1,0\" height=\"0\" intensity=\"1\"/>\n"
                                  "    <light position=\"0.2,0\" height=\"0\" intensity=\"1\"/>\n"),
               "light");
  EXPECT_EQ(r3[0][0], 1.0f);
  // A light too far (2.5 intensity-metres) gives nothing.
  auto far =
      readings(experiment(robot + "    <light position=\"2.6,0\" height=\"0\"/>\n"), "light");
  for (float v : far[0]) EXPECT_EQ(v, 0.0f);
}

TEST(LightSensor, BodiesOccludeBelowTheirHeightAndWallsAlways) {
  const std::string robot = "    <robot id=\"a\" kind=\"s\" controller=\"c\" position=\"0,0\"/>\n";
  const std::string light = "    <light position=\"2,0\" height=\"0.5\" intensity=\"2\"/>\n";
  auto seen = [&](const std::string& more) {
    float sum = 0;
    const auto r = readings(experiment(robot + light + more), "light");
    if (r.empty()) return -1.0f;
    for (float v : r[0]) sum += v;
    return sum;
  };
  const float open = seen("");
  ASSERT_GT(open, 0.5f);
  // A cylinder (0.2 m high) 0.5 m on: the ray from the floor to the light enters it at
  // 0.4 * 0.5 / 2 = 0.1 m, below its top: occluded, as in ARGoS's dynamics2d.
  EXPECT_EQ(seen("    <robot id=\"b\" kind=\"cylinder\" position=\"0.5,0\"/>\n"), 0.0f);
  // Near the light the ray is 0.4 m high: it passes over.
  EXPECT_EQ(seen("    <robot id=\"b\" kind=\"cylinder\" position=\"1.7,0\"/>\n"), open);
  // Beside the ray: nothing changes.
  EXPECT_EQ(seen("    <robot id=\"b\" kind=\"cylinder\" position=\"0.5,0.5\"/>\n"), open);
  // A wall (fleetsim's obstacles have no height) hides it.
  EXPECT_EQ(seen("    <wall from=\"1,-1\" to=\"1,1\"/>\n"), 0.0f);
}

/// Writes a 2 x 2 PNG: black, red on the top row; white, blue below.
void write_floor_png(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = 2;
  image.height = 2;
  image.format = PNG_FORMAT_RGB;
  const unsigned char px[12] = {0, 0, 0, 255, 0, 0, 255, 255, 255, 0, 0, 255};
  ASSERT_TRUE(png_image_write_to_file(&image, path.c_str(), 0, px, 0, nullptr));
}

TEST(GroundSensors, ReadTheFloorImageUnderThemAsArgosDoes) {
  const fs::path dir = fs::temp_directory_path() / ("fleetsim_floor_" + std::to_string(getpid()));
  fs::create_directories(dir);
  write_floor_png((dir / "floor.png").string());
  const std::string arena =
      "    <floor image=\"" + (dir / "floor.png").string() +
      "\" center=\"0,0\" size=\"4,4\"/>\n"
      "    <robot id=\"nw\" kind=\"s\" controller=\"c\" position=\"-1,1\"/>\n"
      "    <robot id=\"ne\" kind=\"s\" controller=\"c\" position=\"1,1\"/>\n"
      "    <robot id=\"sw\" kind=\"s\" controller=\"c\" position=\"-1,-1\"/>\n"
      "    <robot id=\"se\" kind=\"s\" controller=\"c\" position=\"1,-1\"/>\n"
      "    <robot id=\"out\" kind=\"s\" controller=\"c\" position=\"3,3\"/>\n";
  auto motor = readings(experiment(arena), "motor_ground");
  auto base = readings(experiment(arena), "base_ground");
  fs::remove_all(dir);
  ASSERT_EQ(motor.size(), 5u);
  // Grey levels 0.299 R + 0.587 G + 0.114 B over 255: the image's top row lies at +y.
  const double grey[5] = {0, 0.299, 1, 0.114, 1};  // outside the image: the white floor
  for (int r = 0; r < 5; ++r) {
    ASSERT_EQ(motor[r].size(), 4u);
    ASSERT_EQ(base[r].size(), 8u);
    for (float v : motor[r]) EXPECT_NEAR(v, grey[r], 1e-6) << "robot " << r;
    for (float v : base[r]) EXPECT_EQ(v, grey[r] < 0.5 ? 0.0f : 1.0f) << "robot " << r;
  }
}

TEST(GroundSensors, APlainFloorAndArgosNoiseThatRepeats) {
  const std::string arena =
      "    <floor color=\"140,140,140\"/>\n"
      "    <distribute count=\"20\" kind=\"s\" controller=\"c\"/>\n";
  auto exact = readings(experiment(arena), "motor_ground");
  for (float v : exact[0]) EXPECT_NEAR(v, 140.0 / 255, 1e-6);
  auto base = readings(experiment(arena), "base_ground");
  for (float v : base[0]) EXPECT_EQ(v, 1.0f);  // 0.55: light
  auto noisy = readings(experiment(arena, " noise_level=\"0.1\""), "motor_ground");
  double lo = 1, hi = 0;
  for (const auto& robot : noisy)
    for (float v : robot) {
      lo = std::min<double>(lo, v);
      hi = std::max<double>(hi, v);
    }
  EXPECT_GE(lo, 140.0 / 255 - 0.1 - 1e-6);
  EXPECT_LE(hi, 140.0 / 255 + 0.1 + 1e-6);
  EXPECT_GT(hi - lo, 0.1);  // the noise spreads the readings
  EXPECT_EQ(noisy, readings(experiment(arena, " noise_level=\"0.1\""), "motor_ground"));
}

TEST(LightsAndFloor, BadInputIsFileLineAllAtOnce) {
  auto l =
      load(experiment("    <light position=\"1,0\" color=\"glow\" intensity=\"-1\"/>\n"  // 11
                      "    <floor image=\"no_such.png\"/>\n"                             // 12
                      "    <floor color=\"red\"/>\n",                                    // 13
                      " noise_level=\"-0.5\""));
  EXPECT_FALSE(l->ex);
  const std::string s = l->diags.str();
  for (const char* want : {"exp.xml:11: error: color=\"glow\" is not a colour",
                           "exp.xml:11: error: attribute 'intensity' of <light> is -1",
                           "exp.xml:12: error: cannot open floor image",
                           "exp.xml:13: error: <floor> appears more than once",
                           "exp.xml:4: error: kind 's': sensor 'light': noise_level must be >= 0"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
}

// ------------------------------------------------------------ the same bits, threads, processes

/// A phototaxis and floor-following swarm in fleetsim's format, on one kinematics2d region
/// (which a run on 2 processes splits: each process holds its part and ghosts within reach).
std::string swarm(const fs::path& dir) {
  std::ofstream(dir / "photo.lua")
      << "function step()\n"
         "  local best, at = 0, 1\n"
         "  for i = 1, #robot.light do\n"
         "    if robot.light[i].value > best then best, at = robot.light[i].value, i end\n"
         "  end\n"
         "  local dark = robot.motor_ground[1].value < 0.5 or robot.base_ground[1].value == 0\n"
         "  if dark then robot.wheels.set_velocity(2, 2)\n"
         "  elseif best == 0 then robot.wheels.set_velocity(10, 8)\n"
         "  elseif robot.light[at].angle > 0 then robot.wheels.set_velocity(5, 10)\n"
         "  else robot.wheels.set_velocity(10, 5) end\n"
         "end\n";
  write_floor_png((dir / "floor.png").string());
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"15\" seed=\"5\"/>\n"
         "  <kinds><kind name=\"fb\" base=\"footbot\">\n"
         "    <sensor type=\"footbot_light\" noise_level=\"0.05\"/>\n"
         "    <sensor type=\"footbot_motor_ground\" noise_level=\"0.05\"/>\n"
         "    <sensor type=\"footbot_base_ground\"/>\n"
         "    <actuator type=\"differential_drive\" axle_length=\"0.14\" "
         "max_wheel_speed=\"0.3\"/>\n"
         "  </kind></kinds>\n"
         "  <controllers><controller id=\"p\" type=\"lua\" script=\"photo.lua\"/></controllers>\n"
         "  <arena size=\"8,8\">\n"
         "    <floor image=\"floor.png\" size=\"6,6\"/>\n"
         "    <light id=\"w\" position=\"-2.5,0\" height=\"0.3\" intensity=\"2\"/>\n"
         "    <light id=\"e\" position=\"2.5,1\" height=\"0.3\" intensity=\"1.5\"/>\n"
         "    <distribute count=\"120\" kind=\"fb\" controller=\"p\" id_prefix=\"fb\"/>\n"
         "  </arena>\n"
         "  <physics><kinematics2d id=\"k\" region=\"-4,-4,4,4\"/></physics>\n"
         "</fleetsim>\n";
}

std::string run_json(const std::string& args) {
  const std::string cmd =
      std::string(FLEETSIM_BINARY_DIR) + "/fleetsim run " + args + " --quiet --json 2>/dev/null";
  std::FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) {
    EXPECT_EQ(pclose(p), 0) << cmd;
  }
  return out;
}

std::string field(const std::string& json, const std::string& key) {
  return test::json_field(json, key);
}

TEST(LightsAndFloor, SameBitsOnOneAndTwoThreadsAndTwoProcesses) {
  const fs::path dir = fs::temp_directory_path() / ("fleetsim_lights_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "swarm.xml").string();
  std::ofstream(file) << swarm(dir);
  const std::string one = run_json(file + " --threads 1");
  const std::string two = run_json(file + " --threads 2");
  const std::string procs = run_json(file + " --threads 1 --processes 2");
  fs::remove_all(dir);
  const std::string hash = field(one, "state_hash");
  ASSERT_FALSE(hash.empty()) << one;
  EXPECT_EQ(field(two, "state_hash"), hash);
  EXPECT_EQ(field(procs, "state_hash"), hash) << procs;
  // The two processes held their parts only (the light sensor's reach is declared).
  EXPECT_NE(procs.find("\"partitioned\":true"), std::string::npos) << procs;
}

}  // namespace
}  // namespace fleetsim
