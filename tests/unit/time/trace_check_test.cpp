#include "time/trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_files.hpp"

namespace fleetsim::time {
namespace {

// a -> b on flow "f" (id 0, period 10 from 0), b -> a on flow "g" (id 1, period 10 from 5).
transport::FederationLayout ring() {
  transport::FederationLayout l;
  l.until = 30;
  l.nodes = {{"a", "", {{1, "g", "b", 4, 5}}, {{0, "f", {"b"}, 0}}},
             {"b", "", {{0, "f", "a", 4, 0}}, {{1, "g", {"a"}, 5}}}};
  return l;
}

TraceEvent ev(bool emit, const char* flow, SimTime t, std::uint64_t hash = 1) {
  return {emit, flow, t, 10, hash, 0};
}

std::map<std::string, std::vector<TraceEvent>> conformant() {
  return {{"a",
           {ev(true, "f", 0), ev(false, "g", 5), ev(true, "f", 10), ev(false, "g", 15),
            ev(true, "f", 20), ev(false, "g", 25)}},
          {"b",
           {ev(false, "f", 0), ev(true, "g", 5), ev(false, "f", 10), ev(true, "g", 15),
            ev(false, "f", 20), ev(true, "g", 25)}}};
}

std::string all(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(TraceCheck, AcceptsAConformantRun) {
  EXPECT_EQ(all(check_traces(ring(), conformant())), "");
}

TEST(TraceCheck, DetectsEachRule) {
  auto t = conformant();
  std::swap(t["b"][2], t["b"][3]);  // b emits 15 before consuming 10
  EXPECT_NE(all(check_traces(ring(), t)).find("rule 2"), std::string::npos);

  t = conformant();
  t["a"].insert(t["a"].begin() + 2, ev(false, "g", 5));  // consumed twice, out of order
  EXPECT_NE(all(check_traces(ring(), t)).find("rule 1"), std::string::npos);

  t = conformant();
  std::swap(t["b"][0], t["b"][1]);  // b emits 5, then consumes 0 < 5
  EXPECT_NE(all(check_traces(ring(), t)).find("rule 2"), std::string::npos);

  t = conformant();
  t["a"][2].timestamp = 12;  // not the timestamp announced by the period of 0
  t["b"][2].timestamp = 12;
  EXPECT_NE(all(check_traces(ring(), t)).find("announced 10"), std::string::npos);

  t = conformant();
  t["a"][3] = ev(false, "g", 15);
  t["a"].insert(t["a"].begin() + 4, ev(true, "f", 12));  // emits 12 after consuming 15
  EXPECT_NE(all(check_traces(ring(), t)).find("rule 3"), std::string::npos);

  t = conformant();
  t["b"].erase(t["b"].begin() + 2);  // a message lost
  EXPECT_NE(all(check_traces(ring(), t)).find("rule 4"), std::string::npos);

  t = conformant();
  t["b"][4].payload_hash = 99;  // a message altered
  EXPECT_NE(all(check_traces(ring(), t)).find("rule 4"), std::string::npos);
}

TEST(TraceCheck, ReadsWhatTheWriterWrites) {
  auto path = (fleetsim::testing::fresh_test_dir("time") / "a.trace").string();
  {
    TraceWriter w(path, "a");
    transport::Message m;
    m.timestamp = 5;
    m.period = 10;
    m.payload = {1, 2};
    w.record(true, "f", m);
    w.record(false, "g", m);
  }
  std::vector<TraceEvent> events;
  std::string error;
  ASSERT_TRUE(read_trace(path, events, error)) << error;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].emit);
  EXPECT_EQ(events[1].flow, "g");
  EXPECT_EQ(events[1].timestamp, 5);
  EXPECT_EQ(events[1].period, 10);
  EXPECT_EQ(events[0].payload_hash, events[1].payload_hash);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace fleetsim::time
