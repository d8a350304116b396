#include "ros2/ros2_types.hpp"

#include <sodium.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace fleetsim::ros2 {

namespace {

// type_description_interfaces/FieldType's ids.
constexpr int kNested = 1, kUint8 = 3, kInt32 = 6, kUint32 = 7, kFloat = 10, kDouble = 11,
              kString = 17, kBoundedString = 21;
constexpr int kArray = 48, kSequence = 144;

FieldDescription field(std::string name, int type_id, std::string nested = "", int capacity = 0,
                       int string_capacity = 0) {
  return {std::move(name), type_id, capacity, string_capacity, std::move(nested)};
}

// The ROS 2 definitions (.msg files of rcl_interfaces, common_interfaces, geometry2 and
// rmw_dds_common), field for field as ros2_msgs.idl declares them for DDS.
std::vector<TypeDescription> make_descriptions() {
  const std::string time = "builtin_interfaces/msg/Time", header = "std_msgs/msg/Header",
                    point = "geometry_msgs/msg/Point", quat = "geometry_msgs/msg/Quaternion",
                    pose = "geometry_msgs/msg/Pose", vec = "geometry_msgs/msg/Vector3",
                    twist = "geometry_msgs/msg/Twist", gid = "rmw_dds_common/msg/Gid";
  const auto xyz = [](std::string n) {
    return TypeDescription{std::move(n),
                           {field("x", kDouble), field("y", kDouble), field("z", kDouble)}};
  };
  return {
      {time, {field("sec", kInt32), field("nanosec", kUint32)}},
      {header, {field("stamp", kNested, time), field("frame_id", kString)}},
      xyz(point),
      {quat, {field("x", kDouble), field("y", kDouble), field("z", kDouble), field("w", kDouble)}},
      {pose, {field("position", kNested, point), field("orientation", kNested, quat)}},
      {"geometry_msgs/msg/PoseStamped",
       {field("header", kNested, header), field("pose", kNested, pose)}},
      {"geometry_msgs/msg/PoseArray",
       {field("header", kNested, header), field("poses", kNested + kSequence, pose)}},
      xyz(vec),
      {twist, {field("linear", kNested, vec), field("angular", kNested, vec)}},
      {"geometry_msgs/msg/PoseWithCovariance",
       {field("pose", kNested, pose), field("covariance", kDouble + kArray, "", 36)}},
      {"geometry_msgs/msg/TwistWithCovariance",
       {field("twist", kNested, twist), field("covariance", kDouble + kArray, "", 36)}},
      {"geometry_msgs/msg/Transform",
       {field("translation", kNested, vec), field("rotation", kNested, quat)}},
      {"geometry_msgs/msg/TransformStamped",
       {field("header", kNested, header), field("child_frame_id", kString),
        field("transform", kNested, "geometry_msgs/msg/Transform")}},
      {"nav_msgs/msg/Odometry",
       {field("header", kNested, header), field("child_frame_id", kString),
        field("pose", kNested, "geometry_msgs/msg/PoseWithCovariance"),
        field("twist", kNested, "geometry_msgs/msg/TwistWithCovariance")}},
      {"sensor_msgs/msg/LaserScan",
       {field("header", kNested, header), field("angle_min", kFloat), field("angle_max", kFloat),
        field("angle_increment", kFloat), field("time_increment", kFloat),
        field("scan_time", kFloat), field("range_min", kFloat), field("range_max", kFloat),
        field("ranges", kFloat + kSequence), field("intensities", kFloat + kSequence)}},
      {"tf2_msgs/msg/TFMessage",
       {field("transforms", kNested + kSequence, "geometry_msgs/msg/TransformStamped")}},
      {"rosgraph_msgs/msg/Clock", {field("clock", kNested, time)}},
      // (a .msg `char` is an IDL uint8)
      {gid, {field("data", kUint8 + kArray, "", 16)}},
      {"rmw_dds_common/msg/NodeEntitiesInfo",
       {field("node_namespace", kBoundedString, "", 0, 256),
        field("node_name", kBoundedString, "", 0, 256),
        field("reader_gid_seq", kNested + kSequence, gid),
        field("writer_gid_seq", kNested + kSequence, gid)}},
      {"rmw_dds_common/msg/ParticipantEntitiesInfo",
       {field("gid", kNested, gid), field("node_entities_info_seq", kNested + kSequence,
                                          "rmw_dds_common/msg/NodeEntitiesInfo")}},
  };
}

const TypeDescription& find(const std::string& name) {
  for (const auto& t : type_descriptions())
    if (t.type_name == name) return t;
  throw std::out_of_range("no ROS 2 type description for " + name);
}

/// One individual type description as ROS 2's hashed JSON has it: Python's json.dumps with
/// separators (", ", ": "), keys in this order, default values left out. (Names are ASCII
/// identifiers: nothing to escape.)
std::string json(const TypeDescription& t) {
  std::string s = fmt::format("{{\"type_name\": \"{}\", \"fields\": [", t.type_name);
  for (std::size_t i = 0; i < t.fields.size(); ++i) {
    const FieldDescription& f = t.fields[i];
    s += fmt::format(
        "{}{{\"name\": \"{}\", \"type\": {{\"type_id\": {}, \"capacity\": {}, "
        "\"string_capacity\": {}, \"nested_type_name\": \"{}\"}}}}",
        i ? ", " : "", f.name, f.type_id, f.capacity, f.string_capacity, f.nested_type_name);
  }
  return s + "]}";
}

}  // namespace

const std::vector<TypeDescription>& type_descriptions() {
  static const std::vector<TypeDescription> all = make_descriptions();
  return all;
}

std::string hashed_type_description(const std::string& type_name) {
  const TypeDescription& top = find(type_name);
  // Every type reachable through nested fields, sorted by name.
  std::set<std::string> referenced;
  std::vector<const TypeDescription*> queue{&top};
  while (!queue.empty()) {
    const TypeDescription* t = queue.back();
    queue.pop_back();
    for (const auto& f : t->fields)
      if (!f.nested_type_name.empty() && referenced.insert(f.nested_type_name).second)
        queue.push_back(&find(f.nested_type_name));
  }
  std::string s = "{\"type_description\": " + json(top) + ", \"referenced_type_descriptions\": [";
  bool first = true;
  for (const auto& name : referenced) {
    s += (first ? "" : ", ") + json(find(name));
    first = false;
  }
  return s + "]}";
}

std::string type_hash(const std::string& type_name) {
  const std::string text = hashed_type_description(type_name);
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  std::string hex = "RIHS01_";
  for (unsigned char b : digest) hex += fmt::format("{:02x}", b);
  return hex;
}

std::string ros_type_name(const std::string& dds) {
  // pkg::msg::dds_::Name_ -> pkg/msg/Name
  std::string s = dds;
  if (const auto at = s.find("::dds_::"); at != std::string::npos) s.erase(at, 6);
  if (!s.empty() && s.back() == '_') s.pop_back();
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "::") == 0) {
      out += '/';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace fleetsim::ros2
