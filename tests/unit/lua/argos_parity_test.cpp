// What an ARGoS user's script finds in fleetsim's `robot` table: the robot's name as its id,
// the readings already there at the script's top level and in init(), the wheels' speeds and
// distances, and a clear error for a table the robot's kind lacks (docs/lua-api.md).
#include <gtest/gtest.h>

#include <cstdio>

#include "lua/table_uses.hpp"
#include "lua_test_robot.hpp"

namespace fleetsim::lua::test {
namespace {

SetupError setup_error_of(LuaRobot& r, const std::string& script) {
  try {
    r.load(script);
  } catch (const SetupError& e) {
    return e;
  }
  ADD_FAILURE() << "the script loaded";
  return SetupError("");
}

TEST(LuaArgosParity, RobotIdIsTheRobotsName) {
  LuaRobot r;
  r.robot_name = "fb12";
  r.load(R"(
    log("top ", robot.id)
    function init() log("init ", robot.id) end
    function step() if robot.id:sub(1, 2) == "fb" then log("step ", robot.id) end end)");
  r.step();
  EXPECT_EQ(r.lines, (std::vector<std::string>{"top fb12", "init fb12", "step fb12"}));
}

TEST(LuaArgosParity, ReadingsAreThereAtTheTopLevelAndInInit) {
  LuaRobot r;
  r.parts.pose[0] = 1.5;
  r.parts.pose[1] = -2;
  r.parts.pose[2] = kPi / 2;
  r.load(R"(
    local function show(when)
      log(when, " ", #robot.proximity, " ", robot.proximity[1].value, " ",
          string.format("%.4f", robot.proximity[3].angle), " ", robot.wheels.axis_length, " ",
          robot.wheels.velocity_left, " ", robot.wheels.distance_right, " ",
          robot.positioning.position.x, " ", robot.positioning.position.y, " ",
          string.format("%.4f", (robot.positioning.orientation:toeulerangles())))
    end
    show("top")
    function init() show("init") end
    function step() end)");
  EXPECT_EQ(r.lines, (std::vector<std::string>{"top 24 0.0 0.6545 14.0 0.0 0.0 1.5 -2.0 1.5708",
                                               "init 24 0.0 0.6545 14.0 0.0 0.0 1.5 -2.0 1.5708"}));
}

TEST(LuaArgosParity, LightAndGroundTablesAreArgosOnes) {
  LuaRobot r({"light", "motor_ground"}, {"differential_drive"});
  r.load(R"(
    local function show(when)
      log(when, " ", #robot.light, " ", robot.light[4].value, " ",
          string.format("%.4f %.4f", robot.light[1].angle, robot.light[13].angle), " ",
          #robot.motor_ground, " ", robot.motor_ground[3].value, " ",
          string.format("%.2f %.2f", robot.motor_ground[1].offset.x,
                        robot.motor_ground[3].offset.y))
    end
    show("top")
    function step() show("step") end)");
  r.parts.light[3] = 0.5f;
  r.parts.ground[2] = 0.25f;
  r.step();
  // ARGoS's first reading at 7.5 degrees, the 13th at 187.5 (-172.5); the motor ground's first
  // at (6.3, 1.16) cm and the third at (-6.3, -1.16); readings 0 before the first step.
  EXPECT_EQ(r.lines, (std::vector<std::string>{"top 24 0.0 0.1309 -3.0107 4 0.0 6.30 -1.16",
                                               "step 24 0.5 0.1309 -3.0107 4 0.25 6.30 -1.16"}));
}

TEST(LuaArgosParity, WheelsReportTheLastCommandedSpeedsAndDistances) {
  LuaRobot r;  // a tick is 0.1 s; the wheels' limit 0.3 m/s
  r.load(R"(
    function init() robot.wheels.set_velocity(4, 2) end
    local k = 0
    function step()
      k = k + 1
      log(robot.wheels.velocity_left, " ", robot.wheels.velocity_right, " ",
          string.format("%.2f %.2f", robot.wheels.distance_left, robot.wheels.distance_right))
      if k == 2 then robot.wheels.set_velocity(10, -50) end
    end)");
  for (int i = 0; i < 4; ++i) r.step();
  // As ARGoS: the first step shows the wheels still (init's command acts from that step on);
  // then the speeds of the last command, clamped as the wheels turn, and a tick's distance.
  EXPECT_EQ(r.lines, (std::vector<std::string>{"0.0 0.0 0.00 0.00", "4.0 2.0 0.40 0.20",
                                               "10.0 -30.0 1.00 -3.00", "10.0 -30.0 1.00 -3.00"}));
}

// ARGoS's differential steering sensor writes the four fields at every step: a script that
// overwrote one reads the wheels again at its next step, even when they turn as before.
TEST(LuaArgosParity, WheelReadingsAScriptOverwroteAreWrittenAgain) {
  LuaRobot r;
  r.load(R"(
    function init() robot.wheels.set_velocity(4, 2) end
    function step()
      log(robot.wheels.velocity_left, " ", robot.wheels.velocity_right, " ",
          string.format("%.2f %.2f", robot.wheels.distance_left, robot.wheels.distance_right))
      robot.wheels.velocity_left = 99
      robot.wheels.velocity_right = nil
      robot.wheels.distance_left = "spoilt"
    end)");
  for (int i = 0; i < 3; ++i) r.step();
  EXPECT_EQ(r.lines, (std::vector<std::string>{"0.0 0.0 0.00 0.00", "4.0 2.0 0.40 0.20",
                                               "4.0 2.0 0.40 0.20"}));
}

// ARGoS writes reading i into the table at robot.proximity[i] each step: a script that sorts
// the array moves the tables (their angles with them), and the next readings go by position.
TEST(LuaArgosParity, ProximityReadingsGoWhereTheArrayHoldsItsTablesNow) {
  LuaRobot r;
  r.load(R"(
    local k = 0
    function step()
      k = k + 1
      local p = robot.proximity
      log(string.format("%.4f %.2f %.4f %.2f", p[1].angle, p[1].value, p[24].angle, p[24].value))
      if k == 1 then table.sort(p, function(a, b) return a.angle > b.angle end) end
      if k == 2 then p[1] = {angle = -1} end
    end)");
  for (int i = 0; i < 24; ++i) r.parts.proximity[i] = 0.01f * static_cast<float>(i + 1);
  r.step();
  r.step();
  r.step();
  // Ray i's angle is (i - 0.5) * 2 pi / 24: the first and the last after the sort swap places.
  const double first = 0.5 * 2 * 3.14159265358979 / 24, last = 23.5 * 2 * 3.14159265358979 / 24;
  char line[3][64];
  std::snprintf(line[0], 64, "%.4f 0.01 %.4f 0.24", first, last);
  std::snprintf(line[1], 64, "%.4f 0.01 %.4f 0.24", last, first);
  std::snprintf(line[2], 64, "%.4f 0.01 %.4f 0.24", -1.0, first);
  EXPECT_EQ(r.lines, (std::vector<std::string>{line[0], line[1], line[2]}));
}

TEST(LuaArgosParity, ATableTheKindLacksIsRefusedAtLoadAtItsLine) {
  LuaRobot check({"proximity"}, {"differential_drive"}, kNoEntity);
  const SetupError e = setup_error_of(check, R"lua(-- robot.light[1] in a comment
local s = "robot.gripper.unlock()"
function step()
  local x = robot.proximity[1].value
  if robot.light[1].value > 0.5 then robot.wheels.set_velocity(1, 1) end
end)lua");
  EXPECT_EQ(e.line, 5) << e.what();
  EXPECT_NE(e.file.find("robot.lua"), std::string::npos);
  EXPECT_EQ(std::string(e.what()),
            "robot.light: kind 'footbot' has no light sensor (its sensors: proximity; its "
            "actuators: differential_drive); see docs/lua-api.md");
  // A part fleetsim has, but this kind lacks.
  LuaRobot no_leds({"proximity"}, {"differential_drive"}, kNoEntity);
  const SetupError leds =
      setup_error_of(no_leds, "function step()\n  robot.leds.set_all_colors('red')\nend\n");
  EXPECT_EQ(leds.line, 2);
  EXPECT_NE(
      std::string(leds.what()).find("robot.leds: kind 'footbot' has no LEDs (a leds actuator) ("),
      std::string::npos)
      << leds.what();
}

TEST(LuaArgosParity, AScriptThatTestsForATableLoadsAndFailsClearlyWhereItIsNil) {
  const std::string script = R"(function step()
  if robot.light then log("light") end
  if robot.foo == nil then log("no foo") end
  log(#robot.light)
end)";
  LuaRobot check({"proximity"}, {"differential_drive"}, kNoEntity);
  EXPECT_NO_THROW(check.load(script));
  LuaRobot r({"proximity"}, {"differential_drive"});
  r.load(script);
  std::string error;
  try {
    r.step();
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  EXPECT_EQ(r.lines, (std::vector<std::string>{"no foo"}));
  EXPECT_NE(error.find("robot.lua:4: attempt to get length of a nil value (field 'light') "
                       "(robot.light: kind 'footbot' has no light sensor"),
            std::string::npos)
      << error;
}

TEST(LuaArgosParity, OtherNilFieldsKeepLuasMessage) {
  LuaRobot r({"proximity"}, {"differential_drive"});
  r.load("local cfg = {}\nfunction step()\n  return cfg.light.x\nend\n");
  std::string error;
  try {
    r.step();
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("robot.lua:3: attempt to index a nil value (field 'light')"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("kind"), std::string::npos) << error;
}

TEST(LuaTableUses, FindsUsesOutsideCommentsAndStrings) {
  const auto uses = robot_table_uses(R"(--[==[ robot.a.x
]==] local t = robot.b  -- robot.c.x
x = "robot.d.x" .. [[robot.e[1]
]] .. robot.id .. #robot.f + robot . g [2]
robot.h:enable() other.robot.i.x = 1)");
  ASSERT_EQ(uses.size(), 5u);  // (other.robot.i is another table's field)
  EXPECT_EQ(uses[0].name, "b");
  EXPECT_EQ(uses[0].line, 2);
  EXPECT_FALSE(uses[0].reaches_in);
  EXPECT_EQ(uses[1].name, "id");
  EXPECT_FALSE(uses[1].reaches_in);  // (concatenated)
  EXPECT_EQ(uses[2].name, "f");
  EXPECT_TRUE(uses[2].reaches_in);  // (its length)
  EXPECT_EQ(uses[3].name, "g");
  EXPECT_EQ(uses[3].line, 4);
  EXPECT_TRUE(uses[3].reaches_in);
  EXPECT_EQ(uses[4].name, "h");
  EXPECT_EQ(uses[4].line, 5);
  EXPECT_TRUE(uses[4].reaches_in);
}

}  // namespace
}  // namespace fleetsim::lua::test
