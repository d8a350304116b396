// Loop functions as a user writes them: they add, move and remove entities, set the status and
// end the run, and the run still repeats bit for bit across thread counts.
#include <gtest/gtest.h>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

/// Every 5 ticks adds a robot at a free spot on a ring, removes the oldest robot every 7
/// ticks, moves the first object to follow robot 0, and ends the run at tick 60.
class Churn : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess& w) override {
    calls.push_back("init");
    end_at_ = p.integer("end_at", 60);
  }
  void pre_step(WorldAccess& w) override {
    if (w.tick() % 5 == 0) {
      double a = 0.3 * static_cast<double>(w.tick());
      w.add_robot("epuck", "walk", {1.5 * std::cos(a), 1.5 * std::sin(a)}, a, "new");
    }
  }
  void post_step(WorldAccess& w) override {
    auto ids = w.robots();
    if (w.tick() % 7 == 0 && ids.size() > 3) w.remove_robot(ids.front());
    ids = w.robots();
    auto objects = w.objects();
    if (!objects.empty()) w.set_object(objects[0], w.robot_position(ids[0]), 0.2, "follow");
    w.set_status("robots=" + std::to_string(ids.size()));
  }
  bool is_finished(const WorldAccess& w) const override { return w.tick() >= end_at_; }
  void destroy(WorldAccess&) override { calls.push_back("destroy"); }
  static inline std::vector<std::string> calls;

 private:
  std::int64_t end_at_ = 60;
};

const char* kXml = R"(<fleetsim>
  <framework ticks_per_second="10" length="100" seed="4"/>
  <controllers><controller id="walk" type="random_walk"/></controllers>
  <arena size="5,5">
    <distribute count="40" controller="walk"/>
    <object id="o" class="marker" position="0,0"/>
  </arena>
  <loop_functions type="churn" end_at="60"/>
</fleetsim>)";

struct Outcome {
  Tick ticks;
  std::uint64_t hash;
  std::size_t robots;
  std::string status;
};

Outcome run(int threads) {
  PluginRegistry reg;
  register_builtins(reg);
  reg.add_loop_functions({PluginKind::kLoopFunctions, "churn", "test", {{"end_at", "integer", "60", "tick"}}},
                         [] { return std::make_unique<Churn>(); });
  Diagnostics d;
  ExperimentOverrides ov;
  ov.threads = threads;
  auto ex = parse_experiment(kXml, "churn.xml", reg, ov, d);
  EXPECT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  return {sim.state().tick, sim.state().hash(), sim.state().robot_count(), sim.state().status};
}

TEST(LoopFunctions, AddMoveRemoveStatusAndEndSignal) {
  Churn::calls.clear();
  Outcome o = run(1);
  EXPECT_EQ(o.ticks, 60);  // ended by is_finished, before length (100 ticks)
  // 40 + 12 added (ticks 0, 5, ..., 55) - 8 removed (ticks 7, 14, ..., 56).
  EXPECT_EQ(o.robots, 40u + 12u - 8u);
  EXPECT_EQ(o.status, "robots=44");
  EXPECT_EQ(Churn::calls, (std::vector<std::string>{"init", "destroy"}));
}

TEST(LoopFunctions, ChurnRepeatsAcrossThreadCounts) {
  Outcome a = run(1), b = run(2), c = run(3);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.hash, c.hash);
}

TEST(Simulation, PhasesRunInOrderAndHooksSeeThem) {
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = parse_experiment(R"(<fleetsim><framework length="0.2"/>
    <controllers><controller id="c" type="diffusion"/></controllers>
    <arena size="2,2"><robot id="a" controller="c" position="0,0"/></arena></fleetsim>)",
                             "p.xml", reg, {}, d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  std::vector<Phase> seen;
  sim.on_phase = [&](Phase p, const WorldState&) { seen.push_back(p); };
  sim.start();
  sim.step();
  EXPECT_EQ(seen, (std::vector<Phase>{Phase::kPreStep, Phase::kSenseControl, Phase::kAct,
                                      Phase::kPhysics, Phase::kPostStep, Phase::kLog}));
  sim.step();
  EXPECT_TRUE(sim.done());
}

}  // namespace
}  // namespace fleetsim
