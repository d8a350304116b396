// Interventions (robots moved from the live view, docs/view-format.md "Interventions"): a session
// that moves robots between steps, recorded with format_intervention(), replays from the file
// with the same log bytes and final hash; the file's mistakes are reported file:line; an
// intervention that cannot land says why.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "plugins/builtins.hpp"
#include "sim/interventions.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::fresh_test_dir;
using testing::slurp;

const char* kExperiment = R"(<fleetsim>
  <framework ticks_per_second="10" length="3" seed="11"/>
  <controllers><controller id="c" type="diffusion"/></controllers>
  <arena size="4,4">
    <distribute count="10" kind="epuck" controller="c"/>
  </arena>
  <log path="LOG" format="frames"/>
</fleetsim>
)";

struct Result {
  std::string log;
  std::uint64_t hash = 0;
};

/// Runs the experiment (`xml`, whose LOG is replaced by `log`); before the step from tick T,
/// `before(sim)` may intervene. The run keeps its start for a reset (Simulation::enable_reset).
Result run(const fs::path& log, const std::function<void(Simulation&)>& before,
           std::string xml = kExperiment, const ExperimentOverrides& overrides = {}) {
  PluginRegistry reg;
  register_builtins(reg);
  xml.replace(xml.find("LOG"), 3, log.string());
  Diagnostics diags;
  auto ex = parse_experiment(xml, (log.parent_path() / "exp.xml").string(), reg, overrides, diags);
  EXPECT_TRUE(ex) << diags.str();
  if (!ex) return {};
  Simulation sim(std::move(*ex), reg);
  sim.enable_reset();
  sim.start();
  while (!sim.done()) {
    if (before) before(sim);
    sim.step();
  }
  sim.finish();
  return {slurp(log), sim.state().hash()};
}

/// Runs `xml` landing each of `file`'s interventions at its tick (a reset takes the tick back
/// to 0 and the file goes on from there), as `fleetsim run --interventions` does; `landed`
/// counts them.
Result replay_file(const fs::path& log, const std::vector<Intervention>& file,
                   const std::string& xml, std::size_t& landed) {
  return run(
      log,
      [&](Simulation& sim) {
        for (; landed < file.size() && file[landed].tick <= sim.state().tick; ++landed)
          apply_intervention(sim, file[landed]);
      },
      xml);
}

TEST(Interventions, ARecordedSessionReplaysWithTheSameBytesAndHash) {
  const fs::path dir = fresh_test_dir("interventions");
  const Result plain = run(dir / "plain.flog", {});

  // The "live" session: moves at ticks 3, 3 and 17, with headings that are not round numbers,
  // recorded as the live view records them.
  const fs::path file = dir / "session.interventions";
  {
    std::ofstream out(file);
    out << "# made by the test\n";
    const Result live = run(dir / "live.flog", [&](Simulation& sim) {
      const Tick t = sim.state().tick;
      std::vector<Intervention> now;
      if (t == 3) now = {{t, 2, 1.0 / 3.0, -0.7, 0.1 + 0.2}, {t, 5, -1.25, 1.5, -2.0 / 7.0}};
      if (t == 17) now = {{t, 2, 0.0, 0.0, 1e-17}};
      for (const Intervention& i : now) {
        ASSERT_EQ(intervention_problem(sim, i), "");
        apply_intervention(sim, i);
        out << format_intervention(i) << "\n";
      }
    });
    out.close();
    ASSERT_NE(live.hash, plain.hash) << "the moves changed the run";

    Diagnostics diags;
    auto loaded = load_interventions(file.string(), diags);
    ASSERT_TRUE(loaded) << diags.str();
    ASSERT_EQ(loaded->size(), 3u);
    std::size_t next = 0;
    const Result replay = run(dir / "replay.flog", [&](Simulation& sim) {
      for (; next < loaded->size() && (*loaded)[next].tick == sim.state().tick; ++next)
        apply_intervention(sim, (*loaded)[next]);
    });
    EXPECT_EQ(next, 3u);
    EXPECT_EQ(replay.hash, live.hash);
    EXPECT_TRUE(replay.log == live.log) << "the replay's log bytes differ from the session's";
  }
}

TEST(Interventions, ValuesRoundTripExactly) {
  const fs::path dir = fresh_test_dir("interventions");
  const Intervention i{12, 7, 0.1 + 0.2, -1.0 / 3.0, 3.141592653589793};
  std::ofstream(dir / "one") << format_intervention(i) << "\n";
  Diagnostics diags;
  auto loaded = load_interventions((dir / "one").string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 1u);
  const Intervention& j = loaded->front();
  EXPECT_EQ(j.tick, 12);
  EXPECT_EQ(j.robot, 7u);
  EXPECT_EQ(j.x, i.x);
  EXPECT_EQ(j.y, i.y);
  EXPECT_EQ(j.heading, i.heading);
  EXPECT_EQ(j.line, 1);
}

TEST(Interventions, EveryMistakeOfTheFileIsReportedWithItsLine) {
  const fs::path dir = fresh_test_dir("interventions");
  std::ofstream(dir / "bad") << "# comment\n"
                             << "1 move 2 0 0 0\n"
                             << "2 jump 2\n"
                             << "x move 2 0 0 0\n"
                             << "3 move 2 nan 0 0\n"
                             << "4 move 2 0 0\n"
                             << "9 move 2 0 0 0\n"
                             << "5 move 2 0 0 0\n";
  Diagnostics diags;
  EXPECT_FALSE(load_interventions((dir / "bad").string(), diags));
  const std::string text = diags.str();
  for (const char* where : {"bad:3: error: 'jump' is not an intervention",
                            "bad:4: error: malformed", "bad:5: error: malformed",
                            "bad:6: error: malformed", "bad:8: error: tick 5 comes after tick 9"})
    EXPECT_NE(text.find(where), std::string::npos) << where << "\n" << text;
  EXPECT_EQ(diags.error_count(), 5);
  Diagnostics missing;
  EXPECT_FALSE(load_interventions((dir / "none").string(), missing));
  EXPECT_NE(missing.str().find("cannot read the interventions file"), std::string::npos);
}

TEST(Interventions, OneThatCannotLandSaysWhy) {
  const fs::path dir = fresh_test_dir("interventions");
  run(dir / "run.flog", [&](Simulation& sim) {
    if (sim.state().tick != 0) return;
    EXPECT_NE(intervention_problem(sim, {0, 999, 0, 0, 0}).find("no robot with id 999"),
              std::string::npos);
    EXPECT_NE(intervention_problem(sim, {0, 2, 50, 0, 0}).find("outside the arena"),
              std::string::npos);
    EXPECT_NE(intervention_problem(sim, {0, 2, 0, 0, std::nan("")}).find("not a finite"),
              std::string::npos);
    EXPECT_THROW(apply_intervention(sim, {0, 2, 50, 0, 0}), RunError);
  });
}

// Robots of two kinds and controllers: built-in (diffusion), Lua with state kept in globals
// and reset() (the aggregation example's script), dynamics2d with a pushable box, loop functions
// that tag robots and count them in the status, and robots added and removed by nobody but the
// test (moves). A reset must bring all of that back to the start.
const char* kRich = R"(<fleetsim>
  <framework ticks_per_second="10" length="4" seed="5"/>
  <controllers>
    <controller id="c" type="diffusion"/>
    <controller id="agg" type="lua" script="SCRIPT"/>
  </controllers>
  <arena size="4,4">
    <distribute count="8" kind="epuck" controller="c"/>
    <distribute count="6" kind="footbot" controller="agg"/>
  </arena>
  <physics><dynamics2d/></physics>
  <loop_functions type="tag_on_contact"/>
  <log path="LOG" format="frames"/>
</fleetsim>
)";

std::string rich() {
  std::string xml = kRich;
  xml.replace(xml.find("SCRIPT"), 6,
              std::string(FLEETSIM_SOURCE_DIR) + "/examples/footbot/aggregation.lua");
  return xml;
}

TEST(Reset, ARunResetEndsAsAFreshRunWithTheSameLogBytes) {
  const fs::path dir = fresh_test_dir("interventions");
  for (const std::string& xml : {std::string(kExperiment), rich()}) {
    const Result fresh = run(dir / "fresh.flog", {}, xml);
    ASSERT_FALSE(fresh.log.empty());
    // Robots moved at tick 3, the run reset at tick 12 (its tick back to 0), then left alone.
    int resets = 0;
    const Result reset = run(
        dir / "reset.flog",
        [&](Simulation& sim) {
          if (resets > 0) return;
          if (sim.state().tick == 3) apply_intervention(sim, {3, 2, 1.0, 1.0, 0.5});
          if (sim.state().tick == 12) {
            ASSERT_EQ(sim.reset_problem(), "");
            sim.reset();
            EXPECT_EQ(sim.state().tick, 0);
            ++resets;
          }
        },
        xml);
    EXPECT_EQ(resets, 1);
    EXPECT_EQ(reset.hash, fresh.hash) << "the reset run does not end as a fresh run";
    EXPECT_TRUE(reset.log == fresh.log) << "the reset run's log is not the fresh run's";
  }
}

/// kExperiment as a run (its log in a fresh directory), not started; null when it does not
/// load. `reg` gets the built-ins and must outlive the run.
std::unique_ptr<Simulation> load_experiment_here(PluginRegistry& reg) {
  register_builtins(reg);
  std::string xml = kExperiment;
  const fs::path dir = fresh_test_dir("interventions");
  xml.replace(xml.find("LOG"), 3, (dir / "run.flog").string());
  Diagnostics diags;
  auto ex = parse_experiment(xml, (dir / "exp.xml").string(), reg, {}, diags);
  EXPECT_TRUE(ex) << diags.str();
  return ex ? std::make_unique<Simulation>(std::move(*ex), reg) : nullptr;
}

TEST(Reset, AResetWithAnotherSeedEndsAsAFreshRunOfThatSeed) {
  const fs::path dir = fresh_test_dir("interventions");
  ExperimentOverrides keep;
  keep.keep_placement = true;
  for (const std::string& xml : {std::string(kExperiment), rich()}) {
    ExperimentOverrides seeded = keep;
    seeded.seed = 23;
    const Result fresh = run(dir / "fresh.flog", {}, xml, seeded);
    const Result other = run(dir / "other.flog", {}, xml, keep);  // the file's seed
    ASSERT_NE(fresh.hash, other.hash) << "the seed does not change this run";
    // The file's seed until tick 7, then the reset with seed 23 (robots placed anew with it).
    int resets = 0;
    const Result reset = run(
        dir / "reset.flog",
        [&](Simulation& sim) {
          if (resets > 0 || sim.state().tick != 7) return;
          ASSERT_EQ(sim.reset_problem(23), "");
          sim.reset(23);
          EXPECT_EQ(sim.state().tick, 0);
          EXPECT_EQ(sim.model().seed, 23u);
          ++resets;
        },
        xml, keep);
    EXPECT_EQ(resets, 1);
    EXPECT_EQ(reset.hash, fresh.hash) << "the reset run does not end as a fresh run of seed 23";
    EXPECT_TRUE(reset.log == fresh.log) << "the reset run's log is not seed 23's";
  }
}

TEST(Reset, AnotherSeedNeedsThePlacementKept) {
  PluginRegistry reg;
  auto loaded = load_experiment_here(reg);
  ASSERT_TRUE(loaded);
  Simulation& sim = *loaded;
  sim.enable_reset();
  sim.start();
  sim.step();
  EXPECT_NE(sim.reset_problem(12).find("cannot take another seed"), std::string::npos)
      << sim.reset_problem(12);
  EXPECT_THROW(sim.reset(12), RunError);
  EXPECT_EQ(sim.state().tick, 1);        // nothing done
  EXPECT_EQ(sim.reset_problem(11), "");  // its own seed needs nothing more
  sim.reset(11);
  EXPECT_EQ(sim.state().tick, 0);
}

TEST(Reset, ASessionWithAResetReplaysWithTheSameBytesAndHash) {
  const fs::path dir = fresh_test_dir("interventions");
  const std::string xml = rich();
  const Result fresh = run(dir / "fresh.flog", {}, xml);
  const fs::path file = dir / "session.interventions";
  std::vector<Intervention> session;
  int resets = 0;
  // A move at tick 3, a reset at tick 9, a move at tick 0 (right after the reset) and at 5.
  const Result live = run(
      dir / "live.flog",
      [&](Simulation& sim) {
        const Tick t = sim.state().tick;
        std::vector<Intervention> now;
        if (resets == 0 && t == 3) now.push_back({t, 2, 1.0 / 3.0, -0.7, 0.1 + 0.2});
        if (resets == 0 && t == 9) {
          Intervention r;
          r.tick = t;
          r.kind = Intervention::Kind::kReset;
          now.push_back(r);
          now.push_back({0, 5, -1.25, 1.5, -2.0 / 7.0});  // (at tick 0, after the reset)
        }
        if (resets == 1 && t == 5) now.push_back({t, 4, 0.5, 0.25, 1.0});
        for (const Intervention& i : now) {
          ASSERT_EQ(intervention_problem(sim, i), "");
          apply_intervention(sim, i);
          if (i.kind == Intervention::Kind::kReset) ++resets;
          session.push_back(i);
        }
      },
      xml);
  ASSERT_EQ(resets, 1);
  EXPECT_NE(live.hash, fresh.hash) << "the moves after the reset changed the run";
  {
    std::ofstream out(file);
    for (const Intervention& i : session) out << format_intervention(i) << "\n";
  }
  EXPECT_NE(slurp(file).find("9 reset\n0 move 5"), std::string::npos) << slurp(file);
  Diagnostics diags;
  auto loaded = load_interventions(file.string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 4u);
  EXPECT_EQ((*loaded)[1].kind, Intervention::Kind::kReset);
  // Replayed as `fleetsim run --interventions` does: each at its tick, a reset taking the tick
  // back to 0 and the file going on from there.
  std::size_t next = 0;
  const Result replay = replay_file(dir / "replay.flog", *loaded, xml, next);
  EXPECT_EQ(next, 4u);
  EXPECT_EQ(replay.hash, live.hash);
  EXPECT_TRUE(replay.log == live.log) << "the replay's log bytes differ from the session's";
}

TEST(Reset, TicksStartAgainAfterAResetInTheFile) {
  const fs::path dir = fresh_test_dir("interventions");
  std::ofstream(dir / "ok") << "4 move 2 0 0 0\n9 reset\n0 move 2 0 0 0\n0 reset\n3 reset\n";
  Diagnostics diags;
  auto loaded = load_interventions((dir / "ok").string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 5u);
  std::ofstream(dir / "bad") << "9 move 2 0 0 0\n5 reset\n7 reset now\n-1 reset\n";
  Diagnostics bad;
  EXPECT_FALSE(load_interventions((dir / "bad").string(), bad));
  const std::string text = bad.str();
  for (const char* where : {"bad:2: error: tick 5 comes after tick 9",
                            "bad:3: error: malformed reset", "bad:4: error: malformed reset"})
    EXPECT_NE(text.find(where), std::string::npos) << where << "\n" << text;
}

TEST(Reset, ARunThatKeepsNoStartSaysSo) {
  PluginRegistry reg;
  auto loaded = load_experiment_here(reg);
  ASSERT_TRUE(loaded);
  Simulation& sim = *loaded;
  sim.start();
  sim.step();
  Intervention r;
  r.tick = 1;
  r.kind = Intervention::Kind::kReset;
  EXPECT_NE(intervention_problem(sim, r).find("keeps no copy of its start"), std::string::npos);
  EXPECT_THROW(sim.reset(), RunError);
  EXPECT_EQ(sim.state().tick, 1);
}

/// The first point of a 0.25 m grid over the arena where `i` (a move or an add) could land.
Intervention somewhere_free(const Simulation& sim, Intervention i) {
  for (double y = -1.75; y <= 1.75; y += 0.25)
    for (double x = -1.75; x <= 1.75; x += 0.25) {
      i.x = x;
      i.y = y;
      if (intervention_problem(sim, i).empty()) return i;
    }
  ADD_FAILURE() << "no free place";
  return i;
}

TEST(Interventions, RobotsAddedAndRemovedAreRecordedAndReplayed) {
  const fs::path dir = fresh_test_dir("interventions");
  const Result plain = run(dir / "plain.flog", {});
  std::vector<Intervention> session;
  std::size_t robots_after_add = 0, robots_at_end = 0;
  EntityId added = kNoEntity;
  const Result live = run(dir / "live.flog", [&](Simulation& sim) {
    const Tick t = sim.state().tick;
    Intervention i;
    i.tick = t;
    if (t == 2) {
      i.kind = Intervention::Kind::kAdd;
      i.robot_kind = "epuck";
      i.controller = "c";
      i.heading = 0.25;
      i = somewhere_free(sim, i);
      added = sim.state().next_id;
    } else if (t == 5) {
      i.kind = Intervention::Kind::kRemove;
      i.robot = 3;
    } else {
      if (t == 6) robots_after_add = sim.state().robot_count();
      robots_at_end = sim.state().robot_count();
      return;
    }
    ASSERT_EQ(intervention_problem(sim, i), "");
    apply_intervention(sim, i);
    session.push_back(i);
  });
  EXPECT_EQ(robots_after_add, 10u) << "ten, one added, one removed";
  EXPECT_EQ(robots_at_end, 10u);
  EXPECT_NE(live.hash, plain.hash);
  const fs::path file = dir / "session.interventions";
  {
    std::ofstream out(file);
    for (const Intervention& i : session) out << format_intervention(i) << "\n";
  }
  EXPECT_NE(slurp(file).find(" add epuck c "), std::string::npos) << slurp(file);
  EXPECT_NE(slurp(file).find("5 remove 3\n"), std::string::npos) << slurp(file);
  Diagnostics diags;
  auto loaded = load_interventions(file.string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 2u);
  std::size_t next = 0;
  EntityId replay_added = kNoEntity;
  const Result replay = run(dir / "replay.flog", [&](Simulation& sim) {
    for (; next < loaded->size() && (*loaded)[next].tick == sim.state().tick; ++next) {
      if ((*loaded)[next].kind == Intervention::Kind::kAdd) replay_added = sim.state().next_id;
      apply_intervention(sim, (*loaded)[next]);
    }
  });
  EXPECT_EQ(replay_added, added) << "the added robot gets the same id";
  EXPECT_EQ(replay.hash, live.hash);
  EXPECT_TRUE(replay.log == live.log) << "the replay's log bytes differ from the session's";
}

TEST(Interventions, OverlapsObstaclesAndUnknownNamesAreRefusedWithTheReason) {
  const fs::path dir = fresh_test_dir("interventions");
  run(dir / "run.flog", [&](Simulation& sim) {
    if (sim.state().tick != 0) return;
    const WorldState& s = sim.state();
    const std::uint32_t five = s.robot_index(5);
    // Robot 2 onto robot 5, half a radius off: refused, naming robot 5.
    Intervention onto{0, 2, s.x()[five] + 0.02, s.y()[five], 0};
    EXPECT_NE(intervention_problem(sim, onto).find("would overlap robot"), std::string::npos)
        << intervention_problem(sim, onto);
    EXPECT_NE(intervention_problem(sim, onto).find("(id 5)"), std::string::npos);
    EXPECT_THROW(apply_intervention(sim, onto), RunError);
    // Robot 5 a hair from where it is: only itself is there.
    Intervention itself{0, 5, s.x()[five] + 1e-6, s.y()[five], 0};
    EXPECT_EQ(intervention_problem(sim, itself), "");
    Intervention add;
    add.kind = Intervention::Kind::kAdd;
    add.robot_kind = "epuck";
    add.controller = "c";
    add.x = s.x()[five];
    add.y = s.y()[five];
    EXPECT_NE(intervention_problem(sim, add).find("would overlap robot"), std::string::npos);
    add.x = 9;
    EXPECT_NE(intervention_problem(sim, add).find("outside the arena"), std::string::npos);
    add.x = 1.99;  // the arena's wall at x = 2
    add.y = 0;
    EXPECT_NE(intervention_problem(sim, add).find("would overlap a wall or obstacle"),
              std::string::npos)
        << intervention_problem(sim, add);
    add.robot_kind = "tank";
    EXPECT_NE(intervention_problem(sim, add).find("no robot kind 'tank' in this run (its kinds: "
                                                  "epuck)"),
              std::string::npos)
        << intervention_problem(sim, add);
    add.robot_kind = "epuck";
    add.controller = "pilot";
    EXPECT_NE(intervention_problem(sim, add).find("no controller 'pilot'"), std::string::npos);
    Intervention remove;
    remove.kind = Intervention::Kind::kRemove;
    remove.robot = 999;
    EXPECT_NE(intervention_problem(sim, remove).find("no robot with id 999"), std::string::npos);
    EXPECT_EQ(describe(remove), "remove robot 999");
  });
}

TEST(Interventions, LedsSetFromTheViewAreSeenRecordedAndReplayed) {
  const fs::path dir = fresh_test_dir("interventions");
  std::vector<Intervention> session;
  const Result live = run(dir / "live.flog", [&](Simulation& sim) {
    if (sim.state().tick != 3) return;
    Intervention i;
    i.tick = 3;
    i.kind = Intervention::Kind::kLeds;
    i.robot = 2;
    i.color = {255, 0, 128, 255};
    ASSERT_EQ(intervention_problem(sim, i), "");
    apply_intervention(sim, i);
    session.push_back(i);
    const WorldState& s = sim.state();
    const ColumnHandle leds = s.robots.find("leds");
    ASSERT_NE(leds, kNoColumn);
    EXPECT_EQ(s.robots.span<Color>(leds)[s.robot_index(2) * s.robots.desc(leds).width],
              (Color{255, 0, 128, 255}))
        << "others see it at once";
    i.robot = 999;
    EXPECT_NE(intervention_problem(sim, i).find("no robot with id 999"), std::string::npos);
  });
  ASSERT_EQ(session.size(), 1u);
  EXPECT_EQ(format_intervention(session[0]), "3 leds 2 255,0,128,255");
  std::ofstream(dir / "session") << format_intervention(session[0]) << "\n";
  Diagnostics diags;
  auto loaded = load_interventions((dir / "session").string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].color, (Color{255, 0, 128, 255}));
  const Result replay = run(dir / "replay.flog", [&](Simulation& sim) {
    if (sim.state().tick == 3) apply_intervention(sim, (*loaded)[0]);
  });
  EXPECT_EQ(replay.hash, live.hash);
  EXPECT_TRUE(replay.log == live.log);
  std::ofstream(dir / "bad") << "1 leds 2 mauve\n";
  Diagnostics bad;
  EXPECT_FALSE(load_interventions((dir / "bad").string(), bad));
  EXPECT_NE(bad.str().find("bad:1: error: malformed leds"), std::string::npos) << bad.str();
}

TEST(Interventions, AddAndRemoveLinesAreReadAndTheirMistakesReported) {
  const fs::path dir = fresh_test_dir("interventions");
  std::ofstream(dir / "ok") << "1 add epuck c 0.5 -0.25 1\n2 remove 4\n";
  Diagnostics diags;
  auto loaded = load_interventions((dir / "ok").string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].kind, Intervention::Kind::kAdd);
  EXPECT_EQ((*loaded)[0].robot_kind, "epuck");
  EXPECT_EQ((*loaded)[0].controller, "c");
  EXPECT_EQ((*loaded)[0].y, -0.25);
  EXPECT_EQ(format_intervention((*loaded)[0]), "1 add epuck c 0.5 -0.25 1");
  EXPECT_EQ(format_intervention((*loaded)[1]), "2 remove 4");
  std::ofstream(dir / "bad") << "1 add epuck c 0.5\n2 remove x\n3 remove 4 5\n";
  Diagnostics bad;
  EXPECT_FALSE(load_interventions((dir / "bad").string(), bad));
  for (const char* where :
       {"bad:1: error: malformed add", "bad:2: error: malformed remove", "bad:3: error: malformed"})
    EXPECT_NE(bad.str().find(where), std::string::npos) << where << "\n" << bad.str();
}

// A Lua script whose globals steer it: `speed` (cm/s), `mode` ("forward" or "spin"), `on`.
const char* kSteeredScript = R"(speed = 5
mode = "forward"
on = true
function init() end
function step()
  if not on then robot.wheels.set_velocity(0, 0)
  elseif mode == "forward" then robot.wheels.set_velocity(speed, speed)
  else robot.wheels.set_velocity(-speed, speed) end
end
)";

const char* kSteered = R"(<fleetsim>
  <framework ticks_per_second="10" length="3" seed="3"/>
  <controllers>
    <controller id="s" type="lua" script="SCRIPT"/>
    <controller id="c" type="diffusion"/>
  </controllers>
  <arena size="8,8">
    <distribute count="6" kind="epuck" controller="s"/>
    <distribute count="1" kind="epuck" controller="c"/>
  </arena>
  <log path="LOG" format="frames"/>
</fleetsim>
)";

std::string steered(const fs::path& dir) {
  std::ofstream(dir / "steered.lua") << kSteeredScript;
  std::string xml = kSteered;
  xml.replace(xml.find("SCRIPT"), 6, (dir / "steered.lua").string());
  return xml;
}

/// The global `name` of robot `id`'s script, as JSON text ("" when there is none).
std::string global_of(const Simulation& sim, EntityId id, const std::string& name) {
  auto* g = dynamic_cast<ScriptGlobals*>(sim.controller_between_steps(id));
  if (!g) return "";
  for (const auto& [n, v] : g->script_globals())
    if (n == name) return v.json();
  return "";
}

TEST(Interventions, CommandsAndScriptGlobalsSetLiveAreRecordedAndReplayed) {
  const fs::path dir = fresh_test_dir("interventions");
  const std::string xml = steered(dir);
  const Result plain = run(dir / "plain.flog", {}, xml);
  std::vector<Intervention> session;
  Vec2 held_at{};
  double heading_held = 0;
  auto land = [&](Simulation& sim, Intervention i) {
    i.tick = sim.state().tick;
    ASSERT_EQ(intervention_problem(sim, i), "") << describe(i);
    apply_intervention(sim, i);
    session.push_back(i);
  };
  const Result live = run(
      dir / "live.flog",
      [&](Simulation& sim) {
        const WorldState& s = sim.state();
        const Tick t = s.tick;
        Intervention i;
        i.robot = 1;
        if (t == 3) {
          i.kind = Intervention::Kind::kParam;
          i.name = "speed";
          i.value.type = ScriptValue::Type::kNumber;
          i.value.number = 0.1 + 0.2;  // (not a round number: the file keeps every bit)
          land(sim, i);
          EXPECT_EQ(global_of(sim, 1, "speed"), "0.30000000000000004");
          i.robot = 2;
          i.name = "mode";
          i.value = {};
          i.value.type = ScriptValue::Type::kString;
          i.value.text = "spin # with \"quotes\"";
          land(sim, i);
          i.name = "on";
          i.robot = 4;
          i.value = {};
          i.value.type = ScriptValue::Type::kBoolean;
          i.value.boolean = false;
          land(sim, i);
        }
        if (t == 5) {
          i.robot = 3;
          i.kind = Intervention::Kind::kCommand;
          i.actuator = "differential_drive";
          i.values = {0.05, -0.05};  // on the spot, whatever its script commands
          land(sim, i);
          const std::uint32_t row = s.robot_index(3);
          held_at = {s.x()[row], s.y()[row]};
          heading_held = s.theta()[row];
        }
        if (t == 12) {
          const std::uint32_t row = s.robot_index(3);
          EXPECT_NEAR(s.x()[row], held_at.x, 1e-12) << "a held spin does not move the robot";
          EXPECT_NEAR(s.y()[row], held_at.y, 1e-12);
          EXPECT_GT(std::abs(s.theta()[row] - heading_held), 0.5) << "it turned";
          i.robot = 3;
          i.kind = Intervention::Kind::kRelease;
          i.actuator = "differential_drive";
          land(sim, i);
        }
        if (t == 14) {  // released: its script drives it forward again
          const std::uint32_t row = s.robot_index(3);
          held_at = {s.x()[row], s.y()[row]};
        }
        if (t == 16) {
          const std::uint32_t row = s.robot_index(3);
          EXPECT_GT(std::hypot(s.x()[row] - held_at.x, s.y()[row] - held_at.y), 0.005);
        }
      },
      xml);
  ASSERT_EQ(session.size(), 5u);
  EXPECT_NE(live.hash, plain.hash) << "the interventions changed the run";
  {
    std::ofstream out(dir / "session");
    for (const Intervention& i : session) out << format_intervention(i) << "\n";
  }
  EXPECT_EQ(format_intervention(session[0]), "3 param 1 speed 0.30000000000000004");
  EXPECT_EQ(format_intervention(session[1]), R"(3 param 2 mode "spin # with \"quotes\"")");
  EXPECT_EQ(format_intervention(session[2]), "3 param 4 on false");
  EXPECT_EQ(format_intervention(session[3]), "5 command 3 differential_drive 0.05,-0.05");
  EXPECT_EQ(format_intervention(session[4]), "12 release 3 differential_drive");
  Diagnostics diags;
  auto loaded = load_interventions((dir / "session").string(), diags);
  ASSERT_TRUE(loaded) << diags.str();
  ASSERT_EQ(loaded->size(), 5u);
  EXPECT_EQ((*loaded)[1].value.text, "spin # with \"quotes\"");
  std::size_t next = 0;
  const Result replay = replay_file(dir / "replay.flog", *loaded, xml, next);
  EXPECT_EQ(next, 5u);
  EXPECT_EQ(replay.hash, live.hash);
  EXPECT_TRUE(replay.log == live.log) << "the replay's log bytes differ from the session's";
}

TEST(Interventions, BadCommandsAndScriptGlobalsAreRefusedWithTheReason) {
  const fs::path dir = fresh_test_dir("interventions");
  const std::string xml = steered(dir);
  bool checked = false;
  run(
      dir / "live.flog",
      [&](Simulation& sim) {
        if (sim.state().tick != 2) return;
        checked = true;
        auto why = [&](Intervention i) { return intervention_problem(sim, i); };
        Intervention p;
        p.kind = Intervention::Kind::kParam;
        p.robot = 1;
        p.name = "sped";
        p.value.number = 1;
        EXPECT_EQ(why(p),
                  "robot 1's script has no global 'sped' that is a number, a string or a boolean "
                  "(its: mode, on, speed)");
        p.name = "speed";
        p.value.type = ScriptValue::Type::kString;
        p.value.text = "fast";
        EXPECT_EQ(why(p), "global 'speed' of robot 1's script is a number, not a string");
        p.value = {};
        p.value.number = std::nan("");
        EXPECT_EQ(why(p), "a value that is not a finite number");
        p.value.number = 2;
        p.robot = 99;
        EXPECT_EQ(why(p), "there is no robot with id 99");
        p.robot = 6;  // the diffusion robot
        EXPECT_NE(why(p).find("robot 6's controller has no parameters to change"),
                  std::string::npos)
            << why(p);
        Intervention c;
        c.kind = Intervention::Kind::kCommand;
        c.robot = 1;
        c.actuator = "wheels";
        c.values = {0, 0};
        EXPECT_EQ(why(c),
                  "robot kind 'epuck' has no actuator 'wheels' with a numeric command (its: "
                  "differential_drive)");
        c.actuator = "differential_drive";
        c.values = {0.1};
        EXPECT_NE(why(c).find("actuator 'differential_drive' takes 2 values"), std::string::npos)
            << why(c);
        c.values = {0.1, std::numeric_limits<double>::infinity()};
        EXPECT_EQ(why(c), "a command value that is not a finite number");
        c.kind = Intervention::Kind::kRelease;
        EXPECT_EQ(why(c), "robot 1's 'differential_drive' is not held (nothing to release)");
        c.robot = 42;
        EXPECT_EQ(why(c), "there is no robot with id 42");
      },
      xml);
  EXPECT_TRUE(checked);
  // The file's mistakes, each at its line.
  std::ofstream(dir / "bad") << "1 command 2 differential_drive 0.1,x\n"
                                "1 param 2 mode 'spin'\n"
                                "1 release 2\n"
                                "1 param 2 speed 1 # a comment after a value\n";
  Diagnostics bad;
  EXPECT_FALSE(load_interventions((dir / "bad").string(), bad));
  EXPECT_NE(bad.str().find("bad:1: error: malformed command"), std::string::npos) << bad.str();
  EXPECT_NE(bad.str().find("bad:2: error: malformed param"), std::string::npos) << bad.str();
  EXPECT_NE(bad.str().find("bad:3: error: malformed release"), std::string::npos) << bad.str();
  EXPECT_EQ(bad.str().find("bad:4:"), std::string::npos) << bad.str();
}

}  // namespace
}  // namespace fleetsim
