// The ARGoS report's diffusion experiment (section 5, figures 4 and 5), built in memory: a
// square arena divided into rooms by a bitmap, N e-pucks placed uniformly at random, the
// diffusion controller, and E kinematics2d engines partitioning the arena as a grid. Shared by
// bench/diffusion, bench/proximity and the bench_smoke integration test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/diagnostics.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim::bench {

/// What a run of the benchmark scene is made of.
struct DiffusionSceneOptions {
  std::int64_t robots = 1000;
  int threads = 1;
  int engines = 1;          ///< 1, 2, 4, 8 or 16 (the report's F_E partitions)
  double seconds = 60;      ///< simulated seconds
  bool log_frames = false;  ///< write a frame log every tick into the scene directory
  std::uint64_t seed = 1;
  std::string controller = "diffusion";  ///< controller type (e.g. random_walk, lua, a plug-in)
  std::string script;  ///< for controller "lua": the script's absolute path
  std::string engine = "kinematics2d";  ///< physics engine type of every region
  std::string rule;  ///< the diffusion controller's rule attribute ("" = its default)
  int sub_steps = 0;  ///< dynamics2d's sub_steps attribute (0 = its default)
  std::string loop_functions;  ///< a loop functions type (e.g. tag_on_contact), or none
};

/// Side of the square arena, metres: 40 m up to 100,000 robots, then growing so the density
/// stays that of 100,000 robots in 40 m x 40 m.
double arena_side_m(std::int64_t robots);

/// Columns x rows of the engine grid for E engines (F_1: 1x1, F_2: 2x1, F_4: 2x2, F_8: 4x2,
/// F_16: 4x4); false when E is not one of those.
bool engine_grid(int engines, int& columns, int& rows);

/// Writes the rooms bitmap (the layout of scripts/make-room-bitmap.py, `pixels` square, black =
/// wall) as an 8-bit grey PNG. Returns false when the file cannot be written.
bool write_rooms_png(const std::string& path, int pixels);

/// The experiment file's text; the bitmap is referenced as `rooms.png` and the log as
/// `diffusion.flog`, both relative to the directory the text is parsed in.
std::string diffusion_experiment_xml(const DiffusionSceneOptions& options);

/// Writes the bitmap into `directory` and parses the experiment as if it were a file there,
/// with the built-in plug-ins. Problems go to `diags`. `defer_placement`: the robots are placed
/// by the run (ExperimentOverrides::defer_placement), as `fleetsim run` on several processes does.
std::optional<Experiment> make_diffusion_experiment(const DiffusionSceneOptions& options,
                                                    const std::string& directory,
                                                    PluginRegistry& registry, Diagnostics& diags,
                                                    bool defer_placement = false);

}  // namespace fleetsim::bench
