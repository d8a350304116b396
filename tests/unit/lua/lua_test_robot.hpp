// A hand-made robot for the Lua controller's unit tests: the views a kind's parts would give,
// with storage the test fills, a ControllerSetup over them, and a LuaController whose log()
// lines are collected.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lua/lua_controller.hpp"

namespace fleetsim::lua::test {

/// The parts of a foot-bot-like robot (every interface the Lua API knows).
struct FootbotParts {
  // sensors
  std::vector<float> proximity = std::vector<float>(24, 0.0f);
  std::vector<float> proximity_angles;
  std::vector<float> contact_angles;
  float realization = 1;
  double pose[3] = {0, 0, 0};
  std::vector<std::vector<std::uint8_t>> payloads;
  std::vector<RabMessage> messages;
  std::vector<Blob> blobs;
  bool camera_on = false;
  std::vector<float> light = std::vector<float>(24, 0.0f);
  std::vector<float> light_angles;
  std::vector<float> ground = std::vector<float>(4, 0.0f);
  std::vector<Vec2> ground_offsets = {
      {0.063, 0.0116}, {-0.063, 0.0116}, {-0.063, -0.0116}, {0.063, -0.0116}};
  // actuators
  double wheels[2] = {0, 0};
  double wheel_constants[2] = {0.14, 0.3};
  std::vector<Color> leds = std::vector<Color>(13);
  std::vector<std::uint8_t> rab_out = std::vector<std::uint8_t>(10, 0);

  FootbotParts() {
    for (int i = 0; i < 24; ++i)
      proximity_angles.push_back(static_cast<float>((i + 0.5) * 2 * kPi / 24));
    for (int i = 0; i < 24; ++i)
      light_angles.push_back(static_cast<float>(wrap_angle((i + 0.5) * 2 * kPi / 24)));
  }
};

class FakeSetup final : public ControllerSetup {
 public:
  FakeSetup(std::vector<SensorView> s, std::vector<ActuatorView> a, EntityId id,
            std::string name = {}, std::span<const double> pose = {})
      : sensors_(std::move(s)),
        actuators_(std::move(a)),
        id_(id),
        name_(std::move(name)),
        pose_(pose) {
    kind_.name = "footbot";
  }
  EntityId robot() const override { return id_; }
  std::string_view robot_name() const override { return name_; }
  std::span<const double> start_pose() const override { return pose_; }
  const KindInfo& kind() const override { return kind_; }
  std::size_t sensor(std::string_view name, std::string_view type) const override {
    for (std::size_t i = 0; i < sensors_.size(); ++i)
      if (sensors_[i].name == name) return i;
    throw SetupError("no sensor");
  }
  std::size_t actuator(std::string_view name, std::string_view type) const override {
    for (std::size_t i = 0; i < actuators_.size(); ++i)
      if (actuators_[i].name == name) return i;
    throw SetupError("no actuator");
  }
  std::optional<std::size_t> find_sensor_type(std::string_view type) const override {
    for (std::size_t i = 0; i < sensors_.size(); ++i)
      if (sensors_[i].type == type) return i;
    return std::nullopt;
  }
  std::optional<std::size_t> find_actuator_type(std::string_view type) const override {
    for (std::size_t i = 0; i < actuators_.size(); ++i)
      if (actuators_[i].type == type) return i;
    return std::nullopt;
  }
  std::span<const SensorView> sensors() const override { return sensors_; }
  std::span<const ActuatorView> actuators() const override { return actuators_; }

 private:
  std::vector<SensorView> sensors_;
  std::vector<ActuatorView> actuators_;
  KindInfo kind_;
  EntityId id_;
  std::string name_;
  std::span<const double> pose_;
};

/// Writes `text` to a fresh file under the test's temporary folder; returns its path.
inline std::string write_script(const std::string& text, const std::string& name = "robot.lua") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(FLEETSIM_BINARY_DIR) / "test-output" /
                              "lua-unit" /
                              (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

/// One robot driven by a Lua script. Parts are listed by interface in `sensors`/`actuators`
/// (a subset of the foot-bot's, in that order).
class LuaRobot {
 public:
  explicit LuaRobot(std::vector<std::string> sensors = {"proximity", "collision", "positioning",
                                                        "range_and_bearing",
                                                        "colored_blob_omnidirectional_camera"},
                    std::vector<std::string> actuators = {"differential_drive", "leds",
                                                          "range_and_bearing"},
                    EntityId id = 7, std::size_t memory_limit = LuaController::kDefaultMemoryLimit)
      : sensor_types_(std::move(sensors)),
        actuator_types_(std::move(actuators)),
        id_(id),
        controller_([this](bool error, std::string_view,
                           std::string_view text) { (error ? errors : lines).emplace_back(text); },
                    memory_limit) {}

  /// Writes the script and runs the controller's init (throws what init throws).
  void load(const std::string& text, const std::string& name = "robot.lua") {
    path = write_script(text, name);
    init_path(path);
  }
  /// As the engine's setup gives them: the parts' constant fields (ray angles, axle length),
  /// the robot's name (none in the check made at load, id kNoEntity) and where it starts.
  void init_path(const std::string& p) {
    std::vector<SensorView> s;
    for (const auto& t : sensor_types_) {
      s.push_back({t, t});
      if (t == "proximity") s.back().angles = parts.proximity_angles;
      if (t == "light") s.back().angles = parts.light_angles;
      if (t == "motor_ground" || t == "base_ground") s.back().directions = parts.ground_offsets;
    }
    std::vector<ActuatorView> a;
    for (const auto& t : actuator_types_) {
      a.push_back({t, t});
      if (t == "differential_drive") a.back().constants = parts.wheel_constants;
    }
    const bool check = id_ == kNoEntity;
    FakeSetup setup(s, a, id_, check ? "" : robot_name,
                    check ? std::span<const double>() : std::span<const double>(parts.pose));
    controller_.init(Params({{"script", p}}), setup);
  }

  /// One tick: fills the views from `parts` and steps the controller.
  void step() {
    std::vector<SensorView> s;
    for (const auto& t : sensor_types_) s.push_back(sensor_view(t));
    std::vector<ActuatorView> a;
    for (const auto& t : actuator_types_) a.push_back(actuator_view(t));
    RobotIO io;
    io.id = id_;
    io.tick = ++tick;
    io.dt_s = 0.1;
    io.sensors = s;
    io.actuators = a;
    io.rng = CounterRng(seed, id_, tick, RandomStream::kController);
    controller_.step(io);
  }

  LuaController& controller() { return controller_; }

  FootbotParts parts;
  std::vector<std::string> lines, errors;
  std::string path;
  std::string robot_name;  ///< robot.id; "" gives the id's number
  Tick tick = 0;
  std::uint64_t seed = 1;

 private:
  SensorView sensor_view(const std::string& type) {
    SensorView v{type, type};
    if (type == "proximity") {
      v.values = parts.proximity;
      v.angles = parts.proximity_angles;
    } else if (type == "collision") {
      v.angles = parts.contact_angles;
      v.scalar = parts.realization;
    } else if (type == "positioning") {
      v.reals = parts.pose;
    } else if (type == "range_and_bearing") {
      for (std::size_t i = 0; i < parts.messages.size(); ++i)
        parts.messages[i].data = parts.payloads[i];
      v.messages = parts.messages;
    } else if (type == "colored_blob_omnidirectional_camera") {
      v.blobs = parts.blobs;
      v.enabled = &parts.camera_on;
    } else if (type == "light") {
      v.values = parts.light;
      v.angles = parts.light_angles;
    } else if (type == "motor_ground" || type == "base_ground") {
      v.values = parts.ground;
      v.directions = parts.ground_offsets;
    }
    return v;
  }
  ActuatorView actuator_view(const std::string& type) {
    ActuatorView v{type, type};
    if (type == "differential_drive") {
      v.values = parts.wheels;
      v.constants = parts.wheel_constants;
    } else if (type == "leds") {
      v.colors = parts.leds;
    } else if (type == "range_and_bearing") {
      v.data = parts.rab_out;
    }
    return v;
  }

  std::vector<std::string> sensor_types_, actuator_types_;
  EntityId id_;
  LuaController controller_;
};

}  // namespace fleetsim::lua::test
