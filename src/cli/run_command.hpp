// `fleetsim run`: one run path for one process and several (threads, child processes, several
// machines). What differs is only how the processes are started (distributed/swarm_run.hpp);
// the loop's hooks (progress, pacing, Ctrl-C), the summary, the error and the command that
// resumes a failed run are the same code.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fleetsim/plugin.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim::cli {

/// The options of `fleetsim run` (and `check`, which takes its files and overrides).
struct RunArgs {
  std::vector<std::string> files;
  std::optional<int> threads;
  std::optional<std::uint64_t> seed;
  std::optional<double> length;
  std::optional<std::string> log_path;
  std::string log_format;
  bool quiet = false;
  bool json = false;
  // Several processes (docs/distributed.md).
  int processes = 1;
  std::string transport = "shm";
  std::string sync = "dsaam";
  std::uint32_t jitter_us = 0;
  // Several machines (Gazebo's flags).
  std::string network_role;
  int network_secondaries = 0;
  std::string listen, primary;
  double connect_timeout = 10;
  std::string secret_key, public_keys, primary_key;
  // Checkpoints (docs/checkpoints.md).
  double checkpoint_every = 0;
  std::string checkpoint_dir = "checkpoints";
  std::string resume;
  // Pacing against the wall clock (ROS 2 nodes and people watching a live run).
  std::string time_mode = "afap";
  double speedup = 1.0;
  // The live view (docs/view-format.md, "Live view").
  bool view = false;
  int view_port = 8080;
  std::string view_host = "127.0.0.1";
  bool view_paused = false;
  bool view_steer =
      false;  ///< --view-steer (several processes: Distribution::every_robot_everywhere)
  std::string view_speed = "max";
  /// Pictures while running (`--render-png`, `--render-video`; docs/view-format.md).
  std::string render_png, render_video, render_size = "1280x720", render_config;
  std::int64_t render_every = 1;
  double render_fps = 0;
  /// Interventions to replay (`--interventions`), and where live ones are recorded.
  std::string interventions;
  std::string record_interventions;
  // ROS 2 (docs/ros2.md).
  bool ros2 = false;
  int ros2_domain = 0;
  std::string ros2_namespace = "fleetsim";
  std::string ros2_distro = "jazzy";
  std::vector<std::string> ros2_robots;  ///< ids, kind:KIND or all; empty: the external robots
  double ros2_rate = 0;                  ///< Hz of simulated time; 0: every tick
  /// Where the ROS 2 commands taken are recorded; unset: EXPERIMENT-NAME.ros2-inputs in the
  /// current directory (written at the first command), "": nowhere.
  std::optional<std::string> record_inputs;
  std::string replay_inputs;  ///< recorded ROS 2 commands to land at their ticks
};

using LoadedFiles = std::vector<std::pair<Experiment, std::unique_ptr<PluginRegistry>>>;

/// Loads every file of `a` with its overrides; prints all problems of all files. nullopt if
/// any had errors.
std::optional<LoadedFiles> load_all(const RunArgs& a);

/// `fleetsim run`; returns the exit status.
int run_command(const RunArgs& a);

/// The command that goes on from `checkpoint` as the run of `file` with options `a` would have
/// gone on: the same file, and every option the run was given that the world or the run's
/// shape depends on (docs/checkpoints.md, "Resuming"), shell-quoted. `program` starts it.
std::string resume_command(const std::string& program, const RunArgs& a, const std::string& file,
                           const std::string& checkpoint);

}  // namespace fleetsim::cli
