// Checkpoints (docs/checkpoints.md, issue 9 section 6): a run resumed from a checkpoint, on one
// process or several, ends with the state and the log of a run never interrupted, byte for
// byte; checkpoints change nothing in the run that takes them; a checkpoint that does not fit
// the run (another experiment, seed, version, a corrupt file, a changed log) is refused with a
// message that says what differs. (swarm_cli_test covers `kill -9` and --resume on the command
// line.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/hash.hpp"
#include "distributed/swarm_run.hpp"
#include "sim/checkpoint.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"
#include "swarm_scenario.hpp"

namespace fleetsim {
namespace {

using fleetsim::testing::slurp;
using testing::random_scenario;
using testing::test_registry;
namespace fs = std::filesystem;
using distributed::LoadedExperiment;

class Checkpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir();
    script_ = path("stateful.lua");
    std::ofstream(script_) << testing::kScript;
  }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }

  LoadedExperiment load(const std::string& xml, const std::string& log) {
    auto reg = test_registry();
    Diagnostics d;
    ExperimentOverrides ov;
    ov.log_path = log;
    ov.defer_placement = defer_;  // (as `fleetsim run` loads on several processes)
    ov.defer_placement_from = 0;
    auto ex = parse_experiment(xml, "swarm.xml", *reg, ov, d);
    EXPECT_TRUE(ex) << d.str();
    return LoadedExperiment{std::move(*ex), std::move(reg)};
  }

  /// One process to the end; takes a checkpoint after tick `at` (if >= 0) into `saved`.
  std::uint64_t run(const std::string& xml, const std::string& log, Tick at = -1,
                    Checkpoint* saved = nullptr, const Checkpoint* resume = nullptr) {
    auto loaded = load(xml, log);
    const CheckpointIdentity id = identity_of(loaded.experiment, *loaded.registry);
    Simulation sim(std::move(loaded.experiment), *loaded.registry, {},
                   resume ? &resume->state : nullptr);
    sim.enable_checkpoints([&](Tick t, std::uint64_t hash, std::vector<std::uint8_t> bytes) {
      *saved = Checkpoint{id, t, hash, std::move(bytes)};
    });
    sim.start();
    if (resume) {
      EXPECT_EQ(sim.state().tick, resume->tick) << "the resumed run starts over";
    }
    while (!sim.done()) {
      sim.step();
      if (sim.state().tick == at) sim.request_checkpoint();
    }
    sim.finish();
    return sim.state().hash();
  }

  std::vector<distributed::ProcessReport> many(const std::string& xml, const std::string& log,
                                               int n, distributed::SwarmRunOptions o) {
    o.processes = n;
    o.transport = distributed::TransportKind::kInproc;
    return distributed::run_swarm(
        [&]() -> std::optional<LoadedExperiment> { return load(xml, log); }, o);
  }

  fs::path dir_;
  std::string script_;
  bool defer_ = false;  ///< load() leaves each process to place its part
};

TEST_F(Checkpoints, AResumedRunEndsWithTheStateAndLogOfAnUninterruptedOne) {
  for (std::uint64_t seed : {11u, 12u, 13u, 14u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto s = random_scenario(seed, script_, "unused.flog");
    // Seed 13 with rigid-body physics, whose velocities are columns like the rest.
    if (seed == 13)
      for (std::size_t at; (at = s.xml.find("<kinematics2d ")) != std::string::npos;)
        s.xml.replace(at, 14, "<dynamics2d ");
    // Seed 14: one region split over domains, loop functions in the per-process form.
    if (seed == 14) {
      testing::drop_physics(s.xml);
      s.xml.replace(s.xml.find("\"border_churn\""), 14, "\"border_churn_local\"");
    }
    const std::string ref_log = path("ref.flog");
    const std::uint64_t ref = run(s.xml, ref_log);
    const std::string ref_bytes = slurp(ref_log);

    // Taking a checkpoint changes nothing.
    const std::string log = path("resumed.flog");
    const Tick at = 15 + static_cast<Tick>(seed % 10) * 5;  // before every run's end (90+)
    Checkpoint ck;
    EXPECT_EQ(run(s.xml, log, at, &ck), ref);
    EXPECT_TRUE(slurp(log) == ref_bytes);
    ASSERT_EQ(ck.tick, at);

    // Through the file format, then resumed on one process: the same log file, cut back to
    // the checkpoint and continued, ends as the uninterrupted one.
    const Checkpoint back = decode_checkpoint(encode_checkpoint(ck), "test");
    EXPECT_EQ(back.state, ck.state);
    // As a run killed in the middle of writing a frame would leave it.
    std::ofstream(log, std::ios::app) << "half a frame";
    EXPECT_EQ(run(s.xml, log, -1, nullptr, &back), ref);
    EXPECT_TRUE(slurp(log) == ref_bytes) << "the resumed log differs";

    // ... and on several processes (three split a region over domains, whatever the regions).
    for (int n : {2, seed == 13 ? s.regions : 3}) {
      distributed::SwarmRunOptions o;
      o.resume = std::make_shared<Checkpoint>(back);
      o.jitter_us = 100;
      auto reports = many(s.xml, log, n, o);
      for (const auto& r : reports) {
        ASSERT_TRUE(r.ok) << r.error;
        EXPECT_EQ(r.state_hash, ref) << n << " processes, process " << r.process;
      }
      EXPECT_TRUE(slurp(log) == ref_bytes) << "the log resumed on " << n << " processes differs";
    }
  }
}

// A dense crowd on dynamics2d (40 robots/m²): most robots meet others, so each tick's Box2D
// worlds hold many groups, and robots enter them at several sub-steps. Resumed from a
// checkpoint on one process or on two (one region each), it ends as the uninterrupted run.
TEST_F(Checkpoints, ADenseDynamics2dCrowdResumesWithTheBitsOfAnUninterruptedRun) {
  const std::string log = path("crowd.flog");
  const std::string xml = R"(<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="6" seed="7"/>
  <controllers><controller id="diffuse" type="diffusion"/></controllers>
  <arena size="4,4">
    <wall from="-1,-1" to="1,-1"/>
    <distribute count="640" kind="epuck" controller="diffuse"/>
  </arena>
  <physics>
    <dynamics2d id="w" region="-2,-2,0,2"/>
    <dynamics2d id="e" region="0,-2,2,2"/>
  </physics>
  <log path=")" + log + R"("/>
</fleetsim>
)";
  const std::uint64_t ref = run(xml, log);
  Checkpoint ck;
  EXPECT_EQ(run(xml, log, 25, &ck), ref);
  ASSERT_EQ(ck.tick, 25);
  const Checkpoint back = decode_checkpoint(encode_checkpoint(ck), "test");
  EXPECT_EQ(run(xml, log, -1, nullptr, &back), ref) << "resumed on one process";
  distributed::SwarmRunOptions o;
  o.resume = std::make_shared<Checkpoint>(back);
  for (const auto& r : many(xml, log, 2, o)) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.state_hash, ref) << "resumed on two processes, process " << r.process;
  }
}

TEST_F(Checkpoints, ACheckpointOfSeveralProcessesResumesOnOne) {
  const auto s = random_scenario(21, script_, "unused.flog");
  const std::string ref_log = path("ref.flog");
  const std::uint64_t ref = run(s.xml, ref_log);
  const std::string ref_bytes = slurp(ref_log);

  // A checkpoint after every tick (all kept), in DSAAM and lockstep mode.
  for (auto sync : {distributed::SyncMode::kDsaam, distributed::SyncMode::kLockstep}) {
    const std::string dir = path(sync == distributed::SyncMode::kDsaam ? "ck-d" : "ck-l");
    const std::string log = path("many.flog");
    distributed::SwarmRunOptions o;
    o.sync = sync;
    o.checkpoint_every_s = 1e-9;
    o.checkpoint_dir = dir;
    o.checkpoint_keep = 1000;
    auto reports = many(s.xml, log, 2, o);
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.state_hash, ref);
    }
    EXPECT_TRUE(slurp(log) == ref_bytes) << "checkpoints changed the log";
    const auto& written = reports[0].checkpoints;
    ASSERT_GT(written.size(), 20u);
    // From one in the middle, on one process.
    const Checkpoint ck = read_checkpoint(written[written.size() / 2]);
    EXPECT_GT(ck.tick, 5);
    EXPECT_EQ(run(s.xml, log, -1, nullptr, &ck), ref);
    EXPECT_TRUE(slurp(log) == ref_bytes) << "the log resumed on one process differs";
  }
}

// A run split over domains keeps its split while it takes checkpoints: each process places
// its part only, writes the parts of the robots it moves, and none gathers the others' rows. A
// checkpoint of 2 processes resumes on 1 and on 3 with the log and hash of the run never
// stopped; on 3, each process restores only the robots near its domain.
TEST_F(Checkpoints, APartitionedRunTakesCheckpointsHoldingItsPartAndResumesOnAnyNumber) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"3\" seed=\"8\"/>\n"
      "  <controllers>\n"
      "    <controller id=\"d\" type=\"diffusion\" speed=\"0.2\"/>\n"
      "    <controller id=\"s\" type=\"lua\" script=\"" +
      script_ +
      "\"/>\n"
      "  </controllers>\n"
      "  <arena size=\"60,12\">\n"
      "    <distribute count=\"3000\" kind=\"epuck\" controller=\"d\"/>\n"
      "    <distribute count=\"300\" kind=\"footbot\" controller=\"s\" id_prefix=\"f\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n";
  constexpr std::size_t kRobots = 3300;
  const std::string ref_log = path("ref.flog");
  const std::uint64_t ref = run(xml, ref_log);
  const std::string ref_bytes = slurp(ref_log);
  const std::string log = path("split.flog");
  // A load that places every robot and one that leaves them to the processes start from the
  // same world, for a checkpoint.
  const auto placed = load(xml, log);
  defer_ = true;
  const auto deferred = load(xml, log);
  ASSERT_TRUE(deferred.experiment.robot_plan) << "the load placed the robots";
  EXPECT_EQ(identity_mismatch(identity_of(placed.experiment, *placed.registry),
                              identity_of(deferred.experiment, *deferred.registry)),
            "");

  distributed::SwarmRunOptions o;
  o.checkpoint_every_s = 1e-9;  // one after every tick
  o.checkpoint_dir = path("ck-split");
  o.checkpoint_keep = 1000;
  auto reports = many(xml, log, 2, o);
  ASSERT_EQ(reports.size(), 2u);
  for (const auto& r : reports) {
    ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
    EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
    EXPECT_TRUE(r.partitioned) << "process " << r.process << " holds the whole world";
    EXPECT_LT(r.exchange.held_robots_max, kRobots / 2 + 600) << "process " << r.process;
    EXPECT_GT(r.exchange.placed_robots, 0u) << "process " << r.process;
    EXPECT_LT(r.exchange.placed_robots, kRobots / 2 + 600) << "process " << r.process;
  }
  EXPECT_TRUE(slurp(log) == ref_bytes) << "checkpoints changed the log";
  const auto& written = reports[0].checkpoints;
  ASSERT_GT(written.size(), 20u);
  const Checkpoint ck = read_checkpoint(written[written.size() / 2]);
  EXPECT_GT(ck.tick, 5);

  EXPECT_EQ(run(xml, log, -1, nullptr, &ck), ref) << "resumed on one process";
  EXPECT_TRUE(slurp(log) == ref_bytes) << "the log resumed on one process differs";

  distributed::SwarmRunOptions again;
  again.resume = std::make_shared<Checkpoint>(ck);
  reports = many(xml, log, 3, again);
  ASSERT_EQ(reports.size(), 3u);
  for (const auto& r : reports) {
    ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
    EXPECT_EQ(r.state_hash, ref) << "resumed on 3 processes, process " << r.process;
    EXPECT_TRUE(r.partitioned) << "process " << r.process << " holds the whole world";
    EXPECT_LT(r.exchange.held_robots_max, kRobots / 3 + 600) << "process " << r.process;
    // What it restored from the checkpoint: its part, not the world.
    EXPECT_GT(r.exchange.placed_robots, 0u) << "process " << r.process;
    EXPECT_LT(r.exchange.placed_robots, kRobots / 3 + 600) << "process " << r.process;
  }
  EXPECT_TRUE(slurp(log) == ref_bytes) << "the log resumed on 3 processes differs";
}

TEST_F(Checkpoints, ACheckpointThatDoesNotFitIsRefusedSayingWhy) {
  const auto s = random_scenario(31, script_, "unused.flog");
  Checkpoint ck;
  run(s.xml, path("a.flog"), 30, &ck);
  const auto bytes = encode_checkpoint(ck);
  auto refused = [&](std::vector<std::uint8_t> b) -> std::string {
    try {
      decode_checkpoint(b, "checkpoint x.ckpt");
    } catch (const CheckpointError& e) {
      return e.what();
    }
    return "";
  };
  auto flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_NE(refused(flipped).find("x.ckpt is corrupt (its checksum"), std::string::npos)
      << refused(flipped);
  EXPECT_NE(refused({bytes.begin(), bytes.end() - 100}).find("cut short"), std::string::npos);
  EXPECT_NE(refused({bytes.begin(), bytes.begin() + 20}).find("is not a fleetsim checkpoint"),
            std::string::npos);
  const std::string text = slurp(script_);
  EXPECT_NE(refused({text.begin(), text.end()}).find("is not a fleetsim checkpoint"),
            std::string::npos);

  // Another experiment, another seed, another version: named.
  auto loaded = load(s.xml, path("a.flog"));
  const CheckpointIdentity same = identity_of(loaded.experiment, *loaded.registry);
  EXPECT_EQ(identity_mismatch(ck.identity, same), "");
  auto other_seed = load(random_scenario(32, script_, "unused.flog").xml, path("a.flog"));
  EXPECT_NE(identity_mismatch(ck.identity, identity_of(other_seed.experiment, *other_seed.registry))
                .find("starts from another world"),
            std::string::npos);
  CheckpointIdentity newer = same;
  newer.version = "99.0.0";
  EXPECT_NE(identity_mismatch(newer, same).find("written by fleetsim 99.0.0"), std::string::npos);
  CheckpointIdentity edited = same;
  edited.files[0][2] = "0123456789abcdef";
  EXPECT_NE(identity_mismatch(edited, same).find("the experiment file swarm.xml differs"),
            std::string::npos)
      << identity_mismatch(edited, same);
}

TEST_F(Checkpoints, ALogChangedSinceTheCheckpointIsNotOverwritten) {
  const auto s = random_scenario(41, script_, "unused.flog");
  const std::string log = path("l.flog");
  Checkpoint ck;
  run(s.xml, log, 25, &ck);
  // Another run wrote the log since: refused, and the log is left as it is.
  run(random_scenario(42, script_, "unused.flog").xml, log);
  const std::string other = slurp(log);
  try {
    run(s.xml, log, -1, nullptr, &ck);
    ADD_FAILURE() << "resumed over another run's log";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("is not the one this checkpoint continues"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(slurp(log) == other) << "the refused resume changed the log";
  fs::remove(log);
  try {
    run(s.xml, log, -1, nullptr, &ck);
    ADD_FAILURE() << "resumed without its log";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open log '" + log + "' to continue it"),
              std::string::npos)
        << e.what();
  }
}

/// Loop functions that keep state and cannot save it.
class Forgetful final : public LoopFunctions {
  void post_step(WorldAccess&) override { ++steps_; }
  int steps_ = 0;
};

TEST_F(Checkpoints, LoopFunctionsThatCannotSaveAreRefusedBeforeTheFirstTick) {
  auto reg = test_registry();
  reg->add_loop_functions({PluginKind::kLoopFunctions, "forgetful", "test", {}},
                          [] { return std::make_unique<Forgetful>(); });
  std::string xml = random_scenario(51, script_, "unused.flog").xml;
  const auto at = xml.find("<loop_functions type=\"border_churn\"");
  xml.replace(at, xml.find("/>", at) + 2 - at, "<loop_functions type=\"forgetful\"/>");
  Diagnostics d;
  ExperimentOverrides ov;
  ov.log_path = path("f.flog");
  auto ex = parse_experiment(xml, "swarm.xml", *reg, ov, d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), *reg);
  sim.enable_checkpoints([](Tick, std::uint64_t, std::vector<std::uint8_t>) {});
  try {
    sim.start();
    ADD_FAILURE() << "started";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("loop functions 'forgetful' cannot be checkpointed"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fleetsim
