// A run seen from ROS 2: robot poses published and velocity commands taken as ROS 2 topics,
// over Cyclone DDS, with ROS 2's own type and topic names, so that a ROS 2 system on the same
// DDS domain subscribes and publishes without any fleetsim code (docs/ros2.md).
#pragma once

#include <memory>
#include <string>

namespace fleetsim {
class Simulation;
}

namespace fleetsim::ros2 {

struct BridgeOptions {
  int domain = 0;               ///< the DDS domain (ROS_DOMAIN_ID of the ROS 2 nodes)
  std::string ns = "fleetsim";  ///< topics /NS/poses, /NS/ROBOT/pose, /NS/ROBOT/cmd_vel
  std::string frame = "map";    ///< the poses' frame_id
};

/// Over one run: before each step take_commands(), after it publish().
class Bridge {
 public:
  /// Joins the DDS domain. Throws std::runtime_error saying why when DDS refuses.
  Bridge(Simulation& sim, BridgeOptions options);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  /// Each robot whose controller is `external` gets the newest velocity command received on
  /// /NS/ROBOT/cmd_vel (geometry_msgs/Twist: linear.x, m/s, and angular.z, rad/s) as its body
  /// command; it keeps the last one until another arrives.
  void take_commands();
  /// Publishes /clock (rosgraph_msgs/Clock, the simulated time), /NS/poses
  /// (geometry_msgs/PoseArray, every robot in id order) and /NS/ROBOT/pose
  /// (geometry_msgs/PoseStamped) for the robots whose controller is `external`.
  void publish();
  /// One line for the user: the domain and the topics.
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleetsim::ros2
