#include "ros2/ros2_bridge.hpp"

#include <dds/dds.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "robots/proximity_sensor.hpp"
#include "ros2/ros2_inputs.hpp"
#include "ros2/ros2_types.hpp"
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
using Odometry = nav_msgs_msg_dds__Odometry_;
using TransformStamped = geometry_msgs_msg_dds__TransformStamped_;
using TFMessage = tf2_msgs_msg_dds__TFMessage_;
using LaserScan = sensor_msgs_msg_dds__LaserScan_;

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

/// ros_discovery_info's type for ROS 2 Humble: the IDL's rmw_dds_common_humble types (24-byte
/// gids) under the name Humble gives them. Without XTypes metadata, which would carry the
/// IDL's module name; rmw_cyclonedds sends none either.
const dds_topic_descriptor_t& humble_discovery_type() {
  static const dds_topic_descriptor_t& d =
      rmw_dds_common_humble_msg_dds__ParticipantEntitiesInfo__desc;
  static const dds_topic_descriptor_t renamed{d.m_size,
                                              d.m_align,
                                              d.m_flagset & ~DDS_TOPIC_XTYPES_METADATA,
                                              d.m_nkeys,
                                              "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_",
                                              d.m_keys,
                                              d.m_nops,
                                              d.m_ops,
                                              d.m_meta,
                                              {nullptr, 0},
                                              {nullptr, 0},
                                              d.restrict_data_representation};
  return renamed;
}

/// A LaserScan's angles for a proximity sensor's rays: evenly spaced rays map one to one;
/// others go to the nearest of one-degree bins from the first ray to the last, bins without a
/// ray reading NaN (REP-117: no measurement).
struct ScanLayout {
  ColumnHandle column = kNoColumn;  ///< the readings, f32 x rays
  std::size_t rays = 0;
  float angle_min = 0, angle_max = 0, increment = 0;
  std::vector<std::uint32_t> bin;  ///< per ray
  std::size_t bins = 0;
  double radius_m = 0, range_m = 0;
};

std::optional<ScanLayout> scan_layout(const Simulation& sim, std::uint16_t kind) {
  const RobotKind& k = sim.model().kinds[kind];
  for (const PartDecl& p : k.sensors) {
    if (p.interface != "proximity") continue;
    std::string error;
    std::vector<double> angles = proximity_ray_angles(p.params, error);
    ScanLayout s;
    s.column = sim.state().robots.find(p.name);
    if (!error.empty() || angles.empty() || s.column == kNoColumn) continue;
    s.rays = angles.size();
    s.radius_m = k.radius_m;
    s.range_m = p.params.real("range", 0.1);
    for (double& a : angles) a = std::remainder(a, 2 * kPi);
    std::vector<double> sorted = angles;
    std::sort(sorted.begin(), sorted.end());
    const double lo = sorted.front(), hi = sorted.back();
    double step = sorted.size() > 1 ? (hi - lo) / static_cast<double>(sorted.size() - 1) : 0;
    bool even = true;
    for (std::size_t i = 1; i < sorted.size(); ++i)
      even = even && std::abs(sorted[i] - sorted[i - 1] - step) < 1e-6;
    if (!even) step = kPi / 180;
    s.bins = step > 0 ? static_cast<std::size_t>(std::lround((hi - lo) / step)) + 1 : 1;
    for (double a : angles)
      s.bin.push_back(step > 0 ? static_cast<std::uint32_t>(std::lround((a - lo) / step)) : 0);
    s.angle_min = static_cast<float>(lo);
    s.angle_max = static_cast<float>(lo + step * static_cast<double>(s.bins - 1));
    s.increment = static_cast<float>(step);
    return s;
  }
  return std::nullopt;
}

}  // namespace

/// A DDS writer and how many readers it has (kept by DDS's listener thread): the bridge builds
/// and writes a message only when someone subscribes. Its writers are volatile, so a message
/// nobody receives is lost anyway; skipping it is invisible to ROS 2, and saves the run the
/// serialising (rclcpp drivers do the same with get_subscription_count()).
struct Publisher {
  dds_entity_t writer = 0;
  std::atomic<std::uint32_t>* readers = nullptr;
  bool wanted() const { return readers && readers->load(std::memory_order_relaxed) > 0; }
  void write(const void* message) const { dds_write(writer, message); }
};

void on_publication_matched(dds_entity_t, const dds_publication_matched_status_t status,
                            void* readers) {
  static_cast<std::atomic<std::uint32_t>*>(readers)->store(status.current_count,
                                                           std::memory_order_relaxed);
}

struct Bridge::Impl {
  Simulation& sim;
  BridgeOptions o;
  std::string node_name;  ///< NS on one process and on process 0, NS_pK on process K
  bool several = false;   ///< a run on several processes: this process publishes its robots
  dds_entity_t participant = 0;
  Publisher clock_writer, poses_writer, tf_writer;
  dds_entity_t discovery_writer = 0;
  std::deque<std::atomic<std::uint32_t>> reader_counts;  // (a deque: their addresses stay)
  /// Every writer and reader of the node, for ros_discovery_info.
  std::vector<dds_entity_t> node_writers, node_readers;
  std::vector<std::string> topic_list;  // "/topic pkg/msg/Type"
  std::map<std::string, dds_entity_t> topics;

  /// A robot driven from ROS 2 (controller `external`).
  struct Driven {
    std::string name;
    EntityId id = 0;
    Publisher pose_writer;
    dds_entity_t cmd_reader = 0;
  };
  std::vector<Driven> driven;
  /// A robot with odometry, tf and (with a proximity sensor) scans.
  struct Shown {
    std::string name;
    EntityId id = 0;
    std::string base_frame;  ///< ROBOT/base_link
    Publisher odom_writer, scan_writer;
    double last_x = 0, last_y = 0, last_theta = 0;
    Tick last_tick = -1;
  };
  std::vector<Shown> shown;
  std::map<std::uint16_t, std::optional<ScanLayout>> scans;
  std::optional<VelocityDriver> driver;
  std::unique_ptr<std::ofstream> record;
  Tick publish_every = 1;

  std::vector<Pose> poses, sorted_poses;
  std::vector<TransformStamped> transforms;
  std::vector<float> ranges, intensities;

  Impl(Simulation& s, BridgeOptions options) : sim(s), o(std::move(options)) {}
  dds_entity_t domain = 0;  ///< the DDS domain, when this bridge made it (with its settings)
  ~Impl() {
    if (participant > 0) dds_delete(participant);
    if (domain > 0) dds_delete(domain);
  }

  /// The QoS of rmw_cyclonedds for a publisher or subscription: its history and reliability,
  /// volatile, no autodispose, and the type hash in USER_DATA (Iron and later).
  dds_qos_t* qos(const std::string& ros_type, bool reliable, int depth) const {
    dds_qos_t* q = dds_create_qos();
    dds_qset_writer_data_lifecycle(q, false);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
    // (rmw_cyclonedds blocks a reliable writer without limit; the bridge at most 100 ms, so
    // that a stalled subscriber cannot hold the run for ever. Not visible to ROS 2.)
    if (reliable)
      dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
    else
      dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    dds_qset_liveliness(q, DDS_LIVELINESS_AUTOMATIC, DDS_INFINITY);
    // rmw_cyclonedds's types speak XCDR1 only: a writer offering XCDR2 would not match them.
    const dds_data_representation_id_t xcdr1[] = {DDS_DATA_REPRESENTATION_XCDR1};
    dds_qset_data_representation(q, 1, xcdr1);
    if (o.distro != Distro::kHumble) {
      const std::string user_data = "typehash=" + type_hash(ros_type) + ";";
      dds_qset_userdata(q, user_data.data(), user_data.size());
    }
    return q;
  }

  dds_entity_t topic(const dds_topic_descriptor_t* type, const std::string& dds_name) {
    auto it = topics.find(dds_name);
    if (it != topics.end()) return it->second;
    const dds_entity_t t =
        checked(dds_create_topic(participant, type, dds_name.c_str(), nullptr, nullptr),
                "create the topic " + dds_name);
    return topics.emplace(dds_name, t).first->second;
  }

  /// A publisher of ROS 2 topic `name` (absolute; on DDS "rt" + name), reliable, keeping the
  /// last `depth` samples (ROS 2's default profile has 10).
  Publisher writer(const dds_topic_descriptor_t* type, const std::string& name, int depth = 10) {
    const std::string ros_type = ros_type_name(type->m_typename);
    dds_qos_t* q = qos(ros_type, true, depth);
    Publisher p;
    p.readers = &reader_counts.emplace_back(0);
    dds_listener_t* l = dds_create_listener(nullptr);
    dds_lset_publication_matched_arg(l, on_publication_matched, p.readers, true);
    p.writer = dds_create_writer(participant, topic(type, "rt" + name), q, l);
    dds_delete_listener(l);
    dds_delete_qos(q);
    node_writers.push_back(checked(p.writer, "publish " + name));
    topic_list.push_back(name + " " + ros_type);
    return p;
  }
  /// A subscription: best effort, the last sample, so that reliable and best-effort
  /// publishers both reach it.
  dds_entity_t reader(const dds_topic_descriptor_t* type, const std::string& name) {
    const std::string ros_type = ros_type_name(type->m_typename);
    dds_qos_t* q = qos(ros_type, false, 1);
    const dds_entity_t r = dds_create_reader(participant, topic(type, "rt" + name), q, nullptr);
    dds_delete_qos(q);
    node_readers.push_back(checked(r, "subscribe to " + name));
    topic_list.push_back(name + " " + ros_type);
    return r;
  }

  std::string robot_topic(const std::string& robot, const char* leaf) const {
    return "/" + o.ns + "/" + token(robot) + "/" + leaf;
  }

  /// ros_discovery_info: this participant and its one node, /NS (/NS_pK on process K of
  /// several), with every reader and writer
  /// (rmw_dds_common/msg/ParticipantEntitiesInfo; a gid is the entity's DDS GUID, then zeros
  /// up to the distribution's gid size).
  void announce() {
    const bool humble = o.distro == Distro::kHumble;
    const dds_topic_descriptor_t* type =
        humble ? &humble_discovery_type() : &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc;
    // rmw_cyclonedds: reliable, transient local, the last sample; no ROS name mangling.
    dds_qos_t* q = qos("rmw_dds_common/msg/ParticipantEntitiesInfo", true, 1);
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_durability_service(q, 0, DDS_HISTORY_KEEP_LAST, 1, DDS_LENGTH_UNLIMITED,
                                DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
    discovery_writer =
        checked(dds_create_writer(participant, topic(type, "ros_discovery_info"), q, nullptr),
                "publish ros_discovery_info");
    dds_delete_qos(q);
    const auto guid = [](dds_entity_t e) {
      dds_guid_t g{};
      dds_get_guid(e, &g);
      return g;
    };
    if (humble)
      write_discovery<rmw_dds_common_humble_msg_dds__ParticipantEntitiesInfo_,
                      rmw_dds_common_humble_msg_dds__NodeEntitiesInfo_,
                      rmw_dds_common_humble_msg_dds__Gid_>(guid);
    else
      write_discovery<rmw_dds_common_msg_dds__ParticipantEntitiesInfo_,
                      rmw_dds_common_msg_dds__NodeEntitiesInfo_, rmw_dds_common_msg_dds__Gid_>(
          guid);
  }
  template <class Info, class Node, class Gid, class GuidOf>
  void write_discovery(const GuidOf& guid) {
    const auto gid = [&](dds_entity_t e) {
      Gid g{};
      const dds_guid_t u = guid(e);
      std::copy(std::begin(u.v), std::end(u.v), g.data);
      return g;
    };
    std::vector<Gid> readers, writers;
    for (dds_entity_t r : node_readers) readers.push_back(gid(r));
    for (dds_entity_t w : node_writers) writers.push_back(gid(w));
    Node node{};
    std::snprintf(node.node_namespace, sizeof node.node_namespace, "/");
    std::snprintf(node.node_name, sizeof node.node_name, "%s", node_name.c_str());
    node.reader_gid_seq._length = node.reader_gid_seq._maximum =
        static_cast<std::uint32_t>(readers.size());
    node.reader_gid_seq._buffer = readers.data();
    node.writer_gid_seq._length = node.writer_gid_seq._maximum =
        static_cast<std::uint32_t>(writers.size());
    node.writer_gid_seq._buffer = writers.data();
    Info info{};
    info.gid = gid(participant);
    info.node_entities_info_seq._length = info.node_entities_info_seq._maximum = 1;
    info.node_entities_info_seq._buffer = &node;
    checked(dds_write(discovery_writer, &info), "publish ros_discovery_info");
  }

  void publish_robots(Tick tick, SimTime now, bool whole);
  /// This process publishes robot `id` now: one process publishes all; on several, the process
  /// running its controller (it computed the readings, and moved it this step).
  bool runs(EntityId id) const { return !several || sim.controller_process(id) == o.process; }
  void publish_scan(const Shown& s, std::size_t row, SimTime now);
};

bool parse_distro(const std::string& name, Distro& out) {
  if (name == "humble") {
    out = Distro::kHumble;
    return true;
  }
  if (name == "iron" || name == "jazzy" || name == "kilted" || name == "rolling") {
    out = Distro::kJazzy;
    return true;
  }
  return false;
}

std::vector<bool> selected_robots(const WorldModel& model, const WorldState& st,
                                  const std::vector<std::string>& items) {
  const std::size_t n = st.robot_count();
  std::vector<bool> on(n, false);
  if (items.empty()) {
    for (std::size_t row = 0; row < n; ++row)
      on[row] = model.controllers[st.robot_controller()[row]].type == "external";
    return on;
  }
  const auto& names = st.robot_name();
  for (const std::string& item : items) {
    bool found = false;
    const bool is_kind = item.rfind("kind:", 0) == 0;
    if (item == "all") {
      on.assign(n, true);
      found = true;
    } else if (is_kind) {
      const std::string kind = item.substr(5);
      for (std::size_t row = 0; row < n; ++row)
        if (model.kinds[st.robot_kind()[row]].name == kind) on[row] = found = true;
    } else {
      for (std::size_t row = 0; row < n; ++row)
        if (names[row] == item) on[row] = found = true;
    }
    if (!found)
      throw std::invalid_argument(
          fmt::format("--ros2-robots: the run has no {} '{}' (expected robot ids, kind:KIND or "
                      "all, comma-separated)",
                      is_kind ? "robot of kind" : "robot", is_kind ? item.substr(5) : item));
  }
  return on;
}

std::vector<RosterRobot> roster(const WorldModel& model, const WorldState& st,
                                const std::vector<std::string>& items) {
  const std::vector<bool> selected = selected_robots(model, st, items);
  std::vector<RosterRobot> out(st.robot_count());
  for (std::size_t row = 0; row < out.size(); ++row) {
    RosterRobot& r = out[row];
    r.id = st.robot_id()[row];
    r.name = std::string(st.robot_name()[row]);
    r.kind = st.robot_kind()[row];
    r.external = model.controllers[st.robot_controller()[row]].type == "external";
    r.selected = selected[row];
  }
  return out;
}

Bridge::Bridge(Simulation& sim, BridgeOptions options)
    : impl_(std::make_unique<Impl>(sim, std::move(options))) {
  Impl& m = *impl_;
  if (m.o.domain < 0 || m.o.domain > 232)
    throw std::runtime_error(
        fmt::format("ROS 2 bridge: domain {} (expected 0 to 232, as ROS_DOMAIN_ID)", m.o.domain));
  m.several = m.o.process >= 0;
  m.node_name = m.o.process > 0 ? fmt::format("{}_p{}", m.o.ns, m.o.process) : m.o.ns;
  // One process: the robots it holds at the start; several: every robot of the run as loaded.
  const std::vector<RosterRobot> robots =
      m.several ? m.o.roster : roster(sim.model(), sim.state(), m.o.robots);
  const bool first = m.o.process <= 0;  // (/clock, /NS/poses and the commands)

  // The domain with the bridge's Cyclone DDS settings, then the user's (CYCLONEDDS_URI: they
  // win where both say). Heartbeats (docs/ros2.md, docs/benchmarks.md "ROS 2 bridge"): a
  // reliable writer puts a heartbeat into each datagram of its samples, and asks its readers
  // for an acknowledgement with it only when its previous write is more than 4/5 of the
  // interval old, or its unacknowledged samples pass about 15 kB, at most every `minsched`:
  // with Cyclone's defaults (100 ms, min 5 ms) every odometry sample at 10 Hz asked for one,
  // an acknowledgement datagram back per robot and publication. With an interval of 1 s, a
  // topic written 10 times a second asks for none (its readers still ask for a missed
  // sample, which the heartbeat with the next one shows them), /tf (100 kB a sample) every
  // 500 ms.
  {
    std::string config =
        "<CycloneDDS><Domain Id=\"any\"><Internal><HeartbeatInterval min=\"500 ms\" "
        "minsched=\"500 ms\" max=\"8 s\">1 s</HeartbeatInterval></Internal></Domain>"
        "</CycloneDDS>";
    if (const char* user = std::getenv("CYCLONEDDS_URI"); user && *user)
      config += ",", config += user;
    const dds_entity_t d =
        dds_create_domain(static_cast<dds_domainid_t>(m.o.domain), config.c_str());
    // (another bridge of this process made it already, with the same settings)
    if (d != DDS_RETCODE_PRECONDITION_NOT_MET)
      m.domain =
          checked(d, fmt::format("set up DDS domain {} (is CYCLONEDDS_URI valid?)", m.o.domain));
  }
  // The participant of a ROS 2 context: USER_DATA names its security enclave.
  dds_qos_t* pq = dds_create_qos();
  const std::string enclave = "enclave=/;";
  dds_qset_userdata(pq, enclave.data(), enclave.size());
  m.participant = dds_create_participant(static_cast<dds_domainid_t>(m.o.domain), pq, nullptr);
  dds_delete_qos(pq);
  checked(m.participant, fmt::format("join DDS domain {} (is CYCLONEDDS_URI valid?)", m.o.domain));

  const SimTime tick_ns = sim.model().tick_period_ns;
  if (m.o.rate_hz > 0)
    m.publish_every = std::max<Tick>(
        1, static_cast<Tick>(std::llround(1e9 / (m.o.rate_hz * static_cast<double>(tick_ns)))));
  if (first) {
    m.clock_writer = m.writer(&rosgraph_msgs_msg_dds__Clock__desc, "/clock");
    m.poses_writer = m.writer(&geometry_msgs_msg_dds__PoseArray__desc, "/" + m.o.ns + "/poses");
  }
  // (tf2's broadcasters keep the last 100)
  const bool any_shown =
      std::any_of(robots.begin(), robots.end(), [](const RosterRobot& r) { return r.selected; });
  if (any_shown) m.tf_writer = m.writer(&tf2_msgs_msg_dds__TFMessage__desc, "/tf", 100);
  for (const RosterRobot& r : robots) {
    if (r.external) {
      Impl::Driven d;
      d.name = r.name;
      d.id = r.id;
      d.pose_writer =
          m.writer(&geometry_msgs_msg_dds__PoseStamped__desc, m.robot_topic(r.name, "pose"));
      if (first)
        d.cmd_reader =
            m.reader(&geometry_msgs_msg_dds__Twist__desc, m.robot_topic(r.name, "cmd_vel"));
      m.driven.push_back(d);
    }
    if (r.selected) {
      Impl::Shown s;
      s.name = r.name;
      s.id = r.id;
      s.base_frame = token(r.name) + "/base_link";
      s.odom_writer = m.writer(&nav_msgs_msg_dds__Odometry__desc, m.robot_topic(r.name, "odom"));
      if (!m.scans.count(r.kind))
        m.scans[r.kind] = m.o.scans ? scan_layout(sim, r.kind) : std::nullopt;
      if (m.scans[r.kind])
        s.scan_writer =
            m.writer(&sensor_msgs_msg_dds__LaserScan__desc, m.robot_topic(r.name, "scan"));
      m.shown.push_back(std::move(s));
    }
  }
  // Several processes: the poses it holds at the start, for the first odometry's twist (one
  // process publishes at the start instead).
  if (m.several)
    for (Impl::Shown& s : m.shown)
      if (const std::uint32_t row = sim.state().robot_index(s.id); row != kNoIndex) {
        s.last_x = sim.state().x()[row];
        s.last_y = sim.state().y()[row];
        s.last_theta = sim.state().theta()[row];
        s.last_tick = sim.state().tick;
      }
  m.announce();
  m.driver.emplace(sim);
}

Bridge::~Bridge() = default;

void Bridge::take_commands() {
  Impl& m = *impl_;
  const Tick tick = m.sim.state().tick;
  for (const Impl::Driven& d : m.driven) {
    if (d.cmd_reader == 0) continue;  // (several processes: process 0 takes them)
    std::optional<VelocityInput> newest;
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
        newest = VelocityInput{tick, d.name, t->linear.x, t->angular.z, 0};
      }
      dds_return_loan(d.cmd_reader, samples, n);
      if (n < kBatch) break;
    }
    if (!newest) continue;
    if (m.o.announce) {
      newest->tick = tick + 1;  // (where it lands on every process)
      m.o.announce(d.id, *newest);
    } else {
      m.driver->take(*newest);
    }
    if (m.o.record_inputs.empty()) continue;
    if (!m.record) {
      m.record = std::make_unique<std::ofstream>(m.o.record_inputs);
      *m.record << "# fleetsim ROS 2 inputs: TICK ROBOT LINEAR_X ANGULAR_Z; replay with "
                   "fleetsim run EXPERIMENT --replay-inputs "
                << m.o.record_inputs << "\n";
    }
    *m.record << format_velocity_input(*newest) << std::endl;  // (flushed: kept if the run dies)
    if (!*m.record)
      throw RunError("ROS 2 bridge: cannot record the commands in " + m.o.record_inputs);
  }
  if (!m.o.announce) m.driver->apply();
}

void Bridge::Impl::publish_scan(const Shown& s, std::size_t row, SimTime now) {
  const WorldState& st = sim.state();
  const ScanLayout& l = *scans[st.robot_kind()[row]];
  const float* reading = st.robots.span<float>(l.column).data() + row * l.rays;
  ranges.assign(l.bins, std::numeric_limits<float>::quiet_NaN());
  intensities.assign(l.bins, 0.0f);
  for (std::size_t k = 0; k < l.rays; ++k) {
    const float r = reading[k];
    const std::uint32_t b = l.bin[k];
    if (r < intensities[b] && !std::isnan(ranges[b])) continue;  // (the nearer of two rays)
    // A reading is 1 - distance / range from the body's surface; the scan's ranges are from
    // the robot's centre, +inf when nothing is within range (REP-117).
    ranges[b] = r > 0 ? static_cast<float>(l.radius_m + (1.0 - r) * l.range_m)
                      : std::numeric_limits<float>::infinity();
    intensities[b] = r;
  }
  LaserScan scan{};
  scan.header.stamp = stamp(now);
  scan.header.frame_id = const_cast<char*>(s.base_frame.c_str());
  scan.angle_min = l.angle_min;
  scan.angle_max = l.angle_max;
  scan.angle_increment = l.increment;
  scan.scan_time = static_cast<float>(static_cast<double>(publish_every) *
                                      static_cast<double>(sim.model().tick_period_ns) * 1e-9);
  scan.range_min = static_cast<float>(l.radius_m);
  scan.range_max = static_cast<float>(l.radius_m + l.range_m);
  scan.ranges = {static_cast<std::uint32_t>(l.bins), static_cast<std::uint32_t>(l.bins),
                 ranges.data(), false};
  scan.intensities = {static_cast<std::uint32_t>(l.bins), static_cast<std::uint32_t>(l.bins),
                      intensities.data(), false};
  s.scan_writer.write(&scan);
}

void Bridge::Impl::publish_robots(Tick tick, SimTime now, bool whole) {
  const WorldState& st = sim.state();
  // (Rows are in id order on one process: the world keeps them so. On several, process 0's
  // rows of a whole frame may not be.)
  const std::size_t n = st.robot_count();
  const ColumnHandle zc = st.robots.find("z");
  const double* z = zc == kNoColumn ? nullptr : st.robots.span<double>(zc).data();
  poses.resize(n);
  for (std::size_t row = 0; row < n; ++row) {
    const double half = st.theta()[row] / 2;
    poses[row] = Pose{{st.x()[row], st.y()[row], z ? z[row] : 0.0},
                      {0.0, 0.0, std::sin(half), std::cos(half)}};
  }
  // (Several processes: process 0, and only when it holds the whole world.)
  if (poses_writer.wanted() && (!several || whole)) {
    const auto ids = st.robot_id();
    const Pose* in_order = poses.data();
    if (!std::is_sorted(ids.begin(), ids.end())) {
      std::vector<std::uint32_t> order(n);
      for (std::uint32_t row = 0; row < n; ++row) order[row] = row;
      std::sort(order.begin(), order.end(),
                [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
      sorted_poses.resize(n);
      for (std::size_t k = 0; k < n; ++k) sorted_poses[k] = poses[order[k]];
      in_order = sorted_poses.data();
    }
    PoseArray all{};
    all.header.stamp = stamp(now);
    all.header.frame_id = o.frame.data();
    all.poses._maximum = all.poses._length = static_cast<std::uint32_t>(n);
    all.poses._buffer = const_cast<Pose*>(in_order);
    all.poses._release = false;
    poses_writer.write(&all);
  }

  // (A robot's row by its id: rows change when loop functions add or remove robots.)
  for (const Driven& d : driven) {
    const std::uint32_t row = st.robot_index(d.id);
    if (row == kNoIndex || !d.pose_writer.wanted() || !runs(d.id)) continue;
    PoseStamped one{};
    one.header.stamp = stamp(now);
    one.header.frame_id = o.frame.data();
    one.pose = poses[row];
    d.pose_writer.write(&one);
  }

  transforms.clear();
  const bool tf = tf_writer.wanted();
  for (Shown& s : shown) {
    const std::uint32_t row = st.robot_index(s.id);
    if (row == kNoIndex) continue;
    const double x = st.x()[row], y = st.y()[row], theta = st.theta()[row];
    // Several processes: a robot this process holds but does not run is not published here,
    // but its pose is kept, for the twist of its first odometry here should it come (it was
    // near the border, so its row here is up to date).
    const bool mine = runs(s.id);
    if (mine && s.odom_writer.wanted()) {
      Odometry odom{};
      odom.header.stamp = stamp(now);
      odom.header.frame_id = o.frame.data();
      odom.child_frame_id = s.base_frame.data();
      odom.pose.pose = poses[row];
      // The velocity since the last publication, in the robot's frame (REP-105: the twist is
      // in child_frame_id).
      if (s.last_tick >= 0 && tick > s.last_tick) {
        const double dt =
            static_cast<double>((tick - s.last_tick) * sim.model().tick_period_ns) * 1e-9;
        const double dx = x - s.last_x, dy = y - s.last_y;
        const double c = std::cos(theta), sn = std::sin(theta);
        odom.twist.twist.linear.x = (dx * c + dy * sn) / dt;
        odom.twist.twist.linear.y = (-dx * sn + dy * c) / dt;
        odom.twist.twist.angular.z = std::remainder(theta - s.last_theta, 2 * kPi) / dt;
      }
      s.odom_writer.write(&odom);
    }
    s.last_x = x;
    s.last_y = y;
    s.last_theta = theta;
    s.last_tick = tick;
    if (!mine) continue;
    if (tf) {
      TransformStamped t{};
      t.header.stamp = stamp(now);
      t.header.frame_id = o.frame.data();
      t.child_frame_id = s.base_frame.data();
      t.transform.translation = {poses[row].position.x, poses[row].position.y,
                                 poses[row].position.z};
      t.transform.rotation = poses[row].orientation;
      transforms.push_back(t);
    }
    if (s.scan_writer.wanted()) publish_scan(s, row, now);
  }
  if (tf && (!several || !transforms.empty())) {
    TFMessage message{};
    message.transforms = {static_cast<std::uint32_t>(transforms.size()),
                          static_cast<std::uint32_t>(transforms.size()), transforms.data(), false};
    tf_writer.write(&message);
  }
}

void Bridge::publish(bool whole) {
  Impl& m = *impl_;
  const WorldState& st = m.sim.state();
  const SimTime now = st.tick * m.sim.model().tick_period_ns;
  Clock clock{stamp(now)};
  if (m.clock_writer.wanted()) m.clock_writer.write(&clock);
  if (publishes_robots_at(st.tick) && (whole || m.several)) m.publish_robots(st.tick, now, whole);
}

bool Bridge::wants_whole_frame() const {
  return impl_->poses_writer.wanted();
}

bool Bridge::publishes_robots_at(Tick tick) const {
  return tick % impl_->publish_every == 0;
}

std::string Bridge::describe() const {
  const Impl& m = *impl_;
  std::string line = fmt::format("ROS 2 (DDS domain {}): node /{} publishing /clock and /{}/poses",
                                 m.o.domain, m.o.ns, m.o.ns);
  if (m.several)
    line += fmt::format(
        " (on several processes: each publishes the robots it runs, as node /{}_pK "
        "on process K)",
        m.o.ns);
  if (!m.shown.empty())
    line += m.o.scans ? fmt::format("; {} robot(s) publish /{}/ROBOT/odom, /{}/ROBOT/scan and /tf",
                                    m.shown.size(), m.o.ns, m.o.ns)
                      : fmt::format("; {} robot(s) publish /{}/ROBOT/odom and /tf (no scans)",
                                    m.shown.size(), m.o.ns);
  if (!m.driven.empty())
    line += fmt::format("; {} external robot(s) publish /{}/ROBOT/pose and take /{}/ROBOT/cmd_vel",
                        m.driven.size(), m.o.ns, m.o.ns);
  return line;
}

std::size_t Bridge::subscribed_writers() const {
  std::size_t n = 0;
  for (const auto& c : impl_->reader_counts) n += c.load(std::memory_order_relaxed) > 0;
  return n;
}

std::string ros_name_token(const std::string& robot) {
  return token(robot);
}

std::vector<std::string> Bridge::topics() const {
  std::vector<std::string> t = impl_->topic_list;
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

}  // namespace fleetsim::ros2
