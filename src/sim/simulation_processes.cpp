// Which process runs and moves what in a run on several processes (sim/distribution.hpp,
// docs/distributed.md, "Which process simulates what"): each robot's host and owner, the
// per-row flags of a tick, how far a process's robots read others. The rounds that exchange
// robots between the processes are distributed/tick_rounds.cpp's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "robots/light_sensor.hpp"
#include "robots/range_and_bearing.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

std::string Simulation::bad_value(const ColumnStore& store, std::span<const std::uint32_t> rows,
                                  const std::vector<ColumnHandle>& columns, bool positions) const {
  // Real numbers are finite and positions near the arena: a robot never gets far from it, and
  // a position beyond any grid (1e253, NaN) would make the next tick's index meaningless.
  const Vec2 lo = model_->arena_min(), hi = model_->arena_max();
  const double margin = 1e6;
  for (ColumnHandle c : columns) {
    const ColumnDesc& d = store.desc(c);
    const std::size_t w = d.width;
    if (d.type == ColumnType::kF64) {
      const double* v = static_cast<const double*>(store.data(c));
      for (std::uint32_t r : rows)
        for (std::size_t k = 0; k < w; ++k)
          if (!std::isfinite(v[r * w + k]))
            return "a non-finite '" + d.name + "' for row " + std::to_string(r);
      if (positions && (c == body::kX || c == body::kY)) {
        const double a = (c == body::kX ? lo.x : lo.y) - margin;
        const double b = (c == body::kX ? hi.x : hi.y) + margin;
        for (std::uint32_t r : rows)
          if (!(v[r] >= a && v[r] <= b))
            return "a position " + std::to_string(v[r]) + " m far outside the arena";
      }
    } else if (d.type == ColumnType::kF32) {
      const float* v = static_cast<const float*>(store.data(c));
      for (std::uint32_t r : rows)
        for (std::size_t k = 0; k < w; ++k)
          if (!std::isfinite(v[r * w + k]))
            return "a non-finite '" + d.name + "' for row " + std::to_string(r);
    }
  }
  return "";
}

void Simulation::setup_distribution() {
  for (const auto& spec : experiment_.logs) log_every_.push_back(spec.every);
  frame_logs_only_ = frame_logs_only(experiment_.logs);
  if (!distributed()) return;
  if (!dist_.make_rounds)
    throw RunError("a distributed run needs its rounds (Distribution::make_rounds)");
  if (dist_.engine_process.size() != model_->engines.size())
    throw RunError("the distribution names " + std::to_string(dist_.engine_process.size()) +
                   " regions; the experiment has " + std::to_string(model_->engines.size()));
  const bool split = !dist_.domains.empty();
  if (split && dist_.domains.count() != dist_.processes)
    throw RunError("the distribution has " + std::to_string(dist_.domains.count()) +
                   " domains for " + std::to_string(dist_.processes) + " processes");
  owned_engine_.assign(model_->engines.size(), 0);
  for (std::size_t e = 0; e < model_->engines.size(); ++e) {
    const int p = dist_.engine_process[e];
    if (p >= dist_.processes || p < (split ? -1 : 0))
      throw RunError("the distribution gives region '" + model_->engines[e].id + "' to process " +
                     std::to_string(p) + " of " + std::to_string(dist_.processes));
    owned_engine_[e] = p == dist_.process || p < 0 ? 1 : 0;
  }
  borders_.process = dist_.process;
  borders_.row_of = [this](EntityId id) { return state_.robot_index(id); };
  borders_.round = [this](std::vector<std::uint8_t> mine) {
    return rounds_->contact_round(std::move(mine));
  };
  borders_.routed_round = [this](RoutedMessage mine) {
    return rounds_->routed_contact_round(std::move(mine));
  };
  borders_.destinations = [this](std::uint32_t row, std::vector<int>& to) {
    rounds_->near_processes({state_.x()[row], state_.y()[row]}, index_.border_m, to);
  };
  for (const auto* v : {&dist_.kind_process, &dist_.robot_process})
    for (int p : *v)
      if (p >= dist_.processes)
        throw RunError("an affinity names process " + std::to_string(p) + " of a run on " +
                       std::to_string(dist_.processes));
  refresh_owners();
  host_.clear();
  for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
    host_.set(state_.robot_id()[i], static_cast<std::int16_t>(host_of(i)));
  // Only the first process writes the logs.
  if (dist_.process != 0) experiment_.logs.clear();
  rounds_ = dist_.make_rounds(*this);
}

void Simulation::make_maps_sparse() {
  state_.make_index_sparse();
  forget_robots_not_held();
}

void Simulation::forget_robots_not_held() {
  auto held = [&](EntityId id) { return state_.robot_index(id) != kNoIndex; };
  if (!host_.sparse()) {
    host_.make_sparse(held);
    owner_.make_sparse(held);
    instances_.make_sparse(held);
    return;
  }
  host_.retain(held);
  owner_.retain(held);
  instances_.retain(held);
}

void Simulation::refresh_owners() {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  // (Only the robots held here: the others' entries are never read. No pass over the whole
  // swarm's ids. The slots there are are written in parallel; a robot new to a paged map's
  // pages gets its slot after.)
  owner_.cover(state_.next_id);
  const auto workers = static_cast<std::size_t>(pool_.size());
  std::vector<std::vector<std::uint32_t>> missing(workers);  // (sparse: robots new here)
  pool_.parallel_for(n, 4096, [&](std::size_t b, std::size_t e, int worker) {
    for (std::size_t i = b; i < e; ++i) {
      const auto p = static_cast<std::int16_t>(owner_now(static_cast<std::uint32_t>(i)));
      if (std::int16_t* o = owner_.slot(ids[i]))
        *o = p;
      else
        missing[static_cast<std::size_t>(worker)].push_back(static_cast<std::uint32_t>(i));
    }
  });
  for (const auto& rows : missing)
    for (std::uint32_t i : rows) owner_.set(ids[i], static_cast<std::int16_t>(owner_now(i)));
}

void Simulation::mark_rows() {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::uint8_t* engine = state_.robot_engine().data();
  const double* x = state_.x().data();
  const double* y = state_.y().data();
  const bool split = !dist_.domains.empty();
  const int me = dist_.process;
  const double reach = index_.border_m;
  runs_.resize(n);
  mover_.resize(n);
  shared_rows_.resize(n);
  const double far = border_halo_ ? std::max(reach, halo_reach_) : reach;
  // The rows near another domain, listed per worker as the pass finds them (a few along the
  // borders), then in row order: the contact rounds and the border moves send those.
  shared_by_worker_.resize(static_cast<std::size_t>(pool_.size()));
  halo_by_worker_.resize(shared_by_worker_.size());
  for (auto& l : shared_by_worker_) l.clear();
  for (auto& l : halo_by_worker_) l.clear();
  std::vector<std::size_t> moving(shared_by_worker_.size(), 0);
  pool_.parallel_for(n, 4096, [&](std::size_t b, std::size_t e, int worker) {
    auto& shared = shared_by_worker_[static_cast<std::size_t>(worker)];
    auto& halo = halo_by_worker_[static_cast<std::size_t>(worker)];
    std::size_t& mine = moving[static_cast<std::size_t>(worker)];
    for (std::size_t i = b; i < e; ++i) {
      const int mover = owner_.get(ids[i]);
      mine += mover == me ? 1 : 0;
      runs_[i] = host_.get(ids[i]) == me;
      mover_[i] = static_cast<std::int16_t>(mover);
      const double d = split && mover == me ? dist_.domains.to_other({x[i], y[i]}, me, far)
                                            : std::numeric_limits<double>::infinity();
      // A robot of this domain near another's: the contact rounds carry it there.
      shared_rows_[i] = dist_.engine_process[engine[i]] < 0 && d <= reach;
      if (shared_rows_[i]) shared.push_back(static_cast<std::uint32_t>(i));
      // A robot others may sense in the next tick: their halo keeps it up to date.
      if (border_halo_ && d <= halo_reach_) halo.push_back(static_cast<std::uint32_t>(i));
    }
  });
  auto gather_sorted = [](std::vector<std::vector<std::uint32_t>>& parts,
                          std::vector<std::uint32_t>& out) {
    out.clear();
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    std::sort(out.begin(), out.end());
  };
  gather_sorted(shared_by_worker_, shared_list_);
  gather_sorted(halo_by_worker_, halo_list_);
  moving_count_ = 0;
  for (std::size_t m : moving) moving_count_ += m;
  borders_.mover = mover_.data();
  borders_.shared = shared_rows_.data();
  borders_.shared_rows = shared_list_;
  borders_.ids = ids;
}

bool Simulation::may_send_border_halo() const {
  // (Loop functions in the per-process form read only their process's robots.)
  if (dist_.domains.empty() || model_->engines.size() != 1 || dist_.engine_process[0] >= 0 ||
      (loop_ && !loop_local_) || pinned_ || dist_.every_robot_everywhere)
    return false;
  // The built-in parts, whose reach is known: the others may read any robot.
  static const std::set<std::string> sensors = {
      "proximity",     "proximity_noisy",      "collision",
      "positioning",   "range_and_bearing",    "colored_blob_omnidirectional_camera",
      "footbot_light", "footbot_motor_ground", "footbot_base_ground"};
  static const std::set<std::string> actuators = {"differential_drive", "quadrotor_speed", "leds",
                                                  "range_and_bearing"};
  for (const RobotKind& k : model_->kinds) {
    if (!k.in_run) continue;
    for (const PartDecl& p : k.sensors)
      if (!sensors.count(p.type)) return false;
    for (const PartDecl& p : k.actuators)
      if (!actuators.count(p.type)) return false;
  }
  return true;
}

bool Simulation::holds_part_only() const {
  return distributed() && dist_.domains.count() == dist_.processes && dist_.partition_storage &&
         may_send_border_halo() &&
         !(dist_.process == 0 && (!frame_logs_only(experiment_.logs) || dist_.first_holds_all));
}

double Simulation::halo_reach() const {
  // The farthest any part reads another robot: proximity rays and contacts (the index's
  // interaction), range-and-bearing and cameras (their range, from a centre or a device to
  // the other's far side); then two ticks of the fastest kind's motion.
  double reach = std::max(index_.interaction_m, index_.border_m);
  double move = 0;
  const double dt = static_cast<double>(model_->tick_period_ns) / kNanosPerSecond;
  for (const RobotKind& k : model_->kinds) {
    if (!k.in_run) continue;
    move = std::max(move, k.max_speed_m_per_s * dt);
    reach = std::max(reach, rab_range_m(k) + 2 * index_.max_radius_m);
    for (const PartDecl& p : k.sensors)
      if (p.type == "colored_blob_omnidirectional_camera")
        reach = std::max(reach, p.params.real("range", 3.0) + 2 * index_.max_radius_m);
      else if (p.type == "footbot_light")  // bodies between it and the lights occlude
        reach = std::max(reach, light_occlusion_reach_m(*model_));
  }
  return (reach + 2 * move) * 1.01;
}

std::string Simulation::save_controller(const Controller& c, std::vector<std::uint8_t>& out) {
  try {
    if (c.save(out)) return "";
  } catch (const std::exception& e) {
    return e.what();
  }
  return "its type cannot save its state (Controller::save returns false)";
}

void Simulation::refuse_unsavable_controllers(const std::string& need, const std::string& hint,
                                              bool pinned_ok) const {
  // One probe per controller declaration, on the first robot that has its own instance.
  std::vector<bool> checked(model_->controllers.size(), false);
  for (std::uint32_t i = 0; i < state_.robot_count(); ++i) {
    const std::uint16_t c = state_.robot_controller()[i];
    const EntityId id = state_.robot_id()[i];
    const Controller* ctrl = instance(id);
    if (!ctrl || checked[c] || (pinned_ok && pinned_process(i) >= 0)) continue;
    checked[c] = true;
    std::vector<std::uint8_t> probe;
    const std::string why = save_controller(*ctrl, probe);
    if (!why.empty()) {
      const auto& decl = model_->controllers[c];
      throw RunError("controller '" + decl.id + "' (type '" + decl.type + "') cannot " + need +
                     ", and " + why +
                     ". Give the type save() and restore() (docs/robot-parts.md), or " + hint);
    }
  }
}

bool Simulation::within_reach(Vec2 p) const {
  return Domains::distance(p, dist_.domains.box(dist_.process)) <= halo_reach_;
}

void Simulation::gather_state() {
  if (rounds_) {
    rounds_->end();
    return;
  }
  world_hash_ = state_.hash();
  world_robots_ = state_.robot_count();
}

}  // namespace fleetsim
