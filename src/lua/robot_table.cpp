#include "lua/robot_table.hpp"

#include "lua/script.hpp"

#include <lua.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/named_colors.hpp"

namespace fleetsim::lua {

namespace {

// ARGoS's Lua API speaks centimetres where fleetsim's parts speak metres.
constexpr double kCmPerM = 100.0;

// Field names the refresh writes, interned once per state (slot keys + k).
enum Key : int {
  kValue,
  kAngle,
  kRange,
  kHorizontalBearing,
  kVerticalBearing,
  kData,
  kDistance,
  kColor,
  kRed,
  kGreen,
  kBlue,
  kX,
  kY,
  kZ,
  kW,
  kRealization,
  kAxisLength,
  kVelocityLeft,
  kVelocityRight,
  kDistanceLeft,
  kDistanceRight,
  kSpeed,
  kType,
  kRotation,
  kKeyCount
};
constexpr const char* kKeyNames[kKeyCount] = {"value",
                                              "angle",
                                              "range",
                                              "horizontal_bearing",
                                              "vertical_bearing",
                                              "data",
                                              "distance",
                                              "color",
                                              "red",
                                              "green",
                                              "blue",
                                              "x",
                                              "y",
                                              "z",
                                              "w",
                                              "realization",
                                              "axis_length",
                                              "velocity_left",
                                              "velocity_right",
                                              "distance_left",
                                              "distance_right",
                                              "speed",
                                              "type",
                                              "rotation"};

/// "file:line:" of the Lua code calling the running C function (full path), for errors found
/// later than the call.
std::string call_site(lua_State* L) {
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar)) return "";
  lua_getinfo(L, "Sl", &ar);
  if (ar.currentline <= 0) return "";
  const std::string file = ar.source && ar.source[0] == '@' ? ar.source + 1 : ar.short_src;
  return file + ":" + std::to_string(ar.currentline) + ":";
}

/// A colour from the arguments at `first`: one string (a name or "r,g,b") or three numbers.
Color check_color(lua_State* L, int first, const char* function) {
  const int given = lua_gettop(L) - first + 1;
  if (given == 1) {
    const char* text = lua_tostring(L, first);
    if (!text || lua_type(L, first) != LUA_TSTRING)
      luaL_error(L, "%s: expected a colour name or three numbers (red, green, blue)", function);
    if (auto c = parse_color(text)) return *c;
    luaL_error(L,
               "%s: unknown colour '%s' (expected a name such as red, green, blue, yellow, "
               "orange, white, black, gray50, or \"r,g,b\")",
               function, text);
  }
  int rgb[3];
  for (int k = 0; k < 3; ++k) {
    const lua_Number v = luaL_checknumber(L, first + k);
    if (!(v >= 0 && v < 256))
      luaL_error(L, "%s: colour component %f is out of range (expected 0 to 255)", function, v);
    rgb[k] = static_cast<int>(v);
  }
  return Color{static_cast<std::uint8_t>(rgb[0]), static_cast<std::uint8_t>(rgb[1]),
               static_cast<std::uint8_t>(rgb[2]), 255};
}

/// An index argument, 1-based, as a 0-based value (bounds are checked by the caller).
lua_Integer check_index(lua_State* L, int arg) {
  const lua_Number v = luaL_checknumber(L, arg);
  return static_cast<lua_Integer>(std::floor(v)) - 1;
}

/// A byte argument: a number in [0, 255], truncated.
std::uint8_t check_byte(lua_State* L, int arg, const char* function) {
  const lua_Number v = luaL_checknumber(L, arg);
  if (!(v >= 0 && v < 256)) luaL_error(L, "%s: %f is not a byte (expected 0 to 255)", function, v);
  return static_cast<std::uint8_t>(v);
}

// How far ahead of the element being written the next ones are fetched into the cache.
constexpr std::size_t kFetchAhead = 4;

/// Asks the processor to fetch `lines` cache lines from `object` (a pooled table: its header,
/// and most often its slots and its sub-table, which were made just after it and which the C
/// library's allocator then hands out next to it). A hint only: nothing is read or written.
void prefetch(const std::vector<const void*>& objects, std::size_t i, int lines) {
  if (i >= objects.size()) return;
  const char* p = static_cast<const char*>(objects[i]);
  for (int k = 0; k < lines; ++k) __builtin_prefetch(p + 64 * k);
}

// The pooled tables of the arrays robot.<array>[i]; `size` is the data's length (messages).
void make_rab_message(lua_State* L, int size) {
  lua_createtable(L, 0, 4);
  lua_createtable(L, size, 0);
  lua_setfield(L, -2, "data");
}

void make_scan_reading(lua_State* L, int) {
  lua_createtable(L, 0, 2);
}

void make_blob(lua_State* L, int) {
  lua_createtable(L, 0, 3);
  lua_createtable(L, 0, 3);
  lua_setfield(L, -2, "color");
}

// robot.positioning.orientation: a table {w, x, y, z} (a unit quaternion; fleetsim's robots
// turn about z only) with ARGoS's conversion methods.
int orientation_angle_axis(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "w");
  lua_getfield(L, 1, "x");
  lua_getfield(L, 1, "y");
  lua_getfield(L, 1, "z");
  const double w = lua_tonumber(L, -4), x = lua_tonumber(L, -3), y = lua_tonumber(L, -2),
               z = lua_tonumber(L, -1);
  lua_pop(L, 4);
  const double len2 = x * x + y * y + z * z;
  double angle = 0, ax = 1, ay = 0, az = 0;
  if (len2 > 0) {
    angle = 2 * std::acos(std::clamp(w, -1.0, 1.0));
    const double inv = 1 / std::sqrt(len2);
    ax = x * inv, ay = y * inv, az = z * inv;
  }
  lua_pushnumber(L, angle);
  lua_createtable(L, 0, 3);
  lua_pushnumber(L, ax);
  lua_setfield(L, -2, "x");
  lua_pushnumber(L, ay);
  lua_setfield(L, -2, "y");
  lua_pushnumber(L, az);
  lua_setfield(L, -2, "z");
  return 2;
}

int orientation_euler_angles(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "w");
  lua_getfield(L, 1, "x");
  lua_getfield(L, 1, "y");
  lua_getfield(L, 1, "z");
  const double w = lua_tonumber(L, -4), x = lua_tonumber(L, -3), y = lua_tonumber(L, -2),
               z = lua_tonumber(L, -1);
  lua_pop(L, 4);
  // Z, Y, X (yaw, pitch, roll), as ARGoS's CQuaternion::ToEulerAngles returns them.
  const double yaw = std::atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
  const double pitch = std::asin(std::clamp(2 * (w * y - z * x), -1.0, 1.0));
  const double roll = std::atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
  lua_pushnumber(L, yaw);
  lua_pushnumber(L, pitch);
  lua_pushnumber(L, roll);
  return 3;
}

constexpr ArgosTable kArgosTables[] = {
    {"wheels", "wheels (a differential_drive actuator)", nullptr, "differential_drive"},
    {"leds", "LEDs (a leds actuator)", nullptr, "leds"},
    {"proximity", "proximity sensor", "proximity"},
    {"positioning", "positioning sensor", "positioning"},
    {"range_and_bearing", "range-and-bearing device", "range_and_bearing", "range_and_bearing"},
    {"colored_blob_omnidirectional_camera", "omnidirectional camera",
     "colored_blob_omnidirectional_camera"},
    {"quadrotor", "quadrotor (a quadrotor_speed actuator)", nullptr, "quadrotor_speed"},
    {"light", "light sensor", "light"},
    {"motor_ground", "motor ground sensor", "motor_ground"},
    {"base_ground", "base ground sensor", "base_ground"},
    {"ground", "ground sensor"},
    {"gripper", "gripper (a footbot_gripper actuator)", nullptr, "gripper"},
    {"turret", "turret (a footbot_turret actuator or footbot_turret_encoder sensor)",
     "turret_encoder", "turret"},
    {"distance_scanner", "distance scanner (a footbot_distance_scanner sensor or actuator)",
     "distance_scanner", "distance_scanner"},
    {"colored_blob_perspective_camera", "perspective camera"},
    {"battery", "battery sensor"},
};

}  // namespace

std::span<const ArgosTable> argos_tables() {
  return kArgosTables;
}

std::string RobotTable::absent_table(std::string_view name) const {
  for (const ArgosTable& t : kArgosTables) {
    if (t.name != name) continue;
    lua_State* L = state_;
    // Present for this robot (the same tables whatever the script did to `robot`)?
    if (t.in_fleetsim()) {
      const int robot = slot_.keys + kKeyCount;
      lua_pushstring(L, t.name);
      const bool has = lua_rawget(L, robot) != LUA_TNIL;
      lua_pop(L, 1);
      if (has) return "";
    }
    return "robot." + std::string(name) + ": kind '" + kind_name_ + "' has no " + t.device +
           (t.in_fleetsim() ? "" : ", and fleetsim has none yet") + " (" + parts_list_ +
           "); see docs/lua-api.md";
  }
  return "";
}

void write_log_line(bool error, std::string_view robot, std::string_view text) {
  std::string line;
  line.reserve(robot.size() + text.size() + 4);
  line.append("[").append(robot).append("] ").append(text).append("\n");
  std::FILE* out = error ? stderr : stdout;
  std::fwrite(line.data(), 1, line.size(), out);
  if (error) std::fflush(out);
}

RobotTable::RobotTable(lua_State* state, const ControllerSetup& setup, std::string robot_name,
                       LogSink log)
    : state_(state), name_(std::move(robot_name)), log_(std::move(log)) {
  lua_State* L = state_;
  if (!log_) log_ = write_log_line;
  add_key_slots();

  // robot = { id = ..., random = {...} }
  lua_newtable(L);
  const int robot = lua_gettop(L);
  lua_pushstring(L, name_.c_str());
  lua_setfield(L, robot, "id");
  lua_newtable(L);
  add_function(-1, "uniform", random_uniform);
  add_function(-1, "uniform_int", random_uniform_int);
  add_function(-1, "bernoulli", random_bernoulli);
  add_function(-1, "gaussian", random_gaussian);
  add_function(-1, "exponential", random_exponential);
  add_function(-1, "poisson", random_poisson);
  lua_setfield(L, robot, "random");
  // math.random draws from the same stream (Lua's own generator is seeded from the clock);
  // math.randomseed does nothing: a run's randomness comes from the experiment's seed.
  lua_getglobal(L, "math");
  add_function(-1, "random", math_random);
  add_function(-1, "randomseed", math_randomseed);
  lua_pop(L, 1);
  // pairs() in a fixed order (Lua hashes strings with a per-state random seed).
  lua_pushcfunction(L, ordered_pairs);
  lua_setglobal(L, "pairs");

  const auto sensors = setup.sensors();
  for (std::size_t i = 0; i < sensors.size(); ++i) build_sensor(sensors[i], i);
  const auto actuators = setup.actuators();
  for (std::size_t i = 0; i < actuators.size(); ++i) build_actuator(actuators[i].type, i);
  kind_name_ = setup.kind().name;
  auto list = [](auto views) {
    std::string s;
    for (const auto& v : views) s += (s.empty() ? "" : ", ") + std::string(v.name);
    return s.empty() ? std::string("none") : s;
  };
  parts_list_ = "its sensors: " + list(sensors) + "; its actuators: " + list(actuators);

  // robot.knowledge: the experiment's knowledge fields, read and written through a metatable
  // (straight into the robot's columns: nothing to copy in or out).
  const auto fields = setup.knowledge_fields();
  if (!fields.empty()) {
    knowledge_names_.assign(fields.begin(), fields.end());
    lua_newtable(L);
    lua_createtable(L, 0, 2);
    add_function(-1, "__index", knowledge_get);
    add_function(-1, "__newindex", knowledge_set);
    lua_setmetatable(L, -2);
    lua_setfield(L, robot, "knowledge");
  }

  // robot.tag() and robot.set_tag(text): the robot's tag (the playground's `tag` knowledge).
  add_function(robot, "tag", tag_get);
  add_function(robot, "set_tag", tag_set);

  // robot.layer(name[, type]): the experiment's environment layers (read only).
  const auto layers = setup.layer_names();
  if (!layers.empty()) {
    layer_names_.assign(layers.begin(), layers.end());
    add_function(robot, "layer", layer_get);
  }

  // robot.collision.action: the DEECo action echoed with its degree of realization (a kind
  // with deeco_wheels; "stay" until the first action).
  if (collision_ && deeco_wheels_) {
    lua_createtable(L, 0, 4);
    slot_.action = lua_gettop(L);
    for (int k : {kSpeed, kAngle, kRealization}) set_number(slot_.action, k, 0);
    lua_pushvalue(L, slot_.keys + kType);
    lua_pushstring(L, to_string(DeecoActionType::kStay));
    lua_rawset(L, slot_.action);
    lua_pushvalue(L, slot_.action);
    lua_setfield(L, slot_.collision, "action");
  }

  // robot.range_and_bearing is one table for the sensor (its array) and the actuator (its
  // functions), as in ARGoS.
  if (rab_in_ || rab_out_) {
    slot_.rab = new_slot_table("range_and_bearing", robot);
    if (rab_in_) {
      lua_newtable(L);
      slot_.rab_pool = lua_gettop(L);
    }
    if (rab_out_) {
      add_function(slot_.rab, "set_data", set_data);
      add_function(slot_.rab, "clear_data", clear_data);
    }
  }

  // robot.turret likewise: the encoder's rotation and the actuator's functions.
  if (turret_in_ || turret_out_) {
    slot_.turret = new_slot_table("turret", robot);
    if (turret_in_) set_number(slot_.turret, kRotation, 0);
    if (turret_out_) {
      add_function(slot_.turret, "set_rotation", turret_set_rotation);
      add_function(slot_.turret, "set_rotation_speed", turret_set_rotation_speed);
      add_function(slot_.turret, "set_position_control_mode", turret_position_mode);
      add_function(slot_.turret, "set_speed_control_mode", turret_speed_mode);
      add_function(slot_.turret, "set_passive_mode", turret_passive_mode);
    }
  }

  // robot.distance_scanner likewise: the sensor's short_range and long_range arrays, the
  // actuator's functions.
  if (scanner_in_ || scanner_out_) {
    slot_.scanner = new_slot_table("distance_scanner", robot);
    if (scanner_in_) {
      slot_.scanner_short = new_slot_table("short_range", slot_.scanner);
      lua_newtable(L);
      slot_.scanner_short_pool = lua_gettop(L);
      slot_.scanner_long = new_slot_table("long_range", slot_.scanner);
      lua_newtable(L);
      slot_.scanner_long_pool = lua_gettop(L);
    }
    if (scanner_out_) {
      add_function(slot_.scanner, "enable", scanner_enable);
      add_function(slot_.scanner, "disable", scanner_disable);
      add_function(slot_.scanner, "set_angle", scanner_set_angle);
      add_function(slot_.scanner, "set_rpm", scanner_set_rpm);
    }
  }

  lua_pushvalue(L, robot);
  lua_setglobal(L, "robot");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, log_info, 1);
  lua_setglobal(L, "log");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, log_error, 1);
  lua_setglobal(L, "logerr");
  show_start(setup);
  // Room for what a refresh and a call push above the slots (Lua keeps it: the base level's
  // limit only grows).
  luaL_checkstack(L, 24, "robot table");
}

void RobotTable::show_start(const ControllerSetup& setup) {
  // As ARGoS, the script's top level and init() see the readings of before the first step:
  // the rays with their angles and nothing sensed, the pose the robot starts at, the wheels
  // still. The rays' tables are the topmost slots (refresh_proximity), so this goes last.
  if (positioning_ && setup.start_pose().size() >= 3) {
    SensorView start;
    start.reals = setup.start_pose();
    refresh_positioning(start);
  }
  if (wheels_) {
    for (int k : {kVelocityLeft, kVelocityRight, kDistanceLeft, kDistanceRight})
      set_number(slot_.wheels, k, 0);
    const ActuatorView& w = setup.actuators()[*wheels_];
    if (!w.constants.empty()) {
      axis_length_shown_ = w.constants[0];
      set_number(slot_.wheels, kAxisLength, axis_length_shown_ * kCmPerM);
    }
  }
  if (proximity_) {
    SensorView start = setup.sensors()[*proximity_];
    const std::vector<float> nothing(start.angles.size(), 0.0f);
    start.values = nothing;
    refresh_proximity(start);
  }
}

void RobotTable::add_key_slots() {
  lua_State* L = state_;
  luaL_checkstack(L, kKeyCount + 16, "robot table");
  slot_.keys = lua_gettop(L) + 1;
  for (const char* k : kKeyNames) lua_pushstring(L, k);
}

void RobotTable::add_function(int table, const char* name, int (*f)(lua_State*)) {
  lua_State* L = state_;
  const int t = lua_absindex(L, table);
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, f, 1);
  lua_setfield(L, t, name);
}

int RobotTable::new_slot_table(const char* field_in_robot, int robot) {
  lua_State* L = state_;
  luaL_checkstack(L, 8, "robot table");  // the table, and what its builder pushes above it
  lua_newtable(L);
  const int slot = lua_gettop(L);
  lua_pushvalue(L, slot);
  lua_setfield(L, robot, field_in_robot);
  return slot;
}

int RobotTable::build_readings(const char* field, int robot, const SensorView& view) {
  lua_State* L = state_;
  const int t = new_slot_table(field, robot);
  const std::size_t n = std::max(view.angles.size(), view.directions.size());
  for (std::size_t i = 0; i < n; ++i) {
    lua_createtable(L, 0, 2);
    const int e = lua_gettop(L);
    set_number(e, kValue, 0);
    if (i < view.angles.size()) {
      set_number(e, kAngle, view.angles[i]);
    } else {
      lua_createtable(L, 0, 2);
      lua_pushnumber(L, view.directions[i].x * kCmPerM);
      lua_setfield(L, -2, "x");
      lua_pushnumber(L, view.directions[i].y * kCmPerM);
      lua_setfield(L, -2, "y");
      lua_setfield(L, e, "offset");
    }
    lua_rawseti(L, t, static_cast<lua_Integer>(i + 1));
  }
  return t;
}

void RobotTable::refresh_readings(int table, const SensorView& v) {
  lua_State* L = state_;
  for (std::size_t i = 0; i < v.values.size(); ++i) {
    if (lua_rawgeti(L, table, static_cast<lua_Integer>(i + 1)) == LUA_TTABLE)
      set_number(lua_gettop(L), kValue, v.values[i]);
    lua_pop(L, 1);
  }
}

void RobotTable::build_sensor(const SensorView& view, std::size_t index) {
  lua_State* L = state_;
  const std::string_view type = view.type;
  const int robot = slot_.keys + kKeyCount;  // the robot table is pushed right after the keys
  if (type == "light" && !light_) {
    light_ = index;
    slot_.light = build_readings("light", robot, view);
  } else if (type == "motor_ground" && !motor_ground_) {
    motor_ground_ = index;
    slot_.motor_ground = build_readings("motor_ground", robot, view);
  } else if (type == "base_ground" && !base_ground_) {
    base_ground_ = index;
    slot_.base_ground = build_readings("base_ground", robot, view);
  } else if (type == "proximity" && !proximity_) {
    proximity_ = index;
    slot_.proximity = new_slot_table("proximity", robot);
  } else if (type == "collision" && !collision_) {
    collision_ = index;
    slot_.collision = new_slot_table("collision", robot);
    set_number(slot_.collision, kRealization, 1.0);
  } else if (type == "positioning" && !positioning_) {
    positioning_ = index;
    slot_.positioning = new_slot_table("positioning", robot);
    lua_createtable(L, 0, 3);
    slot_.position = lua_gettop(L);
    for (int k : {kX, kY, kZ}) set_number(slot_.position, k, 0);
    lua_pushvalue(L, slot_.position);
    lua_setfield(L, slot_.positioning, "position");
    lua_createtable(L, 0, 4);
    slot_.orientation = lua_gettop(L);
    set_number(slot_.orientation, kW, 1);
    for (int k : {kX, kY, kZ}) set_number(slot_.orientation, k, 0);
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, orientation_angle_axis);
    lua_setfield(L, -2, "toangleaxis");
    lua_pushcfunction(L, orientation_euler_angles);
    lua_setfield(L, -2, "toeulerangles");
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, slot_.orientation);
    lua_pushvalue(L, slot_.orientation);
    lua_setfield(L, slot_.positioning, "orientation");
  } else if (type == "range_and_bearing" && !rab_in_) {
    rab_in_ = index;  // the table is made after the actuators (they share it)
  } else if (type == "turret_encoder" && !turret_in_) {
    turret_in_ = index;  // likewise
  } else if (type == "distance_scanner" && !scanner_in_) {
    scanner_in_ = index;  // likewise
  } else if (type == "colored_blob_omnidirectional_camera" && !camera_) {
    camera_ = index;
    slot_.camera = new_slot_table("colored_blob_omnidirectional_camera", robot);
    add_function(slot_.camera, "enable", camera_enable);
    add_function(slot_.camera, "disable", camera_disable);
    lua_newtable(L);
    slot_.camera_pool = lua_gettop(L);
  }
}

void RobotTable::build_actuator(std::string_view type, std::size_t index) {
  const int robot = slot_.keys + kKeyCount;
  if (type == "differential_drive" && !wheels_) {
    wheels_ = index;
    slot_.wheels = new_slot_table("wheels", robot);
    add_function(slot_.wheels, "set_velocity", set_velocity);
  } else if (type == "leds" && !leds_) {
    leds_ = index;
    const int t = new_slot_table("leds", robot);
    add_function(t, "set_all_colors", set_all_colors);
    add_function(t, "set_single_color", set_single_color);
  } else if (type == "range_and_bearing" && !rab_out_) {
    rab_out_ = index;
  } else if (type == "gripper" && !gripper_) {
    gripper_ = index;
    const int t = new_slot_table("gripper", robot);
    add_function(t, "lock_positive", gripper_lock_positive);
    add_function(t, "lock_negative", gripper_lock_negative);
    add_function(t, "unlock", gripper_unlock);
  } else if (type == "turret" && !turret_out_) {
    turret_out_ = index;
  } else if (type == "distance_scanner" && !scanner_out_) {
    scanner_out_ = index;
  } else if (type == "deeco_wheels" && !deeco_wheels_) {
    deeco_wheels_ = index;
    const int t = new_slot_table("deeco_wheels", robot);
    add_function(t, "set_action", set_action);
  } else if (type == "quadrotor_speed" && !quadrotor_) {
    quadrotor_ = index;
    const int t = new_slot_table("quadrotor", robot);
    add_function(t, "set_linear_velocity", set_linear_velocity);
    add_function(t, "set_rotational_speed", set_rotational_speed);
  }
}

// ---------------------------------------------------------------------------------------------
// Refreshing the tables every tick

void RobotTable::new_field_table(int table, int key, std::size_t size) {
  lua_State* L = state_;
  lua_pop(L, 1);
  lua_createtable(L, static_cast<int>(key == kData ? size : 0),
                  static_cast<int>(key == kData ? 0 : size));
  lua_pushvalue(L, slot_.keys + key);
  lua_pushvalue(L, -2);
  lua_rawset(L, table);
}

void RobotTable::set_number(int table, int key, double value) {
  lua_State* L = state_;
  lua_pushvalue(L, slot_.keys + key);
  lua_pushnumber(L, value);
  lua_rawset(L, table);
}

void RobotTable::begin_step(RobotIO& io) {
  io_ = &io;
  // The wheels' speeds of the last tick, before init()'s commands take effect (ARGoS reads
  // them in its sensors' update, before the step: 0 at the first step whatever init() set).
  if (wheels_) refresh_wheels(io);
  if (!staged_.empty()) {
    auto staged = std::move(staged_);
    staged_.clear();
    for (auto& apply : staged) apply(*this, io);
  }
  if (proximity_) refresh_proximity(io.sensors[*proximity_]);
  if (collision_) refresh_collision(io.sensors[*collision_]);
  if (positioning_) refresh_positioning(io.sensors[*positioning_]);
  if (rab_in_) refresh_rab(io.sensors[*rab_in_]);
  if (camera_) refresh_camera(io.sensors[*camera_]);
  if (light_) refresh_readings(slot_.light, io.sensors[*light_]);
  if (motor_ground_) refresh_readings(slot_.motor_ground, io.sensors[*motor_ground_]);
  if (base_ground_) refresh_readings(slot_.base_ground, io.sensors[*base_ground_]);
  if (scanner_in_) refresh_scanner(io.sensors[*scanner_in_]);
  if (turret_in_) {
    const SensorView& v = io.sensors[*turret_in_];
    set_number(slot_.turret, kRotation, v.reals.empty() ? 0.0 : v.reals[0]);
  }
}

void RobotTable::end_step() {
  io_ = nullptr;
}

void RobotTable::resize_array(int array, int pool, std::size_t n, std::size_t& shown,
                              void (*make)(lua_State*, int), int size,
                              std::vector<const void*>* made) {
  lua_State* L = state_;
  if (n == shown) return;
  const auto pooled = static_cast<std::size_t>(lua_rawlen(L, pool));
  for (std::size_t i = pooled + 1; i <= n; ++i) {
    make(L, size);
    if (made) made->push_back(lua_topointer(L, -1));
    lua_rawseti(L, pool, static_cast<lua_Integer>(i));
  }
  for (std::size_t i = shown + 1; i <= n; ++i) {
    lua_rawgeti(L, pool, static_cast<lua_Integer>(i));
    lua_rawseti(L, array, static_cast<lua_Integer>(i));
  }
  for (std::size_t i = n + 1; i <= shown; ++i) {
    lua_pushnil(L);
    lua_rawseti(L, array, static_cast<lua_Integer>(i));
  }
  shown = n;
}

void RobotTable::refresh_proximity(const SensorView& v) {
  lua_State* L = state_;
  const int t = slot_.proximity;
  const std::size_t n = v.values.size();
  if (n != proximity_shown_) {
    // The rays' tables: in robot.proximity, and at slots on top of the stack (the topmost
    // persistent slots: made at the first step, when the ray count is known), so a refresh
    // reaches each without a table lookup.
    if (ray_slot0_ > 0) lua_settop(L, ray_slot0_ - 1);
    luaL_checkstack(L, static_cast<int>(n) + 16, "proximity rays");
    ray_slot0_ = lua_gettop(L) + 1;
    for (std::size_t i = 1; i <= n; ++i) {
      if (i > proximity_shown_) {
        lua_createtable(L, 0, 2);
        lua_pushvalue(L, -1);
        lua_rawseti(L, t, static_cast<lua_Integer>(i));
      } else {
        lua_rawgeti(L, t, static_cast<lua_Integer>(i));
      }
    }
    for (std::size_t i = n + 1; i <= proximity_shown_; ++i) {
      lua_pushnil(L);
      lua_rawseti(L, t, static_cast<lua_Integer>(i));
    }
    proximity_shown_ = n;
    proximity_angles_.assign(n, NAN);  // every angle written below
    ray_tables_.clear();
    for (std::size_t i = 0; i < n; ++i)
      ray_tables_.push_back(lua_topointer(L, ray_slot0_ + static_cast<int>(i)));
  }
  const int value = slot_.keys + kValue;
  for (std::size_t i = 0; i < n && i < kFetchAhead; ++i) prefetch(ray_tables_, i, 2);
  // As ARGoS: reading i goes into whatever table robot.proximity[i] holds now (a script that
  // sorted the array finds the values in place order, the angles where they were), and
  // nowhere when that is no table.
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kFetchAhead < n) prefetch(ray_tables_, i + kFetchAhead, 2);
    if (lua_rawgeti(L, t, static_cast<lua_Integer>(i + 1)) == LUA_TTABLE) {
      lua_pushvalue(L, value);
      lua_pushnumber(L, v.values[i]);
      lua_rawset(L, -3);
    }
    lua_pop(L, 1);
  }
  // Angles are constant for a fixed sensor: written again only when they change.
  if (v.angles.size() == n &&
      !std::equal(v.angles.begin(), v.angles.end(), proximity_angles_.begin())) {
    for (std::size_t i = 0; i < n; ++i) {
      proximity_angles_[i] = v.angles[i];
      set_number(ray_slot0_ + static_cast<int>(i), kAngle, v.angles[i]);
    }
  }
}

void RobotTable::refresh_collision(const SensorView& v) {
  lua_State* L = state_;
  const int t = slot_.collision;
  set_number(t, kRealization, v.scalar);
  const std::size_t n = v.angles.size();
  if (n != collision_shown_) {
    for (std::size_t i = collision_shown_ + 1; i <= n; ++i) {
      lua_createtable(L, 0, 1);
      lua_rawseti(L, t, static_cast<lua_Integer>(i));
    }
    for (std::size_t i = n + 1; i <= collision_shown_; ++i) {
      lua_pushnil(L);
      lua_rawseti(L, t, static_cast<lua_Integer>(i));
    }
    collision_shown_ = n;
  }
  for (std::size_t i = 0; i < n; ++i) {
    lua_rawgeti(L, t, static_cast<lua_Integer>(i + 1));
    set_number(lua_gettop(L), kAngle, v.angles[i]);
    lua_pop(L, 1);
  }
  if (slot_.action && v.reals.size() >= 3) {
    set_number(slot_.action, kSpeed, v.reals[0]);
    set_number(slot_.action, kAngle, v.reals[1]);
    set_number(slot_.action, kRealization, v.scalar);
    const double code = v.reals[2];
    const auto type = code >= 0 && code <= 3 ? static_cast<DeecoActionType>(static_cast<int>(code))
                                             : DeecoActionType::kStay;
    lua_pushvalue(L, slot_.keys + kType);
    lua_pushstring(L, to_string(type));
    lua_rawset(L, slot_.action);
  }
}

void RobotTable::refresh_positioning(const SensorView& v) {
  if (v.reals.size() < 3) return;
  const double x = v.reals[0], y = v.reals[1], theta = v.reals[2];
  set_number(slot_.position, kX, x);
  set_number(slot_.position, kY, y);
  if (v.reals.size() > 3) set_number(slot_.position, kZ, v.reals[3]);  // a flyer's altitude
  set_number(slot_.orientation, kW, std::cos(theta / 2));
  set_number(slot_.orientation, kZ, std::sin(theta / 2));
}

void RobotTable::refresh_rab(const SensorView& v) {
  lua_State* L = state_;
  const std::size_t n = v.messages.size();
  resize_array(slot_.rab, slot_.rab_pool, n, rab_shown_, make_rab_message,
               n ? static_cast<int>(v.messages[0].data.size()) : 0, &rab_tables_);
  for (std::size_t i = 0; i < kFetchAhead && i < n; ++i) prefetch(rab_tables_, i, 4);
  for (std::size_t i = 0; i < n; ++i) {
    const RabMessage& m = v.messages[i];
    if (i + kFetchAhead < n) prefetch(rab_tables_, i + kFetchAhead, 4);
    lua_rawgeti(L, slot_.rab_pool, static_cast<lua_Integer>(i + 1));
    const int e = lua_gettop(L);
    set_number(e, kRange, m.range_m * kCmPerM);
    set_number(e, kHorizontalBearing, m.horizontal_bearing);
    set_number(e, kVerticalBearing, m.vertical_bearing);
    lua_pushvalue(L, slot_.keys + kData);
    if (lua_rawget(L, e) != LUA_TTABLE) new_field_table(e, kData, m.data.size());
    const int d = lua_gettop(L);
    const auto before = static_cast<std::size_t>(lua_rawlen(L, d));
    for (std::size_t j = 0; j < m.data.size(); ++j) {
      lua_pushinteger(L, m.data[j]);
      lua_rawseti(L, d, static_cast<lua_Integer>(j + 1));
    }
    for (std::size_t j = before; j > m.data.size(); --j) {
      lua_pushnil(L);
      lua_rawseti(L, d, static_cast<lua_Integer>(j));
    }
    lua_pop(L, 2);
  }
}

void RobotTable::refresh_scanner(const SensorView& v) {
  lua_State* L = state_;
  const std::size_t n = std::min(v.values.size(), v.angles.size());
  const std::size_t shorts = std::min(n, static_cast<std::size_t>(v.scalar));
  auto fill = [&](int array, int pool, std::size_t from, std::size_t count, std::size_t& shown) {
    resize_array(array, pool, count, shown, make_scan_reading, 0);
    for (std::size_t i = 0; i < count; ++i) {
      lua_rawgeti(L, pool, static_cast<lua_Integer>(i + 1));
      const float d = v.values[from + i];
      // Centimetres, as ARGoS's; -1 (too near) and -2 (nothing) as they are.
      set_number(lua_gettop(L), kDistance, d > 0 ? d * kCmPerM : d);
      set_number(lua_gettop(L), kAngle, v.angles[from + i]);
      lua_pop(L, 1);
    }
  };
  fill(slot_.scanner_short, slot_.scanner_short_pool, 0, shorts, scanner_short_shown_);
  fill(slot_.scanner_long, slot_.scanner_long_pool, shorts, n - shorts, scanner_long_shown_);
}

void RobotTable::refresh_camera(const SensorView& v) {
  lua_State* L = state_;
  const std::size_t n = v.blobs.size();
  resize_array(slot_.camera, slot_.camera_pool, n, camera_shown_, make_blob, 0, &camera_tables_);
  for (std::size_t i = 0; i < kFetchAhead && i < n; ++i) prefetch(camera_tables_, i, 5);
  for (std::size_t i = 0; i < n; ++i) {
    const Blob& b = v.blobs[i];
    if (i + kFetchAhead < n) prefetch(camera_tables_, i + kFetchAhead, 5);
    lua_rawgeti(L, slot_.camera_pool, static_cast<lua_Integer>(i + 1));
    const int e = lua_gettop(L);
    set_number(e, kDistance, b.distance_m * kCmPerM);
    set_number(e, kAngle, b.angle);
    lua_pushvalue(L, slot_.keys + kColor);
    if (lua_rawget(L, e) != LUA_TTABLE) new_field_table(e, kColor, 3);
    const int c = lua_gettop(L);
    lua_pushvalue(L, slot_.keys + kRed);
    lua_pushinteger(L, b.color.r);
    lua_rawset(L, c);
    lua_pushvalue(L, slot_.keys + kGreen);
    lua_pushinteger(L, b.color.g);
    lua_rawset(L, c);
    lua_pushvalue(L, slot_.keys + kBlue);
    lua_pushinteger(L, b.color.b);
    lua_rawset(L, c);
    lua_pop(L, 2);
  }
}

void RobotTable::refresh_wheels(RobotIO& io) {
  const ActuatorView& w = io.actuators[*wheels_];
  if (!w.constants.empty() && w.constants[0] != axis_length_shown_) {
    axis_length_shown_ = w.constants[0];
    set_number(slot_.wheels, kAxisLength, axis_length_shown_ * kCmPerM);
  }
  if (w.values.size() < 2) return;
  // ARGoS's differential steering sensor: the speeds the wheels turn at (the last command, as
  // the actuator clamps it), cm/s, and each wheel's distance in one tick at that speed, cm (the
  // wheels turn even when the body is blocked). fleetsim has no such sensor: both come from the
  // command column, which holds the last command until the controller gives another.
  const double max = w.constants.size() > 1 ? w.constants[1] : HUGE_VAL;
  const double left = std::clamp(w.values[0], -max, max) * kCmPerM;
  const double right = std::clamp(w.values[1], -max, max) * kCmPerM;
  // Written every tick, as ARGoS's sensor writes them: a script that overwrote one sees the
  // reading again at its next step.
  set_number(slot_.wheels, kVelocityLeft, left);
  set_number(slot_.wheels, kDistanceLeft, left * io.dt_s);
  set_number(slot_.wheels, kVelocityRight, right);
  set_number(slot_.wheels, kDistanceRight, right * io.dt_s);
}

// ---------------------------------------------------------------------------------------------
// The API's C functions

RobotTable& RobotTable::self(lua_State* L) {
  return *static_cast<RobotTable*>(lua_touserdata(L, lua_upvalueindex(1)));
}

template <class Apply>
void RobotTable::stage(lua_State* L, Apply apply) {
  if (io_) {
    // In a step (the hot path): applied at once, nothing allocated.
    std::string failure;
    try {
      apply(*this, *io_);
    } catch (const std::runtime_error& e) {
      failure = e.what();
    }
    if (!failure.empty()) luaL_error(L, "%s", failure.c_str());
    return;
  }
  // Outside a step (init, reset): remember the command; its errors name the call's line.
  staged_.push_back([site = call_site(L), apply = std::move(apply)](RobotTable& t, RobotIO& io) {
    try {
      apply(t, io);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(site + " " + e.what() + " (called in init or reset)");
    }
  });
}

int RobotTable::set_velocity(lua_State* L) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 2)
    return luaL_error(L,
                      "robot.wheels.set_velocity() expects 2 arguments (left and right "
                      "wheel speeds, cm/s)");
  const double left = luaL_checknumber(L, 1) / kCmPerM, right = luaL_checknumber(L, 2) / kCmPerM;
  const std::size_t a = *t.wheels_;
  t.stage(L, [a, left, right](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.size() < 2) throw std::runtime_error("robot.wheels: the actuator has no wheels");
    v[0] = left;
    v[1] = right;
  });
  return 0;
}

int RobotTable::set_action(lua_State* L) {
  RobotTable& t = self(L);
  const int n = lua_gettop(L);
  if (n != 2 && n != 3)
    return luaL_error(L,
                      "robot.deeco_wheels.set_action() expects 2 or 3 arguments (speed, a fraction "
                      "of the kind's max_speed in [0, 1], rotation angle, radians, and optionally "
                      "a table of the actuator's extras)");
  const double speed = luaL_checknumber(L, 1), angle = luaL_checknumber(L, 2);
  if (!std::isfinite(speed) || !std::isfinite(angle))
    return luaL_error(L, "robot.deeco_wheels.set_action(): speed and angle must be finite");
  // The extras (deeco_wheels' `extras` parameter), in its order; kept when not given.
  std::vector<double> extras;
  const bool with_extras = n == 3;
  if (with_extras) {
    luaL_checktype(L, 3, LUA_TTABLE);
    const lua_Integer len = luaL_len(L, 3);
    for (lua_Integer i = 1; i <= len; ++i) {
      lua_rawgeti(L, 3, i);
      int ok = 0;
      double v =
          lua_isboolean(L, -1) ? (lua_toboolean(L, -1) ? 1.0 : 0.0) : lua_tonumberx(L, -1, &ok);
      if (lua_isboolean(L, -1)) ok = 1;
      lua_pop(L, 1);
      if (!ok || !std::isfinite(v))
        return luaL_error(L,
                          "robot.deeco_wheels.set_action(): extra %d is not a finite number or "
                          "a boolean",
                          static_cast<int>(i));
      extras.push_back(v);
    }
  }
  const std::size_t a = *t.deeco_wheels_;
  t.stage(L, [a, speed, angle, with_extras, extras](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.size() < 2) throw std::runtime_error("robot.deeco_wheels: the actuator has no command");
    if (with_extras && extras.size() != v.size() - 2)
      throw std::runtime_error("robot.deeco_wheels.set_action(): " + std::to_string(extras.size()) +
                               " extras given, the actuator has " + std::to_string(v.size() - 2) +
                               " (its `extras` parameter names them)");
    v[0] = speed;
    v[1] = angle;
    for (std::size_t k = 0; with_extras && k < extras.size(); ++k) v[2 + k] = extras[k];
  });
  return 0;
}

std::size_t RobotTable::knowledge_field(lua_State* L, int arg) const {
  const char* key = lua_tostring(L, arg);
  if (key && lua_type(L, arg) == LUA_TSTRING)
    for (std::size_t i = 0; i < knowledge_names_.size(); ++i)
      if (knowledge_names_[i] == key) return i;
  std::string fields;
  for (const auto& n : knowledge_names_) fields += (fields.empty() ? "" : ", ") + n;
  luaL_error(L, "robot.knowledge.%s: no such knowledge field (the experiment declares: %s)",
             key ? key : "?", fields.c_str());
  return 0;
}

// robot.knowledge.<field>: a number (a field of size 1) or a new table of its numbers.
int RobotTable::knowledge_get(lua_State* L) {
  RobotTable& t = self(L);
  const std::size_t f = t.knowledge_field(L, 2);
  if (!t.io_ || !t.io_->knowledge_columns)
    return luaL_error(L, "robot.knowledge.%s: knowledge is read and written in step() only",
                      t.knowledge_names_[f].c_str());
  push_knowledge(L, t.io_->knowledge(f));
  return 1;
}

// robot.tag(): the robot's tag as the tick began (a set_tag of this step shows from the next).
int RobotTable::tag_get(lua_State* L) {
  RobotTable& t = self(L);
  if (!t.io_ || !t.io_->tag) return luaL_error(L, "robot.tag(): the tag is read in step() only");
  lua_pushlstring(L, t.io_->tag->data(), t.io_->tag->size());
  return 1;
}

// robot.set_tag(text): the robot's new tag, set after the controllers' phase (the last call of
// a step wins), logged and seen by loop functions, ensembles and the next tick.
int RobotTable::tag_set(lua_State* L) {
  RobotTable& t = self(L);
  std::size_t n = 0;
  const char* text = luaL_checklstring(L, 1, &n);
  if (!t.io_ || !t.io_->tag_sink)
    return luaL_error(L, "robot.set_tag(): the tag is set in step() only");
  t.io_->set_tag(std::string(text, n));
  return 0;
}

// robot.layer(name[, type]): the robot's value of a layer this tick, as the playground's
// getInputFromSensor(name, type): type "number" (a layer of one number), "table" (a new table
// of its numbers, whatever its size), or none (a number for a layer of one, else a table).
int RobotTable::layer_get(lua_State* L) {
  RobotTable& t = self(L);
  const char* name = luaL_checkstring(L, 1);
  const char* type = luaL_optstring(L, 2, "");
  std::size_t f = 0;
  while (f < t.layer_names_.size() && t.layer_names_[f] != name) ++f;
  if (f == t.layer_names_.size()) {
    std::string names;
    for (const auto& n : t.layer_names_) names += (names.empty() ? "" : ", ") + n;
    return luaL_error(L, "robot.layer(\"%s\"): no such layer (the experiment declares: %s)", name,
                      names.c_str());
  }
  if (!t.io_ || !t.io_->layer_columns)
    return luaL_error(L, "robot.layer(\"%s\"): layers are read in step() only", name);
  const std::span<const double> v = t.io_->layer(f);
  const std::string_view ty = type;
  if (ty == "number") {
    if (v.size() != 1)
      return luaL_error(L,
                        "robot.layer(\"%s\", \"number\"): the layer gives %d numbers per robot "
                        "(expected type \"table\")",
                        name, static_cast<int>(v.size()));
    lua_pushnumber(L, v[0]);
    return 1;
  }
  if (ty == "table") {
    lua_createtable(L, static_cast<int>(v.size()), 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
      lua_pushnumber(L, v[i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  }
  if (!ty.empty())
    return luaL_error(
        L, "robot.layer(\"%s\", \"%s\"): unknown type (expected \"number\" or \"table\")", name,
        type);
  push_knowledge(L, v);
  return 1;
}

// robot.knowledge.<field> = a number (size 1) or a table of exactly `size` numbers.
int RobotTable::knowledge_set(lua_State* L) {
  RobotTable& t = self(L);
  const std::size_t f = t.knowledge_field(L, 2);
  const char* name = t.knowledge_names_[f].c_str();
  if (!t.io_ || !t.io_->knowledge_columns)
    return luaL_error(L, "robot.knowledge.%s: knowledge is read and written in step() only", name);
  const std::span<double> v = t.io_->knowledge(f);
  if (lua_type(L, 3) == LUA_TNUMBER && v.size() == 1) {
    v[0] = lua_tonumber(L, 3);
    return 0;
  }
  if (lua_type(L, 3) != LUA_TTABLE || lua_rawlen(L, 3) != v.size())
    return luaL_error(L, "robot.knowledge.%s: expected %s", name,
                      v.size() == 1
                          ? "a number"
                          : ("a table of " + std::to_string(v.size()) + " numbers").c_str());
  double values[64];
  for (std::size_t i = 0; i < v.size(); ++i) {
    lua_rawgeti(L, 3, static_cast<lua_Integer>(i + 1));
    if (lua_type(L, -1) != LUA_TNUMBER)
      return luaL_error(L, "robot.knowledge.%s[%d]: expected a number", name,
                        static_cast<int>(i + 1));
    values[i] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  std::copy(values, values + v.size(), v.begin());
  return 0;
}

int RobotTable::set_linear_velocity(lua_State* L) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 3)
    return luaL_error(L,
                      "robot.quadrotor.set_linear_velocity() expects 3 arguments (x, y, z in m/s, "
                      "world frame)");
  const double x = luaL_checknumber(L, 1), y = luaL_checknumber(L, 2), z = luaL_checknumber(L, 3);
  const std::size_t a = *t.quadrotor_;
  t.stage(L, [a, x, y, z](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.size() < 4) throw std::runtime_error("robot.quadrotor: the actuator has no velocity");
    v[0] = x;
    v[1] = y;
    v[2] = z;
  });
  return 0;
}

int RobotTable::set_rotational_speed(lua_State* L) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 1)
    return luaL_error(L, "robot.quadrotor.set_rotational_speed() expects 1 argument (rad/s)");
  const double w = luaL_checknumber(L, 1);
  const std::size_t a = *t.quadrotor_;
  t.stage(L, [a, w](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.size() < 4) throw std::runtime_error("robot.quadrotor: the actuator has no velocity");
    v[3] = w;
  });
  return 0;
}

int RobotTable::set_all_colors(lua_State* L) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 1 && lua_gettop(L) != 3)
    return luaL_error(L,
                      "robot.leds.set_all_colors() expects 1 or 3 arguments (a colour name, "
                      "or red, green, blue)");
  const Color c = check_color(L, 1, "robot.leds.set_all_colors()");
  const std::size_t a = *t.leds_;
  t.stage(L, [a, c](RobotTable&, RobotIO& io) {
    for (Color& led : io.actuators[a].colors) led = c;
  });
  return 0;
}

int RobotTable::set_single_color(lua_State* L) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 2 && lua_gettop(L) != 4)
    return luaL_error(L,
                      "robot.leds.set_single_color() expects 2 or 4 arguments (the LED's "
                      "index from 1, then a colour name, or red, green, blue)");
  const lua_Integer i = check_index(L, 1);
  const Color c = check_color(L, 2, "robot.leds.set_single_color()");
  const std::size_t a = *t.leds_;
  t.stage(L, [a, i, c](RobotTable&, RobotIO& io) {
    std::span<Color> leds = io.actuators[a].colors;
    if (i < 0 || static_cast<std::size_t>(i) >= leds.size())
      throw std::runtime_error("robot.leds.set_single_color(): LED " + std::to_string(i + 1) +
                               " does not exist (expected 1 to " + std::to_string(leds.size()) +
                               ")");
    leds[static_cast<std::size_t>(i)] = c;
  });
  return 0;
}

int RobotTable::set_data(lua_State* L) {
  RobotTable& t = self(L);
  const std::size_t a = *t.rab_out_;
  if (lua_gettop(L) == 1) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const auto n = static_cast<std::size_t>(lua_rawlen(L, 1));
    std::vector<std::uint8_t> bytes(n);
    for (std::size_t j = 0; j < n; ++j) {
      lua_rawgeti(L, 1, static_cast<lua_Integer>(j + 1));
      if (lua_type(L, -1) != LUA_TNUMBER)
        return luaL_error(L,
                          "robot.range_and_bearing.set_data(): element %d of the array is "
                          "not a number",
                          static_cast<int>(j + 1));
      bytes[j] = check_byte(L, -1, "robot.range_and_bearing.set_data()");
      lua_pop(L, 1);
    }
    t.stage(L, [a, bytes = std::move(bytes)](RobotTable&, RobotIO& io) {
      std::span<std::uint8_t> d = io.actuators[a].data;
      if (bytes.size() != d.size())
        throw std::runtime_error("robot.range_and_bearing.set_data(array) expects an array of " +
                                 std::to_string(d.size()) + " numbers (got " +
                                 std::to_string(bytes.size()) + ")");
      std::copy(bytes.begin(), bytes.end(), d.begin());
    });
    return 0;
  }
  if (lua_gettop(L) == 2) {
    const lua_Integer i = check_index(L, 1);
    const std::uint8_t byte = check_byte(L, 2, "robot.range_and_bearing.set_data()");
    t.stage(L, [a, i, byte](RobotTable&, RobotIO& io) {
      std::span<std::uint8_t> d = io.actuators[a].data;
      if (i < 0 || static_cast<std::size_t>(i) >= d.size())
        throw std::runtime_error("robot.range_and_bearing.set_data(): index " +
                                 std::to_string(i + 1) + " is out of range (expected 1 to " +
                                 std::to_string(d.size()) + ")");
      d[static_cast<std::size_t>(i)] = byte;
    });
    return 0;
  }
  return luaL_error(L,
                    "robot.range_and_bearing.set_data() expects either one argument (an "
                    "array of bytes) or two (an index from 1 and a byte)");
}

int RobotTable::clear_data(lua_State* L) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 0)
    return luaL_error(L, "robot.range_and_bearing.clear_data() expects no arguments");
  const std::size_t a = *t.rab_out_;
  t.stage(L, [a](RobotTable&, RobotIO& io) {
    for (std::uint8_t& b : io.actuators[a].data) b = 0;
  });
  return 0;
}

// robot.gripper: ARGoS's apertures (ci_footbot_gripper_actuator.cpp): pi/2 and -pi/2 lock.

int RobotTable::gripper_set(lua_State* L, const char* name, double aperture) {
  RobotTable& t = self(L);
  if (lua_gettop(L) != 0) return luaL_error(L, "robot.gripper.%s() expects no arguments", name);
  const std::size_t a = *t.gripper_;
  t.stage(L, [a, aperture](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.empty()) throw std::runtime_error("robot.gripper: the actuator has no aperture");
    v[0] = aperture;
  });
  return 0;
}
int RobotTable::gripper_lock_positive(lua_State* L) {
  return gripper_set(L, "lock_positive", kPi / 2);
}
int RobotTable::gripper_lock_negative(lua_State* L) {
  return gripper_set(L, "lock_negative", -kPi / 2);
}
int RobotTable::gripper_unlock(lua_State* L) {
  return gripper_set(L, "unlock", 0);
}

// robot.turret: ARGoS's (ci_footbot_turret_actuator.cpp, footbot_turret_default_actuator.cpp).
// The command: mode, target rotation (rad), target speed (rad/s).

int RobotTable::turret_set(lua_State* L, std::size_t slot, double value) {
  RobotTable& t = self(L);
  const std::size_t a = *t.turret_out_;
  t.stage(L, [a, slot, value](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.size() < 3) throw std::runtime_error("robot.turret: the actuator has no command");
    v[slot] = value;
  });
  return 0;
}
int RobotTable::turret_set_rotation(lua_State* L) {
  if (lua_gettop(L) != 1) return luaL_error(L, "robot.turret.set_rotation() expects 1 argument");
  return turret_set(L, 1, wrap_angle(luaL_checknumber(L, 1)));
}
int RobotTable::turret_set_rotation_speed(lua_State* L) {
  if (lua_gettop(L) != 1)
    return luaL_error(L, "robot.turret.set_rotation_speed() expects 1 argument");
  // ARGoS takes a whole number of RPM (its SInt32 speed pulses), turning pi/30 rad/s each.
  const double rpm = std::trunc(luaL_checknumber(L, 1));
  return turret_set(L, 2, std::isfinite(rpm) ? rpm * kPi / 30 : 0.0);
}
int RobotTable::turret_mode(lua_State* L, const char* name, double mode) {
  if (lua_gettop(L) != 0) return luaL_error(L, "robot.turret.%s() expects no arguments", name);
  return turret_set(L, 0, mode);
}
int RobotTable::turret_position_mode(lua_State* L) {
  return turret_mode(L, "set_position_control_mode", 3);
}
int RobotTable::turret_speed_mode(lua_State* L) {
  return turret_mode(L, "set_speed_control_mode", 2);
}
int RobotTable::turret_passive_mode(lua_State* L) {
  return turret_mode(L, "set_passive_mode", 1);
}

// robot.distance_scanner: ARGoS's (ci_footbot_distance_scanner_actuator.cpp,
// footbot_distance_scanner_default_actuator.cpp). The command: mode (0 off, 1 position, 2
// speed), angle (rad), speed (rad/s).

int RobotTable::scanner_command(lua_State* L, double mode, int slot, double value) {
  RobotTable& t = self(L);
  const std::size_t a = *t.scanner_out_;
  t.stage(L, [a, mode, slot, value](RobotTable&, RobotIO& io) {
    std::span<double> v = io.actuators[a].values;
    if (v.size() < 3)
      throw std::runtime_error("robot.distance_scanner: the actuator has no command");
    v[0] = mode;
    if (slot > 0) v[static_cast<std::size_t>(slot)] = value;
  });
  return 0;
}
int RobotTable::scanner_enable(lua_State* L) {
  if (lua_gettop(L) != 0)
    return luaL_error(L, "robot.distance_scanner.enable() expects no arguments");
  return scanner_command(L, 1, 0, 0);
}
int RobotTable::scanner_disable(lua_State* L) {
  if (lua_gettop(L) != 0)
    return luaL_error(L, "robot.distance_scanner.disable() expects no arguments");
  return scanner_command(L, 0, 0, 0);
}
int RobotTable::scanner_set_angle(lua_State* L) {
  if (lua_gettop(L) != 1)
    return luaL_error(L, "robot.distance_scanner.set_angle() expects 1 argument");
  luaL_checktype(L, 1, LUA_TNUMBER);
  return scanner_command(L, 1, 1, lua_tonumber(L, 1));
}
int RobotTable::scanner_set_rpm(lua_State* L) {
  if (lua_gettop(L) != 1)
    return luaL_error(L, "robot.distance_scanner.set_rpm() expects 1 argument");
  luaL_checktype(L, 1, LUA_TNUMBER);
  return scanner_command(L, 2, 2, lua_tonumber(L, 1) * kPi / 30);
}

int RobotTable::camera_switch(lua_State* L, bool on) {
  RobotTable& t = self(L);
  const std::size_t s = *t.camera_;
  t.stage(L, [s, on](RobotTable&, RobotIO& io) {
    if (bool* enabled = io.sensors[s].enabled) *enabled = on;
  });
  return 0;
}

int RobotTable::camera_enable(lua_State* L) {
  return camera_switch(L, true);
}
int RobotTable::camera_disable(lua_State* L) {
  return camera_switch(L, false);
}

// robot.random: ARGoS's signatures, drawing from the robot's counter-based stream.

int RobotTable::random_uniform(lua_State* L) {
  CounterRng& rng = self(L).rng();
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, rng.uniform());
      return 1;
    case 1: {
      const double max = luaL_checknumber(L, 1);
      lua_pushnumber(L, rng.uniform(0, max));
      return 1;
    }
    case 2: {
      const double min = luaL_checknumber(L, 1), max = luaL_checknumber(L, 2);
      lua_pushnumber(L, rng.uniform(min, max));
      return 1;
    }
    default:
      return luaL_error(L, "robot.random.uniform() expects 0, 1, or 2 arguments");
  }
}

int RobotTable::random_uniform_int(lua_State* L) {
  CounterRng& rng = self(L).rng();
  lua_Integer min = 0, max = 0;
  if (lua_gettop(L) == 1) {
    max = static_cast<lua_Integer>(std::floor(luaL_checknumber(L, 1)));
  } else if (lua_gettop(L) == 2) {
    min = static_cast<lua_Integer>(std::floor(luaL_checknumber(L, 1)));
    max = static_cast<lua_Integer>(std::floor(luaL_checknumber(L, 2)));
  } else {
    return luaL_error(L, "robot.random.uniform_int() expects 1 or 2 arguments");
  }
  if (max <= min)
    return luaL_error(L,
                      "robot.random.uniform_int(): the range [%I, %I) is empty (expected "
                      "max > min)",
                      static_cast<LUAI_UACINT>(min), static_cast<LUAI_UACINT>(max));
  const auto span = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
  lua_pushinteger(L, min + static_cast<lua_Integer>(rng.below(span)));
  return 1;
}

int RobotTable::random_bernoulli(lua_State* L) {
  CounterRng& rng = self(L).rng();
  if (lua_gettop(L) > 1) return luaL_error(L, "robot.random.bernoulli() expects 0 or 1 arguments");
  const double p = lua_gettop(L) == 1 ? luaL_checknumber(L, 1) : 0.5;
  lua_pushboolean(L, rng.uniform() < p);
  return 1;
}

int RobotTable::random_gaussian(lua_State* L) {
  CounterRng& rng = self(L).rng();
  if (lua_gettop(L) != 1 && lua_gettop(L) != 2)
    return luaL_error(L,
                      "robot.random.gaussian() expects 1 or 2 arguments (standard "
                      "deviation, then mean)");
  const double sigma = luaL_checknumber(L, 1);
  const double mean = lua_gettop(L) == 2 ? luaL_checknumber(L, 2) : 0.0;
  lua_pushnumber(L, mean + sigma * rng.normal());
  return 1;
}

int RobotTable::random_exponential(lua_State* L) {
  CounterRng& rng = self(L).rng();
  if (lua_gettop(L) != 1)
    return luaL_error(L, "robot.random.exponential() expects 1 argument (the mean)");
  const double mean = luaL_checknumber(L, 1);
  lua_pushnumber(L, -mean * std::log1p(-rng.uniform()));
  return 1;
}

int RobotTable::random_poisson(lua_State* L) {
  CounterRng& rng = self(L).rng();
  if (lua_gettop(L) != 1)
    return luaL_error(L, "robot.random.poisson() expects 1 argument (the mean)");
  double mean = luaL_checknumber(L, 1);
  if (!(mean >= 0 && mean <= 1e6))
    return luaL_error(L, "robot.random.poisson(): mean %f is out of range (expected 0 to 1e6)",
                      mean);
  // Knuth's product of uniforms, on chunks of at most 30 (a sum of Poissons is Poisson).
  lua_Integer k = 0;
  while (mean > 0) {
    const double chunk = std::min(mean, 30.0);
    mean -= chunk;
    const double limit = std::exp(-chunk);
    double p = rng.uniform();
    while (p > limit) {
      ++k;
      p *= rng.uniform();
    }
  }
  lua_pushinteger(L, k);
  return 1;
}

int RobotTable::math_random(lua_State* L) {
  CounterRng& rng = self(L).rng();
  lua_Integer low = 1, up = 0;
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, rng.uniform());
      return 1;
    case 1:
      up = luaL_checkinteger(L, 1);
      if (up == 0) {  // all bits
        lua_pushinteger(L, static_cast<lua_Integer>(rng.next()));
        return 1;
      }
      break;
    case 2:
      low = luaL_checkinteger(L, 1);
      up = luaL_checkinteger(L, 2);
      break;
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  luaL_argcheck(L, low <= up, lua_gettop(L), "interval is empty");
  const std::uint64_t span = static_cast<std::uint64_t>(up) - static_cast<std::uint64_t>(low);
  const std::uint64_t draw = span == ~std::uint64_t{0} ? rng.next() : rng.below(span + 1);
  lua_pushinteger(L, static_cast<lua_Integer>(static_cast<std::uint64_t>(low) + draw));
  return 1;
}

int RobotTable::math_randomseed(lua_State*) {
  return 0;
}

namespace {

/// A key of a table being traversed by ordered_pairs, with what orders it.
struct OrderedKey {
  int rank;  ///< 0 number, 1 string, 2 boolean, 3 anything else (kept in Lua's order)
  lua_Number number;
  std::string_view text;
  int position;  ///< in Lua's order (index in the keys table)
};

/// The iterator of ordered_pairs; upvalues: the table, the sorted keys, the next position.
int ordered_next(lua_State* L) {
  lua_Integer i = lua_tointeger(L, lua_upvalueindex(3));
  while (true) {
    ++i;
    if (lua_rawgeti(L, lua_upvalueindex(2), i) == LUA_TNIL) return 1;  // the end: nil
    lua_pushvalue(L, -1);
    if (lua_gettable(L, lua_upvalueindex(1)) != LUA_TNIL) break;  // skip keys removed since
    lua_pop(L, 2);
  }
  lua_pushinteger(L, i);
  lua_replace(L, lua_upvalueindex(3));
  return 2;
}

}  // namespace

int RobotTable::ordered_pairs(lua_State* L) {
  luaL_checkany(L, 1);
  if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) {  // as Lua's pairs
    lua_pushvalue(L, 1);
    lua_call(L, 1, 3);
    return 3;
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_newtable(L);  // 2: the keys, in Lua's order
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 2, ++n);
  }
  std::vector<OrderedKey> keys(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    OrderedKey& k = keys[static_cast<std::size_t>(i)];
    k.position = i + 1;
    k.number = 0;
    switch (lua_rawgeti(L, 2, i + 1)) {
      case LUA_TNUMBER:
        k.rank = 0;
        k.number = lua_tonumber(L, -1);
        break;
      case LUA_TSTRING: {
        std::size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);  // kept alive by the keys table
        k.rank = 1;
        k.text = {s, len};
        break;
      }
      case LUA_TBOOLEAN:
        k.rank = 2;
        k.number = lua_toboolean(L, -1);
        break;
      default:
        k.rank = 3;
        break;
    }
    lua_pop(L, 1);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const OrderedKey& a, const OrderedKey& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.rank == 1) return a.text < b.text;
    return a.number < b.number;  // equal for rank 3: their order stays Lua's
  });
  lua_createtable(L, n, 0);  // 3: the keys, sorted
  for (int i = 0; i < n; ++i) {
    lua_rawgeti(L, 2, keys[static_cast<std::size_t>(i)].position);
    lua_rawseti(L, 3, i + 1);
  }
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 3);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, ordered_next, 3);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int RobotTable::write_log(lua_State* L, bool error) {
  RobotTable& t = self(L);
  std::string line;
  const int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    switch (lua_type(L, i)) {
      case LUA_TNUMBER:
      case LUA_TSTRING: {
        std::size_t len = 0;
        lua_pushvalue(L, i);  // lua_tolstring converts a number in place: convert a copy
        const char* s = lua_tolstring(L, -1, &len);
        line.append(s, len);
        lua_pop(L, 1);
        break;
      }
      case LUA_TBOOLEAN:
        line += lua_toboolean(L, i) ? "true" : "false";
        break;
      default:
        line += luaL_typename(L, i);
        break;
    }
  }
  t.log_(error, t.name_, line);
  return 0;
}

int RobotTable::log_info(lua_State* L) {
  return write_log(L, false);
}
int RobotTable::log_error(lua_State* L) {
  return write_log(L, true);
}

}  // namespace fleetsim::lua
