// Event and observation flows through the federate API (docs/federate-api.md): a detector
// federate reacts to ticks at their own timestamp on a zero-lookahead event flow
// (send_event), and reads the latest level of an observation flow (observe). Its runs over
// shared memory and ZeroMQ, with jitter, give the same traces byte for byte and conform to
// the DSAAM rules; other request times change only the null messages; misuse is refused
// naming the node, the flow and the timestamps.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "federate_run.hpp"
#include "federation/launcher.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"
#include "time/trace.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;

// clock and sink are built-in mixers; detector is the federate. 'tick' alternates 10 and 3 ms.
const char* const kFederation = R"(<federation until="600ms" seed="5" buffer="2">
  <node name="clock" kind="mixer"><input name="back"/><output name="tick"/></node>
  <node name="detector" program="detector">
    <input name="tick"/><input name="level"/><output name="alarm"/>
  </node>
  <node name="sink" kind="mixer">
    <input name="alarm"/><output name="level"/><output name="back"/>
  </node>
  <flow name="tick" from="clock.tick" to="detector.tick" period="10ms 3ms"/>
  <flow name="alarm" from="detector.alarm" to="sink.alarm" kind="event" lookahead="0"/>
  <flow name="level" from="sink.level" to="detector.level" kind="observation" period="7ms"/>
  <flow name="back" from="sink.back" to="clock.back" period="25ms"/>
</federation>
)";

constexpr SimTime kMs = 1'000'000;

using fleetsim::testing::word;

/// Every trace of `dir`, by file name. With `events_only`, what the request times do not
/// decide: the null messages' lines go, and so do the announced next timestamps of events.
std::map<std::string, std::string> traces_in(const fs::path& dir, bool events_only = false) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::istringstream in(slurp(e.path()));
    std::string line, kept;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string kind, flow, stamp, period, hash, null;
      words >> kind >> flow >> stamp >> period >> hash >> null;
      if (events_only && null == "null") continue;
      if (events_only && flow == "alarm") line = kind + " alarm " + stamp + " - " + hash;
      kept += line + "\n";
    }
    out[e.path().filename().string()] = kept;
  }
  return out;
}

class EventFlows : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("event-flows");
    file_ = (dir_ / "detector.xml").string();
    std::ofstream(file_) << kFederation;
  }

  /// Runs clock and sink in threads and `play` as the detector here, on `transport` with
  /// jitter, traces in `traces`.
  void run_with(const fs::path& traces, const std::string& transport,
                const std::function<void(Federate&)>& play) {
    auto fed = fleetsim::testing::run_federate(file_, {"clock", "sink"}, "detector", traces, play,
                                               60, transport);
    ASSERT_TRUE(fed);
    fleetsim::testing::expect_conformant_traces(*fed, traces, {"clock", "detector", "sink"});
  }

  /// The detector: at each tick, reads the latest level and, depending on both, raises an
  /// alarm at the tick's own timestamp (a reaction, lookahead 0) and sometimes one 2 ms later.
  /// Advances by time steps of `step`.
  void detect(Federate& fed, SimTime step) {
    fed.set_message_handler([&](const Delivered& m) {
      EXPECT_EQ(m.input, "tick");
      const auto level = fed.observe("level");
      if (level) {
        EXPECT_LE(level->timestamp, m.timestamp) << "an observation from the future";
        EXPECT_GT(level->timestamp, m.timestamp - 7 * kMs) << "an observation out of date";
        ++observed_;
      }
      std::uint64_t h = hash_bytes(m.payload.data(), m.payload.size());
      if (level) h = mix64(h ^ hash_bytes(level->payload.data(), level->payload.size()));
      if (h % 3 != 0) {
        fed.send_event("alarm", m.timestamp, word(h));
        ++reactions_;
      }
      if (h % 2 == 0 && m.timestamp + 2 * kMs < fed.until())
        fed.send_event("alarm", m.timestamp + 2 * kMs, word(~h));
    });
    bool checked = false;
    for (SimTime t = 0;; t += step) {
      const Grant g = fed.time_advance_request(t);
      if (g.done) break;
      // Once: a timestamp the flow's last message did not announce is refused, naming the
      // node, the flow and the timestamps, and changes nothing.
      const SimTime announced = fed.next_emission("alarm");
      if (!checked && announced > t) {
        checked = true;
        try {
          fed.send_event("alarm", t, word(1));
          ADD_FAILURE() << "an event below the lookahead bound was accepted";
        } catch (const FederateError& e) {
          EXPECT_NE(std::string(e.what()).find(fmt::format(
                        "node 'detector', flow 'alarm': send_event at {} ns is below its "
                        "lookahead bound {} ns (the flow's last message announced its next at "
                        "{} ns",
                        t, announced, announced)),
                    std::string::npos)
              << e.what();
        }
      }
    }
    EXPECT_TRUE(checked);
  }

  fs::path dir_;
  std::string file_;
  std::uint64_t observed_ = 0, reactions_ = 0;
};

TEST_F(EventFlows, SameTracesOverSharedMemoryAndZeroMqWithJitter) {
  run_with(dir_ / "shm", "shm", [&](Federate& fed) { detect(fed, kMs); });
  const auto observed = observed_, reactions = reactions_;
  // Ticks at 0, 10, 13, 23, 26 ms, ...: 92 before 600 ms; nearly all see a level.
  EXPECT_GE(observed, 90u);
  EXPECT_GE(reactions, 30u);
  run_with(dir_ / "zmq", "zmq", [&](Federate& fed) { detect(fed, kMs); });
  EXPECT_EQ(observed_, 2 * observed);
  const auto shm = traces_in(dir_ / "shm");
  ASSERT_EQ(shm.size(), 3u);
  EXPECT_TRUE(shm == traces_in(dir_ / "zmq"));
  // The traces hold events, reactions at a tick's own timestamp, and null messages.
  const std::string detector = shm.at("detector.trace");
  EXPECT_NE(detector.find("emit alarm 10000000 "), std::string::npos) << detector;
  EXPECT_NE(detector.find(" null\n"), std::string::npos);
  EXPECT_NE(shm.at("sink.trace").find("consume alarm "), std::string::npos);
  EXPECT_NE(detector.find("consume level "), std::string::npos);
}

// Other request times change when the null messages go and what each message announces,
// never what is delivered: without those, the traces of 1 ms and 7 ms steps are the same.
TEST_F(EventFlows, RequestTimesChangeOnlyNullMessagesAndAnnouncements) {
  run_with(dir_ / "one", "shm", [&](Federate& fed) { detect(fed, kMs); });
  run_with(dir_ / "seven", "shm", [&](Federate& fed) { detect(fed, 7 * kMs); });
  const auto one = traces_in(dir_ / "one", true);
  EXPECT_TRUE(one == traces_in(dir_ / "seven", true));
  EXPECT_FALSE(traces_in(dir_ / "one") == traces_in(dir_ / "seven"))
      << "the null messages were expected to differ";
}

TEST_F(EventFlows, MisuseIsRefusedNamingTheNodeTheFlowAndTheTimes) {
  run_with(dir_ / "misuse", "shm", [&](Federate& fed) {
    const auto refused = fleetsim::testing::expect_refused;
    refused([&] { fed.update("alarm", {}); },
            "node 'detector': update(\"alarm\"): flow 'alarm' is an event flow");
    refused([&] { fed.observe("tick"); },
            "node 'detector': observe(\"tick\"): flow 'tick' is not an observation flow");
    fed.send_event("alarm", 5 * kMs, word(5));
    refused([&] { fed.send_event("alarm", 5 * kMs, word(6)); },
            "node 'detector', flow 'alarm': send_event at 5000000 ns is below its lookahead "
            "bound 5000001 ns (the event sent before it is at 5000000 ns");
    refused([&] { fed.send_event("alarm", fed.until(), word(6)); },
            "send_event at 600000000 ns is at or beyond the end time 600000000 ns");
    fed.time_advance_request(20 * kMs);
    refused([&] { fed.send_event("alarm", 15 * kMs, word(7)); },
            "node 'detector', flow 'alarm': send_event at 15000000 ns is below the time "
            "already granted, 20000000 ns");
    fed.run([](const Delivered&) {});
  });
}

// Before anything starts, `fleetsim launch` refuses a circuit of zero-lookahead flows with
// status 2 and FILE:LINE naming the circuit, and every other error of the file with it.
TEST_F(EventFlows, LaunchRefusesAZeroLookaheadCircuitWithStatus2) {
  const fs::path bad = dir_ / "circuit.xml";
  std::ofstream(bad) << R"(<federation until="1s">
  <node name="a"><input name="in"/><output name="out"/></node>
  <node name="b"><input name="in"/><output name="out"/></node>
  <flow name="ab" from="a.out" to="b.in" kind="event" lookahead="0"/>
  <flow name="ba" from="b.out" to="a.in" kind="evnt" lookahead="0"/>
</federation>
)";
  const fs::path err = dir_ / "err.txt";
  // Its exit status (-1 when it did not exit), its standard error in err.
  auto launch = [&] {
    const int status = std::system(
        fleetsim::testing::time_limited(std::string(FLEETSIM_EXE) + " launch " + bad.string() +
                                        " > /dev/null 2> " + err.string())
            .c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(launch(), 2);
  const std::string text = slurp(err);
  EXPECT_NE(text.find("circuit.xml:5: error: attribute 'kind' of <flow> is 'evnt'"),
            std::string::npos)
      << text;
  // The misspelt kind reads as the default, periodic: its lookahead is reported with it.
  EXPECT_NE(text.find("circuit.xml:5: error: attribute 'lookahead' of flow 'ba' means nothing"),
            std::string::npos)
      << text;
  // With the kind spelt right, the circuit.
  std::string fixed = slurp(bad);
  fixed.replace(fixed.find("evnt"), 4, "event");
  std::ofstream(bad) << fixed;
  EXPECT_EQ(launch(), 2);
  EXPECT_NE(slurp(err).find("circuit.xml:4: error: a circuit of zero-lookahead flows would "
                            "deadlock: node 'a', flow 'ab', node 'b', flow 'ba', back to node 'a'"),
            std::string::npos)
      << slurp(err);
}

}  // namespace
}  // namespace fleetsim
