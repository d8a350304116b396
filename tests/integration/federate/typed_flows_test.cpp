// Typed flows and datastreams end to end (docs/federation-format.md, "Typed data" and
// "Datastreams and modifiers"; docs/federate-api.md, "Typed data"): a federate publishes and
// reads classes by attribute name, the built-in nodes read typed flows through noise,
// down-sampling and a WGS84 frame conversion, and the federation repeats bit for bit, twice
// over shared memory and once over ZeroMQ, with jitter; typed event and observation flows too.
// Misuse is refused, naming the node, the flow and the timestamp.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "federate_run.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;

// heterogeneous_rates.xml with typed flows, its dynamics played by a federate, and a GPS (a
// built-in mixer, which folds every payload it is given into its state) fed with the
// federate's position converted to WGS84, its digest going back to the federate.
const char* kTyped = R"(<federation until="500ms" seed="42" buffer="8">
  <class name="State"><attribute name="x" type="f64"/><attribute name="v" type="f64"/></class>
  <interaction name="Push"><attribute name="force" type="f64"/></interaction>
  <class name="Image"><attribute name="z" type="f64"/></class>
  <class name="Fix">
    <attribute name="lat" type="f64"/><attribute name="lon" type="f64"/>
    <attribute name="alt" type="f64"/><attribute name="satellites" type="u8"/>
  </class>
  <node name="dynamics" program="federate">
    <input name="force" class="Push"/>
    <input name="digest"/>
    <output name="state" class="State"/>
    <output name="fix" class="Fix"/>
  </node>
  <node name="controller" kind="controller">
    <input name="state" class="State"/>
    <input name="image" class="Image"/>
    <output name="force" class="Push"/>
  </node>
  <node name="camera" kind="camera">
    <input name="state"/>
    <output name="image" class="Image"/>
  </node>
  <node name="gps" kind="mixer">
    <input name="fix" class="Fix"/>
    <output name="digest"/>
  </node>
  <flow name="state" from="dynamics.state" to="controller.state camera.state" period="1ms">
    <downsample every="3"/>
  </flow>
  <flow name="force" from="controller.force" to="dynamics.force" period="10ms" initial="2ms">
    <noise attribute="force" sigma="0.05" bias="0.1"/>
  </flow>
  <flow name="image" from="camera.image" to="controller.image" period="33ms 33ms 34ms"
        initial="5ms">
    <noise attribute="z" sigma="0.01"/>
  </flow>
  <flow name="fix" from="dynamics.fix" to="gps.fix" period="20ms">
    <frame to="wgs84" attributes="lat lon alt" latitude="43.6045" longitude="1.444" altitude="146"/>
    <noise attribute="alt" sigma="2"/>
  </flow>
  <flow name="digest" from="gps.digest" to="dynamics.digest" period="50ms" initial="1ms"/>
</federation>
)";

/// What the federate saw: every force and digest, in order, as bytes and decoded values.
struct Seen {
  std::vector<double> forces;
  std::vector<std::vector<std::uint8_t>> digests;
  bool operator==(const Seen&) const = default;
};

/// The spring of example_nodes.cpp, publishing State and a Fix by attribute name.
Seen play(Federate& fed) {
  Seen seen;
  double x = 0, v = 0, force = 0;
  SimTime at = 0;
  auto advance = [&](SimTime to) {
    if (to <= at) return;
    const double dt = static_cast<double>(to - at) * 1e-9;
    v += (force - 4.0 * x - 0.5 * v) * dt;
    x += v * dt;
    at = to;
  };
  fed.set_message_handler([&](const Delivered& m) {
    if (m.input == "force") {
      force = fed.decode(m).get("force");
      seen.forces.push_back(force);
    } else {
      seen.digests.push_back(m.payload);
    }
  });
  fed.set_emitter("state", [&](SimTime t) {
    advance(t);
    return fed.attributes("state").set("x", x).set("v", v).bytes();
  });
  fed.set_emitter("fix", [&](SimTime t) {
    advance(t);
    // East-north-up around the reference: the spring along east, its speed along north.
    return fed.attributes("fix")
        .set("lat", 100.0 * x)
        .set("lon", 10.0 * v)
        .set("alt", 1.5)
        .set("satellites", 9)
        .bytes();
  });
  for (SimTime t = 0; !fed.time_advance_request(t).done; t += 5'000'000) {
  }
  return seen;
}

class TypedFederation : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fleetsim::testing::fresh_test_dir("typed-flows"); }

  /// Runs `text` with the federate as dynamics; returns what it saw, the traces in `name`.
  Seen run(const std::string& text, const std::string& name, const std::string& transport,
           std::uint32_t jitter_us = 100) {
    const std::string file = (dir_ / (name + ".xml")).string();
    std::ofstream(file) << text;
    Seen seen;
    fleetsim::testing::run_federate(
        file, {"controller", "camera", "gps"}, "dynamics", dir_ / name,
        [&](Federate& fed) { seen = play(fed); }, jitter_us, transport);
    return seen;
  }

  std::map<std::string, std::string> traces(const std::string& name) {
    std::map<std::string, std::string> out;
    for (const char* n : {"dynamics", "controller", "camera", "gps"})
      out[n] = slurp(dir_ / name / (std::string(n) + ".trace"));
    return out;
  }

  fs::path dir_;
};

TEST_F(TypedFederation, ModifiedTypedFlowsRepeatBitForBitOnBothTransports) {
  const Seen first = run(kTyped, "shm1", "shm");
  const Seen second = run(kTyped, "shm2", "shm");
  const Seen zmq = run(kTyped, "zmq", "zmq");
  ASSERT_EQ(first.forces.size(), 50u) << "a force every 10 ms from 2 ms to 500 ms";
  ASSERT_EQ(first.digests.size(), 10u);
  EXPECT_TRUE(first == second) << "what the federate received differs between two runs";
  EXPECT_TRUE(first == zmq) << "what the federate received differs between shm and ZeroMQ";
  const auto reference = traces("shm1");
  for (const auto& [node, trace] : reference) {
    EXPECT_GT(trace.size(), 200u) << node;
    EXPECT_TRUE(trace == traces("shm2").at(node)) << node << "'s trace differs between two runs";
    EXPECT_TRUE(trace == traces("zmq").at(node)) << node << "'s trace differs between transports";
  }

  // The modifiers act: without them the controller, the camera and the GPS compute otherwise,
  // and the federate's forces carry no bias.
  std::string plain = kTyped;
  for (const std::string& mod :
       {std::string(R"(<downsample every="3"/>)"),
        std::string(R"(<noise attribute="force" sigma="0.05" bias="0.1"/>)"),
        std::string(R"(<noise attribute="z" sigma="0.01"/>)"),
        std::string(R"(<noise attribute="alt" sigma="2"/>)")})
    plain.erase(plain.find(mod), mod.size());
  const Seen unmodified = run(plain, "plain", "shm", 0);
  ASSERT_EQ(unmodified.forces.size(), 50u);
  EXPECT_NE(unmodified.forces, first.forces);
  EXPECT_NE(unmodified.digests, first.digests);
  // The first force comes before any state could differ: the difference is the noise alone.
  EXPECT_NEAR(first.forces.front() - unmodified.forces.front(), 0.1, 4 * 0.05);
}

TEST_F(TypedFederation, MisuseIsRefusedNamingTheNodeTheFlowAndTheTimestamp) {
  const std::string file = (dir_ / "misuse.xml").string();
  std::ofstream(file) << kTyped;
  auto expect_error = [](const std::function<void()>& f, const std::string& message) {
    try {
      f();
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const FederateError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  Seen seen;
  fleetsim::testing::run_federate(
      file, {"controller", "camera", "gps"}, "dynamics", dir_ / "misuse",
      [&](Federate& fed) {
        ASSERT_NE(fed.data_class("state"), nullptr);
        EXPECT_EQ(fed.data_class("state")->size, 16u);
        EXPECT_EQ(fed.data_class("digest"), nullptr);
        expect_error([&] { fed.update("state", std::vector<std::uint8_t>(8)); },
                     "node 'dynamics', flow 'state' at 0 ns: a payload of 8 bytes is not a value "
                     "of class 'State' (16 bytes: 2 attributes)");
        expect_error([&] { fed.attributes("state").set("xx", 1.0); },
                     "node 'dynamics', flow 'state' at 0 ns: class 'State' has no attribute 'xx' "
                     "(its attributes: x, v) (did you mean 'x'?)");
        expect_error([&] { fed.update("state", fed.attributes("fix")); },
                     "node 'dynamics', flow 'state' at 0 ns: a value of class 'Fix' (expected "
                     "class 'State', the output's)");
        expect_error([&] { fed.attributes("digest"); },
                     "node 'dynamics', flow 'digest' at 1000000 ns: the flow is untyped");
        expect_error(
            [&] {
              fed.decode(Delivered{"force", "force", 12'000'000, {1, 2, 3}});
            },
            "node 'dynamics', flow 'force' at 12000000 ns: a payload of 3 bytes is not "
            "a value of class 'Push'");
        expect_error(
            [&] {
              fed.decode(Delivered{"forse", "force", 0, {}});
            },
            "node 'dynamics' has no input 'forse' (did you mean 'force'?)");
        // An emitter's wrong payload is refused at its timestamp; the request changes nothing
        // and the federate goes on.
        fed.set_emitter("state", [](SimTime) { return std::vector<std::uint8_t>(3); });
        fed.set_emitter("fix", [&](SimTime) { return fed.attributes("fix").bytes(); });
        expect_error([&] { fed.time_advance_request(0); },
                     "node 'dynamics', flow 'state' at 0 ns: a payload of 3 bytes is not a value "
                     "of class 'State'");
        seen = play(fed);
      },
      0, "shm");
  EXPECT_EQ(seen.forces.size(), 50u);
}

// Typed event and observation flows: a detector sends typed events (send_event with an
// AttributeSet) that the sink reads down-sampled and noisy, publishes a typed status that the
// sink observes through noise, and observes the sink's typed level.
const char* kTypedEvents = R"(<federation until="300ms" seed="5" buffer="2">
  <class name="Alarm"><attribute name="level" type="f64"/><attribute name="code" type="u8"/></class>
  <class name="Mix"><attribute name="a" type="u64"/><attribute name="b" type="u64"/></class>
  <node name="clock" kind="mixer"><input name="back"/><output name="tick"/></node>
  <node name="detector" program="detector">
    <input name="tick"/><input name="level" class="Mix"/>
    <output name="alarm" class="Alarm"/><output name="status" class="Alarm"/>
  </node>
  <node name="sink" kind="mixer">
    <input name="alarm"/><input name="status"/><output name="level"/><output name="back"/>
  </node>
  <flow name="tick" from="clock.tick" to="detector.tick" period="10ms 3ms"/>
  <flow name="alarm" from="detector.alarm" to="sink.alarm" kind="event" lookahead="1ms">
    <downsample every="2"/>
    <noise attribute="level" sigma="0.5"/>
  </flow>
  <flow name="status" from="detector.status" to="sink.status" kind="observation" period="5ms">
    <noise attribute="level" bias="0.25" sigma="0.1"/>
  </flow>
  <flow name="level" from="sink.level" to="detector.level" kind="observation" period="7ms"/>
  <flow name="back" from="sink.back" to="clock.back" period="25ms"/>
</federation>
)";

TEST_F(TypedFederation, TypedEventAndObservationFlowsRepeatOnBothTransports) {
  // Runs 0 and 1 over shm and ZeroMQ; run 2 without the modifiers.
  std::string plain = kTypedEvents;
  for (const std::string mod :
       {R"(<downsample every="2"/>)", R"(<noise attribute="level" sigma="0.5"/>)",
        R"(<noise attribute="level" bias="0.25" sigma="0.1"/>)"})
    plain.erase(plain.find(mod), mod.size());
  std::vector<std::vector<std::uint64_t>> observed(3);
  for (int run = 0; run < 3; ++run) {
    const std::string name = run == 0 ? "events-shm" : run == 1 ? "events-zmq" : "events-plain";
    const std::string file = (dir_ / (name + ".xml")).string();
    std::ofstream(file) << (run == 2 ? plain : std::string(kTypedEvents));
    fleetsim::testing::run_federate(
        file, {"clock", "sink"}, "detector", dir_ / name,
        [&](Federate& fed) {
          int ticks = 0;
          fed.set_message_handler([&](const Delivered& m) {
            // Each tick: an alarm 1 ms later, and what the sink's level reads now.
            ++ticks;
            if (m.timestamp + 1'000'000 < fed.until())
              fed.send_event("alarm", m.timestamp + 1'000'000,
                             fed.attributes("alarm").set("level", 0.5 * ticks).set("code", ticks));
            if (const auto level = fed.observe("level"))
              observed[run].push_back(fed.decode(*level).get_unsigned("a"));
          });
          fed.set_emitter("status", [&](SimTime) {
            return fed.attributes("status").set("level", 1.0 * ticks).bytes();
          });
          for (SimTime t = 0; !fed.time_advance_request(t).done; t += 20'000'000) {
          }
        },
        100, run == 1 ? "zmq" : "shm");
  }
  EXPECT_GT(observed[0].size(), 20u);
  EXPECT_EQ(observed[0], observed[1]) << "the levels observed differ between transports";
  EXPECT_NE(observed[0], observed[2]) << "the modifiers changed nothing the sink computed";
  for (const char* node : {"clock", "detector", "sink"}) {
    const std::string a = slurp(dir_ / "events-shm" / (std::string(node) + ".trace"));
    EXPECT_GT(a.size(), 500u) << node;
    EXPECT_TRUE(a == slurp(dir_ / "events-zmq" / (std::string(node) + ".trace")))
        << node << "'s trace differs between transports";
  }
}

// `fleetsim check` and `launch` report every error of a typed federation at its line, status 2.
TEST_F(TypedFederation, CheckAndLaunchReportEveryTypingErrorWithItsLineAndStatus2) {
  std::string text = kTyped;
  auto replace = [&](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  };
  replace(R"(<input name="image" class="Image"/>)", R"(<input name="image" class="Imag"/>)");
  replace(R"(<input name="fix" class="Fix"/>)", R"(<input name="fix" class="Image"/>)");
  replace(R"(<noise attribute="z" sigma="0.01"/>)", R"(<noise attribute="zz" sigma="0.01"/>)");
  replace(
      R"(<flow name="digest" from="gps.digest" to="dynamics.digest" period="50ms" initial="1ms"/>)",
      R"(<flow name="digest" from="gps.digest" to="dynamics.digest" period="50ms" initial="1ms">)"
      R"(<downsample every="2"/></flow>)");
  const fs::path bad = dir_ / "bad.xml", err = dir_ / "err.txt";
  std::ofstream(bad) << text;
  for (const char* command : {" check ", " launch "}) {
    SCOPED_TRACE(command);
    const int status = std::system(
        fleetsim::testing::time_limited(std::string(FLEETSIM_EXE) + command + bad.string() +
                                        " > /dev/null 2> " + err.string())
            .c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2);
    const std::string out = slurp(err);
    for (const char* expected :
         {"bad.xml:17: error: unknown class 'Imag' on input 'controller.image' (expected a "
          "<class> or <interaction> of the file) (did you mean 'Image'?)",
          "bad.xml:36: error: class 'Image' of flow 'image' has no attribute 'zz' (did you mean "
          "'z'?)",
          "bad.xml:38: error: flow 'fix': node 'dynamics' publishes class 'Fix' on output 'fix' "
          "but node 'gps' subscribes to class 'Image' on input 'fix' (attribute 1 is 'lat' in "
          "'Fix' and 'z' in 'Image'; expected the same class on both sides)",
          "bad.xml:42: error: <downsample> on untyped flow 'digest'"})
      EXPECT_NE(out.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n"
                                                       << out;
  }
}

}  // namespace
}  // namespace fleetsim
