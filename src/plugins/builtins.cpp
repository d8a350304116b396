#include "plugins/builtins.hpp"

#include <string>

#include "control/diffusion.hpp"
#include "lua/lua_controller.hpp"
#include "lua/lua_ensemble.hpp"
#include "lua/lua_object.hpp"
#include "physics/physics_world.hpp"
#include "plugins/layers.hpp"
#include "plugins/rewards.hpp"
#include "robots/body_parts.hpp"
#include "robots/camera.hpp"
#include "robots/deeco_wheels.hpp"
#include "robots/distance_scanner.hpp"
#include "robots/gripper.hpp"
#include "robots/ground_sensors.hpp"
#include "robots/light_sensor.hpp"
#include "robots/proximity_sensor.hpp"
#include "robots/range_and_bearing.hpp"

namespace fleetsim {

namespace {

/// `knowledge_max`: the built-in ensemble (and the C++ example of one): copies a knowledge
/// field between the coordinator and a member when the source's first number is greater, so
/// the largest value (or the newest, for a field that starts with a timestamp) spreads.
class KnowledgeMax final : public Ensemble {
 public:
  void init(const Params& params, const EnsembleSetup& setup) override {
    field_ = setup.knowledge(params.text("field"));
    const std::string into = params.text("into", "member");
    if (into != "member" && into != "coordinator")
      throw SetupError("into=\"" + into + "\" (expected member or coordinator)");
    into_member_ = into == "member";
  }
  void exchange(EnsembleWorld& world, const Component& c, const Component& m) override {
    const std::span<double> from = world.knowledge(into_member_ ? c : m, field_);
    const std::span<double> to = world.knowledge(into_member_ ? m : c, field_);
    if (from[0] > to[0]) std::copy(from.begin(), from.end(), to.begin());
  }
  // A coordinator's members in one call, on the knowledge's columns, with no call or copy per
  // pair (each pair's membership is true). Pushing: each member takes the coordinator's field
  // if greater (the coordinator's does not change meanwhile). Pulling: the pairs in id order
  // leave the coordinator with the field of the first member, by id, of the largest first
  // number when it is greater than its own: that member is found in any order (the largest,
  // ties to the smallest id), so the members need not be sorted.
  std::size_t evaluate(EnsembleWorld& world, const Component& c,
                       const MemberBatch& members) override {
    const std::span<double> own = world.knowledge(c, field_);
    const std::size_t size = own.size();
    double* const column = members.knowledge[field_];
    const std::uint32_t* at = members.at.data();
    const std::size_t count = members.size();
    if (into_member_) {
      for (std::size_t i = 0; i < count; ++i) {
        double* to = column + std::size_t{at[i]} * size;
        if (own[0] > to[0]) std::copy(own.begin(), own.end(), to);
      }
      return count;
    }
    const EntityId* ids = members.id;
    double best = own[0];
    std::uint32_t from = 0;
    bool found = false;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t a = at[i];
      const double v = column[std::size_t{a} * size];
      if (v > best || (found && v == best && ids[a] < ids[from])) best = v, from = a, found = true;
    }
    if (found) {
      const double* source = column + std::size_t{from} * size;
      std::copy(source, source + size, own.begin());
    }
    return count;
  }
  bool order_free() const override { return true; }
  // Pulling into the coordinator writes only it: coordinators may be evaluated concurrently.
  bool concurrent() const override { return !into_member_; }

 private:
  std::size_t field_ = 0;
  bool into_member_ = true;
};

std::unique_ptr<Ensemble> make_knowledge_max_ensemble() {
  return std::make_unique<KnowledgeMax>();
}

/// `tag_on_contact`: tags every robot that touches something, shows the count in the status,
/// and ends the run when every robot is tagged (if asked to). In the per-process form: each
/// process tags the robots it moves, and the counts are sums over the processes.
class TagOnContact : public LoopFunctions {
 public:
  bool per_process() const override { return true; }
  void init(const Params& p, WorldAccess& w) override {
    read(p);
    std::int64_t tagged = 0, robots = 0;
    for (EntityId id : w.robots()) {
      ++robots;
      tagged += w.robot_tag(id) == tag_ ? 1 : 0;
    }
    update_status(w, w.sum(tagged), w.sum(robots));
  }
  // The world is back at its start (Simulation::reset): counted again from its tags, as init().
  void reset(WorldAccess& w) override {
    std::int64_t tagged = 0, robots = 0;
    for (EntityId id : w.robots()) {
      ++robots;
      tagged += w.robot_tag(id) == tag_ ? 1 : 0;
    }
    update_status(w, w.sum(tagged), w.sum(robots));
  }
  void post_step(WorldAccess& w) override {
    std::int64_t tagged = 0, robots = 0;
    for (EntityId id : w.robots()) {
      ++robots;
      if (w.robot_tag(id) == tag_) {
        ++tagged;
      } else if (w.robot_contact_count(id) > 0) {
        w.set_robot_tag(id, tag_);  // (applied after the hook, with every process's)
        ++tagged;
      }
    }
    update_status(w, w.sum(tagged), w.sum(robots));
  }
  bool is_finished(const WorldAccess&) const override { return end_when_all_ && all_; }
  // Its state is the parameters and the world's tags: nothing to save.
  bool save(std::vector<std::uint8_t>&) const override { return true; }
  void restore(const Params& p, WorldAccess& w, std::span<const std::uint8_t>) override {
    read(p);
    std::int64_t tagged = 0, robots = 0;
    for (EntityId id : w.robots()) {
      ++robots;
      tagged += w.robot_tag(id) == tag_ ? 1 : 0;
    }
    tagged = w.sum(tagged);
    robots = w.sum(robots);
    all_ = robots > 0 && tagged == robots;
  }

 private:
  void read(const Params& p) {
    tag_ = p.text("tag", "bumped");
    end_when_all_ = p.boolean("end_when_all", false);
  }
  void update_status(WorldAccess& w, std::int64_t tagged, std::int64_t robots) {
    all_ = robots > 0 && tagged == robots;
    w.set_status("tick " + std::to_string(w.tick()) + ": " + std::to_string(tagged) + " of " +
                 std::to_string(robots) + " robots " + tag_);
  }
  std::string tag_;
  bool end_when_all_ = false, all_ = false;
};

void register_sensors(PluginRegistry& r) {
  const std::vector<ParamDoc> proximity_params = {
      {"rays", "integer", "8", "number of rays"},
      {"angles", "string", "",
       "ray angles, degrees CCW from the heading, comma-separated "
       "(default: the e-puck's for 8 rays, else evenly spaced)"},
      {"range", "real", "0.1", "ray length from the body surface, metres"},
      {"response", "string", "linear",
       "distance d to reading: linear (1 - d/range), footbot (ARGoS's foot-bot: 1 within "
       "9.9 mm, else 0.0100527/(d + 0.000163144)) or epuck (ARGoS's e-puck: a quadratic to "
       "5 cm, 0 beyond)"},
      {"noise_level", "real", "0",
       "half-width of uniform noise added to each reading, then clamped to [0, 1] (ARGoS's)"}};
  r.add_sensor({PluginKind::kSensor, "proximity",
                "infrared rays from the body surface: 0 = nothing in range, 1 = touching, "
                "linear or ARGoS's curves in between (values, angles, directions)",
                proximity_params},
               [] { return make_proximity_sensor(false); });
  auto noisy_params = proximity_params;
  noisy_params.push_back({"noise", "real", "0.05", "standard deviation of the Gaussian noise"});
  r.add_sensor({PluginKind::kSensor, "proximity_noisy",
                "the proximity rays with Gaussian noise from the counter-based RNG (repeats), "
                "clamped to [0, 1]",
                noisy_params, "built-in", "proximity"},
               [] { return make_proximity_sensor(true); });
  r.add_sensor({PluginKind::kSensor,
                "collision",
                "contact angles at the end of the last tick (angles) and the degree of "
                "realization of the last move (scalar), DEECo playground",
                {}},
               [] { return make_collision_sensor(); });
  r.add_sensor({PluginKind::kSensor,
                "positioning",
                "the robot's pose: reals = x, y (metres), theta (radians)",
                {}},
               [] { return make_positioning_sensor(); });
  r.add_sensor(
      {PluginKind::kSensor,
       kRangeAndBearing,
       "situated communication, receiver: one message per emitting robot within range "
       "(messages: sender id, the payload it sent last tick, range_m, horizontal and "
       "vertical bearing), sorted by sender id; scalar = range",
       {{"range", "real", "3",
         "reception range, metres, device to device (each device "
         "on the robot's axis at its kind's height)"},
        {"data_size", "integer", "10",
         "bytes per message, 1 to 4096 (other sizes are cut or padded with zeros)"},
        {"blocked_by_obstacles", "bool", "false",
         "lose messages whose line between the two robots' centres crosses a wall, box "
         "or bitmap edge"},
        {"blocked_by_bodies", "bool", "false",
         "lose messages whose line between the two robots' centres crosses a third "
         "robot's body on the ground (ARGoS's check_occlusions; the foot-bot's default)"}}},
      [] { return make_range_and_bearing_sensor(); });
  r.add_sensor(
      {PluginKind::kSensor,
       kColoredBlobOmnidirectionalCamera,
       "the lit LEDs of other robots within range as blobs (colour, distance_m, angle), "
       "by owner id then LED index; disabled until the controller sets *enabled",
       {{"range", "real", "3",
         "metres, horizontal distance from the robot's centre "
         "to an LED"},
        {"blocked_by_obstacles", "bool", "false", "hide LEDs behind a wall, box or bitmap edge"},
        {"field", "string", "disc",
         "disc: LEDs within range; square: ARGoS's, |dx| and |dy| (world axes) below "
         "range"},
        {"blocked_by_bodies", "bool", "false",
         "hide LEDs behind other bodies, seen from camera_height (ARGoS's occlusion)"},
        {"camera_height", "real", "0.288699733",
         "metres above the floor, for blocked_by_bodies (ARGoS's foot-bot's)"}}},
      [] { return make_colored_blob_omnidirectional_camera(); });
  const std::vector<ParamDoc> noise = {
      {"noise_level", "real", "0",
       "half-width of the uniform noise added to each reading (ARGoS's noise_level)"}};
  r.add_sensor({PluginKind::kSensor, "footbot_light",
                "ARGoS's foot-bot light sensor: 24 readings in [0, 1] (values, angles every 15 "
                "degrees from 7.5) from the experiment's lights; bodies and obstacles occlude",
                noise, "built-in", "light"},
               [] { return make_footbot_light_sensor(); });
  r.add_sensor({PluginKind::kSensor, "footbot_motor_ground",
                "ARGoS's foot-bot motor ground sensor: the floor's grey level in [0, 1] under 4 "
                "points near the wheels (values; directions = offsets, metres)",
                noise, "built-in", "motor_ground"},
               [] { return make_footbot_motor_ground_sensor(); });
  r.add_sensor({PluginKind::kSensor, "footbot_base_ground",
                "ARGoS's foot-bot base ground sensor: 8 points on a ring of 8 cm, each 0 (grey "
                "level below 0.5) or 1 (values; directions = offsets, metres)",
                noise, "built-in", "base_ground"},
               [] { return make_footbot_base_ground_sensor(); });
  r.add_sensor({PluginKind::kSensor,
                "footbot_turret_encoder",
                "ARGoS's foot-bot turret encoder: reals = the turret's rotation relative to "
                "the heading, radians (0 without a footbot_turret)",
                {},
                "built-in",
                "turret_encoder"},
               [] { return make_footbot_turret_encoder(); });
  r.add_sensor({PluginKind::kSensor,
                "footbot_distance_scanner",
                "ARGoS's foot-bot distance scanner: 2 short rays (0.26 m) and 2 long ones (1.42 "
                "m) turning together; values = distances from the body's edge (m; -1 too near, "
                "-2 nothing), short ones first (scalar = their count), angles (rad)",
                {},
                "built-in",
                "distance_scanner"},
               [] { return make_footbot_distance_scanner_sensor(); });
}

void register_actuators(PluginRegistry& r) {
  r.add_actuator({PluginKind::kActuator,
                  "differential_drive",
                  "two wheel speeds, m/s (values = left, right; constants = axle_length, "
                  "max_wheel_speed); the body's speed is clamped to the kind's max_speed",
                  {{"axle_length", "real", "0.053", "distance between the wheels, metres"},
                   {"max_wheel_speed", "real", "0.13", "limit on each wheel, m/s"}}},
                 [] { return make_differential_drive(); });
  r.add_actuator({PluginKind::kActuator,
                  "deeco_wheels",
                  "the DEECo playground's action model (values = speed, a fraction in [0, 1] of "
                  "the kind's max_speed, and rotation angle, rad; constants = max_speed): the "
                  "robot turns at once, then moves along its new heading, never backwards; the "
                  "collision sensor echoes the action (reals = speed, angle, type) and its "
                  "degree of realization (scalar); kinematics2d kinds only",
                  {{"extras", "string", "",
                    "names of up to 8 more numbers of the action (values after speed and "
                    "angle), read by environment layers: a custom action such as an "
                    "extinguisher"}}},
                 [] { return make_deeco_wheels(); });
  r.add_actuator({PluginKind::kActuator,
                  "quadrotor_speed",
                  "a flyer's speed control for pointmass3d (values = target vx, vy, vz in m/s, "
                  "world frame, and yaw rate in rad/s; constants = max_speed)",
                  {}},
                 [] { return make_quadrotor_speed(); });
  r.add_actuator({PluginKind::kActuator,
                  "leds",
                  "RGB LEDs (colors), visible to cameras and the log from the act phase on",
                  {{"count", "integer", "1", "number of LEDs (the foot-bot: 12 ring + 1 beacon)"}}},
                 [] { return make_leds(); });
  r.add_actuator({PluginKind::kActuator,
                  kRangeAndBearing,
                  "situated communication, emitter: the payload to broadcast (data, kept until "
                  "overwritten; constants = data_size), heard by others in the next tick",
                  {{"data_size", "integer", "10", "payload bytes, 1 to 4096"}}},
                 [] { return make_range_and_bearing_actuator(); });
  r.add_actuator({PluginKind::kActuator,
                  "footbot_gripper",
                  "ARGoS's foot-bot gripper (values = aperture, rad: pi/2 or -pi/2 locks, 0 "
                  "unlocks); in dynamics2d, locked, it holds the body it touches in the "
                  "turret's direction (a joint) until unlocked",
                  {},
                  "built-in",
                  "gripper"},
                 [] { return make_footbot_gripper(); });
  r.add_actuator({PluginKind::kActuator,
                  "footbot_turret",
                  "ARGoS's foot-bot turret, which turns the gripper (values = mode: 0 off, 1 "
                  "passive, 2 speed, 3 position; target rotation, rad; target speed, rad/s)",
                  {},
                  "built-in",
                  "turret"},
                 [] { return make_footbot_turret(); });
  r.add_actuator({PluginKind::kActuator,
                  "footbot_distance_scanner",
                  "ARGoS's foot-bot distance scanner's motor (values = mode: 0 off, 1 position, 2 "
                  "speed; angle, rad; speed, rad/s)",
                  {},
                  "built-in",
                  "distance_scanner"},
                 [] { return make_footbot_distance_scanner_actuator(); });
}

void register_controllers(PluginRegistry& r) {
  r.add_controller(
      {PluginKind::kController,
       "diffusion",
       "obstacle avoidance (ARGoS report, algorithm 2): straight unless an obstacle "
       "is in the frontal cone, then turn away; rule=\"argos\" follows ARGoS's own",
       {{"alpha_degrees", "real", "7.5", "half-angle of the frontal cone, degrees"},
        {"delta", "real", "0.1",
         "minimum length of the summed readings to react (argos: of their mean)"},
        {"speed", "real", "0.1", "wheel speed, m/s"},
        {"rule", "string", "fleetsim",
         "fleetsim (default: summed readings, turn on the spot, a blocked robot "
         "turns too) or argos (ARGoS's diffusion examples: mean reading, straight "
         "only if in the cone and below delta, turn by stopping one wheel)"}}},
      [] { return make_diffusion_controller(); }, ControllerScope::kShared);
  r.add_controller(
      {PluginKind::kController, "idle", "stands still (wheels at 0)", {}},
      [] { return make_idle_controller(); }, ControllerScope::kShared);
  r.add_controller(
      {PluginKind::kController,
       "external",
       "leaves the actuators' commands as they are, for a program outside the "
       "run to set (Python: Simulation.column, docs/python.md)",
       {}},
      [] { return make_external_controller(); }, ControllerScope::kShared);
  r.add_controller({PluginKind::kController,
                    "random_walk",
                    "straight, with random on-the-spot turns (a per-robot controller)",
                    {{"speed", "real", "0.1", "wheel speed, m/s"},
                     {"turn_probability", "real", "0.1", "chance per tick of starting a turn"}}},
                   [] { return make_random_walk_controller(); });
  r.add_controller({PluginKind::kController,
                    "lua",
                    "a Lua 5.4 script with ARGoS's Lua robot API (robot.proximity, robot.wheels, "
                    "robot.leds, robot.range_and_bearing, ...; docs/lua-api.md), one Lua state "
                    "per robot",
                    {{"script", "path", "", "the Lua file, relative to the experiment file"}}},
                   [] { return make_lua_controller(); });
}

}  // namespace

void register_builtins(PluginRegistry& r) {
  register_sensors(r);
  register_actuators(r);
  register_controllers(r);
  // Every engine element has an id and a region (read by the experiment parser).
  auto engine_params = [](const char* type, std::vector<ParamDoc> own) {
    std::vector<ParamDoc> all{{"id", "string", type, "engine name, unique in the experiment"},
                              {"region", "string", "whole arena",
                               "\"xmin,ymin,xmax,ymax\", metres; each type's regions tile the "
                               "arena"}};
    all.insert(all.end(), own.begin(), own.end());
    return all;
  };
  r.add_physics_engine({PluginKind::kPhysicsEngine, "kinematics2d",
                        "2D kinematics (DEECo playground): circular bodies stop at first contact, "
                        "never overlap",
                        engine_params("kinematics2d", {})},
                       [] { return make_kinematics2d_engine(); });
  r.add_physics_engine(
      {PluginKind::kPhysicsEngine, "dynamics2d",
       "2D rigid-body dynamics on Box2D: wheeled robots driven by velocity constraints solved "
       "with the contacts (ARGoS's model), static walls; each region stepped by one thread",
       engine_params(
           "dynamics2d",
           {{"model", "string", "argos",
             "argos: ARGoS's velocity control, masses, forces and friction; fleetsim: the former "
             "drive (impulses before each sub-step) and defaults"},
            {"sub_steps", "integer", "by model",
             "physics steps per tick, 1 to 100 (argos 10, as ARGoS's iterations; fleetsim 4)"},
            {"velocity_iterations", "integer", "by model",
             "Box2D velocity solver iterations per sub-step (argos 10, fleetsim 8)"},
            {"position_iterations", "integer", "3",
             "Box2D position solver iterations per sub-step"},
            {"robot_mass", "real", "0.4",
             "mass of a body whose kind gives none (nor, with model argos, ARGoS's), kg"},
            {"max_force", "real", "by model",
             "largest force of a robot's drive, N (argos: the kind's, foot-bot 15, e-puck 1.5; "
             "else 1.5)"},
            {"max_torque", "real", "by model",
             "largest torque of a robot's drive, N m (argos: the kind's, foot-bot 150, e-puck "
             "1.5; else 1.5)"},
            {"robot_friction", "real", "by model",
             "friction coefficient of robots and passive bodies (argos 0.7, fleetsim 0.3)"},
            {"obstacle_friction", "real", "by model",
             "friction coefficient of walls and static boxes (argos 0.1, fleetsim 0.2)"},
            {"ground_friction", "real", "0.5",
             "floor friction coefficient holding passive bodies (cylinder, box): mu m g"}})},
      [] { return make_dynamics2d_engine(); });
  r.add_physics_engine(
      {PluginKind::kPhysicsEngine, "pointmass3d",
       "3D point masses for flyers (the eyebot): velocity control with bounded acceleration, no "
       "collisions; altitude in the z column",
       engine_params("pointmass3d",
                     {{"max_acceleration", "real", "2", "largest change of velocity, m/s^2"},
                      {"ceiling", "real", "10", "highest altitude, metres"}})},
      [] { return make_pointmass3d_engine(); });
  r.add_loop_functions({PluginKind::kLoopFunctions,
                        "tag_on_contact",
                        "tags robots that bump into something; status shows the count",
                        {{"tag", "string", "bumped", "the tag given"},
                         {"end_when_all", "bool", "false", "end the run when all are tagged"}}},
                       [] { return std::make_unique<TagOnContact>(); });
  r.add_ensemble({PluginKind::kEnsemble,
                  "lua",
                  "an ensemble written in Lua: is_coordinator(r), is_member(r), membership(c, m) "
                  "and exchange(c, m) over components' knowledge (docs/lua-api.md, Ensembles)",
                  {{"script", "path", "", "the Lua file, relative to the experiment file"}}},
                 [] { return lua::make_lua_ensemble(); });
  r.add_ensemble({PluginKind::kEnsemble,
                  "knowledge_max",
                  "knowledge spreads: a knowledge field is copied from the coordinator to each "
                  "member (into=member) or from each member to the coordinator "
                  "(into=coordinator) when the source's first number is greater",
                  {{"field", "string", "",
                    "the knowledge field (any size; its first number is "
                    "compared: a value, or a timestamp with data)"},
                   {"into", "string", "member", "member or coordinator: the side written"}}},
                 [] { return make_knowledge_max_ensemble(); });
  r.add_object_behaviour(
      {PluginKind::kObjectBehaviour,
       "lua",
       "an object's behaviour written in Lua: step() sets object.x, object.y, object.size and "
       "object.tag (docs/lua-api.md, Objects)",
       {{"script", "path", "", "the Lua file, relative to the experiment file"}}},
      [] { return lua::make_lua_object_behaviour(); });
  r.add_builtin(
      {PluginKind::kLogWriter,
       "frames",
       "binary frame log: zstd-compressed columns with a seek index (docs/log-format.md)",
       {{"path", "string", "", "output file"}, {"every", "integer", "1", "log every k ticks"}}});
  r.add_builtin(
      {PluginKind::kLogWriter,
       "deeco",
       "DEECo playground text log, in the grammar its program writes and reads "
       "(docs/log-format.md)",
       {{"path", "string", "", "output file"}, {"every", "integer", "1", "log every k ticks"}}});
  register_builtin_rewards(r);
  register_builtin_layers(r);
}

}  // namespace fleetsim
