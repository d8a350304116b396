// `mpirun -n P fleetsim run EXPERIMENT` as a cluster user meets it (docs/distributed.md, "On a
// cluster: MPI"): the examples and random experiments give the one-process log on 2, 3, 4 and 8
// ranks; rank 0 alone
// prints; too many ranks, a rank with other files, --processes under mpirun are user errors said
// once; a rank whose controller fails stops the run naming it; a killed or stopped rank ends
// the job with no process left; rank 0 serves --view, and an intervention from it lands on
// every rank.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "log/log_reader.hpp"
#include "support/crossing_scene.hpp"
#include "support/processes.hpp"
#include "support/test_files.hpp"
#include "swarm_scenario.hpp"

namespace fleetsim {
namespace {

using fleetsim::testing::slurp;
namespace fs = std::filesystem;

const std::string kSrc = FLEETSIM_SOURCE_DIR;
const std::string kFleetsim = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim";
const std::string kDiffusion = kSrc + "/examples/diffusion/diffusion.xml";
const std::string kFootbot = kSrc + "/examples/footbot/aggregation.xml";
// (Root may run mpirun only when it says so; this machine's 2 cores hold more ranks. Up to 8
// ranks share them beside the other tests: the watchdog waits 5 s of silence before it takes a
// rank for hung, not 0.5 s, except in the test of a stopped rank.)
const std::string kMpirun =
    "env FLEETSIM_MPI_SILENCE_MS=5000 mpirun --allow-run-as-root --oversubscribe";

using Result = fleetsim::testing::CommandResult;

class Mpi : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fleetsim::testing::fresh_test_dir(); }
  /// The URL a job started with --view prints in job.out; empty, the job stopped and its output
  /// reported as a failure, when it prints none.
  std::string view_url(pid_t job) {
    const std::string url = fleetsim::testing::wait_for_view_url(path("job.out"), 6000);
    if (url.empty()) {
      kill(job, SIGTERM);
      fleetsim::testing::wait_for(job, std::chrono::seconds(30));
      ADD_FAILURE() << slurp(path("job.out")) << slurp(path("job.err"));
    }
    return url;
  }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  Result shell(const std::string& command) { return fleetsim::testing::run_command(command, dir_); }
  Result mpirun(int ranks, const std::string& args) {
    return shell(kMpirun + " -n " + std::to_string(ranks) + " " + kFleetsim + " run " + args);
  }
  static std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  fs::path dir_;
};

TEST_F(Mpi, TheExamplesOnSeveralRanksWriteTheOneProcessLog) {
  for (const std::string& example : {kDiffusion, kFootbot}) {
    SCOPED_TRACE(example);
    const std::string common = example + " --threads 1 --length 20";
    ASSERT_EQ(shell(kFleetsim + " run " + common + " --quiet --log " + path("one.flog")).status, 0);
    // (8 ranks on this machine's 2 cores: oversubscribed, slow, the same bits.)
    for (int ranks : {2, 3, 4, 8}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks");
      Result r = mpirun(ranks, common + " --json --log " + path("mpi.flog"));
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_TRUE(slurp(path("mpi.flog")) == slurp(path("one.flog")))
          << "the log of " << ranks << " ranks differs from one process's";
      // Rank 0 alone prints: one summary line, one JSON object, naming every rank.
      EXPECT_EQ(count(r.out, " ticks, "), 1u) << r.out;
      const auto j = nlohmann::json::parse(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1));
      EXPECT_EQ(j["processes"], ranks);
      EXPECT_EQ(j["transport"], "mpi");
      EXPECT_EQ(j["per_process"].size(), static_cast<std::size_t>(ranks));
    }
  }
}

// Random experiments whose robots cross the middle often, whose loop functions add, move and
// remove robots near it and set tags (border_churn, and border_churn_local in the per-process
// form, from a plug-in library), with per-robot
// C++ and Lua controllers that carry state: the one-process log and state hash on 2, 3, 4 and
// 8 ranks.
TEST_F(Mpi, RandomExperimentsOnSeveralRanksGiveTheOneProcessBits) {
  std::ofstream(path("stateful.lua")) << fleetsim::testing::kScript;
  for (std::uint64_t seed : {1u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto s = fleetsim::testing::random_scenario(seed, path("stateful.lua"), "unused.flog",
                                                BORDER_CHURN_PLUGIN);
    // Seed 3: the loop functions in the per-process form.
    if (seed == 3) s.xml.replace(s.xml.find("\"border_churn\""), 14, "\"border_churn_local\"");
    const std::string xml = path("random-" + std::to_string(seed) + ".xml");
    std::ofstream(xml) << s.xml;
    Result one = shell(kFleetsim + " run " + xml + " --quiet --json --log " + path("one.flog"));
    ASSERT_EQ(one.status, 0) << one.err;
    const auto ref =
        nlohmann::json::parse(one.out.substr(one.out.rfind('\n', one.out.size() - 2) + 1));
    const std::string ref_log = slurp(path("one.flog"));
    ASSERT_GT(ref_log.size(), 1000u);
    for (int ranks : {2, 3, 4, 8}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks");
      Result r = mpirun(ranks, xml + " --quiet --json --log " + path("mpi.flog"));
      ASSERT_EQ(r.status, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1));
      EXPECT_EQ(j["state_hash"], ref["state_hash"]);
      EXPECT_EQ(j["robots"], ref["robots"]);
      std::uint64_t migrated = 0;
      for (const auto& p : j["per_process"]) migrated += p["migrations_in"].get<std::uint64_t>();
      EXPECT_GT(migrated, 0u) << "no robot changed rank";
      EXPECT_TRUE(slurp(path("mpi.flog")) == ref_log)
          << "the log of " << ranks << " ranks differs from one process's";
    }
  }
}

// A swarm large enough that no rank loads it whole (docs/distributed.md, "The start"): each
// rank places only the tiles near its domain, fewer than half the robots on 4 ranks, and the
// state hash is one process's; with a log too, rank 0 among them (the log is written in
// blocks), and the log's bytes are one process's.
TEST_F(Mpi, ALargeSwarmIsPlacedByEachRankForItsPartWithTheOneProcessBits) {
  const std::string xml = path("large.xml");
  std::ofstream(xml)
      << "<fleetsim><framework ticks_per_second=\"10\" length=\"2\" seed=\"5\"/>\n"
         "<controllers><controller id=\"c\" type=\"diffusion\"/></controllers>\n"
         "<arena size=\"60,40\"><wall from=\"-10,-10\" to=\"10,10\"/>\n"
         "<distribute count=\"20000\" controller=\"c\" id_prefix=\"a\"/>\n"
         "<robot id=\"solo\" controller=\"c\" position=\"1.5,-3\"/>\n"
         "<distribute count=\"6000\" kind=\"footbot\" controller=\"c\" id_prefix=\"f\" "
         "region=\"-30,-20,0,20\"/></arena></fleetsim>\n";
  Result one =
      shell(kFleetsim + " run " + xml + " --threads 1 --quiet --json --log " + path("one.flog"));
  ASSERT_EQ(one.status, 0) << one.err;
  const auto ref =
      nlohmann::json::parse(one.out.substr(one.out.rfind('\n', one.out.size() - 2) + 1));
  Result r = mpirun(4, xml + " --threads 1 --quiet --json --log ''");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1));
  EXPECT_EQ(j["state_hash"], ref["state_hash"]);
  std::uint64_t placed = 0;
  for (const auto& p : j["per_process"]) {
    EXPECT_TRUE(p["partitioned"].get<bool>());
    EXPECT_GT(p["placed_robots"].get<std::uint64_t>(), 0u);
    EXPECT_LT(p["placed_robots"].get<std::uint64_t>(), 26001u / 2) << p.dump();
    placed += p["placed_robots"].get<std::uint64_t>();
    // No array by robot id over the whole swarm: its tables by id hold pages of the ids it
    // holds (about a third of the swarm here, with its ghosts), well under the 8 bytes per id
    // of the swarm that the row, the runner and the mover of every id would take.
    EXPECT_LT(p["id_table_bytes"].get<std::uint64_t>(), 26001u * 8 * 3 / 4) << p.dump();
  }
  EXPECT_GE(placed, 26001u) << "every robot placed by some rank";
  Result logged = mpirun(3, xml + " --threads 1 --quiet --json --log " + path("mpi.flog"));
  ASSERT_EQ(logged.status, 0) << logged.err;
  EXPECT_TRUE(slurp(path("mpi.flog")) == slurp(path("one.flog")))
      << "the log of 3 ranks differs from one process's";
  // Rank 0 too placed and held its part only: the log's header and frames came in blocks.
  const auto l =
      nlohmann::json::parse(logged.out.substr(logged.out.rfind('\n', logged.out.size() - 2) + 1));
  for (const auto& p : l["per_process"]) {
    EXPECT_TRUE(p["partitioned"].get<bool>()) << p.dump();
    EXPECT_LT(p["placed_robots"].get<std::uint64_t>(), 26001u * 2 / 3) << p.dump();
    EXPECT_LT(p["held_robots_max"].get<std::uint64_t>(), 26001u * 2 / 3) << p.dump();
  }
}

TEST_F(Mpi, BadStartsAreUserErrorsSaidOnce) {
  // More ranks than the run can use (a domain per robot at the start at most): how many it can.
  fleetsim::testing::write_three_robots(path("three.xml"));
  Result many = mpirun(4, path("three.xml") + " --quiet");
  EXPECT_NE(many.status, 0);
  EXPECT_EQ(count(many.err, "4 processes but this run can use at most 3"), 1u) << many.err;
  EXPECT_NE(many.err.find("give mpirun -n 3 or fewer"), std::string::npos) << many.err;
  // A rank that runs another experiment file: named, with the file.
  fs::copy(kDiffusion, path("other.xml"));
  fs::copy(kSrc + "/examples/diffusion/rooms.png", path("rooms.png"));
  std::ofstream(path("other.xml"), std::ios::app) << "<!-- changed -->\n";
  Result other = shell(kMpirun + " -n 1 " + kFleetsim + " run " + kDiffusion + " --quiet : -n 1 " +
                       kFleetsim + " run " + path("other.xml") + " --quiet");
  EXPECT_NE(other.status, 0);
  EXPECT_EQ(count(other.err, "rank 1 ("), 1u) << other.err;
  EXPECT_NE(other.err.find("the experiment file diffusion.xml differs"), std::string::npos)
      << other.err;
  // A rank whose file does not load: rank 0 names it (the rank itself prints nothing).
  std::ofstream(path("broken.xml")) << "<fleetsim>\n";
  Result broken = shell(kMpirun + " -n 1 " + kFleetsim + " run " + kDiffusion + " --quiet : -n 1 " +
                        kFleetsim + " run " + path("broken.xml") + " --quiet");
  EXPECT_NE(broken.status, 0);
  EXPECT_EQ(count(broken.err, "rank 1 ("), 1u) << broken.err;
  EXPECT_NE(broken.err.find("could not load the experiment"), std::string::npos) << broken.err;
  // The ranks are the processes.
  Result both = mpirun(2, kDiffusion + " --quiet --processes 2");
  EXPECT_NE(both.status, 0);
  EXPECT_EQ(count(both.err, "give neither --processes nor --network-role"), 1u) << both.err;
}

// A rank whose controller fails: the run stops on every rank at its next round, the cause first
// (the rank and its region, the tick, the script's error), the other rank after it naming rank 0
// and its host; rank 0's log is complete to its last frame.
TEST_F(Mpi, ARankWhoseControllerFailsStopsTheRunNamingIt) {
  fs::copy(kSrc + "/examples/footbot", dir_ / "fb");
  fleetsim::testing::pin_regions(path("fb/aggregation.xml"));
  std::ofstream(path("fb/aggregation.lua"), std::ios::app)
      << "\nlocal base_step = step\nticks = 0\nfunction step()\n  ticks = ticks + 1\n"
         "  if ticks == 30 and robot.positioning.position.x > 0 then error(\"east gives up\") end\n"
         "  base_step()\nend\n";
  Result r = mpirun(2, path("fb/aggregation.xml") + " --threads 1 --log " + path("f.flog"));
  EXPECT_NE(r.status, 0) << r.err;
  const std::string first = r.err.substr(0, r.err.find('\n'));
  EXPECT_NE(first.find("error: process 0 (east): tick 29"), std::string::npos) << r.err;
  EXPECT_NE(first.find("east gives up"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("then process 1 (west): "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 0 ("), std::string::npos) << r.err;
  auto reader = log::LogReader::open(path("f.flog"));
  EXPECT_GE(reader->frame_count(), 25u);
  EXPECT_LE(reader->frame_count(), 31u);
}

// kill -9 of a rank: mpirun ends the job naming the rank and its host; SIGSTOP of a rank: the
// next rank's watchdog misses its heartbeats and ends the job naming it, its host and its tick.
// Either way a non-zero status, and no rank is left behind.
TEST_F(Mpi, AKilledOrStoppedRankEndsTheJobWithNoProcessLeft) {
  for (int sig : {SIGKILL, SIGSTOP}) {
    SCOPED_TRACE(strsignal(sig));
    const pid_t job = fleetsim::testing::spawn_with_output(
        "/usr/bin/mpirun",
        {"--allow-run-as-root", "--oversubscribe", "-n", "2", kFleetsim, "run", kDiffusion,
         "--threads", "1", "--length", "100000", "--quiet", "--log", path("k.flog")},
        path("k.out"), path("k.err"));
    const std::vector<pid_t> ranks = fleetsim::testing::wait_for_children(job, 2);
    ASSERT_EQ(ranks.size(), 2u);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the run is under way
    kill(ranks[1], sig);
    const int status = fleetsim::testing::wait_for(job, std::chrono::seconds(60));
    EXPECT_NE(status, 0);
    const std::string err = slurp(path("k.err"));
    EXPECT_NE(err.find("rank 1"), std::string::npos) << err;
    if (sig == SIGSTOP) {
      EXPECT_NE(err.find("stopped answering at tick "), std::string::npos) << err;
    }
    // (mpirun's ranks are reparented when it exits: give their new parent a moment to reap
    // them.)
    for (pid_t r : ranks) {
      bool gone = false;
      for (int t = 0; t < 100 && !gone; ++t) {
        std::ifstream stat("/proc/" + std::to_string(r) + "/stat");
        std::string pid, name, state;
        gone = !(stat >> pid >> name >> state) || state == "Z";
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      EXPECT_TRUE(gone) << "rank process " << r << " is still there";
      if (!gone) kill(r, SIGKILL);
    }
    // Rank 0's log is readable to its last complete frame.
    auto reader = log::LogReader::open(path("k.flog"));
    EXPECT_GT(reader->frame_count(), 0u);
  }
}

// `--view` under mpirun: rank 0 serves the page (one URL printed), a paused rank 0 holds the
// others, a move from `fleetsim control` lands on both ranks at the next tick boundary, and
// the recorded file replays on one process with the job's log bytes and hash.
TEST_F(Mpi, RankZeroServesTheViewAndAnInterventionLandsOnEveryRank) {
  const pid_t job = fleetsim::testing::spawn_with_output("/usr/bin/env",
                                                         {"FLEETSIM_MPI_SILENCE_MS=5000",
                                                          "mpirun",
                                                          "--allow-run-as-root",
                                                          "--oversubscribe",
                                                          "-n",
                                                          "2",
                                                          kFleetsim,
                                                          "run",
                                                          kDiffusion,
                                                          "--threads",
                                                          "1",
                                                          "--length",
                                                          "20",
                                                          "--view",
                                                          "--port",
                                                          "0",
                                                          "--view-paused",
                                                          "--json",
                                                          "--log",
                                                          path("mpi.flog"),
                                                          "--record-interventions",
                                                          path("session.interventions")},
                                                         path("job.out"), path("job.err"));
  const std::string url = view_url(job);
  if (url.empty()) return;
  for (const char* command : {" step", " move 3 1.5 2.25 0.5", " step"}) {
    Result r = shell(kFleetsim + " control " + url + command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  }
  for (int i = 0;
       i < 1000 && slurp(path("session.interventions")).find("move 3") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Result r = shell(kFleetsim + " control " + url + " play");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(fleetsim::testing::wait_for(job, std::chrono::seconds(180)), 0)
      << slurp(path("job.err"));
  const std::string out = slurp(path("job.out"));
  EXPECT_EQ(count(out, "watch and control it at"), 1u) << out;
  EXPECT_NE(slurp(path("session.interventions")).find("\n2 move 3 1.5 2.25 0.5\n"),
            std::string::npos)
      << slurp(path("session.interventions"));
  const auto hash_of = [](const std::string& text) {
    return nlohmann::json::parse(text.substr(text.rfind("\n{") + 1))["state_hash"];
  };
  Result replay =
      shell(kFleetsim + " run " + kDiffusion + " --threads 1 --length 20 --quiet --json --log " +
            path("one.flog") + " --interventions " + path("session.interventions"));
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(hash_of(replay.out), hash_of(out));
  EXPECT_TRUE(slurp(path("one.flog")) == slurp(path("mpi.flog"))) << "the replay differs";
}

// Under mpirun, a global of the script of a robot whose controller rank 1 runs is set there
// (rank 0 announces it, rank 1 replies, rank 0 records it), and the recorded file replays on
// one process with the job's log bytes and hash.
TEST_F(Mpi, AScriptGlobalOfARobotOnRankOneLandsThereAndReplays) {
  fleetsim::testing::write_crossing_scene(dir_, 3);
  const pid_t job = fleetsim::testing::spawn_with_output("/usr/bin/env",
                                                         {"FLEETSIM_MPI_SILENCE_MS=5000",
                                                          "mpirun",
                                                          "--allow-run-as-root",
                                                          "--oversubscribe",
                                                          "-n",
                                                          "2",
                                                          kFleetsim,
                                                          "run",
                                                          path("cross.xml"),
                                                          "--threads",
                                                          "1",
                                                          "--view",
                                                          "--view-steer",
                                                          "--port",
                                                          "0",
                                                          "--view-paused",
                                                          "--json",
                                                          "--log",
                                                          path("mpi.flog"),
                                                          "--record-interventions",
                                                          path("session.interventions")},
                                                         path("job.out"), path("job.err"));
  const std::string url = view_url(job);
  if (url.empty()) return;
  for (const char* command : {" param 2 speed 10", " step"}) {
    Result r = shell(kFleetsim + " control " + url + command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  }
  for (int i = 0;
       i < 1000 && slurp(path("session.interventions")).find("param 2") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Result r = shell(kFleetsim + " control " + url + " play");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(fleetsim::testing::wait_for(job, std::chrono::seconds(180)), 0)
      << slurp(path("job.err"));
  const std::string err = slurp(path("job.err"));
  EXPECT_NE(err.find("process 1 runs its controller and checks it"), std::string::npos) << err;
  EXPECT_NE(slurp(path("session.interventions")).find("\n1 param 2 speed 10\n"), std::string::npos)
      << slurp(path("session.interventions"));
  const auto hash_of = [](const std::string& text) {
    return nlohmann::json::parse(text.substr(text.rfind("\n{") + 1))["state_hash"];
  };
  const std::string common = " run " + path("cross.xml") + " --threads 1 --quiet --json --log ";
  Result still = shell(kFleetsim + common + path("still.flog"));
  ASSERT_EQ(still.status, 0) << still.err;
  EXPECT_NE(hash_of(still.out), hash_of(slurp(path("job.out")))) << "the global counts";
  Result replay = shell(kFleetsim + common + path("one.flog") + " --interventions " +
                        path("session.interventions"));
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(hash_of(replay.out), hash_of(slurp(path("job.out"))));
  EXPECT_TRUE(slurp(path("one.flog")) == slurp(path("mpi.flog"))) << "the replay differs";
}

// Under mpirun with no log, a page attached to rank 0 gets whole frames while the job runs (rank
// 0 asks for them in its moves message), not only the first and the last; same hash as one
// process.
TEST_F(Mpi, RankZeroGetsWholeFramesWhileAPageWatches) {
  std::ofstream(path("split.xml"))
      << "<fleetsim><framework ticks_per_second=\"10\" length=\"4\" seed=\"5\"/>"
         "<controllers><controller id=\"c\" type=\"diffusion\"/></controllers>"
         "<arena size=\"8,8\"><distribute count=\"30\" kind=\"epuck\" controller=\"c\"/></arena>"
         "</fleetsim>\n";
  const pid_t job = fleetsim::testing::spawn_with_output(
      "/usr/bin/env",
      {"FLEETSIM_MPI_SILENCE_MS=5000", "mpirun", "--allow-run-as-root", "--oversubscribe", "-n",
       "2", kFleetsim, "run", path("split.xml"), "--view", "--port", "0", "--view-speed", "1",
       "--json"},
      path("job.out"), path("job.err"));
  const std::string url = view_url(job);
  if (url.empty()) return;
  httplib::Client page("127.0.0.1", fleetsim::testing::view_url_port(url));
  std::uint64_t frames = 0, version = 0;
  std::string state;
  for (int i = 0; i < 2000 && state != "ended"; ++i) {
    auto res = page.Get("/api/live?frames=" + std::to_string(frames) +
                        "&version=" + std::to_string(version));
    if (!res || res->status != 200) break;  // the server stopped: the job has ended
    const auto st = nlohmann::json::parse(res->body);
    frames = st["frames"];
    version = st["version"];
    state = st["state"];
  }
  ASSERT_EQ(fleetsim::testing::wait_for(job, std::chrono::seconds(180)), 0)
      << slurp(path("job.err"));
  EXPECT_GT(frames, 2u) << "only the first and the last frame came";
  const auto hash_of = [](const std::string& t) {
    return nlohmann::json::parse(t.substr(t.rfind("\n{") + 1))["state_hash"];
  };
  Result one = shell(kFleetsim + " run " + path("split.xml") + " --quiet --json");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(hash_of(one.out), hash_of(slurp(path("job.out"))));
}

}  // namespace
}  // namespace fleetsim
