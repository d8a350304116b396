// One run of one experiment: the step, its phases, the plug-ins and the logs.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/thread_pool.hpp"
#include "fleetsim/loop_functions.hpp"
#include "fleetsim/plugin.hpp"
#include "log/log_writer.hpp"
#include "physics/kinematics2d.hpp"
#include "physics/physics_world.hpp"
#include "robots/engine_world.hpp"
#include "scenario/experiment.hpp"
#include "sim/distribution.hpp"
#include "sim/ensembles.hpp"
#include "sim/process_rounds.hpp"
#include "world/world.hpp"

namespace fleetsim {

namespace distributed {
class TickRounds;
}  // namespace distributed

/// The phases of a step, in order. The same names appear in timings, errors and test hooks.
/// (kEnsembles runs between kPreStep and kSenseControl, on the ticks an ensemble is due; it is
/// listed last so that the other phases keep their numbers.)
enum class Phase { kPreStep, kSenseControl, kAct, kPhysics, kPostStep, kLog, kEnsembles };
inline constexpr int kPhaseCount = 7;
const char* phase_name(Phase p);

/// A failure during a run (tier 2): carries the context a user needs.
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Receives a checkpoint's saved state: the tick it ends, the world's hash, the bytes.
using CheckpointSink = std::function<void(Tick, std::uint64_t, std::vector<std::uint8_t>)>;

class Simulation final : private WorldAccess {
  /// The rounds of a run on several processes read and write the world and the bookkeeping
  /// below (which process runs and moves each robot, the per-row flags of the tick).
  friend class distributed::TickRounds;

 public:
  /// Takes the loaded experiment (its kinds' parts set up, shared controllers initialised);
  /// creates the thread pool, per-robot controllers, loop functions and log writers. Throws
  /// RunError (e.g. a log file cannot be created). `registry` must outlive the run.
  /// `distribution`: this process's share of a run on several processes (default: the whole
  /// run here). Per-robot controllers are made only for the robots of its regions.
  /// `resume`: a checkpoint's saved state (Checkpoint::state, sim/checkpoint.hpp) to go on
  /// from instead of the experiment's start; its logs are continued, not created. Throws
  /// RunError when the state does not fit the experiment.
  Simulation(Experiment experiment, const PluginRegistry& registry, Distribution distribution = {},
             const std::vector<std::uint8_t>* resume = nullptr);
  ~Simulation() override;

  /// Initialises loop functions and writes the header and frame 0 of every log.
  void start();
  /// One tick: pre-step, sense+control, act, physics, post-step, log.
  void step();
  /// Checkpoints (docs/checkpoints.md). Called on every process before start(); `write` gets
  /// the saved state of each checkpoint, on the first process only (checkpoint_sink()).
  /// start() then throws RunError, on the process given a `write`, if the loop functions or
  /// one of its per-robot controllers cannot save their state (a distributed run's start
  /// round checks every process's controllers).
  void enable_checkpoints(CheckpointSink write);
  /// Asks for a checkpoint of the world as it is between two steps (first process; the others
  /// learn of it from its next moves message, and it is taken one tick later). Taken at the
  /// start of a later step() on every process, before anything of that step.
  void request_checkpoint();
  /// Several processes, first process: `lines` (interventions, sim/interventions.hpp) go to
  /// every process with its next moves message, as a checkpoint's announcement does; each
  /// process then takes them with take_due_interventions() before its next step.
  void announce_interventions(const std::string& lines) { interventions_announced_ += lines; }
  std::string take_due_interventions() { return std::exchange(interventions_due_, {}); }
  /// Several processes, a process other than the first: `lines` (what became of the
  /// interventions it alone lands: a global of the script of a robot whose controller it runs)
  /// go to the first process with its next moves message; the first takes them with
  /// take_replies() after that step.
  void reply_to_first_process(const std::string& lines) { replies_out_ += lines; }
  std::string take_replies() { return std::exchange(replies_in_, {}); }
  /// Several processes, first process (the live view, while a page watches): every process
  /// is told with this tick's moves message, and the moves of the next tick then carry every
  /// robot to the first process, as on a tick a log keeps: the observer (observe_frames) gets
  /// the whole frame of the tick after next. Changes who receives rows, never the world.
  /// A run split over domains makes that frame in blocks instead (the frame log's, handed to the
  /// observer), and the first process does not take in every robot, unless `rows`: then the
  /// moves carry every robot's rows to it, so that it holds them (the ROS 2 bridge's
  /// /NS/poses reads them from the world).
  void request_whole_frame(bool rows = false) {
    whole_frame_requested_ = true;
    whole_rows_requested_ = whole_rows_requested_ || rows;
  }
  /// Hands the header and every tick's frame to `observer` (the live view, src/view/live_run.hpp)
  /// as to a log of its own, with `every` 1, beside the experiment's logs, and at finish() the
  /// world as it is then once more (the same tick as the last frame; an error may have stopped
  /// a step midway), then the observer's finish(). The frames' spans stay valid until the next
  /// step begins. On several processes, on the first process only, and the frames are those of
  /// the start, of the ticks a log keeps and of those request_whole_frame() asked for (the
  /// first process then holds the whole world's logged columns), and finish()'s after
  /// gather_state(). Read-only on the world: a run
  /// observed gives the same bits as one not. Not in checkpoints. Call before start();
  /// `observer` must outlive the run.
  void observe_frames(log::LogWriter* observer) { observer_ = observer; }
  /// Keeps a copy of the world as it stands at tick 0, after the loop functions' init (the
  /// logs' first frame), for reset() (on several processes, Distribution::interventions does,
  /// on every process). Call before start(). Costs one copy of the world's
  /// columns, kept for the run.
  void enable_reset() { reset_enabled_ = true; }
  /// Why reset(seed) cannot be done now ("" when it can): not enabled, not started, a run on
  /// several processes without Distribution::interventions, a run resumed from a checkpoint (its
  /// start is not in memory), a new seed without the experiment's placement
  /// (ExperimentOverrides::keep_placement).
  std::string reset_problem(std::optional<std::uint64_t> seed = std::nullopt) const;
  /// The experiment's reset, as ARGoS's, between two steps: the world goes back to its state
  /// at tick 0 (enable_reset()), the per-robot controllers of the robots there are reset()
  /// (those of robots added since are destroyed, those of robots removed since are made and
  /// init() again), then the shared controllers' reset(), then the loop functions'
  /// reset(world). The logs start again (each file is cut and gets its header and the frame of
  /// tick 0 after the reset), and the observer gets the header and that frame once more. Throws
  /// RunError when reset_problem() is not empty, or from a controller's or the loop
  /// functions' reset().
  ///
  /// With a `seed` other than the run's (ARGoS's CSimulator::Reset(seed)): every later draw
  /// uses `seed`, and the world at tick 0 is the one loading the experiment with that seed
  /// gives (its robots placed with it), before any loop functions' init; the loop functions'
  /// reset() then does what the episode needs (as ARGoS's do). For an experiment without
  /// loop functions, or whose loop functions' reset() does to the world what their init()
  /// does, and controllers whose reset() brings them back to their state after init() (the
  /// built-in ones), the run from there is, bit for bit, a new run of that seed. A later
  /// reset() without a seed starts from that world too.
  void reset(std::optional<std::uint64_t> seed = std::nullopt);
  /// True when the experiment's length is reached or the loop functions ended the run.
  bool done() const;
  /// Ends the run: loop functions' destroy, logs completed. Idempotent; called on errors too.
  void finish();

  const WorldModel& model() const { return *model_; }
  const WorldState& state() const { return state_; }
  /// Between steps: writes `values` into robot `row`'s f64 command column `column` (an
  /// actuator's, or the body's speed_cmd and turn_cmd), as a program outside the run does for
  /// robots whose controller is `external` (their controller leaves the commands as set).
  void set_command(std::uint32_t row, ColumnHandle column, std::span<const double> values) {
    auto* data = static_cast<double*>(state_.robots.data(column));
    const std::size_t width = state_.robots.desc(column).width;
    for (std::size_t i = 0; i < values.size() && i < width; ++i) data[row * width + i] = values[i];
  }
  /// Places robot `id` between steps, as loop functions' move_robot does (a robot whose pose
  /// another program computes: a federation's swarm node), and sets its altitude when the
  /// run has a `z` column. Throws RunError for a position outside the arena.
  void place_robot(EntityId id, Vec2 p, double heading, double z);
  /// Between steps, as loop functions' add_robot and remove_robot (WorldAccess) do: the live
  /// view's interventions (sim/interventions.hpp). The added robot gets the next entity id, the
  /// empty tag, and a controller made and init() for it; returns its id. Throw RunError as
  /// those do (an unknown kind or controller, a position outside the arena, no such robot).
  EntityId add_robot_between_steps(const std::string& kind, const std::string& controller,
                                   Vec2 position, double heading) {
    return add_robot(kind, controller, position, heading, "");
  }
  void remove_robot_between_steps(EntityId id) { remove_robot(id); }
  /// Between steps: robot `id`'s own controller (a per-robot one, such as a Lua script's), or
  /// nullptr (no such robot, or a controller shared by robots: the built-in ones).
  Controller* controller_between_steps(EntityId id) const {
    return state_.robot_index(id) == kNoIndex ? nullptr : instance(id);
  }
  /// Several processes: each tick's moves carry only the robots near a domain's border (on the
  /// ticks no log keeps), so a process's rows of the others may be old.
  bool sends_border_robots_only() const { return border_halo_; }
  /// The process running robot `id`'s controller now (0 on one process), or -1 (no such robot).
  int controller_process(EntityId id) const {
    const std::uint32_t row = state_.robot_index(id);
    return row == kNoIndex ? -1 : distributed() ? host_of(row) : 0;
  }
  /// From the next step on, robot `id`'s f64 command column `column` (an actuator's) holds
  /// `values` once its controller has run, replacing what it commanded, until release_command(),
  /// the robot's removal or a reset: the live view's `command` intervention.
  void hold_command(EntityId id, ColumnHandle column, std::vector<double> values) {
    held_[{id, column}] = std::move(values);
  }
  /// Returns false when nothing was held there.
  bool release_command(EntityId id, ColumnHandle column) { return held_.erase({id, column}) > 0; }
  /// The commands held now: (robot id, column) -> values.
  const std::map<std::pair<EntityId, ColumnHandle>, std::vector<double>>& held_commands() const {
    return held_;
  }
  /// The world, writable between steps: for bindings that set actuator commands (python/).
  WorldState& state_between_steps() { return state_; }
  int threads() const { return pool_.size(); }
  /// Wall seconds spent in each phase so far.
  const std::array<double, kPhaseCount>& phase_seconds() const { return phase_seconds_; }
  /// Member pairs the ensembles evaluated after the last tick (0 without ensembles).
  std::uint64_t ensemble_pairs() const { return ensembles_ ? ensembles_->last_pairs() : 0; }
  /// Robot-steps made by this process (its regions' robots only, in a distributed run).
  std::uint64_t robot_steps() const { return robot_steps_; }
  /// A distributed run, after its last step and on every process: brings every robot's
  /// columns from the process that simulated it, so state() and its hash are the whole
  /// world's (as one process would have it). Nothing to do on one process.
  void gather_state();
  /// After gather_state(): the whole world's hash and robot count, as one process would have
  /// them (state() is then the whole world's but on a process that holds only its part).
  std::uint64_t world_hash() const { return world_hash_; }
  std::size_t world_robot_count() const { return world_robots_; }
  /// This process holds only its robots and the others within reach of its domain
  /// (Distribution::partition_storage, when the run allows it; set up by start()).
  bool partitioned() const { return partitioned_; }
  const Distribution& distribution() const { return dist_; }
  const ExchangeStats& exchange_stats() const { return xstats_; }
  /// Test hook: called after every phase with read-only access.
  std::function<void(Phase, const WorldState&)> on_phase;

 private:
  struct Worker;
  void run_phase(Phase p, const std::function<void()>& body);
  void sense_and_control();
  /// Objects with behaviour (fleetsim/object_behaviour.hpp): each steps on this thread, in id
  /// order, after the robots' controllers of the round.
  void step_objects();
  /// Environment layers (fleetsim/layer.hpp): each computes on this thread, in file order,
  /// once per tick before the ensembles and the sensing.
  void compute_layers();
  /// Interns the tags the controllers set in this round, in robot order; returns them
  /// instead when the run is on several processes (they are exchanged first).
  std::vector<std::pair<std::uint32_t, std::string>> apply_controller_tags();
  void act();
  void write_logs();
  /// write_logs() of a split log (split_log_).
  void write_split_logs();
  /// The logged columns of `store`: those the body and the parts declared `logged`, in
  /// declaration order (strings never: names are in the entity table).
  static void logged_columns(const ColumnStore& store, std::vector<ColumnDesc>& descs,
                             std::vector<ColumnHandle>& handles);
  /// The logged columns of the world as it is now (spans on the store: valid until it changes).
  log::LogFrameView frame_view() const;
  /// Every log's header (and the live view's); `robots`: the robots present as the header
  /// stores them, `count` of them, when this process holds its part only
  /// (ProcessRounds::log_start).
  void write_headers(std::vector<std::uint8_t>* robots = nullptr, std::uint64_t count = 0);
  /// Gives the observer (observe_frames) header `h` (its `every` set to 1).
  void begin_observer(log::LogHeader h);
  void make_controller_instance(std::size_t robot_index);
  /// The log header of the world as it is; sets the logged column lists. `robots`: with the
  /// robots this process holds.
  log::LogHeader make_header(bool robots = true);
  // Checkpoints (simulation_checkpoint.cpp).
  /// What a resumed run restores in start(), beyond the world (restore_world()).
  struct Resumed {
    /// Per-robot controllers' saved state, by robot id (increasing).
    std::vector<std::pair<EntityId, std::vector<std::uint8_t>>> controllers;
    bool has_loop = false;
    std::vector<std::uint8_t> loop;
    struct Log {
      std::string path;
      log::LogFormat format;
      log::LogMark mark;
    };
    std::vector<Log> logs;
  };
  /// Restores the world of a checkpoint's saved state; `part`: only the robots this process
  /// moves or may read (holds_part_only()), each part of the robots decoded alone.
  void restore_world(const std::vector<std::uint8_t>& saved, bool part);
  void resume_controllers_and_logs();
  /// A resumed run writes the logs the checkpointed run wrote: as many, in the same formats.
  void check_resumed_logs() const;
  void take_checkpoint();
  /// Saves `c`'s state into `out`; returns why it could not (empty when it did).
  static std::string save_controller(const Controller& c, std::vector<std::uint8_t>& out);
  /// Throws RunError naming a per-robot controller that cannot save its state, saying why
  /// it would have to (`need`).
  /// `pinned_ok`: robots pinned to one process by an affinity need not save (they never move).
  void refuse_unsavable_controllers(const std::string& need, const std::string& hint,
                                    bool pinned_ok = false) const;
  // Distributed runs (simulation_processes.cpp; their rounds: distributed/tick_rounds.hpp).
  bool distributed() const { return dist_.processes > 1; }
  /// The process that moves the robot this tick: its region's, or for a region split over
  /// the domains the one whose domain held it when the tick's handoff began.
  int process_of(std::uint32_t row) const {
    const EntityId id = state_.robot_id()[row];
    const int p = owner_.get(id);
    return p >= 0 ? p : owner_now(row);
  }
  /// The process that would move the robot from where it is now.
  int owner_now(std::uint32_t row) const {
    const int p = dist_.engine_process[state_.robot_engine()[row]];
    if (p >= 0) return p;
    return dist_.domains.at({state_.x()[row], state_.y()[row]});
  }
  /// Every robot's process from where it is (owner_), at the start of the handoff.
  void refresh_owners();
  /// Places the robots of a load that deferred them (Experiment::robot_plan): all, or on a
  /// process of a run that will be partitioned only those near its domain.
  void place_planned_robots();
  /// After the handoff: the per-row flags of the tick (runs_, mover_, shared_).
  void mark_rows();
  /// The process that should run the robot's sensors, controller and actuators: its
  /// affinity's (docs/distributed.md), else its region's.
  int host_of(std::uint32_t row) const {
    if (const int p = pinned_process(row); p >= 0) return p;
    return process_of(row);
  }
  /// The process the robot's affinity pins it to, or -1.
  int pinned_process(std::uint32_t row) const {
    if (!pinned_) return -1;
    const EntityId id = state_.robot_id()[row];
    if (id < dist_.robot_process.size() && dist_.robot_process[id] >= 0)
      return dist_.robot_process[id];
    const std::uint16_t k = state_.robot_kind()[row];
    return k < dist_.kind_process.size() ? dist_.kind_process[k] : -1;
  }
  void setup_distribution();
  /// Whether a robot at `p` may be read by this process's robots in the next tick: it lies
  /// within halo_reach() of this process's domain.
  bool within_reach(Vec2 p) const;
  /// Whether this run's moves may carry only the robots near another domain (halo_list_): a
  /// run split over domains with one region, no loop functions, no affinities, and parts that
  /// read other robots no farther than halo_reach() (the built-in ones).
  bool may_send_border_halo() const;
  /// A process of a run that will be partitioned, and that need not hold every robot at the
  /// start: it places (place_planned_robots), or restores from a checkpoint, only the robots
  /// within halo_reach() of its domain.
  bool holds_part_only() const;
  /// How far from another domain a robot's halo must reach it (sensing, contacts, one tick's
  /// motion).
  double halo_reach() const;
  /// What is wrong with `rows` of `columns` of `store` (empty when nothing): a real number
  /// that is not finite, or (`positions`: the robots' store) a position far outside the arena.
  std::string bad_value(const ColumnStore& store, std::span<const std::uint32_t> rows,
                        const std::vector<ColumnHandle>& columns, bool positions) const;

  // WorldAccess (for loop functions).
  Tick tick() const override { return state_.tick; }
  SimTime time_ns() const override { return state_.tick * model_->tick_period_ns; }
  std::uint64_t seed() const override { return model_->seed; }
  /// Every robot; per-process loop functions on several processes: this process's.
  std::vector<EntityId> robots() const override;
  Vec2 robot_position(EntityId id) const override;
  double robot_heading(EntityId id) const override;
  std::string robot_tag(EntityId id) const override;
  void set_robot_tag(EntityId id, const std::string& tag) override;
  Color robot_led(EntityId id) const override;
  int robot_contact_count(EntityId id) const override;
  void move_robot(EntityId id, Vec2 position, double heading) override;
  EntityId add_robot(const std::string& kind, const std::string& controller, Vec2 position,
                     double heading, const std::string& tag) override;
  void remove_robot(EntityId id) override;
  std::vector<EntityId> objects() const override {
    auto ids = state_.object_id();
    return {ids.begin(), ids.end()};
  }
  Vec2 object_position(EntityId id) const override;
  void set_object(EntityId id, Vec2 position, double size, const std::string& tag) override;
  EntityId add_object(const std::string& object_class, Vec2 position, double size,
                      const std::string& tag) override;
  void remove_object(EntityId id) override;
  void set_status(const std::string& status) override;
  void end_run() override;
  std::int64_t sum(std::int64_t mine) override;
  double min(double mine) override;
  double max(double mine) override;
  bool any(bool mine) override;
  bool all(bool mine) override;
  /// The robot's row; throws RunError naming `what` when there is no such robot, or when
  /// per-process loop functions (staging()) read or change a robot of another process.
  std::uint32_t checked_robot(EntityId id, const char* what) const;

  // Loop functions in the per-process form (LoopFunctions::per_process, simulation_loop.cpp).
  /// Inside one of their hooks: changes are staged, and applied after it on every process.
  bool staging() const { return loop_local_ && in_hook_; }
  /// Runs a loop-functions hook; per-process ones then exchange and apply their changes
  /// (`post_step`: the hook is post_step, after which is_finished is polled).
  void run_hook(const std::function<void()>& hook, bool post_step = false);
  /// Every process's staged changes, applied alike everywhere (in the order WorldAccess says).
  void apply_loop_changes(bool finished);
  /// One reduction: `op` and this process's 8 bytes; every process's, by process.
  std::vector<std::array<std::uint8_t, 8>> reduce(char op, std::array<std::uint8_t, 8> mine);
  LoopChanges staged_loop_;
  bool loop_local_ = false;  ///< the loop functions are in the per-process form
  bool in_hook_ = false;
  void check_robot_position(Vec2 p, double heading, const char* what) const;

  Experiment experiment_;
  const PluginRegistry& registry_;
  std::shared_ptr<const WorldModel> model_;
  WorldState& state_;
  ThreadPool pool_;
  SpatialIndex index_;
  EngineWorld world_;
  CorePhysicsWorld physics_;  ///< what the engines (experiment_.engines) step in
  RegionMigration migration_;
  /// <ensembles> (sim/ensembles.hpp); null when the experiment has none.
  std::unique_ptr<EnsembleRunner> ensembles_;
  bool index_fresh_ = false;  ///< the grid was built this tick already (for the ensembles)
  int round_ = 0;             ///< the round within the tick (<framework processing_time>)
  /// Where controllers find the knowledge columns (RobotIO::knowledge), refreshed each tick.
  KnowledgeColumns knowledge_;
  /// Where controllers find the layers' values (RobotIO::layer), refreshed each tick.
  KnowledgeColumns layer_columns_;
  /// Shared controllers by controller * kinds + kind (owned by experiment_), or null.
  std::vector<Controller*> shared_;
  /// By entity id, the robots with their own controller instance (a robot whose controller
  /// is shared across robots, such as the built-in ones, has none).
  IdMap<std::unique_ptr<Controller>> instances_;
  /// hold_command(): written after the controllers ran, before the act phase.
  std::map<std::pair<EntityId, ColumnHandle>, std::vector<double>> held_;
  void apply_held_commands();
  log::FrameLogOptions frame_log_options();
  Controller* instance(EntityId id) const {
    const auto* c = instances_.find(id);
    return c ? c->get() : nullptr;
  }
  std::vector<std::unique_ptr<Worker>> workers_;  ///< per-worker scratch
  ColumnHandle leds_ = kNoColumn;                 ///< for WorldAccess::robot_led
  /// The columns the frame logs carry, in header order (write_headers()).
  std::vector<ColumnHandle> logged_robot_columns_, logged_object_columns_;
  Distribution dist_;
  /// The rounds with the other processes (Distribution::make_rounds); null on one process.
  std::unique_ptr<ProcessRounds> rounds_;
  /// Per engine: 1 when this process simulates it (whole, or its domain's part of it).
  std::vector<std::uint8_t> owned_engine_;
  /// Per entity id: the process holding its controller, and the process moving it this tick
  /// (-1: not known). On a process holding only its part (make_maps_sparse) only the robots
  /// it holds have entries; those of the robots it runs are always right.
  IdMap<std::int16_t> host_{-1}, owner_{-1};
  /// A process that holds only its part of a partitioned run: no array by id sized to the
  /// whole swarm from now on (the id index, hosts, owners and controllers keep the robots held).
  void make_maps_sparse();
  /// The same, later: the robots this process no longer holds leave the maps.
  void forget_robots_not_held();
  /// Per row, for the tick (mark_rows): this process runs its sensors, controller and
  /// actuators; the process moving it; it is this process's and near another's domain.
  std::vector<std::uint8_t> runs_, shared_rows_;
  /// This process's rows within border_m (shared_list_) and halo_reach() (halo_list_, in
  /// border_halo_ runs) of another domain, increasing; and where mark_rows gathers them.
  std::vector<std::uint32_t> shared_list_, halo_list_;
  std::vector<std::vector<std::uint32_t>> shared_by_worker_, halo_by_worker_;
  std::size_t moving_count_ = 0;  ///< the robots this process moves this tick (mark_rows)
  bool border_halo_ = false;      ///< may_send_border_halo(), set up once
  bool partitioned_ = false;      ///< partitioned(), from start()
  bool checkpoints_ = false;      ///< enable_checkpoints() was called (on every process)
  bool resuming_ = false;         ///< the run goes on from a checkpoint
  /// This process placed only the robots near its domain (place_planned_robots).
  bool placed_part_ = false;
  double near_reach_ = 0;  ///< the parts' longest reach beyond a body (SpatialIndex::init)
  /// A load that deferred the placement: the plan's fingerprint and robots (the processes
  /// compare those at the start, having placed different parts).
  std::optional<std::pair<std::uint64_t, std::size_t>> planned_world_;
  /// A run resumed from a checkpoint: the checkpoint's world hash and robots (the processes
  /// compare those at the start, having restored different parts).
  std::optional<std::pair<std::uint64_t, std::size_t>> resumed_world_;
  /// A partitioned run's first process when it writes a log in the DEECo format: it holds
  /// every robot (the moves of a tick a log keeps carry every robot's row to it).
  bool holds_all_ = true;
  /// Every log of the run is a frame log (known on every process; set up once).
  bool frame_logs_only_ = true;
  /// A partitioned run whose logs are all frame logs: after the start, every process encodes
  /// the frame's robot blocks it writes and process 0 writes them (ProcessRounds::frame_blocks).
  bool split_log_ = false;
  std::uint64_t world_hash_ = 0;
  std::size_t world_robots_ = 0;
  double halo_reach_ = 0;
  std::vector<std::int16_t> mover_;
  ContactBorders borders_;  ///< the contact rounds of a run split over domains
  bool pinned_ = false;     ///< some robots have affinities (distributed only)
  /// Distributed: tags this process's robots set this tick (by row), interned after the
  /// moves round with every process's (ProcessRounds::moves).
  std::vector<std::pair<std::uint32_t, std::string>> staged_tags_;
  ExchangeStats xstats_;
  std::vector<std::int64_t> log_every_;  ///< every log's `every` (all processes; process 0 logs)
  /// A log keeps tick `t`.
  bool log_due(Tick t) const {
    for (std::int64_t every : log_every_)
      if (t % every == 0) return true;
    return false;
  }
  /// Every log of `logs` is a frame log (none is in the DEECo format).
  static bool frame_logs_only(const std::vector<LogSpec>& logs) {
    for (const LogSpec& spec : logs)
      if (spec.format != log::LogFormat::kFrames) return false;
    return true;
  }
  std::unique_ptr<LoopFunctions> loop_;
  std::vector<std::unique_ptr<log::LogWriter>> writers_;
  log::LogWriter* observer_ = nullptr;  ///< observe_frames()
  bool observed_ = false;               ///< the observer has had a frame
  std::array<double, kPhaseCount> phase_seconds_{};
  std::unique_ptr<Resumed> resumed_;  ///< what a resumed run restores in start()
  CheckpointSink checkpoint_write_;
  bool checkpoint_requested_ = false;    ///< first process: to announce in the moves
  bool checkpoint_due_ = false;          ///< every process: take one at the next step()
  std::string interventions_announced_;  ///< first process: announce_interventions()
  std::string interventions_due_;        ///< every process: take_due_interventions()
  std::string replies_out_;              ///< other processes: reply_to_first_process()
  std::string replies_in_;               ///< first process: take_replies()
  bool whole_frame_requested_ = false;   ///< first process: request_whole_frame(), to announce
  bool whole_frame_next_ = false;        ///< every process: the next moves carry every robot
  bool whole_rows_requested_ = false;    ///< first process: request_whole_frame(true)
  bool whole_rows_next_ = false;         ///< every process: ... as rows, even on a split run
  Tick whole_frame_tick_ = -1;           ///< the observer gets this tick's frame whole
  Tick view_blocks_tick_ = -1;  ///< a split run: the observer gets this tick's frame in blocks
  std::uint64_t robot_steps_ = 0;
  bool started_ = false, finished_ = false;
  bool reset_enabled_ = false;               ///< enable_reset()
  std::unique_ptr<WorldState> start_state_;  ///< the world at tick 0, for reset()
  /// (Re)creates the experiment's log writers (kCreate cuts an existing file).
  void open_logs(log::LogOpen open);
};

}  // namespace fleetsim
