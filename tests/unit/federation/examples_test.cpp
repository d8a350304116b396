// Every federation in examples/federations runs on the in-process transport, with and without
// jitter, conforms to the four rules, and repeats bit for bit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "federation/launcher.hpp"
#include "support/test_files.hpp"
#include "time/trace.hpp"

namespace fleetsim::federation {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> read_dir(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path());
    std::stringstream s;
    s << in.rdbuf();
    files[e.path().filename().string()] = s.str();
  }
  return files;
}

std::vector<std::string> check_dir(const Federation& fed, const fs::path& dir) {
  std::map<std::string, std::vector<time::TraceEvent>> traces;
  for (const auto& n : fed.nodes) {
    std::string error;
    if (!time::read_trace((dir / (n.name + ".trace")).string(), traces[n.name], error))
      return {error};
  }
  return time::check_traces(fed.layout(), traces);
}

TEST(Examples, RunConformAndRepeatOnTheInProcessTransport) {
  fs::path examples = fs::path(FLEETSIM_SOURCE_DIR) / "examples" / "federations";
  const fs::path out = fleetsim::testing::fresh_test_dir("federation") / "traces";
  int count = 0;
  for (const auto& e : fs::directory_iterator(examples)) {
    if (e.path().extension() != ".xml") continue;
    ++count;
    SCOPED_TRACE(e.path().string());
    Diagnostics d;
    auto fed = load_federation(e.path().string(), d);
    ASSERT_TRUE(fed) << d.str();
    EXPECT_FALSE(d.has_errors());
    std::map<std::string, std::string> reference;
    // Plain, with jitter, and paced by the wall clock (linear time, speed-up 50): pacing
    // delays nodes, it must not change what they compute.
    for (int variant = 0; variant < 3; ++variant) {
      fs::remove_all(out);
      RunOptions o;
      o.trace_dir = out.string();
      o.jitter_us = variant == 1 ? 20 : 0;
      if (variant == 2) {
        o.mode = time::TimeMode::kLinear;
        o.speedup = 50;
      }
      o.quiet = true;
      ASSERT_EQ(launch_threads(*fed, o), 0);
      auto violations = check_dir(*fed, out);
      EXPECT_TRUE(violations.empty()) << violations.front();
      auto traces = read_dir(out);
      if (reference.empty())
        reference = traces;
      else
        EXPECT_TRUE(traces == reference) << "traces differ in variant " << variant;
    }
  }
  fs::remove_all(out);
  EXPECT_GE(count, 2);
}

}  // namespace
}  // namespace fleetsim::federation
