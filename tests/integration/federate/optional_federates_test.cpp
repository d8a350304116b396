// Optional federates (docs/federate-api.md, "Optional federates"): two built-in nodes in a
// ring feed an optional viewer by an observation flow, and the viewer an optional recorder.
// The ring's traces are byte for byte the same without them, with them, when they join after
// the ring has finished, and when the viewer resigns early; the viewer and the recorder see
// the same values whenever they join; a file that breaks the rule is refused at its lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "federate_run.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"
#include "transport/tap.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::FederatePlay;
using fleetsim::testing::slurp;
using fleetsim::testing::word;

const char* const kFederation = R"(<federation until="300ms" seed="4" buffer="2">
  <node name="a" kind="mixer"><input name="in"/><output name="out"/><output name="status"/></node>
  <node name="b" kind="mixer"><input name="in"/><output name="out"/></node>
  <node name="viewer" program="viewer" optional="true">
    <input name="status"/><output name="summary"/>
  </node>
  <node name="recorder" program="recorder" optional="true"><input name="summary"/></node>
  <flow name="ab" from="a.out" to="b.in" period="10ms"/>
  <flow name="ba" from="b.out" to="a.in" period="7ms" initial="2ms"/>
  <flow name="status" from="a.status" to="viewer.status" kind="observation" period="5ms"/>
  <flow name="summary" from="viewer.summary" to="recorder.summary" kind="observation"
        period="20ms"/>
</federation>
)";

constexpr SimTime kMs = 1'000'000;

/// What a viewer or a recorder read: (its time, the timestamp and hash of the latest value).
using Seen = std::vector<std::tuple<SimTime, SimTime, std::uint64_t>>;

class OptionalFederates : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("optional");
    file_ = (dir_ / "ring.xml").string();
    std::ofstream(file_) << kFederation;
  }
  void TearDown() override {
    for (auto run : runs_) transport::remove_taps(run);
  }

  std::uint64_t new_run() { return runs_.emplace_back(transport::new_run_id()); }

  /// The viewer: samples the ring's status every 10 ms, sends a digest of what it saw; with
  /// `resign_at`, resigns once granted that time.
  FederatePlay viewer(Seen& seen, SimTime resign_at = -1) {
    return {"viewer", [&seen, resign_at](Federate& fed) {
              std::uint64_t digest = 0;
              fed.update("summary", word(0));
              for (SimTime t = 0; t < fed.until(); t += 10 * kMs) {
                fed.time_advance_request(t);
                const auto s = fed.observe("status");
                if (s) {
                  EXPECT_LE(s->timestamp, t);
                  const auto h = hash_bytes(s->payload.data(), s->payload.size());
                  seen.emplace_back(t, s->timestamp, h);
                  digest = mix64(digest ^ h);
                }
                fed.update("summary", word(digest));
                if (t == resign_at) return;  // the harness resigns
              }
            }};
  }

  /// The recorder: samples the viewer's digest every 20 ms. When the viewer leaves early, its
  /// request fails naming it: `left` gets the message.
  FederatePlay recorder(Seen& seen, std::string& left) {
    return {"recorder", [&seen, &left](Federate& fed) {
              try {
                // Only observation inputs: no step holds its time requests (each says done).
                for (SimTime t = 0; t < fed.until(); t += 20 * kMs)
                  if (fed.time_advance_request(t); const auto s = fed.observe("summary"))
                    seen.emplace_back(t, s->timestamp,
                                      hash_bytes(s->payload.data(), s->payload.size()));
              } catch (const std::exception& e) {
                left = e.what();
              }
            }};
  }

  /// a's and b's traces of run `name`.
  std::string ring_traces(const std::string& name) const {
    return slurp(dir_ / name / "a.trace") + slurp(dir_ / name / "b.trace");
  }

  fs::path dir_;
  std::string file_;
  std::vector<std::uint64_t> runs_;
};

TEST_F(OptionalFederates, TheOthersComputeTheSameWithoutThemWithThemAndWhenTheyJoinLate) {
  using fleetsim::testing::run_federates;
  ASSERT_TRUE(run_federates(file_, {"a", "b"}, {}, dir_ / "without", 40, "shm", new_run()));
  const std::string without = ring_traces("without");
  ASSERT_NE(without.find("emit status"), std::string::npos);

  Seen viewed, recorded;
  std::string left;
  // Over ZeroMQ: the optional nodes read taps all the same (on the machine of their sources).
  ASSERT_TRUE(run_federates(file_, {"a", "b"}, {viewer(viewed), recorder(recorded, left)},
                            dir_ / "with", 40, "zmq", new_run()));
  EXPECT_EQ(ring_traces("with"), without);
  EXPECT_EQ(viewed.size(), 30u);  // 0, 10, ..., 290 ms
  EXPECT_EQ(recorded.size(), 15u);
  EXPECT_EQ(left, "");

  // Late: they join once the ring has finished, and see the same values.
  const auto late = new_run();
  ASSERT_TRUE(run_federates(file_, {"a", "b"}, {}, dir_ / "late", 40, "shm", late));
  Seen viewed_late, recorded_late;
  ASSERT_TRUE(run_federates(file_, {}, {viewer(viewed_late), recorder(recorded_late, left)},
                            dir_ / "late", 40, "shm", late));
  EXPECT_EQ(ring_traces("late"), without);
  EXPECT_EQ(viewed_late, viewed);
  EXPECT_EQ(recorded_late, recorded);
}

TEST_F(OptionalFederates, AViewerThatResignsEarlyChangesNothingForTheRing) {
  using fleetsim::testing::run_federates;
  ASSERT_TRUE(run_federates(file_, {"a", "b"}, {}, dir_ / "without", 40, "shm", new_run()));
  Seen viewed, recorded, viewed_all, recorded_all;
  std::string left;
  ASSERT_TRUE(run_federates(file_, {"a", "b"},
                            {viewer(viewed, 100 * kMs), recorder(recorded, left)}, dir_ / "early",
                            40, "shm", new_run()));
  EXPECT_EQ(ring_traces("early"), ring_traces("without"));
  // The viewer saw the start of what a whole run sees; the recorder, reading it, was told.
  std::string none;
  ASSERT_TRUE(run_federates(file_, {"a", "b"}, {viewer(viewed_all), recorder(recorded_all, none)},
                            dir_ / "all", 0, "shm", new_run()));
  ASSERT_EQ(viewed.size(), 11u);  // 0 to 100 ms
  EXPECT_TRUE(std::equal(viewed.begin(), viewed.end(), viewed_all.begin()));
  EXPECT_NE(left.find("node 'recorder': node 'viewer' left before the end time"), std::string::npos)
      << left;
}

// `fleetsim check` refuses, at their lines with status 2, an optional node that is not a
// program, a flow that feeds one without being an observation flow, and a flow from one to a
// node that is not optional.
TEST_F(OptionalFederates, CheckRefusesWhatWouldMakeOthersWaitWithStatus2) {
  std::string bad = kFederation;
  auto replace = [&bad](const std::string& from, const std::string& to) {
    ASSERT_NE(bad.find(from), std::string::npos) << from;
    bad.replace(bad.find(from), from.size(), to);
  };
  replace(R"(<node name="b" kind="mixer">)", R"(<node name="b" kind="mixer" optional="true">)");
  replace(R"(to="recorder.summary" kind="observation")", R"(to="recorder.summary a.in2")");
  replace(R"(<input name="in"/><output name="out"/><output name="status"/>)",
          R"(<input name="in"/><input name="in2"/><output name="out"/><output name="status"/>)");
  const fs::path file = dir_ / "bad.xml";
  std::ofstream(file) << bad;
  const auto [status, text] = fleetsim::testing::check_federation(file, dir_ / "err.txt");
  EXPECT_EQ(status, 2);
  for (const char* expected :
       {"bad.xml:3: error: node 'b' is optional but not a program",
        "bad.xml:8: error: flow 'ab' feeds optional node 'b' as a periodic flow (expected "
        "kind=\"observation\"",
        "bad.xml:11: error: flow 'summary' goes from optional node 'viewer' to node 'a', which "
        "is not optional",
        "bad.xml:11: error: flow 'summary' feeds optional node 'recorder' as a periodic flow"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

}  // namespace
}  // namespace fleetsim
