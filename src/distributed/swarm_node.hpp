// A swarm experiment as a node of a federation (docs/federation-format.md, "Swarm nodes";
// docs/federate-api.md): <node name="swarm" experiment="swarm.xml"> runs the experiment tick
// by tick on the node's flows. External robots (MORSE's ExternalObject: robots another
// program drives) have the `external` controller; the federation drives them:
//  - an input without `robot` takes poses (a robot flown by another program's flight model),
//    placed at the first tick that starts at or after the message's timestamp;
//  - an input with robot="ID" takes that robot's actuator commands (wheel speeds, a flyer's
//    velocity, LEDs, ...), which the swarm's own physics then applies from that tick on;
//  - an output without `robot` sends every robot's pose; one with robot="ID" sends that
//    robot's sensor readings of the last tick simulated.
// With processes="N" the experiment runs on N processes as `fleetsim run --processes N`
// spreads it; the node is process 0, which forwards each tick's poses and commands to the
// others and gets the named robots' readings back (swarm_node.cpp, docs/distributed.md).
// The three message layouts are below; all are little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"
#include "federation/federation_file.hpp"
#include "fleetsim/parts.hpp"

namespace fleetsim::distributed {

/// Makes federation nodes with an `experiment` run it (federation::swarm_factory()), checks
/// their declarations before a federation starts (federation::swarm_check()), and runs the
/// processes 1..N-1 of those with processes="N" (federation::swarm_process_main()).
void install_swarm_nodes();

/// Loads swarm node `node`'s experiment and checks the node against it: its flows' kinds and
/// times, its processes against the experiment's regions and <distribution>, and that every
/// robot its ports name exists and is external. Every problem goes to
/// `diags` as FILE:LINE: error (the experiment's own errors at their lines in it).
void check_swarm_node(const federation::Federation& fed, std::size_t node, Diagnostics& diags);

/// A pose message's entry (the payload of a swarm node's pose inputs and outputs).
struct RobotPose {
  std::string name;  ///< the robot's id in the experiment
  double x = 0, y = 0, z = 0, theta = 0;
};
/// Payload: u32 n, then n x (u32 length, the name's bytes, f64 x, y, z, theta).
std::vector<std::uint8_t> encode_poses(const std::vector<RobotPose>& poses);
/// Throws std::runtime_error naming what does not fit.
std::vector<RobotPose> decode_poses(const std::vector<std::uint8_t>& payload);

/// A command message's entry: what a controller would write into one actuator of the robot
/// (fleetsim::ActuatorView), as bytes: its values as f64, then its colours as 4 bytes each
/// (r, g, b, a), then its data bytes. E.g. differential_drive: f64 left, right wheel speeds
/// (m/s), 16 bytes; quadrotor_speed: f64 vx, vy, vz (m/s), yaw rate (rad/s), 32 bytes.
struct ActuatorCommand {
  std::string actuator;  ///< the actuator's name in the robot's kind
  std::vector<std::uint8_t> bytes;
};
/// `values` as the bytes of an actuator command (f64 each).
std::vector<std::uint8_t> command_values(const std::vector<double>& values);
/// Payload: u32 n, then n x (u32 length, the actuator's name, u32 length, the command's bytes).
std::vector<std::uint8_t> encode_commands(const std::vector<ActuatorCommand>& commands);
/// Throws std::runtime_error naming what does not fit.
std::vector<ActuatorCommand> decode_commands(const std::vector<std::uint8_t>& payload);

/// One sensor's readings, as a controller of the robot sees them (fleetsim::SensorView).
struct SensorReadings {
  std::string name, type;     ///< in the kind, and the registry's type
  bool enabled = true;        ///< false: a sensor switched off (cameras)
  float scalar = 0;           ///< e.g. collision: the degree of realization
  std::vector<float> values;  ///< e.g. proximity: one per ray, 0 (nothing) to 1 (touching)
  std::vector<float> angles;  ///< one per value (or per contact), rad CCW from the heading
  std::vector<double> reals;  ///< e.g. positioning: x, y, theta (and z for a flyer)
  struct Message {            ///< range and bearing: a message received
    std::string sender;       ///< the sending robot's id ("" if it has left the run)
    float range_m = 0, horizontal_bearing = 0, vertical_bearing = 0;
    std::vector<std::uint8_t> data;
  };
  std::vector<Message> messages;
  std::vector<Blob> blobs;  ///< cameras: the lit LEDs seen
};
/// A readings message: the robot's sensors of one tick, in its kind's order.
struct RobotReadings {
  std::int64_t tick = -1;  ///< the tick whose sense phase took them; -1: none yet (no sensors)
  std::vector<SensorReadings> sensors;
};
/// Payload: i64 tick, u32 n, then n sensors, each: u32 length, name; u32 length, type;
/// u8 enabled; f32 scalar; u32 k, k x f32 values; u32 k, k x f32 angles; u32 k, k x f64 reals;
/// u32 k, k x (u32 length, sender, f32 range, f32 horizontal bearing, f32 vertical bearing,
/// u32 length, data bytes) messages; u32 k, k x (u8 r, g, b, a, f32 distance, f32 angle)
/// blobs.
std::vector<std::uint8_t> encode_readings(const RobotReadings& readings);
/// Throws std::runtime_error naming what does not fit.
RobotReadings decode_readings(const std::vector<std::uint8_t>& payload);

}  // namespace fleetsim::distributed
