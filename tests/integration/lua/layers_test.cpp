// Environment layers (include/fleetsim/layer.hpp, docs/experiment-format.md <layers>): what a
// robot's controller reads from a bitmap layer, a nearest_object layer and a Lua layer, in
// whole runs; the same bits on 1 and 2 threads; several processes refused at the line; and
// every mistake reported at its line before the run, all at once.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

/// What `reader` saw: robot name -> the values of layer `layer` at each tick.
std::map<std::string, std::vector<std::vector<double>>> g_seen;

/// `reader`: a C++ controller that reads the layer named by its `layer` parameter (any size)
/// through ControllerSetup::layer and RobotIO::layer, and moves nothing.
class Reader final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    handle_ = setup.layer(p.text("layer"), static_cast<std::uint32_t>(p.integer("size", 0)));
    name_ = std::string(setup.robot_name());
  }
  void step(RobotIO& io) override {
    const std::span<const double> v = io.layer(handle_);
    g_seen[name_].emplace_back(v.begin(), v.end());
  }

 private:
  std::size_t handle_ = 0;
  std::string name_;
};

PluginRegistry registry() {
  PluginRegistry r;
  register_builtins(r);
  r.add_controller({PluginKind::kController,
                    "reader",
                    "test",
                    {{"layer", "string", "", "layer"}, {"size", "integer", "0", "size"}}},
                   [] { return std::make_unique<Reader>(); });
  return r;
}

std::optional<Experiment> parse(PluginRegistry& reg, const std::string& xml, Diagnostics& d,
                                const fs::path& name, int threads = 1) {
  ExperimentOverrides o;
  o.threads = threads;
  return parse_experiment(xml, name.string(), reg, o, d);
}

/// A 4 x 4 PNG, black but for two pixels: (column 3, row 0), the top right, white; (1, 2)
/// grey 128 (R = G = B).
void write_heat_png(const fs::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = 4;
  image.height = 4;
  image.format = PNG_FORMAT_RGB;
  unsigned char px[48] = {};
  for (int c = 0; c < 3; ++c) {
    px[(0 * 4 + 3) * 3 + c] = 255;
    px[(2 * 4 + 1) * 3 + c] = 128;
  }
  ASSERT_TRUE(png_image_write_to_file(&image, path.c_str(), 0, px, 0, nullptr));
}

// A bitmap layer stretched over a 4 x 4 m arena (1 m a pixel, the top row at y = 2): a robot on
// the white pixel reads max (250), one on the grey pixel 250 * 128 / 255, one on black min
// (0). The Lua controller reads it with robot.layer("heat", "number") as the playground's
// robots call getInputFromSensor, and keeps it in its knowledge.
TEST(Layers, ARobotInAHotSpotOfABitmapLayerReadsTheBitmapsValueThere) {
  const auto dir = testing::fresh_test_dir("layers");
  write_heat_png(dir / "heat.png");
  std::ofstream(dir / "feel.lua") << R"(
function step()
  robot.knowledge.felt = robot.layer("heat", "number")
  robot.knowledge.same = robot.layer("heat")
end
)";
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="0.2"/>
  <knowledge><field name="felt"/><field name="same"/></knowledge>
  <controllers><controller id="feel" type="lua" script="feel.lua"/></controllers>
  <arena size="4,4">
    <robot id="hot" controller="feel" position="1.5,1.5"/>
    <robot id="warm" controller="feel" position="-0.5,-0.5"/>
    <robot id="cold" controller="feel" position="-1.5,-1.5"/>
  </arena>
  <layers><layer name="heat" type="bitmap" file="heat.png" min="0" max="250"/></layers>
</fleetsim>)",
                  d, dir / "heat.xml");
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  const WorldState& s = sim.state();
  const auto* felt = static_cast<const double*>(s.robots.data(s.robots.find("knowledge.felt")));
  const auto* same = static_cast<const double*>(s.robots.data(s.robots.find("knowledge.same")));
  EXPECT_EQ(felt[0], 250);
  EXPECT_DOUBLE_EQ(felt[1], 250.0 * 128 / 255);
  EXPECT_EQ(felt[2], 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(same[i], felt[i]);
  sim.finish();
}

// A nearest_object layer with bearing, read by a C++ controller: stations at (3, 4) and
// (-1, 0), a closer object of another tag at (0, 0.5). The robot at the origin reads 1 (the
// station at (-1, 0), straight behind it: bearing pi); the one at (3, 1), heading 0, reads 3,
// the station straight to its left (pi / 2); the values come every tick.
TEST(Layers, ANearestObjectLayerGivesTheExactDistanceAndBearing) {
  const auto dir = testing::fresh_test_dir("layers");
  g_seen.clear();
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="0.3"/>
  <controllers><controller id="read" type="reader" layer="station" size="2"/></controllers>
  <arena size="10,10">
    <robot id="origin" controller="read" position="0,0" heading="0"/>
    <robot id="right" controller="read" position="3,1" heading="0"/>
    <object id="s1" class="Station" position="3,4" size="0.5" tag="charger"/>
    <object id="s2" class="Station" position="-1,0" size="0.5" tag="charger"/>
    <object id="rock" class="Rock" position="0,0.5" size="0.5" tag="rock"/>
  </arena>
  <layers><layer name="station" type="nearest_object" tag="charger" bearing="true"/></layers>
</fleetsim>)",
                  d, dir / "near.xml");
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  ASSERT_EQ(g_seen["origin"].size(), 3u);
  for (const auto& v : g_seen["origin"]) {
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0], 1);
    EXPECT_NEAR(std::fabs(v[1]), kPi, 1e-12);
  }
  for (const auto& v : g_seen["right"]) {
    EXPECT_EQ(v[0], 3);
    EXPECT_NEAR(v[1], kPi / 2, 1e-12);
  }
}

/// The competition's energy as a Lua layer: 1 less each tick a robot has moved since the last,
/// 30 more (up to `initial`, 300) within 2 m of a "Power Station".
constexpr const char* kEnergyLua = R"(
local last = {}
function value(r)
  local e = r.value
  local before = last[r.number]
  if before and (before.x ~= r.x or before.y ~= r.y) then e = e - 1 end
  last[r.number] = {x = r.x, y = r.y}
  for _, o in ipairs(layer.objects) do
    if o.tag == "Power Station" and math.sqrt((o.x - r.x)^2 + (o.y - r.y)^2) < 2 then
      e = math.min(e + 30, 300)
    end
  end
  return e
end
function reset() last = {} end
)";

// A Lua layer keeps state in its values: the runner drives straight (0.1 m/s) far from the
// station, the parked robot stands beside it. The controller reads the energy with
// robot.layer("energy") each tick: the runner's falls by one a tick from its second tick
// (300, 300, 299, ... : the layer of tick t sees the moves of ticks 0..t-1), the parked one's
// stays 300; the C++ reader reads the same as Lua does.
TEST(Layers, ALuaLayerDrainsAndChargesEnergy) {
  const auto dir = testing::fresh_test_dir("layers");
  g_seen.clear();
  std::ofstream(dir / "energy.lua") << kEnergyLua;
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="2"/>
  <controllers>
    <controller id="go" type="random_walk" speed="0.1" turn_probability="0"/>
    <controller id="read" type="reader" layer="energy" size="1"/>
  </controllers>
  <arena size="10,10">
    <robot id="runner" controller="go" position="-4,-4" heading="0"/>
    <robot id="parked" controller="read" position="3,3"/>
    <object id="ps" class="PowerStation" position="4,3" size="1" tag="Power Station"/>
  </arena>
  <layers><layer name="energy" type="lua" script="energy.lua" initial="300"/></layers>
</fleetsim>)",
                  d, dir / "energy.xml");
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.enable_reset();
  sim.start();
  while (!sim.done()) sim.step();
  const WorldState& s = sim.state();
  const auto* energy = static_cast<const double*>(s.robots.data(s.robots.find("layer.energy")));
  EXPECT_EQ(energy[0], 300 - 19);  // 20 ticks: computed at 0..19, moved before 1..19
  EXPECT_EQ(energy[1], 300);
  ASSERT_EQ(g_seen["parked"].size(), 20u);
  for (const auto& v : g_seen["parked"]) EXPECT_EQ(v, std::vector<double>{300});
  // reset(): the values and the script's state as at the start.
  sim.reset();
  const auto* again = static_cast<const double*>(s.robots.data(s.robots.find("layer.energy")));
  EXPECT_EQ(again[0], 300);
  sim.step();
  sim.step();
  again = static_cast<const double*>(s.robots.data(s.robots.find("layer.energy")));
  EXPECT_EQ(again[0], 299);
  sim.finish();
}

// A custom action (deeco_wheels' extras, the playground's EnergyTemperatureAction): a robot
// turns its "extinguisher" on from its 5th step; a Lua layer reads the robots' current
// actions (r.action) and counts the ticks it saw the extinguisher on; a robot without extras
// shows only speed and angle. Too many extras stop the run at the script's line; more than 8
// names are refused at load.
TEST(Layers, ALayerReadsTheRobotsCustomActions) {
  const auto dir = testing::fresh_test_dir("layers");
  g_seen.clear();
  std::ofstream(dir / "fighter.lua") << R"(local n = 0
function step()
  n = n + 1
  robot.deeco_wheels.set_action(0, 0, {n >= 5, 0})
end
)";
  std::ofstream(dir / "plain.lua") << "function step() robot.deeco_wheels.set_action(0, 0) end\n";
  std::ofstream(dir / "cooling.lua") << R"(function value(r)
  local a = r.action
  if a.extinguisher == nil then return r.value - 1 end  -- (no extras: -1 a tick)
  assert(a.speed == 0 and a.angle == 0 and a.request == 0)
  return r.value + a.extinguisher
end
)";
  auto experiment = [&](const std::string& extras) {
    return R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <kinds>
    <kind name="ff" base="epuck" max_speed="1"><sensor type="collision"/>
      <actuator type="deeco_wheels" )" +
           extras + R"(/></kind>
    <kind name="plain" base="epuck" max_speed="1"><sensor type="collision"/>
      <actuator type="deeco_wheels" name="wheels"/></kind>
  </kinds>
  <controllers>
    <controller id="f" type="lua" script="fighter.lua"/>
    <controller id="p" type="lua" script="plain.lua"/>
  </controllers>
  <arena size="10,10">
    <robot id="fighter" kind="ff" controller="f" position="0,0"/>
    <robot id="plain" kind="plain" controller="p" position="3,3"/>
  </arena>
  <layers><layer name="cooled" type="lua" script="cooling.lua"/></layers>
</fleetsim>)";
  };
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, experiment(R"(extras="extinguisher request")"), d, dir / "ff.xml");
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  const WorldState& s = sim.state();
  const auto* cooled = static_cast<const double*>(s.robots.data(s.robots.find("layer.cooled")));
  // 10 ticks: the layer of tick t reads the action of step t - 1; on from step 5 (tick 4), so
  // seen on at ticks 5..9.
  EXPECT_EQ(cooled[0], 5);
  EXPECT_EQ(cooled[1], -10);

  // Three extras for an actuator of two: the run stops at the call's line.
  std::ofstream(dir / "fighter.lua") << "function step()\n"
                                        "  robot.deeco_wheels.set_action(1, 0, {1, 0, 1})\nend\n";
  Diagnostics d2;
  auto ex2 = parse(reg, experiment(R"(extras="extinguisher request")"), d2, dir / "ff2.xml");
  ASSERT_TRUE(ex2) << d2.str();
  Simulation sim2(std::move(*ex2), reg);
  sim2.start();
  try {
    sim2.step();
    ADD_FAILURE() << "expected the run to stop";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fighter.lua:2:"), std::string::npos) << what;
    EXPECT_NE(what.find("3 extras given, the actuator has 2"), std::string::npos) << what;
  }

  Diagnostics d3;
  EXPECT_FALSE(parse(reg, experiment(R"(extras="a b c d e f g h i")"), d3, dir / "ff3.xml"));
  EXPECT_NE(d3.str().find("extras names 9 numbers (at most 8)"), std::string::npos) << d3.str();
}

// Random walkers with the three kinds of layer (a Lua one drawing from layer.random) give the
// same state, layer values included, on 1 and 2 threads.
TEST(Layers, SameBitsOnOneAndTwoThreads) {
  const auto dir = testing::fresh_test_dir("layers");
  write_heat_png(dir / "heat.png");
  std::ofstream(dir / "energy.lua") << kEnergyLua;
  std::ofstream(dir / "noise.lua") << "function value(r) return layer.random.uniform() end\n";
  std::ofstream(dir / "walk.lua") << R"(
function step()
  local e = robot.layer("energy")
  local n = robot.layer("noise")
  robot.wheels.set_velocity(5 + 5 * n, 5 + robot.layer("heat") / 50 + (300 - e) / 100)
end
)";
  auto run = [&](int threads) {
    PluginRegistry reg = registry();
    Diagnostics d;
    auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="10" seed="3"/>
  <controllers><controller id="w" type="lua" script="walk.lua"/></controllers>
  <arena size="8,8">
    <distribute count="60" controller="w" id_prefix="w" kind="footbot"/>
    <object id="ps" class="PowerStation" position="1,1" size="1" tag="Power Station"/>
  </arena>
  <layers>
    <layer name="heat" type="bitmap" file="heat.png" max="250"/>
    <layer name="energy" type="lua" script="energy.lua" initial="300"/>
    <layer name="noise" type="lua" script="noise.lua"/>
    <layer name="station" type="nearest_object" tag="Power Station"/>
  </layers>
</fleetsim>)",
                    d, dir / "same.xml", threads);
    EXPECT_TRUE(ex) << d.str();
    Simulation sim(std::move(*ex), reg);
    sim.start();
    while (!sim.done()) sim.step();
    const WorldState& s = sim.state();
    const auto* e = static_cast<const double*>(s.robots.data(s.robots.find("layer.energy")));
    EXPECT_LT(e[0], 300) << "the energy never changed: the test shows nothing";
    sim.finish();
    return s.hash();
  };
  EXPECT_EQ(run(1), run(2));
}

// Mistakes, each at its line, all reported before the run.
TEST(Layers, MistakesAreReportedAtTheirLines) {
  const auto dir = testing::fresh_test_dir("layers");
  std::ofstream(dir / "bad.lua") << "function value(r)\n  return = 1\nend\n";
  std::ofstream(dir / "none.lua") << "x = 1\n";
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <controllers><controller id="read" type="reader" layer="temperature"/></controllers>
  <arena size="10,10"><robot id="r" controller="read" position="0,0"/></arena>
  <layers>
    <layer name="heat" type="bitmp" file="heat.png"/>
    <layer name="heat2" type="bitmap"/>
    <layer name="2hot" type="nearest_object"/>
    <layer name="bad" type="lua" script="bad.lua"/>
    <layer name="none" type="lua" script="none.lua"/>
    <layer name="missing" type="bitmap" file="no_such.png"/>
    <layer name="wide" type="lua" script="none.lua" size="0"/>
  </layers>
</fleetsim>)",
                  d, dir / "bad.xml");
  EXPECT_FALSE(ex);
  const std::string all = d.str();
  const std::string f = (dir / "bad.xml").string();
  EXPECT_NE(all.find(f + ":6: error: unknown layer type 'bitmp'"), std::string::npos) << all;
  EXPECT_NE(all.find("did you mean 'bitmap'"), std::string::npos) << all;
  EXPECT_NE(all.find(f + ":7: error: <layer type=\"bitmap\"> is missing parameter 'file'"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(f + ":8: error: layer name '2hot' is not a word"), std::string::npos) << all;
  EXPECT_NE(all.find("bad.lua:2: error:"), std::string::npos) << all;
  EXPECT_NE(all.find(f + ":10: error: layer 'none' (type 'lua'): the script"), std::string::npos)
      << all;
  EXPECT_NE(all.find("defines no global function value(r)"), std::string::npos) << all;
  EXPECT_NE(all.find(f + ":11: error: parameter 'file' of <layer type=\"bitmap\"> names "
                         "'no_such.png'"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(f + ":12: error: layer 'wide' (type 'lua'): size=0"), std::string::npos)
      << all;

  // A controller that reads a layer the experiment does not declare: at its <controller>.
  Diagnostics d2;
  auto ex2 = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <controllers><controller id="read" type="reader" layer="temperature"/></controllers>
  <arena size="10,10"><robot id="r" controller="read" position="0,0"/></arena>
  <layers><layer name="heat" type="nearest_object"/></layers>
</fleetsim>)",
                   d2, dir / "unknown.xml");
  EXPECT_FALSE(ex2);
  EXPECT_NE(d2.str().find("unknown.xml:3: error:"), std::string::npos) << d2.str();
  EXPECT_NE(d2.str().find("no layer 'temperature' (the experiment's <layers> declares: heat)"),
            std::string::npos)
      << d2.str();
}

// A Lua layer's error during the run names the tick, the layer and the script's line; a Lua
// controller reading a layer that is not there names the layers there are.
TEST(Layers, ErrorsDuringTheRunNameTheLayerAndTheLine) {
  const auto dir = testing::fresh_test_dir("layers");
  std::ofstream(dir / "late.lua") << "function value(r)\n  if layer.tick == 2 then\n"
                                     "    error('boom')\n  end\n  return 1\nend\n";
  std::ofstream(dir / "typo.lua") << "function step()\n  local t = robot.layer('haet')\nend\n";
  for (const char* controller : {"idle", "typo"}) {
    PluginRegistry reg = registry();
    Diagnostics d;
    auto ex = parse(reg,
                    std::string(R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <controllers>
    <controller id="idle" type="idle"/>
    <controller id="typo" type="lua" script="typo.lua"/>
  </controllers>
  <arena size="10,10"><robot id="r" controller=")") +
                        controller + R"(" position="0,0"/></arena>
  <layers><layer name="heat" type="lua" script="late.lua"/></layers>
</fleetsim>)",
                    d, dir / "late.xml");
    ASSERT_TRUE(ex) << d.str();
    Simulation sim(std::move(*ex), reg);
    sim.start();
    try {
      while (!sim.done()) sim.step();
      FAIL() << "the run went on";
    } catch (const RunError& e) {
      const std::string what = e.what();
      if (std::string(controller) == "idle") {
        EXPECT_NE(what.find("tick 2, layer 'heat' (type 'lua')"), std::string::npos) << what;
        EXPECT_NE(what.find("late.lua:3: boom"), std::string::npos) << what;
      } else {
        EXPECT_NE(what.find("typo.lua:2:"), std::string::npos) << what;
        EXPECT_NE(what.find("no such layer (the experiment declares: heat)"), std::string::npos)
            << what;
      }
    }
    sim.finish();
  }
}

// Several processes: refused before anything runs, at the first <layer>, status 2.
TEST(Layers, SeveralProcessesAreRefusedAtTheLine) {
  const auto dir = testing::fresh_test_dir("layers");
  std::ofstream(dir / "p.xml") << R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <arena size="10,10"><distribute count="4" controller="idle"/></arena>
  <controllers><controller id="idle" type="idle"/></controllers>
  <layers>
    <layer name="station" type="nearest_object"/>
  </layers>
  <log path="p.log"/>
</fleetsim>
)";
  const std::string out = (dir / "said.txt").string();
  const int raw = std::system(("cd '" + dir.string() + "' && " + std::string(FLEETSIM_BINARY_DIR) +
                               "/fleetsim run p.xml --processes 2 > '" + out + "' 2>&1")
                                  .c_str());
  const std::string said = testing::slurp(out);
  EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 2) << said;
  EXPECT_NE(said.find("p.xml:6: error: environment layers run on one process for now"),
            std::string::npos)
      << said;
  EXPECT_FALSE(fs::exists(dir / "p.log"));
}

}  // namespace
}  // namespace fleetsim
