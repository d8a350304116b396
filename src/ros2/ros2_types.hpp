// The ROS 2 message types of the bridge described as ROS 2 describes them for its type hashes
// (REP-2011, type_description_interfaces): per type its fields, each with a field type id,
// capacities and the nested type's name. From them, a type's RIHS01 hash: the SHA-256 of the
// canonical JSON of the type and every type it refers to, as ROS 2 Iron and later put it in
// each reader's and writer's USER_DATA (`typehash=RIHS01_<64 hex>;`).
#pragma once

#include <string>
#include <vector>

namespace fleetsim::ros2 {

/// One field of a ROS 2 message type, as type_description_interfaces/Field names it.
struct FieldDescription {
  std::string name;
  int type_id = 0;               ///< FieldType.type_id: 1 nested, 3 uint8, 6 int32, ... (+48 array,
                                 ///< +96 bounded sequence, +144 sequence)
  int capacity = 0;              ///< an array's size, a bounded sequence's bound; else 0
  int string_capacity = 0;       ///< a bounded string's bound; else 0
  std::string nested_type_name;  ///< "pkg/msg/Name" of a nested type, else ""
};

/// A message type: "pkg/msg/Name" and its fields in order.
struct TypeDescription {
  std::string type_name;
  std::vector<FieldDescription> fields;
};

/// Every type the bridge uses, and the types they refer to (rmw_dds_common's as Iron and later
/// define them: Humble has no type hashes).
const std::vector<TypeDescription>& type_descriptions();

/// The canonical JSON that ROS 2 hashes for `type_name` ("pkg/msg/Name"): the type, then the
/// types it refers to, sorted by name, without default values. Throws std::out_of_range for
/// a type not in type_descriptions().
std::string hashed_type_description(const std::string& type_name);

/// "RIHS01_" and the 64 hex digits of the SHA-256 of hashed_type_description(type_name).
std::string type_hash(const std::string& type_name);

/// "pkg/msg/Name" from the DDS type name "pkg::msg::dds_::Name_" (as ros2 topic info shows it).
std::string ros_type_name(const std::string& dds_type_name);

}  // namespace fleetsim::ros2
