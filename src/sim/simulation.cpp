#include "sim/simulation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <sstream>

#include "log/frame_log_writer.hpp"
#include "log/log_types.hpp"
#include "robots/body_parts.hpp"
#include "robots/deeco_wheels.hpp"
#include "robots/proximity_sensor.hpp"
#include "robots/range_and_bearing.hpp"

namespace fleetsim {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kPreStep:
      return "pre_step";
    case Phase::kSenseControl:
      return "sense_control";
    case Phase::kAct:
      return "act";
    case Phase::kPhysics:
      return "physics";
    case Phase::kPostStep:
      return "post_step";
    case Phase::kLog:
      return "log";
    case Phase::kEnsembles:
      return "ensembles";
  }
  return "?";
}

/// One worker's scratch for the sense+control phase: the views of the robot it is visiting,
/// and the tags its controllers set (interned in robot order after the phase).
struct Simulation::Worker final : TagSink {
  /// Views of up to kPartBatch robots: robot q's part j at [q * parts + j].
  std::vector<SensorView> sensors;
  std::vector<ActuatorView> actuators;
  std::array<RobotRef, kPartBatch> batch;
  std::uint32_t view_kind = 0xffffffffu;  ///< the kind whose views the first `fresh` rows hold
  std::size_t fresh = 0;
  std::vector<std::pair<std::uint32_t, std::string>> tags;
  void stage(std::uint32_t row, const std::string& tag) override { tags.emplace_back(row, tag); }
};

Simulation::Simulation(Experiment experiment, const PluginRegistry& registry,
                       Distribution distribution, const std::vector<std::uint8_t>* resume)
    : experiment_(std::move(experiment)),
      registry_(registry),
      model_(experiment_.model),
      state_(experiment_.state),
      pool_(experiment_.threads),
      world_(*model_, state_, index_),
      physics_(*model_, state_, index_, pool_),
      dist_(std::move(distribution)) {
  resuming_ = resume != nullptr;
  if (!experiment_.loop_functions.empty()) {
    const auto* f = registry.loop_functions_factory(experiment_.loop_functions);
    if (!f) throw RunError("loop functions '" + experiment_.loop_functions + "' have no factory");
    loop_ = (*f)();
    loop_local_ = loop_->per_process();
  }
  for (const auto& k : experiment_.parts) near_reach_ = std::max(near_reach_, k.near_reach_m);
  // (The index's reaches give the halo's, which a process placing only its part needs; until
  // it has placed them, its grid covers its domain only.)
  const bool deferred = static_cast<bool>(experiment_.robot_plan);
  const bool own_area = deferred && distributed() && dist_.domains.count() == dist_.processes;
  if (own_area) {
    const Domains::Box& own = dist_.domains.box(dist_.process);
    const Vec2 lo = model_->arena_min(), hi = model_->arena_max();
    const Vec2 a{std::clamp(own.min.x, lo.x, hi.x), std::clamp(own.min.y, lo.y, hi.y)};
    const Vec2 b{std::clamp(own.max.x, lo.x, hi.x), std::clamp(own.max.y, lo.y, hi.y)};
    index_.init(*model_,
                experiment_.robot_plan->total() / static_cast<std::size_t>(dist_.processes),
                near_reach_, std::make_pair(a, b));
  } else {
    index_.init(*model_, deferred ? experiment_.robot_plan->total() : state_.robot_count(),
                near_reach_);
  }
  pinned_ = dist_.has_affinities();
  // (A resumed run's robots are the checkpoint's: a deferred load's plan is not placed.)
  if (resume)
    restore_world(*resume, holds_part_only());
  else if (deferred)
    place_planned_robots();
  if (own_area && !placed_part_) index_.init(*model_, state_.robot_count(), near_reach_);
  setup_distribution();
  const std::size_t kinds = model_->kinds.size();
  shared_.assign(model_->controllers.size() * kinds, nullptr);
  for (auto& [ck, ctrl] : experiment_.shared_controllers)
    shared_[ck.first * kinds + ck.second] = ctrl.get();
  for (std::size_t i = 0; i < state_.robot_count(); ++i) make_controller_instance(i);
  if (!experiment_.ensembles.empty()) {
    if (dist_.processes > 1)
      throw RunError(experiment_.ensembles.front().where.file + ":" +
                     std::to_string(experiment_.ensembles.front().where.line) +
                     ": ensembles run on one process for now (give --processes 1; "
                     "docs/experiment-format.md, <ensembles>)");
    ensembles_ = std::make_unique<EnsembleRunner>(
        *model_, state_, experiment_.ensembles,
        EnsembleRunner::Hooks{[this](const std::string& s) { state_.status = s; },
                              [this] { state_.end_requested = true; }});
  }
  if (dist_.processes > 1 &&
      (model_->processing_time > 1 || !experiment_.object_behaviours.empty()))
    throw RunError(experiment_.path + ": " +
                   (model_->processing_time > 0 ? std::string("processing_time")
                                                : std::string("objects with behaviour")) +
                   " run on one process for now (give --processes 1; "
                   "docs/experiment-format.md)");
  if (resumed_) check_resumed_logs();
  open_logs(resumed_ ? log::LogOpen::kContinue : log::LogOpen::kCreate);
  std::size_t max_sensors = 0, max_actuators = 0;
  for (const auto& k : experiment_.parts) {
    max_sensors = std::max(max_sensors, k.sensors.size());
    max_actuators = std::max(max_actuators, k.actuators.size());
  }
  for (int w = 0; w < pool_.size(); ++w) {
    workers_.push_back(std::make_unique<Worker>());
    workers_.back()->sensors.resize(max_sensors * kPartBatch);
    workers_.back()->actuators.resize(max_actuators * kPartBatch);
  }
  leds_ = state_.robots.find(kViewerLedColumn);
  if (distributed() && !dist_.domains.empty()) {  // (once the index knows its reaches)
    border_halo_ = may_send_border_halo();
    halo_reach_ = halo_reach();
  }
}

void Simulation::place_planned_robots() {
  const auto plan = std::move(experiment_.robot_plan);
  planned_world_ = {plan->fingerprint(), plan->total()};
  // A process of a run that will be partitioned places only the tiles within the halo's
  // reach of its domain (partition() then drops the robots beyond it, as after a whole load).
  // The first process places every robot when it writes a DEECo log or shows the run (frame
  // logs are written in blocks: it gathers the header's robots after the start instead).
  std::vector<std::uint8_t> mine;
  const bool part = holds_part_only();
  if (part) {
    const double reach = halo_reach();
    const Domains::Box& own = dist_.domains.box(dist_.process);
    const TileGrid& g = plan->grid;
    mine.assign(g.tiles(), 0);
    for (int ty = 0; ty < g.ny; ++ty)
      for (int tx = 0; tx < g.nx; ++tx) {
        const double dx = std::max({own.min.x - g.x_at(tx + 1), 0.0, g.x_at(tx) - own.max.x});
        const double dy = std::max({own.min.y - g.y_at(ty + 1), 0.0, g.y_at(ty) - own.max.y});
        mine[g.at(tx, ty)] = dx * dx + dy * dy <= reach * reach ? 1 : 0;
      }
  }
  // (A process placing its part keeps no slot per id of the swarm, not even at the start.)
  if (part) state_.make_index_sparse();
  Diagnostics diags;
  if (!plan->place(*model_, state_, part ? &mine : nullptr, diags)) {
    std::ostringstream text;
    diags.print(text);
    throw RunError(text.str());
  }
  xstats_.placed_robots = state_.robot_count();
  if (!part) return;
  // Who runs each robot at the start, for the robots not placed here too: a tile's robots are
  // in the tile's domain (the domains are cut along tiles, Domains::bisect_tiles).
  // (The hosts of the robots held here are set with the others' at the start; those of the
  // robots not placed here are never needed: make_maps_sparse.)
  make_maps_sparse();
  placed_part_ = true;
}

Simulation::~Simulation() {
  try {
    finish();
  } catch (...) {
  }
}

void Simulation::open_logs(log::LogOpen open) {
  writers_.clear();  // (a writer being replaced finishes its file first)
  for (const auto& spec : experiment_.logs) {
    try {
      writers_.push_back(spec.format == log::LogFormat::kDeeco
                             ? log::make_deeco_log_writer(spec.path, open)
                             : log::make_frame_log_writer(spec.path, frame_log_options(), open));
    } catch (const log::LogError& e) {
      throw RunError(e.what());  // (it names the log and says what went wrong)
    } catch (const std::exception& e) {
      throw RunError(std::string(resumed_ ? "cannot continue log '" : "cannot create log '") +
                     spec.path + "': " + e.what());
    }
  }
}

void Simulation::make_controller_instance(std::size_t i) {
  EntityId id = state_.robot_id()[i];
  const std::uint16_t c = state_.robot_controller()[i];
  const std::uint16_t k = state_.robot_kind()[i];
  if (shared_[c * model_->kinds.size() + k]) return;
  const ControllerDecl& decl = model_->controllers[c];
  // Another process simulates the robot (the handoff brings it here if that changes).
  if (distributed() && registry_.controller_scope(decl.type) != ControllerScope::kShared &&
      host_of(static_cast<std::uint32_t>(i)) != dist_.process)
    return;
  if (registry_.controller_scope(decl.type) == ControllerScope::kShared) {
    // A pair first met at run time (a robot added by loop functions).
    try {
      auto ctrl = make_controller(*model_, experiment_.parts, registry_, c, k, kNoEntity);
      shared_[c * model_->kinds.size() + k] = ctrl.get();
      experiment_.shared_controllers[{c, k}] = std::move(ctrl);
    } catch (const std::exception& e) {
      throw RunError("robot '" + state_.robot_name()[i] + "', controller '" + decl.id +
                     "': " + e.what());
    }
    return;
  }
  // Sized only for robots with their own instance: none in a run of built-in controllers.
  try {
    instances_.at(id) = make_controller(*model_, experiment_.parts, registry_, c, k, id,
                                        robot_start(*model_, state_, i));
  } catch (const std::exception& e) {
    throw RunError("robot '" + state_.robot_name()[i] + "', controller '" + decl.id +
                   "': init failed: " + e.what());
  }
}

void Simulation::run_phase(Phase p, const std::function<void()>& body) {
  auto t0 = std::chrono::steady_clock::now();
  try {
    body();
  } catch (const RunError&) {
    throw;
  } catch (const std::exception& e) {
    throw RunError("tick " + std::to_string(state_.tick) + ", phase " + phase_name(p) + ": " +
                   e.what());
  }
  phase_seconds_[static_cast<int>(p)] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (on_phase) on_phase(p, state_);
}

void Simulation::logged_columns(const ColumnStore& store, std::vector<ColumnDesc>& descs,
                                std::vector<ColumnHandle>& handles) {
  descs.clear();
  handles.clear();
  for (ColumnHandle c = 0; c < store.schema().size(); ++c) {
    const ColumnDesc& d = store.desc(c);
    if (!d.logged || d.type == ColumnType::kString) continue;
    descs.push_back(d);
    handles.push_back(c);
  }
}

log::LogHeader Simulation::make_header(bool robots) {
  log::LogHeader h;
  h.experiment = model_->name;
  h.seed = model_->seed;
  h.tick_period_ns = model_->tick_period_ns;
  h.arena_width_m = model_->arena_width_m;
  h.arena_height_m = model_->arena_height_m;
  h.arena_center = model_->arena_center;
  h.bitmap_width = model_->bitmap_width;
  h.bitmap_height = model_->bitmap_height;
  h.bitmap_resolution_m = model_->bitmap_resolution_m;
  h.bitmap_top_left = model_->bitmap_top_left;
  h.bitmap = model_->bitmap;
  h.segments.assign(
      model_->segments.begin() + static_cast<std::ptrdiff_t>(model_->bitmap_segment_count),
      model_->segments.end());
  // Kinds the experiment never uses have no parts (and no columns) in this run.
  for (std::size_t k = 0; k < model_->kinds.size(); ++k) {
    const RobotKind& kind = model_->kinds[k];
    const bool used = kind.in_run;
    log::LogKind& lk = h.kinds.emplace_back(log::LogKind{
        kind.name, kind.radius_m, used ? led_count(kind) : 0, used ? rab_range_m(kind) : 0});
    if (kind.shape == BodyShape::kBox) {
      lk.shape = log::LogShape::kBox;
      lk.half_length_m = kind.length_m / 2;
      lk.half_width_m = kind.width_m / 2;
    }
    // Its proximity sensors' rays (where the viewer draws their readings); the readings are
    // the sensor's column, logged or not.
    for (const PartDecl& p : kind.sensors) {
      if (!used || p.interface != "proximity") continue;
      std::string error;
      std::vector<double> angles = proximity_ray_angles(p.params, error);
      if (error.empty())
        lk.rays.push_back({p.name, p.params.real("range", 0.1), std::move(angles)});
    }
  }
  for (const auto& c : model_->object_classes) h.object_classes.push_back({c});
  logged_columns(state_.robots, h.robot_columns, logged_robot_columns_);
  logged_columns(state_.objects, h.object_columns, logged_object_columns_);
  for (std::size_t i = 0; robots && i < state_.robot_count(); ++i)
    h.robots.push_back({state_.robot_id()[i], state_.robot_kind()[i], state_.robot_name()[i]});
  for (std::size_t o = 0; o < state_.object_count(); ++o)
    h.objects.push_back({state_.object_id()[o], state_.object_class()[o], state_.object_name()[o]});
  return h;
}

void Simulation::write_headers(std::vector<std::uint8_t>* robots, std::uint64_t count) {
  // (The header lists every robot by name: ~50 MB at a million robots, not built for no log.)
  if (writers_.empty() && !observer_) return;
  log::LogHeader h = make_header(/*robots=*/robots == nullptr);
  if (robots) {
    // The logs write the gathered bytes as they are (a split log is frame logs only); a
    // watching view reads the robots one by one.
    if (observer_) {
      h.robots = log::frame_format::decode_entities(*robots, count);
    } else {
      h.encoded_robots = std::move(*robots);
      h.encoded_robot_count = count;
    }
  }
  for (std::size_t w = 0; w < writers_.size(); ++w) {
    h.every = experiment_.logs[w].every;
    writers_[w]->begin(h);
  }
  if (observer_) begin_observer(std::move(h));
}

void Simulation::begin_observer(log::LogHeader h) {
  h.every = 1;
  try {
    observer_->begin(h);
  } catch (const std::exception& e) {
    throw RunError(std::string("watching the run (--view, --render-...): ") + e.what());
  }
}

log::FrameLogOptions Simulation::frame_log_options() {
  log::FrameLogOptions o;
  // write() runs on this thread between phases, when the workers are free: they transpose
  // the frame and compress its parts. With one worker there is no one to share with, and the
  // log's own thread compresses, perhaps on a core the simulation does not use.
  if (pool_.size() > 1)
    o.parallel_for = [this](std::size_t n, std::size_t grain,
                            const std::function<void(std::size_t, std::size_t)>& body) {
      pool_.parallel_for(n, grain, [&](std::size_t b, std::size_t e, int) { body(b, e); });
    };
  return o;
}

log::LogFrameView Simulation::frame_view() const {
  log::LogFrameView v{.tick = state_.tick,
                      .time_ns = state_.tick * model_->tick_period_ns,
                      .status = state_.status,
                      .tags = state_.tags.strings(),
                      .robot_count = state_.robot_count(),
                      .object_count = state_.object_count()};
  // The logged columns' bytes as they are in the store: no copy, no column named here.
  for (ColumnHandle c : logged_robot_columns_) v.robot_columns.push_back(state_.robots.bytes(c));
  for (ColumnHandle c : logged_object_columns_) v.object_columns.push_back(state_.objects.bytes(c));
  return v;
}

void Simulation::write_logs() {
  if (split_log_ || state_.tick == view_blocks_tick_) return write_split_logs();
  if (writers_.empty() && !observer_) return;
  const log::LogFrameView v = frame_view();
  for (std::size_t w = 0; w < writers_.size(); ++w)
    if (state_.tick % experiment_.logs[w].every == 0) {
      try {
        writers_[w]->write(v);
      } catch (const std::exception& e) {
        throw RunError("tick " + std::to_string(state_.tick) + ": log '" +
                       experiment_.logs[w].path + "': " + e.what());
      }
    }
  // On several processes the first process holds the whole world's logged columns only at
  // the start, on the ticks a log keeps and on those the live view asked for
  // (request_whole_frame; the moves then carry them): the observer gets those.
  bool whole = !distributed() || !observed_ || state_.tick == whole_frame_tick_;
  whole = whole || log_due(state_.tick);
  if (observer_ && whole) {
    observed_ = true;
    try {
      observer_->write(v);
    } catch (const std::exception& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ": watching the run: " + e.what());
    }
  }
}

void Simulation::write_split_logs() {
  // Every process, on a tick a log keeps: the blocks of the frame, each encoded where most of
  // its robots are; process 0 writes them (docs/distributed.md, "The log on several
  // processes"). It holds its own part only: the live view gets those blocks too, and on the
  // ticks it asked for (view_blocks_tick_, known to every process) the same blocks are made
  // for it alone; a run whose moves brought it a whole frame gives that (whole_frame_tick_).
  const bool logged = split_log_ && log_due(state_.tick);
  const bool viewed = state_.tick == view_blocks_tick_;
  if (logged || viewed) {
    // (Every process: only process 0 made a header, which sets logged_robot_columns_.)
    log::LogHeader columns;
    std::vector<ColumnHandle> handles;
    logged_columns(state_.robots, columns.robot_columns, handles);
    const int level = log::FrameLogOptions{}.zstd_level;
    std::vector<log::frame_format::EncodedBlock> blocks =
        rounds_->frame_blocks(handles, log::frame_format::PayloadLayout::of(columns), level);
    log::LogFrameView head = frame_view();
    head.robot_columns.clear();
    head.robot_count = 0;
    for (const auto& b : blocks) head.robot_count += b.block.rows;
    for (std::size_t w = 0; logged && w < writers_.size(); ++w) {
      if (state_.tick % experiment_.logs[w].every != 0) continue;
      auto* frames = dynamic_cast<log::FrameLogWriter*>(writers_[w].get());
      if (!frames) throw RunError("internal: a split log that is not a frame log");
      try {
        frames->write_blocks(head,
                             w + 1 == writers_.size() && !observer_ ? std::move(blocks) : blocks);
      } catch (const std::exception& e) {
        throw RunError("tick " + std::to_string(state_.tick) + ": log '" +
                       experiment_.logs[w].path + "': " + e.what());
      }
    }
    if (observer_) {
      try {
        observer_->write_blocks(head, std::move(blocks));
      } catch (const std::exception& e) {
        throw RunError("tick " + std::to_string(state_.tick) + ": watching the run: " + e.what());
      }
    }
  }
  if (observer_ && state_.tick == whole_frame_tick_) {
    try {
      observer_->write(frame_view());
    } catch (const std::exception& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ": watching the run: " + e.what());
    }
  }
}

void Simulation::start() {
  if (started_) return;
  started_ = true;
  if (resumed_) {
    resume_controllers_and_logs();  // the loop functions' state and the logs, as they were
    resumed_.reset();               // (the saved controllers' bytes are not needed again)
  } else {
    if (loop_) {
      try {
        run_hook([&] { loop_->init(experiment_.loop_params, *this); });
      } catch (const RunError&) {
        throw;
      } catch (const std::exception& e) {
        throw RunError("loop functions '" + experiment_.loop_functions + "': init: " + e.what());
      }
    }
    // (A first process that placed its part only writes them after the start: log_start.)
    if (!(placed_part_ && !experiment_.logs.empty())) {
      write_headers();
      write_logs();
    }
    // (On several processes, every process keeps it when interventions may land.)
    if (distributed() ? dist_.interventions && !border_halo_ : reset_enabled_)
      start_state_ = std::make_unique<WorldState>(state_);
  }
  if (checkpoint_write_) {
    // Refused now rather than at the first checkpoint, an hour into the run.
    std::vector<std::uint8_t> probe;
    bool can = false;
    std::string why = "their type cannot save its state (LoopFunctions::save returns false)";
    try {
      can = !loop_ || loop_->save(probe);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!can)
      throw RunError("loop functions '" + experiment_.loop_functions +
                     "' cannot be checkpointed: " + why +
                     ". Run without --checkpoint-every, or give the type save() and restore() "
                     "(docs/checkpoints.md)");
    if (!experiment_.object_behaviours.empty())
      throw RunError(
          "objects with behaviour cannot be checkpointed for now (their state is "
          "not saved). Run without --checkpoint-every");
    if (!experiment_.layers.empty())
      throw RunError("environment layer '" + experiment_.layers.front().name +
                     "' cannot be checkpointed for now (a layer's own state is not saved). Run "
                     "without --checkpoint-every");
    refuse_unsavable_controllers("be checkpointed: a checkpoint holds every controller's state",
                                 "run without --checkpoint-every");
  }
  // Every process is there and starts from the same world (after the loop functions' init).
  if (rounds_) rounds_->start();
  if (!resuming_ && split_log_) {
    // A first process that placed its part only: the header, with every robot present (each
    // process says who its robots are), and the frame of tick 0, in blocks.
    std::vector<std::uint8_t> robots;
    std::uint64_t count = 0;
    if (rounds_->log_start(placed_part_ && !experiment_.logs.empty(), robots, count)) {
      write_headers(&robots, count);
      write_split_logs();
    }
  } else if (dist_.process == 0 && placed_part_ && !experiment_.logs.empty()) {
    throw RunError("internal: the first process placed its part only, and the log is not split");
  }
}

void Simulation::sense_and_control() {
  if (!index_fresh_) index_.rebuild(*model_, state_, pool_);
  index_fresh_ = false;
  // Knowledge columns move when robots are added: their starts, once a tick.
  knowledge_.data.clear();
  knowledge_.size = model_->knowledge_sizes;
  for (const std::string& name : model_->knowledge_names)
    knowledge_.data.push_back(
        static_cast<double*>(state_.robots.data(state_.robots.find("knowledge." + name))));
  const std::size_t n = state_.robot_count();
  const double dt = static_cast<double>(model_->tick_period_ns) / kNanosPerSecond;
  const std::uint32_t* order = index_.robots.order().data();
  const std::uint16_t* kind = state_.robot_kind().data();
  const EntityId* ids = state_.robot_id().data();
  const std::uint32_t* tags = state_.robot_tag().data();
  const std::uint16_t* controller = state_.robot_controller().data();
  // Distributed: this process runs the robots it holds (runs_: those it moves, or with
  // affinities those pinned to it).
  const std::uint8_t* runs = distributed() ? runs_.data() : nullptr;
  auto here = [&](std::uint32_t i) { return !runs || runs[i]; };
  const std::size_t kinds = model_->kinds.size();
  std::atomic<std::uint64_t> stepped{0};
  // A round's draws differ from another's (the tick's own with one round).
  const Tick draw_tick = state_.tick * (model_->processing_time + 1) + round_;
  // Robots are visited in the grid's slot order (neighbours adjacent in memory), in batches of
  // up to kPartBatch robots of one kind: the batching sensors read the world for the whole
  // batch and the batching actuators expose its commands (one virtual call per part and
  // batch); then, robot by robot, the other parts do the same and the controller steps. Each
  // writes only its own robot's rows, so neither order changes anything in the results.
  pool_.parallel_for(n, 256, [&](std::size_t b, std::size_t e, int worker) {
    Worker& w = *workers_[static_cast<std::size_t>(worker)];
    const PartContext ctx{&world_, state_.tick, dt, model_->seed, worker};
    std::uint64_t count = 0;
    for (std::size_t s = b; s < e;) {
      if (!here(order[s])) {  // another process's robot
        ++s;
        continue;
      }
      const std::uint16_t k = kind[order[s]];
      std::size_t m = 0;
      for (; m < kPartBatch && s + m < e && kind[order[s + m]] == k && here(order[s + m]); ++m) {
        const std::uint32_t i = order[s + m];
        w.batch[m] = RobotRef{i, static_cast<std::uint32_t>(s + m), ids[i]};
      }
      const std::span<const RobotRef> batch(w.batch.data(), m);
      const AssembledKind& parts = experiment_.parts[k];
      const std::size_t ns = parts.sensors.size(), na = parts.actuators.size();
      // Fresh views for rows that last held another kind's; a part refills the same fields for
      // every robot of its kind, so rows of the same kind need no reset.
      if (k != w.view_kind) {
        w.view_kind = k;
        w.fresh = 0;
      }
      for (; w.fresh < m; ++w.fresh) {
        std::copy(parts.sensor_views.begin(), parts.sensor_views.end(),
                  w.sensors.begin() + static_cast<std::ptrdiff_t>(w.fresh * ns));
        std::copy(parts.actuator_views.begin(), parts.actuator_views.end(),
                  w.actuators.begin() + static_cast<std::ptrdiff_t>(w.fresh * na));
      }
      for (std::uint32_t j : parts.batch_sensors)
        parts.sensors[j]->sense_batch(ctx, batch, w.sensors.data() + j, ns);
      for (std::uint32_t j : parts.batch_actuators)
        parts.actuators[j]->bind_batch(ctx, batch, w.actuators.data() + j, na);
      for (std::size_t q = 0; q < m; ++q) {
        const RobotRef& robot = w.batch[q];
        SensorView* sv = w.sensors.data() + q * ns;  // (data(): a kind may have no parts)
        ActuatorView* av = w.actuators.data() + q * na;
        for (std::uint32_t j : parts.single_sensors) parts.sensors[j]->sense(ctx, robot, sv[j]);
        for (std::uint32_t j : parts.single_actuators) parts.actuators[j]->bind(ctx, robot, av[j]);
        RobotIO io;
        io.tick = state_.tick;
        io.dt_s = dt;
        io.kind = &model_->kinds[k];
        io.tag_sink = &w;
        io.id = robot.id;
        io.row = robot.row;
        io.sensors = {sv, ns};
        io.actuators = {av, na};
        io.rng = CounterRng(model_->seed, robot.id, draw_tick, RandomStream::kController);
        io.tag = &state_.tags.str(tags[robot.row]);
        io.knowledge_columns = &knowledge_;
        if (!layer_columns_.data.empty()) io.layer_columns = &layer_columns_;
        Controller* c = shared_[controller[robot.row] * kinds + k];
        if (!c) c = instance(robot.id);
        try {
          c->step(io);
        } catch (const std::exception& ex) {
          const auto& decl = model_->controllers[controller[robot.row]];
          throw RunError("tick " + std::to_string(state_.tick) + ", robot '" +
                         state_.robot_name()[robot.row] + "' (id " + std::to_string(robot.id) +
                         "), controller '" + decl.id + "' (type '" + decl.type +
                         "'): " + ex.what());
        }
      }
      s += m;
      count += m;
    }
    stepped.fetch_add(count, std::memory_order_relaxed);
  });
  robot_steps_ += stepped.load();
}

namespace {

/// What an object's behaviour reads: the robots through the grid built for this tick's
/// sensing.
class RunObjectWorld final : public ObjectWorld {
 public:
  RunObjectWorld(const WorldModel& model, const WorldState& state, const SpatialIndex& index)
      : model_(model), state_(state), index_(index) {}
  void robots_within(Vec2 p, double reach_m, std::vector<RobotSeen>& out) const override {
    out.clear();
    names_.clear();
    if (!(reach_m >= 0)) return;
    const auto& order = index_.robots.order();
    const auto& sx = index_.robots.sorted_x();
    const auto& sy = index_.robots.sorted_y();
    const double r2 = reach_m * reach_m;
    index_.robots.for_each_within(p, reach_m, [&](std::uint32_t s) {
      const double dx = sx[s] - p.x, dy = sy[s] - p.y;
      if (dx * dx + dy * dy > r2) return;
      const std::uint32_t i = order[s];
      // (The column gives a copy; a deque's elements stay where they are as it grows.)
      names_.push_back(state_.robot_name()[i]);
      out.push_back({state_.robot_id()[i],
                     names_.back(),
                     {state_.x()[i], state_.y()[i]},
                     state_.theta()[i],
                     state_.tags.str(state_.robot_tag()[i]),
                     model_.kinds[state_.robot_kind()[i]].name});
    });
    std::sort(out.begin(), out.end(),
              [](const RobotSeen& a, const RobotSeen& b) { return a.id < b.id; });
  }

 private:
  const WorldModel& model_;
  const WorldState& state_;
  const SpatialIndex& index_;
  mutable std::deque<std::string> names_;  ///< the last answer's robot names
};

}  // namespace

void Simulation::step_objects() {
  if (experiment_.object_behaviours.empty()) return;
  const RunObjectWorld world(*model_, state_, index_);
  // The objects' knowledge columns (they move when objects are added: once a round).
  KnowledgeColumns knowledge;
  knowledge.size = model_->knowledge_sizes;
  for (const std::string& name : model_->knowledge_names)
    knowledge.data.push_back(
        static_cast<double*>(state_.objects.data(state_.objects.find("knowledge." + name))));
  const double dt = static_cast<double>(model_->tick_period_ns) / kNanosPerSecond;
  const Tick draw_tick = state_.tick * (model_->processing_time + 1) + round_;
  for (ObjectWithBehaviour& o : experiment_.object_behaviours) {
    const std::uint32_t row = state_.object_index(o.object);
    if (row == kNoIndex) continue;  // removed by the loop functions
    // (The string column gives its strings by value: the view is of this copy.)
    const std::string name = state_.object_name()[row];
    ObjectIO io;
    io.id = o.object;
    io.tick = state_.tick;
    io.dt_s = dt;
    io.round = round_;
    io.name = name;
    io.object_class = model_->object_classes[state_.object_class()[row]];
    io.position = {state_.object_x()[row], state_.object_y()[row]};
    io.size = state_.object_size()[row];
    io.tag = state_.tags.str(state_.object_tag()[row]);
    io.rng = CounterRng(model_->seed, o.object, draw_tick, RandomStream::kObjectBehaviour);
    io.world = &world;
    if (!knowledge.data.empty()) io.knowledge_columns = &knowledge;
    io.row = row;
    try {
      o.instance->step(io);
    } catch (const std::exception& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ", object '" + std::string(io.name) +
                     "' (id " + std::to_string(o.object) + "), behaviour '" +
                     experiment_.behaviours[o.behaviour].id + "' (type '" +
                     experiment_.behaviours[o.behaviour].type + "'): " + e.what());
    }
    if (!std::isfinite(io.position.x) || !std::isfinite(io.position.y) || !(io.size >= 0) ||
        !std::isfinite(io.size))
      throw RunError("tick " + std::to_string(state_.tick) + ", object '" + std::string(io.name) +
                     "', behaviour '" + experiment_.behaviours[o.behaviour].id +
                     "': set a position that is not finite or a size below 0");
    state_.object_x()[row] = io.position.x;
    state_.object_y()[row] = io.position.y;
    state_.object_size()[row] = io.size;
    state_.object_tag()[row] = state_.tags.intern(io.tag);
  }
}

namespace {

/// What a layer reads: every robot and object as the previous tick left them.
class RunLayerWorld final : public LayerWorld {
 public:
  RunLayerWorld(const WorldModel& model, const WorldState& state, double dt)
      : model_(model), state_(state), dt_(dt) {
    const std::size_t n = state.robot_count();
    names_.resize(n);
    robots_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      names_[i] = state.robot_name()[i];  // (the string column gives copies)
      const RobotKind& k = model.kinds[state.robot_kind()[i]];
      robots_[i] = {state.robot_id()[i],
                    names_[i],
                    k.name,
                    {state.x()[i], state.y()[i]},
                    state.theta()[i],
                    k.radius_m,
                    state.tags.str(state.robot_tag()[i])};
      rows_.push_back(static_cast<std::uint32_t>(i));
    }
    add_actions(model, state);
    const std::size_t m = state.object_count();
    object_names_.resize(m);
    objects_.resize(m);
    for (std::size_t o = 0; o < m; ++o) {
      object_names_[o] = state.object_name()[o];
      objects_[o] = {state.object_id()[o],
                     object_names_[o],
                     model.object_classes[state.object_class()[o]],
                     {state.object_x()[o], state.object_y()[o]},
                     state.object_size()[o],
                     state.tags.str(state.object_tag()[o])};
    }
    // Rows keep their order, which is the ids' unless robots were placed out of order.
    auto by_id = [](const auto& a, const auto& b) { return a.id < b.id; };
    if (!std::is_sorted(robots_.begin(), robots_.end(), by_id)) {
      std::sort(rows_.begin(), rows_.end(),
                [&](std::uint32_t a, std::uint32_t b) { return robots_[a].id < robots_[b].id; });
      std::vector<LayerRobot> sorted;
      for (std::uint32_t r : rows_) sorted.push_back(robots_[r]);
      robots_ = std::move(sorted);
    }
    std::sort(objects_.begin(), objects_.end(), by_id);
  }
  Tick tick() const override { return state_.tick; }
  double dt_s() const override { return dt_; }
  std::span<const LayerRobot> robots() const override { return robots_; }
  std::span<const LayerObject> objects() const override { return objects_; }
  bool obstacle(Vec2 p) const override {
    const Vec2 lo = model_.arena_min(), hi = model_.arena_max();
    if (!(p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y)) return true;
    if (model_.bitmap_width == 0 || model_.bitmap_resolution_m <= 0) return false;
    const double r = model_.bitmap_resolution_m;
    const auto i = static_cast<std::int64_t>(std::floor((p.x - model_.bitmap_top_left.x) / r));
    const auto j = static_cast<std::int64_t>(std::floor((model_.bitmap_top_left.y - p.y) / r));
    if (i < 0 || j < 0 || i >= model_.bitmap_width || j >= model_.bitmap_height) return false;
    return model_.bitmap[static_cast<std::size_t>(j) * model_.bitmap_width +
                         static_cast<std::size_t>(i)] != 0;
  }
  CounterRng& rng() const override { return rng_; }
  /// A deeco_wheels robot's current action (LayerRobot::action), by kind.
  void add_actions(const WorldModel& model, const WorldState& state) {
    extras_.resize(model.kinds.size());
    for (std::size_t k = 0; k < model.kinds.size(); ++k)
      for (const PartDecl& a : model.kinds[k].actuators)
        if (a.type == "deeco_wheels" && state.robots.find(a.name) != kNoColumn) {
          const ColumnHandle c = state.robots.find(a.name);
          extras_[k] = deeco_action_extras(a.params.text("extras", ""));
          const std::size_t w = state.robots.desc(c).width;
          const auto* data = static_cast<const double*>(state.robots.data(c));
          for (std::size_t i = 0; i < robots_.size(); ++i)
            if (state.robot_kind()[i] == k)
              robots_[i].action = {data + w * i, w}, robots_[i].action_extras = extras_[k];
        }
  }
  /// Robot i of robots() is at row rows()[i].
  const std::vector<std::uint32_t>& rows() const { return rows_; }
  void use_rng(CounterRng rng) { rng_ = rng; }

 private:
  const WorldModel& model_;
  const WorldState& state_;
  double dt_;
  std::vector<std::string> names_, object_names_;
  std::vector<LayerRobot> robots_;
  std::vector<std::vector<std::string>> extras_;  ///< per kind: its deeco_wheels' extras
  std::vector<LayerObject> objects_;
  std::vector<std::uint32_t> rows_;
  mutable CounterRng rng_{0, 0, 0, RandomStream::kLayer};
};

}  // namespace

void Simulation::compute_layers() {
  layer_columns_.data.clear();
  layer_columns_.size = model_->layer_sizes;
  for (const std::string& name : model_->layer_names)
    layer_columns_.data.push_back(
        static_cast<double*>(state_.robots.data(state_.robots.find("layer." + name))));
  if (experiment_.layers.empty()) return;
  const double dt = static_cast<double>(model_->tick_period_ns) / kNanosPerSecond;
  RunLayerWorld world(*model_, state_, dt);
  const std::vector<std::uint32_t>& rows = world.rows();
  std::vector<double> values;
  for (std::size_t l = 0; l < experiment_.layers.size(); ++l) {
    LayerDecl& d = experiment_.layers[l];
    const std::size_t size = model_->layer_sizes[l];
    double* column = layer_columns_.data[l];
    values.resize(rows.size() * size);
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::copy_n(column + std::size_t{rows[i]} * size, size, values.begin() + i * size);
    world.use_rng(CounterRng(model_->seed, l, state_.tick, RandomStream::kLayer));
    try {
      d.instance->compute(world, values);
    } catch (const std::exception& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ", layer '" + d.name + "' (type '" +
                     d.type + "'): " + e.what());
    }
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::copy_n(values.begin() + i * size, size, column + std::size_t{rows[i]} * size);
  }
}

void Simulation::act() {
  // Actuators apply this tick's commands (LEDs become visible, messages are sent, wheel speeds
  // become the body's velocity), each robot's own rows only.
  const std::size_t n = state_.robot_count();
  const double dt = static_cast<double>(model_->tick_period_ns) / kNanosPerSecond;
  const std::uint16_t* kind = state_.robot_kind().data();
  const EntityId* ids = state_.robot_id().data();
  const std::uint8_t* runs = distributed() ? runs_.data() : nullptr;
  auto here = [&](std::size_t i) { return !runs || runs[i]; };
  pool_.parallel_for(n, 1024, [&](std::size_t b, std::size_t e, int worker) {
    const PartContext ctx{&world_, state_.tick, dt, model_->seed, worker};
    std::array<RobotRef, kPartBatch> batch;
    for (std::size_t i = b; i < e;) {
      if (!here(i)) {  // another process's robot
        ++i;
        continue;
      }
      const std::uint16_t k = kind[i];
      const std::vector<Actuator*>& acting = experiment_.parts[k].acting;
      std::size_t m = 0;
      if (acting.empty()) {  // a kind whose parts do nothing here: skip its run of robots
        while (i + m < e && kind[i + m] == k && here(i + m)) ++m;
      } else {
        for (; m < kPartBatch && i + m < e && kind[i + m] == k && here(i + m); ++m)
          batch[m] = RobotRef{static_cast<std::uint32_t>(i + m), 0, ids[i + m]};
        for (Actuator* a : acting) a->act_batch(ctx, {batch.data(), m});
      }
      i += m;
    }
  });
  std::vector<std::pair<std::uint32_t, std::string>> tags = apply_controller_tags();
  if (!tags.empty()) staged_tags_ = std::move(tags);  // sent with the moves
}

std::vector<std::pair<std::uint32_t, std::string>> Simulation::apply_controller_tags() {
  // Tags set by controllers are interned here, in robot order, so tag indices (and the log)
  // do not depend on which worker ran which robot.
  std::vector<std::pair<std::uint32_t, std::string>> all;
  for (auto& w : workers_) {
    all.insert(all.end(), std::make_move_iterator(w->tags.begin()),
               std::make_move_iterator(w->tags.end()));
    w->tags.clear();
  }
  if (all.empty()) return {};
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (distributed()) return all;  // with every process's, after the moves round
  auto robot_tag = state_.robot_tag();
  for (auto& [i, t] : all) robot_tag[i] = state_.tags.intern(t);
  return {};
}

void Simulation::step() {
  if (!started_) start();
  if (checkpoint_due_) take_checkpoint();
  run_phase(Phase::kPreStep, [&] {
    if (loop_) run_hook([&] { loop_->pre_step(*this); });
  });
  if (rounds_) rounds_->handoff();
  if (!experiment_.layers.empty()) run_phase(Phase::kSenseControl, [&] { compute_layers(); });
  // Rounds of ensembles, controllers and object behaviours (processing_time + 1 of them, one
  // by default) on the same sensed world, as the playground's components decide
  // processingTime + 1 times between two cycles' inputs and the fetch of the last decision: a
  // later round sees an earlier one's knowledge, tags and objects, and the actuators' last
  // command is the tick's.
  for (round_ = 0; round_ <= model_->processing_time; ++round_) {
    // Ensembles exchange knowledge on the world the robots are about to sense, through the
    // grid the sensing uses (built here once for both; not counted in the ensembles phase).
    if (ensembles_ && ensembles_->due(state_.tick)) {
      if (round_ == 0) index_.rebuild(*model_, state_, pool_);
      index_fresh_ = true;
      run_phase(Phase::kEnsembles, [&] {
        try {
          ensembles_->run(state_.tick, index_, pool_);
        } catch (const RunError&) {
          throw;
        } catch (const std::exception& e) {
          throw RunError(e.what());
        }
      });
    }
    if (round_ > 0) index_fresh_ = true;  // (nothing has moved since the first round)
    run_phase(Phase::kSenseControl, [&] {
      sense_and_control();
      if (round_ < model_->processing_time) apply_controller_tags();
      step_objects();
    });
  }
  round_ = 0;
  if (!held_.empty()) apply_held_commands();
  run_phase(Phase::kAct, [&] {
    act();
    if (pinned_ && rounds_) rounds_->actuation();
  });
  run_phase(Phase::kPhysics, [&] {
    physics_.borders = distributed() && !dist_.domains.empty() ? &borders_ : nullptr;
    for (std::size_t t = 0; t < experiment_.engines.size(); ++t) {
      physics_.begin_type(static_cast<std::uint8_t>(t),
                          distributed() ? owned_engine_.data() : nullptr);
      experiment_.engines[t]->step(physics_);
    }
    if (rounds_) rounds_->moves();
    migration_.migrate(*model_, state_, index_, pool_);
  });
  state_.tick++;
  run_phase(Phase::kPostStep, [&] {
    if (loop_) run_hook([&] { loop_->post_step(*this); }, /*post_step=*/true);
  });
  run_phase(Phase::kLog, [&] { write_logs(); });
}

void Simulation::apply_held_commands() {
  for (auto it = held_.begin(); it != held_.end();) {
    const std::uint32_t row = state_.robot_index(it->first.first);
    if (row == kNoIndex) {  // (removed since)
      it = held_.erase(it);
      continue;
    }
    set_command(row, it->first.second, it->second);
    ++it;
  }
}

std::string Simulation::reset_problem(std::optional<std::uint64_t> seed) const {
  if (distributed() && (!dist_.interventions || border_halo_))
    return "a run on several processes is reset only with --view or --interventions, when every "
           "process holds every robot (--view-steer)";
  if (resuming_) return "a run resumed from a checkpoint is not reset (its start is not kept)";
  if (!started_ || !start_state_)
    return "this run keeps no copy of its start (Simulation::enable_reset before start)";
  if (finished_) return "the run has ended";
  if (seed && *seed != model_->seed && (!experiment_.placement || !experiment_.unplaced))
    return "this run cannot take another seed: its robots' placement is not kept (an .argos or "
           "DEECo file, or a load without ExperimentOverrides::keep_placement)";
  return "";
}

void Simulation::reset(std::optional<std::uint64_t> seed) {
  if (std::string why = reset_problem(seed); !why.empty()) throw RunError("reset: " + why);
  const Tick at = state_.tick;
  auto fail = [at](const std::string& what) {
    return RunError("tick " + std::to_string(at) + ": reset: " + what);
  };
  if (seed && *seed != model_->seed) {
    // Tick 0 of a run of the new seed: the robots placed as its load places them.
    RobotPlan plan = *experiment_.placement;
    plan.seed = *seed;
    plan.plan(*model_);
    auto start = std::make_unique<WorldState>(*experiment_.unplaced);
    Diagnostics diags;
    if (!plan.place(*model_, *start, nullptr, diags)) {
      std::ostringstream text;
      diags.print(text);
      throw fail("seed " + std::to_string(*seed) + ": " + text.str());
    }
    if (start->robots.schema().size() != state_.robots.schema().size() ||
        start->objects.schema().size() != state_.objects.schema().size())
      throw fail(
          "seed " + std::to_string(*seed) +
          ": the run's columns are not the load's (loop functions that add columns in init() "
          "cannot be reset with another seed)");
    experiment_.model->seed = *seed;
    start_state_ = std::move(start);  // (a later reset() without a seed starts from it too)
  }
  // The world as it was at tick 0 (after the loop functions' init), then the controllers as
  // ARGoS resets its space: the robots there keep their controller and reset() it, in id
  // order; robots added since lose theirs; robots removed since get theirs made again.
  state_ = *start_state_;
  held_.clear();  // (interventions, as the moves before the reset)
  instances_.retain([&](EntityId id) {
    if (state_.robot_index(id) != kNoIndex) return true;
    instances_.find(id)->get()->destroy();
    return false;
  });
  for (std::size_t i = 0; i < state_.robot_count(); ++i) {
    const EntityId id = state_.robot_id()[i];
    Controller* c = instance(id);
    if (!c) {
      make_controller_instance(i);  // (nothing when the robot's controller is shared)
      continue;
    }
    try {
      c->reset();
    } catch (const std::exception& e) {
      throw fail("robot '" + state_.robot_name()[i] + "', controller '" +
                 model_->controllers[state_.robot_controller()[i]].id + "': " + e.what());
    }
  }
  if (distributed()) {  // who holds each robot's controller now (a handoff then moves it)
    const EntityId next = state_.next_id;  // (the robots added since tick 0 are gone)
    host_.retain([&](EntityId id) { return id < next; });
    for (std::size_t i = 0; i < state_.robot_count(); ++i) {
      const EntityId id = state_.robot_id()[i];
      if (host_.get(id) < 0) host_.set(id, static_cast<std::int16_t>(host_of(i)));  // (made again)
    }
  }
  for (LayerDecl& d : experiment_.layers) {
    try {
      d.instance->reset();
    } catch (const std::exception& e) {
      throw fail("layer '" + d.name + "': " + e.what());
    }
  }
  for (ObjectWithBehaviour& o : experiment_.object_behaviours) {
    try {
      o.instance->reset();
    } catch (const std::exception& e) {
      throw fail("behaviour '" + experiment_.behaviours[o.behaviour].id + "': " + e.what());
    }
  }
  for (auto& [ck, c] : experiment_.shared_controllers) {
    try {
      c->reset();
    } catch (const std::exception& e) {
      throw fail("controller '" + model_->controllers[ck.first].id + "': " + e.what());
    }
  }
  if (loop_) {
    try {
      run_hook([&] { loop_->reset(*this); });
    } catch (const std::exception& e) {
      throw fail("loop functions '" + experiment_.loop_functions + "': " + e.what());
    }
  }
  // The logs start again, as a new run's would: header and the frame of tick 0.
  try {
    open_logs(log::LogOpen::kCreate);
  } catch (const RunError& e) {
    throw fail(e.what());
  }
  observed_ = false;
  write_headers();
  write_logs();
}

bool Simulation::done() const {
  if (state_.end_requested) return true;
  return model_->length_ticks > 0 && state_.tick >= model_->length_ticks;
}

void Simulation::finish() {
  if (finished_) return;
  finished_ = true;
  std::string error;
  // The observer's last frame is the world as the run left it (it may skip frames while the
  // run goes on, docs/view-format.md), before loop functions' destroy.
  if (observer_ && started_) {
    try {
      observer_->write(frame_view());
      observer_->finish();
    } catch (const std::exception& e) {
      error = std::string("watching the run: ") + e.what();
    }
  }
  if (loop_ && started_) {
    try {
      loop_->destroy(*this);
    } catch (const std::exception& e) {
      error = std::string("loop functions: destroy: ") + e.what();
    }
  }
  instances_.for_each([](EntityId, std::unique_ptr<Controller>& c) {
    if (c) c->destroy();
  });
  for (auto& [ck, c] : experiment_.shared_controllers) c->destroy();
  for (std::size_t w = 0; w < writers_.size(); ++w) {
    try {
      writers_[w]->finish();
    } catch (const std::exception& e) {
      if (error.empty()) error = "log '" + experiment_.logs[w].path + "': " + e.what();
    }
  }
  if (!error.empty()) throw RunError(error);
}

// --- WorldAccess ----------------------------------------------------------------------

std::uint32_t Simulation::checked_robot(EntityId id, const char* what) const {
  std::uint32_t i = state_.robot_index(id);
  if (i == kNoIndex)
    throw RunError(std::string("loop functions: ") + what + ": no robot with id " +
                   std::to_string(id));
  if (staging() && distributed() && process_of(i) != dist_.process)
    throw RunError(std::string("loop functions: ") + what + ": robot '" + state_.robot_name()[i] +
                   "' is moved by process " + std::to_string(process_of(i)) + ", not this one (" +
                   std::to_string(dist_.process) +
                   "): loop functions in the per-process form read and change only their "
                   "process's robots (robots() lists them; docs/loop-functions.md)");
  return i;
}

Vec2 Simulation::robot_position(EntityId id) const {
  auto i = checked_robot(id, "robot_position");
  return {state_.x()[i], state_.y()[i]};
}
double Simulation::robot_heading(EntityId id) const {
  return state_.theta()[checked_robot(id, "robot_heading")];
}
std::string Simulation::robot_tag(EntityId id) const {
  return state_.tags.str(state_.robot_tag()[checked_robot(id, "robot_tag")]);
}
void Simulation::set_robot_tag(EntityId id, const std::string& tag) {
  const auto i = checked_robot(id, "set_robot_tag");
  if (staging()) {
    staged_loop_.tags.emplace_back(id, tag);
    return;
  }
  state_.robot_tag()[i] = state_.tags.intern(tag);
}
Color Simulation::robot_led(EntityId id) const {
  auto i = checked_robot(id, "robot_led");
  if (leds_ == kNoColumn) return Color{};
  return state_.robots.span<Color>(leds_)[i * state_.robots.desc(leds_).width];
}
void Simulation::check_robot_position(Vec2 p, double heading, const char* what) const {
  // Robots have bodies and live in the arena (objects may go anywhere).
  Vec2 lo = model_->arena_min(), hi = model_->arena_max();
  if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(heading))
    throw RunError(std::string("loop functions: ") + what + ": non-finite position or heading");
  if (p.x < lo.x || p.x > hi.x || p.y < lo.y || p.y > hi.y)
    throw RunError(std::string("loop functions: ") + what + ": position (" + std::to_string(p.x) +
                   ", " + std::to_string(p.y) + ") is outside the arena (robots stay inside it)");
}

int Simulation::robot_contact_count(EntityId id) const {
  return state_.contact_count()[checked_robot(id, "robot_contact_count")];
}
void Simulation::move_robot(EntityId id, Vec2 p, double heading) {
  auto i = checked_robot(id, "move_robot");
  check_robot_position(p, heading, "move_robot");
  if (staging()) {
    staged_loop_.moves.push_back({id, p.x, p.y, heading});
    return;
  }
  state_.x()[i] = p.x;
  state_.y()[i] = p.y;
  state_.theta()[i] = wrap_angle(heading);
  state_.robot_engine()[i] =
      static_cast<std::uint8_t>(model_->engine_at(p, state_.robot_kind()[i]));
}
void Simulation::place_robot(EntityId id, Vec2 p, double heading, double z) {
  if (!std::isfinite(heading) || !std::isfinite(z))
    throw RunError("robot '" + std::to_string(id) +
                   "': a heading or altitude that is not a number");
  move_robot(id, p, heading);
  if (const ColumnHandle zc = state_.robots.find("z"); zc != kNoColumn)
    static_cast<double*>(state_.robots.data(zc))[state_.robot_index(id)] = z;
}
EntityId Simulation::add_robot(const std::string& kind, const std::string& controller, Vec2 p,
                               double heading, const std::string& tag) {
  int k = -1, c = -1;
  for (std::size_t i = 0; i < model_->kinds.size(); ++i)
    if (model_->kinds[i].name == kind) k = static_cast<int>(i);
  for (std::size_t i = 0; i < model_->controllers.size(); ++i)
    if (model_->controllers[i].id == controller) c = static_cast<int>(i);
  check_robot_position(p, heading, "add_robot");
  if (k < 0) throw RunError("loop functions: add_robot: unknown kind '" + kind + "'");
  if (!model_->kinds[static_cast<std::size_t>(k)].in_run)
    throw RunError("loop functions: add_robot: kind '" + kind +
                   "' is not used in the experiment file (declare it in <kinds> so its parts "
                   "are built before the run)");
  if (c < 0) throw RunError("loop functions: add_robot: unknown controller '" + controller + "'");
  if (staging()) {  // (its id comes when the additions are applied)
    staged_loop_.adds.push_back({kind, controller, p.x, p.y, heading, tag});
    return kNoEntity;
  }
  EntityId id =
      state_.add_robot(static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(c), p, heading,
                       state_.tags.intern(tag), "robot" + std::to_string(state_.next_id));
  std::uint32_t i = state_.robot_index(id);
  state_.robot_engine()[i] =
      static_cast<std::uint8_t>(model_->engine_at(p, static_cast<std::uint16_t>(k)));
  if (distributed()) owner_.set(id, static_cast<std::int16_t>(owner_now(i)));
  try {
    make_controller_instance(i);
  } catch (const RunError& e) {
    throw RunError("tick " + std::to_string(state_.tick) +
                   ", loop functions: add_robot: " + e.what());
  }
  if (distributed()) host_.set(id, static_cast<std::int16_t>(host_of(i)));
  return id;
}
void Simulation::remove_robot(EntityId id) {
  checked_robot(id, "remove_robot");
  if (staging()) {
    staged_loop_.removes.push_back(id);
    return;
  }
  state_.remove_robot(id);
  host_.erase(id);
  owner_.erase(id);
  if (Controller* c = instance(id)) {
    c->destroy();
    instances_.erase(id);
  }
}
Vec2 Simulation::object_position(EntityId id) const {
  auto o = state_.object_index(id);
  if (o == kNoIndex) throw RunError("loop functions: no object with id " + std::to_string(id));
  return {state_.object_x()[o], state_.object_y()[o]};
}
void Simulation::set_object(EntityId id, Vec2 p, double size, const std::string& tag) {
  if (staging())
    throw RunError(
        "loop functions: set_object: loop functions in the per-process form do not "
        "change objects (every process would; docs/loop-functions.md)");
  auto o = state_.object_index(id);
  if (o == kNoIndex) throw RunError("loop functions: no object with id " + std::to_string(id));
  state_.object_x()[o] = p.x;
  state_.object_y()[o] = p.y;
  state_.object_size()[o] = size;
  state_.object_tag()[o] = state_.tags.intern(tag);
}
EntityId Simulation::add_object(const std::string& object_class, Vec2 p, double size,
                                const std::string& tag) {
  if (staging())
    throw RunError(
        "loop functions: add_object: loop functions in the per-process form do not "
        "change objects (every process would; docs/loop-functions.md)");
  std::uint16_t cls = 0;
  const auto& classes = model_->object_classes;
  auto it = std::find(classes.begin(), classes.end(), object_class);
  if (it == classes.end()) {
    throw RunError("loop functions: add_object: unknown object class '" + object_class +
                   "' (declare one object of that class in the experiment)");
  }
  cls = static_cast<std::uint16_t>(it - classes.begin());
  return state_.add_object(cls, p, size, state_.tags.intern(tag),
                           "object" + std::to_string(state_.next_id));
}
void Simulation::remove_object(EntityId id) {
  if (staging())
    throw RunError(
        "loop functions: remove_object: loop functions in the per-process form do not "
        "change objects (every process would; docs/loop-functions.md)");
  if (state_.object_index(id) == kNoIndex)
    throw RunError("loop functions: remove_object: no object with id " + std::to_string(id));
  state_.remove_object(id);
}

}  // namespace fleetsim
