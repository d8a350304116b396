// The `robot` table of a Lua controller against a hand-made foot-bot: what a script reads
// (readings, in ARGoS's units) and what its calls do to the actuators.
#include <gtest/gtest.h>

#include <cmath>

#include "lua_test_robot.hpp"

namespace fleetsim::lua::test {
namespace {

TEST(LuaRobotTable, ProximityIsOneBasedWithValueAndAngle) {
  LuaRobot r;
  r.load(R"(
    function step()
      log(#robot.proximity, " ", robot.proximity[1].value, " ", robot.proximity[3].value, " ",
          string.format("%.4f", robot.proximity[3].angle))
    end)");
  r.parts.proximity[2] = 0.5f;
  r.step();
  r.parts.proximity[2] = 0.25f;
  r.parts.proximity[0] = 1.0f;
  r.step();
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0], "24 0.0 0.5 " + std::string("0.6545"));  // (2.5 * 2 pi / 24)
  EXPECT_EQ(r.lines[1], "24 1.0 0.25 0.6545");
}

TEST(LuaRobotTable, WheelsTakeCentimetresPerSecond) {
  LuaRobot r;
  r.load(R"(
    function step()
      robot.wheels.set_velocity(10, -5.5)
      log(robot.wheels.axis_length)
    end)");
  r.step();
  EXPECT_DOUBLE_EQ(r.parts.wheels[0], 0.1);
  EXPECT_DOUBLE_EQ(r.parts.wheels[1], -0.055);
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0], "14.0");  // 0.14 m
}

TEST(LuaRobotTable, CommandsGivenInInitTakeEffectAtTheFirstStep) {
  LuaRobot r;
  r.load(R"(
    function init()
      robot.wheels.set_velocity(5, 5)
      robot.leds.set_all_colors("yellow")
      robot.colored_blob_omnidirectional_camera.enable()
    end
    function step() end)");
  EXPECT_EQ(r.parts.wheels[0], 0.0);
  EXPECT_FALSE(r.parts.camera_on);
  r.step();
  EXPECT_DOUBLE_EQ(r.parts.wheels[0], 0.05);
  EXPECT_EQ(r.parts.leds[12], (Color{255, 255, 0, 255}));
  EXPECT_TRUE(r.parts.camera_on);
}

TEST(LuaRobotTable, LedsTakeNamesTextAndNumbers) {
  LuaRobot r;
  r.load(R"(
    function step()
      robot.leds.set_all_colors("red")
      robot.leds.set_single_color(2, 0, 128, 255)
      robot.leds.set_single_color(13, "gray50")
      robot.leds.set_single_color(3, "10,20,30")
    end)");
  r.step();
  EXPECT_EQ(r.parts.leds[0], (Color{255, 0, 0, 255}));
  EXPECT_EQ(r.parts.leds[1], (Color{0, 128, 255, 255}));
  EXPECT_EQ(r.parts.leds[2], (Color{10, 20, 30, 255}));
  EXPECT_EQ(r.parts.leds[11], (Color{255, 0, 0, 255}));
  EXPECT_EQ(r.parts.leds[12], (Color{127, 127, 127, 255}));
}

TEST(LuaRobotTable, RangeAndBearingReadsInCentimetresAndShrinks) {
  LuaRobot r;
  r.load(R"(
    function step()
      local out = tostring(#robot.range_and_bearing)
      for i = 1, #robot.range_and_bearing do
        local m = robot.range_and_bearing[i]
        out = out .. string.format(" [%.1f %.2f %.2f %d:%s]", m.range, m.horizontal_bearing,
                                   m.vertical_bearing, #m.data, table.concat(m.data, ","))
      end
      log(out)
    end)");
  r.parts.payloads = {{1, 2, 3}, {255, 0, 7, 9}};
  r.parts.messages = {{1, {}, 0.5f, 1.25f, 0.0f}, {2, {}, 2.0f, -0.5f, 0.25f}};
  r.step();
  r.parts.payloads = {{4}};
  r.parts.messages = {{2, {}, 0.75f, 0.0f, 0.0f}};
  r.step();
  r.parts.payloads.clear();
  r.parts.messages.clear();
  r.step();
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0], "2 [50.0 1.25 0.00 3:1,2,3] [200.0 -0.50 0.25 4:255,0,7,9]");
  EXPECT_EQ(r.lines[1], "1 [75.0 0.00 0.00 1:4]");
  EXPECT_EQ(r.lines[2], "0");
}

TEST(LuaRobotTable, RangeAndBearingSetDataWritesThePayload) {
  LuaRobot r;
  r.load(R"(
    function step()
      if robot.tick_count == nil then robot.tick_count = 0 end
      robot.tick_count = robot.tick_count + 1
      if robot.tick_count == 1 then
        robot.range_and_bearing.set_data({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
      elseif robot.tick_count == 2 then
        robot.range_and_bearing.set_data(3, 200)
      else
        robot.range_and_bearing.clear_data()
      end
    end)");
  r.step();
  EXPECT_EQ(r.parts.rab_out, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  r.step();
  EXPECT_EQ(r.parts.rab_out, (std::vector<std::uint8_t>{1, 2, 200, 4, 5, 6, 7, 8, 9, 10}));
  r.step();
  EXPECT_EQ(r.parts.rab_out, std::vector<std::uint8_t>(10, 0));
}

// The readings' tables are kept from tick to tick (ARGoS makes new ones): a tick with fewer
// readings must not show the last tick's extra entries, and a script that replaced a
// reading's sub-table must find the reading whole again at the next tick (as in ARGoS).
TEST(LuaRobotTable, ReadingsAreWholeEveryTickWhateverTheScriptDidToThem) {
  LuaRobot r;
  r.load(R"(
    function init() robot.colored_blob_omnidirectional_camera.enable() end
    function step()
      local rab, cam = robot.range_and_bearing, robot.colored_blob_omnidirectional_camera
      local out = #rab .. " " .. #cam
      for i = 1, #rab do out = out .. " " .. #rab[i].data .. ":" .. rab[i].data[1] end
      for i = 1, #cam do out = out .. " " .. cam[i].color.red end
      log(out)
      for i = 1, #rab do rab[i].data = i == 1 and "spoilt" or nil end
      for i = 1, #cam do cam[i].color = 0 end
    end)");
  r.parts.payloads = {{1, 2}, {2, 2}, {3, 2}, {4, 2}, {5, 2}};
  for (std::uint8_t i = 0; i < 5; ++i) r.parts.messages.push_back({i + 1u, {}, 1.0f, 0.0f, 0.0f});
  r.parts.blobs = {{{255, 0, 0, 255}, 0.3f, 0.5f}, {{0, 0, 255, 255}, 0.4f, -0.5f}};
  r.step();
  r.parts.payloads = {{7}, {8}};
  r.parts.messages.resize(2);
  r.parts.blobs.resize(1);
  r.step();
  r.step();
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0], "5 2 2:1 2:2 2:3 2:4 2:5 255 0");
  EXPECT_EQ(r.lines[1], "2 1 1:7 1:8 255");
  EXPECT_EQ(r.lines[2], "2 1 1:7 1:8 255");
}

TEST(LuaRobotTable, CameraBlobsAndSwitch) {
  LuaRobot r;
  r.load(R"(
    function step()
      local c = robot.colored_blob_omnidirectional_camera
      if #c == 0 then c.enable() else c.disable() end
      for i = 1, #c do
        log(string.format("%.1f %.2f %d %d %d", c[i].distance, c[i].angle, c[i].color.red,
                          c[i].color.green, c[i].color.blue))
      end
    end)");
  r.step();
  EXPECT_TRUE(r.parts.camera_on);
  EXPECT_TRUE(r.lines.empty());
  r.parts.blobs = {{{255, 140, 0, 255}, 0.3f, -1.5f}};
  r.step();
  EXPECT_FALSE(r.parts.camera_on);
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0], "30.0 -1.50 255 140 0");
}

TEST(LuaRobotTable, PositioningInMetresWithAQuaternion) {
  LuaRobot r;
  r.load(R"(
    function step()
      local p = robot.positioning
      local angle, axis = p.orientation:toangleaxis()
      local yaw = p.orientation:toeulerangles()
      log(string.format("%.2f %.2f %.2f %.3f %.0f %.3f", p.position.x, p.position.y,
                        p.position.z, angle, axis.z, yaw))
    end)");
  r.parts.pose[0] = 1.5;
  r.parts.pose[1] = -2.25;
  r.parts.pose[2] = -1.0;
  r.step();
  ASSERT_EQ(r.lines.size(), 1u);
  // A turn of -1 rad is 1 rad about -z.
  EXPECT_EQ(r.lines[0], "1.50 -2.25 0.00 1.000 -1 -1.000");
}

TEST(LuaRobotTable, CollisionShowsContactsAndRealization) {
  LuaRobot r;
  r.load(R"(
    function step()
      local c = robot.collision
      local s = string.format("%.2f %d", c.realization, #c)
      for i = 1, #c do s = s .. string.format(" %.2f", c[i].angle) end
      log(s)
    end)");
  r.parts.realization = 0.5f;
  r.parts.contact_angles = {0.5f, -2.0f};
  r.step();
  r.parts.realization = 1.0f;
  r.parts.contact_angles.clear();
  r.step();
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0], "0.50 2 0.50 -2.00");
  EXPECT_EQ(r.lines[1], "1.00 0");
}

TEST(LuaRobotTable, TablesExistOnlyForTheKindsParts) {
  LuaRobot r({"proximity", "collision"}, {"differential_drive", "leds"});
  r.load(R"(
    function step()
      log(type(robot.proximity), " ", type(robot.wheels), " ", type(robot.leds), " ",
          type(robot.positioning), " ", type(robot.range_and_bearing), " ",
          type(robot.colored_blob_omnidirectional_camera))
    end)");
  r.step();
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0], "table table table nil nil nil");
}

TEST(LuaRobotTable, IdLogAndScriptFieldsPersist) {
  LuaRobot r({"proximity"}, {"differential_drive"}, 42);
  r.load(R"(
    function init() robot.mine = 0 end
    function step()
      robot.mine = robot.mine + 1
      log("id=", robot.id, " n=", robot.mine, " ", true, " ", nil)
      logerr("warn ", 1.5)
    end)");
  r.step();
  r.step();
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[1], "id=42 n=2 true nil");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0], "warn 1.5");
}

TEST(LuaRobotTable, RequireFindsModulesBesideTheScript) {
  LuaRobot r({}, {"differential_drive"});
  write_script("local M = {} function M.speed() return 12 end return M", "helper.lua");
  r.load(R"(
    local helper = require "helper"
    function step() robot.wheels.set_velocity(helper.speed(), helper.speed()) end)");
  r.step();
  EXPECT_DOUBLE_EQ(r.parts.wheels[0], 0.12);
}

TEST(LuaRobotTable, ResetCallsTheScriptsReset) {
  LuaRobot r({}, {"leds"});
  r.load(R"(
    function init() n = 0 end
    function step() n = n + 1 log(n) end
    function reset() n = 100 robot.leds.set_all_colors("blue") end)");
  r.step();
  r.controller().reset();
  r.step();
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[1], "101");
  EXPECT_EQ(r.parts.leds[0], (Color{0, 0, 255, 255}));
}

// robot.random draws from the robot's counter-based stream: the same seed, robot and tick give
// the same numbers, whatever else ran before.
TEST(LuaRobotRandom, RepeatsForTheSameSeedRobotAndTick) {
  const char* script = R"(
    function step()
      log(robot.random.uniform(), " ", robot.random.uniform(10), " ",
          robot.random.uniform(-2, 2), " ", robot.random.uniform_int(6), " ",
          robot.random.uniform_int(10, 20), " ", tostring(robot.random.bernoulli(0.5)), " ",
          robot.random.gaussian(1, 5), " ", robot.random.exponential(2), " ",
          robot.random.poisson(3))
    end)";
  LuaRobot a, b, other_seed;
  a.load(script);
  b.load(script);
  other_seed.seed = 2;
  other_seed.load(script);
  for (int i = 0; i < 3; ++i) {
    a.step();
    b.step();
    other_seed.step();
  }
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_NE(a.lines, other_seed.lines);
  EXPECT_NE(a.lines[0], a.lines[1]);  // a new tick, new numbers
}

TEST(LuaRobotRandom, DrawsStayInTheirRanges) {
  LuaRobot r({}, {});
  r.load(R"(
    function step()
      local bad = 0
      local trues = 0
      local sum = 0
      for i = 1, 20000 do
        local u = robot.random.uniform(3, 5)
        if u < 3 or u >= 5 then bad = bad + 1 end
        local k = robot.random.uniform_int(4)
        if k < 0 or k >= 4 or math.type(k) ~= "integer" then bad = bad + 1 end
        if robot.random.bernoulli(0.25) then trues = trues + 1 end
        sum = sum + robot.random.gaussian(2, 10)
      end
      log(bad, " ", trues > 4600 and trues < 5400, " ", math.abs(sum / 20000 - 10) < 0.1)
    end)");
  r.step();
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0], "0 true true");
}

}  // namespace
}  // namespace fleetsim::lua::test

namespace fleetsim::lua::test {
namespace {

// Lua hashes strings with a seed that changes from state to state; a script summing or picking
// over pairs() must still give the same bits every run.
TEST(LuaDeterminism, PairsVisitsKeysInAFixedOrder) {
  const char* script = R"(
    function step()
      local t = {zeta = 1, alpha = 2, [3] = "c", mid = 3, [1.5] = "x", [true] = 0, beta = 4}
      t.gone = 1
      t.gone = nil
      local s = ""
      for k, v in pairs(t) do s = s .. tostring(k) .. "=" .. tostring(v) .. " " end
      log(s)
    end)";
  for (int run = 0; run < 5; ++run) {
    LuaRobot r;
    r.load(script);
    r.step();
    ASSERT_EQ(r.lines.size(), 1u);
    EXPECT_EQ(r.lines[0], "1.5=x 3=c alpha=2 beta=4 mid=3 zeta=1 true=0 ");
  }
}

TEST(LuaDeterminism, MathRandomDrawsFromTheRobotsStream) {
  const char* script = R"(
    function init() math.randomseed(os.time()) end
    function step() log(math.random(), " ", math.random(6), " ", math.random(-3, 3)) end)";
  LuaRobot a, b;
  a.load(script);
  b.load(script);
  a.step();
  b.step();
  EXPECT_EQ(a.lines, b.lines);
  LuaRobot c;
  c.load(R"(
    function step()
      local bad = 0
      for i = 1, 10000 do
        local k = math.random(6)
        if k < 1 or k > 6 or math.type(k) ~= "integer" then bad = bad + 1 end
      end
      log(bad)
    end)");
  c.step();
  EXPECT_EQ(c.lines.at(0), "0");
}

TEST(LuaLibraries, LazyLibrariesOpenOnFirstUse) {
  LuaRobot r({}, {});
  r.load(R"(
    function step()
      log(type(io.write), " ", type(os.clock), " ", type(coroutine.wrap), " ", utf8.char(72),
          " ", type(debug.traceback), " ", type(package.path), " ", type(require))
    end)");
  r.step();
  EXPECT_EQ(r.lines.at(0), "function function function H function string function");
}

}  // namespace
}  // namespace fleetsim::lua::test

namespace fleetsim::lua::test {
namespace {

// ARGoS's vector2, vector3 and quaternion, made on first use.
TEST(LuaGeometryTypes, VectorsAndQuaternionsAsInArgos) {
  LuaRobot r({"positioning"}, {});
  r.load(R"(
    function step()
      local a = vector2(3, 4)
      local b = vector2(a)
      b.x = 1
      local s = string.format("%g %g %g %s %g", a:length(), (a + b).x, (a * 2).y, tostring(-a),
                              a:dot(vector2(1, 0)))
      local r = vector2(1, 0):rotate(math.pi / 2)
      s = s .. string.format(" %.3f %.3f", r.x, r.y)
      -- a quarter turn about z takes x to y
      local v = vector3(1, 0, 0):rotate(quaternion(math.pi / 2, vector3(0, 0, 1)))
      s = s .. string.format(" %.3f %.3f %.3f", v.x, v.y, v.z)
      -- the robot's orientation works with them
      local heading = quaternion(robot.positioning.orientation)
      local yaw = heading:toeulerangles()
      local p = vector3(robot.positioning.position) - vector3(1, 1, 0)
      s = s .. string.format(" %.3f %.3f %.3f %s", yaw, p.x, p.y, tostring(vector2() == vector2(0, 0)))
      log(s)
    end)");
  r.parts.pose[0] = 2.5;
  r.parts.pose[1] = 1.0;
  r.parts.pose[2] = 0.75;
  r.step();
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0], "5 4 8 -3,-4 3 0.000 1.000 0.000 1.000 0.000 0.750 1.500 0.000 true");
}

TEST(LuaGeometryTypes, BadArgumentsNameTheCallersLine) {
  LuaRobot r({}, {});
  r.load("function step()\n  local v = vector2('a')\nend\n");
  try {
    r.step();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), r.path + ":2: invalid arguments to vector2");
  }
}

}  // namespace
}  // namespace fleetsim::lua::test
