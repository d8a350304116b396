// Components' knowledge and ensembles in whole runs (experiment file -> Simulation): the
// documented order of the calls, worked out by hand on a line of robots; selectors; a spatial
// ensemble pairs exactly the robots a global one finds within the distance; C++ and Lua
// controllers read and write knowledge; the example spreads its news; the same bits on 1 and
// 2 threads; and every mistake in the file is reported at its line before the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

/// (tick, coordinator id, member id) of every exchange `recorder` made, in call order.
std::vector<std::tuple<Tick, EntityId, EntityId>> g_calls;
/// Pairs `within_check` found, per tick: (coordinator, member), in call order.
std::vector<std::tuple<Tick, EntityId, EntityId>> g_pairs;

/// `recorder`: member.v = coordinator.v + 1, recording the calls; members must have v >= 0
/// (is_member, a predicate over knowledge).
class Recorder final : public Ensemble {
 public:
  void init(const Params&, const EnsembleSetup& setup) override { v_ = setup.knowledge("v"); }
  bool is_member(EnsembleWorld& w, const Component& m) override {
    return w.knowledge(m, v_)[0] >= 0;
  }
  void exchange(EnsembleWorld& w, const Component& c, const Component& m) override {
    g_calls.emplace_back(w.tick(), c.id, m.id);
    w.knowledge(m, v_)[0] = w.knowledge(c, v_)[0] + 1;
    w.set_status("exchanged " + std::to_string(g_calls.size()));
  }

 private:
  std::size_t v_ = 0;
};

/// `within_check`: records the pairs whose centres are within `d` (a global ensemble filtering
/// by distance, to compare with a spatial one).
class WithinCheck final : public Ensemble {
 public:
  void init(const Params& p, const EnsembleSetup&) override { d_ = p.real("d", 0); }
  bool membership(EnsembleWorld& w, const Component& c, const Component& m) override {
    const Vec2 a = w.position(c), b = w.position(m);
    const double dx = a.x - b.x, dy = a.y - b.y;
    return dx * dx + dy * dy <= d_ * d_;
  }
  void exchange(EnsembleWorld& w, const Component& c, const Component& m) override {
    g_pairs.emplace_back(w.tick(), c.id, m.id);
  }

 private:
  double d_ = 0;
};

/// `stamp`: a C++ controller that writes its id into knowledge `v` at the first tick, and reads
/// it back afterwards (it must not change: nothing else writes it in this run).
class Stamp final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override { v_ = setup.knowledge("v"); }
  void step(RobotIO& io) override {
    std::span<double> v = io.knowledge(v_);
    if (io.tick == 0) v[0] = static_cast<double>(io.id);
    if (v[0] != static_cast<double>(io.id)) throw std::runtime_error("knowledge changed");
  }

 private:
  std::size_t v_ = 0;
};

PluginRegistry registry() {
  PluginRegistry r;
  register_builtins(r);
  r.add_ensemble({PluginKind::kEnsemble, "recorder", "test", {}},
                 [] { return std::make_unique<Recorder>(); });
  r.add_ensemble({PluginKind::kEnsemble, "within_check", "test", {{"d", "real", "1", "metres"}}},
                 [] { return std::make_unique<WithinCheck>(); });
  r.add_controller({PluginKind::kController, "stamp", "test", {}},
                   [] { return std::make_unique<Stamp>(); });
  return r;
}

std::optional<Experiment> parse(PluginRegistry& reg, const std::string& xml, Diagnostics& d,
                                int threads = 1) {
  ExperimentOverrides o;
  o.threads = threads;
  return parse_experiment(xml, "ens.xml", reg, o, d);
}

double knowledge(const WorldState& s, const std::string& field, std::size_t row,
                 std::size_t k = 0) {
  const ColumnHandle h = s.robots.find("knowledge." + field);
  return s.robots.span<double>(h)[row * s.robots.desc(h).width + k];
}

// Four idle robots in a line, 1 m apart (ids 0 to 3); robot 3 has v = -1 at first, so it is no
// member until someone writes it. By hand, with within = 1.5 (each robot's neighbours are the
// next ones on the line) and the documented order (coordinators by id, their members by id):
//   c0: m1 (v1 = v0 + 1 = 1)
//   c1: m0 (v0 = 2), m2 (v2 = 2)
//   c2: m1 (v1 = 3)                      -- m3 is not a member: v3 = -1 < 0
//   c3: m2 (v2 = 0)                      -- c3 is a coordinator (any robot is)
// Period 2: ticks 0, 2, 4 of 5.
TEST(Ensembles, CallsFollowTheDocumentedOrder) {
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="0.5"/>
  <knowledge><field name="v"/></knowledge>
  <controllers><controller id="i" type="idle"/></controllers>
  <arena size="10,10">
    <robot id="a" controller="i" position="0,0"/>
    <robot id="b" controller="i" position="1,0"/>
    <robot id="c" controller="i" position="2,0"/>
    <robot id="d" controller="i" position="3,0"/>
  </arena>
  <ensembles><ensemble type="recorder" within="1.5" period="2"/></ensembles>
</fleetsim>)",
                  d);
  ASSERT_TRUE(ex) << d.str();
  const ColumnHandle v = ex->state.robots.find("knowledge.v");
  ASSERT_NE(v, kNoColumn);
  ex->state.robots.span<double>(v)[3] = -1;
  Simulation sim(std::move(*ex), reg);
  g_calls.clear();
  std::vector<Phase> phases;
  sim.on_phase = [&](Phase p, const WorldState&) { phases.push_back(p); };
  sim.start();
  sim.step();  // tick 0
  // The ensembles run after pre_step, before the robots sense (on the ticks they are due).
  EXPECT_EQ(phases,
            (std::vector<Phase>{Phase::kPreStep, Phase::kEnsembles, Phase::kSenseControl,
                                Phase::kAct, Phase::kPhysics, Phase::kPostStep, Phase::kLog}));
  std::vector<std::tuple<Tick, EntityId, EntityId>> tick0 = {
      {0, 0, 1}, {0, 1, 0}, {0, 1, 2}, {0, 2, 1}, {0, 3, 2}};
  EXPECT_EQ(g_calls, tick0);
  const WorldState& s = sim.state();
  EXPECT_EQ(knowledge(s, "v", 0), 2);
  EXPECT_EQ(knowledge(s, "v", 1), 3);
  EXPECT_EQ(knowledge(s, "v", 2), 0);
  EXPECT_EQ(knowledge(s, "v", 3), -1);
  EXPECT_EQ(s.status, "exchanged 5");
  sim.step();  // tick 1: not due
  EXPECT_EQ(g_calls.size(), 5u);
  while (!sim.done()) sim.step();
  sim.finish();
  // Ticks 2 and 4 ran too; robot 3 is still no member (nobody wrote it: members do not write).
  ASSERT_EQ(g_calls.size(), 15u);
  EXPECT_EQ(std::get<0>(g_calls[5]), 2);
  EXPECT_EQ(std::get<0>(g_calls[10]), 4);
}

// Selectors: tag leaders coordinate, members are e-pucks (not the foot-bot), global (no
// within): every leader pairs with every e-puck but itself, in id order.
TEST(Ensembles, SelectorsByTagAndKind) {
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="0.1"/>
  <knowledge><field name="v"/></knowledge>
  <controllers><controller id="i" type="idle"/></controllers>
  <arena size="10,10">
    <robot id="a" controller="i" position="0,0" tag="leader"/>
    <robot id="b" controller="i" position="4,0"/>
    <robot id="f" kind="footbot" controller="i" position="-4,0" tag="leader"/>
    <robot id="c" controller="i" position="0,4" tag="leader"/>
  </arena>
  <ensembles>
    <ensemble type="recorder" coordinators="tag:leader" members="kind:epuck"/>
  </ensembles>
</fleetsim>)",
                  d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  g_calls.clear();
  sim.start();
  sim.step();
  sim.finish();
  std::vector<std::tuple<Tick, EntityId, EntityId>> expected = {
      {0, 0, 1}, {0, 0, 3}, {0, 2, 0}, {0, 2, 1}, {0, 2, 3}, {0, 3, 0}, {0, 3, 1}};
  EXPECT_EQ(g_calls, expected);
}

std::string crowd(int threads, const std::string& ensembles, int robots = 600) {
  return R"(<fleetsim>
  <framework ticks_per_second="10" length="3" seed="3" threads=")" +
         std::to_string(threads) + R"("/>
  <knowledge><field name="v"/><field name="news" size="3"/><field name="neighbours"/></knowledge>
  <controllers><controller id="w" type="random_walk" speed="0.13"/></controllers>
  <arena size="8,8">
    <box center="0,0" size="0.5,0.5"/>
    <distribute count=")" +
         std::to_string(robots) + R"(" controller="w" id_prefix="w"/>
  </arena>
  <ensembles>)" +
         ensembles + R"(</ensembles>
</fleetsim>)";
}

// A spatial ensemble (within, through the grid, with robots moving) finds exactly the pairs a
// global one finds by testing every distance, in the same order.
TEST(Ensembles, SpatialMembershipFindsThePairsAGlobalOneFinds) {
  std::vector<std::vector<std::tuple<Tick, EntityId, EntityId>>> runs;
  for (const char* e : {R"(<ensemble type="within_check" within="0.4" d="1e9"/>)",
                        R"(<ensemble type="within_check" d="0.4"/>)"}) {
    PluginRegistry reg = registry();
    Diagnostics d;
    auto ex = parse(reg, crowd(1, e, 300), d);
    ASSERT_TRUE(ex) << d.str();
    Simulation sim(std::move(*ex), reg);
    g_pairs.clear();
    sim.start();
    while (!sim.done()) sim.step();
    sim.finish();
    runs.push_back(g_pairs);
  }
  EXPECT_GT(runs[0].size(), 3000u);  // (about 10 a robot a tick... of 300 robots, 30 ticks)
  EXPECT_TRUE(runs[0] == runs[1]) << runs[0].size() << " pairs against " << runs[1].size();
}

// The built-in knowledge_max and a Lua ensemble on a walking crowd: the same bits on 1 and 2
// threads; the news spreads from the robot that has it, and the Lua ensemble's counts are
// the robots' neighbours.
TEST(Ensembles, SameBitsOnOneAndTwoThreadsAndTheNewsSpreads) {
  const auto dir = fleetsim::testing::fresh_test_dir("ensembles");
  std::ofstream(dir / "count.lua") << R"(
function is_coordinator(r) r.knowledge.neighbours = 0 return true end
function membership(c, m) return m.kind == "epuck" end
function exchange(c, m) c.knowledge.neighbours = c.knowledge.neighbours + 1 end
)";
  // knowledge_max pushing into members (one thread, in order), and pulling into coordinators
  // (concurrent: on every worker, members read from a snapshot).
  for (const std::string into : {"member", "coordinator"}) {
    SCOPED_TRACE("into=" + into);
    const std::string ensembles =
        R"(<ensemble type="knowledge_max" field="news" within="0.5" into=")" + into + R"("/>
         <ensemble type="lua" script=")" +
        (dir / "count.lua").string() + R"(" within="0.25" period="1"/>)";
    std::vector<std::uint64_t> hashes;
    for (int threads : {1, 2}) {
      PluginRegistry reg = registry();
      Diagnostics d;
      auto ex = parse(reg, crowd(threads, ensembles), d, threads);
      ASSERT_TRUE(ex) << d.str();
      const ColumnHandle news = ex->state.robots.find("knowledge.news");
      ex->state.robots.span<double>(news)[0] = 1;  // robot 0 has news at first: (1, 0, 0)
      Simulation sim(std::move(*ex), reg);
      std::vector<Vec2> at;  // the positions of the last evaluation
      sim.on_phase = [&](Phase p, const WorldState& w) {
        if (p != Phase::kEnsembles) return;
        at.clear();
        for (std::size_t i = 0; i < w.robot_count(); ++i) at.push_back({w.x()[i], w.y()[i]});
      };
      sim.start();
      while (!sim.done()) sim.step();
      sim.finish();
      const WorldState& s = sim.state();
      ASSERT_EQ(at.size(), s.robot_count());
      int heard = 0;
      for (std::size_t i = 0; i < s.robot_count(); ++i) heard += knowledge(s, "news", i) == 1;
      EXPECT_GT(heard, 100) << "the news spread";
      // Each robot's count is the number of robots within 0.25 m of it where they were at the
      // last evaluation (the start of the last tick), counted here over every pair.
      int counted = 0;
      for (std::size_t i = 0; i < s.robot_count(); ++i) {
        int near = 0;
        for (std::size_t j = 0; j < s.robot_count(); ++j) {
          const double dx = at[i].x - at[j].x, dy = at[i].y - at[j].y;
          near += j != i && dx * dx + dy * dy <= 0.25 * 0.25;
        }
        EXPECT_EQ(knowledge(s, "neighbours", i), near) << "robot " << i;
        counted += near;
      }
      EXPECT_GT(counted, 300);
      hashes.push_back(s.hash());
    }
    EXPECT_EQ(hashes[0], hashes[1]);
  }
}

// A C++ controller reads and writes its knowledge (and a field it does not know is refused).
TEST(Ensembles, CppControllersReadAndWriteKnowledge) {
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <knowledge><field name="v"/></knowledge>
  <controllers><controller id="s" type="stamp"/></controllers>
  <arena size="10,10">
    <robot id="a" controller="s" position="0,0"/>
    <robot id="b" controller="s" position="1,0"/>
  </arena>
</fleetsim>)",
                  d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  EXPECT_EQ(knowledge(sim.state(), "v", 0), 0);
  EXPECT_EQ(knowledge(sim.state(), "v", 1), 1);
}

TEST(Ensembles, EveryMistakeIsReportedAtItsLine) {
  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <knowledge>
    <field name="v"/>
    <field name="v"/>
    <field name="2x" size="2"/>
    <field name="big" size="65"/>
  </knowledge>
  <controllers><controller id="s" type="stamp"/></controllers>
  <arena size="10,10"><robot id="a" controller="s" position="0,0"/></arena>
  <ensembles>
    <ensemble type="knowledge_max" field="w"/>
    <ensemble type="recorder" coordinators="kind:tank" members="colour:red"/>
    <ensemble type="recorde"/>
    <ensemble type="recorder" period="0" radius="2"/>
  </ensembles>
</fleetsim>)",
                  d);
  EXPECT_FALSE(ex);
  const std::string e = d.str();
  for (const char* m :
       {"ens.xml:5: error: knowledge field 'v' is declared twice",
        "ens.xml:6: error: knowledge field name '2x' is not a word",
        "ens.xml:7: error:", "ens.xml:13: error: coordinators=\"kind:tank\": no robot kind 'tank'",
        "ens.xml:13: error: members=\"colour:red\" is not a selector (expected all, kind:NAME, "
        "tag:TAG, objects or class:NAME)",
        "ens.xml:14: error: unknown ensemble type 'recorde'", "did you mean 'recorder'",
        "ens.xml:15: error:"})
    EXPECT_NE(e.find(m), std::string::npos) << m << "\n" << e;
  // The field knowledge_max names is checked by its init, which runs once the rest is right.
  Diagnostics d2;
  auto ex2 = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <knowledge><field name="v"/></knowledge>
  <controllers><controller id="i" type="idle"/></controllers>
  <arena size="10,10"><robot id="a" controller="i" position="0,0"/></arena>
  <ensembles>
    <ensemble type="knowledge_max" field="w"/>
  </ensembles>
</fleetsim>)",
                   d2);
  EXPECT_FALSE(ex2);
  EXPECT_NE(d2.str().find("ens.xml:7: error: ensemble 'knowledge_max': no knowledge field 'w' "
                          "(the experiment's <knowledge> declares: v)"),
            std::string::npos)
      << d2.str();
}

// A Lua ensemble's mistakes: a syntax error and a missing exchange at load (file:line, before
// the run); an error in exchange stops the run with the tick, the ensemble and the line.
TEST(Ensembles, LuaEnsembleErrorsNameTheScriptsLine) {
  const auto dir = fleetsim::testing::fresh_test_dir("ensembles-lua");
  std::ofstream(dir / "syntax.lua") << "function exchange(c, m)\n  c.knowledge.v = = 1\nend\n";
  std::ofstream(dir / "none.lua") << "function membership(c, m) return true end\n";
  std::ofstream(dir / "fails.lua")
      << "function exchange(c, m)\n  if m.id == 2 then c.knowledge.w = 1 end\nend\n";
  auto xml = [&](const std::string& script) {
    return R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <knowledge><field name="v"/></knowledge>
  <controllers><controller id="i" type="idle"/></controllers>
  <arena size="10,10">
    <robot id="a" controller="i" position="0,0"/>
    <robot id="b" controller="i" position="1,0"/>
    <robot id="c" controller="i" position="2,0"/>
  </arena>
  <ensembles><ensemble type="lua" script=")" +
           (dir / script).string() + R"("/></ensembles>
</fleetsim>)";
  };
  PluginRegistry reg = registry();
  {
    Diagnostics d;
    EXPECT_FALSE(parse(reg, xml("syntax.lua"), d));
    EXPECT_NE(d.str().find((dir / "syntax.lua").string() + ":2: error:"), std::string::npos)
        << d.str();
  }
  {
    Diagnostics d;
    EXPECT_FALSE(parse(reg, xml("none.lua"), d));
    EXPECT_NE(d.str().find("ens.xml:10: error: ensemble 'lua': the ensemble script"),
              std::string::npos)
        << d.str();
    EXPECT_NE(d.str().find("defines no global function exchange(c, m)"), std::string::npos);
  }
  Diagnostics d;
  auto ex = parse(reg, xml("fails.lua"), d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  try {
    sim.step();
    FAIL() << "the run went on";
  } catch (const RunError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tick 0, ensemble 'lua' (ens.xml:10)"), std::string::npos) << m;
    EXPECT_NE(m.find("fails.lua:2:"), std::string::npos) << m;
    EXPECT_NE(m.find("knowledge.w: no such knowledge field (the experiment declares: v)"),
              std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace fleetsim
