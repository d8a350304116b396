#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "diffusion_scene.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

std::string run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0) << command;
  return out;
}

nlohmann::json bench(const std::string& args, const std::string& env = "") {
  const std::string bin = std::string(FLEETSIM_BINARY_DIR) + "/bench/diffusion";
  std::string out = run(env + " " + bin + " " + args + " 2>/dev/null");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << "one JSON line: " << out;
  return nlohmann::json::parse(out, nullptr, false);
}

// bench/timesync at small size, its nodes on the federate API (docs/federate-api.md) and on
// the time layer directly: one JSON line each, every node's messages counted.
TEST(BenchSmoke, TimesyncRunsOnTheFederateApiAndTheTimeLayer) {
  for (const char* api : {"federate", "flow"}) {
    SCOPED_TRACE(api);
    const std::string out = run(std::string(FLEETSIM_BINARY_DIR) +
                                "/bench/timesync --nodes 3 --mode dsaam --transport zmq "
                                "--topology all-to-all --steps 200 --payload 64 --api " +
                                api + " 2>&1");
    auto j = nlohmann::json::parse(out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << out;
    EXPECT_EQ(j["api"], api);
    EXPECT_EQ(j["nodes"], 3);
    EXPECT_DOUBLE_EQ(j["messages_per_step"].get<double>(), 6.0) << "3 nodes, 2 sinks each";
    EXPECT_GT(j["microseconds_per_step"].get<double>(), 0);
  }
}

// bench/render at small size: one JSON line, every frame of the log painted and written.
TEST(BenchSmoke, RenderBenchmarkPaintsEveryFrameOfItsLog) {
  const std::string out = run(std::string(FLEETSIM_BINARY_DIR) +
                              "/bench/render --robots 200 --seconds 0.5 --repeat 2 --size 320x240");
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["robots"], 200);
  EXPECT_EQ(j["frames_painted"], 12) << "ticks 0 .. 5, twice";
  EXPECT_GT(j["paint_ms_median"].get<double>(), 0);
  EXPECT_GT(j["png_ms_median"].get<double>(), 0);
}

// bench/faults on one kind of process and one transport (docs/testing.md, Faults): one JSON
// line; each case's run stopped (no process past the bench's 10 s limit), the supervisor with
// status 1 naming the process hit.
TEST(BenchSmoke, FaultsBenchmarkMeasuresAKilledAndAStoppedProcess) {
  const std::string out = run(std::string(FLEETSIM_BINARY_DIR) +
                              "/bench/faults --repeat 1 --only 'swarm process/shm' "
                              "2>/dev/null");
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  ASSERT_EQ(j["cases"].size(), 2u) << out;  // SIGKILL and SIGSTOP
  for (const auto& c : j["cases"]) {
    SCOPED_TRACE(c.value("case", "?"));
    EXPECT_EQ(c["did_not_stop"], 0);
    bool supervisor = false;
    for (const auto& o : c["others"])
      if (o.value("process", "") == "supervisor") {
        supervisor = true;
        EXPECT_EQ(o.value("status", ""), "exit 1");
        EXPECT_NE(o.value("error", "").find("process 1 ("), std::string::npos) << o.dump();
      }
    EXPECT_TRUE(supervisor) << c.dump();
  }
}

TEST(BenchSmoke, DiffusionBenchmarkRunsAtSmallSize) {
  auto j = bench("--robots 1000 --threads 2 --engines 4 --seconds 5 --log frames --seed 3");
  ASSERT_TRUE(j.is_object());
  for (const char* field : {"bench",
                            "robots",
                            "threads",
                            "engines",
                            "sim_seconds",
                            "setup_seconds",
                            "loop_wall_seconds",
                            "wall_seconds",
                            "cpu_seconds",
                            "cpu_usage",
                            "rtf",
                            "robot_steps_per_second",
                            "controller",
                            "cpu_ns_per_robot_step",
                            "peak_rss_mb",
                            "bytes_per_robot",
                            "state_hash",
                            "engine",
                            "rule",
                            "sub_steps",
                            "loop_functions"})
    EXPECT_TRUE(j.contains(field)) << field;
  EXPECT_EQ(j.size(), 21u) << "exactly the documented fields";
  EXPECT_EQ(j["loop_functions"], "");
  EXPECT_EQ(j["engine"], "kinematics2d");
  EXPECT_EQ(j["rule"], "fleetsim");
  EXPECT_EQ(j["controller"], "diffusion");
  EXPECT_EQ(j["bench"], "diffusion");
  EXPECT_EQ(j["robots"], 1000);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["engines"], 4);
  EXPECT_DOUBLE_EQ(j["sim_seconds"].get<double>(), 5.0);
  EXPECT_GT(j["rtf"].get<double>(), 0);
  EXPECT_EQ(j["state_hash"].get<std::string>().size(), 16u);
  // The same run on one thread ends in the same state.
  auto one = bench("--robots 1000 --threads 1 --engines 4 --seconds 5 --log off --seed 3");
  EXPECT_EQ(one["state_hash"], j["state_hash"]);
}

// `--log compare` (docs/benchmarks.md, "Frame logging"): the scene without a log and with
// frames, alternated, in one process; one JSON line with the log's cost and the state every
// run ended on, that of the same scene run alone.
TEST(BenchSmoke, DiffusionBenchmarkComparesTheRunWithAndWithoutItsLog) {
  auto j = bench("--robots 1000 --threads 2 --seconds 2 --log compare --repeat 2 --seed 3");
  ASSERT_TRUE(j.is_object());
  for (const char* field :
       {"log_overhead", "log_cpu_overhead", "loop_wall_seconds_off", "loop_wall_seconds_frames",
        "cpu_seconds_off", "cpu_seconds_frames", "log_bytes_per_robot_frame"})
    EXPECT_TRUE(j.contains(field) && j[field].is_number()) << field;
  EXPECT_EQ(j["log"], "compare");
  EXPECT_EQ(j["repeat"], 2);
  EXPECT_EQ(j["robots"], 1000);
  EXPECT_EQ(j["same_hash"], true);
  EXPECT_GT(j["loop_wall_seconds_off"].get<double>(), 0);
  EXPECT_GT(j["loop_wall_seconds_frames"].get<double>(), 0);
  // A frame costs some bytes per robot (x, y and heading alone are 24 raw).
  EXPECT_GT(j["log_bytes_per_robot_frame"].get<double>(), 1);
  EXPECT_LT(j["log_bytes_per_robot_frame"].get<double>(), 200);
  auto alone = bench("--robots 1000 --threads 2 --seconds 2 --log off --seed 3");
  EXPECT_EQ(j["state_hash"], alone["state_hash"]);
}

// bench/argos/run_fleetsim.py (fleetsim's side of the ARGoS3 comparison) on a small copy of
// its .argos file: one JSON line, the loop timed between the script's bench-tick lines, and the
// same state on one and two threads.
TEST(BenchSmoke, ArgosSideBySideRunsFleetsimOnASmallCopy) {
  auto side = [](int threads) {
    const std::string cmd = "/usr/bin/python3 " + std::string(FLEETSIM_SOURCE_DIR) +
                            "/bench/argos/run_fleetsim.py --robots 100 --length 3 --threads " +
                            std::to_string(threads) + " --fleetsim " + FLEETSIM_BINARY_DIR +
                            "/fleetsim";
    std::string out = run(cmd);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << "one JSON line: " << out;
    return nlohmann::json::parse(out, nullptr, false);
  };
  auto one = side(1);
  auto two = side(2);
  ASSERT_TRUE(one.is_object());
  ASSERT_TRUE(two.is_object());
  EXPECT_EQ(one["program"], "fleetsim");
  EXPECT_EQ(one["robots"], 100);
  EXPECT_EQ(one["ticks"], 30);
  EXPECT_EQ(one["from_tick"], 10);
  EXPECT_EQ(one["ticks_timed"], 20);
  EXPECT_GT(one["robot_steps_per_second"].get<double>(), 0);
  EXPECT_EQ(two["threads"], 2);
  EXPECT_EQ(one["state_hash"], two["state_hash"]);
}

// The sensing kernel has a baseline (SSE2) and an AVX2 build, picked at run time: a whole run
// ends in the same state on either (on a processor without AVX2 both runs take the baseline).
TEST(BenchSmoke, BaselineAndAvx2KernelsEndInTheSameState) {
  const std::string args = "--robots 4000 --threads 2 --engines 1 --seconds 5 --log off --seed 5";
  auto fast = bench(args);
  auto base = bench(args, "FLEETSIM_SIMD=baseline");
  ASSERT_TRUE(fast.is_object() && base.is_object());
  EXPECT_EQ(fast["state_hash"], base["state_hash"]);
}

// The like-for-like configuration: rigid bodies and ARGoS's rule, regions stepped in parallel.
TEST(BenchSmoke, RigidBodyRunsGiveTheSameStateOnOneAndTwoThreads) {
  const std::string args =
      "--robots 1000 --engines 2 --seconds 5 --log off --seed 3 "
      "--engine dynamics2d --rule argos";
  auto two = bench(args + " --threads 2");
  ASSERT_TRUE(two.is_object());
  EXPECT_EQ(two["engine"], "dynamics2d");
  EXPECT_EQ(two["rule"], "argos");
  EXPECT_GT(two["robot_steps_per_second"].get<double>(), 0);
  auto one = bench(args + " --threads 1");
  EXPECT_EQ(one["state_hash"], two["state_hash"]);
  // Not the kinematic engine's run of the same scene.
  auto kin = bench("--robots 1000 --engines 2 --seconds 5 --log off --seed 3 --rule argos");
  EXPECT_NE(kin["state_hash"], two["state_hash"]);
}

TEST(BenchSmoke, BadOptionsAreUserErrors) {
  const std::string bin = std::string(FLEETSIM_BINARY_DIR) + "/bench/diffusion";
  for (const char* args :
       {"--engines 3", "--robots 0", "--log maybe", "--frobnicate 1", "--seconds 0",
        "--script /no/such/script.lua", "--processes 2 --engine dynamics2d", "--robots",
        "--log compare --repeat 0", "--log compare --controller lua"}) {
    int status = std::system((bin + " " + args + " >/dev/null 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), kExitUserError) << args;
  }
  const std::string timesync = std::string(FLEETSIM_BINARY_DIR) + "/bench/timesync";
  for (const char* args : {"--nodes 1", "--mode maybe", "--frobnicate 1"}) {
    int status = std::system((timesync + " " + args + " >/dev/null 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), kExitUserError) << "timesync " << args;
  }
  const std::string lua_states = std::string(FLEETSIM_BINARY_DIR) + "/bench/lua_states";
  for (const char* args : {"--robots x", "--ticks 0", "--script /no/such/script.lua"}) {
    int status = std::system((lua_states + " " + args + " >/dev/null 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), kExitUserError) << "lua_states " << args;
  }
}

// The benchmarks' commands in the docs (docs/*.md, README.md: inline code and fenced blocks
// naming bench/diffusion, bench/footbot, bench/timesync, bench/lua_states, bench/live_view or
// bench/render)
// use only options that the program's --help lists; --help itself exits 0.
TEST(BenchSmoke, TheDocsBenchmarkCommandsUseOptionsTheProgramsHave) {
  std::map<std::string, std::string> help;
  for (const char* name : {"diffusion", "footbot", "timesync", "lua_states", "live_view", "render"})
    help[name] = run(std::string(FLEETSIM_BINARY_DIR) + "/bench/" + name + " --help");
  std::vector<std::string> texts;
  std::vector<fs::path> files{fs::path(FLEETSIM_SOURCE_DIR) / "README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(FLEETSIM_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    // Fenced blocks: each command a line (joined where a line ends with a backslash).
    const std::regex fence("```[^\\n]*\\n([\\s\\S]*?)```");
    for (std::sregex_iterator it(text.begin(), text.end(), fence), end; it != end; ++it) {
      std::string block = std::regex_replace(it->str(1), std::regex("\\\\\\n"), " ");
      std::stringstream lines(block);
      for (std::string line; std::getline(lines, line);) texts.push_back(line);
    }
    text = std::regex_replace(text, fence, "");
    const std::regex span("`([^`]+)`");
    for (std::sregex_iterator it(text.begin(), text.end(), span), end; it != end; ++it)
      texts.push_back(it->str(1));
  }
  int checked = 0;
  const std::regex option("--[a-z][a-z0-9-]*");
  for (const auto& t : texts)
    for (const auto& [name, h] : help) {
      const auto at = t.find("bench/" + name + " ");
      if (at == std::string::npos) continue;
      const std::string args = t.substr(at);
      for (std::sregex_iterator it(args.begin(), args.end(), option), end; it != end; ++it) {
        const std::string o = it->str();
        EXPECT_TRUE(std::regex_search(h, std::regex("[ ,]" + o + "[ \\n]")))
            << "bench/" << name << " has no option " << o << " (in the docs: " << t << ")";
        ++checked;
      }
    }
  EXPECT_GT(checked, 100) << "the docs' benchmark commands were found";
}

// Runs the benchmark's scene in-process and returns its frame log's bytes.
std::string run_scene_log(int threads, const std::string& dir, std::uint64_t* hash) {
  fs::create_directories(dir);
  bench::DiffusionSceneOptions o;
  o.robots = 1000;
  o.engines = 4;
  o.threads = threads;
  o.seconds = 5;
  o.log_frames = true;
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  auto ex = bench::make_diffusion_experiment(o, dir, registry, diags);
  EXPECT_TRUE(ex) << diags.str();
  if (!ex) return {};
  {
    Simulation sim(std::move(*ex), registry);
    EXPECT_EQ(sim.threads(), threads);
    sim.start();
    while (!sim.done()) sim.step();
    sim.finish();
    *hash = sim.state().hash();
  }
  std::ifstream in(dir + "/diffusion.flog", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(BenchSmoke, FourEnginesGiveIdenticalLogsOnOneAndTwoThreads) {
  const fs::path base =
      fs::temp_directory_path() / ("fleetsim-bench-smoke-" + std::to_string(::getpid()));
  std::uint64_t h1 = 0, h2 = 0;
  // The same directory for both runs: the log's header names the experiment file.
  std::string one = run_scene_log(1, base.string(), &h1);
  fs::remove_all(base);
  std::string two = run_scene_log(2, base.string(), &h2);
  fs::remove_all(base);
  ASSERT_GT(one.size(), 1000u) << "the log should hold 51 frames of 1,000 robots";
  EXPECT_EQ(h1, h2);
  EXPECT_TRUE(one == two) << "frame logs differ between 1 and 2 threads (" << one.size() << " vs "
                          << two.size() << " bytes)";
}

}  // namespace
}  // namespace fleetsim
