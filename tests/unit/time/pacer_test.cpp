#include "time/pacer.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace fleetsim::time {
namespace {

TEST(Pacer, ParsesModes) {
  TimeMode m{};
  EXPECT_TRUE(parse_time_mode("linear", m));
  EXPECT_EQ(m, TimeMode::kLinear);
  EXPECT_TRUE(parse_time_mode("afap", m));
  EXPECT_EQ(m, TimeMode::kAsFastAsPossible);
  EXPECT_FALSE(parse_time_mode("fast", m));
}

TEST(Pacer, ReportsTheLagOfANodeThatCannotKeepUp) {
  std::vector<std::string> lines;
  // Speed-up 1000: 5 s of simulated time must take 5 ms of wall time.
  Pacer p(TimeMode::kLinear, 1000.0, [&](const std::string& s) { lines.push_back(s); });
  p.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a node too slow for that
  p.wait_until(5 * kNanosPerSecond, "node 'slow'");
  EXPECT_GT(p.max_lag_ns(), 0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("node 'slow': behind linear time by"), std::string::npos) << lines[0];
}

TEST(Pacer, AsFastAsPossibleNeverWaitsNorLags) {
  Pacer p(TimeMode::kAsFastAsPossible, 1.0);
  p.wait_until(1000 * kNanosPerSecond, "n");
  EXPECT_EQ(p.max_lag_ns(), 0);
}

}  // namespace
}  // namespace fleetsim::time
