// What a user sees when a Lua script is wrong: at load, a SetupError at the script's file and
// line; during the run, an error whose message starts with "file:line:".
#include <gtest/gtest.h>

#include <filesystem>

#include "lua/script.hpp"
#include "lua_test_robot.hpp"

namespace fleetsim::lua::test {
namespace {

/// Runs `f`, expecting a SetupError; returns it.
template <class F>
SetupError setup_error(F f) {
  try {
    f();
  } catch (const SetupError& e) {
    return e;
  }
  ADD_FAILURE() << "no SetupError";
  return SetupError("");
}

template <class F>
std::string runtime_error(F f) {
  try {
    f();
  } catch (const SetupError& e) {
    ADD_FAILURE() << "a SetupError, not a run-time error: " << e.what();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(LuaScriptErrors, SyntaxErrorIsAtItsLine) {
  LuaRobot r;
  SetupError e = setup_error([&] { r.load("function step()\n  x = = 1\nend\n"); });
  EXPECT_EQ(e.file, r.path);
  EXPECT_EQ(e.line, 2);
  EXPECT_NE(std::string(e.what()).find("unexpected symbol near '='"), std::string::npos)
      << e.what();
}

TEST(LuaScriptErrors, LongPathsAreNotShortened) {
  // Lua shortens chunk names past 60 characters in its messages; the user gets the full path.
  LuaRobot r;
  const std::string name = std::string(80, 'a') + ".lua";
  SetupError e = setup_error([&] { r.load("\n\nlocal 1 = 2\n", name); });
  EXPECT_EQ(e.file, r.path);
  EXPECT_EQ(e.line, 3);
  const std::string runtime = runtime_error([&] {
    LuaRobot q;
    q.load("function step()\n  local t = nil\n  t.x = 1\nend\n", name);
    q.step();
  });
  EXPECT_EQ(runtime.rfind(std::filesystem::path(r.path).parent_path().string() + "/" + name +
                              ":3: attempt to index a nil value",
                          0),
            0u)
      << runtime;
}

TEST(LuaScriptErrors, MissingScriptIsReportedAtTheControllerElement) {
  LuaRobot r;
  SetupError e = setup_error([&] { r.init_path("/nonexistent/dir/robot.lua"); });
  EXPECT_EQ(e.file, "");  // the parser then points at the <controller> element
  EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/robot.lua"), std::string::npos);
}

TEST(LuaScriptErrors, ScriptWithoutStepIsRefused) {
  LuaRobot r;
  SetupError e = setup_error([&] { r.load("function init() end\n"); });
  EXPECT_NE(std::string(e.what()).find("step()"), std::string::npos) << e.what();
}

TEST(LuaScriptErrors, ErrorInInitIsASetupErrorAtItsLine) {
  LuaRobot r;
  SetupError e = setup_error([&] {
    r.load("function init()\n  local n = nil\n  return n + 1\nend\nfunction step() end\n");
  });
  EXPECT_EQ(e.file, r.path);
  EXPECT_EQ(e.line, 3);
  EXPECT_NE(std::string(e.what()).find("attempt to perform arithmetic on a nil value"),
            std::string::npos)
      << e.what();
}

TEST(LuaScriptErrors, ErrorWhileLoadingIsASetupErrorAtItsLine) {
  LuaRobot r;
  SetupError e = setup_error([&] { r.load("x = 1\nerror('bad config')\nfunction step() end\n"); });
  EXPECT_EQ(e.file, r.path);
  EXPECT_EQ(e.line, 2);
  EXPECT_STREQ(e.what(), "bad config");
}

TEST(LuaScriptErrors, RuntimeErrorNamesScriptAndLine) {
  LuaRobot r;
  r.load("function step()\n  helper()\nend\nfunction helper()\n  undefined_function()\nend\n");
  const std::string m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m.rfind(r.path + ":5: attempt to call a nil value (global 'undefined_function')", 0),
            0u)
      << m;
}

TEST(LuaScriptErrors, BadArgumentsToTheApiNameTheCallersLine) {
  LuaRobot r;
  r.load("function step()\n\n  robot.wheels.set_velocity('fast', 1)\nend\n");
  const std::string m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m.rfind(r.path + ":3: bad argument #1 to 'set_velocity' (number expected", 0), 0u) << m;
}

TEST(LuaScriptErrors, ApiErrorsExplainWhatWasExpected) {
  LuaRobot r;
  r.load(
      "function step()\n"
      "  if n == nil then n = 1 robot.leds.set_single_color(14, 'red')\n"
      "  elseif n == 1 then n = 2 robot.leds.set_all_colors('mauve')\n"
      "  else robot.range_and_bearing.set_data({1, 2}) end\n"
      "end\n");
  std::string m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m, r.path +
                   ":2: robot.leds.set_single_color(): LED 14 does not exist (expected 1 "
                   "to 13)");
  m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m.rfind(r.path + ":3: robot.leds.set_all_colors(): unknown colour 'mauve'", 0), 0u)
      << m;
  m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m, r.path +
                   ":4: robot.range_and_bearing.set_data(array) expects an array of 10 "
                   "numbers (got 2)");
}

TEST(LuaScriptErrors, StagedCommandErrorsNameTheLineInInit) {
  LuaRobot r;
  r.load("function init()\n  robot.leds.set_single_color(99, 'red')\nend\nfunction step() end\n");
  const std::string m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m.rfind(r.path + ":2: robot.leds.set_single_color(): LED 99 does not exist", 0), 0u)
      << m;
}

TEST(LuaScriptErrors, ErrorWithATableValueStillHasAPlace) {
  LuaRobot r;
  r.load("function step()\n  error({code = 3})\nend\n");
  const std::string m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m, r.path + ":2: (error object is a table value)");
}

TEST(LuaScriptErrors, OsExitIsAnErrorNotAnExit) {
  LuaRobot r;
  r.load("function step()\n  os.exit(3)\nend\n");
  const std::string m = runtime_error([&] { r.step(); });
  EXPECT_NE(m.find(":2: os.exit() is not available"), std::string::npos) << m;
}

TEST(LuaScriptErrors, RunawayMemoryStopsTheRunNotTheMachine) {
  LuaRobot r({}, {}, 7, std::size_t{4} << 20);
  r.load("function step()\n  local t = {}\n  for i = 1, 1e9 do t[i] = {i} end\nend\n");
  const std::string m = runtime_error([&] { r.step(); });
  EXPECT_EQ(m.rfind(r.path + ": not enough memory (a robot's script may use 4 MiB", 0), 0u) << m;
  EXPECT_LE(r.controller().memory_bytes(), std::size_t{4} << 20);
}

// A state's small blocks are laid out by fleetsim (script.cpp, BlockHeap), its large ones by
// the C library: values must survive blocks that grow and shrink across that line, blocks that
// are freed and reused, and other states that come and go (and give their memory back).
TEST(LuaScriptMemory, ValuesSurviveEveryBlockSizeAndOtherStatesComingAndGoing) {
  const std::string script = R"(
    kept = {}
    for n = 1, 200 do kept[n] = string.rep(string.char(64 + n % 26), n * 5) end
    function step()
      local bad = 0
      for round = 1, 3 do
        local t = {}
        for n = 1, 300 do
          t[#t + 1] = n                          -- an array that grows past 512 bytes
          local s = string.rep("y", n * 7)       -- strings of 7 to 2100 bytes
          if #s ~= n * 7 then bad = bad + 1 end
          local h = {a = n, b = s, [n] = n}      -- small tables, made and dropped
          if h.a ~= n or h[n] ~= n then bad = bad + 1 end
        end
        local sum = 0
        for i = 1, #t do sum = sum + t[i] end
        if sum ~= 300 * 301 // 2 then bad = bad + 1 end
        while #t > 3 do t[#t] = nil end          -- and shrinks back
        collectgarbage("collect")
      end
      local kept_ok = 0
      for n = 1, 200 do
        if kept[n] == string.rep(string.char(64 + n % 26), n * 5) then kept_ok = kept_ok + 1 end
      end
      log(bad, " ", kept_ok)
    end)";
  LuaRobot kept;
  kept.load(script);
  for (int i = 0; i < 20; ++i) {
    LuaRobot other;
    other.load(script);
    other.step();
    ASSERT_EQ(other.lines, std::vector<std::string>{"0 200"});
    kept.step();
  }
  ASSERT_EQ(kept.lines.size(), 20u);
  for (const std::string& line : kept.lines) EXPECT_EQ(line, "0 200");
}

TEST(LuaScriptErrors, ScriptsCannotLoadBytecode) {
  // A crafted binary chunk can crash Lua: load, loadfile and dofile take text only.
  LuaRobot r({}, {});
  r.load(R"(
    function step()
      local f, e = load(string.dump(function() return 1 end))
      local g = load("return 2 + 2")
      local h = load("return x", "chunk", "bt", {x = 5})
      log(tostring(f), " ", e:find("binary chunk") ~= nil, " ", g(), " ", h())
    end)");
  r.step();
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0], "nil true 4 5");
}

TEST(LuaScriptErrors, FinalizersRunWhileTheRobotTableStillExists) {
  LuaRobot r({}, {"leds"});
  r.load(R"(
    keep = setmetatable({}, {__gc = function() robot.leds.set_all_colors("red") log("bye") end})
    function step() end)");
  r.step();
  r.controller().destroy();  // closes the state: the finalizer calls the API
  EXPECT_EQ(r.lines, std::vector<std::string>{"bye"});
}

TEST(LuaScriptErrors, BinaryChunksAreRefused) {
  LuaRobot r;
  SetupError e = setup_error([&] { r.load("\x1bLua garbage"); });
  EXPECT_NE(std::string(e.what()).find("binary chunk"), std::string::npos) << e.what();
}

TEST(LuaScriptErrors, ASecondStepAfterAnErrorStillRuns) {
  // The engine stops the run on the first error, but the state must stay usable (reset, a
  // later run) rather than keep garbage on its stack.
  LuaRobot r({}, {"differential_drive"});
  r.load(
      "function step()\n  n = (n or 0) + 1\n  if n == 1 then error('once') end\n"
      "  robot.wheels.set_velocity(1, 1)\nend\n");
  (void)runtime_error([&] { r.step(); });
  r.step();
  EXPECT_DOUBLE_EQ(r.parts.wheels[0], 0.01);
}

// Robots of a run load the same file: compiled once, then loaded as bytecode, which must keep
// line numbers, and follow the file when it changes.
TEST(LuaScriptErrors, SecondLoadOfAScriptKeepsLinesAndSeesChanges) {
  const char* failing = "function step()\n\n  error('on line 3')\nend\n";
  LuaRobot first, second;
  first.load(failing);
  second.load(failing);
  const std::string m = runtime_error([&] { second.step(); });
  EXPECT_EQ(m, second.path + ":3: on line 3");
  LuaRobot changed({}, {"differential_drive"});
  changed.load("function step() robot.wheels.set_velocity(7, 7) end\n");
  changed.step();
  EXPECT_DOUBLE_EQ(changed.parts.wheels[0], 0.07);
}

TEST(LuaCompileErrors, SplitsLuaMessages) {
  ScriptError e = split_compile_error("/a/b.lua:12: '=' expected near 'x'", "/a/b.lua");
  EXPECT_EQ(e.line, 12);
  EXPECT_EQ(e.text, "'=' expected near 'x'");
  e = split_compile_error("...long/b.lua:3: unfinished string", "/very/long/b.lua");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.str(), "/very/long/b.lua:3: unfinished string");
}

}  // namespace
}  // namespace fleetsim::lua::test
