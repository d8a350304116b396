// The `robot` table a Lua controller sees: ARGoS's Lua foot-bot API over fleetsim's parts.
//
// Which sub-tables exist depends on the robot's kind: a part is found by its interface
// (SensorView::type / ActuatorView::type), the first one of each interface is used.
//
//   interface                              table                                   units
//   sensor proximity                       robot.proximity[i].value / .angle        [0,1], rad
//   sensor collision                       robot.collision.realization, [i].angle   [0,1], rad
//                                          .action.speed/.angle/.type/.realization
//                                          (with a deeco_wheels actuator)
//   sensor positioning                     robot.positioning.position / .orientation  m
//   sensor range_and_bearing               robot.range_and_bearing[i]...            cm, rad
//   sensor colored_blob_omnidirectional_camera  robot.colored_blob_omnidirectional_camera[i]  cm
//   sensor light                           robot.light[i].value / .angle            [0,1], rad
//   sensor motor_ground                    robot.motor_ground[i].value / .offset    [0,1], cm
//   sensor base_ground                     robot.base_ground[i].value / .offset     0|1, cm
//   actuator differential_drive            robot.wheels.set_velocity, .axis_length,  cm/s, cm
//                                          .velocity_left/right, .distance_left/right
//   actuator leds                          robot.leds.set_all_colors / set_single_color
//   actuator range_and_bearing             robot.range_and_bearing.set_data / clear_data
//   actuator deeco_wheels                  robot.deeco_wheels.set_action(speed, angle) [0,1], rad
//   sensor turret_encoder                  robot.turret.rotation                    rad
//   sensor distance_scanner                robot.distance_scanner.short_range[i] /     cm, rad
//                                          .long_range[i]: .distance, .angle (-1, -2 as ARGoS)
//   actuator distance_scanner              robot.distance_scanner.enable, disable, set_angle,
//                                          set_rpm                              rad, rpm
//   actuator gripper                       robot.gripper.lock_positive / lock_negative / unlock
//   actuator turret                        robot.turret.set_rotation, set_rotation_speed,  rad, rpm
//                                          set_position_control_mode, set_speed_control_mode,
//                                          set_passive_mode
//   actuator quadrotor_speed               robot.quadrotor.set_linear_velocity(x, y, z),
//                                          .set_rotational_speed(w)            m/s, rad/s
//   experiment's <knowledge>               robot.knowledge.<field> (read, write)   numbers
//   experiment's <layers>                  robot.layer(name[, type]) (read)        numbers
//   always                                 robot.id, robot.random, log(), logerr()
//
// For repeatable runs it also replaces two standard functions: math.random draws from the
// robot's counter-based stream (as robot.random), and pairs() visits keys in a fixed order
// (Lua seeds its string hash per state, so its own order changes from run to run).
//
// Layout: the tables the engine refreshes every tick sit at fixed slots of the state's stack
// (below anything a call pushes), and their keys are interned strings kept in slots too, so a
// refresh is raw sets of numbers into existing tables: no table, string or closure is made per
// tick once the largest message and blob counts have been seen. Owned by one controller (one
// robot); used only from the thread that steps that robot.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetsim/controller.hpp"

struct lua_State;

namespace fleetsim::lua {

/// Where log() and logerr() lines go: (is_error, robot id, the line without newline).
using LogSink = std::function<void(bool, std::string_view, std::string_view)>;

/// Writes log() lines to stdout and logerr() lines to stderr, each as "[id] text\n" in one
/// write (lines of robots on different threads never mix; their order may).
void write_log_line(bool error, std::string_view robot, std::string_view text);

/// A table of ARGoS's Lua robot API for its foot-bot, e-puck and eye-bot, and the fleetsim part
/// that gives it (docs/lua-api.md lists them all; a test checks the page against this list).
struct ArgosTable {
  const char* name;                ///< robot.<name>
  const char* device;              ///< what a kind needs for it, as a user reads it
  const char* sensor = nullptr;    ///< fleetsim's sensor interface that gives it, if any
  const char* actuator = nullptr;  ///< fleetsim's actuator interface that gives it, if any
  bool in_fleetsim() const { return sensor || actuator; }
};
std::span<const ArgosTable> argos_tables();

class RobotTable {
 public:
  /// Builds the global `robot` table (and `log`, `logerr`) for the robot of `setup` in `state`,
  /// pushing its slots onto the state's stack. `robot_name` becomes robot.id.
  RobotTable(lua_State* state, const ControllerSetup& setup, std::string robot_name, LogSink log);
  RobotTable(const RobotTable&) = delete;
  RobotTable& operator=(const RobotTable&) = delete;

  /// Before the script's step: binds `io` (actuator calls write its views, robot.random draws
  /// from io.rng), applies commands given outside a step, and copies the readings in.
  void begin_step(RobotIO& io);
  /// After the script's step (also after an error): unbinds io.
  void end_step();
  /// Draws of robot.random outside a step (in init and reset) come from this generator.
  void set_rng_outside_step(CounterRng rng) { outside_rng_ = rng; }
  /// Whether commands given outside a step wait for the next one; dropping them (a robot
  /// whose init() ran again on another process, after its first step).
  bool has_staged() const { return !staged_.empty(); }
  void clear_staged() { staged_.clear(); }
  /// When `name` is a table of ARGoS's API that this robot's kind lacks: what to tell a script
  /// that uses it ("robot.light: kind 'footbot' has no light sensor ..."); else "".
  std::string absent_table(std::string_view name) const;

 private:
  // Stack slots of the tables and keys (absolute indices).
  struct Slots {
    int keys = 0;  ///< first key string; key k is at keys + k
    int proximity = 0, collision = 0, positioning = 0, position = 0, orientation = 0;
    int rab = 0, rab_pool = 0, camera = 0, camera_pool = 0, wheels = 0;
    int light = 0, motor_ground = 0, base_ground = 0;
    int turret = 0;  ///< robot.turret (the encoder's rotation, the actuator's functions)
    int scanner = 0, scanner_short = 0, scanner_short_pool = 0, scanner_long = 0,
        scanner_long_pool = 0;  ///< robot.distance_scanner and its arrays
    int action = 0;             ///< robot.collision.action (0: none)
  };

  void add_key_slots();
  void build_sensor(const SensorView& view, std::size_t index);
  /// robot.<field>: one table per reading, {value = 0, angle = a} (from view.angles) or
  /// {value = 0, offset = {x, y}} (view.directions, in cm). Returns its slot.
  int build_readings(const char* field, int robot, const SensorView& view);
  /// Writes view.values into the tables build_readings made.
  void refresh_readings(int table, const SensorView& view);
  void build_actuator(std::string_view type, std::size_t index);
  void add_function(int table, const char* name, int (*f)(lua_State*));
  int new_slot_table(const char* field_in_robot, int robot);

  void refresh_proximity(const SensorView& v);
  void refresh_collision(const SensorView& v);
  void refresh_positioning(const SensorView& v);
  void refresh_rab(const SensorView& v);
  void refresh_camera(const SensorView& v);
  void refresh_scanner(const SensorView& v);
  void refresh_wheels(RobotIO& io);
  /// Fills the tables as they are before the first step (what ARGoS shows in init()).
  void show_start(const ControllerSetup& setup);
  /// Points robot.<array>[1..n] at pooled tables (made on first need) and clears the rest.
  /// `make(state, size)` pushes a new pooled table (`size`: the length of a message's data).
  /// `made`, if given, receives the address of each pooled table made (for prefetching: a
  /// pool is the engine's alone, and Lua never moves a table).
  void resize_array(int array, int pool, std::size_t n, std::size_t& shown,
                    void (*make)(lua_State*, int), int size,
                    std::vector<const void*>* made = nullptr);
  /// Replaces the value on top of the stack (the field `key` of `table`, which a script set to
  /// something else than a table) with a new table of `size` slots, set as that field.
  void new_field_table(int table, int key, std::size_t size);
  void set_number(int table, int key, double value);

  // The C functions of the API; upvalue 1 is the RobotTable.
  static RobotTable& self(lua_State* state);
  static int set_velocity(lua_State* state);
  static int set_action(lua_State* state);
  static int knowledge_get(lua_State* state);
  static int layer_get(lua_State* state);
  static int tag_get(lua_State* state);
  static int tag_set(lua_State* state);
  static int knowledge_set(lua_State* state);
  /// The handle of knowledge field `name` (the key at `arg`), or a Lua error listing them.
  std::size_t knowledge_field(lua_State* state, int arg) const;
  static int set_linear_velocity(lua_State* state);
  static int set_rotational_speed(lua_State* state);
  static int set_all_colors(lua_State* state);
  static int set_single_color(lua_State* state);
  static int set_data(lua_State* state);
  static int clear_data(lua_State* state);
  static int gripper_set(lua_State* state, const char* name, double aperture);
  static int gripper_lock_positive(lua_State* state);
  static int gripper_lock_negative(lua_State* state);
  static int gripper_unlock(lua_State* state);
  static int turret_set(lua_State* state, std::size_t slot, double value);
  static int turret_mode(lua_State* state, const char* name, double mode);
  static int turret_set_rotation(lua_State* state);
  static int turret_set_rotation_speed(lua_State* state);
  static int turret_position_mode(lua_State* state);
  static int turret_speed_mode(lua_State* state);
  static int turret_passive_mode(lua_State* state);
  static int scanner_command(lua_State* state, double mode, int slot, double value);
  static int scanner_enable(lua_State* state);
  static int scanner_disable(lua_State* state);
  static int scanner_set_angle(lua_State* state);
  static int scanner_set_rpm(lua_State* state);
  static int camera_enable(lua_State* state);
  static int camera_disable(lua_State* state);
  static int camera_switch(lua_State* state, bool on);
  static int random_uniform(lua_State* state);
  static int random_uniform_int(lua_State* state);
  static int random_bernoulli(lua_State* state);
  static int random_gaussian(lua_State* state);
  static int random_exponential(lua_State* state);
  static int random_poisson(lua_State* state);
  static int math_random(lua_State* state);
  static int math_randomseed(lua_State* state);
  static int ordered_pairs(lua_State* state);
  static int log_info(lua_State* state);
  static int log_error(lua_State* state);
  static int write_log(lua_State* state, bool error);

  CounterRng& rng() { return io_ ? io_->rng : outside_rng_; }
  /// Runs an actuator command now during a step; outside one (init, reset) keeps it for the
  /// start of the next step, when the parts' sizes (LED count, payload bytes) are known.
  template <class Apply>
  void stage(lua_State* state, Apply apply);

  lua_State* state_;
  std::string name_;
  std::string kind_name_, parts_list_;  ///< for absent_table()
  LogSink log_;
  Slots slot_;
  RobotIO* io_ = nullptr;
  CounterRng outside_rng_{0, 0, -1, RandomStream::kController};
  std::vector<std::function<void(RobotTable&, RobotIO&)>> staged_;  ///< see stage()

  // Parts by interface (indices into RobotIO::sensors / actuators).
  std::optional<std::size_t> proximity_, collision_, positioning_, rab_in_, camera_;
  std::optional<std::size_t> light_, motor_ground_, base_ground_, turret_in_, scanner_in_;
  std::optional<std::size_t> wheels_, leds_, rab_out_, quadrotor_, deeco_wheels_;
  std::optional<std::size_t> gripper_, turret_out_, scanner_out_;
  // The experiment's knowledge fields (robot.knowledge.<name>), in declaration order.
  std::vector<std::string> knowledge_names_;
  std::vector<std::string> layer_names_;  ///< the experiment's <layers>

  // What the tables show now, to write only what changed.
  std::size_t proximity_shown_ = 0, collision_shown_ = 0, rab_shown_ = 0, camera_shown_ = 0;
  std::size_t scanner_short_shown_ = 0, scanner_long_shown_ = 0;
  std::vector<float> proximity_angles_;
  std::vector<const void*> rab_tables_, camera_tables_, ray_tables_;  ///< for prefetching
  int ray_slot0_ = 0;  ///< stack slot of ray 1's table (0 until the first step)
  double axis_length_shown_ = -1;
};

}  // namespace fleetsim::lua
