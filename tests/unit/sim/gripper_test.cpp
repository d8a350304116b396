// The foot-bot's gripper and turret (docs/robot-parts.md, `footbot_gripper`, `footbot_turret`),
// driven from Lua with ARGoS's API: a robot pushes a box, grips it, pulls it back (a pushed box
// would stay), releases it and backs away (it stays); the turret's speed and position control
// reach their angles and turn where the gripper grips; the same bits on 1 and 2 threads; a
// gripper on several processes or on another engine is refused at its line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli_json.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/robot_rows.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

/// A directory of its own for a test's files, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("fleetsim_" + name + "_" + std::to_string(getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

/// A foot-bot `g` at (-1, 0) heading east with the gripper and turret, driven by `script`, and
/// `bodies` (other <robot> lines), on dynamics2d.
std::string scene(const fs::path& dir, const std::string& script, const std::string& bodies,
                  const std::string& physics = "<dynamics2d/>") {
  std::ofstream(dir / "grip.lua") << script;
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"0\" seed=\"7\"/>\n"
         "  <kinds>\n"
         "    <kind name=\"fb\" base=\"footbot\">\n"
         "      <sensor type=\"footbot_turret_encoder\"/>\n"
         "      <actuator type=\"differential_drive\" axle_length=\"0.14\" "
         "max_wheel_speed=\"0.3\"/>\n"
         "      <actuator type=\"footbot_gripper\"/>\n"
         "      <actuator type=\"footbot_turret\"/>\n"
         "    </kind>\n"
         "    <kind name=\"crate\" base=\"box\" size=\"0.2,0.2\" mass=\"0.5\"/>\n"
         "    <kind name=\"can\" base=\"cylinder\" radius=\"0.05\" mass=\"0.2\"/>\n"
         "  </kinds>\n"
         "  <controllers><controller id=\"c\" type=\"lua\" script=\"" +
         (dir / "grip.lua").string() +
         "\"/></controllers>\n"
         "  <arena size=\"4,4\">\n"
         "    <robot id=\"g\" kind=\"fb\" controller=\"c\" position=\"-1,0\" heading=\"0\"/>\n" +
         bodies + "  </arena>\n  <physics>" + physics + "</physics>\n</fleetsim>\n";
}

struct GripRun {
  PluginRegistry registry;
  Diagnostics diags;
  std::unique_ptr<Simulation> sim;
  explicit GripRun(const std::string& xml, int threads = 1) {
    register_builtins(registry);
    ExperimentOverrides ov;
    ov.threads = threads;
    ov.log_path = "";
    auto ex = parse_experiment(xml, "grip.xml", registry, ov, diags);
    if (!ex) throw std::runtime_error(diags.str());
    sim = std::make_unique<Simulation>(std::move(*ex), registry);
    sim->start();
  }
  void steps(int n) {
    for (int i = 0; i < n; ++i) sim->step();
  }
  std::uint32_t row(const std::string& name) const {
    return testing::robot_row(sim->state(), name);
  }
  Vec2 pos(const std::string& name) const { return testing::robot_position(sim->state(), name); }
  double column(const char* name, const std::string& robot, std::size_t k = 0) const {
    const ColumnStore& s = sim->state().robots;
    const ColumnHandle c = s.find(name);
    if (c == kNoColumn) throw std::runtime_error(std::string("no column ") + name);
    const std::size_t w = s.desc(c).width;
    if (s.desc(c).type == ColumnType::kU32)
      return static_cast<const std::uint32_t*>(s.data(c))[row(robot) * w + k];
    return static_cast<const double*>(s.data(c))[row(robot) * w + k];
  }
};

/// Drives 4 s ahead (into the box), locks the gripper (unless `lock` is false), backs up 6 s,
/// unlocks, backs up 6 s more.
std::string pull_script(bool lock) {
  return std::string(
             "local t = 0\n"
             "function step()\n"
             "  t = t + 1\n"
             "  if t <= 40 then robot.wheels.set_velocity(10, 10)\n"
             "  elseif t == 41 then robot.wheels.set_velocity(0, 0)\n") +
         (lock ? "    robot.gripper.lock_positive()\n" : "") +
         "  elseif t <= 100 then robot.wheels.set_velocity(-10, -10)\n"
         "  elseif t == 101 then robot.wheels.set_velocity(0, 0); robot.gripper.unlock()\n"
         "  elseif t <= 160 then robot.wheels.set_velocity(-10, -10)\n"
         "  else robot.wheels.set_velocity(0, 0) end\n"
         "end\n";
}

TEST(Gripper, GripsABoxPullsItAlongAndLeavesItWhereItReleasesIt) {
  TempDir dir("grip_pull");
  const std::string box =
      "    <robot id=\"b\" kind=\"crate\" position=\"-0.5,0\" heading=\"0\"/>\n";
  GripRun grip(scene(dir.path, pull_script(true), box));
  GripRun push(scene(dir.path, pull_script(false), box));
  for (GripRun* r : {&grip, &push}) r->steps(40);
  // Pushed from 3.2 s on (the robot's front at -0.915, the box's back face at -0.6).
  EXPECT_GT(grip.pos("b").x, -0.48);
  EXPECT_EQ(push.pos("b").x, grip.pos("b").x) << "the same run until the lock";
  EXPECT_EQ(grip.column("gripped", "g"), 0.0);
  for (GripRun* r : {&grip, &push}) r->steps(1);
  const Vec2 pushed = grip.pos("b");
  EXPECT_EQ(grip.column("gripped", "g"), grip.sim->state().robot_id()[grip.row("b")] + 1.0);
  EXPECT_EQ(push.column("gripped", "g"), 0.0);
  const double gap = pushed.x - grip.pos("g").x;
  EXPECT_NEAR(gap, 0.085 + 0.1, 0.005) << "the box touches the robot's front";
  // Backing up 6 s at 0.1 m/s: the gripped box follows, 0.6 m; the pushed one stays.
  for (GripRun* r : {&grip, &push}) r->steps(59);
  EXPECT_NEAR(grip.pos("g").x, pushed.x - gap - 0.59, 0.01);
  EXPECT_NEAR(grip.pos("b").x - grip.pos("g").x, gap, 0.01) << "held at its distance";
  EXPECT_NEAR(grip.pos("b").y, 0, 0.005);
  EXPECT_NEAR(push.pos("b").x, pushed.x, 1e-3) << "without the grip the box stays";
  // Released, the robot backs away and the box stays where it was left.
  const Vec2 left = grip.pos("b");
  grip.steps(70);
  EXPECT_EQ(grip.column("gripped", "g"), 0.0);
  EXPECT_NEAR(grip.pos("b").x, left.x, 0.005);
  EXPECT_NEAR(grip.pos("b").y, left.y, 0.005);
  EXPECT_LT(grip.pos("g").x, left.x - gap - 0.5);
}

TEST(Gripper, GripsAnotherRobotAndACylinder) {
  TempDir dir("grip_robot");
  // g drives into o, then backs up at 10 cm/s while o (facing g) backs up at 5 cm/s: gripped,
  // they go together; without the grip g pulls away.
  const auto script = [](bool lock) {
    return std::string(
               "local t = 0\n"
               "function step()\n"
               "  t = t + 1\n"
               "  if robot.id ~= 'g' then\n"
               "    if t > 40 then robot.wheels.set_velocity(5, 5) end\n"
               "    return\n"
               "  end\n") +
           (lock ? "  robot.gripper.lock_negative()\n" : "") +
           "  if t <= 40 then robot.wheels.set_velocity(10, 10)\n"
           "  else robot.wheels.set_velocity(-10, -10) end\n"
           "end\n";
  };
  const std::string other =
      "    <robot id=\"o\" kind=\"fb\" controller=\"c\" position=\"-0.5,0\" heading=\"180\"/>\n";
  GripRun robot(scene(dir.path, script(true), other));
  GripRun apart(scene(dir.path, script(false), other));
  for (GripRun* r : {&robot, &apart}) r->steps(40);
  const double gap = robot.pos("o").x - robot.pos("g").x;
  EXPECT_NEAR(gap, 2 * 0.085, 0.005);
  for (GripRun* r : {&robot, &apart}) r->steps(30);
  EXPECT_EQ(robot.column("gripped", "g"), robot.sim->state().robot_id()[robot.row("o")] + 1.0);
  EXPECT_NEAR(robot.pos("o").x - robot.pos("g").x, gap, 0.01) << "held together";
  EXPECT_GT(apart.pos("o").x - apart.pos("g").x, gap + 0.1) << "without the grip they part";
  // (Each foot-bot's drive pushes with at most 15 N: neither overpowers the other, and the pair
  // goes at o's 5 cm/s, as two such velocity constraints settle in Box2D.)
  EXPECT_LT(robot.pos("o").x, -0.6);
  // A light cylinder, gripped while driving into it: it follows when the robot backs up.
  GripRun can(
      scene(dir.path, script(true), "    <robot id=\"k\" kind=\"can\" position=\"-0.6,0\"/>\n"));
  can.steps(70);
  EXPECT_NE(can.column("gripped", "g"), 0.0);
  EXPECT_NEAR(can.pos("k").x - can.pos("g").x, 0.085 + 0.05, 0.01);
}

TEST(Turret, SpeedAndPositionControlReachTheirAnglesAsArgosTurnsThem) {
  TempDir dir("turret");
  // Speed control: 10 rpm (pi/3 rad/s) for 1 s, then position control to -pi/2.
  const std::string script =
      "local t = 0\n"
      "function init() robot.turret.set_speed_control_mode() "
      "robot.turret.set_rotation_speed(10) end\n"
      "function step()\n"
      "  t = t + 1\n"
      "  robot.wheels.set_velocity(0, 0)\n"
      "  if t == 11 then robot.wheels.set_velocity(10 * robot.turret.rotation, 0)\n"
      "    robot.turret.set_position_control_mode(); robot.turret.set_rotation(-math.pi / 2) end\n"
      "  if t == 211 then robot.turret.set_passive_mode(); robot.turret.set_rotation(0) end\n"
      "  if t == 230 then robot.turret.set_speed_control_mode() end\n"
      "end\n";
  GripRun r(scene(dir.path, script, ""));
  r.steps(10);
  EXPECT_NEAR(r.column("footbot_turret_rotation", "g"), kPi / 3, 1e-9) << "10 rpm for 1 s";
  r.steps(1);
  // robot.turret.rotation showed it (the script wrote it, in cm/s, to the left wheel).
  EXPECT_NEAR(r.column("differential_drive", "g"), kPi / 3 / 10, 1e-12);
  // ARGoS's PD (0.4 e + 0.2 de/dt as a turn rate): its first tick turns by 0.24 e0 + ... (a
  // kick of the derivative), then the error decays with a time constant of about 3 s.
  const double e0 = -kPi / 2 - kPi / 3;
  const double first = (0.4 * e0 + 0.2 * (e0 - 0) / 0.1) * 0.1;
  EXPECT_NEAR(r.column("footbot_turret_rotation", "g"), wrap_angle(kPi / 3 + first), 1e-9);
  r.steps(200);
  const double reached = r.column("footbot_turret_rotation", "g");
  EXPECT_NEAR(reached, -kPi / 2, 0.01);
  // Passive, it stays where it is, whatever the target.
  r.steps(18);  // to tick 229
  EXPECT_EQ(r.column("footbot_turret_rotation", "g"), reached);
  // Speed control again from tick 230 (10 rpm kept): pi/30 a tick.
  r.steps(2);
  EXPECT_NEAR(r.column("footbot_turret_rotation", "g"), reached + 2 * kPi / 30, 1e-9);
}

TEST(Turret, TurnsWhereTheGripperGrips) {
  TempDir dir("turret_grip");
  // The box is on the robot's left: with the turret at +90 degrees the gripper touches it.
  // A can on the robot's left, 1 mm from its side: the gripper reaches it turned left only.
  const auto script = [](bool turn) {
    return std::string(
               "local t = 0\n"
               "function step()\n"
               "  t = t + 1\n") +
           (turn ? "  robot.turret.set_position_control_mode()\n"
                   "  robot.turret.set_rotation(math.pi / 2)\n"
                 : "") +
           "  if t == 200 then robot.gripper.lock_positive() end\n"
           "  if t > 200 then robot.wheels.set_velocity(10, 10) end\n"
           "end\n";
  };
  const std::string can = "    <robot id=\"k\" kind=\"can\" position=\"-1,0.136\"/>\n";
  GripRun turned(scene(dir.path, script(true), can));
  GripRun ahead(scene(dir.path, script(false), can));
  for (GripRun* r : {&turned, &ahead}) r->steps(200);
  EXPECT_NEAR(turned.column("footbot_turret_rotation", "g"), kPi / 2, 0.01);
  EXPECT_EQ(ahead.column("footbot_turret_rotation", "g"), 0.0);
  for (GripRun* r : {&turned, &ahead}) r->steps(1);
  EXPECT_NE(turned.column("gripped", "g"), 0.0) << "the gripper, turned left, touches the can";
  EXPECT_EQ(ahead.column("gripped", "g"), 0.0) << "the gripper ahead does not";
  // Driving on 2 s at 10 cm/s: the gripped can is dragged along at its distance; the other
  // one stays.
  for (GripRun* r : {&turned, &ahead}) r->steps(20);
  const Vec2 g = turned.pos("g"), k = turned.pos("k");
  EXPECT_NEAR(std::hypot(k.x - g.x, k.y - g.y), 0.136, 0.01);
  EXPECT_GT(k.x, -1 + 0.1);
  EXPECT_NEAR(ahead.pos("k").x, -1, 1e-3);
}

TEST(Gripper, SameBitsOnOneAndTwoThreadsAndRefusedOnSeveralProcesses) {
  TempDir dir("grip_bits");
  // Ten grippers, each pulling a box of its own.
  std::string bodies;
  for (int k = 0; k < 10; ++k) {
    const std::string y = std::to_string(-1.6 + 0.35 * k);
    bodies += "    <robot id=\"g" + std::to_string(k) +
              "\" kind=\"fb\" controller=\"c\" position=\"-1," + y +
              "\" heading=\"0\"/>\n    <robot id=\"b" + std::to_string(k) +
              "\" kind=\"crate\" position=\"-0.6," + y + "\" heading=\"" + std::to_string(5 * k) +
              "\"/>\n";
  }
  std::string xml = scene(dir.path, pull_script(true), bodies);
  xml.replace(xml.find("    <robot id=\"g\" "),
              xml.find('\n', xml.find("<robot id=\"g\" ")) - xml.find("    <robot id=\"g\" ") + 1,
              "");
  xml.replace(xml.find("length=\"0\""), 10, "length=\"18\"");
  const std::string file = (dir.path / "grip.xml").string();
  std::ofstream(file) << xml;
  int status = 0;
  const std::string one = test::run_fleetsim(file + " --threads 1", &status);
  ASSERT_EQ(status, 0) << one;
  const std::string two = test::run_fleetsim(file + " --threads 2", &status);
  ASSERT_EQ(status, 0) << two;
  ASSERT_FALSE(test::json_field(one, "state_hash").empty()) << one;
  EXPECT_EQ(test::json_field(two, "state_hash"), test::json_field(one, "state_hash"));
  const std::string procs = test::run_fleetsim(file + " --processes 2", &status);
  EXPECT_EQ(status, 2) << procs;
  EXPECT_NE(procs.find(file + ":7: error: the foot-bot's gripper runs on one process"),
            std::string::npos)
      << procs;
}

TEST(Gripper, NeedsADynamics2dBody) {
  TempDir dir("grip_engine");
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  ExperimentOverrides ov;
  ov.log_path = "";
  auto ex = parse_experiment(scene(dir.path, "function step() end\n", "", "<kinematics2d/>"),
                             "grip.xml", registry, ov, diags);
  EXPECT_FALSE(ex);
  EXPECT_NE(diags.str().find("grip.xml:7: error: kind 'fb': actuator 'gripper': the "
                             "gripper holds bodies with a dynamics2d joint"),
            std::string::npos)
      << diags.str();
}

}  // namespace
}  // namespace fleetsim
