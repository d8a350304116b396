#include "ros2/ros2_bridge.hpp"

#include <dds/dds.h>

#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "ros2_msgs.h"
#include "sim/simulation.hpp"

namespace fleetsim::ros2 {

namespace {

using Time = builtin_interfaces_msg_dds__Time_;
using Clock = rosgraph_msgs_msg_dds__Clock_;
using Pose = geometry_msgs_msg_dds__Pose_;
using PoseArray = geometry_msgs_msg_dds__PoseArray_;
using PoseStamped = geometry_msgs_msg_dds__PoseStamped_;
using Twist = geometry_msgs_msg_dds__Twist_;

dds_entity_t checked(dds_entity_t e, const std::string& what) {
  if (e < 0)
    throw std::runtime_error(
        fmt::format("ROS 2 bridge: cannot {}: {}", what, dds_strretcode(static_cast<int>(-e))));
  return e;
}

Time stamp(SimTime t) {
  return {static_cast<std::int32_t>(t / 1'000'000'000),
          static_cast<std::uint32_t>(t % 1'000'000'000)};
}

/// A robot's id as one token of a ROS 2 name: letters, digits and `_` (others become `_`),
/// not starting with a digit (`r` is put before one).
std::string token(const std::string& name) {
  std::string t;
  for (char c : name) t += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (t.empty() || std::isdigit(static_cast<unsigned char>(t[0]))) t = "r" + t;
  return t;
}

}  // namespace

struct Bridge::Impl {
  Simulation& sim;
  BridgeOptions o;
  dds_entity_t participant = 0;
  dds_entity_t clock_writer = 0, poses_writer = 0;
  dds_qos_t* writer_qos = nullptr;
  dds_qos_t* reader_qos = nullptr;
  /// A robot driven from ROS 2 (controller `external`).
  struct Driven {
    dds_entity_t pose_writer = 0, cmd_reader = 0;
    double speed = 0, turn = 0;
    bool commanded = false;
  };
  /// How a kind takes a velocity: its differential drive's wheel commands, else its body's.
  struct Drive {
    ColumnHandle wheels = kNoColumn;
    double axle = 0;
  };
  std::map<std::uint16_t, Drive> drives;

  const Drive& drive_of(std::uint16_t kind) {
    auto it = drives.find(kind);
    if (it != drives.end()) return it->second;
    Drive d;
    for (const auto& a : sim.model().kinds[kind].actuators)
      if (a.type == "differential_drive") {
        d.wheels = sim.state().robots.find(a.name);
        d.axle = a.params.real("axle_length", 0.053);
      }
    return drives.emplace(kind, d).first->second;
  }

  /// Robot `row` moves at `speed` (m/s) turning at `turn` (rad/s) from the next step on.
  void command(std::size_t row, double speed, double turn) {
    const auto r = static_cast<std::uint32_t>(row);
    const Drive& d = drive_of(sim.state().robot_kind()[row]);
    if (d.wheels != kNoColumn) {
      const double wheels[2] = {speed - turn * d.axle / 2, speed + turn * d.axle / 2};
      sim.set_command(r, d.wheels, wheels);
    } else {
      const double s[1] = {speed}, t[1] = {turn};
      sim.set_command(r, body::kSpeedCmd, s);
      sim.set_command(r, body::kTurnCmd, t);
    }
  }
  std::map<std::string, Driven> driven;
  std::vector<Pose> poses;

  Impl(Simulation& s, BridgeOptions options) : sim(s), o(std::move(options)) {}
  ~Impl() {
    if (participant > 0) dds_delete(participant);
    if (writer_qos) dds_delete_qos(writer_qos);
    if (reader_qos) dds_delete_qos(reader_qos);
  }

  /// ROS 2 topic `name` (absolute) as a DDS topic: ROS 2 puts "rt" before it.
  dds_entity_t topic(const dds_topic_descriptor_t* type, const std::string& name) {
    return checked(dds_create_topic(participant, type, ("rt" + name).c_str(), nullptr, nullptr),
                   "create the topic " + name);
  }
  std::string robot_topic(const std::string& robot, const char* leaf) const {
    return "/" + o.ns + "/" + token(robot) + "/" + leaf;
  }

  /// Per controller declaration: is it `external` (its robots are driven from ROS 2)?
  std::vector<bool> external_controller;

  bool external(std::size_t row) const {
    return external_controller[sim.state().robot_controller()[row]];
  }

  Driven& driven_robot(const std::string& name) {
    auto it = driven.find(name);
    if (it != driven.end()) return it->second;
    Driven d;
    d.pose_writer = checked(dds_create_writer(participant,
                                              topic(&geometry_msgs_msg_dds__PoseStamped__desc,
                                                    robot_topic(name, "pose")),
                                              writer_qos, nullptr),
                            "publish " + robot_topic(name, "pose"));
    d.cmd_reader = checked(
        dds_create_reader(participant,
                          topic(&geometry_msgs_msg_dds__Twist__desc, robot_topic(name, "cmd_vel")),
                          reader_qos, nullptr),
        "subscribe to " + robot_topic(name, "cmd_vel"));
    return driven.emplace(name, d).first->second;
  }
};

Bridge::Bridge(Simulation& sim, BridgeOptions options)
    : impl_(std::make_unique<Impl>(sim, std::move(options))) {
  Impl& m = *impl_;
  if (m.o.domain < 0 || m.o.domain > 232)
    throw std::runtime_error(
        fmt::format("ROS 2 bridge: domain {} (expected 0 to 232, as ROS_DOMAIN_ID)", m.o.domain));
  m.participant =
      checked(dds_create_participant(static_cast<dds_domainid_t>(m.o.domain), nullptr, nullptr),
              fmt::format("join DDS domain {} (is CYCLONEDDS_URI valid?)", m.o.domain));
  // ROS 2's default profile: reliable, keep the last 10, volatile. A reliable writer also
  // serves best-effort readers; a best-effort reader takes commands from either kind.
  for (const auto& c : sim.model().controllers)
    m.external_controller.push_back(c.type == "external");
  m.writer_qos = dds_create_qos();
  dds_qset_reliability(m.writer_qos, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(m.writer_qos, DDS_HISTORY_KEEP_LAST, 10);
  m.reader_qos = dds_create_qos();
  dds_qset_reliability(m.reader_qos, DDS_RELIABILITY_BEST_EFFORT, 0);
  dds_qset_history(m.reader_qos, DDS_HISTORY_KEEP_LAST, 1);
  m.clock_writer = checked(
      dds_create_writer(m.participant, m.topic(&rosgraph_msgs_msg_dds__Clock__desc, "/clock"),
                        m.writer_qos, nullptr),
      "publish /clock");
  m.poses_writer = checked(
      dds_create_writer(m.participant,
                        m.topic(&geometry_msgs_msg_dds__PoseArray__desc, "/" + m.o.ns + "/poses"),
                        m.writer_qos, nullptr),
      "publish /" + m.o.ns + "/poses");
  const auto& names = sim.state().robot_name();
  for (std::size_t row = 0; row < names.size(); ++row)
    if (m.external(row)) m.driven_robot(names[row]);
}

Bridge::~Bridge() = default;

void Bridge::take_commands() {
  Impl& m = *impl_;
  const auto& names = m.sim.state().robot_name();
  for (std::size_t row = 0; row < names.size(); ++row) {
    if (!m.external(row)) continue;
    Impl::Driven& d = m.driven_robot(names[row]);
    constexpr int kBatch = 8;
    for (;;) {
      void* samples[kBatch] = {};
      dds_sample_info_t info[kBatch];
      const int n = dds_take(d.cmd_reader, samples, info, kBatch, kBatch);
      if (n <= 0) break;
      for (int i = 0; i < n; ++i) {
        if (!info[i].valid_data) continue;
        const auto* t = static_cast<const Twist*>(samples[i]);
        // Nothing a peer sends may put a non-number into the state.
        if (!std::isfinite(t->linear.x) || !std::isfinite(t->angular.z)) continue;
        d.speed = t->linear.x;
        d.turn = t->angular.z;
        d.commanded = true;
      }
      dds_return_loan(d.cmd_reader, samples, n);
      if (n < kBatch) break;
    }
    if (d.commanded) m.command(row, d.speed, d.turn);
  }
}

void Bridge::publish() {
  Impl& m = *impl_;
  const WorldState& st = m.sim.state();
  const SimTime now = st.tick * m.sim.model().tick_period_ns;
  Clock clock{stamp(now)};
  dds_write(m.clock_writer, &clock);

  // (Rows are in id order: the world keeps them so.)
  const std::size_t n = st.robot_count();
  const ColumnHandle zc = st.robots.find("z");
  const double* z = zc == kNoColumn ? nullptr : st.robots.span<double>(zc).data();
  m.poses.resize(n);
  for (std::size_t row = 0; row < n; ++row) {
    const double half = st.theta()[row] / 2;
    m.poses[row] = Pose{{st.x()[row], st.y()[row], z ? z[row] : 0.0},
                        {0.0, 0.0, std::sin(half), std::cos(half)}};
  }
  PoseArray all{};
  all.header.stamp = stamp(now);
  all.header.frame_id = m.o.frame.data();
  all.poses._maximum = all.poses._length = static_cast<std::uint32_t>(n);
  all.poses._buffer = m.poses.data();
  all.poses._release = false;
  dds_write(m.poses_writer, &all);

  const auto& names = st.robot_name();
  for (std::size_t row = 0; row < n; ++row) {
    if (!m.external(row)) continue;
    PoseStamped one{};
    one.header.stamp = stamp(now);
    one.header.frame_id = m.o.frame.data();
    one.pose = m.poses[row];
    dds_write(m.driven_robot(names[row]).pose_writer, &one);
  }
}

std::string Bridge::describe() const {
  const Impl& m = *impl_;
  std::string line =
      fmt::format("ROS 2 (DDS domain {}): publishing /clock and /{}/poses", m.o.domain, m.o.ns);
  if (!m.driven.empty())
    line += fmt::format("; {} external robot(s) publish /{}/ROBOT/pose and take /{}/ROBOT/cmd_vel",
                        m.driven.size(), m.o.ns, m.o.ns);
  return line;
}

}  // namespace fleetsim::ros2
