// Interventions (robots moved from the live view, docs/view-format.md "Interventions"): a session
// that moves robots between steps, recorded with format_intervention(), replays from the file
// with the same log bytes and final hash; the file's mistakes are reported file:line; an
// intervention that cannot land says why.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

/// Runs the experiment; before the step from tick T, `before(sim)` may intervene.
Result run(const fs::path& log, const std::function<void(Simulation&)>& before) {
  PluginRegistry reg;
  register_builtins(reg);
  std::string xml = kExperiment;
  xml.replace(xml.find("LOG"), 3, log.string());
  Diagnostics diags;
  auto ex = parse_experiment(xml, (log.parent_path() / "exp.xml").string(), reg, {}, diags);
  EXPECT_TRUE(ex) << diags.str();
  if (!ex) return {};
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) {
    if (before) before(sim);
    sim.step();
  }
  sim.finish();
  return {slurp(log), sim.state().hash()};
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

}  // namespace
}  // namespace fleetsim
