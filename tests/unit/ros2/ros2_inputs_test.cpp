// Recorded ROS 2 commands (src/ros2/ros2_inputs.hpp): a run whose external robot takes
// velocity commands at tick boundaries, recorded with format_velocity_input(), replays from the
// file with the same final hash; numbers read back to the same bits; a bad file is reported
// file:line; a robot the run does not have stops the replay with the file's line.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "plugins/builtins.hpp"
#include "ros2/ros2_inputs.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim::ros2 {
namespace {

namespace fs = std::filesystem;

const char* kExperiment = R"(<fleetsim>
  <framework ticks_per_second="10" length="4" seed="5"/>
  <controllers>
    <controller id="ros" type="external"/>
    <controller id="walk" type="random_walk"/>
  </controllers>
  <arena size="4,4">
    <robot id="pilot" kind="epuck" controller="ros" position="-1,-1" heading="0"/>
    <robot id="fly" kind="epuck" controller="ros" position="1,-1" heading="1"/>
    <distribute count="4" kind="epuck" controller="walk" id_prefix="w" region="0.5,0.5,1.5,1.5"/>
  </arena>
</fleetsim>
)";

/// Runs the experiment; before the step from each tick, `before(sim)`.
std::uint64_t run(const fs::path& dir, const std::function<void(Simulation&)>& before) {
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics diags;
  auto ex = parse_experiment(kExperiment, (dir / "exp.xml").string(), reg, {}, diags);
  EXPECT_TRUE(ex) << diags.str();
  if (!ex) return 0;
  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) {
    if (before) before(sim);
    sim.step();
  }
  sim.finish();
  return sim.state().hash();
}

TEST(Ros2Inputs, RecordedCommandsReplayToTheSameBits) {
  const fs::path dir = fleetsim::testing::fresh_test_dir("ros2_inputs");
  // "Live": commands whose values have no short decimal form, taken at uneven ticks, as a
  // bridge takes them, and recorded.
  std::ofstream record(dir / "inputs");
  record << "# fleetsim ROS 2 inputs\n";
  std::optional<VelocityDriver> live;
  const std::uint64_t driven = run(dir, [&](Simulation& sim) {
    if (!live) live.emplace(sim);
    const Tick t = sim.state().tick;
    if (t % 7 == 3) {
      const VelocityInput i{t, t % 2 ? "pilot" : "fly", 0.1 / 3 * static_cast<double>(t % 5),
                            -0.7 / 9 * static_cast<double>(t % 4), 0};
      EXPECT_TRUE(live->take(i));
      record << format_velocity_input(i) << "\n";
    }
    live->apply();
  });
  record.close();
  const std::uint64_t undriven = run(dir, {});
  EXPECT_NE(driven, undriven) << "the commands moved the robots";

  Diagnostics diags;
  auto inputs = load_velocity_inputs((dir / "inputs").string(), diags);
  ASSERT_TRUE(inputs) << diags.str();
  EXPECT_EQ(inputs->size(), 6u);
  InputReplay replay((dir / "inputs").string(), std::move(*inputs));
  EXPECT_EQ(run(dir, [&](Simulation& sim) { replay.before_step(sim); }), driven);
}

TEST(Ros2Inputs, NumbersReadBackToTheSameBits) {
  const fs::path dir = fleetsim::testing::fresh_test_dir("ros2_inputs_bits");
  const VelocityInput i{12, "pilot", 0.1 / 3, -1e-300 / 7, 0};
  std::ofstream(dir / "one") << format_velocity_input(i) << "\n";
  Diagnostics diags;
  auto back = load_velocity_inputs((dir / "one").string(), diags);
  ASSERT_TRUE(back && back->size() == 1) << diags.str();
  EXPECT_EQ(back->front().tick, 12);
  EXPECT_EQ(back->front().robot, "pilot");
  EXPECT_EQ(std::memcmp(&back->front().linear_x, &i.linear_x, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&back->front().angular_z, &i.angular_z, sizeof(double)), 0);
}

TEST(Ros2Inputs, ABadFileIsReportedByLine) {
  const fs::path dir = fleetsim::testing::fresh_test_dir("ros2_inputs_bad");
  const std::string path = (dir / "bad").string();
  std::ofstream(path) << "# comment\n5 pilot 0.1 0\n6 pilot nan 0\n7 pilot 0.1\n2 pilot 0 0\n"
                         "-1 pilot 0 0\n";
  Diagnostics diags;
  EXPECT_FALSE(load_velocity_inputs(path, diags));
  const std::string text = diags.str();
  EXPECT_NE(text.find(path + ":3: error: malformed input"), std::string::npos) << text;
  EXPECT_NE(text.find(path + ":4: error: malformed input"), std::string::npos) << text;
  EXPECT_NE(text.find(path + ":5: error: tick 2 comes after tick 5"), std::string::npos) << text;
  EXPECT_NE(text.find(path + ":6: error: malformed input"), std::string::npos) << text;
  Diagnostics none;
  EXPECT_FALSE(load_velocity_inputs((dir / "missing").string(), none));
  EXPECT_NE(none.str().find("cannot read"), std::string::npos);
}

TEST(Ros2Inputs, ARobotTheRunDoesNotHaveStopsTheReplayAtItsLine) {
  const fs::path dir = fleetsim::testing::fresh_test_dir("ros2_inputs_robot");
  InputReplay replay("rec", {{3, "ghost", 0.1, 0, 2}});
  try {
    run(dir, [&](Simulation& sim) { replay.before_step(sim); });
    ADD_FAILURE() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("rec:2: tick 3: the run has no robot 'ghost'"),
              std::string::npos)
        << e.what();
  }
}

// Several processes: process 0 announces each command to every process as one line among the
// interventions; it reads back to the same robot, tick and bits, and is never taken for an
// intervention (nor one for it).
TEST(Ros2Inputs, AnnouncedCommandsReadBackExactlyAndApartFromInterventions) {
  VelocityInput i{42, "w-1", 0.1, -1.0000000000000002e-300, 0};
  const std::string line = format_announced_input(17, i);
  EXPECT_TRUE(is_announced_input(line));
  EntityId id = 0;
  VelocityInput back;
  ASSERT_TRUE(parse_announced_input(line, id, back)) << line;
  EXPECT_EQ(id, 17u);
  EXPECT_EQ(back.tick, 42);
  EXPECT_EQ(back.robot, "w-1");
  EXPECT_EQ(std::memcmp(&back.linear_x, &i.linear_x, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&back.angular_z, &i.angular_z, sizeof(double)), 0);
  // Interventions start with their tick.
  EXPECT_FALSE(is_announced_input("12 move 3 0.5 0.5 0"));
  EXPECT_FALSE(is_announced_input("12 command 3 wheels 0.1,0.1"));
  // What does not read back is refused: not a number, a missing word, no id.
  EXPECT_FALSE(parse_announced_input("ros2-cmd_vel 17 42 w1 nan 0", id, back));
  EXPECT_FALSE(parse_announced_input("ros2-cmd_vel 17 42 w1 0.1", id, back));
  EXPECT_FALSE(parse_announced_input("ros2-cmd_vel x 42 w1 0.1 0", id, back));
}

}  // namespace
}  // namespace fleetsim::ros2
