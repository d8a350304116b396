// A swarm node whose experiment runs on several processes (<node experiment="..."
// processes="N">, docs/federate-api.md): a federate drives an external robot by wheel speeds
// from its readings, across the border between two regions that different processes simulate,
// and flies another by poses. The traces, every message the federate receives and the swarm's
// frame log are the same bytes on 1, 2 and 3 processes, with jitter, over shared memory and
// ZeroMQ, and with the node's processes as threads (launch over the in-process transport).
// Bad declarations are refused before the start.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "distributed/swarm_node.hpp"
#include "federate_run.hpp"
#include "federation/launcher.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;

// Two ground regions and the air: "rover" starts in the west and drives east, so the process
// running its controller changes on the way; "drone" is flown by poses; diffusing e-pucks and a
// random-walking foot-bot (whose controller moves with it) cross the border too.
constexpr const char* kExperiment = R"(<fleetsim>
  <framework ticks_per_second="10" length="100" seed="3" threads="2"/>
  <controllers>
    <controller id="ext" type="external"/>
    <controller id="d" type="diffusion" speed="0.1"/>
    <controller id="w" type="random_walk"/>
  </controllers>
  <arena size="4,4">
    <robot id="rover" kind="epuck" controller="ext" position="-0.25,-0.4" heading="0"/>
    <robot id="drone" kind="eyebot" controller="ext" position="-1,1"/>
    <robot id="fb" kind="footbot" controller="w" position="0.1,1"/>
    <distribute count="14" kind="epuck" controller="d" id_prefix="ep" region="-0.8,-0.8,0.8,0.8"/>
  </arena>
  <physics>
    <kinematics2d id="west" region="-2,-2,0,2"/>
    <kinematics2d id="east" region="0,-2,2,2"/>
    <pointmass3d id="air" ceiling="4"/>
  </physics>
  <log path="trio.flog"/>
</fleetsim>)";

class SwarmProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    distributed::install_swarm_nodes();
    dir_ = fleetsim::testing::fresh_test_dir("federate");
    std::ofstream(dir_ / "trio.xml") << kExperiment;
  }

  /// The federation: the pilot answers each readings message at its own timestamp (a
  /// zero-lookahead event flow) and flies the drone 50 ms after each tick.
  std::string federation(int processes) {
    const std::string path = (dir_ / "fed.xml").string();
    std::ofstream(path) << "<federation until=\"4s\">\n"
                           "  <node name=\"swarm\" experiment=\"trio.xml\" processes=\""
                        << processes
                        << "\">\n"
                           "    <input name=\"wheels\" robot=\"rover\"/>\n"
                           "    <input name=\"drone\"/>\n"
                           "    <output name=\"readings\" robot=\"rover\"/>\n"
                           "    <output name=\"poses\"/>\n"
                           "  </node>\n"
                           "  <node name=\"pilot\" program=\"pilot\"><input name=\"readings\"/>"
                           "<input name=\"poses\"/><output name=\"wheels\"/>"
                           "<output name=\"drone\"/></node>\n"
                           "  <flow name=\"readings\" from=\"swarm.readings\" "
                           "to=\"pilot.readings\" period=\"100ms\"/>\n"
                           "  <flow name=\"poses\" from=\"swarm.poses\" to=\"pilot.poses\" "
                           "period=\"200ms\"/>\n"
                           "  <flow name=\"cmd\" from=\"pilot.wheels\" to=\"swarm.wheels\" "
                           "kind=\"event\" lookahead=\"0\"/>\n"
                           "  <flow name=\"drone\" from=\"pilot.drone\" to=\"swarm.drone\" "
                           "period=\"100ms\" initial=\"50ms\"/>\n"
                           "</federation>\n";
    return path;
  }

  /// What a run gave: the traces, the frame log and every message the pilot received.
  struct Outcome {
    std::map<std::string, std::string> files;
    std::vector<std::vector<std::uint8_t>> received;
    std::vector<double> rover_x;
  };

  Outcome run(int processes, const std::string& transport, std::uint32_t jitter_us) {
    Outcome out;
    const fs::path traces = dir_ / "traces";
    fs::remove_all(traces);
    fs::remove(dir_ / "trio.flog");
    auto pilot = [&](Federate& fed) {
      fed.set_message_handler([&](const Delivered& m) {
        out.received.push_back(m.payload);
        if (m.input == "poses") {
          for (const auto& p : distributed::decode_poses(m.payload))
            if (p.name == "rover") out.rover_x.push_back(p.x);
          return;
        }
        // East at 0.1 m/s, swerving from what the front rays see; the LED shows it.
        const auto rd = distributed::decode_readings(m.payload);
        float front = 0;
        if (!rd.sensors.empty() && rd.sensors[0].values.size() == 8)
          front = std::max(rd.sensors[0].values[0], rd.sensors[0].values[7]);
        const double turn = 0.08 * front;
        const std::uint8_t red = front > 0 ? 255 : 0;
        fed.send_event("wheels", m.timestamp,
                       distributed::encode_commands(
                           {{"differential_drive", distributed::command_values({0.1 + turn, 0.1})},
                            {"leds", {red, static_cast<std::uint8_t>(255 - red), 0, 255}}}));
      });
      fed.set_emitter("drone", [](SimTime t) {
        const double s = static_cast<double>(t) * 1e-9;
        return distributed::encode_poses({{"drone", -1 + 0.4 * s, 1, 0.5 + 0.2 * s, 0.1 * s}});
      });
      fed.run({});
    };
    auto fed =
        fleetsim::testing::run_federates(federation(processes), {"swarm"}, {{"pilot", pilot}},
                                         traces, jitter_us, transport, 0, FLEETSIM_EXE);
    EXPECT_TRUE(fed);
    for (const char* name : {"swarm.trace", "pilot.trace"}) out.files[name] = slurp(traces / name);
    out.files["trio.flog"] = slurp(dir_ / "trio.flog");
    return out;
  }

  fs::path dir_;
};

TEST_F(SwarmProcesses, ExternalRobotsGiveTheSameBitsOnOneTwoAndThreeProcesses) {
  const Outcome reference = run(1, "shm", 0);
  ASSERT_GT(reference.files.at("trio.flog").size(), 1000u);
  ASSERT_GT(reference.files.at("swarm.trace").size(), 1000u);
  // The rover crossed from the west region into the east one.
  ASSERT_GE(reference.rover_x.size(), 10u);
  EXPECT_LT(reference.rover_x.front(), 0.0);
  EXPECT_GT(reference.rover_x.back(), 0.02);
  for (const auto& [processes, transport] :
       std::vector<std::pair<int, std::string>>{{2, "shm"}, {3, "shm"}, {3, "zmq"}, {2, "zmq"}}) {
    SCOPED_TRACE(std::to_string(processes) + " processes, " + transport);
    const Outcome got = run(processes, transport, 300);
    EXPECT_EQ(got.received.size(), reference.received.size());
    EXPECT_TRUE(got.received == reference.received) << "the messages the federate received differ";
    for (const auto& [name, bytes] : reference.files)
      EXPECT_TRUE(got.files.at(name) == bytes) << name << " differs";
  }
}

// A command that does not fit the rover's actuator, while the rover's controller runs on
// another process than the node's: the node stops with the error of one process, at the same
// tick. A pose outside the arena likewise.
TEST_F(SwarmProcesses, ACommandThatDoesNotFitStopsTheNodeAsOnOneProcess) {
  for (const auto& [bad, expected] : std::vector<std::pair<std::vector<std::uint8_t>, std::string>>{
           {distributed::encode_commands(
                {{"differential_drive", distributed::command_values({0.1})}}),
            "swarm node 'swarm', input 'wheels' (flow 'cmd') at 100000000 ns: actuator "
            "'differential_drive' of robot 'rover' takes 16 bytes (2 f64 values, 0 colours of 4 "
            "bytes, 0 data bytes), the command gives 8"},
           {{},
            "swarm node 'swarm', input 'drone' (flow 'drone') at 50000000 ns: robot 'drone' at "
            "(9.000000, 1.000000) is outside the arena"}}) {
    // (Named copies: clang 14 cannot capture a structured binding in a lambda.)
    const std::vector<std::uint8_t>& command = bad;
    for (int processes : {1, 3}) {
      SCOPED_TRACE(std::to_string(processes) + " processes: " + expected);
      std::vector<std::int64_t> ticks;
      auto r = fleetsim::testing::run_swarm_and_pilot(
          federation(processes),
          [&](Federate& fed) {
            fed.set_message_handler([&](const Delivered& m) {
              if (m.input != "readings") return;
              ticks.push_back(distributed::decode_readings(m.payload).tick);
              if (!command.empty() && m.timestamp == 100'000'000)
                fed.send_event("wheels", m.timestamp, command);
            });
            fed.set_emitter("drone", [&](SimTime) {
              return distributed::encode_poses({{"drone", command.empty() ? 9.0 : 0.0, 1, 1, 0}});
            });
            fed.run({});
          },
          FLEETSIM_EXE);
      EXPECT_FALSE(r.ok);
      EXPECT_NE(r.error.find(expected), std::string::npos) << r.error;
      EXPECT_EQ(r.error.find("process 1"), std::string::npos) << r.error;
      // The readings the pilot got before: the same on 1 and 3 processes.
      const std::vector<std::int64_t> before =
          command.empty() ? std::vector<std::int64_t>{-1} : std::vector<std::int64_t>{-1, 0};
      EXPECT_EQ(ticks, before);
    }
  }
}

// launch over the in-process transport: the node's processes are threads.
TEST_F(SwarmProcesses, AsThreadsOfLaunchTheyGiveTheSameBitsToo) {
  auto write = [&](int processes) {
    const std::string path = (dir_ / "threads.xml").string();
    std::ofstream(path) << "<federation until=\"3s\">\n"
                           "  <node name=\"swarm\" experiment=\"trio.xml\" processes=\""
                        << processes
                        << "\"><output name=\"poses\"/></node>\n"
                           "  <node name=\"watcher\" kind=\"mixer\"><input name=\"poses\"/>"
                           "</node>\n"
                           "  <flow name=\"poses\" from=\"swarm.poses\" to=\"watcher.poses\" "
                           "period=\"100ms\"/>\n"
                           "</federation>\n";
    Diagnostics d;
    auto fed = federation::load_federation(path, d);
    EXPECT_TRUE(fed) << d.str();
    return fed;
  };
  std::map<std::string, std::string> reference;
  for (int processes : {1, 3}) {
    auto fed = write(processes);
    ASSERT_TRUE(fed);
    federation::RunOptions o;
    o.quiet = true;
    o.jitter_us = processes == 1 ? 0 : 300;
    o.trace_dir = (dir_ / ("threads" + std::to_string(processes))).string();
    fs::remove(dir_ / "trio.flog");
    ASSERT_EQ(federation::launch_threads(*fed, o), 0) << processes;
    std::map<std::string, std::string> files = {
        {"swarm", slurp(fs::path(o.trace_dir) / "swarm.trace")},
        {"watcher", slurp(fs::path(o.trace_dir) / "watcher.trace")},
        {"log", slurp(dir_ / "trio.flog")}};
    if (reference.empty()) {
      reference = files;
      EXPECT_GT(files["log"].size(), 1000u);
      continue;
    }
    for (const auto& [name, bytes] : reference)
      EXPECT_TRUE(files[name] == bytes) << name << " differs on " << processes << " processes";
  }
}

// A process that fails by itself (here a controller's error, on the process simulating the
// west) stops the node with that error, naming the process and its regions: with the node's
// processes as threads (launch --transport inproc) and as child processes (shm).
TEST_F(SwarmProcesses, AProcessThatFailsIsNamedWithItsError) {
  std::ofstream(dir_ / "bomb.lua") << "local n = 0\n"
                                      "function init() end\n"
                                      "function step() n = n + 1; if n == 3 then error('boom') "
                                      "end end\n"
                                      "function reset() end\n"
                                      "function destroy() end\n";
  std::string experiment = kExperiment;
  experiment.insert(experiment.find("  </controllers>"),
                    "    <controller id=\"bomb\" type=\"lua\" script=\"bomb.lua\"/>\n");
  experiment.insert(experiment.find("  </arena>"),
                    "    <robot id=\"bomb\" kind=\"footbot\" controller=\"bomb\" "
                    "position=\"1.5,1.5\"/>\n");
  std::ofstream(dir_ / "trio.xml") << experiment;
  const std::string path = (dir_ / "bomb.xml").string();
  std::ofstream(path) << "<federation until=\"2s\">\n"
                         "  <node name=\"swarm\" experiment=\"trio.xml\" processes=\"2\">"
                         "<output name=\"poses\"/></node>\n"
                         "  <node name=\"watcher\" kind=\"mixer\"><input name=\"poses\"/></node>\n"
                         "  <flow name=\"poses\" from=\"swarm.poses\" to=\"watcher.poses\" "
                         "period=\"100ms\"/>\n"
                         "</federation>\n";
  for (const char* transport : {"inproc", "shm"}) {
    EXPECT_EQ(fleetsim::testing::run_fleetsim(
                  std::string("launch --quiet --transport ") + transport + " " + path,
                  dir_ / "stderr.txt"),
              1)
        << transport;
    const std::string err = slurp(dir_ / "stderr.txt");
    // (The east of the arena is process 1's domain.)
    EXPECT_NE(err.find("error: swarm node 'swarm': process 1 (west, east, air): tick 2, robot "
                       "'bomb'"),
              std::string::npos)
        << transport << err;
    EXPECT_NE(err.find("boom"), std::string::npos) << transport << err;
  }
}

// Every bad declaration at once, at its line, before anything runs (status 2): from `fleetsim
// check`, `launch` and `node`.
TEST_F(SwarmProcesses, BadProcessCountsAreRefusedBeforeTheStart) {
  const std::string path = (dir_ / "bad.xml").string();
  std::ofstream(path) << "<federation until=\"1s\">\n"
                         "  <node name=\"swarm\" experiment=\"trio.xml\" processes=\"18\">\n"
                         "    <output name=\"poses\"/><input name=\"wheels\" robot=\"rovr\"/>\n"
                         "  </node>\n"
                         "  <node name=\"pilot\" program=\"pilot\"><input name=\"poses\"/>"
                         "<output name=\"wheels\"/></node>\n"
                         "  <flow name=\"poses\" from=\"swarm.poses\" to=\"pilot.poses\" "
                         "period=\"100ms\"/>\n"
                         "  <flow name=\"cmd\" from=\"pilot.wheels\" to=\"swarm.wheels\" "
                         "period=\"100ms\"/>\n"
                         "</federation>\n";
  for (const char* command : {" check ", " launch --transport shm ", " node --name swarm "}) {
    EXPECT_EQ(fleetsim::testing::run_fleetsim(command + path, dir_ / "stderr.txt"), 2) << command;
    const std::string err = slurp(dir_ / "stderr.txt");
    EXPECT_NE(err.find("bad.xml:2: error: swarm node 'swarm': processes=\"18\" cannot run: " +
                       (dir_ / "trio.xml").string() +
                       ": error: 18 processes but this run can use at most 17 (one per robot at "
                       "the start: 17 robots): give processes=17 or fewer"),
              std::string::npos)
        << command << err;
    EXPECT_NE(err.find("bad.xml:3: error: swarm node 'swarm', input 'wheels': no robot 'rovr'"),
              std::string::npos)
        << command << err;
  }
  // A <distribution> for another number of processes.
  std::string experiment = kExperiment;
  const std::string end = "  <log path=";
  experiment.insert(experiment.find(end),
                    "  <distribution><process regions=\"west air\"/><process regions=\"east\"/>"
                    "</distribution>\n");
  std::ofstream(dir_ / "trio.xml") << experiment;
  std::string text = slurp(path);
  text.replace(text.find("processes=\"18\""), 14, "processes=\"3\"");
  text.replace(text.find("rovr"), 4, "rover");
  std::ofstream(path) << text;
  Diagnostics d;
  auto fed = federation::load_federation(path, d);
  ASSERT_TRUE(fed) << d.str();
  distributed::check_swarm_node(*fed, 0, d);
  EXPECT_NE(d.str().find("bad.xml:2: error: swarm node 'swarm': processes=\"3\" but the "
                         "<distribution> of " +
                         (dir_ / "trio.xml").string() +
                         " (line 19) lists 2 processes (expected processes=\"2\", or no "
                         "<distribution> for the automatic assignment)"),
            std::string::npos)
      << d.str();
}

}  // namespace
}  // namespace fleetsim
