// Experiment files (XML, shaped like ARGoS's .argos): parsed, checked in full, and turned into
// a WorldModel and an initial WorldState. See docs/experiment-format.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <map>
#include <utility>

#include "core/diagnostics.hpp"
#include "fleetsim/plugin.hpp"
#include "log/log_writer.hpp"
#include "scenario/learning.hpp"
#include "scenario/robot_assembly.hpp"
#include "scenario/robot_plan.hpp"
#include "world/world.hpp"

namespace fleetsim {

struct LogSpec {
  std::string path;
  log::LogFormat format = log::LogFormat::kFrames;
  std::int64_t every = 1;
  SourceLocation where;
};

/// Command-line values that replace the file's.
struct ExperimentOverrides {
  std::optional<int> threads;
  std::optional<std::uint64_t> seed;
  std::optional<double> length_s;
  std::optional<std::string> log_path;  ///< replaces the file's <log> elements; "" = no log
  std::optional<log::LogFormat> log_format;
  /// A bound on the random placement tries of all <distribute> elements together; the file
  /// is refused when placing its robots would take more. Unset for users (a file asking for
  /// millions of robots takes seconds to place, by design); the fuzz harness sets it so that
  /// every input is checked in bounded time.
  std::optional<std::int64_t> max_placement_tries;
  /// The random placements are planned but not placed (Experiment::robot_plan): a process of
  /// a partitioned run places only the tiles near its domain (docs/distributed.md).
  bool defer_placement = false;
  /// ... for swarms of at least this many robots (smaller ones are placed at load: their
  /// domains then balance robot by robot, not tile by tile).
  std::size_t defer_placement_from = 20'000;
  /// The load keeps the robots' placement (Experiment::placement and ::unplaced), so that the
  /// run can be reset with another seed (Simulation::reset(seed)). Costs one copy of the
  /// world before its robots (arena and objects) and of the plan.
  bool keep_placement = false;
};

/// Which robots an ensemble's `coordinators` or `members` attribute selects: all, those of a
/// kind, or those with a tag (docs/experiment-format.md, <ensembles>).
struct ComponentSelector {
  /// Robots: all, of a kind, of a tag; objects: all, of a class.
  enum class By : std::uint8_t { kAll, kKind, kTag, kObjects, kClass } by = By::kAll;
  std::string value;       ///< the kind's name, the tag, or the class
  std::uint16_t kind = 0;  ///< kKind: the kind's index; kClass: the class's index
  bool objects() const { return by == By::kObjects || by == By::kClass; }
};

/// One <ensemble> element: its plug-in instance (initialised at load) and how it selects.
struct EnsembleDecl {
  std::string type;
  Params params;
  std::int64_t period = 1;  ///< runs at the start of the ticks t with t % period == 0
  ComponentSelector coordinators, members;
  double within_m = 0;  ///< > 0: members within this distance of the coordinator (spatial grid)
  SourceLocation where;
  std::unique_ptr<Ensemble> instance;
};

/// One <behaviour> element of <controllers>: an object behaviour's type and parameters.
struct ObjectBehaviourDecl {
  std::string id;    ///< the name objects refer to (<object behaviour="...">)
  std::string type;  ///< registry name, e.g. "lua"
  Params params;
  SourceLocation where;
};

/// An object that runs a behaviour: its instance, made and initialised at load.
struct ObjectWithBehaviour {
  EntityId object = kNoEntity;
  std::uint16_t behaviour = 0;  ///< index into Experiment::behaviours
  std::unique_ptr<ObjectBehaviour> instance;
};

/// One <layer> element: an environment layer's plug-in instance (initialised at load).
struct LayerDecl {
  std::string name;  ///< what controllers read it by
  std::string type;  ///< registry name, e.g. "bitmap"
  Params params;
  double initial = 0;  ///< every robot's values before the first compute
  SourceLocation where;
  std::unique_ptr<Layer> instance;
};

/// A loaded, checked experiment, ready to run.
struct Experiment {
  std::string path;
  std::shared_ptr<WorldModel> model;
  WorldState state;
  int threads = 1;
  std::vector<LogSpec> logs;
  std::string loop_functions;                          ///< registry name, "" = none
  std::vector<EnsembleDecl> ensembles;                 ///< in file order
  std::vector<ObjectBehaviourDecl> behaviours;         ///< in file order
  std::vector<ObjectWithBehaviour> object_behaviours;  ///< by increasing object id
  std::vector<LayerDecl> layers;                       ///< in file order
  SourceLocation processing_time_where;  ///< <framework processing_time>, for messages
  Params loop_params;
  /// Every kind's parts, set up (their columns are in `state`), by kind index.
  std::vector<AssembledKind> parts;
  /// Shared controllers' instances, initialised, by (controller index, kind index).
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::unique_ptr<Controller>> shared_controllers;
  /// One physics engine per type in the run, by WorldModel::engine_types index, set up (their
  /// columns are in `state`).
  std::vector<std::unique_ptr<PhysicsEngine>> engines;
  /// <distribution>: per process, the engine regions (indices into model->engines) it
  /// simulates in a run on several processes; empty = automatic (docs/distributed.md).
  std::vector<std::vector<int>> distribution;
  /// <distribution> affinities (kinds="...", robots="..."): per kind index and per robot id,
  /// the process running those robots' controllers, or -1; empty when none.
  std::vector<int> kind_affinity, robot_affinity;
  SourceLocation distribution_where;
  /// The world as the load makes it, before any tick, whether it placed the robots or deferred
  /// their placement: a hash of the state before the placement and of the placement's plan
  /// (RobotPlan::fingerprint). 0 for worlds the load does not place by a plan (.argos and
  /// DEECo files): their state's hash says it. (A checkpoint's identity: sim/checkpoint.hpp.)
  std::uint64_t world_fingerprint = 0;
  /// Set when the load deferred the placement (ExperimentOverrides::defer_placement): `state`
  /// then holds no robot, and RobotPlan::place adds them (all, or a process's tiles).
  std::shared_ptr<const RobotPlan> robot_plan;
  /// ExperimentOverrides::keep_placement: the robots' placement (its seed the load's) and the
  /// world as it was before it placed them; null otherwise, for a deferred placement, and for
  /// .argos and DEECo files (placed by their own readers).
  std::shared_ptr<const RobotPlan> placement;
  std::shared_ptr<const WorldState> unplaced;
  /// <learning> (what Python's fleetsim.Env observes, commands and rewards), checked at load.
  LearningSpec learning;
};

/// Reads and checks `path`. Loads the plug-in libraries it names into `registry`. Every
/// problem goes to `diags`; returns nullopt when there is any error.
std::optional<Experiment> load_experiment(const std::string& path, PluginRegistry& registry,
                                          const ExperimentOverrides& overrides, Diagnostics& diags);
/// Same, from text (tests); relative paths resolve against the current directory.
std::optional<Experiment> parse_experiment(const std::string& text, const std::string& name,
                                           PluginRegistry& registry,
                                           const ExperimentOverrides& overrides,
                                           Diagnostics& diags);

/// A robot's name and pose (ControllerSetup::robot_name, start_pose) when its controller is made.
struct RobotStart {
  std::string name;
  std::array<double, 4> pose{};
  std::size_t pose_size = 0;  ///< 3, or 4 for a flyer; 0: no pose
};
RobotStart robot_start(const WorldModel& model, const WorldState& state, std::size_t row);

/// Creates controller `c` for a robot of kind `k` (or, for a shared controller, for the kind:
/// robot = kNoEntity) and initialises it. Throws SetupError when the controller asks for a
/// part the kind lacks or rejects its input, or what the controller's init throws. `start`
/// is what ControllerSetup tells it of its robot (robot_start() makes it for a robot).
std::unique_ptr<Controller> make_controller(const WorldModel& model,
                                            const std::vector<AssembledKind>& parts,
                                            const PluginRegistry& registry, std::uint16_t c,
                                            std::uint16_t k, EntityId robot,
                                            const RobotStart& start = {});

}  // namespace fleetsim
