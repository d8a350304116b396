// The ROS 2 bridge as ROS 2 meets it (docs/ros2.md): a DDS participant of its own, with types
// written from ROS 2's message definitions (ros2_client.idl, msg/) and no fleetsim code,
// - finds the node in ros_discovery_info as rmw_cyclonedds announces nodes, with the gids of
//   its readers and writers, and the type hashes in USER_DATA that ROS 2 Iron and later read,
//   recomputed here from the .msg files by ROS 2's published algorithm (type_hash.py);
// - receives the clock, poses, odometry, tf and laser scans of a live run;
// - drives the external robot with geometry_msgs/Twist on cmd_vel, and replays the commands
//   the run recorded to the same bits.
#include <dds/dds.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "ros2_client.h"
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

/// geometry_msgs/msg/Twist's hash as ROS 2 Jazzy's `ros2 topic info -v` prints it: the check
/// that type_hash.py computes what ROS 2 computes.
constexpr const char* kTwistHashAsRos2Prints =
    "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a";

/// "pkg/msg/Name" -> "RIHS01_...", from ROS 2's .msg files by type_hash.py.
std::map<std::string, std::string> hashes_from_msg_files() {
  std::map<std::string, std::string> out;
  FILE* p = popen(
      ("/usr/bin/python3 " + std::string(ROS2_TYPE_HASH_PY) + " " + ROS2_MSG_DIR).c_str(), "r");
  if (!p) return out;
  char name[256], hash[128];
  while (std::fscanf(p, "%255s %127s", name, hash) == 2) out[name] = hash;
  pclose(p);
  return out;
}

/// The ROS 2 type of a DDS type name, as rmw demangles it: pkg::msg::dds_::Name_ -> pkg/msg/Name.
std::string ros_type(std::string dds) {
  const auto at = dds.find("::dds_::");
  if (at == std::string::npos || dds.back() != '_') return dds;
  dds = dds.substr(0, at) + "::" + dds.substr(at + 8, dds.size() - at - 9);
  for (std::size_t c; (c = dds.find("::")) != std::string::npos;) dds.replace(c, 2, "/");
  return dds;
}

std::string user_data(const dds_qos_t* qos) {
  void* v = nullptr;
  std::size_t n = 0;
  if (!qos || !dds_qget_userdata(qos, &v, &n) || !v) return "";
  std::string s(static_cast<const char*>(v), n);
  dds_free(v);
  return s;
}

std::string hex(const std::uint8_t* b, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", b[i]);
  return s;
}

/// Takes every sample `reader` has, handing the valid ones to `f`.
template <class T>
void take_all(dds_entity_t reader, const std::function<void(const T&)>& f) {
  for (;;) {
    void* s[16] = {};
    dds_sample_info_t info[16];
    const int n = dds_take(reader, s, info, 16, 16);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i)
      if (info[i].valid_data) f(*static_cast<const T*>(s[i]));
    dds_return_loan(reader, s, n);
    if (n < 16) return;
  }
}

std::int64_t ns_of(const builtin_interfaces_msg_dds__Time_& t) {
  return std::int64_t{t.sec} * 1'000'000'000 + t.nanosec;
}

/// What a subscriber of every robot's topics received from one run.
struct Received {
  using Key = std::pair<std::string, std::int64_t>;  // robot (tf: child frame), stamp
  std::map<Key, std::vector<double>> odom, tf;       // pose and twist; translation and rotation
  std::map<Key, std::vector<std::uint32_t>> scans;   // ranges and intensities, bit for bit
  std::map<Key, int> odom_count, tf_count, scan_count;
  std::map<std::int64_t, std::vector<std::array<double, 3>>> poses;  // x, y, orientation z
  std::string json, said;
};

/// The example's robots.
const std::vector<std::string> kRobots = {"pilot", "w0", "w1", "w2"};

/// A DDS endpoint as the built-in topics describe it.
struct Endpoint {
  std::string guid, participant, topic, type, user_data;
  dds_reliability_kind_t reliability = DDS_RELIABILITY_BEST_EFFORT;
  dds_durability_kind_t durability = DDS_DURABILITY_VOLATILE;
  dds_history_kind_t history = DDS_HISTORY_KEEP_LAST;
  int depth = 0;
  std::vector<dds_data_representation_id_t> representations;
};

class Ros2Bridge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("ros2");
    setenv("CYCLONEDDS_URI", kLoopbackConfig, 1);
    // A domain and a namespace of its own: other tests, this suite's or other checkouts', may
    // run at the same time.
    domain_ = 100 + static_cast<int>(std::random_device{}() % 100);
    ns_ = fmt::format("t{}_{}", getpid(), std::random_device{}() % 100000);
    participant_ = dds_create_participant(static_cast<dds_domainid_t>(domain_), nullptr, nullptr);
    ASSERT_GT(participant_, 0) << dds_strretcode(-participant_);
    reliable_ = dds_create_qos();
    dds_qset_reliability(reliable_, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
    dds_qset_history(reliable_, DDS_HISTORY_KEEP_LAST, 100);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    dds_delete_qos(reliable_);
    dds_delete(participant_);
  }
  void start_run(std::vector<std::string> extra) {
    std::vector<std::string> args = {"run",
                                     example_,
                                     "--ros2",
                                     "--ros2-domain",
                                     std::to_string(domain_),
                                     "--ros2-namespace",
                                     ns_,
                                     "--time-mode",
                                     "realtime",
                                     "--quiet",
                                     "--record-inputs",
                                     (dir_ / "inputs").string()};
    if (std::find(extra.begin(), extra.end(), "--time-mode") != extra.end())
      args.erase(args.begin() + 7, args.begin() + 9);  // (the test's own pace instead)
    args.insert(args.end(), extra.begin(), extra.end());
    if (std::find(args.begin(), args.end(), "--log") == args.end())
      args.insert(args.end(), {"--log", ""});
    pid_ = fleetsim::testing::spawn_with_output(FLEETSIM_EXE, args, (dir_ / "out").string(),
                                                (dir_ / "err").string());
    ASSERT_GT(pid_, 0);
  }
  /// A reader of ROS 2 topic `name` (DDS "rt" + name) with the test's own type.
  dds_entity_t reader(const dds_topic_descriptor_t* type, const std::string& name) {
    const dds_entity_t r = dds_create_reader(
        participant_, dds_create_topic(participant_, type, ("rt" + name).c_str(), nullptr, nullptr),
        reliable_, nullptr);
    EXPECT_GT(r, 0) << name;
    return r;
  }
  dds_entity_t writer(const dds_topic_descriptor_t* type, const std::string& name) {
    const dds_entity_t w = dds_create_writer(
        participant_, dds_create_topic(participant_, type, ("rt" + name).c_str(), nullptr, nullptr),
        reliable_, nullptr);
    EXPECT_GT(w, 0) << name;
    return w;
  }
  std::string topic(const std::string& leaf) const { return "/" + ns_ + "/" + leaf; }
  std::string run_said() { return fleetsim::testing::slurp(dir_ / "err"); }
  /// Drives the pilot until the run ends (at most 30 s): once its pose has been seen, the k-th
  /// command is `twist(k)`, every 37 ms; `pose` sees each pose, `poll` is called each time.
  /// The run's exit status (-3: it did not end in time).
  int drive_pilot(const std::function<geometry_msgs_msg_dds__Twist_(int)>& twist,
                  const std::function<void(const geometry_msgs_msg_dds__PoseStamped_&)>& pose = {},
                  const std::function<void()>& poll = {}) {
    const dds_entity_t pilot =
        reader(&geometry_msgs_msg_dds__PoseStamped__desc, topic("pilot/pose"));
    const dds_entity_t cmd = writer(&geometry_msgs_msg_dds__Twist__desc, topic("pilot/cmd_vel"));
    int sent = 0;
    bool seen = false;
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      take_all<geometry_msgs_msg_dds__PoseStamped_>(pilot, [&](const auto& m) {
        seen = true;
        if (pose) pose(m);
      });
      if (poll) poll();
      if (seen) {
        const geometry_msgs_msg_dds__Twist_ t = twist(sent++);
        dds_write(cmd, &t);
      }
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(37));
    }
    return -3;
  }
  /// The driven run (its --json output `live`, its log `live_log`) replayed from its recorded
  /// inputs on one process, without ROS 2, for `length` s: the same state hash and log; and
  /// the run without the inputs is another.
  void expect_the_record_repeats_the_run(const std::string& live, const std::string& live_log,
                                         const std::string& length) {
    const std::string record = fleetsim::testing::slurp(dir_ / "inputs");
    ASSERT_NE(record.find(" pilot "), std::string::npos) << "no command was recorded";
    const auto replay = fleetsim::testing::run_command(
        std::string(FLEETSIM_EXE) + " run " + kExample + " --length " + length +
            " --quiet --json --log " + (dir_ / "replay.log").string() + " --replay-inputs " +
            (dir_ / "inputs").string(),
        dir_);
    ASSERT_EQ(replay.status, 0) << replay.err;
    const auto hash_of = [](const std::string& json) {
      const auto at = json.rfind("\"state_hash\":\"");
      return at == std::string::npos ? std::string() : json.substr(at + 14, 16);
    };
    EXPECT_FALSE(hash_of(live).empty()) << live;
    EXPECT_EQ(hash_of(replay.out), hash_of(live));
    EXPECT_EQ(fleetsim::testing::slurp(dir_ / "replay.log"), fleetsim::testing::slurp(live_log))
        << "the logs differ";
    // Without the inputs the run is another: the record is what made it.
    const auto undriven =
        fleetsim::testing::run_command(std::string(FLEETSIM_EXE) + " run " + kExample +
                                           " --length " + length + " --quiet --json --log ''",
                                       dir_);
    EXPECT_NE(hash_of(undriven.out), hash_of(live));
  }

  /// A whole run of the example (`example_`) on `processes` without commands (the pilot stands,
  /// the others wander: the same every run), every robot chosen: what a subscriber of every
  /// robot's odometry, scan and tf (and /NS/poses with `poses`) received, and the run's --json.
  Received watch(const std::string& processes, bool poses, const std::string& length = "20") {
    const std::vector<std::string>& robots = kRobots;
    Received got;
    std::vector<std::pair<dds_entity_t, dds_entity_t>> per_robot;  // odometry, scan
    for (const auto& r : robots)
      per_robot.push_back({reader(&nav_msgs_msg_dds__Odometry__desc, topic(r + "/odom")),
                           reader(&sensor_msgs_msg_dds__LaserScan__desc, topic(r + "/scan"))});
    const dds_entity_t tf = reader(&tf2_msgs_msg_dds__TFMessage__desc, "/tf");
    const dds_entity_t all =
        poses ? reader(&geometry_msgs_msg_dds__PoseArray__desc, topic("poses")) : 0;
    start_run({"--processes", processes, "--ros2-robots", "all", "--length", length, "--time-mode",
               "linear", "--speedup", "4", "--json"});
    const auto take = [&] {
      for (std::size_t k = 0; k < robots.size(); ++k) {
        take_all<nav_msgs_msg_dds__Odometry_>(per_robot[k].first, [&](const auto& m) {
          const Received::Key key{robots[k], ns_of(m.header.stamp)};
          const auto& p = m.pose.pose;
          const auto& t = m.twist.twist;
          got.odom[key] = {p.position.x, p.position.y, p.orientation.z, p.orientation.w,
                           t.linear.x,   t.linear.y,   t.angular.z};
          ++got.odom_count[key];
        });
        take_all<sensor_msgs_msg_dds__LaserScan_>(per_robot[k].second, [&](const auto& m) {
          const Received::Key key{robots[k], ns_of(m.header.stamp)};
          std::vector<std::uint32_t> bits(m.ranges._length + m.intensities._length);
          std::memcpy(bits.data(), m.ranges._buffer, m.ranges._length * 4);
          std::memcpy(bits.data() + m.ranges._length, m.intensities._buffer,
                      m.intensities._length * 4);
          got.scans[key] = bits;
          ++got.scan_count[key];
        });
      }
      take_all<tf2_msgs_msg_dds__TFMessage_>(tf, [&](const auto& m) {
        for (std::uint32_t i = 0; i < m.transforms._length; ++i) {
          const auto& t = m.transforms._buffer[i];
          const Received::Key key{t.child_frame_id, ns_of(t.header.stamp)};
          got.tf[key] = {t.transform.translation.x, t.transform.translation.y,
                         t.transform.rotation.z, t.transform.rotation.w};
          ++got.tf_count[key];
        }
      });
      if (all)
        take_all<geometry_msgs_msg_dds__PoseArray_>(all, [&](const auto& m) {
          auto& p = got.poses[ns_of(m.header.stamp)];
          for (std::uint32_t i = 0; i < m.poses._length; ++i)
            p.push_back({m.poses._buffer[i].position.x, m.poses._buffer[i].position.y,
                         m.poses._buffer[i].orientation.z});
        });
    };
    const auto deadline = Clock::now() + std::chrono::seconds(40);
    int status = -3;
    while (Clock::now() < deadline) {
      take();
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    take();  // (what was still on its way)
    got.said = run_said();
    got.json = fleetsim::testing::slurp(dir_ / "out");
    EXPECT_EQ(status, 0) << got.said;
    for (auto& [o, s] : per_robot) {
      dds_delete(o);
      dds_delete(s);
    }
    dds_delete(tf);
    if (all) dds_delete(all);
    return got;
  }

  /// A reader of ros_discovery_info as rmw_cyclonedds reads it: reliable, transient local.
  dds_entity_t discovery_info_reader() {
    dds_qos_t* q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    const dds_entity_t info = dds_create_reader(
        participant_,
        dds_create_topic(participant_, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc,
                         "ros_discovery_info", nullptr, nullptr),
        q, nullptr);
    dds_delete_qos(q);
    return info;
  }

  fs::path dir_;
  std::string example_ = kExample;  ///< the experiment start_run runs
  int domain_ = 0;
  std::string ns_;
  pid_t pid_ = -1;
  dds_entity_t participant_ = 0;
  dds_qos_t* reliable_ = nullptr;
};

TEST_F(Ros2Bridge, ARos2NodeSeesTheLiveRunAndDrivesItsExternalRobot) {
  const dds_entity_t poses = reader(&geometry_msgs_msg_dds__PoseArray__desc, topic("poses"));
  const dds_entity_t pilot = reader(&geometry_msgs_msg_dds__PoseStamped__desc, topic("pilot/pose"));
  const dds_entity_t clock = reader(&rosgraph_msgs_msg_dds__Clock__desc, "/clock");
  const dds_entity_t cmd = writer(&geometry_msgs_msg_dds__Twist__desc, topic("pilot/cmd_vel"));
  start_run({});

  std::size_t robots = 0;
  double first_x = 0, last_x = 0, last_stamp = -1;
  bool have_first = false;
  std::int64_t last_clock_ns = -1;
  int clock_steps = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && !(have_first && last_x > first_x + 0.05)) {
    take_all<geometry_msgs_msg_dds__PoseArray_>(poses,
                                                [&](const auto& m) { robots = m.poses._length; });
    take_all<geometry_msgs_msg_dds__PoseStamped_>(pilot, [&](const auto& m) {
      EXPECT_EQ(std::string(m.header.frame_id), "map");
      const double t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9;
      EXPECT_GT(t, last_stamp) << "stamps go forward";
      last_stamp = t;
      last_x = m.pose.position.x;
      if (!have_first) {
        first_x = last_x;
        have_first = true;
      }
    });
    take_all<rosgraph_msgs_msg_dds__Clock_>(clock, [&](const auto& c) {
      const std::int64_t ns = std::int64_t{c.clock.sec} * 1'000'000'000 + c.clock.nanosec;
      if (ns > last_clock_ns) ++clock_steps;
      last_clock_ns = ns;
    });
    if (have_first) {
      // Forward at 0.1 m/s, as a ROS 2 teleop node would command it.
      geometry_msgs_msg_dds__Twist_ twist{{0.1, 0, 0}, {0, 0, 0}};
      dds_write(cmd, &twist);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(have_first) << "no pose of the external robot arrived; the run said:\n" << run_said();
  EXPECT_EQ(robots, 4u) << "every robot in /NS/poses";
  EXPECT_GT(last_x, first_x + 0.05) << "the robot did not follow cmd_vel";
  EXPECT_GT(clock_steps, 5) << "/clock follows the simulated time";
}

// What `ros2 node list`, `ros2 topic info -v` and rqt_graph read: the participant's
// ros_discovery_info, the endpoints' DDS topic and type names, QoS and USER_DATA.
TEST_F(Ros2Bridge, RosToolsSeeTheNodeItsEndpointsAndTheirTypeHashes) {
  const auto hashes = hashes_from_msg_files();
  ASSERT_EQ(hashes.count("geometry_msgs/msg/Twist"), 1u) << "type_hash.py failed";
  EXPECT_EQ(hashes.at("geometry_msgs/msg/Twist"), kTwistHashAsRos2Prints);

  // ros_discovery_info as rmw_cyclonedds reads it: reliable, transient local.
  const dds_entity_t info = discovery_info_reader();
  ASSERT_GT(info, 0);
  const dds_entity_t participants =
      dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSPARTICIPANT, nullptr, nullptr);
  const dds_entity_t publications =
      dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, nullptr, nullptr);
  const dds_entity_t subscriptions =
      dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, nullptr, nullptr);
  start_run({"--ros2-robots", "all"});

  // The node's announcement, and every endpoint of the domain by GUID.
  std::string node_ns, node_name, participant_gid;
  std::set<std::string> node_readers, node_writers;
  std::map<std::string, std::string> enclave;  // participant GUID -> USER_DATA
  std::map<std::string, Endpoint> pubs, subs;
  const auto endpoint = [](const dds_builtintopic_endpoint_t& e) {
    Endpoint p;
    p.guid = hex(e.key.v, 16);
    p.participant = hex(e.participant_key.v, 16);
    p.topic = e.topic_name;
    p.type = e.type_name;
    p.user_data = user_data(e.qos);
    dds_duration_t block;
    dds_qget_reliability(e.qos, &p.reliability, &block);
    dds_qget_durability(e.qos, &p.durability);
    int32_t depth = 0;
    dds_qget_history(e.qos, &p.history, &depth);
    p.depth = depth;
    uint32_t n = 0;
    dds_data_representation_id_t* ids = nullptr;
    if (dds_qget_data_representation(e.qos, &n, &ids) && n > 0) {
      p.representations.assign(ids, ids + n);
      dds_free(ids);
    }
    return p;
  };
  const auto complete = [&] {
    if (node_writers.empty()) return false;
    for (const auto& g : node_writers)
      if (!pubs.count(g)) return false;
    for (const auto& g : node_readers)
      if (!subs.count(g)) return false;
    return enclave.count(participant_gid) > 0;
  };
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && !complete()) {
    take_all<rmw_dds_common_msg_dds__ParticipantEntitiesInfo_>(info, [&](const auto& m) {
      for (std::uint32_t i = 0; i < m.node_entities_info_seq._length; ++i) {
        const auto& node = m.node_entities_info_seq._buffer[i];
        if (std::string(node.node_name) != ns_) continue;  // (another test's fleetsim)
        node_ns = node.node_namespace;
        node_name = node.node_name;
        participant_gid = hex(m.gid.data, 16);
        node_readers.clear();
        node_writers.clear();
        for (std::uint32_t k = 0; k < node.reader_gid_seq._length; ++k)
          node_readers.insert(hex(node.reader_gid_seq._buffer[k].data, 16));
        for (std::uint32_t k = 0; k < node.writer_gid_seq._length; ++k)
          node_writers.insert(hex(node.writer_gid_seq._buffer[k].data, 16));
      }
    });
    take_all<dds_builtintopic_participant_t>(
        participants, [&](const auto& p) { enclave[hex(p.key.v, 16)] = user_data(p.qos); });
    take_all<dds_builtintopic_endpoint_t>(
        publications, [&](const auto& e) { pubs[hex(e.key.v, 16)] = endpoint(e); });
    take_all<dds_builtintopic_endpoint_t>(
        subscriptions, [&](const auto& e) { subs[hex(e.key.v, 16)] = endpoint(e); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(complete()) << "the node or its endpoints were not discovered; the run said:\n"
                          << run_said();

  // One node, /NS, as `ros2 node list` prints it.
  EXPECT_EQ(node_ns, "/");
  EXPECT_EQ(node_name, ns_);
  EXPECT_EQ(enclave[participant_gid], "enclave=/;");

  // The node's writers are every publication of its participant but ros_discovery_info's, and
  // its readers every subscription: by topic, as `ros2 topic info -v` groups them.
  std::map<std::string, Endpoint> by_topic;
  std::size_t participant_writers = 0;
  for (const auto& [guid, e] : pubs) {
    if (e.participant != participant_gid) continue;
    ++participant_writers;
    if (e.topic == "ros_discovery_info") {
      EXPECT_FALSE(node_writers.count(guid));
      EXPECT_EQ(e.reliability, DDS_RELIABILITY_RELIABLE);
      EXPECT_EQ(e.durability, DDS_DURABILITY_TRANSIENT_LOCAL);
      EXPECT_EQ(e.depth, 1);
    } else {
      EXPECT_TRUE(node_writers.count(guid)) << e.topic << " is not in the node's writers";
      EXPECT_EQ(e.reliability, DDS_RELIABILITY_RELIABLE) << e.topic;
      EXPECT_EQ(e.durability, DDS_DURABILITY_VOLATILE) << e.topic;
    }
    by_topic[e.topic] = e;
  }
  EXPECT_EQ(participant_writers, node_writers.size() + 1);
  for (const auto& g : node_readers) {
    EXPECT_EQ(subs[g].participant, participant_gid);
    EXPECT_EQ(subs[g].reliability, DDS_RELIABILITY_BEST_EFFORT);
    by_topic[subs[g].topic] = subs[g];
  }
  // The topics of docs/ros2.md for this run: 4 robots with odometry, tf and scans (e-pucks
  // have proximity rays), `pilot` external.
  std::vector<std::pair<std::string, std::string>> expected = {
      {"rt/clock", "rosgraph_msgs/msg/Clock"},
      {"rt/tf", "tf2_msgs/msg/TFMessage"},
      {"rt" + topic("poses"), "geometry_msgs/msg/PoseArray"},
      {"rt" + topic("pilot/pose"), "geometry_msgs/msg/PoseStamped"},
      {"rt" + topic("pilot/cmd_vel"), "geometry_msgs/msg/Twist"},
      {"rt" + topic("pilot/odom"), "nav_msgs/msg/Odometry"},
      {"rt" + topic("pilot/scan"), "sensor_msgs/msg/LaserScan"},
      {"ros_discovery_info", "rmw_dds_common/msg/ParticipantEntitiesInfo"}};
  for (const char* w : {"w0", "w1", "w2"}) {
    expected.push_back({"rt" + topic(std::string(w) + "/odom"), "nav_msgs/msg/Odometry"});
    expected.push_back({"rt" + topic(std::string(w) + "/scan"), "sensor_msgs/msg/LaserScan"});
  }
  EXPECT_EQ(by_topic.size(), expected.size());
  for (const auto& [name, type] : expected) {
    ASSERT_TRUE(by_topic.count(name)) << name << " is missing";
    const Endpoint& e = by_topic[name];
    EXPECT_EQ(ros_type(e.type), type) << name;
    // USER_DATA as rmw_cyclonedds writes it for Iron and later, with ROS 2's hash.
    ASSERT_TRUE(hashes.count(type)) << type;
    EXPECT_EQ(e.user_data, "typehash=" + hashes.at(type) + ";") << name;
    // rmw_cyclonedds's types are XCDR1 only: an endpoint must offer exactly that to match.
    EXPECT_EQ(e.representations,
              std::vector<dds_data_representation_id_t>{DDS_DATA_REPRESENTATION_XCDR1})
        << name;
  }
  // docs/ros2.md's table lists each topic (/NS/ROBOT/leaf for a robot's) with its type.
  std::ifstream doc(std::string(FLEETSIM_SOURCE_DIR) + "/docs/ros2.md");
  std::vector<std::string> rows;
  for (std::string line; std::getline(doc, line);)
    if (line.rfind("| `", 0) == 0) rows.push_back(line);
  for (const auto& [name, type] : expected) {
    std::string doc_name = name.rfind("rt/", 0) == 0 ? name.substr(2) : name;
    if (doc_name.rfind("/" + ns_ + "/", 0) == 0)
      doc_name = "/NS/" + doc_name.substr(ns_.size() + 2);
    for (const char* robot : {"pilot/", "w0/", "w1/", "w2/"})
      if (doc_name.rfind("/NS/" + std::string(robot), 0) == 0)
        doc_name = "/NS/ROBOT/" + doc_name.substr(4 + std::strlen(robot));
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(),
                            [&](const std::string& row) {
                              return row.rfind("| `" + doc_name + "` | `" + type + "` |", 0) == 0;
                            }))
        << "docs/ros2.md has no row for " << doc_name << " " << type;
  }
  EXPECT_EQ(by_topic["rt/tf"].depth, 100);
  EXPECT_EQ(by_topic["rt" + topic("pilot/odom")].depth, 10);
}

TEST_F(Ros2Bridge, HumbleHasNoTypeHashesAnd24ByteGids) {
  const dds_entity_t publications =
      dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, nullptr, nullptr);
  // Humble's ParticipantEntitiesInfo under its DDS name (no XTypes metadata: it would carry
  // the IDL's module name; rmw_cyclonedds sends none).
  const dds_topic_descriptor_t& h = rmw_dds_common_humble_msg_dds__ParticipantEntitiesInfo__desc;
  const dds_topic_descriptor_t humble{h.m_size,
                                      h.m_align,
                                      h.m_flagset & ~DDS_TOPIC_XTYPES_METADATA,
                                      h.m_nkeys,
                                      "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_",
                                      h.m_keys,
                                      h.m_nops,
                                      h.m_ops,
                                      h.m_meta,
                                      {nullptr, 0},
                                      {nullptr, 0},
                                      h.restrict_data_representation};
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
  const dds_entity_t info = dds_create_reader(
      participant_, dds_create_topic(participant_, &humble, "ros_discovery_info", nullptr, nullptr),
      q, nullptr);
  dds_delete_qos(q);
  ASSERT_GT(info, 0);
  start_run({"--ros2-distro", "humble"});
  std::map<std::string, Endpoint> mine;  // by topic
  std::string gid, participant;
  std::size_t writers = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && (mine.size() < 5 || gid.empty())) {
    take_all<rmw_dds_common_humble_msg_dds__ParticipantEntitiesInfo_>(info, [&](const auto& m) {
      for (std::uint32_t i = 0; i < m.node_entities_info_seq._length; ++i)
        if (std::string(m.node_entities_info_seq._buffer[i].node_name) == ns_) {
          gid = hex(m.gid.data, 24);
          writers = m.node_entities_info_seq._buffer[i].writer_gid_seq._length;
        }
    });
    take_all<dds_builtintopic_endpoint_t>(publications, [&](const auto& e) {
      const std::string t = e.topic_name;
      if (t.find("/" + ns_ + "/") != std::string::npos || t == "ros_discovery_info") {
        mine[t].type = e.type_name;
        mine[t].user_data = user_data(e.qos);
        participant = hex(e.participant_key.v, 16);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(mine.count("ros_discovery_info")) << run_said();
  ASSERT_TRUE(mine.count("rt" + topic("pilot/pose")));
  for (const auto& [t, e] : mine) EXPECT_EQ(e.user_data, "") << t << ": Humble has no hashes";
  EXPECT_EQ(mine["ros_discovery_info"].type, "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_");
}

TEST_F(Ros2Bridge, OdometryTfAndScansFollowTheRobots) {
  const dds_entity_t odom = reader(&nav_msgs_msg_dds__Odometry__desc, topic("pilot/odom"));
  const dds_entity_t scan = reader(&sensor_msgs_msg_dds__LaserScan__desc, topic("pilot/scan"));
  const dds_entity_t tf = reader(&tf2_msgs_msg_dds__TFMessage__desc, "/tf");
  const dds_entity_t cmd = writer(&geometry_msgs_msg_dds__Twist__desc, topic("pilot/cmd_vel"));
  start_run({"--ros2-robots", "pilot,kind:epuck"});

  // tf per stamp: the pilot's transform; odometry per stamp: its pose and twist.
  std::map<std::int64_t, geometry_msgs_msg_dds__Transform_> pilot_tf;
  std::set<std::string> children;
  std::size_t tf_size = 0;
  std::map<std::int64_t, nav_msgs_msg_dds__Odometry_> odoms;
  int scans = 0;
  double fastest = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && (odoms.size() < 20 || scans < 5 || fastest < 0.0999)) {
    take_all<tf2_msgs_msg_dds__TFMessage_>(tf, [&](const auto& m) {
      tf_size = m.transforms._length;
      for (std::uint32_t i = 0; i < m.transforms._length; ++i) {
        const auto& t = m.transforms._buffer[i];
        EXPECT_EQ(std::string(t.header.frame_id), "map");
        children.insert(t.child_frame_id);
        if (std::string(t.child_frame_id) == "pilot/base_link")
          pilot_tf[ns_of(t.header.stamp)] = t.transform;
      }
    });
    take_all<nav_msgs_msg_dds__Odometry_>(odom, [&](const auto& m) {
      EXPECT_EQ(std::string(m.header.frame_id), "map");
      EXPECT_EQ(std::string(m.child_frame_id), "pilot/base_link");
      auto copy = m;
      copy.header.frame_id = nullptr;  // (the loan's strings are not kept)
      copy.child_frame_id = nullptr;
      odoms[ns_of(m.header.stamp)] = copy;
      fastest = std::max(fastest, m.twist.twist.linear.x);
    });
    take_all<sensor_msgs_msg_dds__LaserScan_>(scan, [&](const auto& s) {
      ++scans;
      EXPECT_EQ(std::string(s.header.frame_id), "pilot/base_link");
      // The e-puck's 8 rays, from -150 to 150 degrees, in one-degree bins.
      EXPECT_EQ(s.ranges._length, 301u);
      EXPECT_EQ(s.intensities._length, s.ranges._length);
      EXPECT_NEAR(s.angle_min, -150 * M_PI / 180, 1e-5);
      EXPECT_NEAR(s.angle_max, 150 * M_PI / 180, 1e-5);
      EXPECT_NEAR(s.angle_increment, M_PI / 180, 1e-7);
      int rays = 0;
      for (std::uint32_t i = 0; i < s.ranges._length; ++i) {
        const float r = s.ranges._buffer[i];
        if (std::isnan(r)) continue;
        ++rays;
        EXPECT_TRUE(std::isinf(r) || (r >= s.range_min && r <= s.range_max)) << r;
      }
      EXPECT_EQ(rays, 8);
    });
    // Forward at 0.1 m/s: odometry's twist, in the robot's frame, says so.
    geometry_msgs_msg_dds__Twist_ twist{{0.1, 0, 0}, {0, 0, 0}};
    dds_write(cmd, &twist);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(tf_size, 4u) << "every e-puck in /tf; the run said:\n" << run_said();
  EXPECT_EQ(children, (std::set<std::string>{"pilot/base_link", "w0/base_link", "w1/base_link",
                                             "w2/base_link"}));
  EXPECT_GE(odoms.size(), 20u);
  EXPECT_GE(scans, 5);
  EXPECT_NEAR(fastest, 0.1, 1e-6) << "odometry's twist is the commanded speed";
  // Odometry and tf give the same pose at the same stamp.
  int same = 0;
  for (const auto& [stamp, o] : odoms) {
    auto it = pilot_tf.find(stamp);
    if (it == pilot_tf.end()) continue;
    ++same;
    EXPECT_EQ(o.pose.pose.position.x, it->second.translation.x);
    EXPECT_EQ(o.pose.pose.position.y, it->second.translation.y);
    EXPECT_EQ(o.pose.pose.orientation.z, it->second.rotation.z);
    EXPECT_EQ(o.pose.pose.orientation.w, it->second.rotation.w);
  }
  EXPECT_GT(same, 10);
}

// A ROS-driven run, then the same run from its recorded inputs without ROS 2: the same bits.
TEST_F(Ros2Bridge, ARosDrivenRunRepeatsFromItsRecordedInputs) {
  const std::string live_log = (dir_ / "live.log").string();
  start_run({"--length", "6", "--log", live_log, "--json"});
  // Commands that change as the wall clock goes: a different run each time, which the record
  // must capture.
  const int status = drive_pilot([](int k) {
    return geometry_msgs_msg_dds__Twist_{{0.02 + 0.01 * (k % 7), 0, 0},
                                         {0, 0, 0.3 * ((k % 5) - 2)}};
  });
  ASSERT_EQ(status, 0) << run_said();
  expect_the_record_repeats_the_run(fleetsim::testing::slurp(dir_ / "out"), live_log, "6");
}

/// "held_robots_max" of each process in a run's --json output, in process order.
std::vector<int> held_robots_max(const std::string& json) {
  std::vector<int> out;
  const std::string key = "\"held_robots_max\":";
  for (auto at = json.find(key); at != std::string::npos; at = json.find(key, at + 1))
    out.push_back(std::atoi(json.c_str() + at + key.size()));
  return out;
}

// On two processes (a partitioned run: each holds its part of the world), each process
// publishes the robots it runs from a participant of its own: ROS 2 receives every robot's
// odometry, tf and scan exactly as a run on one process publishes them at the same stamps,
// once each, while process 0 holds only its part. /NS/poses, the whole swarm in one message,
// is the same too, gathered by process 0 only while someone subscribes to it.
TEST_F(Ros2Bridge, OnTwoProcessesEachPublishesItsRobotsAsOnOne) {
  const std::vector<std::string>& robots = kRobots;
  const Received one = watch("1", true), two = watch("2", false);

  // Every robot's odometry, tf and scan: at every stamp both runs have, the same; and each
  // once (a robot is published by one process at a time).
  const auto same_at_common_stamps = [&](const auto& a, const auto& b, const char* what) {
    std::map<std::string, int> common;
    for (const auto& [key, value] : a) {
      auto it = b.find(key);
      if (it == b.end()) continue;
      ++common[key.first];
      EXPECT_EQ(value, it->second) << what << " of " << key.first << " at " << key.second;
    }
    return common;
  };
  const auto odom = same_at_common_stamps(two.odom, one.odom, "odometry");
  const auto scans = same_at_common_stamps(two.scans, one.scans, "the scan");
  const auto tf = same_at_common_stamps(two.tf, one.tf, "the transform");
  for (const auto& r : robots) {
    EXPECT_GT(odom.count(r) ? odom.at(r) : 0, 50) << r << ": too few common odometry stamps";
    EXPECT_GT(scans.count(r) ? scans.at(r) : 0, 50) << r << ": too few common scans";
    EXPECT_GT(tf.count(r + "/base_link") ? tf.at(r + "/base_link") : 0, 50) << r << " in /tf";
  }
  for (const auto* counts : {&two.odom_count, &two.tf_count, &two.scan_count})
    for (const auto& [key, n] : *counts) EXPECT_EQ(n, 1) << key.first << " at " << key.second;
  // The wanderers move: their odometry's twist says so (it is compared above).
  bool moved = false;
  for (const auto& [key, o] : two.odom) moved = moved || (key.first == "w1" && o[4] != 0);
  EXPECT_TRUE(moved) << "w1 wanders: its odometry says it moves";
  // No whole-world gather: process 0 never held every robot (4), process 1 neither.
  const auto held = held_robots_max(two.json);
  ASSERT_EQ(held.size(), 2u) << two.json;
  EXPECT_LT(held[0], 4) << "process 0 took in every robot";
  EXPECT_LT(held[1], 4);

  // /NS/poses on two processes, subscribed: process 0 gathers the world for it, and it is
  // the one process's at every common stamp.
  const Received two_poses = watch("2", true);
  int same = 0;
  for (const auto& [stamp, p] : two_poses.poses) {
    ASSERT_EQ(p.size(), 4u) << "every robot in /NS/poses at " << stamp;
    auto it = one.poses.find(stamp);
    if (it == one.poses.end()) continue;
    ++same;
    EXPECT_EQ(p, it->second) << "the poses at stamp " << stamp << " differ";
  }
  EXPECT_GT(same, 50) << "too few stamps both runs published";
  const auto held_for_poses = held_robots_max(two_poses.json);
  ASSERT_EQ(held_for_poses.size(), 2u);
  EXPECT_EQ(held_for_poses[0], 4) << "the documented cost of /NS/poses: process 0 gathers";
  // Holding every robot then, process 0 still publishes only those it runs: each robot once.
  same_at_common_stamps(two_poses.odom, one.odom, "odometry (with /NS/poses)");
  for (const auto* counts : {&two_poses.odom_count, &two_poses.tf_count, &two_poses.scan_count})
    for (const auto& [key, n] : *counts)
      EXPECT_EQ(n, 1) << key.first << " at " << key.second << " (with /NS/poses)";
}

// A robot pinned to a process by an affinity is run there, wherever the physics moves it: that
// process publishes it (its readings are computed there), as one process would.
TEST_F(Ros2Bridge, OnTwoProcessesAPinnedRobotIsPublishedByTheProcessRunningIt) {
  // The wanderers run on process 0, the pilot on process 1 (it stands in process 0's part).
  std::string xml = fleetsim::testing::slurp(kExample);
  const auto at = xml.find("</fleetsim>");
  ASSERT_NE(at, std::string::npos);
  xml.insert(at,
             "  <distribution><process robots=\"w0 w1 w2\"/><process robots=\"pilot\"/>"
             "</distribution>\n");
  example_ = (dir_ / "pinned.xml").string();
  std::ofstream(example_) << xml;
  const Received one = watch("1", false, "10"), two = watch("2", false, "10");
  std::map<std::string, int> common;
  for (const auto* m : {&two.odom, &two.tf})
    for (const auto& [key, value] : *m) {
      const auto& other = m == &two.odom ? one.odom : one.tf;
      auto it = other.find(key);
      if (it == other.end()) continue;
      ++common[key.first];
      EXPECT_EQ(value, it->second) << key.first << " at " << key.second;
    }
  for (const auto& [key, bits] : two.scans) {
    auto it = one.scans.find(key);
    if (it == one.scans.end()) continue;
    ++common[key.first + " scan"];
    EXPECT_EQ(bits, it->second) << key.first << "'s scan at " << key.second;
  }
  for (const auto& r : kRobots) {
    EXPECT_GT(common[r], 20) << r << ": too few common odometry stamps; the run said:\n"
                             << two.said;
    EXPECT_GT(common[r + "/base_link"], 20) << r << " in /tf";
    EXPECT_GT(common[r + " scan"], 20) << r << "'s scans";
  }
  for (const auto* counts : {&two.odom_count, &two.tf_count, &two.scan_count})
    for (const auto& [key, n] : *counts) EXPECT_EQ(n, 1) << key.first << " at " << key.second;
}

// On two processes, ros2 node list shows a node per process, /NS (process 0) and /NS_p1, each
// announced by its own participant in ros_discovery_info with the gids of the readers and
// writers it holds: every robot's topics on both (a robot's writer moves with it), /clock,
// /NS/poses and the commands on process 0's.
TEST_F(Ros2Bridge, OnTwoProcessesEachParticipantAnnouncesItsNode) {
  const dds_entity_t info = discovery_info_reader();
  ASSERT_GT(info, 0);
  const dds_entity_t publications =
      dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, nullptr, nullptr);
  const dds_entity_t subscriptions =
      dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, nullptr, nullptr);
  start_run({"--processes", "2", "--ros2-robots", "all"});

  struct Node {
    std::string ns, participant;
    std::set<std::string> readers, writers;  // gids
  };
  std::map<std::string, Node> nodes;  // by name
  struct Seen {
    std::string participant, topic;
  };
  std::map<std::string, Seen> pubs, subs;  // by GUID
  const auto complete = [&] {
    if (nodes.size() < 2) return false;
    for (const auto& [name, n] : nodes) {
      for (const auto& g : n.writers)
        if (!pubs.count(g)) return false;
      for (const auto& g : n.readers)
        if (!subs.count(g)) return false;
    }
    return true;
  };
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && !complete()) {
    take_all<rmw_dds_common_msg_dds__ParticipantEntitiesInfo_>(info, [&](const auto& m) {
      for (std::uint32_t i = 0; i < m.node_entities_info_seq._length; ++i) {
        const auto& node = m.node_entities_info_seq._buffer[i];
        const std::string name = node.node_name;
        if (name != ns_ && name != ns_ + "_p1") continue;  // (another test's fleetsim)
        Node& n = nodes[name];
        n = Node{node.node_namespace, hex(m.gid.data, 16), {}, {}};
        for (std::uint32_t k = 0; k < node.reader_gid_seq._length; ++k)
          n.readers.insert(hex(node.reader_gid_seq._buffer[k].data, 16));
        for (std::uint32_t k = 0; k < node.writer_gid_seq._length; ++k)
          n.writers.insert(hex(node.writer_gid_seq._buffer[k].data, 16));
      }
    });
    take_all<dds_builtintopic_endpoint_t>(publications, [&](const auto& e) {
      pubs[hex(e.key.v, 16)] = {hex(e.participant_key.v, 16), e.topic_name};
    });
    take_all<dds_builtintopic_endpoint_t>(subscriptions, [&](const auto& e) {
      subs[hex(e.key.v, 16)] = {hex(e.participant_key.v, 16), e.topic_name};
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(complete()) << "the nodes or their endpoints were not discovered; the run said:\n"
                          << run_said();
  const Node& first = nodes.at(ns_);
  const Node& second = nodes.at(ns_ + "_p1");
  EXPECT_EQ(first.ns, "/");
  EXPECT_EQ(second.ns, "/");
  EXPECT_NE(first.participant, second.participant) << "one participant per process";
  // Each node's endpoints are its participant's, by topic.
  const auto topics_of = [&](const Node& n, bool writers) {
    std::multiset<std::string> out;
    for (const auto& g : writers ? n.writers : n.readers) {
      const Seen& e = (writers ? pubs : subs).at(g);
      EXPECT_EQ(e.participant, n.participant) << e.topic;
      out.insert(e.topic);
    }
    return out;
  };
  std::multiset<std::string> robots_topics = {"rt/tf", "rt" + topic("pilot/pose")};
  for (const char* r : {"pilot", "w0", "w1", "w2"}) {
    robots_topics.insert("rt" + topic(std::string(r) + "/odom"));
    robots_topics.insert("rt" + topic(std::string(r) + "/scan"));
  }
  std::multiset<std::string> on_first = robots_topics;
  on_first.insert({"rt/clock", "rt" + topic("poses")});
  EXPECT_EQ(topics_of(first, true), on_first);
  EXPECT_EQ(topics_of(first, false), (std::multiset<std::string>{"rt" + topic("pilot/cmd_vel")}));
  EXPECT_EQ(topics_of(second, true), robots_topics);
  EXPECT_TRUE(second.readers.empty()) << "the commands go through process 0";
  // Every other publication of the two participants is their ros_discovery_info.
  for (const auto& [guid, e] : pubs) {
    if (e.participant != first.participant && e.participant != second.participant) continue;
    EXPECT_TRUE(first.writers.count(guid) || second.writers.count(guid) ||
                e.topic == "ros_discovery_info")
        << e.topic;
  }
}

// A ROS-driven run on two processes: commands land at a tick boundary on every process; the
// record replayed on one process gives the same bits and the same log.
TEST_F(Ros2Bridge, ARosDrivenRunOnTwoProcessesRepeatsOnOne) {
  const std::string live_log = (dir_ / "live.log").string();
  // The pilot's odometry, with the writer of each message: its writer moves from process 0's
  // participant to process 1's as the pilot crosses, and the topic goes on without a gap.
  const dds_entity_t odom = reader(&nav_msgs_msg_dds__Odometry__desc, topic("pilot/odom"));
  std::map<std::int64_t, std::pair<double, dds_instance_handle_t>> odoms;  // x, writer by stamp
  std::vector<dds_instance_handle_t> writers;                              // in stamp order
  const auto poll = [&] {
    for (;;) {
      void* m[16] = {};
      dds_sample_info_t info[16];
      const int n = dds_take(odom, m, info, 16, 16);
      if (n <= 0) return;
      for (int i = 0; i < n; ++i)
        if (info[i].valid_data) {
          const auto* o = static_cast<const nav_msgs_msg_dds__Odometry_*>(m[i]);
          odoms[ns_of(o->header.stamp)] = {o->pose.pose.position.x, info[i].publication_handle};
        }
      dds_return_loan(odom, m, n);
      if (n < 16) return;
    }
  };
  start_run({"--processes", "2", "--length", "30", "--time-mode", "linear", "--speedup", "4",
             "--log", live_log, "--json"});
  double first_x = 0, last_x = 0;
  bool seen = false;
  // Mostly forward (the pilot starts at x = -1 heading +x, in process 0's part, and crosses
  // into process 1's), turning now and then.
  const int status = drive_pilot(
      [](int k) {
        return geometry_msgs_msg_dds__Twist_{{0.1 + 0.01 * (k % 3), 0, 0},
                                             {0, 0, 0.1 * ((k % 5) - 2)}};
      },
      [&](const geometry_msgs_msg_dds__PoseStamped_& m) {
        if (!seen) first_x = m.pose.position.x;
        last_x = m.pose.position.x;
        seen = true;
      },
      poll);
  ASSERT_EQ(status, 0) << run_said();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  poll();
  // Every tick (0.1 s) from the first odometry received to the last, from two writers, one
  // after the other: process 0's while the pilot was in its part, then process 1's.
  ASSERT_GT(odoms.size(), 100u) << run_said();
  const std::int64_t first = odoms.begin()->first, last = odoms.rbegin()->first;
  EXPECT_EQ(static_cast<std::int64_t>(odoms.size()), (last - first) / 100'000'000 + 1)
      << "odometry stamps are missing between " << first << " and " << last;
  for (const auto& [stamp, o] : odoms)
    if (writers.empty() || writers.back() != o.second) writers.push_back(o.second);
  EXPECT_EQ(writers.size(), 2u) << "the pilot's odometry did not change writer once";
  EXPECT_LT(odoms.begin()->second.first, 0.8);
  EXPECT_GT(odoms.rbegin()->second.first, 1.0);
  EXPECT_GT(last_x, first_x + 0.1) << "the pilot did not follow cmd_vel";
  // Past the processes' border (process 0's part ends at x = 0.87 for this start): process 1
  // ran the pilot at the end, with the commands it kept.
  EXPECT_GT(last_x, 1.0) << "the pilot did not reach the other process's part";
  const std::string live = fleetsim::testing::slurp(dir_ / "out");
  EXPECT_NE(live.find("\"processes\":2"), std::string::npos) << live;
  expect_the_record_repeats_the_run(live, live_log, "30");
}

TEST_F(Ros2Bridge, BadOptionsAreRefusedBeforeTheRun) {
  const std::string exe = FLEETSIM_EXE, file = kExample;
  const std::string err = (dir_ / "err").string();
  const auto status_of = [&](const std::string& args) {
    return WEXITSTATUS(std::system((exe + " run " + file + " " + args + " 2>" + err).c_str()));
  };
  EXPECT_EQ(status_of("--ros2 --ros2-namespace 9lives"), 2);
  EXPECT_NE(fleetsim::testing::slurp(err).find("is not one ROS 2 name token"), std::string::npos);
  EXPECT_EQ(status_of("--ros2 --network-role primary --network-secondaries 1"), 2);
  EXPECT_NE(fleetsim::testing::slurp(err).find("not with --network-role"), std::string::npos);
  // On several processes too, a robot the run does not have is refused before the run.
  EXPECT_EQ(status_of("--ros2 --processes 2 --ros2-domain " + std::to_string(domain_) +
                      " --ros2-robots nobody --log ''"),
            2);
  EXPECT_NE(fleetsim::testing::slurp(err).find("the run has no robot 'nobody'"), std::string::npos)
      << fleetsim::testing::slurp(err);
  EXPECT_EQ(status_of("--ros2 --ros2-domain " + std::to_string(domain_) +
                      " --ros2-robots pilot,kind:footbot --log ''"),
            2);
  EXPECT_NE(fleetsim::testing::slurp(err).find("no robot of kind 'footbot'"), std::string::npos);
  EXPECT_EQ(status_of("--ros2 --ros2-distro galactic"), 2);
  // A recorded inputs file with a bad line: file:line.
  const auto bad = dir_ / "bad.inputs";
  std::ofstream(bad) << "# fleetsim ROS 2 inputs\n3 pilot 0.1 0\n4 pilot fast 0\n";
  EXPECT_EQ(status_of("--log '' --replay-inputs " + bad.string()), 2);
  EXPECT_NE(fleetsim::testing::slurp(err).find(bad.string() + ":3: error: malformed input"),
            std::string::npos)
      << fleetsim::testing::slurp(err);
}

}  // namespace
