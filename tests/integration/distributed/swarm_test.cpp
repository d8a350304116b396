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
#include "log/log_reader.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"
#include "swarm_scenario.hpp"

namespace fleetsim {
namespace {

using fleetsim::testing::slurp;
using testing::kScript;
using testing::random_scenario;
using testing::test_registry;

namespace fs = std::filesystem;
using distributed::LoadedExperiment;
using distributed::SyncMode;

class Swarm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir();
    script_ = path("stateful.lua");
    std::ofstream(script_) << kScript;
  }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }

  /// `defer`: the robots are placed by each process (ExperimentOverrides::defer_placement),
  /// as `fleetsim run` does on several processes.
  distributed::Loader loader(const std::string& xml, const std::string& log, bool defer = false) {
    return [xml, log, defer]() -> std::optional<LoadedExperiment> {
      auto reg = test_registry();
      Diagnostics d;
      ExperimentOverrides ov;
      ov.log_path = log;
      ov.defer_placement = defer;
      ov.defer_placement_from = 0;
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
                                               std::size_t part_bytes = std::size_t{32} << 20,
                                               bool partition = true) {
    distributed::SwarmRunOptions o;
    o.part_bytes = part_bytes;
    o.partition_storage = partition;
    o.processes = n;
    o.transport = distributed::TransportKind::kInproc;
    o.sync = sync;
    o.jitter_us = jitter;
    return distributed::run_swarm(loader(xml, log, defer_), o);
  }

  fs::path dir_;
  std::string script_;
  bool defer_ = false;  ///< many() loads with ExperimentOverrides::defer_placement
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
    // (Any number of processes: the regions are split over their domains.)
    std::vector<Case> cases = {{2, SyncMode::kDsaam, 300},
                               {2, SyncMode::kLockstep, 0, 700},
                               {3, SyncMode::kDsaam, 200, 500},
                               {4, SyncMode::kLockstep, 200}};
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

// One region (no <physics>), split over 2 to 5 domains: robots collide, sense and move across
// the domains' borders as on one process (the contact rounds, the handoffs), every process
// moves a share of the robots, and the loop functions' churn near the middle crosses the
// first cut.
TEST_F(Swarm, OneRegionSplitOverDomainsGivesOneProcessesBits) {
  for (std::uint64_t seed : {5u, 6u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto s = random_scenario(seed, script_, "unused.flog");
    testing::drop_physics(s.xml);
    const std::string ref_log = path("one-region-" + std::to_string(seed) + ".flog");
    const std::uint64_t ref = single(s.xml, ref_log);
    const std::string ref_bytes = slurp(ref_log);
    for (int n : {2, 3, 5}) {
      SCOPED_TRACE(std::to_string(n) + " processes");
      const std::string log =
          path("one-region-" + std::to_string(seed) + "-" + std::to_string(n) + ".flog");
      auto reports = many(s.xml, log, n, SyncMode::kDsaam, 100);
      ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
      int migrated = 0;
      for (const auto& r : reports) {
        ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
        EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
        EXPECT_GT(r.robot_steps, 0u) << "process " << r.process << " moved no robot";
        migrated += static_cast<int>(r.exchange.migrations_in);
      }
      EXPECT_GT(migrated, 10);
      EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
    }
  }
}

// Loop functions in the per-process form (border_churn_local: each process moves, removes and
// tags the robots it moves, one adds robots near the middle, the status is a sum): one region
// split over 2 to 4 domains gives one process's bits, and the moves carry only the robots near
// a border on the ticks the log does not keep (every third).
TEST_F(Swarm, PerProcessLoopFunctionsGiveOneProcessesBits) {
  for (std::uint64_t seed : {5u, 7u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto s = random_scenario(seed, script_, "unused.flog");
    testing::drop_physics(s.xml);
    s.xml.replace(s.xml.find("\"border_churn\""), 14, "\"border_churn_local\"");
    s.xml.replace(s.xml.find("<log path="), 10, "<log every=\"3\" path=");
    const std::string ref_log = path("local-" + std::to_string(seed) + ".flog");
    const std::uint64_t ref = single(s.xml, ref_log);
    const std::string ref_bytes = slurp(ref_log);
    ASSERT_GT(ref_bytes.size(), 1000u);
    for (int n : {2, 3, 4}) {
      SCOPED_TRACE(std::to_string(n) + " processes");
      const std::string log =
          path("local-" + std::to_string(seed) + "-" + std::to_string(n) + ".flog");
      auto reports = many(s.xml, log, n, n == 3 ? SyncMode::kLockstep : SyncMode::kDsaam, 100);
      ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
      std::uint64_t migrated = 0, sent = 0, steps = 0;
      for (const auto& r : reports) {
        ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
        EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
        EXPECT_TRUE(r.partitioned) << "process " << r.process;
        migrated += r.exchange.migrations_in;
        sent += r.exchange.halo_rows_sent;
        steps += r.robot_steps;
      }
      EXPECT_GT(migrated, 10u);
      // Every process holds its part, process 0 too (the log is written in blocks): fewer
      // robots over the run than the whole swarm (at some tick one may hold nearly all of a
      // small arena's: which ghosts it keeps is a matter of speed, not of the bits).
      for (const auto& r : reports)
        EXPECT_LT(r.exchange.held_robot_ticks, steps * 9 / 10) << "process " << r.process;
      // Only the robots near a border travel in the moves, on the ticks the log keeps too.
      EXPECT_GT(sent, 0u);
      EXPECT_LT(sent, steps * 9 / 10) << "the moves carried every robot on every tick";
      EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
    }
  }
}

// Robots that gather in the west make the domains' robot counts drift apart: the domains are
// made again (rebalanced) during the run, robots change process by the hundred, and the bits
// are still one process's.
TEST_F(Swarm, RebalancingTheDomainsKeepsOneProcessesBits) {
  auto s = random_scenario(8, script_, "unused.flog");
  testing::drop_physics(s.xml);
  const auto at = s.xml.find("<loop_functions");
  s.xml.replace(at, s.xml.find("/>", at) + 2 - at,
                "<loop_functions type=\"gather_west\" x=\"-1.5\"/>");
  const std::string ref_log = path("gather-one.flog");
  const std::uint64_t ref = single(s.xml, ref_log);
  const std::string ref_bytes = slurp(ref_log);
  for (int n : {2, 3}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    const std::string log = path("gather-" + std::to_string(n) + ".flog");
    auto reports = many(s.xml, log, n, SyncMode::kDsaam, 100);
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
      EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
      EXPECT_GT(r.exchange.rebalances, 0u) << "process " << r.process << " never rebalanced";
      EXPECT_EQ(r.exchange.rebalances, reports[0].exchange.rebalances);
    }
    EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
  }
}

// Without loop functions, each process sends the others only its robots near their domains
// (their halo reaches: proximity and contacts for the e-pucks, range-and-bearing and cameras
// for the foot-bots), except on the ticks the log keeps (every 4th), which carry every robot:
// the bits are still one process's, and far fewer robots travel.
TEST_F(Swarm, WithoutLoopFunctionsOnlyTheRobotsNearABorderTravel) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"10\" seed=\"4\"/>\n"
      "  <controllers>\n"
      "    <controller id=\"d\" type=\"diffusion\" speed=\"0.12\"/>\n"
      "    <controller id=\"w\" type=\"random_walk\" speed=\"0.12\" turn_probability=\"0.2\"/>\n"
      "    <controller id=\"s\" type=\"lua\" script=\"" +
      script_ +
      "\"/>\n"
      "  </controllers>\n"
      "  <arena size=\"48,3\">\n"
      "    <wall from=\"-1,-1\" to=\"1,1\"/>\n"
      "    <distribute count=\"150\" kind=\"epuck\" controller=\"d\" id_prefix=\"d\"/>\n"
      "    <distribute count=\"150\" kind=\"epuck\" controller=\"w\" id_prefix=\"w\"/>\n"
      "    <distribute count=\"40\" kind=\"footbot\" controller=\"s\" id_prefix=\"f\"/>\n"
      "  </arena>\n"
      "  <log path=\"unused.flog\" every=\"4\"/>\n"
      "</fleetsim>\n";
  const std::string ref_log = path("near-one.flog");
  const std::uint64_t ref = single(xml, ref_log);
  const std::string ref_bytes = slurp(ref_log);
  for (int n : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    const std::string log = path("near-" + std::to_string(n) + ".flog");
    auto reports = many(xml, log, n, SyncMode::kDsaam, 100);
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
    std::uint64_t sent = 0;
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
      EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
      sent += r.exchange.halo_rows_sent;
    }
    EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
    // On every tick, the ticks the log keeps too (its frames are written in blocks), only the
    // robots within the foot-bots' 3 m of range and bearing and cameras (and a tick's motion)
    // of another domain: fewer than half (a 6.6 m strip across each of the n - 1 cuts of a
    // 48 m arena).
    const std::uint64_t all = 340u * 100u;
    EXPECT_GE(sent, all / 20) << "no robot near a border travelled";
    EXPECT_LT(sent, all / 2) << "robots far from every border travelled";
  }
}

// Issue 28: a partitioned run's frame log is written in blocks of ids by every process, each
// block where most of its robots are, and process 0 writes the blocks it is sent: it holds its
// part only, as the others do, and the file is the one-process log, byte for byte. The robots
// are placed at random, so each block's robots are spread over every process's domain.
TEST_F(Swarm, APartitionedRunsLogIsWrittenInBlocksWithTheOneProcessBytes) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"2\" seed=\"5\"/>\n"
      "  <controllers><controller id=\"d\" type=\"diffusion\" speed=\"0.2\"/></controllers>\n"
      "  <arena size=\"80,20\">\n"
      "    <distribute count=\"10000\" kind=\"epuck\" controller=\"d\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n";
  const std::string ref_log = path("one.flog");
  const std::uint64_t ref = single(xml, ref_log);
  const std::string ref_bytes = slurp(ref_log);
  for (int n : {2, 3}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    const std::string log = path("many-" + std::to_string(n) + ".flog");
    auto reports = many(xml, log, n, SyncMode::kDsaam, 100);
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
      EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
      EXPECT_TRUE(r.partitioned) << "process " << r.process;
      // Its domain's robots and those within reach of it, never the whole swarm: process 0 too.
      EXPECT_LT(r.exchange.held_robots_max, 10000u / n + 1500u) << "process " << r.process;
    }
    EXPECT_TRUE(slurp(log) == ref_bytes) << "the log differs from the one-process run's";
  }
  auto reader = log::LogReader::open(ref_log);
  ASSERT_EQ(reader->frame_count(), 21u);  // ticks 0 to 20
  EXPECT_EQ(reader->read_frame(20).robot_count, 10000u);
}

// A run without a log, split over 2 and 4 domains across a long arena: each process holds the
// robots it moves and those within reach of its domain (the foot-bots' 3 m of range and
// bearing and cameras), not the whole world, and the bits are one process's. Holding the whole
// world everywhere (partition_storage off) gives them too.
TEST_F(Swarm, EachProcessHoldsOnlyItsPartOfTheWorld) {
  // Foot-bots that steer by what they hear and see up to 3 m away: a robot dropped while
  // within reach would change their course.
  const std::string far = path("far.lua");
  std::ofstream(far) << R"(
function init() robot.colored_blob_omnidirectional_camera.enable() end
function step()
  robot.range_and_bearing.set_data(1, robot.id:byte(-1))
  local turn = 0
  for _, m in ipairs(robot.range_and_bearing) do
    turn = turn + m.horizontal_bearing * m.range / 300 + m.data[1] / 255
  end
  for _, b in ipairs(robot.colored_blob_omnidirectional_camera) do
    turn = turn + b.angle * b.distance / 300
  end
  -- The lists' order counts too (by sender id, by owner id): the first of each steers.
  local m = robot.range_and_bearing[1]
  if m then turn = turn + 2 * math.sin(m.horizontal_bearing * 7 + m.data[1]) end
  local b = robot.colored_blob_omnidirectional_camera[1]
  if b then turn = turn + 2 * math.cos(b.angle * 5) end
  turn = math.max(-4, math.min(4, turn))
  robot.wheels.set_velocity(6 - turn, 6 + turn)
  robot.leds.set_all_colors(#robot.range_and_bearing % 2 == 0 and "green" or "red")
end
)";
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"8\" seed=\"11\"/>\n"
      "  <controllers>\n"
      "    <controller id=\"d\" type=\"diffusion\" speed=\"0.12\"/>\n"
      "    <controller id=\"s\" type=\"lua\" script=\"" +
      far +
      "\"/>\n"
      "  </controllers>\n"
      "  <arena size=\"48,3\">\n"
      "    <distribute count=\"250\" kind=\"epuck\" controller=\"d\" id_prefix=\"d\"/>\n"
      "    <distribute count=\"150\" kind=\"footbot\" controller=\"s\" id_prefix=\"f\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n";
  const std::uint64_t ref = single(xml, "");
  defer_ = true;  // each process places its part, as `fleetsim run --processes N` does
  for (int n : {2, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    auto reports = many(xml, "", n, SyncMode::kDsaam, 100);
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
    std::uint64_t migrated = 0;
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
      EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
      EXPECT_EQ(r.robots, 400u);
      EXPECT_TRUE(r.partitioned) << "process " << r.process;
      // Its domain (48 / n m) and 3.3 m of reach on each side of it, of 48 m.
      EXPECT_LT(r.exchange.held_robots_max, 400u / n + 100u) << "process " << r.process;
      EXPECT_GT(r.exchange.held_robots_max, 400u / n / 2) << "process " << r.process;
      // It placed only its part at the start, never the whole swarm.
      EXPECT_LT(r.exchange.placed_robots, 400u / n + 150u) << "process " << r.process;
      EXPECT_GT(r.exchange.placed_robots, 400u / n / 2) << "process " << r.process;
      migrated += r.exchange.migrations_in;
    }
    EXPECT_GT(migrated, 0u) << "no robot crossed a border";
  }
  defer_ = false;
  auto whole = many(xml, "", 3, SyncMode::kDsaam, 0, std::size_t{32} << 20, /*partition=*/false);
  for (const auto& r : whole) {
    ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
    EXPECT_EQ(r.state_hash, ref);
    EXPECT_FALSE(r.partitioned);
    EXPECT_EQ(r.exchange.held_robots_max, 400u);
    EXPECT_EQ(r.exchange.placed_robots, 0u);  // (the load placed them: not deferred)
  }
}

// Loop functions in the per-process form that make robots jump from the east end of a long
// arena to its west end: on 4 processes (strips of 12 m, each the neighbour of the next only)
// a robot lands in a domain far from its own, so its handoff's record cannot go to the
// neighbours alone (docs/distributed.md, "`H`, handoff"). The bits are one process's.
TEST_F(Swarm, RobotsJumpingToAFarDomainArriveWithOneProcessesBits) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"6\" seed=\"3\"/>\n"
      "  <controllers><controller id=\"d\" type=\"diffusion\" speed=\"0.12\"/></controllers>\n"
      "  <loop_functions type=\"gather_west_local\" x=\"-20\"/>\n"
      "  <arena size=\"48,3\">\n"
      "    <distribute count=\"300\" kind=\"epuck\" controller=\"d\" id_prefix=\"d\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n";
  const std::uint64_t ref = single(xml, "");
  for (int n : {3, 4}) {
    SCOPED_TRACE(std::to_string(n) + " processes");
    auto reports = many(xml, "", n, SyncMode::kDsaam, 100);
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
    std::uint64_t out_of_east = 0, into_west = 0;
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
      EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
      EXPECT_TRUE(r.partitioned) << "process " << r.process;
      if (r.process == n - 1) out_of_east = r.exchange.migrations_out;
      if (r.process == 0) into_west = r.exchange.migrations_in;
    }
    // (The east strip's robots all jump west in time; the west strip takes them in.)
    EXPECT_GT(out_of_east, 20u);
    EXPECT_GT(into_west, 20u);
  }
}

// The same with rigid-body physics: dynamics2d keeps velocities in its own columns, which
// travel with a robot that changes process, so its regions split over processes give the
// same bits too.
TEST_F(Swarm, Dynamics2dRegionsOnTwoAndThreeProcessesGiveOneProcessesBits) {
  for (std::uint64_t seed : {2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto s = random_scenario(seed, script_, "unused.flog");
    for (std::size_t at; (at = s.xml.find("<kinematics2d ")) != std::string::npos;)
      s.xml.replace(at, 14, "<dynamics2d sub_steps=\"2\" ");
    const std::string ref_log = path("d2-one-" + std::to_string(seed) + ".flog");
    const std::uint64_t ref = single(s.xml, ref_log);
    const std::string ref_bytes = slurp(ref_log);
    for (int n = 2; n <= std::min(3, s.regions); ++n) {
      const std::string log =
          path("d2-many-" + std::to_string(seed) + "-" + std::to_string(n) + ".flog");
      auto reports = many(s.xml, log, n, SyncMode::kDsaam, 200);
      ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
      int migrated = 0;
      for (const auto& r : reports) {
        ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
        EXPECT_EQ(r.state_hash, ref) << "process " << r.process << " of " << n;
        migrated += static_cast<int>(r.exchange.migrations_in);
      }
      EXPECT_GT(migrated, 0);
      EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
    }
  }
}

// Several engine types in one run: ground robots in two dynamics2d regions with cylinders to
// push, flyers in one pointmass3d region over the arena, on one process and on two and three
// (each process holding whole regions of any type).
TEST_F(Swarm, MixedEngineTypesOnSeveralProcessesGiveOneProcessesBits) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"12\" seed=\"9\"/>\n"
      "  <controllers>\n"
      "    <controller id=\"d\" type=\"diffusion\" rule=\"argos\"/>\n"
      "    <controller id=\"walk\" type=\"random_walk\"/>\n"
      "    <controller id=\"fly\" type=\"lua\" script=\"" +
      path("fly.lua") +
      "\"/>\n"
      "  </controllers>\n"
      "  <arena size=\"6,6\">\n"
      "    <distribute count=\"120\" kind=\"footbot\" controller=\"d\" id_prefix=\"f\"/>\n"
      "    <distribute count=\"30\" kind=\"cylinder\" id_prefix=\"c\"/>\n"
      "    <distribute count=\"40\" controller=\"walk\" id_prefix=\"e\"/>\n"
      "    <distribute count=\"10\" kind=\"eyebot\" controller=\"fly\" id_prefix=\"y\"/>\n"
      "  </arena>\n"
      "  <physics>\n"
      "    <dynamics2d id=\"w\" region=\"-3,-3,0,3\"/>\n"
      "    <dynamics2d id=\"e\" region=\"0,-3,3,3\"/>\n"
      "    <pointmass3d id=\"air\"/>\n"
      "  </physics>\n"
      "</fleetsim>\n";
  // Flyers climb, then wander at random over the ground robots, relaying what they hear.
  std::ofstream(path("fly.lua")) << R"(
function init() end
function step()
  local r = robot.random.uniform()
  robot.quadrotor.set_linear_velocity(robot.random.uniform(-1, 1), robot.random.uniform(-1, 1),
                                       r < 0.5 and 0.3 or -0.1)
  robot.quadrotor.set_rotational_speed(0.2)
  if #robot.range_and_bearing > 0 then
    robot.range_and_bearing.set_data(robot.range_and_bearing[1].data)
  end
end
function reset() end
function destroy() end
)";
  const std::string ref_log = path("mixed-one.flog");
  const std::uint64_t ref = single(xml, ref_log);
  const std::string ref_bytes = slurp(ref_log);
  for (int n : {2, 3}) {
    const std::string log = path("mixed-" + std::to_string(n) + ".flog");
    auto reports = many(xml, log, n, SyncMode::kDsaam, 150);
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(n));
    for (const auto& r : reports) {
      ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
      EXPECT_EQ(r.state_hash, ref) << "process " << r.process << " of " << n;
    }
    EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
  }
}

// Regions of a type that does not split over domains (dynamics2d) go whole to one process: no
// more processes than such regions.
TEST_F(Swarm, MoreProcessesThanWholeRegionsIsRefusedBeforeAnythingStarts) {
  auto s = random_scenario(1, script_, path("x.flog"));
  ASSERT_EQ(s.regions, 2) << "seed 1 gives two strips";
  for (std::size_t at; (at = s.xml.find("<kinematics2d ")) != std::string::npos;)
    s.xml.replace(at, 14, "<dynamics2d ");
  try {
    many(s.xml, path("x.flog"), 3, SyncMode::kDsaam, 0);
    FAIL() << "3 processes for 2 dynamics2d regions ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 processes but this run can use at most 2 (its 2 "
                                         "physics engine regions each go whole to one process"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path("x.flog")));
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
  EXPECT_NE(reports[0].error.find("pin its robots to one process"), std::string::npos)
      << "the message says what to do: " << reports[0].error;

  // Pinned to process 0 (an affinity), the robot's controller never moves: the run goes on
  // although the controller cannot save its state, and gives one process's bits.
  const auto load_pinned = [&](const std::string& text) {
    return [text]() -> std::optional<LoadedExperiment> {
      auto reg = test_registry();
      reg->add_controller({PluginKind::kController, "forgetful", "test", {}},
                          [] { return std::make_unique<Forgetful>(); });
      Diagnostics d;
      auto ex = parse_experiment(text, "f.xml", *reg, {}, d);
      if (!ex) {
        ADD_FAILURE() << d.str();
        return std::nullopt;
      }
      return LoadedExperiment{std::move(*ex), std::move(reg)};
    };
  };
  std::string pinned = xml;
  pinned.replace(pinned.find("</fleetsim>"), 0,
                 "  <distribution><process regions=\"west\" robots=\"crosser\"/>"
                 "<process regions=\"east\"/></distribution>\n");
  auto one = load_pinned(pinned)();
  ASSERT_TRUE(one);
  Simulation sim(std::move(one->experiment), *one->registry);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  auto two = distributed::run_swarm(load_pinned(pinned), o);
  for (const auto& r : two) {
    ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
    EXPECT_EQ(r.state_hash, sim.state().hash());
  }
  EXPECT_GT(sim.state().x()[0], 0.3) << "the robot crossed into the east region";
  EXPECT_EQ(two[0].robot_steps, 200u) << "process 0 ran the robot's controller every tick";
  EXPECT_EQ(two[1].robot_steps, 0u);
}

// Affinities (Gazebo's): kinds and robots whose sensors, controllers and actuators one process
// runs wherever they are, while each region's process keeps its physics. Every epuck pinned
// to process 0 except a few named ones pinned to process 1, over regions that both processes
// simulate: the same bits as one process, in DSAAM and lockstep, with kinematic and rigid-body
// physics (whose velocities must travel with the rows each tick).
TEST_F(Swarm, AffinitiesRunControllersOnTheirProcessAndGiveOneProcessesBits) {
  for (std::uint64_t seed : {1u, 2u}) {
    for (bool rigid : {false, true}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (rigid ? ", dynamics2d" : ""));
      auto s = random_scenario(seed, script_, "unused.flog");
      if (rigid)
        for (std::size_t at; (at = s.xml.find("<kinematics2d ")) != std::string::npos;)
          s.xml.replace(at, 14, "<dynamics2d sub_steps=\"2\" ");
      const std::string ref_log = path("aff-one.flog");
      const std::uint64_t ref = single(s.xml, ref_log);
      const std::string ref_bytes = slurp(ref_log);
      s.xml.replace(s.xml.find("  <loop_functions"), 0,
                    "  <distribution>\n    <process kinds=\"epuck\"/>\n"
                    "    <process robots=\"w0 w3 s1 s2, d5\"/>\n  </distribution>\n");
      for (SyncMode sync : {SyncMode::kDsaam, SyncMode::kLockstep}) {
        const std::string log = path("aff-two.flog");
        auto reports = many(s.xml, log, 2, sync, sync == SyncMode::kDsaam ? 200 : 0, 900);
        ASSERT_EQ(reports.size(), 2u);
        for (const auto& r : reports) {
          ASSERT_TRUE(r.ok) << "process " << r.process << ": " << r.error;
          EXPECT_EQ(r.state_hash, ref) << "process " << r.process;
          EXPECT_FALSE(r.regions.empty()) << "the regions are still assigned automatically";
        }
        EXPECT_TRUE(slurp(log) == ref_bytes) << "the frame log differs from one process's";
        // Process 1 runs its five robots only (every tick they exist); process 0 all others.
        EXPECT_GT(reports[1].robot_steps, 0u);
        EXPECT_LE(reports[1].robot_steps, 5u * reports[1].ticks);
        EXPECT_GT(reports[0].robot_steps, 20u * reports[0].ticks);
        // Pinned controllers never move (no handoffs), though robots cross regions often.
        EXPECT_EQ(reports[0].exchange.migrations_in + reports[1].exchange.migrations_in, 0u);
      }
    }
  }
  // Unknown kinds and robots, a kind pinned twice: every problem at once, at its line.
  auto s = random_scenario(1, script_, path("x.flog"));
  s.xml.replace(s.xml.find("  <loop_functions"), 0,
                "  <distribution>\n    <process kinds=\"epuck footbott\"/>\n"
                "    <process kinds=\"epuck\" robots=\"w0 nobody\"/>\n  </distribution>\n");
  auto reg = test_registry();
  Diagnostics d;
  EXPECT_FALSE(parse_experiment(s.xml, "bad.xml", *reg, {}, d));
  const std::string text = d.str();
  EXPECT_NE(text.find("unknown robot kind 'footbott'"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'footbot'"), std::string::npos) << text;
  EXPECT_NE(text.find("kind 'epuck' is already pinned to process 0"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown robot 'nobody'"), std::string::npos) << text;
}

}  // namespace
}  // namespace fleetsim
