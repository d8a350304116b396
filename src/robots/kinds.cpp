#include "robots/kinds.hpp"

#include <cmath>
#include <map>
#include <string>

namespace fleetsim {

namespace {
PartDecl part(const std::string& type, std::map<std::string, std::string> params,
              const std::string& name = "") {
  return PartDecl{name.empty() ? type : name, type, "", Params(std::move(params)), {}};
}
}  // namespace

RobotKind epuck_kind() {
  RobotKind k;
  k.name = "epuck";
  k.radius_m = 0.035;
  k.height_m = 0.05;
  k.max_speed_m_per_s = 0.13;
  k.engine = "kinematics2d";
  k.argos_mass_kg = 0.4;  // ARGoS's dynamics2d e-puck
  k.argos_max_force_n = 1.5;
  k.argos_max_torque_n_m = 1.5;
  k.sensors = {part("proximity", {{"rays", "8"}, {"range", "0.1"}, {"response", "epuck"}}),
               part("collision", {})};
  k.actuators = {
      part("differential_drive", {{"axle_length", "0.053"}, {"max_wheel_speed", "0.13"}}),
      part("leds", {{"count", "1"}})};
  return k;
}

RobotKind footbot_kind() {
  RobotKind k;
  k.name = "footbot";
  k.radius_m = 0.085;
  k.height_m = 0.146;
  k.max_speed_m_per_s = 0.3;
  k.engine = "kinematics2d";
  k.argos_mass_kg = 1.6;  // ARGoS's dynamics2d foot-bot
  k.argos_max_force_n = 15;
  k.argos_max_torque_n_m = 150;
  k.sensors = {part("proximity", {{"rays", "24"}, {"range", "0.1"}, {"response", "footbot"}}),
               part("collision", {}), part("positioning", {}),
               // ARGoS's medium checks occlusions by default: walls and bodies block messages.
               part("range_and_bearing", {{"range", "3"},
                                          {"data_size", "10"},
                                          {"blocked_by_obstacles", "true"},
                                          {"blocked_by_bodies", "true"}}),
               // ARGoS's: the ground square seen by a camera 0.2887 m high with a 70 degree
               // aperture (half side 0.2887 tan 70 = 0.7932 m), occluded by bodies and walls.
               part("colored_blob_omnidirectional_camera", {{"range", "0.7932"},
                                                            {"field", "square"},
                                                            {"blocked_by_obstacles", "true"},
                                                            {"blocked_by_bodies", "true"}})};
  k.actuators = {part("differential_drive", {{"axle_length", "0.14"}, {"max_wheel_speed", "0.3"}}),
                 part("leds", {{"count", "13"}}), part("range_and_bearing", {{"data_size", "10"}})};
  return k;
}

RobotKind eyebot_kind() {
  RobotKind k;
  k.name = "eyebot";
  k.radius_m = 0.25;
  k.height_m = 0.566;
  k.max_speed_m_per_s = 1.0;
  k.mass_kg = 0.5;
  k.engine = "pointmass3d";
  k.flies = true;
  k.sensors = {part("positioning", {}),
               part("range_and_bearing", {{"range", "10"}, {"data_size", "10"}}),
               part("colored_blob_omnidirectional_camera", {{"range", "3"}})};
  k.actuators = {part("quadrotor_speed", {}), part("leds", {{"count", "1"}}),
                 part("range_and_bearing", {{"data_size", "10"}})};
  return k;
}

RobotKind cylinder_kind() {
  RobotKind k;
  k.name = "cylinder";
  k.radius_m = 0.1;
  k.height_m = 0.2;
  k.mass_kg = 1.0;
  k.engine = "kinematics2d";
  k.passive = true;
  return k;
}

RobotKind box_kind() {
  RobotKind k = cylinder_kind();  // the same height, mass and passivity
  k.name = "box";
  k.shape = BodyShape::kBox;
  k.length_m = k.width_m = 0.2;
  k.radius_m = std::sqrt(0.2 * 0.2 * 2) / 2;  // the bounding circle
  return k;
}

std::vector<RobotKind> builtin_kinds() {
  return {epuck_kind(), footbot_kind(), cylinder_kind(), box_kind(), eyebot_kind()};
}

}  // namespace fleetsim
