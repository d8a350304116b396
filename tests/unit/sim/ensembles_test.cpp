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

#include "core/cpu_features.hpp"
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

/// `knowledge_max_pairs`: knowledge_max as a type without evaluate (pair by pair, through the
/// default adapter, members by id): the reference the built-in's batched evaluate must match.
class KnowledgeMaxPairs final : public Ensemble {
 public:
  void init(const Params& p, const EnsembleSetup& setup) override {
    field_ = setup.knowledge(p.text("field"));
    into_member_ = p.text("into", "member") == "member";
  }
  void exchange(EnsembleWorld& w, const Component& c, const Component& m) override {
    const std::span<double> from = w.knowledge(into_member_ ? c : m, field_);
    const std::span<double> to = w.knowledge(into_member_ ? m : c, field_);
    if (from[0] > to[0]) std::copy(from.begin(), from.end(), to.begin());
  }
  bool concurrent() const override { return !into_member_; }

 private:
  std::size_t field_ = 0;
  bool into_member_ = true;
};

/// (tick, coordinator, members in the order evaluate got them) of `batch_check`.
std::vector<std::tuple<Tick, EntityId, std::vector<EntityId>>> g_batches;
/// Disagreements between a batch's columns and the world's answers for the same member.
std::vector<std::string> g_batch_mismatches;

/// `batch_check`: a batched type (evaluate over the columns): records its members, checks each
/// one's knowledge and position in the columns against EnsembleWorld's, and writes v =
/// coordinator's v + 1 into the members (or, with `write="1"` on a concurrent one, tries to).
class BatchCheck final : public Ensemble {
 public:
  void init(const Params& p, const EnsembleSetup& setup) override {
    v_ = setup.knowledge("v");
    news_ = setup.knowledge("news");
    concurrent_ = p.integer("concurrent", 0) != 0;
  }
  void exchange(EnsembleWorld&, const Component&, const Component&) override {
    throw std::runtime_error("exchange called: evaluate is this type's");
  }
  std::size_t evaluate(EnsembleWorld& w, const Component& c, const MemberBatch& b) override {
    std::vector<EntityId> ids;
    for (std::size_t i = 0; i < b.size(); ++i) {
      const Component m = b.member(i);
      ids.push_back(m.id);
      const std::span<const double> news = b.read(i, news_);
      const std::span<double> live = w.knowledge(m, news_);
      const Vec2 at = b.position(i), there = w.position(m);
      if (news.size() != 3 || !std::equal(news.begin(), news.end(), live.begin()) ||
          at.x != there.x || at.y != there.y)
        g_batch_mismatches.push_back("robot " + std::to_string(m.id));
      if (!concurrent_) b.write(i, v_)[0] = w.knowledge(c, v_)[0] + 1;
    }
    if (concurrent_ && b.size() > 0) b.write(0, v_)[0] = 1;  // refused: a concurrent type
    g_batches.emplace_back(w.tick(), c.id, ids);
    return b.size();
  }
  bool concurrent() const override { return concurrent_; }

 private:
  std::size_t v_ = 0, news_ = 0;
  bool concurrent_ = false;
};

PluginRegistry registry() {
  PluginRegistry r;
  register_builtins(r);
  r.add_ensemble({PluginKind::kEnsemble, "recorder", "test", {}},
                 [] { return std::make_unique<Recorder>(); });
  r.add_ensemble({PluginKind::kEnsemble, "within_check", "test", {{"d", "real", "1", "metres"}}},
                 [] { return std::make_unique<WithinCheck>(); });
  r.add_ensemble({PluginKind::kEnsemble,
                  "knowledge_max_pairs",
                  "test",
                  {{"field", "string", "", "field"}, {"into", "string", "member", "side"}}},
                 [] { return std::make_unique<KnowledgeMaxPairs>(); });
  r.add_ensemble(
      {PluginKind::kEnsemble, "batch_check", "test", {{"concurrent", "integer", "0", "0 or 1"}}},
      [] { return std::make_unique<BatchCheck>(); });
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

// The built-in knowledge_max evaluates a coordinator's members in one call on the columns,
// unsorted (order_free); the same type written pair by pair, members by id, gives the same
// knowledge on every robot: pushing into members, and pulling into coordinators where many
// members tie on the compared number but differ in the rest (the tie goes to the smallest id,
// as in id order). On 1 and 2 threads, with and without AVX2, spatial and global.
TEST(Ensembles, TheBatchedKnowledgeMaxGivesThePairByPairKnowledge) {
  const SimdPath path = simd_path();
  for (const std::string into : {"member", "coordinator"})
    for (const std::string within : {"0.5", "0"}) {
      SCOPED_TRACE("into=" + into + " within=" + within);
      std::vector<std::vector<double>> results;
      std::vector<std::uint64_t> hashes;
      for (const char* type : {"knowledge_max", "knowledge_max_pairs"})
        for (int threads : {1, 2})
          for (SimdPath simd : {SimdPath::kAvx2, SimdPath::kBaseline}) {
            set_simd_path(simd);
            PluginRegistry reg = registry();
            Diagnostics d;
            const std::string e = std::string(R"(<ensemble type=")") + type +
                                  R"(" field="news" within=")" + within + R"(" into=")" + into +
                                  R"("/>)";
            auto ex = parse(reg, crowd(threads, e, within == "0" ? 150 : 600), d, threads);
            ASSERT_TRUE(ex) << d.str();
            // news = (id % 4, id, -id): a quarter of the robots tie at each first number.
            const ColumnHandle news = ex->state.robots.find("knowledge.news");
            std::span<double> n = ex->state.robots.span<double>(news);
            for (std::size_t r = 0; r < ex->state.robot_count(); ++r) {
              const double id = ex->state.robot_id()[r];
              n[3 * r] = static_cast<double>(ex->state.robot_id()[r] % 4);
              n[3 * r + 1] = id;
              n[3 * r + 2] = -id;
            }
            Simulation sim(std::move(*ex), reg);
            sim.start();
            for (int t = 0; t < 3; ++t) sim.step();
            const WorldState& s = sim.state();
            std::vector<double> all;
            int moved = 0;
            for (std::size_t r = 0; r < s.robot_count(); ++r) {
              for (std::size_t k = 0; k < 3; ++k) all.push_back(knowledge(s, "news", r, k));
              moved += knowledge(s, "news", r, 1) != s.robot_id()[r];
            }
            EXPECT_GT(moved, static_cast<int>(s.robot_count()) / 2) << "the news spread";
            results.push_back(all);
            hashes.push_back(s.hash());
            sim.finish();
          }
      set_simd_path(path);
      for (std::size_t k = 1; k < results.size(); ++k) {
        EXPECT_TRUE(results[k] == results[0]) << "run " << k << " differs from the first";
        EXPECT_EQ(hashes[k], hashes[0]) << "run " << k;
      }
    }
}

// A batched type (its own evaluate) gets each coordinator's members by increasing id, the same
// pairs a pair-by-pair type gets, with their knowledge and positions in the columns; it writes
// members on one thread, and a concurrent one's write to a member stops the run, named.
TEST(Ensembles, ABatchedTypeGetsItsMembersAsColumnsById) {
  std::vector<std::tuple<Tick, EntityId, EntityId>> batched, pairs;
  for (const char* e : {R"(<ensemble type="batch_check" within="0.4"/>)",
                        R"(<ensemble type="within_check" within="0.4" d="1e9"/>)"}) {
    PluginRegistry reg = registry();
    Diagnostics d;
    auto ex = parse(reg, crowd(1, e, 300), d);
    ASSERT_TRUE(ex) << d.str();
    const ColumnHandle news = ex->state.robots.find("knowledge.news");
    std::span<double> n = ex->state.robots.span<double>(news);
    for (std::size_t k = 0; k < n.size(); ++k) n[k] = static_cast<double>(k);
    Simulation sim(std::move(*ex), reg);
    g_pairs.clear();
    g_batches.clear();
    g_batch_mismatches.clear();
    sim.start();
    while (!sim.done()) sim.step();
    sim.finish();
    if (!g_batches.empty()) {
      for (const auto& [t, c, ids] : g_batches) {
        EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end())) << "coordinator " << c;
        for (EntityId m : ids) batched.emplace_back(t, c, m);
      }
      EXPECT_TRUE(g_batch_mismatches.empty()) << g_batch_mismatches.front();
      // The members took their coordinator's v + 1: v is no longer 0 everywhere.
      int written = 0;
      for (std::size_t r = 0; r < sim.state().robot_count(); ++r)
        written += knowledge(sim.state(), "v", r) != 0;
      EXPECT_GT(written, 100);
    } else {
      pairs = g_pairs;
    }
  }
  EXPECT_GT(batched.size(), 3000u);
  EXPECT_TRUE(batched == pairs) << batched.size() << " pairs against " << pairs.size();

  PluginRegistry reg = registry();
  Diagnostics d;
  auto ex =
      parse(reg, crowd(2, R"(<ensemble type="batch_check" concurrent="1" within="0.4"/>)"), d, 2);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  try {
    sim.step();
    FAIL() << "the run went on";
  } catch (const RunError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tick 0, ensemble 'batch_check' (ens.xml:"), std::string::npos) << m;
    EXPECT_NE(m.find("a concurrent ensemble writes only its coordinator's knowledge"),
              std::string::npos)
        << m;
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
