// bench/footbot at small size, so it never rots: one JSON line with its fields, every message
// carried the previous tick's payload, and the same state on 1 and 2 threads.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostics.hpp"

namespace fleetsim {
namespace {

const std::string kBench = std::string(FLEETSIM_BINARY_DIR) + "/bench/footbot";

nlohmann::json footbot(const std::string& args) {
  std::string out;
  FILE* p = popen((kBench + " " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return {};
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0) << args;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << "one JSON line: " << out;
  return nlohmann::json::parse(out, nullptr, false);
}

TEST(BenchSmoke, FootbotBenchmarkRunsAtSmallSizeAndRepeatsAcrossThreads) {
  auto two = footbot("--robots 600 --threads 2 --seconds 3 --density 1 --seed 4");
  ASSERT_TRUE(two.is_object());
  for (const char* field : {"bench", "robots", "threads", "engines", "arena_m", "camera",
                            "sim_seconds", "setup_seconds", "loop_wall_seconds", "cpu_seconds",
                            "cpu_usage", "rtf", "robot_steps_per_second", "neighbours_in_range",
                            "payload_errors", "peak_rss_mb", "state_hash"})
    EXPECT_TRUE(two.contains(field)) << field;
  EXPECT_EQ(two["bench"], "footbot");
  EXPECT_EQ(two["robots"], 600);
  EXPECT_EQ(two["payload_errors"], 0);
  // About pi * 3^2 robots within 3 m at 1 per m^2, fewer near the walls.
  EXPECT_GT(two["neighbours_in_range"].get<double>(), 10.0);
  EXPECT_LT(two["neighbours_in_range"].get<double>(), 40.0);
  auto one = footbot("--robots 600 --threads 1 --seconds 3 --density 1 --seed 4");
  EXPECT_EQ(one["state_hash"], two["state_hash"]);
  // With the camera on (LEDs and blobs feed back into the state), too.
  auto cam2 = footbot("--robots 600 --threads 2 --seconds 3 --camera on --seed 4");
  auto cam1 = footbot("--robots 600 --threads 1 --seconds 3 --camera on --seed 4");
  EXPECT_EQ(cam1["state_hash"], cam2["state_hash"]);
  EXPECT_NE(cam1["state_hash"], one["state_hash"]);
  EXPECT_EQ(cam2["payload_errors"], 0);
}

TEST(BenchSmoke, FootbotBadOptionsAreUserErrors) {
  for (const char* args : {"--engines 3", "--density 0", "--camera maybe", "--robots x"}) {
    int status = std::system((kBench + " " + args + " >/dev/null 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), kExitUserError) << args;
  }
}

}  // namespace
}  // namespace fleetsim
