// The swarm on several processes gives the bits of one process (docs/distributed.md, issue 9
// section 5): random experiments whose robots cross region borders often, whose loop functions
// add, move and remove robots near the borders and set tags, with per-robot controllers that
// carry state (C++ and Lua), run on one process and on 2, 3 and 4 in-process processes, in
// DSAAM and lockstep mode, with message jitter: the same final state hash and the same frame
// log, byte for byte. (tests/integration/engine covers the command line over ipc and tcp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "distributed/swarm_run.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

using fleetsim::testing::slurp;

namespace fs = std::filesystem;
using distributed::LoadedExperiment;
using distributed::SyncMode;

/// Loop functions that stir the world near region borders: every few ticks they move a robot
/// across a border, add one beside a border, remove one, and tag robots; they end the run
/// early when asked. Deterministic (counter-based draws), as loop functions must be.
class BorderChurn final : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess& w) override {
    end_at_ = p.integer("end_at", -1);
    border_x_ = p.real("border_x", 0.0);
  }
  void pre_step(WorldAccess& w) override {
    CounterRng rng(w.seed(), 1, w.tick(), RandomStream::kLoopFunctions);
    auto ids = w.robots();
    if (ids.empty() || w.tick() % 3 != 0) return;
    // Hop a robot to the other side of the border, just across it.
    const EntityId id = ids[rng.below(static_cast<std::uint32_t>(ids.size()))];
    const Vec2 p = w.robot_position(id);
    const double side = p.x < border_x_ ? 1 : -1;
    w.move_robot(id, {border_x_ + side * (0.05 + 0.3 * rng.uniform()), p.y}, rng.uniform() * 6);
  }
  void post_step(WorldAccess& w) override {
    CounterRng rng(w.seed(), 2, w.tick(), RandomStream::kLoopFunctions);
    auto ids = w.robots();
    if (w.tick() % 5 == 0 && ids.size() > 20)
      w.remove_robot(ids[rng.below(static_cast<std::uint32_t>(ids.size()))]);
    if (w.tick() % 4 == 0) {
      const Vec2 at{border_x_ + (rng.uniform() - 0.5) * 0.6, (rng.uniform() - 0.5) * 3.0};
      w.add_robot("epuck", rng.uniform() < 0.5 ? "walk" : "script", at, rng.uniform() * 6, "added");
    }
    if (!ids.empty() && w.tick() % 7 == 0)
      w.set_robot_tag(ids[rng.below(static_cast<std::uint32_t>(ids.size()))],
                      "t" + std::to_string(w.tick()));
    w.set_status("robots " + std::to_string(w.robots().size()));
  }
  bool is_finished(const WorldAccess& w) const override {
    return end_at_ >= 0 && w.tick() >= end_at_;
  }

 private:
  std::int64_t end_at_ = -1;
  double border_x_ = 0;
};

/// A Lua controller whose motion depends on state kept in globals, a table and a local: a
/// robot that lost any of it on its way to another process would drive differently.
const char* kScript = R"(
local turns = 0
memory = { last = 0, seen = {} }
function init() robot.leds.set_all_colors("blue") end
function step()
  count = (count or 0) + 1
  local p = robot.proximity
  local near = 0
  for i = 1, #p do near = near + p[i].value end
  memory.seen[#memory.seen % 5 + 1] = near
  if near > 0.2 or count % 17 == 0 then turns = turns + 1 end
  local k = (turns % 3) - 1
  robot.wheels.set_velocity(5 + 2 * k + memory.last, 5 - 2 * k)
  memory.last = (memory.last + 1) % 3
  if turns % 2 == 0 then robot.leds.set_all_colors("green") else robot.leds.set_all_colors("red") end
end
)";

struct Scenario {
  std::string xml;
  int regions = 0;
};

/// A random experiment: an arena split into 2 to 4 regions (vertical strips, or a 2x2 grid),
/// robots crowded around the borders, three controllers.
Scenario random_scenario(std::uint64_t seed, const std::string& script, const std::string& log) {
  CounterRng rng(seed, 0, 0, RandomStream::kPlacement);
  // Sizes in whole decimetres (written exactly in the XML).
  const double w = 6 + static_cast<double>(rng.below(40)) / 10;
  const double h = 4 + static_cast<double>(rng.below(20)) / 10;
  const int layout = static_cast<int>(rng.below(3));  // 0: 2 strips, 1: 3 strips, 2: 2x2
  std::ostringstream physics;
  int regions = 0;
  auto box = [&](double x0, double y0, double x1, double y1) {
    physics << "    <kinematics2d id=\"r" << regions++ << "\" region=\"" << x0 << "," << y0 << ","
            << x1 << "," << y1 << "\"/>\n";
  };
  const double hw = w / 2, hh = h / 2;
  if (layout == 0) {
    box(-hw, -hh, 0, hh);
    box(0, -hh, hw, hh);
  } else if (layout == 1) {
    box(-hw, -hh, -hw / 3, hh);
    box(-hw / 3, -hh, 0, hh);
    box(0, -hh, hw, hh);
  } else {
    box(-hw, -hh, 0, 0);
    box(0, -hh, hw, 0);
    box(-hw, 0, 0, hh);
    box(0, 0, hw, hh);
  }
  const int n = 60 + static_cast<int>(rng.below(60));
  std::ostringstream xml;
  xml << R"(<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="12" seed=")"
      << seed << R"("/>
  <controllers>
    <controller id="diffuse" type="diffusion" speed="0.12"/>
    <controller id="walk" type="random_walk" speed="0.12" turn_probability="0.2"/>
    <controller id="script" type="lua" script=")"
      << script << R"("/>
  </controllers>
  <arena size=")"
      << w << "," << h << R"(">
    <wall from="-1,-1" to="1,1"/>
    <distribute count=")"
      << n / 3 << R"(" kind="epuck" controller="diffuse" id_prefix="d" region="-1.5,)" << -hh
      << ",1.5," << hh << R"("/>
    <distribute count=")"
      << n / 3 << R"(" kind="epuck" controller="walk" id_prefix="w" region="-1.5,)" << -hh
      << ",1.5," << hh << R"("/>
    <distribute count=")"
      << n / 3 << R"(" kind="epuck" controller="script" id_prefix="s"/>
  </arena>
  <physics>
)" << physics.str()
      << R"(  </physics>
  <loop_functions type="border_churn" end_at=")"
      << 90 + rng.below(30) << R"("/>
  <log path=")"
      << log << R"("/>
</fleetsim>
)";
  return {xml.str(), regions};
}

std::unique_ptr<PluginRegistry> test_registry() {
  auto reg = std::make_unique<PluginRegistry>();
  register_builtins(*reg);
  reg->add_loop_functions(
      {PluginKind::kLoopFunctions,
       "border_churn",
       "test",
       {{"end_at", "integer", "-1", "tick"}, {"border_x", "real", "0", "metres"}}},
      [] { return std::make_unique<BorderChurn>(); });
  return reg;
}

class Swarm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir();
    script_ = path("stateful.lua");
    std::ofstream(script_) << kScript;
  }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }

  distributed::Loader loader(const std::string& xml, const std::string& log) {
    return [xml, log]() -> std::optional<LoadedExperiment> {
      auto reg = test_registry();
      Diagnostics d;
      ExperimentOverrides ov;
      ov.log_path = log;
      auto ex = parse_experiment(xml, "swarm.xml", *reg, ov, d);
      if (!ex) {
        ADD_FAILURE() << d.str();
        return std::nullopt;
      }
      return LoadedExperiment{std::move(*ex), std::move(reg)};
    };
  }

  /// One process, the same regions: the reference.
  std::uint64_t single(const std::string& xml, const std::string& log) {
    auto loaded = loader(xml, log)();
    EXPECT_TRUE(loaded);
    if (!loaded) return 0;
    Simulation sim(std::move(loaded->experiment), *loaded->registry);
    sim.start();
    while (!sim.done()) sim.step();
    sim.finish();
    return sim.state().hash();
  }

  std::vector<distributed::ProcessReport> many(const std::string& xml, const std::string& log,
                                               int n, SyncMode sync, std::uint32_t jitter,
                                               std::size_t part_bytes = std::size_t{32} << 20) {
    distributed::SwarmRunOptions o;
    o.part_bytes = part_bytes;
    o.processes = n;
    o.transport = distributed::TransportKind::kInproc;
    o.sync = sync;
    o.jitter_us = jitter;
    return distributed::run_swarm(loader(xml, log), o);
  }

  fs::path dir_;
  std::string script_;
};

TEST_F(Swarm, RandomExperimentsGiveOneProcessesBitsOnTwoThreeAndFour) {
  int migrated = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto s = random_scenario(seed, script_, "unused.flog");
    const std::string ref_log = path("one-" + std::to_string(seed) + ".flog");
    const std::uint64_t ref = single(s.xml, ref_log);
    const std::string ref_bytes = slurp(ref_log);
    ASSERT_GT(ref_bytes.size(), 1000u);
    struct Case {
      int n;
      SyncMode sync;
      std::uint32_t jitter;
      std::size_t part_bytes = std::size_t{32} << 20;
    };
    // Small parts: every round in several messages, as a large world's would be.
    std::vector<Case> cases = {{2, SyncMode::kDsaam, 300}, {2, SyncMode::kLockstep, 0, 700}};
    if (s.regions >= 3) cases.push_back({3, SyncMode::kDsaam, 200, 500});
    if (s.regions >= 4) cases.push_back({4, SyncMode::kLockstep, 200});
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(c.n) + " processes, " +
                   (c.sync == SyncMode::kDsaam ? "dsaam" : "lockstep") + ", jitter " +
                   std::to_string(c.jitter));
      const std::string log = path("many-" + std::to_string(seed) + "-" + std::to_string(c.n) +
                                   (c.sync == SyncMode::kDsaam ? "d" : "l") + ".flog");
      auto reports = many(s.xml, log, c.n, c.sync, c.jitter, c.part_bytes);
      ASSERT_EQ(reports.size(), static_cast<std::size_t>(c.n));
      for (const auto& r : reports) {
        ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
        EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
        migrated += static_cast<int>(r.exchange.migrations_in);
      }
      EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
    }
  }
  // The scenarios do what they are for: robots change process, many times.
  EXPECT_GT(migrated, 100);
}

TEST_F(Swarm, FewerRegionsThanProcessesIsRefusedBeforeAnythingStarts) {
  const auto s = random_scenario(1, script_, path("x.flog"));
  ASSERT_EQ(s.regions, 2) << "seed 1 gives two strips";
  try {
    many(s.xml, path("x.flog"), 3, SyncMode::kDsaam, 0);
    FAIL() << "3 processes for 2 regions ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 processes but only 2 physics engine regions"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Swarm, ADistributionElementPinsRegionsAndIsChecked) {
  auto s = random_scenario(1, script_, path("p.flog"));
  const std::string one = s.xml;
  // r0 on process 1, r1 on process 0: the reverse of the automatic choice, same bits.
  s.xml.replace(s.xml.find("  <loop_functions"), 0,
                "  <distribution>\n    <process regions=\"r1\"/>\n    <process regions=\"r0\"/>\n"
                "  </distribution>\n");
  const std::uint64_t ref = single(one, path("ref.flog"));
  auto reports = many(s.xml, path("p.flog"), 2, SyncMode::kDsaam, 100);
  ASSERT_TRUE(reports[0].ok) << reports[0].error;
  EXPECT_EQ(reports[0].regions, std::vector<std::string>{"r1"});
  EXPECT_EQ(reports[1].regions, std::vector<std::string>{"r0"});
  EXPECT_EQ(reports[0].state_hash, ref);
  EXPECT_TRUE(slurp(path("p.flog")) == slurp(path("ref.flog")));
  // Every problem at once, at its line.
  std::string bad = one;
  bad.replace(bad.find("  <loop_functions"), 0,
              "  <distribution>\n    <process regions=\"r0 nowhere\"/>\n"
              "    <process regions=\"r0\"/>\n  </distribution>\n");
  auto reg = test_registry();
  Diagnostics d;
  EXPECT_FALSE(parse_experiment(bad, "bad.xml", *reg, {}, d));
  const std::string text = d.str();
  EXPECT_NE(text.find("unknown region 'nowhere'"), std::string::npos) << text;
  EXPECT_NE(text.find("region 'r0' is already given to process 0"), std::string::npos) << text;
  EXPECT_NE(text.find("region 'r1' is in no <process>"), std::string::npos) << text;
}

TEST_F(Swarm, AControllerThatCannotSaveIsRefusedAtTheStartNamingIt) {
  class Forgetful final : public Controller {
   public:
    void init(const Params&, const ControllerSetup& s) override {
      wheels_ = s.actuator("differential_drive");
    }
    void step(RobotIO& io) override {
      io.actuator(wheels_).values[0] = 0.1;
      io.actuator(wheels_).values[1] = 0.1;
    }
    std::size_t wheels_ = 0;
  };
  const std::string xml = R"(<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="20" seed="1"/>
  <controllers><controller id="f" type="forgetful"/></controllers>
  <arena size="4,2"><robot id="crosser" kind="epuck" controller="f" position="-0.3,0"/></arena>
  <physics>
    <kinematics2d id="west" region="-2,-1,0,1"/>
    <kinematics2d id="east" region="0,-1,2,1"/>
  </physics>
</fleetsim>)";
  distributed::SwarmRunOptions o;
  o.processes = 2;
  o.transport = distributed::TransportKind::kInproc;
  auto reports = distributed::run_swarm(
      [&]() -> std::optional<LoadedExperiment> {
        auto reg = test_registry();
        reg->add_controller({PluginKind::kController, "forgetful", "test", {}},
                            [] { return std::make_unique<Forgetful>(); });
        Diagnostics d;
        auto ex = parse_experiment(xml, "f.xml", *reg, {}, d);
        if (!ex) return std::nullopt;
        return LoadedExperiment{std::move(*ex), std::move(reg)};
      },
      o);
  // Refused at the start, by the process holding the robot, before any tick.
  ASSERT_FALSE(reports[0].ok);
  EXPECT_NE(reports[0].error.find("controller 'f' (type 'forgetful') cannot run on several "
                                  "processes"),
            std::string::npos)
      << reports[0].error;
  EXPECT_FALSE(reports[1].ok) << "the other process stops too";
  EXPECT_TRUE(reports[1].stopped_by_peer) << reports[1].error;
}

}  // namespace
}  // namespace fleetsim
