// Region-based subscription through the federate API (docs/federate-api.md, "Regions"): a
// radar federate attaches to each contact the point where it is; two federates subscribe to
// boxes of the x-y plane, one changing its box during the run. Each receives exactly the
// contacts inside its box, the runs repeat byte for byte, and the DSAAM schedule is the one
// without subscriptions: only what is delivered changes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "federate_run.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"
#include "time/trace.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;
using fleetsim::testing::word;

const char* const kFederation = R"(<federation until="200ms" seed="9" buffer="4">
  <class name="Contact"><attribute name="x" type="f64"/><attribute name="y" type="f64"/></class>
  <dimension name="x" lower="-100" upper="100"/>
  <dimension name="y" lower="-100" upper="100"/>
  <dimension name="altitude"/>
  <node name="radar" program="radar"><input name="back"/><output name="contacts" class="Contact"/></node>
  <node name="north" program="north"><input name="contacts"/><output name="seen"/></node>
  <node name="south" program="south"><input name="contacts"/></node>
  <node name="log" kind="mixer"><input name="seen"/><output name="back"/></node>
  <flow name="contacts" from="radar.contacts" to="north.contacts south.contacts" period="2ms"
        dimensions="x y"/>
  <flow name="seen" from="north.seen" to="log.seen" period="5ms"/>
  <flow name="back" from="log.back" to="radar.back" period="5ms" initial="1ms"/>
</federation>
)";

constexpr SimTime kMs = 1'000'000;

/// Where the radar sees a contact at t: a point that wanders over [-100, 100]^2.
double contact_x(SimTime t) {
  return static_cast<double>((t / (2 * kMs)) * 37 % 201) - 100;
}
double contact_y(SimTime t) {
  return static_cast<double>((t / (2 * kMs)) * 53 % 201) - 100;
}

/// North's box: the upper half plane, then from 101 ms the right half plane.
bool north_wants(SimTime t) {
  return t < 101 * kMs ? contact_y(t) >= 0 : contact_x(t) >= 0;
}
/// South's box: y in [-100, -50] and x in [-20, 20].
bool south_wants(SimTime t) {
  return contact_y(t) <= -50 && contact_x(t) >= -20 && contact_x(t) <= 20;
}

/// The lines of a trace with their payload hashes left out: the DSAAM schedule.
std::string schedule_of(const std::string& trace) {
  std::istringstream in(trace);
  std::string line, out;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, flow, stamp, period;
    words >> kind >> flow >> stamp >> period;
    out += kind + " " + flow + " " + stamp + " " + period + "\n";
  }
  return out;
}

class Regions : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("regions");
    file_ = (dir_ / "radar.xml").string();
    std::ofstream(file_) << kFederation;
  }

  /// Runs the federation; with `subscribe`, north and south subscribe to their boxes.
  void run(const fs::path& traces, bool subscribe) {
    north_got_.clear();
    south_got_.clear();
    auto radar = [&](Federate& fed) {
      fed.set_emitter("contacts", [&fed](SimTime t) {
        const double x = contact_x(t), y = contact_y(t);
        fed.set_update_region("contacts", {{"x", {x, x}}, {"y", {y, y}}});
        return fed.attributes("contacts").set("x", x).set("y", y).bytes();
      });
      fed.run([](const Delivered&) {});
    };
    auto north = [&](Federate& fed) {
      if (subscribe) fed.subscribe_region("contacts", Region{{"y", {0, 100}}}, 0);
      std::uint64_t n = 0;
      fed.set_message_handler([&](const Delivered& m) {
        const auto v = fed.decode(m);
        EXPECT_EQ(v.get("x"), contact_x(m.timestamp));
        north_got_.push_back(m.timestamp);
        ++n;
      });
      fed.set_emitter("seen", [&](SimTime) { return word(n); });
      // Every step t, north subscribes again from t + 2 ms (a federate that moves its box as it
      // goes): the contacts at t + 1 ms come under the previous step's subscription. The boxes
      // change from the subscription of 101 ms on.
      for (SimTime t = 0; !fed.time_advance_request(t).done; t += 3 * kMs)
        if (subscribe) {
          const SimTime from = t + 2 * kMs;
          fed.subscribe_region("contacts",
                               from < 100 * kMs ? Region{{"y", {0, 100}}} : Region{{"x", {0, 100}}},
                               from);
        }
    };
    auto south = [&](Federate& fed) {
      if (subscribe)
        fed.subscribe_region("contacts", Region{{"x", {-20, 20}}, {"y", {-100, -50}}}, 0);
      // Event-driven: each grant is at a contact inside the box; the others never come.
      for (;;) {
        const Grant g = fed.next_event_request(fed.until() - 1);
        for (const auto& m : g.messages) south_got_.push_back(m.timestamp);
        if (g.done || g.messages.empty()) break;
      }
    };
    ASSERT_TRUE(fleetsim::testing::run_federates(
        file_, {"log"}, {{"radar", radar}, {"north", north}, {"south", south}}, traces, 40, "shm"));
  }

  fs::path dir_;
  std::string file_;
  std::vector<SimTime> north_got_, south_got_;
};

TEST_F(Regions, EachSubscriberGetsExactlyTheContactsInItsBoxAndRunsRepeat) {
  run(dir_ / "one", true);
  std::vector<SimTime> north, south;
  for (SimTime t = 0; t < 200 * kMs; t += 2 * kMs) {
    if (north_wants(t)) north.push_back(t);
    if (south_wants(t)) south.push_back(t);
  }
  ASSERT_GT(north.size(), 20u);
  ASSERT_LT(north.size(), 80u);
  ASSERT_GE(south.size(), 2u);
  EXPECT_EQ(north_got_, north);
  EXPECT_EQ(south_got_, south);
  run(dir_ / "two", true);
  EXPECT_EQ(north_got_, north);
  for (const char* n : {"radar.trace", "north.trace", "south.trace", "log.trace"})
    EXPECT_EQ(slurp(dir_ / "one" / n), slurp(dir_ / "two" / n)) << n;
}

// Subscriptions change what is delivered, never the DSAAM schedule: every message is sent and
// consumed at the same times as without them (only north's counts, and so log's state, differ).
TEST_F(Regions, TheScheduleIsTheOneWithoutSubscriptions) {
  run(dir_ / "with", true);
  const auto with_north = north_got_;
  run(dir_ / "without", false);
  EXPECT_EQ(north_got_.size(), 100u);  // every contact
  EXPECT_LT(with_north.size(), north_got_.size());
  for (const char* n : {"radar.trace", "north.trace", "south.trace", "log.trace"}) {
    const std::string with = slurp(dir_ / "with" / n);
    EXPECT_FALSE(with.empty()) << n;
    EXPECT_EQ(schedule_of(with), schedule_of(slurp(dir_ / "without" / n))) << n;
  }
  EXPECT_NE(slurp(dir_ / "with" / "log.trace"), slurp(dir_ / "without" / "log.trace"));
}

TEST_F(Regions, MisuseIsRefusedNamingTheNodeTheFlowAndTheDimension) {
  const auto refused = fleetsim::testing::expect_refused;
  auto radar = [&](Federate& fed) {
    refused(
        [&] {
          fed.set_update_region("contacts", {{"z", {0, 1}}});
        },
        "node 'radar', flow 'contacts': set_update_region(\"contacts\"): dimension 'z' is "
        "not one of the flow's (x, y)");
    refused(
        [&] {
          fed.set_update_region("contacts", {{"altitude", {0, 1}}});
        },
        "dimension 'altitude' is not one of the flow's (x, y)");
    refused(
        [&] {
          fed.set_update_region("contacts", {{"x", {5, 1}}});
        },
        "dimension 'x' gets [5, 1] (expected lower <= upper, within the dimension's range "
        "[-100, 100])");
    refused(
        [&] {
          fed.set_update_region("contacts", {{"y", {0, 101}}});
        },
        "dimension 'y' gets [0, 101]");
    fed.update("contacts", fed.attributes("contacts"));
    fed.run([](const Delivered&) {});
  };
  auto north = [&](Federate& fed) {
    fed.update("seen", word(0));
    fed.time_advance_request(10 * kMs);
    refused(
        [&] {
          fed.subscribe_region("contacts", Region{{"x", {0, 1}}}, 10 * kMs);
        },
        "node 'north', flow 'contacts': subscribe_region(\"contacts\") from 10000000 ns is "
        "not after the federate's time, 10000000 ns");
    fed.subscribe_region("contacts", Region{{"x", {0, 1}}}, 10 * kMs + 1);
    fed.run([](const Delivered&) {});
  };
  auto south = [&](Federate& fed) { fed.run([](const Delivered&) {}); };
  ASSERT_TRUE(fleetsim::testing::run_federates(
      file_, {"log"}, {{"radar", radar}, {"north", north}, {"south", south}}, dir_ / "t", 0,
      "shm"));
}

// `fleetsim check` reports every misuse of regions in the file at its line, status 2.
TEST_F(Regions, CheckRefusesBadDimensionsWithStatus2) {
  std::string bad = kFederation;
  bad.replace(bad.find(R"(dimensions="x y")"), 16, R"(dimensions="x yy")");
  bad.replace(bad.find(R"(period="5ms"/>)"), 14, R"(period="5ms" dimensions="x"/>)");
  bad.replace(bad.find(R"(<dimension name="altitude"/>)"), 28,
              R"(<dimension name="x" lower="3" upper="1"/>)");
  const fs::path file = dir_ / "bad.xml";
  std::ofstream(file) << bad;
  const auto [status, text] = fleetsim::testing::check_federation(file, dir_ / "err.txt");
  EXPECT_EQ(status, 2);
  for (const char* expected :
       {"bad.xml:5: error: a dimension called 'x' already exists",
        "bad.xml:5: error: dimension 'x' has lower 3 >= upper 1",
        "bad.xml:10: error: flow 'contacts': unknown dimension 'yy' (expected a <dimension> of "
        "the file: x, y) (did you mean 'y'?)",
        "bad.xml:12: error: flow 'seen' has regions ('dimensions') but links node 'log', which "
        "is not a program"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

}  // namespace
}  // namespace fleetsim
