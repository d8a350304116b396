// ROS 2 velocity commands as inputs of the run: where they land, and their record.
//
// A command (geometry_msgs/Twist on /NS/ROBOT/cmd_vel) takes effect at a tick boundary:
// before the step from tick T, each robot driven from ROS 2 takes the newest command
// received, and moves at that speed until another is taken. The bridge records every command
// it takes with its tick, one a line:
//
//   TICK ROBOT LINEAR_X ANGULAR_Z      e.g.  42 pilot 0.1 0
//
// (ROBOT the robot's id in the experiment, the speeds in m/s and rad/s, printed so that they
// read back to the same bits; `#` starts a comment.) `fleetsim run EXP --replay-inputs FILE`
// lands them at the same boundaries without DDS, so the run repeats the ROS-driven one bit for
// bit (docs/ros2.md, "Repeatability").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"
#include "fleetsim/parts.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {
class Simulation;
}

namespace fleetsim::ros2 {

/// One velocity command taken at a tick boundary.
struct VelocityInput {
  Tick tick = 0;         ///< taken before the step from this tick
  std::string robot;     ///< the robot's id in the experiment
  double linear_x = 0;   ///< m/s, forward
  double angular_z = 0;  ///< rad/s, counter-clockwise
  int line = 0;          ///< in the file it was read from (0: taken live)
};

/// The line recording `i` (without newline): numbers in their shortest exact form.
std::string format_velocity_input(const VelocityInput& i);

/// Reads a recorded inputs file. Every problem goes to `diags` as file:line; nullopt if any.
std::optional<std::vector<VelocityInput>> load_velocity_inputs(const std::string& path,
                                                               Diagnostics& diags);

/// A command as process 0 announces it to every process of a run on several processes
/// (Simulation::announce_interventions), one line: `ros2-cmd_vel ID TICK ROBOT LINEAR_X
/// ANGULAR_Z` (ID the robot's entity id, the rest as recorded). Never mixed up with an
/// intervention's line, which starts with its tick.
std::string format_announced_input(EntityId id, const VelocityInput& i);
/// True for a line format_announced_input() wrote (the others are interventions).
bool is_announced_input(const std::string& line);
/// Reads one such line back; false if it is not one.
bool parse_announced_input(const std::string& line, EntityId& id, VelocityInput& out);

/// Velocity commands turned into the robots' command columns: a kind with a differential
/// drive gets wheel speeds v -/+ w * axle_length / 2 (the drive clamps them), any other kind
/// its body's speed_cmd and turn_cmd. A robot keeps its last command. Used by the bridge
/// (live) and by --replay-inputs, so that both write the same bits at the same boundary, and
/// on a run on several processes by every process for the robots whose controller it runs
/// (a robot that changes process keeps its command). Called between steps, from the thread
/// that steps.
class VelocityDriver {
 public:
  explicit VelocityDriver(Simulation& sim) : sim_(sim) {}
  /// From the next step on, `robot` moves at `input`'s speeds. False when the run has no robot
  /// of that id.
  bool take(const VelocityInput& input);
  /// The same for robot `id`, held by this process or not (several processes: every process
  /// keeps every command, and writes those of the robots it runs).
  void take(EntityId id, double linear_x, double angular_z);
  /// Before each step: every robot that took a command gets it written into its columns.
  void apply();

 private:
  struct Drive {
    ColumnHandle wheels = kNoColumn;
    double axle_m = 0;
  };
  const Drive& drive_of(std::uint16_t kind);
  std::uint32_t row_of(const std::string& robot);

  Simulation& sim_;
  std::map<std::uint16_t, Drive> drives_;
  std::map<std::string, std::uint32_t> rows_;  // robot id -> row, refreshed when rows change
  std::size_t rows_for_ = static_cast<std::size_t>(-1);
  struct Speed {
    double linear = 0, angular = 0;
  };
  std::map<EntityId, Speed> commanded_;  // (ordered: the same write order every run)
};

/// --replay-inputs: lands the recorded inputs at their ticks. Throws RunError naming the file
/// and line for a robot the run does not have.
class InputReplay {
 public:
  InputReplay(std::string path, std::vector<VelocityInput> inputs)
      : path_(std::move(path)), inputs_(std::move(inputs)) {}
  /// Before each step.
  void before_step(Simulation& sim);

 private:
  std::string path_;
  std::vector<VelocityInput> inputs_;
  std::size_t next_ = 0;
  std::optional<VelocityDriver> driver_;
};

}  // namespace fleetsim::ros2
