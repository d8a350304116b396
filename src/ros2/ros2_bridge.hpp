// A run seen from ROS 2: the simulated clock, robot poses, odometry, tf and laser scans
// published, and velocity commands taken, as ROS 2 topics over Cyclone DDS with ROS 2's own
// type and topic names, QoS, USER_DATA and ros_discovery_info, so that a ROS 2 system on the
// same DDS domain sees a node `/NS` and talks to it without any fleetsim code (docs/ros2.md).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim {
class Simulation;
struct WorldModel;
struct WorldState;
}  // namespace fleetsim

namespace fleetsim::ros2 {

struct VelocityInput;

/// The ROS 2 release the bridge presents itself to: its graph messages and type hashes differ.
enum class Distro {
  kHumble,  ///< ROS 2 Humble: 24-byte gids, no type hashes
  kJazzy,   ///< ROS 2 Iron, Jazzy and later: 16-byte gids, RIHS01 type hashes in USER_DATA
};

/// A robot of the run as the experiment loads it: what the bridge makes topics for.
struct RosterRobot {
  EntityId id = 0;
  std::string name;  ///< its id in the experiment
  std::uint16_t kind = 0;
  bool external = false;  ///< its controller is `external`: /NS/ROBOT/pose and cmd_vel
  bool selected = false;  ///< BridgeOptions::robots selects it: odometry, tf and scans
};

struct BridgeOptions {
  int domain = 0;               ///< the DDS domain (ROS_DOMAIN_ID of the ROS 2 nodes)
  std::string ns = "fleetsim";  ///< topics /NS/..., and the node's name
  std::string frame = "map";    ///< the world's tf frame: poses', odometry's and tf's parent
  Distro distro = Distro::kJazzy;
  /// Robots with odometry, tf and scans: robot ids, `kind:KIND`, or `all`. Empty: the robots
  /// whose controller is `external`.
  std::vector<std::string> robots;
  /// Poses, odometry, tf and scans per simulated second (at most one per tick); 0: every tick.
  double rate_hz = 0;
  /// Laser scans for the selected robots with proximity sensors (off: odometry and tf only).
  bool scans = true;
  /// Where the commands taken are recorded (ros2_inputs.hpp); "" records none.
  std::string record_inputs;
  /// A run on several processes, process 0 running the bridge: each command taken is not
  /// landed here but handed to `announce`, with the robot's entity id and the tick it lands at
  /// (the next tick boundary: the announcement goes to every process with this tick's moves),
  /// and recorded with that tick. Empty: one process, commands land at once.
  std::function<void(EntityId, const VelocityInput&)> announce;
  /// A run on several processes: this process's index (each process has a bridge of its own,
  /// a DDS participant with one node, /NS on process 0 and /NS_pK on process K), and every
  /// robot of the run as loaded (roster()): a partitioned process holds only its part, so each
  /// process makes the writers of every robot and publishes those it runs. -1: one process.
  int process = -1;
  std::vector<RosterRobot> roster;
};

/// Over one run: before each step take_commands(), after it publish(). Called from the thread
/// that steps.
class Bridge {
 public:
  /// Joins the DDS domain and announces the node. Throws std::invalid_argument for a robot or
  /// kind in `options.robots` that the run does not have, std::runtime_error saying why when
  /// DDS refuses.
  Bridge(Simulation& sim, BridgeOptions options);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  /// A tick boundary: each robot whose controller is `external` takes the newest velocity
  /// command received on /NS/ROBOT/cmd_vel (geometry_msgs/Twist: linear.x, m/s, and angular.z,
  /// rad/s), records it, and moves so from this step on (ros2_inputs.hpp).
  void take_commands();
  /// Publishes /clock (rosgraph_msgs/Clock, the simulated time) after every tick and, at the
  /// publishing rate, /NS/poses (geometry_msgs/PoseArray, every robot in id order),
  /// /NS/ROBOT/pose (geometry_msgs/PoseStamped, external robots), /NS/ROBOT/odom
  /// (nav_msgs/Odometry), /NS/ROBOT/scan (sensor_msgs/LaserScan) and /tf
  /// (tf2_msgs/TFMessage) for the selected robots.
  /// On several processes, each process publishes the robots whose controllers it runs (the
  /// one that computed their readings), process 0 /clock too, and /NS/poses only when `whole`:
  /// it holds every robot as it is now (the ticks whose whole frame it asked for:
  /// wants_whole_frame()).
  void publish(bool whole = true);
  /// Several processes, process 0: whether /NS/poses has a subscriber, so that the whole world
  /// is worth gathering for it (two ticks ahead of a publishing tick).
  bool wants_whole_frame() const;
  /// Whether publish() at tick `tick` publishes poses, odometry, tf and scans (the rate).
  bool publishes_robots_at(Tick tick) const;
  /// One line for the user: the domain, the node and the topics.
  std::string describe() const;
  /// Every topic the bridge has, "/topic pkg/msg/Type" (docs/ros2.md lists the same).
  std::vector<std::string> topics() const;
  /// How many of its writers have at least one subscriber now (benchmarks wait for theirs).
  std::size_t subscribed_writers() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A robot's id as one token of a ROS 2 name, as its topics have it: letters, digits and `_`
/// (others become `_`), not starting with a digit (`r` is put before one).
std::string ros_name_token(const std::string& robot);

/// Every robot of `state` (a loaded experiment) with its name, kind, whether its controller is
/// `external` and whether `items` (BridgeOptions::robots) selects it; throws as
/// selected_robots().
std::vector<RosterRobot> roster(const WorldModel& model, const WorldState& state,
                                const std::vector<std::string>& items);

/// Per robot row: does BridgeOptions::robots `items` select it? Throws std::invalid_argument
/// for an id or kind:KIND that matches no robot of the run (checked before the run starts).
std::vector<bool> selected_robots(const WorldModel& model, const WorldState& state,
                                  const std::vector<std::string>& items);

/// "humble" or "jazzy" (also "iron", "kilted", "rolling": they speak as Jazzy does).
bool parse_distro(const std::string& name, Distro& out);

}  // namespace fleetsim::ros2
