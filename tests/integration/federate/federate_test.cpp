// The federate API (include/fleetsim/federate.hpp, docs/federate-api.md): a program joins a
// federation as one of its nodes and advances by time-advance and next-event requests. The
// federation heterogeneous_rates.xml with its `dynamics` node played by a federate, written
// in several styles (time steps of any size, next-event requests, callbacks, the example
// program started by `fleetsim launch`), gives the built-in node's traces, byte for byte.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <sys/wait.h>

#include "distributed/swarm_node.hpp"
#include "federate_run.hpp"
#include "federation/launcher.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"
#include "transport/shm_transport.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;

const char* const kNodes[] = {"dynamics", "controller", "camera"};

std::string example(const std::string& name) {
  return slurp(fs::path(FLEETSIM_SOURCE_DIR) / "examples" / "federations" / name);
}

std::vector<std::uint8_t> pack(double a, double b) {
  std::vector<std::uint8_t> out(16);
  std::memcpy(out.data(), &a, 8);
  std::memcpy(out.data() + 8, &b, 8);
  return out;
}

double first_double(const std::vector<std::uint8_t>& p) {
  double v = 0;
  if (p.size() >= 8) std::memcpy(&v, p.data(), 8);
  return v;
}

/// The built-in dynamics node's model (example_nodes.cpp), as a federate would hold it.
struct Spring {
  double x = 0, v = 0, force = 0;
  SimTime t = 0;
  std::vector<std::uint8_t> state_at(SimTime to) {
    if (to > t) {
      const double dt = static_cast<double>(to - t) * 1e-9;
      const double a = force - 4.0 * x - 0.5 * v;
      v += a * dt;
      x += v * dt;
      t = to;
    }
    return pack(x, v);
  }
};

class FederateApi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("federate");
    // The reference: every node built in, on the in-process transport.
    const std::string ref = (dir_ / "builtin.xml").string();
    std::ofstream(ref) << example("heterogeneous_rates.xml");
    Diagnostics d;
    auto fed = federation::load_federation(ref, d);
    ASSERT_TRUE(fed) << d.str();
    federation::RunOptions o;
    o.trace_dir = (dir_ / "ref").string();
    o.quiet = true;
    ASSERT_EQ(federation::launch_threads(*fed, o), 0);
    // The same federation with `dynamics` an external program.
    std::string text = example("heterogeneous_rates.xml");
    const std::string builtin = "<node name=\"dynamics\" kind=\"dynamics\">";
    text.replace(text.find(builtin), builtin.size(),
                 "<node name=\"dynamics\" program=\"" SPRING_FEDERATE "\">");
    external_ = (dir_ / "external.xml").string();
    std::ofstream(external_) << text;
  }

  /// Runs controller and camera (built in) in threads and `play` as the dynamics node in this
  /// thread, with traces in `traces`, every node on `transport` (shm, or ZeroMQ over ipc).
  void run_with(const fs::path& traces, const std::function<void(Federate&)>& play,
                std::uint32_t jitter_us = 100, const std::string& transport = "shm") {
    fleetsim::testing::run_federate(external_, {kNodes[1], kNodes[2]}, "dynamics", traces, play,
                                    jitter_us, transport);
  }

  void expect_reference_traces(const fs::path& traces) {
    for (const char* n : kNodes) {
      const std::string got = slurp(traces / (std::string(n) + ".trace"));
      EXPECT_GT(got.size(), 1000u) << n;
      EXPECT_TRUE(got == slurp(dir_ / "ref" / (std::string(n) + ".trace")))
          << "node " << n << "'s trace differs from the built-in federation's";
    }
  }

  fs::path dir_;
  std::string external_;
};

TEST_F(FederateApi, TimeStepsOfAnySizeGiveTheBuiltInNodesTraces) {
  for (SimTime step : {SimTime{1'000'000}, SimTime{7'000'000}, SimTime{250'000'000}}) {
    SCOPED_TRACE("step " + std::to_string(step) + " ns");
    Spring s;
    SimTime last_grant = -1;
    std::uint64_t delivered = 0;
    const fs::path traces = dir_ / ("tar-" + std::to_string(step));
    // Both transports between processes: the same traces.
    const std::string transport = step == 7'000'000 ? "zmq" : "shm";
    run_with(
        traces,
        [&](Federate& fed) {
          fed.set_message_handler([&](const Delivered& m) {
            EXPECT_EQ(m.input, "force");
            EXPECT_EQ(m.flow, "force");
            EXPECT_GT(m.timestamp, last_grant) << "a message stamped at or before the last grant";
            s.force = first_double(m.payload);
            ++delivered;
          });
          fed.set_emitter("state", [&](SimTime t) { return s.state_at(t); });
          for (SimTime t = 0;; t += step) {
            const Grant g = fed.time_advance_request(t);
            EXPECT_EQ(g.time, t);
            EXPECT_TRUE(g.messages.empty()) << "the handler takes them";
            last_grant = t;
            if (g.done) break;
          }
        },
        100, transport);
    EXPECT_EQ(delivered, 300u) << "a force every 10 ms from 2 ms to 3 s";
    expect_reference_traces(traces);
  }
}

// Messages returned with the grants instead of a handler; the state published with update()
// just before it is due (the time-stepped style of HLA federates).
TEST_F(FederateApi, GrantsCarryTheMessagesInTimeStampOrder) {
  Spring s;
  std::vector<SimTime> stamps;
  const fs::path traces = dir_ / "grants";
  run_with(traces, [&](Federate& fed) {
    EXPECT_EQ(fed.outputs(), std::vector<std::string>{"state"});
    EXPECT_EQ(fed.inputs(), std::vector<std::string>{"force"});
    EXPECT_EQ(fed.until(), 3'000'000'000);
    for (;;) {
      const SimTime next = fed.next_emission("state");
      Grant g = fed.time_advance_request(next - 1);  // everything before our next message
      for (const auto& m : g.messages) {
        EXPECT_LE(m.timestamp, next - 1);
        stamps.push_back(m.timestamp);
        s.force = first_double(m.payload);
      }
      if (g.done) break;
      fed.update("state", s.state_at(next));
      g = fed.time_advance_request(next);  // sends it; takes what is stamped exactly then
      for (const auto& m : g.messages) {
        EXPECT_EQ(m.timestamp, next);
        stamps.push_back(m.timestamp);
        s.force = first_double(m.payload);
      }
      if (g.done) break;
    }
    EXPECT_EQ(fed.granted(), 2'999'000'000) << "done at our last message, 1 ms before the end";
  });
  ASSERT_EQ(stamps.size(), 300u);
  for (std::size_t k = 0; k < stamps.size(); ++k)
    EXPECT_EQ(stamps[k], 2'000'000 + static_cast<SimTime>(k) * 10'000'000);
  expect_reference_traces(traces);
}

// Event-driven: next-event requests grant the time of each message, or the requested time
// when none comes before it.
TEST_F(FederateApi, NextEventRequestsGrantEachMessagesTime) {
  Spring s;
  std::vector<SimTime> grants;
  const fs::path traces = dir_ / "ner";
  run_with(traces, [&](Federate& fed) {
    fed.set_emitter("state", [&](SimTime t) { return s.state_at(t); });
    SimTime horizon = 0;
    for (;;) {
      const Grant g = fed.next_event_request(horizon);
      grants.push_back(g.time);
      for (const auto& m : g.messages) {
        EXPECT_EQ(m.timestamp, g.time);
        s.force = first_double(m.payload);
      }
      if (g.done) break;
      if (g.messages.empty()) {
        EXPECT_EQ(g.time, horizon);
        horizon += 25'000'000;  // nothing came: look further
      }
    }
  });
  // Forces at 2, 12, 22 ms, ...: each granted at its own time.
  ASSERT_GE(grants.size(), 300u);
  EXPECT_EQ(grants[0], 0);
  EXPECT_NE(std::find(grants.begin(), grants.end(), 2'000'000), grants.end());
  EXPECT_NE(std::find(grants.begin(), grants.end(), 12'000'000), grants.end());
  expect_reference_traces(traces);
}

TEST_F(FederateApi, MisuseIsRefusedNamingTheNodeTheOutputAndTheTimes) {
  const fs::path traces = dir_ / "misuse";
  run_with(traces, [&](Federate& fed) {
    try {
      fed.update("stat", {});
      ADD_FAILURE() << "an unknown output was accepted";
    } catch (const FederateError& e) {
      EXPECT_NE(std::string(e.what()).find("node 'dynamics' has no output 'stat'"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("did you mean 'state'"), std::string::npos);
    }
    try {
      fed.time_advance_request(5);  // the state is due at 0 and nothing says what it is
      ADD_FAILURE() << "an output with no value was sent";
    } catch (const FederateError& e) {
      EXPECT_NE(std::string(e.what()).find("output 'state' has no value to send at 0 ns"),
                std::string::npos)
          << e.what();
    }
    Spring s;
    fed.set_message_handler([&](const Delivered& m) { s.force = first_double(m.payload); });
    fed.set_emitter("state", [&](SimTime t) { return s.state_at(t); });
    fed.time_advance_request(50'000'000);
    try {
      fed.time_advance_request(40'000'000);
      ADD_FAILURE() << "time went back";
    } catch (const FederateError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "time_advance_request(40000000 ns) is below the time already granted, "
                    "50000000 ns"),
                std::string::npos)
          << e.what();
    }
    fed.run({});
  });
  expect_reference_traces(traces);
}

// The example program, started by `fleetsim launch` as a program node, twice, with jitter;
// the second time with every node's ZeroMQ I/O thread on a CPU of its own (launch passes
// --zmq-io-thread to the built-in nodes and to the program).
TEST_F(FederateApi, TheExampleProgramUnderLaunchGivesTheBuiltInTracesTwice) {
  for (int run = 0; run < 2; ++run) {
    const fs::path traces = dir_ / ("launch-" + std::to_string(run));
    const std::string cmd =
        fleetsim::testing::time_limited(std::string(FLEETSIM_EXE) + " launch " + external_) +
        " --transport zmq --jitter-us 300 --quiet --trace " + traces.string() +
        (run == 1 ? " --zmq-io-thread dedicated" : "") + " 2>" + (dir_ / "stderr.txt").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "stderr.txt");
    expect_reference_traces(traces);
  }
  EXPECT_NE(slurp(dir_ / "stderr.txt").find("spring: t = 3 s, x = "), std::string::npos);
}

TEST_F(FederateApi, AFederationThatCannotBeJoinedSaysWhy) {
  try {
    Federate f(external_, "dynamix");
    ADD_FAILURE() << "joined as an unknown node";
  } catch (const FederateError& e) {
    EXPECT_NE(std::string(e.what()).find("no node called 'dynamix'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("did you mean 'dynamics'"), std::string::npos);
  }
  try {
    FederateOptions zmq;  // (over shared memory, the default here, endpoints are not needed)
    zmq.transport = "zmq";
    Federate f(external_, "dynamics", zmq);  // no endpoints, no ipc_dir
    ADD_FAILURE() << "joined without endpoints";
  } catch (const FederateError& e) {
    EXPECT_NE(std::string(e.what()).find("has no endpoint"), std::string::npos) << e.what();
  }
  const std::string bad = (dir_ / "bad.xml").string();
  std::ofstream(bad) << "<federation until=\"1s\"><node name=\"a\" kind=\"mixr\"/></federation>";
  try {
    Federate f(bad, "a");
    ADD_FAILURE() << "joined a federation with errors";
  } catch (const FederateError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml:1: error:"), std::string::npos) << e.what();
  }
  char prog[] = "spring", fed[] = "x.xml";
  char* argv[] = {prog, fed};
  try {
    Federate::from_command_line(2, argv);
    ADD_FAILURE() << "no --name was accepted";
  } catch (const FederateError& e) {
    EXPECT_NE(std::string(e.what()).find("--name"), std::string::npos) << e.what();
  }
}

// A swarm experiment as a federation node (<node experiment="...">): a federate places its
// robot; a pose for a robot the experiment does not have, or a flow at times that are not
// whole ticks, stops the swarm node with a message naming the node, the input and the time.
class SwarmNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    distributed::install_swarm_nodes();
    dir_ = fleetsim::testing::fresh_test_dir("federate");
    std::ofstream(dir_ / "swarm.xml") << R"(<fleetsim>
  <framework ticks_per_second="10" length="5" seed="2"/>
  <controllers><controller id="ext" type="external"/><controller id="w" type="random_walk"/></controllers>
  <arena size="4,4">
    <robot id="flown" kind="epuck" controller="ext" position="-1,-1"/>
    <distribute count="5" kind="epuck" controller="w" id_prefix="w" region="0,0,2,2"/>
  </arena>
  <log path="swarm.flog"/>
</fleetsim>)";
  }
  std::string federation(const std::string& period) {
    const std::string path = (dir_ / "fed.xml").string();
    std::ofstream(path) << "<federation until=\"1s\">\n"
                           "  <node name=\"swarm\" experiment=\"swarm.xml\"><input name=\"in\"/>"
                           "<output name=\"poses\"/></node>\n"
                           "  <node name=\"pilot\" program=\"pilot\"><input name=\"poses\"/>"
                           "<output name=\"pose\"/></node>\n"
                           "  <flow name=\"poses\" from=\"swarm.poses\" to=\"pilot.poses\" "
                           "period=\"" +
                               period +
                               "\"/>\n"
                               "  <flow name=\"cmd\" from=\"pilot.pose\" to=\"swarm.in\" "
                               "period=\"100ms\" initial=\"50ms\"/>\n</federation>\n";
    return path;
  }
  /// Runs the swarm node in a thread and `pilot` here; returns the swarm node's result.
  federation::NodeResult run(const std::string& path, const std::function<void(Federate&)>& pilot) {
    return fleetsim::testing::run_swarm_and_pilot(path, pilot);
  }
  fs::path dir_;
};

TEST_F(SwarmNodeTest, AFederatePlacesItsRobotAndReadsEveryPose) {
  std::vector<double> seen_x;
  auto r = run(federation("100ms"), [&](Federate& fed) {
    fed.set_message_handler([&](const Delivered& m) {
      for (const auto& p : distributed::decode_poses(m.payload))
        if (p.name == "flown") seen_x.push_back(p.x);
    });
    double x = -1;
    fed.set_emitter("pose", [&](SimTime) {
      x += 0.1;  // 1 m/s along x
      return distributed::encode_poses({{"flown", x, -1, 0, 0}});
    });
    fed.run({});
  });
  ASSERT_TRUE(r.ok) << r.error;
  // Poses at 0, 100, ... 900 ms; the robot placed at each tick after its pose's time.
  ASSERT_EQ(seen_x.size(), 10u);
  EXPECT_DOUBLE_EQ(seen_x[0], -1.0);
  EXPECT_NEAR(seen_x[1], -0.9, 1e-12);
  EXPECT_NEAR(seen_x[9], -0.1, 1e-12);
  EXPECT_TRUE(fs::exists(dir_ / "swarm.flog"));
}

TEST_F(SwarmNodeTest, BadPosesAndBadPeriodsStopTheSwarmNodeNamingThem) {
  auto r = run(federation("100ms"), [&](Federate& fed) {
    fed.update("pose", distributed::encode_poses({{"nobody", 0, 0, 0, 0}}));
    fed.run({});
  });
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("swarm node 'swarm', input 'in' (flow 'cmd') at 50000000 ns: no robot "
                         "'nobody'"),
            std::string::npos)
      << r.error;
  r = run(federation("100ms"), [&](Federate& fed) {
    fed.update("pose", {1, 2, 3});
    fed.run({});
  });
  EXPECT_NE(r.error.find("a malformed pose message"), std::string::npos) << r.error;
  r = run(federation("100ms"), [&](Federate& fed) {
    fed.update("pose", distributed::encode_poses({{"flown", 50, 0, 0, 0}}));
    fed.run({});
  });
  EXPECT_NE(r.error.find("robot 'flown' at (50.000000, 0.000000) is outside the arena"),
            std::string::npos)
      << r.error;
  r = run(federation("150ms"), [&](Federate& fed) { fed.run({}); });
  EXPECT_NE(r.error.find("flow 'poses' leaves swarm node 'swarm' at times that are not whole "
                         "ticks"),
            std::string::npos)
      << r.error;
  // A swarm node sends on a schedule, and places every pose it is sent: an event flow out of
  // it, or an observation flow into it, stops it at its start.
  for (const auto& [from, to, expected] :
       {std::tuple<std::string, std::string, std::string>{
            R"(to="pilot.poses" period="100ms")", R"(to="pilot.poses" kind="event" lookahead="0")",
            "flow 'poses' leaves swarm node 'swarm' as an event flow"},
        {R"(period="100ms" initial="50ms")", R"(period="100ms" initial="50ms" kind="observation")",
         "flow 'cmd' enters swarm node 'swarm' as an observation flow"}}) {
    const std::string path = federation("100ms");
    std::string text = slurp(path);
    text.replace(text.find(from), from.size(), to);
    std::ofstream(path) << text;
    r = run(path, [&](Federate& fed) { fed.run({}); });
    EXPECT_NE(r.error.find(expected), std::string::npos) << r.error;
  }
}

// External robots driven by their controller in the federate: a swarm node's output naming a
// robot sends its sensor readings, an input naming it takes its actuator commands, which the
// swarm's physics applies (the wall stops the robot).
class ExternalRobotTest : public SwarmNodeTest {
 protected:
  void SetUp() override {
    SwarmNodeTest::SetUp();
    // "rover" faces the west wall (x = -2), 0.115 m from it: out of its rays' 0.1 m.
    std::ofstream(dir_ / "rover.xml") << R"(<fleetsim>
  <framework ticks_per_second="10" length="5" seed="2"/>
  <controllers><controller id="ext" type="external"/><controller id="w" type="random_walk"/></controllers>
  <arena size="4,4">
    <robot id="rover" kind="epuck" controller="ext" position="-1.85,-1" heading="180"/>
    <robot id="eye" kind="eyebot" controller="ext" position="1,-1"/>
    <robot id="fb" kind="footbot" controller="w" position="-1,1"/>
    <distribute count="3" kind="epuck" controller="w" id_prefix="w" region="0,0,2,2"/>
  </arena>
  <physics><kinematics2d id="ground"/><pointmass3d id="air" ceiling="4"/></physics>
  <log path="rover.flog"/>
</fleetsim>)";
  }
  /// The pilot takes the rover's readings and every pose, and sends `robot`'s commands.
  std::string federation(const std::string& robot = "rover",
                         const std::string& readings = "rover") {
    const std::string path = (dir_ / "fed.xml").string();
    std::ofstream(path)
        << "<federation until=\"2s\">\n"
           "  <node name=\"swarm\" experiment=\"rover.xml\">\n"
           "    <input name=\"wheels\" robot=\"" +
               robot +
               "\"/>\n"
               "    <output name=\"readings\" robot=\"" +
               readings +
               "\"/>\n"
               "    <output name=\"poses\"/>\n"
               "  </node>\n"
               "  <node name=\"pilot\" program=\"pilot\"><input name=\"readings\"/>"
               "<input name=\"poses\"/><output name=\"wheels\"/></node>\n"
               "  <flow name=\"readings\" from=\"swarm.readings\" to=\"pilot.readings\" "
               "period=\"100ms\"/>\n"
               "  <flow name=\"poses\" from=\"swarm.poses\" to=\"pilot.poses\" "
               "period=\"100ms\"/>\n"
               "  <flow name=\"cmd\" from=\"pilot.wheels\" to=\"swarm.wheels\" "
               "period=\"100ms\" initial=\"50ms\"/>\n</federation>\n";
    return path;
  }
};

TEST_F(ExternalRobotTest, AFederateReadsItsRobotsSensorsAndDrivesItByWheelSpeedsIntoAWall) {
  std::vector<distributed::RobotReadings> readings;
  std::vector<SimTime> at;
  std::vector<std::size_t> sizes;
  std::vector<double> x, eye_z;
  auto r = run(federation(), [&](Federate& fed) {
    fed.set_message_handler([&](const Delivered& m) {
      if (m.input == "readings") {
        sizes.push_back(m.payload.size());
        readings.push_back(distributed::decode_readings(m.payload));
        at.push_back(m.timestamp);
      } else {
        for (const auto& p : distributed::decode_poses(m.payload)) {
          if (p.name == "rover") x.push_back(p.x);
          if (p.name == "eye") eye_z.push_back(p.z);
        }
      }
    });
    // 0.1 m/s on both wheels: straight ahead, west; the LED red.
    fed.update("wheels", distributed::encode_commands(
                             {{"differential_drive", distributed::command_values({0.1, 0.1})},
                              {"leds", {255, 0, 0, 255}}}));
    fed.run({});
  });
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(readings.size(), 20u);  // at 0, 100, ..., 1900 ms
  // At 0 no tick has been simulated; then the readings of the tick before each message.
  EXPECT_EQ(readings[0].tick, -1);
  EXPECT_TRUE(readings[0].sensors.empty());
  std::vector<float> front;  // the two front rays' largest reading
  for (std::size_t k = 1; k < readings.size(); ++k) {
    const auto& rd = readings[k];
    EXPECT_EQ(rd.tick, at[k] / 100'000'000 - 1);
    ASSERT_EQ(rd.sensors.size(), 2u);
    EXPECT_EQ(rd.sensors[0].name, "proximity");
    EXPECT_EQ(rd.sensors[1].type, "collision");
    ASSERT_EQ(rd.sensors[0].values.size(), 8u);
    ASSERT_EQ(rd.sensors[0].angles.size(), 8u);
    front.push_back(std::max(rd.sensors[0].values[0], rd.sensors[0].values[7]));
    // The documented layout: 178 bytes for an e-puck, 4 more per contact.
    EXPECT_EQ(sizes[k], 178u + 4 * rd.sensors[1].angles.size()) << k;
  }
  // Out of range at first; then the wall comes nearer at each tick, up to touching.
  EXPECT_EQ(front[0], 0.0f);
  EXPECT_GT(front.back(), 0.9f);
  for (std::size_t k = 1; k < front.size(); ++k) EXPECT_GE(front[k], front[k - 1]) << k;
  // The command applies from tick 1 (its message is stamped 50 ms): 1 cm a tick, until the
  // wall stops the body at x = -2 + its radius.
  ASSERT_EQ(x.size(), 20u);
  EXPECT_DOUBLE_EQ(x[0], -1.85);
  EXPECT_DOUBLE_EQ(x[1], -1.85);
  EXPECT_NEAR(x[3], -1.87, 1e-9);
  EXPECT_NEAR(x.back(), -2 + 0.035, 1e-3);
  for (double v : x) EXPECT_GE(v, -2 + 0.035 - 1e-9);
  EXPECT_FALSE(readings.back().sensors[1].angles.empty()) << "the collision sensor's contact";
  // The flyer, external too but sent nothing, stays on the ground.
  ASSERT_FALSE(eye_z.empty());
  EXPECT_EQ(eye_z.back(), 0.0);
}

// A controller that answers each readings message at its own timestamp (a zero-lookahead
// event flow) drives the tick right after the one its readings come from.
TEST_F(ExternalRobotTest, AnEventFlowAnsweringEachReadingAtItsTimestampActsOneTickLater) {
  const std::string path = federation();
  std::string text = slurp(path);
  const std::string periodic = R"(period="100ms" initial="50ms")";
  text.replace(text.find(periodic), periodic.size(), R"(kind="event" lookahead="0")");
  std::ofstream(path) << text;
  std::vector<double> x;
  auto r = run(path, [&](Federate& fed) {
    fed.set_message_handler([&](const Delivered& m) {
      if (m.input == "poses")
        for (const auto& p : distributed::decode_poses(m.payload))
          if (p.name == "rover") x.push_back(p.x);
      // From the readings of tick 0 (sent at 100 ms) on: straight ahead at 0.1 m/s.
      if (m.input == "readings" && distributed::decode_readings(m.payload).tick == 0)
        fed.send_event("wheels", m.timestamp,
                       distributed::encode_commands(
                           {{"differential_drive", distributed::command_values({0.1, 0.1})}}));
    });
    fed.run({});
  });
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_GE(x.size(), 4u);
  EXPECT_DOUBLE_EQ(x[1], -1.85);   // at 100 ms: ticks 0 only
  EXPECT_NEAR(x[2], -1.86, 1e-9);  // tick 1 moved it: the command stamped 100 ms
  EXPECT_NEAR(x[3], -1.87, 1e-9);
}

TEST_F(ExternalRobotTest, AFlyerTakesVelocityCommands) {
  std::vector<double> z;
  int rab_readings = 0;
  auto r = run(federation("eye", "eye"), [&](Federate& fed) {
    fed.set_message_handler([&](const Delivered& m) {
      if (m.input == "poses")
        for (const auto& p : distributed::decode_poses(m.payload))
          if (p.name == "eye") z.push_back(p.z);
      if (m.input == "readings" && m.timestamp > 0) {
        const auto rd = distributed::decode_readings(m.payload);
        EXPECT_EQ(rd.sensors.at(0).type, "positioning");
        EXPECT_EQ(rd.sensors.at(0).reals.size(), 4u);  // x, y, theta, z
        // The foot-bot's range-and-bearing broadcasts, named by their sender.
        ASSERT_EQ(rd.sensors.at(1).type, "range_and_bearing");
        ASSERT_EQ(rd.sensors[1].messages.size(), 1u);
        EXPECT_EQ(rd.sensors[1].messages[0].sender, "fb");
        // 2.83 m apart on the ground at the start; the foot-bot walks, the eye-bot climbs.
        EXPECT_NEAR(rd.sensors[1].messages[0].range_m, std::hypot(2.0, 2.0), 0.3);
        EXPECT_EQ(rd.sensors[1].messages[0].data.size(), 10u);
        ++rab_readings;
      }
    });
    // Up at 0.5 m/s.
    fed.update("wheels", distributed::encode_commands(
                             {{"quadrotor_speed", distributed::command_values({0, 0, 0.5, 0})}}));
    fed.run({});
  });
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(z.size(), 20u);
  EXPECT_EQ(z[1], 0.0);
  EXPECT_GT(z.back(), 0.3);
  EXPECT_EQ(rab_readings, 19);
  for (std::size_t k = 1; k < z.size(); ++k) EXPECT_GE(z[k], z[k - 1]);
}

TEST_F(ExternalRobotTest, BadCommandsStopTheSwarmNodeNamingTheFlowAndTime) {
  const std::string at = "swarm node 'swarm', input 'wheels' (flow 'cmd') at 50000000 ns: ";
  for (const auto& bad : std::vector<std::pair<std::vector<std::uint8_t>, std::string>>{
           {distributed::encode_commands(
                {{"differential_drive", distributed::command_values({0.1})}}),
            at + "actuator 'differential_drive' of robot 'rover' takes 16 bytes (2 f64 values, "
                 "0 colours of 4 bytes, 0 data bytes), the command gives 8"},
           {distributed::encode_commands({{"leds", {}}}),
            at + "actuator 'leds' of robot 'rover' takes 4 bytes (0 f64 values, 1 colours of 4 "
                 "bytes, 0 data bytes), the command gives 0"},
           {distributed::encode_commands({{"diferential_drive", {}}}),
            at + "robot 'rover' has no actuator 'diferential_drive' (did you mean "
                 "'differential_drive'?) (its actuators: 'differential_drive', 'leds')"},
           {{1, 0, 0, 0, 9}, at + "a malformed command message"}}) {
    // (Named copies: clang 14 cannot capture a structured binding in a lambda.)
    const std::vector<std::uint8_t>& command = bad.first;
    const std::string& expected = bad.second;
    auto r = run(federation(), [&](Federate& fed) {
      fed.update("wheels", command);
      fed.run({});
    });
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find(expected), std::string::npos) << r.error;
  }
}

TEST_F(ExternalRobotTest, PortsNamingUnknownOrNonExternalRobotsAreRefusedBeforeTheStart) {
  // Both errors at once, at the ports' lines, with status 2: from `fleetsim launch` before any
  // node starts, from `fleetsim node` for the swarm node, and from `fleetsim check`.
  const std::string path = federation("w1", "rovr");
  for (const char* command : {" launch ", " check ", " node --name swarm "}) {
    EXPECT_EQ(fleetsim::testing::run_fleetsim(command + path, dir_ / "stderr.txt"), 2) << command;
    const std::string err = slurp(dir_ / "stderr.txt");
    EXPECT_NE(err.find("fed.xml:3: error: swarm node 'swarm', input 'wheels': robot 'w1' of " +
                       (dir_ / "rover.xml").string() +
                       " is not external: its controller 'w' is of type 'random_walk'"),
              std::string::npos)
        << command << err;
    EXPECT_NE(err.find("fed.xml:4: error: swarm node 'swarm', output 'readings': no robot "
                       "'rovr' in " +
                       (dir_ / "rover.xml").string() + " (did you mean 'rover'?)"),
              std::string::npos)
        << command << err;
  }
  // `robot` on a node that is not a swarm node.
  std::ofstream(path) << "<federation until=\"1s\">\n"
                         "  <node name=\"a\"><input name=\"i\"/><output name=\"o\" "
                         "robot=\"rover\"/></node>\n"
                         "  <node name=\"b\"><input name=\"i\"/><output name=\"o\"/></node>\n"
                         "  <flow name=\"ab\" from=\"a.o\" to=\"b.i\" period=\"1ms\"/>\n"
                         "  <flow name=\"ba\" from=\"b.o\" to=\"a.i\" period=\"1ms\"/>\n"
                         "</federation>\n";
  Diagnostics d;
  EXPECT_FALSE(federation::load_federation(path, d));
  EXPECT_NE(d.str().find("fed.xml:2: error: attribute 'robot' is for the ports of swarm nodes "
                         "only"),
            std::string::npos)
      << d.str();
}

TEST(ExternalRobotMessages, ReadingsRoundTripAndRefuseTruncation) {
  distributed::RobotReadings in;
  in.tick = 12;
  distributed::SensorReadings s;
  s.name = "rab";
  s.type = "range_and_bearing";
  s.enabled = false;
  s.scalar = 0.5f;
  s.values = {0.25f};
  s.angles = {1.5f, -1.5f};
  s.reals = {1.0, 2.0, 3.0};
  s.messages.push_back({"fb3", 1.25f, 0.5f, -0.25f, {1, 2, 3}});
  s.blobs.push_back({Color{255, 0, 0, 255}, 0.75f, 0.125f});
  in.sensors = {s, s};
  const auto bytes = distributed::encode_readings(in);
  const auto out = distributed::decode_readings(bytes);
  EXPECT_EQ(distributed::encode_readings(out), bytes);
  EXPECT_EQ(out.tick, 12);
  ASSERT_EQ(out.sensors.size(), 2u);
  EXPECT_EQ(out.sensors[1].messages.at(0).sender, "fb3");
  EXPECT_EQ(out.sensors[1].messages.at(0).data, (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_EQ(out.sensors[1].blobs.at(0).color, (Color{255, 0, 0, 255}));
  EXPECT_FALSE(out.sensors[1].enabled);
  // Every truncation and a trailing byte are refused, never read past the end.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(distributed::decode_readings(cut), std::runtime_error) << n;
  }
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(distributed::decode_readings(longer), std::runtime_error);
}

}  // namespace
}  // namespace fleetsim
