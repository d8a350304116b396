#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>

#include "control/diffusion.hpp"
#include "robots/proximity_sensor.hpp"

namespace fleetsim {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kPreStep: return "pre_step";
    case Phase::kSenseControl: return "sense_control";
    case Phase::kAct: return "act";
    case Phase::kPhysics: return "physics";
    case Phase::kPostStep: return "post_step";
    case Phase::kLog: return "log";
  }
  return "?";
}

/// A controller declaration resolved to its implementation. Built-in controllers run as
/// inline kernels over the columns (no virtual call, no allocation); plug-in controllers are
/// one object per robot.
struct Simulation::CompiledController {
  enum class Kind { kDiffusion, kIdle, kPlugin } kind = Kind::kPlugin;
  std::string id, type;
  DiffusionParams diffusion;
  const ControllerFactory* factory = nullptr;
  Params params;
};

Simulation::Simulation(Experiment experiment, const PluginRegistry& registry)
    : experiment_(std::move(experiment)),
      model_(experiment_.model),
      state_(experiment_.state),
      pool_(experiment_.threads) {
  for (const auto& decl : model_->controllers) {
    auto c = std::make_unique<CompiledController>();
    c->id = decl.id;
    c->type = decl.type;
    c->params = decl.params;
    if (decl.type == "diffusion") {
      c->kind = CompiledController::Kind::kDiffusion;
      c->diffusion = DiffusionParams::from(decl.params);
    } else if (decl.type == "idle") {
      c->kind = CompiledController::Kind::kIdle;
    } else {
      c->factory = registry.controller_factory(decl.type);
      if (!c->factory) throw RunError("controller type '" + decl.type + "' has no factory");
    }
    controllers_.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < state_.robot_count(); ++i) make_controller_instance(i);
  if (!experiment_.loop_functions.empty()) {
    const auto* f = registry.loop_functions_factory(experiment_.loop_functions);
    if (!f) throw RunError("loop functions '" + experiment_.loop_functions + "' have no factory");
    loop_ = (*f)();
  }
  for (const auto& spec : experiment_.logs) {
    try {
      writers_.push_back(spec.format == log::LogFormat::kDeeco
                             ? log::make_deeco_log_writer(spec.path)
                             : log::make_frame_log_writer(spec.path));
    } catch (const std::exception& e) {
      throw RunError("cannot create log '" + spec.path + "': " + e.what());
    }
  }
  staged_tags_.resize(static_cast<std::size_t>(pool_.size()));
  index_.init(*model_, state_.robot_count());
}

Simulation::~Simulation() {
  try {
    finish();
  } catch (...) {
  }
}

void Simulation::make_controller_instance(std::size_t i) {
  EntityId id = state_.robot_id[i];
  if (instances_.size() <= id) instances_.resize(id + 1);
  const auto& c = *controllers_[state_.robot_controller[i]];
  if (c.kind != CompiledController::Kind::kPlugin) return;
  instances_[id] = (*c.factory)();
  try {
    instances_[id]->init(c.params, id);
  } catch (const std::exception& e) {
    throw RunError("robot '" + state_.robot_name[i] + "', controller '" + c.type +
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

namespace {

// The logged column lists, until the engine declares its columns (ColumnDesc): the required
// columns and one LED per robot, filled from WorldState's vectors by write_logs().
const log::LogHeader& logged_columns() {
  static const log::LogHeader columns = [] {
    log::LogHeader h;
    h.robot_columns = log::required_robot_columns();
    h.robot_columns.push_back(log::led_column(1));
    h.object_columns = log::required_object_columns();
    return h;
  }();
  return columns;
}

}  // namespace

void Simulation::write_headers() {
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
  h.segments.assign(model_->segments.begin() +
                        static_cast<std::ptrdiff_t>(model_->bitmap_segment_count),
                    model_->segments.end());
  for (const auto& k : model_->kinds) h.kinds.push_back({k.name, k.radius_m, 1, 0});
  for (const auto& c : model_->object_classes) h.object_classes.push_back({c});
  h.robot_columns = logged_columns().robot_columns;
  h.object_columns = logged_columns().object_columns;
  for (std::size_t i = 0; i < state_.robot_count(); ++i)
    h.robots.push_back({state_.robot_id[i], state_.robot_kind[i], state_.robot_name[i]});
  for (std::size_t o = 0; o < state_.object_count(); ++o)
    h.objects.push_back({state_.object_id[o], state_.object_class[o], state_.object_name[o]});
  for (std::size_t w = 0; w < writers_.size(); ++w) {
    h.every = experiment_.logs[w].every;
    writers_[w]->begin(h);
  }
}

void Simulation::write_logs() {
  if (writers_.empty()) return;
  log::LogFrameView v{.tick = state_.tick,
                      .time_ns = state_.tick * model_->tick_period_ns,
                      .status = state_.status,
                      .tags = state_.tags.strings()};
  log::fill_columns(v, logged_columns(),
                    {{"id", state_.robot_id},
                     {"kind", state_.robot_kind},
                     {"x", state_.x},
                     {"y", state_.y},
                     {"theta", state_.theta},
                     {"tag", state_.robot_tag},
                     {"led", state_.led}},
                    {{"id", state_.object_id},
                     {"class", state_.object_class},
                     {"x", state_.object_x},
                     {"y", state_.object_y},
                     {"size", state_.object_size},
                     {"tag", state_.object_tag}});
  for (std::size_t w = 0; w < writers_.size(); ++w)
    if (state_.tick % experiment_.logs[w].every == 0) {
      try {
        writers_[w]->write(v);
      } catch (const std::exception& e) {
        throw RunError("tick " + std::to_string(state_.tick) + ": log '" +
                       experiment_.logs[w].path + "': " + e.what());
      }
    }
}

void Simulation::start() {
  if (started_) return;
  started_ = true;
  if (loop_) {
    try {
      loop_->init(experiment_.loop_params, *this);
    } catch (const std::exception& e) {
      throw RunError("loop functions '" + experiment_.loop_functions + "': init: " + e.what());
    }
  }
  write_headers();
  write_logs();
}

void Simulation::sense_and_control() {
  index_.rebuild(*model_, state_, pool_);
  const std::size_t n = state_.robot_count();
  const double dt = static_cast<double>(model_->tick_period_ns) / kNanosPerSecond;
  const std::uint32_t* order = index_.robots.order().data();
  // Robots are visited in the grid's slot order (neighbours adjacent in memory); each robot
  // writes only its own readings and commands, so the order changes nothing in the results.
  pool_.parallel_for(n, 256, [&](std::size_t b, std::size_t e, int worker) {
    for (std::size_t s = b; s < e; ++s) {
      const std::uint32_t i = order[s];
      float* prox = &state_.proximity[static_cast<std::size_t>(i) * kProximityCount];
      read_proximity_slot(*model_, state_, index_, static_cast<std::uint32_t>(s), prox);
      const CompiledController& c = *controllers_[state_.robot_controller[i]];
      switch (c.kind) {
        case CompiledController::Kind::kDiffusion:
          diffusion_step(c.diffusion, prox, state_.realization[i], state_.cmd_left[i],
                         state_.cmd_right[i]);
          break;
        case CompiledController::Kind::kIdle:
          state_.cmd_left[i] = state_.cmd_right[i] = 0;
          break;
        case CompiledController::Kind::kPlugin: {
          EntityId id = state_.robot_id[i];
          RobotIO io;
          io.id = id;
          io.tick = state_.tick;
          io.dt_s = dt;
          io.proximity = {prox, static_cast<std::size_t>(kProximityCount)};
          io.contact_angles = {&state_.contact_angle[static_cast<std::size_t>(i) * kMaxContacts],
                               state_.contact_count[i]};
          io.degree_of_realization = state_.realization[i];
          io.left_wheel_m_per_s = &state_.cmd_left[i];
          io.right_wheel_m_per_s = &state_.cmd_right[i];
          io.led = &state_.led[i];
          io.tag = &state_.tags.str(state_.robot_tag[i]);
          auto& staged = staged_tags_[static_cast<std::size_t>(worker)];
          io.set_tag = [&staged, i](const std::string& t) { staged.emplace_back(i, t); };
          io.rng = CounterRng(model_->seed, id, state_.tick, RandomStream::kController);
          try {
            instances_[id]->step(io);
          } catch (const std::exception& ex) {
            throw RunError("tick " + std::to_string(state_.tick) + ", robot '" +
                           state_.robot_name[i] + "' (id " + std::to_string(id) +
                           "), controller '" + c.type + "': " + ex.what());
          }
          break;
        }
      }
    }
  });
  robot_steps_ += n;
}

void Simulation::act() {
  // Tags set by controllers are interned here, in robot order, so tag indices (and the log)
  // do not depend on which worker ran which robot.
  std::vector<std::pair<std::uint32_t, std::string>> all;
  for (auto& s : staged_tags_) {
    all.insert(all.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
    s.clear();
  }
  if (all.empty()) return;
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [i, t] : all) state_.robot_tag[i] = state_.tags.intern(t);
}

void Simulation::step() {
  if (!started_) start();
  run_phase(Phase::kPreStep, [&] {
    if (loop_) loop_->pre_step(*this);
  });
  run_phase(Phase::kSenseControl, [&] { sense_and_control(); });
  run_phase(Phase::kAct, [&] { act(); });
  run_phase(Phase::kPhysics, [&] { physics_.step(*model_, state_, index_, pool_); });
  state_.tick++;
  run_phase(Phase::kPostStep, [&] {
    if (loop_) {
      loop_->post_step(*this);
      if (loop_->is_finished(*this)) state_.end_requested = true;
    }
  });
  run_phase(Phase::kLog, [&] { write_logs(); });
}

bool Simulation::done() const {
  if (state_.end_requested) return true;
  return model_->length_ticks > 0 && state_.tick >= model_->length_ticks;
}

void Simulation::finish() {
  if (finished_) return;
  finished_ = true;
  std::string error;
  if (loop_ && started_) {
    try {
      loop_->destroy(*this);
    } catch (const std::exception& e) {
      error = std::string("loop functions: destroy: ") + e.what();
    }
  }
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
  return i;
}

Vec2 Simulation::robot_position(EntityId id) const {
  auto i = checked_robot(id, "robot_position");
  return {state_.x[i], state_.y[i]};
}
double Simulation::robot_heading(EntityId id) const {
  return state_.theta[checked_robot(id, "robot_heading")];
}
std::string Simulation::robot_tag(EntityId id) const {
  return state_.tags.str(state_.robot_tag[checked_robot(id, "robot_tag")]);
}
void Simulation::set_robot_tag(EntityId id, const std::string& tag) {
  state_.robot_tag[checked_robot(id, "set_robot_tag")] = state_.tags.intern(tag);
}
Color Simulation::robot_led(EntityId id) const { return state_.led[checked_robot(id, "robot_led")]; }
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
  return state_.contact_count[checked_robot(id, "robot_contact_count")];
}
void Simulation::move_robot(EntityId id, Vec2 p, double heading) {
  auto i = checked_robot(id, "move_robot");
  check_robot_position(p, heading, "move_robot");
  state_.x[i] = p.x;
  state_.y[i] = p.y;
  state_.theta[i] = wrap_angle(heading);
  state_.robot_engine[i] = static_cast<std::uint8_t>(model_->engine_at(p));
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
  if (c < 0) throw RunError("loop functions: add_robot: unknown controller '" + controller + "'");
  EntityId id = state_.add_robot(static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(c), p,
                                 heading, state_.tags.intern(tag),
                                 "robot" + std::to_string(state_.next_id));
  std::uint32_t i = state_.robot_index(id);
  state_.robot_engine[i] = static_cast<std::uint8_t>(model_->engine_at(p));
  make_controller_instance(i);
  return id;
}
void Simulation::remove_robot(EntityId id) {
  checked_robot(id, "remove_robot");
  state_.remove_robot(id);
  if (id < instances_.size()) instances_[id].reset();
}
Vec2 Simulation::object_position(EntityId id) const {
  auto o = state_.object_index(id);
  if (o == kNoIndex) throw RunError("loop functions: no object with id " + std::to_string(id));
  return {state_.object_x[o], state_.object_y[o]};
}
void Simulation::set_object(EntityId id, Vec2 p, double size, const std::string& tag) {
  auto o = state_.object_index(id);
  if (o == kNoIndex) throw RunError("loop functions: no object with id " + std::to_string(id));
  state_.object_x[o] = p.x;
  state_.object_y[o] = p.y;
  state_.object_size[o] = size;
  state_.object_tag[o] = state_.tags.intern(tag);
}
EntityId Simulation::add_object(const std::string& object_class, Vec2 p, double size,
                                const std::string& tag) {
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
  if (state_.object_index(id) == kNoIndex)
    throw RunError("loop functions: remove_object: no object with id " + std::to_string(id));
  state_.remove_object(id);
}

}  // namespace fleetsim
