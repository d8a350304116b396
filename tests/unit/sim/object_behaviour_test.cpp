// Objects with behaviour (include/fleetsim/object_behaviour.hpp) and <framework
// processing_time> in whole runs: a C++ behaviour through the registry and a Lua one move,
// resize and retag their objects, the DEECo log shows it as the playground writes objects,
// robots never meet an object's body; processing_time p runs controllers, ensembles and
// behaviours p + 1 times a tick; the same bits on 1 and 2 threads; and every mistake
// is reported at its line before the run.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

/// (tick, round) of every step of `drift`, in call order.
std::vector<std::pair<Tick, int>> g_steps;

/// `drift`: moves its object by `dx` metres along +x each step, sets its size to 0.25 x the
/// tick, and its tag to "t<tick>".
class Drift final : public ObjectBehaviour {
 public:
  void init(const Params& p, const ObjectSetup& setup) override {
    dx_ = p.real("dx", 0.25);
    if (setup.object_class() != "Cart") throw SetupError("drift drives carts only");
  }
  void step(ObjectIO& io) override {
    g_steps.emplace_back(io.tick, io.round);
    io.position.x += dx_;
    io.size = 0.25 * static_cast<double>(io.tick);
    io.tag = "t" + std::to_string(io.tick);
  }

 private:
  double dx_ = 0;
};

PluginRegistry registry() {
  PluginRegistry r;
  register_builtins(r);
  r.add_object_behaviour(
      {PluginKind::kObjectBehaviour, "drift", "test", {{"dx", "real", "0.25", "metres per step"}}},
      [] { return std::make_unique<Drift>(); });
  return r;
}

std::optional<Experiment> parse(PluginRegistry& reg, const std::string& xml, Diagnostics& d,
                                const std::string& name = "obj.xml", int threads = 1) {
  ExperimentOverrides o;
  o.threads = threads;
  return parse_experiment(xml, name, reg, o, d);
}

// A C++ behaviour through the registry: 4 ticks of drift from x = 1 move the cart to 2 (0.25
// a step, exact in binary), its size is 0.25 x 3 and its tag "t3" (the last tick's); the other
// object, without behaviour, stays. The DEECo log's last line shows the cart as the playground
// writes an object: x,,y,,half its size,,tag, in field units (1 m here: the field is the
// 10 x 10 m arena, x from its left side, y down from its top).
TEST(ObjectBehaviours, ACppBehaviourMovesResizesAndRetagsItsObject) {
  const auto dir = testing::fresh_test_dir("objects");
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg,
                  R"(<fleetsim>
  <framework ticks_per_second="10" length="0.4"/>
  <controllers>
    <controller id="i" type="idle"/>
    <behaviour id="move" type="drift"/>
  </controllers>
  <arena size="10,10">
    <robot id="r" controller="i" position="3,1"/>
    <object id="cart" class="Cart" position="1,1" size="0.5" tag="start" behaviour="move"/>
    <object id="post" class="Post" position="-2,-2" size="1" tag="post"/>
  </arena>
  <log path=")" + (dir / "obj.log").string() +
                      R"(" format="deeco"/>
</fleetsim>)",
                  d);
  ASSERT_TRUE(ex) << d.str();
  g_steps.clear();
  {
    Simulation sim(std::move(*ex), reg);
    sim.start();
    while (!sim.done()) sim.step();
    const WorldState& s = sim.state();
    EXPECT_EQ(s.object_x()[0], 2.0);
    EXPECT_EQ(s.object_y()[0], 1.0);
    EXPECT_EQ(s.object_size()[0], 0.75);
    EXPECT_EQ(s.tags.str(s.object_tag()[0]), "t3");
    EXPECT_EQ(s.object_x()[1], -2.0);
    EXPECT_EQ(s.tags.str(s.object_tag()[1]), "post");
    // The robot passed through nothing: it stands where it was.
    EXPECT_EQ(s.x()[0], 3.0);
    sim.finish();
  }
  EXPECT_EQ(g_steps, (std::vector<std::pair<Tick, int>>{{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
  const std::string log = testing::slurp(dir / "obj.log");
  const std::string last = log.substr(log.rfind('\n', log.size() - 2) + 1);
  // Cart at (2, 1) m -> field (7, 4); size 0.75 -> half side 0.375. Post at (-2, -2) -> (3, 7).
  EXPECT_NE(last.find("&&7.0,,4.0,,0.375,,t3;;3.0,,7.0,,0.5,,post;;"), std::string::npos) << last;
}

// A Lua behaviour (docs/lua-api.md, Objects) that reads the robots: the item hides (size 0,
// tag "found by <robot> at <tick>") when a robot's centre is within its size, 0.3 m. The robot
// drives straight at it (random_walk without turns, 0.1 m/s: 0.01 m a tick) from 0.6 m away:
// the behaviour of tick t sees it after t moves, at -0.6 + 0.01 t, within reach from t = 30
// (31 if the float steps land a hair short).
TEST(ObjectBehaviours, ALuaBehaviourSeesTheRobotsNearIt) {
  const auto dir = testing::fresh_test_dir("objects");
  std::ofstream(dir / "item.lua") << R"(
function step()
  local near = object.robots_within(object.size)
  if object.size > 0 and #near > 0 then
    object.size = 0
    object.tag = "found by " .. near[1].id .. " at " .. object.tick
  end
end
)";
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="5"/>
  <controllers>
    <controller id="go" type="random_walk" speed="0.1" turn_probability="0"/>
    <behaviour id="item" type="lua" script="item.lua"/>
  </controllers>
  <arena size="10,10">
    <robot id="seeker" controller="go" position="-0.6,0" heading="0"/>
    <object id="gem" class="Item" position="0,0" size="0.3" tag="gem" behaviour="item"/>
  </arena>
</fleetsim>)",
                  d, (dir / "obj.xml").string());
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done() && sim.state().object_size()[0] > 0) sim.step();
  const WorldState& s = sim.state();
  const std::string tag = s.tags.str(s.object_tag()[0]);
  EXPECT_TRUE(tag == "found by seeker at 30" || tag == "found by seeker at 31") << tag;
  sim.finish();
}

// processing_time = 2: three rounds a tick. The behaviour steps three times a tick (rounds 0,
// 1, 2), a Lua controller's step() three times (its knowledge counter), an ensemble three
// times (its exchanges); the robots still move once a tick.
TEST(ObjectBehaviours, ProcessingTimeRunsThatManyRoundsATick) {
  const auto dir = testing::fresh_test_dir("objects");
  std::ofstream(dir / "count.lua") << R"(
function step()
  robot.knowledge.calls = robot.knowledge.calls + 1
end
)";
  std::ofstream(dir / "pairs.lua") << R"(
function exchange(c, m)
  c.knowledge.pairs = c.knowledge.pairs + 1
end
)";
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="0.4" processing_time="2"/>
  <knowledge><field name="calls"/><field name="pairs"/></knowledge>
  <controllers>
    <controller id="c" type="lua" script="count.lua"/>
    <behaviour id="move" type="drift"/>
  </controllers>
  <arena size="10,10">
    <robot id="a" controller="c" position="0,0"/>
    <robot id="b" controller="c" position="1,0"/>
    <object id="cart" class="Cart" position="1,1" size="0.5" behaviour="move"/>
  </arena>
  <ensembles><ensemble type="lua" script="pairs.lua"/></ensembles>
</fleetsim>)",
                  d, (dir / "obj.xml").string());
  ASSERT_TRUE(ex) << d.str();
  g_steps.clear();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  const WorldState& s = sim.state();
  const auto calls = s.robots.span<double>(s.robots.find("knowledge.calls"));
  const auto pairs = s.robots.span<double>(s.robots.find("knowledge.pairs"));
  EXPECT_EQ(calls[0], 12);  // 4 ticks x 3 rounds
  EXPECT_EQ(calls[1], 12);
  EXPECT_EQ(pairs[0], 12);  // one member (the other robot) x 3 rounds x 4 ticks
  EXPECT_EQ(s.object_x()[0], 1 + 12 * 0.25);
  std::vector<std::pair<Tick, int>> expected;
  for (Tick t = 0; t < 4; ++t)
    for (int r = 0; r < 3; ++r) expected.emplace_back(t, r);
  EXPECT_EQ(g_steps, expected);
  EXPECT_EQ(s.tick, 4);
  sim.finish();
}

// The same bits on 1 and 2 threads: random walkers, Lua items that hide and reappear at random
// places, three rounds a tick.
TEST(ObjectBehaviours, SameBitsOnOneAndTwoThreads) {
  const auto dir = testing::fresh_test_dir("objects");
  std::ofstream(dir / "item.lua") << R"(
local wait = 0
function step()
  if object.size > 0 and #object.robots_within(object.size) > 0 then
    object.size, object.tag, wait = 0, "found", 5
  elseif object.size == 0 then
    wait = wait - 1
    if wait <= 0 then
      object.x = object.random.uniform(-2, 2)
      object.y = object.random.uniform(-2, 2)
      object.size, object.tag = 0.4, "item"
    end
  end
end
)";
  auto run = [&](int threads) {
    PluginRegistry reg = registry();
    Diagnostics d;
    std::string items;
    for (int i = 0; i < 8; ++i)
      items += "<object id=\"i" + std::to_string(i) + "\" class=\"Item\" position=\"" +
               std::to_string(i % 4 - 1.5) + "," + std::to_string(i / 4 - 0.5) +
               "\" size=\"0.4\" behaviour=\"item\"/>";
    auto ex = parse(reg,
                    R"(<fleetsim>
  <framework ticks_per_second="10" length="20" seed="5" processing_time="2"/>
  <controllers>
    <controller id="w" type="random_walk" speed="0.5" turn_probability="0.1"/>
    <behaviour id="item" type="lua" script="item.lua"/>
  </controllers>
  <arena size="5,5">
    <distribute count="60" controller="w" id_prefix="w"/>)" +
                        items +
                        R"(</arena>
</fleetsim>)",
                    d, (dir / "obj.xml").string(), threads);
    EXPECT_TRUE(ex) << d.str();
    Simulation sim(std::move(*ex), reg);
    sim.start();
    int found = 0;
    while (!sim.done()) {
      sim.step();
      for (double size : sim.state().object_size()) found += size == 0;
    }
    sim.finish();
    EXPECT_GT(found, 0) << "no item was ever found: the test shows nothing";
    return sim.state().hash();
  };
  EXPECT_EQ(run(1), run(2));
}

// Mistakes, each at its line, all reported before the run.
TEST(ObjectBehaviours, MistakesAreReportedAtTheirLines) {
  const auto dir = testing::fresh_test_dir("objects");
  std::ofstream(dir / "bad.lua") << "function step()\n  object.x = \nend\n";
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1" processing_time="-1"/>
  <controllers>
    <behaviour id="m" type="drfit"/>
    <behaviour id="bad" type="lua" script="bad.lua"/>
    <behaviour id="cart_only" type="drift"/>
  </controllers>
  <arena size="10,10">
    <object id="a" class="Cart" position="0,0" behaviour="nobody"/>
    <object id="b" class="Cart" position="1,0" behaviour="bad"/>
    <object id="c" class="Box" position="2,0" behaviour="cart_only"/>
  </arena>
</fleetsim>)",
                  d, (dir / "obj.xml").string());
  EXPECT_FALSE(ex);
  const std::string all = d.str();
  EXPECT_NE(all.find("obj.xml:2: error: attribute 'processing_time'"), std::string::npos) << all;
  EXPECT_NE(all.find("obj.xml:4: error: unknown object behaviour type 'drfit'"), std::string::npos)
      << all;
  EXPECT_NE(all.find("did you mean 'drift'"), std::string::npos) << all;
  EXPECT_NE(all.find("obj.xml:9: error: unknown behaviour 'nobody'"), std::string::npos) << all;
  EXPECT_NE(all.find("bad.lua:3: error:"), std::string::npos) << all;
  EXPECT_NE(all.find("obj.xml:11: error: behaviour 'cart_only': drift drives carts only"),
            std::string::npos)
      << all;
}

// A behaviour's error during the run names the tick, the object and the script's line.
TEST(ObjectBehaviours, AnErrorDuringTheRunNamesTheObjectAndTheLine) {
  const auto dir = testing::fresh_test_dir("objects");
  std::ofstream(dir / "late.lua") << "function step()\n  if object.tick == 2 then\n"
                                     "    error('boom')\n  end\nend\n";
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <controllers><behaviour id="late" type="lua" script="late.lua"/></controllers>
  <arena size="10,10"><object id="o" position="0,0" behaviour="late"/></arena>
</fleetsim>)",
                  d, (dir / "obj.xml").string());
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  try {
    while (!sim.done()) sim.step();
    FAIL() << "the run went on";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tick 2, object 'o'"), std::string::npos) << what;
    EXPECT_NE(what.find("late.lua:3: boom"), std::string::npos) << what;
  }
  sim.finish();
}

}  // namespace
}  // namespace fleetsim
