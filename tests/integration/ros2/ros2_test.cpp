// The ROS 2 bridge as a ROS 2 node meets it (docs/ros2.md): a DDS participant of its own, with
// the ROS 2 type and topic names and no fleetsim code, subscribes to a live run's poses and
// clock and drives its external robot with geometry_msgs/Twist on cmd_vel.
#include <dds/dds.h>
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "ros2_msgs.h"
#include "support/processes.hpp"
#include "support/test_files.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// DDS on the loopback interface only, unicast discovery: no multicast needed, nothing leaves
// the machine.
constexpr const char* kLoopbackConfig =
    "<CycloneDDS><Domain><General><Interfaces><NetworkInterface address=\"127.0.0.1\"/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex>"
    "<Peers><Peer Address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>";

/// The example of docs/ros2.md: `pilot` external, three robots wandering.
const std::string kExample = std::string(FLEETSIM_SOURCE_DIR) + "/examples/ros2/pilot.xml";

class Ros2Bridge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("ros2");
    setenv("CYCLONEDDS_URI", kLoopbackConfig, 1);
    // A domain of its own: other tests of the suite may run at the same time.
    domain_ = 100 + static_cast<int>(std::random_device{}() % 100);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void start_run() {
    const std::string exe = FLEETSIM_EXE, file = kExample, domain = std::to_string(domain_),
                      err = (dir_ / "err").string();
    pid_ = fleetsim::testing::spawn_with_output(exe,
                                                {"run", file, "--ros2", "--ros2-domain", domain,
                                                 "--time-mode", "realtime", "--log", "", "--quiet"},
                                                (dir_ / "out").string(), err);
    ASSERT_GT(pid_, 0);
  }
  fs::path dir_;
  int domain_ = 0;
  pid_t pid_ = -1;
};

TEST_F(Ros2Bridge, ARos2NodeSeesTheLiveRunAndDrivesItsExternalRobot) {
  const dds_entity_t p =
      dds_create_participant(static_cast<dds_domainid_t>(domain_), nullptr, nullptr);
  ASSERT_GT(p, 0) << dds_strretcode(-p);
  dds_qos_t* reliable = dds_create_qos();
  dds_qset_reliability(reliable, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  // ROS 2's topic names: "rt" + the ROS name; its type names, as generated from its IDL.
  const dds_entity_t poses =
      dds_create_reader(p,
                        dds_create_topic(p, &geometry_msgs_msg_dds__PoseArray__desc,
                                         "rt/fleetsim/poses", nullptr, nullptr),
                        reliable, nullptr);
  const dds_entity_t pilot =
      dds_create_reader(p,
                        dds_create_topic(p, &geometry_msgs_msg_dds__PoseStamped__desc,
                                         "rt/fleetsim/pilot/pose", nullptr, nullptr),
                        reliable, nullptr);
  const dds_entity_t clock = dds_create_reader(
      p, dds_create_topic(p, &rosgraph_msgs_msg_dds__Clock__desc, "rt/clock", nullptr, nullptr),
      reliable, nullptr);
  const dds_entity_t cmd =
      dds_create_writer(p,
                        dds_create_topic(p, &geometry_msgs_msg_dds__Twist__desc,
                                         "rt/fleetsim/pilot/cmd_vel", nullptr, nullptr),
                        reliable, nullptr);
  ASSERT_GT(poses, 0);
  ASSERT_GT(pilot, 0);
  ASSERT_GT(clock, 0);
  ASSERT_GT(cmd, 0);
  start_run();

  std::size_t robots = 0;
  double first_x = 0, last_x = 0, last_stamp = -1;
  bool have_first = false;
  std::int64_t last_clock_ns = -1;
  int clock_steps = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && !(have_first && last_x > first_x + 0.05)) {
    void* s[16] = {};
    dds_sample_info_t info[16];
    int n = dds_take(poses, s, info, 16, 16);
    for (int i = 0; i < n; ++i)
      if (info[i].valid_data)
        robots = static_cast<const geometry_msgs_msg_dds__PoseArray_*>(s[i])->poses._length;
    if (n > 0) dds_return_loan(poses, s, n);
    std::fill(std::begin(s), std::end(s), nullptr);
    n = dds_take(pilot, s, info, 16, 16);
    for (int i = 0; i < n; ++i) {
      if (!info[i].valid_data) continue;
      const auto* m = static_cast<const geometry_msgs_msg_dds__PoseStamped_*>(s[i]);
      EXPECT_EQ(std::string(m->header.frame_id), "map");
      const double t = m->header.stamp.sec + m->header.stamp.nanosec * 1e-9;
      EXPECT_GT(t, last_stamp) << "stamps go forward";
      last_stamp = t;
      last_x = m->pose.position.x;
      if (!have_first) {
        first_x = last_x;
        have_first = true;
      }
    }
    if (n > 0) dds_return_loan(pilot, s, n);
    std::fill(std::begin(s), std::end(s), nullptr);
    n = dds_take(clock, s, info, 16, 16);
    for (int i = 0; i < n; ++i) {
      if (!info[i].valid_data) continue;
      const auto* c = static_cast<const rosgraph_msgs_msg_dds__Clock_*>(s[i]);
      const std::int64_t ns = std::int64_t{c->clock.sec} * 1'000'000'000 + c->clock.nanosec;
      if (ns > last_clock_ns) ++clock_steps;
      last_clock_ns = ns;
    }
    if (n > 0) dds_return_loan(clock, s, n);
    if (have_first) {
      // Forward at 0.1 m/s, as a ROS 2 teleop node would command it.
      geometry_msgs_msg_dds__Twist_ twist{{0.1, 0, 0}, {0, 0, 0}};
      dds_write(cmd, &twist);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(have_first) << "no pose of the external robot arrived; the run said:\n"
                          << fleetsim::testing::slurp(dir_ / "err");
  EXPECT_EQ(robots, 4u) << "every robot in /fleetsim/poses";
  EXPECT_GT(last_x, first_x + 0.05) << "the robot did not follow cmd_vel";
  EXPECT_GT(clock_steps, 5) << "/clock follows the simulated time";
  dds_delete_qos(reliable);
  dds_delete(p);
}

TEST_F(Ros2Bridge, BadOptionsAreRefusedBeforeTheRun) {
  const std::string exe = FLEETSIM_EXE, file = kExample;
  const std::string err = (dir_ / "err").string();
  EXPECT_EQ(WEXITSTATUS(std::system(
                (exe + " run " + file + " --ros2 --ros2-namespace 9lives 2>" + err).c_str())),
            2);
  EXPECT_NE(fleetsim::testing::slurp(err).find("is not one ROS 2 name token"), std::string::npos);
  EXPECT_EQ(
      WEXITSTATUS(std::system((exe + " run " + file + " --ros2 --processes 2 2>" + err).c_str())),
      2);
  EXPECT_NE(fleetsim::testing::slurp(err).find("--ros2 runs on one process"), std::string::npos);
}

}  // namespace
