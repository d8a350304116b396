// The bridge's RIHS01 type hashes (src/ros2/ros2_types.cpp) against the hashes ROS 2 itself
// publishes for the same types: `ros2 topic info -v` prints them, rmw implementations embed
// them (rmw_dds_common's ParticipantEntitiesInfo). The integration test recomputes every one
// from the .msg files; these are the values as ROS 2 Jazzy has them.
#include <gtest/gtest.h>

#include "ros2/ros2_types.hpp"

namespace fleetsim::ros2 {
namespace {

TEST(Ros2Types, HashesAreThoseRos2Publishes) {
  EXPECT_EQ(type_hash("geometry_msgs/msg/Twist"),
            "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a");
  EXPECT_EQ(type_hash("nav_msgs/msg/Odometry"),
            "RIHS01_3cc97dc7fb7502f8714462c526d369e35b603cfc34d946e3f2eda2766dfec6e0");
  EXPECT_EQ(type_hash("sensor_msgs/msg/LaserScan"),
            "RIHS01_64c191398013af96509d518dac71d5164f9382553fce5c1f8cca5be7924bd828");
  EXPECT_EQ(type_hash("rmw_dds_common/msg/ParticipantEntitiesInfo"),
            "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e");
  EXPECT_EQ(type_hash("geometry_msgs/msg/Transform"),
            "RIHS01_beb83fbe698636351461f6f35d1abb20010c43d55374d81bd041f1ba2581fddc");
}

TEST(Ros2Types, TheHashedTextIsRos2sJson) {
  // Python's json.dumps(separators=(', ', ': ')): the type, then the types it refers to by
  // name; no default values.
  EXPECT_EQ(hashed_type_description("rosgraph_msgs/msg/Clock"),
            "{\"type_description\": {\"type_name\": \"rosgraph_msgs/msg/Clock\", \"fields\": "
            "[{\"name\": \"clock\", \"type\": {\"type_id\": 1, \"capacity\": 0, "
            "\"string_capacity\": 0, \"nested_type_name\": \"builtin_interfaces/msg/Time\"}}]}, "
            "\"referenced_type_descriptions\": [{\"type_name\": \"builtin_interfaces/msg/Time\", "
            "\"fields\": [{\"name\": \"sec\", \"type\": {\"type_id\": 6, \"capacity\": 0, "
            "\"string_capacity\": 0, \"nested_type_name\": \"\"}}, {\"name\": \"nanosec\", "
            "\"type\": {\"type_id\": 7, \"capacity\": 0, \"string_capacity\": 0, "
            "\"nested_type_name\": \"\"}}]}]}");
  EXPECT_THROW(hashed_type_description("std_msgs/msg/NoSuch"), std::out_of_range);
}

TEST(Ros2Types, DdsTypeNamesBecomeRosTypeNames) {
  EXPECT_EQ(ros_type_name("nav_msgs::msg::dds_::Odometry_"), "nav_msgs/msg/Odometry");
  EXPECT_EQ(ros_type_name("rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"),
            "rmw_dds_common/msg/ParticipantEntitiesInfo");
}

}  // namespace
}  // namespace fleetsim::ros2
