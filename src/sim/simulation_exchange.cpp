// The distributed part of a run (sim/distribution.hpp, docs/distributed.md): which robots this
// process simulates (its domain's, or its whole regions'), the exchange of their moves each
// tick, and the handoff of robots that changed domain or region.
//
// Messages (every process sends one per round, the same to all; little-endian; the layouts
// are in docs/distributed.md, "Messages"):
//   moves    'M' i64 tick, u32 first row of the part, u32 n, then for each column of the
//            round's list the column's bytes of the sender's n rows of the part, in row order;
//            the last part then has u32 t, t x (u32 robot id, string tag), and u8 flags: 1 =
//            take a checkpoint at the start of the next tick (the first process only; 0 from
//            others). With affinities, the last part then has u32 k, k x (u32 row, the row's
//            bytes column by column): the whole rows of the robots the sender simulates whose
//            controllers another process runs
//   border moves 'N' like moves, the part by ids [first, first + m), with u32 n then n x u32
//            robot ids (increasing) before the columns: only the sender's robots near another
//            domain (may_send_border_halo); in a partitioned run every tick (with the body's
//            kind, controller, engine and tag among the columns), and for the robots loop
//            functions moved
//   contact rounds 'B': kinematics2d's, inside the physics (physics/kinematics2d.cpp), by id
//   handoff  'H' i64 tick, u32 n, n x (u32 robot id, u16 process it goes to, u16 kind, u16
//            controller, u8 engine, u32 tag, string name, the row's bytes column by column,
//            u32 length, the controller's saved state)
//   actuation 'A' (with affinities only) i64 tick, u32 n, n x (u32 row, the row's bytes column
//            by column): the robots whose controllers the sender runs and another process
//            simulates, after their actuators acted
//   state    'S' like moves without the tags and flags: every column of the robots this
//            process held (at the end of the run, and for a checkpoint). A partitioned run's
//            end instead: 'S' i64 tick, u32 n, n x u32 ids of the robots it ran, then per hashed
//            column 'S' i64 tick, u32 column, u32 k, the column's bytes of the next k of them
//   controllers 'C' i64 tick, u32 n, n x (u32 robot id, u32 length, the controller's saved
//            state): a checkpoint's, for the robots this process holds, by id
// A moves or state round is sent in parts of at most Distribution::part_bytes (rows [first, first +
// k) of the world, k from the row size), so a message stays under the transport's 64 MiB. Which
// rows a process sends is not in the message but for 'N': every process knows it (the robots it
// moves, or those it held).
//   hello    'E' u64 hash of the world state, u64 seed, u32 robots, u32 processes, string
//            experiment name: the first round, before tick 0; every process must agree
// Rows in 'M', 'A' and a whole-world run's 'S' are the dense robot indices, the same on every
// process (every process holds the same robots in the same order); the others name robots by
// id, since a partitioned process holds only some (docs/distributed.md, "What a process
// holds"). A message that does not fit (a row out of range, a robot the
// sender does not simulate, a size that does not add up) stops the run: the processes no
// longer agree, and going on would give a different world than one process.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "core/hash.hpp"
#include "log/byte_io.hpp"
#include "robots/light_sensor.hpp"
#include "robots/range_and_bearing.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

namespace {
constexpr char kMoves = 'M', kHandoff = 'H', kState = 'S', kHello = 'E', kControllers = 'C',
               kActuation = 'A', kBorderMoves = 'N';

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

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

void Simulation::check_received(int from, std::span<const std::uint32_t> rows,
                                const std::vector<ColumnHandle>& columns) const {
  if (auto why = bad_value(state_.robots, rows, columns, true); !why.empty()) desync(from, why);
}

bool Simulation::known_identity(std::uint16_t kind, std::uint16_t controller, std::uint8_t engine,
                                std::uint32_t tag) const {
  return kind < model_->kinds.size() && controller < model_->controllers.size() &&
         engine < model_->engines.size() && tag < state_.tags.strings().size();
}

void Simulation::check_identity(int from, std::span<const std::uint32_t> rows) const {
  const auto kind = state_.robot_kind();
  const auto controller = state_.robot_controller();
  const auto engine = state_.robot_engine();
  const auto tag = state_.robot_tag();
  for (std::uint32_t i : rows)
    if (!known_identity(kind[i], controller[i], engine[i], tag[i]))
      desync(from, "a robot of no kind, controller, region or tag of this run");
}

void Simulation::setup_distribution() {
  for (const auto& spec : experiment_.logs) log_every_.push_back(spec.every);
  if (!distributed()) return;
  if (!dist_.exchange) throw RunError("a distributed run needs an exchange between processes");
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
    // Parts of the moves round: the contact rounds come before its last part.
    return gather(std::move(mine), /*more=*/true);
  };
  for (const auto* v : {&dist_.kind_process, &dist_.robot_process})
    for (int p : *v)
      if (p >= dist_.processes)
        throw RunError("an affinity names process " + std::to_string(p) + " of a run on " +
                       std::to_string(dist_.processes));
  refresh_owners();
  // (A process that placed only its part knows the others' hosts from the plan.)
  if (!placed_part_) host_.assign(state_.next_id, -1);
  for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
    host_[state_.robot_id()[i]] = static_cast<std::int16_t>(host_of(i));
  // Only the first process writes the logs.
  if (dist_.process != 0) experiment_.logs.clear();
  for (ColumnHandle c = 0; c < state_.robots.schema().size(); ++c) {
    const ColumnDesc& d = state_.robots.desc(c);
    if (d.type == ColumnType::kString || c == body::kId || c == body::kKind ||
        c == body::kController || c == body::kEngine || c == body::kTag)
      continue;
    row_columns_.push_back(c);
    if (d.halo) halo_columns_.push_back(c);
  }
}

void Simulation::refresh_owners() {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  // (Only the robots held here: the others' entries are never read. No pass over the whole
  // swarm's ids.)
  if (owner_.size() < state_.next_id) owner_.resize(state_.next_id, -1);
  pool_.parallel_for(n, 4096, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i)
      owner_[ids[i]] = static_cast<std::int16_t>(owner_now(static_cast<std::uint32_t>(i)));
  });
}

void Simulation::rebalance() {
  // Checked every kEvery ticks; made again when a domain holds more than kSlack times its
  // share. Every process decides alike: the robot counts per process (owner_) and, after moves
  // that carried every robot, the positions are the same everywhere.
  constexpr Tick kEvery = 50;
  constexpr double kSlack = 1.25;
  const std::size_t n = state_.robot_count();
  const auto p = static_cast<std::size_t>(dist_.processes);
  if (dist_.domains.empty() || !last_moves_full_ || state_.tick == 0 || state_.tick % kEvery != 0 ||
      n < 2 * p)
    return;
  std::vector<std::size_t> held(p, 0);
  const EntityId* ids = state_.robot_id().data();
  for (std::size_t i = 0; i < n; ++i) {
    const int q = owner_[ids[i]];
    if (q >= 0 && static_cast<std::size_t>(q) < p) ++held[static_cast<std::size_t>(q)];
  }
  const double share = static_cast<double>(n) / static_cast<double>(p);
  if (static_cast<double>(*std::max_element(held.begin(), held.end())) <= kSlack * share) return;
  std::vector<Vec2> points(n);
  for (std::size_t i = 0; i < n; ++i) points[i] = {state_.x()[i], state_.y()[i]};
  dist_.domains =
      Domains::bisect(points, model_->arena_min(), model_->arena_max(), dist_.processes);
  ++xstats_.rebalances;
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
      const int mover = owner_[ids[i]];
      mine += mover == me ? 1 : 0;
      runs_[i] = host_[ids[i]] == me;
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
      (loop_ && !loop_local_) || pinned_)
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

void Simulation::desync(int from, const std::string& what) const {
  throw RunError("tick " + std::to_string(state_.tick) + ": process " + std::to_string(from) +
                 " sent " + what +
                 "; the processes no longer agree on the world (a corrupt message, or processes "
                 "built from different experiments or plug-ins)");
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

std::vector<std::vector<std::uint8_t>> Simulation::gather(std::vector<std::uint8_t> mine,
                                                          bool more) {
  const auto t0 = std::chrono::steady_clock::now();
  if (mine.size() > (std::size_t{60} << 20))
    throw RunError("tick " + std::to_string(state_.tick) + ": a message of " +
                   std::to_string(mine.size()) +
                   " bytes for the other processes, more than a message may carry (robots "
                   "changing process at once, with large rows); run on fewer processes");
  xstats_.bytes_sent += mine.size();
  ++xstats_.rounds;
  auto all = dist_.exchange->all_gather(std::move(mine), more);
  xstats_.wait_seconds += seconds_since(t0);
  if (all.size() != static_cast<std::size_t>(dist_.processes))
    throw RunError("the exchange returned " + std::to_string(all.size()) + " messages for " +
                   std::to_string(dist_.processes) + " processes");
  return all;
}

void Simulation::hello() {
  const auto t0 = std::chrono::steady_clock::now();
  refuse_unsavable_controllers(
      "run on several processes: a robot moving to another process takes its controller's "
      "state",
      "pin its robots to one process (<distribution><process kinds=\"...\"/>, "
      "docs/distributed.md), or run on one process",
      /*pinned_ok=*/true);
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kHello);
  // (Processes that placed different parts of one plan compare the plan and the objects.)
  if (planned_world_) {
    Hasher objects;
    for (ColumnHandle c = 0; c < state_.objects.schema().size(); ++c) {
      const auto bytes = state_.objects.bytes(c);
      objects.bytes(bytes.data(), bytes.size());
    }
    w.u64(planned_world_->first ^ objects.value());
  } else {
    w.u64(state_.hash());
  }
  w.u64(model_->seed);
  w.u32(static_cast<std::uint32_t>(planned_world_ ? planned_world_->second : state_.robot_count()));
  w.u32(static_cast<std::uint32_t>(dist_.processes));
  w.str(std::filesystem::path(model_->name).filename().string());
  auto all = gather(out);
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process || all[p] == out) continue;
    throw RunError("process " + std::to_string(p) +
                   " starts from another world (a different experiment file, seed, option or "
                   "plug-in library); every process must run the same experiment");
  }
  xstats_.seconds += seconds_since(t0);
}

void Simulation::handoff() {
  const auto t0 = std::chrono::steady_clock::now();
  // (A partitioned process holds some positions only: the domains stay as they are.)
  if (!partitioned_) rebalance();
  refresh_owners();  // robots of a split region belong to the domain they are in now
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::size_t kinds = model_->kinds.size();
  // Robots this process holds whose region or domain another process simulates now (loop
  // functions moved them, or the physics took them across). The robots it holds that come
  // here must come (a partitioned process may get others it does not hold).
  std::vector<std::uint32_t> leaving;
  std::vector<EntityId> expected;
  {
    const auto workers = static_cast<std::size_t>(pool_.size());
    std::vector<std::vector<std::uint32_t>> leave_by(workers);
    std::vector<std::vector<EntityId>> expect_by(workers);
    pool_.parallel_for(n, 4096, [&](std::size_t b, std::size_t e, int worker) {
      auto& leave = leave_by[static_cast<std::size_t>(worker)];
      auto& expect = expect_by[static_cast<std::size_t>(worker)];
      for (std::size_t i = b; i < e; ++i) {
        const int to = host_of(static_cast<std::uint32_t>(i));
        const int from = host_[ids[i]];
        if (from == to) continue;
        if (from == dist_.process) leave.push_back(static_cast<std::uint32_t>(i));
        if (to == dist_.process) expect.push_back(ids[i]);
      }
    });
    for (std::size_t k = 0; k < workers; ++k) {
      leaving.insert(leaving.end(), leave_by[k].begin(), leave_by[k].end());
      expected.insert(expected.end(), expect_by[k].begin(), expect_by[k].end());
    }
    std::sort(leaving.begin(), leaving.end());
  }
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kHandoff);
  w.i64(state_.tick);
  w.u32(static_cast<std::uint32_t>(leaving.size()));
  for (std::uint32_t i : leaving) {
    w.u32(ids[i]);
    w.u16(static_cast<std::uint16_t>(host_of(i)));
    w.u16(state_.robot_kind()[i]);
    w.u16(state_.robot_controller()[i]);
    w.u8(state_.robot_engine()[i]);
    w.u32(state_.robot_tag()[i]);
    w.str(state_.robot_name()[i]);
    for (ColumnHandle c : row_columns_) state_.robots.gather_rows(c, {&i, 1}, out);
    std::vector<std::uint8_t> saved;
    if (Controller* c = instance(ids[i])) {
      try {
        if (!c->save(saved)) throw std::runtime_error("its controller type cannot save its state");
      } catch (const std::exception& e) {
        const auto& decl = model_->controllers[state_.robot_controller()[i]];
        throw RunError("tick " + std::to_string(state_.tick) + ", robot '" +
                       state_.robot_name()[i] + "' cannot move to process " +
                       std::to_string(host_of(i)) + ": controller '" + decl.id + "' (type '" +
                       decl.type + "'): " + e.what());
      }
      instances_[ids[i]].reset();  // it goes on elsewhere: no destroy()
    }
    w.u32(static_cast<std::uint32_t>(saved.size()));
    w.raw(saved.data(), saved.size());
  }
  xstats_.migrations_out += leaving.size();
  for (std::uint32_t i : leaving) host_[ids[i]] = static_cast<std::int16_t>(host_of(i));
  // Every process takes part in every round, even with nothing to hand over.
  auto all = gather(std::move(out));
  struct Arrival {
    int from = 0, to = 0;
    EntityId id = 0;
    std::uint16_t kind = 0, controller = 0;
    std::uint8_t engine = 0;
    std::uint32_t tag = 0;
    std::string name;
    const std::uint8_t* row = nullptr;  ///< the row's bytes, column by column
    const std::uint8_t* saved = nullptr;
    std::uint32_t saved_len = 0;
  };
  std::vector<Arrival> moved;   // every robot changing process, wherever it goes
  std::vector<EntityId> fresh;  // those coming here that this process does not hold
  std::size_t row_bytes = 0;
  for (ColumnHandle c : row_columns_) row_bytes += state_.robots.desc(c).row_bytes();
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process) continue;
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "a handoff");
      if (r.u8() != kHandoff || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      for (std::uint32_t k = r.u32(); k > 0; --k) {
        Arrival a;
        a.from = p;
        a.id = r.u32();
        a.to = r.u16();
        a.kind = r.u16();
        a.controller = r.u16();
        a.engine = r.u8();
        a.tag = r.u32();
        a.name = r.str();
        a.row = r.take(row_bytes);
        a.saved_len = r.u32();
        a.saved = r.take(a.saved_len);
        if (a.id >= host_.size() || host_[a.id] != p || a.to == p || a.to >= dist_.processes)
          throw log::LogError("a robot it did not hold, or to no other process");
        if (!known_identity(a.kind, a.controller, a.engine, a.tag))
          throw log::LogError("a robot of no kind, controller, region or tag of this run");
        // Where this process holds the robot it knows where it goes (its position is fresh:
        // it was near a border).
        const std::uint32_t i = state_.robot_index(a.id);
        if (i != kNoIndex ? host_of(i) != a.to : !partitioned_)
          throw log::LogError("a robot that does not go there");
        if (a.to == dist_.process && i == kNoIndex) fresh.push_back(a.id);
        moved.push_back(std::move(a));
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(p, std::string("a malformed handoff (") + e.what() + ")");
    }
  }
  std::sort(fresh.begin(), fresh.end());
  if (std::adjacent_find(fresh.begin(), fresh.end()) != fresh.end())
    desync(host_[*std::adjacent_find(fresh.begin(), fresh.end())], "a robot another also sent");
  if (!fresh.empty()) state_.insert_robots(fresh);
  std::vector<EntityId> came;
  for (const Arrival& a : moved) {
    host_[a.id] = static_cast<std::int16_t>(a.to);
    if (a.to != dist_.process) continue;
    const std::uint32_t i = state_.robot_index(a.id);
    state_.robot_kind()[i] = a.kind;
    state_.robot_controller()[i] = a.controller;
    state_.robot_engine()[i] = a.engine;
    state_.robot_tag()[i] = a.tag;
    state_.robot_name().set(i, a.name);
    const std::uint32_t row[1] = {i};
    const std::uint8_t* at = a.row;
    for (ColumnHandle c : row_columns_) {
      state_.robots.scatter_rows(c, row, at);
      at += state_.robots.desc(c).row_bytes();
    }
    check_received(a.from, row, row_columns_);
    owner_[a.id] = static_cast<std::int16_t>(a.to);
    try {
      make_controller_instance(i);
    } catch (const RunError& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ", a robot arriving from process " +
                     std::to_string(a.from) + ": " + e.what());
    }
    if (Controller* c = instance(a.id)) {
      try {
        c->restore({a.saved, a.saved_len});
      } catch (const std::exception& e) {
        const auto& decl = model_->controllers[a.controller];
        throw RunError("tick " + std::to_string(state_.tick) + ", robot '" + a.name +
                       "' arriving from process " + std::to_string(a.from) + ": controller '" +
                       decl.id + "': " + e.what());
      }
    } else if (!shared_[a.controller * kinds + a.kind]) {
      desync(a.from, "a robot whose controller could not be made here");
    }
    came.push_back(a.id);
    ++xstats_.migrations_in;
  }
  std::sort(came.begin(), came.end());
  for (EntityId id : expected)
    if (!std::binary_search(came.begin(), came.end(), id))
      desync(host_[id], "no handoff of robot '" + state_.robot_name()[state_.robot_index(id)] +
                            "', which it held");
  mark_rows();
  xstats_.seconds += seconds_since(t0);
}

/// Rows per part of a round, so that a part's message stays well under the transport's limit
/// (64 MiB, docs/wire-format.md): the same on every process (it depends on the schema only).
std::size_t Simulation::rows_per_part(const std::vector<ColumnHandle>& columns) const {
  std::size_t bytes = 1;
  for (ColumnHandle c : columns) bytes += state_.robots.desc(c).row_bytes();
  return std::max<std::size_t>(1, dist_.part_bytes / bytes);
}

void Simulation::put_moves_tail(std::vector<std::uint8_t>& out) const {
  log::ByteWriter w(out);
  const EntityId* ids = state_.robot_id().data();
  w.u32(static_cast<std::uint32_t>(staged_tags_.size()));
  for (const auto& [row, tag] : staged_tags_) {
    w.u32(ids[row]);
    w.str(tag);
  }
  w.u8(dist_.process == 0 && checkpoint_requested_ ? 1 : 0);
  if (pinned_) {  // whole rows for the processes running these robots' controllers
    std::vector<std::uint32_t> away;
    for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
      if (process_of(i) == dist_.process && host_[ids[i]] != dist_.process) away.push_back(i);
    w.u32(static_cast<std::uint32_t>(away.size()));
    for (std::uint32_t i : away) put_row(out, i);
  }
}

void Simulation::take_moves_tail(log::ByteReader& r, int p) {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  for (std::uint32_t t = r.u32(); t > 0; --t) {
    const EntityId id = r.u32();
    if (id >= host_.size() || host_[id] != p)
      throw log::LogError("a tag for a robot it does not run");
    incoming_tags_.emplace_back(id, r.str());
  }
  const std::uint8_t flags = r.u8();
  if (flags > 1 || (flags != 0 && p != 0)) throw log::LogError("unknown flags");
  if (flags) checkpoint_due_ = true;
  if (pinned_)
    for (std::uint32_t k = r.u32(); k > 0; --k) {
      const std::uint32_t row = r.u32();
      if (row >= n || process_of(row) != p || host_[ids[row]] == p)
        throw log::LogError("a whole row of a robot it does not simulate for another");
      take_row(r, row, true);
      const std::uint32_t one[1] = {row};
      check_received(p, one, row_columns_);
    }
}

void Simulation::exchange_rows(char kind, const std::vector<ColumnHandle>& columns,
                               const std::vector<std::int16_t>& holder, bool by_host,
                               bool more_after) {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::size_t part = rows_per_part(columns);
  std::vector<std::vector<std::uint32_t>> rows(static_cast<std::size_t>(dist_.processes));
  for (std::size_t lo = 0;; lo += part) {
    const std::size_t hi = std::min(n, lo + part);
    // Who sends which rows of this part: every process knows (the same world everywhere).
    for (auto& r : rows) r.clear();
    for (std::size_t i = lo; i < hi; ++i) {
      const int p = by_host ? holder[ids[i]] : process_of(static_cast<std::uint32_t>(i));
      rows[static_cast<std::size_t>(p)].push_back(static_cast<std::uint32_t>(i));
    }
    const auto& mine = rows[static_cast<std::size_t>(dist_.process)];
    const bool last = hi >= n;
    std::vector<std::uint8_t> out;
    log::ByteWriter w(out);
    w.u8(static_cast<std::uint8_t>(kind));
    w.i64(state_.tick);
    w.u32(static_cast<std::uint32_t>(lo));
    w.u32(static_cast<std::uint32_t>(mine.size()));
    for (ColumnHandle c : columns) state_.robots.gather_rows(c, mine, out);
    const bool moves = kind == kMoves;
    if (moves && last) put_moves_tail(out);
    xstats_.halo_rows_sent += moves ? mine.size() : 0;
    auto all = gather(std::move(out), !last || more_after);
    for (int p = 0; p < dist_.processes; ++p) {
      if (p == dist_.process) continue;
      auto& theirs = rows[static_cast<std::size_t>(p)];
      try {
        log::ByteReader r(all[p].data(), all[p].size(), "a message");
        if (r.u8() != static_cast<std::uint8_t>(kind) || r.i64() != state_.tick || r.u32() != lo)
          throw log::LogError("a message of another kind, tick or part");
        if (r.u32() != theirs.size()) throw log::LogError("another number of robots");
        for (ColumnHandle c : columns)
          state_.robots.scatter_rows(c, theirs,
                                     r.take(theirs.size() * state_.robots.desc(c).row_bytes()));
        check_received(p, theirs, columns);
        if (moves && last) take_moves_tail(r, p);
        if (r.remaining() != 0) throw log::LogError("trailing bytes");
      } catch (const log::LogError& e) {
        desync(p, std::string("a malformed '") + kind + "' message (" + e.what() + ")");
      }
    }
    if (last) break;
  }
}

void Simulation::exchange_listed(const std::vector<ColumnHandle>& columns,
                                 std::vector<EntityId> listed, bool end_of_tick) {
  // Parts by id: ids [lo, lo + part) (every process has the same next_id).
  const std::size_t part = rows_per_part(columns);
  const EntityId end = state_.next_id;
  const bool takes_in = partitioned_ && !holds_all_;
  std::vector<EntityId> received;  // the robots of other processes this process was sent
  std::size_t bytes = 0;
  for (ColumnHandle c : columns) bytes += state_.robots.desc(c).row_bytes();
  for (std::size_t lo = 0;; lo += part) {
    const std::size_t hi = std::min<std::size_t>(end, lo + part);
    const bool last = hi >= end;
    std::vector<std::uint32_t> rows;
    const auto first = std::lower_bound(listed.begin(), listed.end(), lo);
    const auto stop = std::lower_bound(first, listed.end(), hi);
    for (auto at = first; at != stop; ++at) rows.push_back(state_.robot_index(*at));
    std::vector<std::uint8_t> out;
    log::ByteWriter w(out);
    w.u8(static_cast<std::uint8_t>(kBorderMoves));
    w.i64(state_.tick);
    w.u32(static_cast<std::uint32_t>(lo));
    w.u32(static_cast<std::uint32_t>(rows.size()));
    for (auto at = first; at != stop; ++at) w.u32(*at);
    for (ColumnHandle c : columns) state_.robots.gather_rows(c, rows, out);
    if (last) put_moves_tail(out);
    xstats_.halo_rows_sent += rows.size();
    // (Loop functions' moves are sent in parts of the round that follows, as their changes.)
    auto all = gather(std::move(out), !last || !end_of_tick);
    // First every message's robots (a partitioned process takes in those it does not hold,
    // all at once), then their columns.
    struct Part {
      std::vector<EntityId> ids;
      std::size_t at = 0;  ///< where the columns start
    };
    std::vector<Part> parts(static_cast<std::size_t>(dist_.processes));
    std::vector<EntityId> fresh;
    for (int p = 0; p < dist_.processes; ++p) {
      if (p == dist_.process) continue;
      Part& t = parts[static_cast<std::size_t>(p)];
      try {
        log::ByteReader r(all[p].data(), all[p].size(), "a message");
        if (r.u8() != static_cast<std::uint8_t>(kBorderMoves) || r.i64() != state_.tick ||
            r.u32() != lo)
          throw log::LogError("a message of another kind, tick or part");
        const std::uint32_t k = r.u32();
        if (k > hi - lo) throw log::LogError("more robots than the part has");
        t.ids.resize(k);
        for (std::uint32_t j = 0; j < k; ++j) {
          const EntityId id = r.u32();
          if (id < lo || id >= hi || (j > 0 && id <= t.ids[j - 1]))
            throw log::LogError("robots out of the part or out of order");
          t.ids[j] = id;
          const std::uint32_t i = state_.robot_index(id);
          if (i == kNoIndex) {
            if (!takes_in) throw log::LogError("a robot this process does not know");
            fresh.push_back(id);
          } else if (process_of(i) != p) {
            throw log::LogError("a robot it does not move");
          }
        }
        if (r.remaining() < k * bytes) throw log::LogError("truncated");
        t.at = all[p].size() - r.remaining();
      } catch (const log::LogError& e) {
        desync(p, std::string("a malformed 'N' message (") + e.what() + ")");
      }
    }
    if (!fresh.empty()) {
      std::sort(fresh.begin(), fresh.end());
      if (std::adjacent_find(fresh.begin(), fresh.end()) != fresh.end())
        desync(host_[*std::adjacent_find(fresh.begin(), fresh.end())],
               "a robot another process also moves");
      state_.insert_robots(fresh);
    }
    for (int p = 0; p < dist_.processes; ++p) {
      if (p == dist_.process) continue;
      const Part& t = parts[static_cast<std::size_t>(p)];
      try {
        log::ByteReader r(all[p].data() + t.at, all[p].size() - t.at, "a message");
        std::vector<std::uint32_t> theirs(t.ids.size());
        for (std::size_t j = 0; j < t.ids.size(); ++j) {
          theirs[j] = state_.robot_index(t.ids[j]);
          owner_[t.ids[j]] = static_cast<std::int16_t>(p);
        }
        for (ColumnHandle c : columns)
          state_.robots.scatter_rows(c, theirs,
                                     r.take(theirs.size() * state_.robots.desc(c).row_bytes()));
        check_received(p, theirs, columns);
        if (partitioned_) check_identity(p, theirs);
        if (last) take_moves_tail(r, p);
        if (r.remaining() != 0) throw log::LogError("trailing bytes");
      } catch (const log::LogError& e) {
        desync(p, std::string("a malformed 'N' message (") + e.what() + ")");
      }
      if (takes_in) received.insert(received.end(), t.ids.begin(), t.ids.end());
    }
    if (last) break;
  }
  if (!takes_in || !end_of_tick) return;
  // What this process needs: the robots it moves, and those it was sent that its robots may
  // read in the next tick. A robot it was not sent is near no other domain than its own, so
  // none of this process's robots can read it (docs/distributed.md, "What a process holds").
  // The others stay until they are a sixteenth of what it holds, and are then dropped at
  // once: dropping is a pass over every row, and they are never read (their rows are those
  // of the last tick they travelled, as in a run where every process holds the whole world;
  // every process receives every robot sent, so a robot held here is up to date whenever it
  // is near another domain).
  // (Counted first, without a pass over every row: this process's robots are those it moves
  // this tick, counted by mark_rows; the robots taken in since were sent, so not its own.)
  const std::size_t n = state_.robot_count();
  std::size_t needed = moving_count_;
  for (EntityId id : received) {
    const std::uint32_t i = state_.robot_index(id);
    needed += within_reach({state_.x()[i], state_.y()[i]}) ? 1 : 0;
  }
  if ((n - std::min(n, needed)) * 16 <= n) return;
  const EntityId* ids = state_.robot_id().data();
  std::vector<std::uint8_t> keep(n, 0);
  for (std::size_t i = 0; i < n; ++i) keep[i] = owner_[ids[i]] == dist_.process;
  for (EntityId id : received) {
    const std::uint32_t i = state_.robot_index(id);
    keep[i] = keep[i] || within_reach({state_.x()[i], state_.y()[i]});
  }
  state_.retain_robots(keep);  // (owner_ of the robots dropped is never read again)
}

std::vector<ColumnHandle> Simulation::moves_columns(bool logged) const {
  std::vector<ColumnHandle> columns = halo_columns_;
  if (logged)
    for (ColumnHandle c : row_columns_)
      if (state_.robots.desc(c).logged && !state_.robots.desc(c).halo) columns.push_back(c);
  // A partitioned process may be sent robots it does not hold: with who they are.
  if (partitioned_)
    for (ColumnHandle c : {body::kKind, body::kController, body::kEngine, body::kTag})
      columns.push_back(c);
  std::sort(columns.begin(), columns.end());
  return columns;
}

bool Simulation::within_reach(Vec2 p) const {
  return Domains::distance(p, dist_.domains.box(dist_.process)) <= halo_reach_;
}

void Simulation::exchange_moves() {
  const auto t0 = std::chrono::steady_clock::now();
  // The logged columns too when the first process writes a frame after this tick (the next
  // tick's number).
  const Tick next = state_.tick + 1;
  bool frame = false;
  for (std::int64_t every : log_every_) frame = frame || next % every == 0;
  const std::vector<ColumnHandle> columns = moves_columns(frame);
  // The robots each process moved this tick are those of its regions (engines as the tick
  // began: migration comes after the exchange).
  // This process's tags are sent (staged_tags_) and merged with the others' (incoming_tags_).
  incoming_tags_.clear();
  for (const auto& [row, tag] : staged_tags_)
    incoming_tags_.emplace_back(state_.robot_id()[row], tag);
  // A run whose robots read only their neighbours (may_send_border_halo), on a tick no log
  // keeps: only the robots near another domain, whose halo another process may read. A
  // partitioned run sends those alike, or on such a tick every robot each process moves.
  last_moves_full_ = !(border_halo_ && !frame);
  if (partitioned_ || !last_moves_full_) {
    std::vector<EntityId> listed;
    const EntityId* ids = state_.robot_id().data();
    if (!frame) {
      for (std::uint32_t i : halo_list_) listed.push_back(ids[i]);
    } else {
      for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
        if (mover_[i] == dist_.process) listed.push_back(ids[i]);
    }
    std::sort(listed.begin(), listed.end());  // (rows may not be in id order)
    exchange_listed(columns, std::move(listed), /*end_of_tick=*/true);
  } else {
    exchange_rows(kMoves, columns, host_, false);
  }
  staged_tags_.clear();
  if (checkpoint_requested_) {  // announced: every process takes it at the next step
    checkpoint_requested_ = false;
    checkpoint_due_ = true;
  }
  // Everyone's tags, interned in robot order as one process would (each robot's come from the
  // one process that stepped it, in the order it set them); set on the robots held here.
  if (!incoming_tags_.empty()) {
    std::stable_sort(incoming_tags_.begin(), incoming_tags_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto robot_tag = state_.robot_tag();
    for (auto& [id, t] : incoming_tags_) {
      const std::uint32_t tag = state_.tags.intern(t);
      if (const std::uint32_t i = state_.robot_index(id); i != kNoIndex) robot_tag[i] = tag;
    }
    incoming_tags_.clear();
  }
  xstats_.held_robot_ticks += state_.robot_count();
  xstats_.held_robots_max = std::max<std::uint64_t>(xstats_.held_robots_max, state_.robot_count());
  xstats_.seconds += seconds_since(t0);
}

void Simulation::put_row(std::vector<std::uint8_t>& out, std::uint32_t row) const {
  log::ByteWriter w(out);
  w.u32(row);
  for (ColumnHandle c : row_columns_) state_.robots.gather_rows(c, {&row, 1}, out);
}

void Simulation::take_row(log::ByteReader& r, std::uint32_t row, bool write) {
  const std::uint32_t one[1] = {row};
  for (ColumnHandle c : row_columns_) {
    const auto* bytes = r.take(state_.robots.desc(c).row_bytes());
    if (write) state_.robots.scatter_rows(c, one, bytes);
  }
}

void Simulation::exchange_actuation() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint32_t n = static_cast<std::uint32_t>(state_.robot_count());
  const EntityId* ids = state_.robot_id().data();
  // The robots this process ran whose region another process simulates: their readings,
  // commands and everything the actuators set, for the physics there (and the halo after).
  std::vector<std::uint32_t> away;
  for (std::uint32_t i = 0; i < n; ++i)
    if (host_[ids[i]] == dist_.process && process_of(i) != dist_.process) away.push_back(i);
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kActuation);
  w.i64(state_.tick);
  w.u32(static_cast<std::uint32_t>(away.size()));
  for (std::uint32_t i : away) put_row(out, i);
  auto all = gather(std::move(out));
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process) continue;
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "an actuation");
      if (r.u8() != kActuation || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      for (std::uint32_t k = r.u32(); k > 0; --k) {
        const std::uint32_t i = r.u32();
        if (i >= n || host_[ids[i]] != p || process_of(i) == p)
          throw log::LogError("a robot it does not run for another");
        take_row(r, i, true);
        const std::uint32_t one[1] = {i};
        check_received(p, one, row_columns_);
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(p, std::string("a malformed actuation (") + e.what() + ")");
    }
  }
  xstats_.seconds += seconds_since(t0);
}

Simulation::SavedControllers Simulation::checkpoint_rounds(const SavedControllers& mine) {
  const auto t0 = std::chrono::steady_clock::now();
  exchange_rows(kState, row_columns_, host_, true, /*more_after=*/true);
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kControllers);
  w.i64(state_.tick);
  w.u32(static_cast<std::uint32_t>(mine.size()));
  for (const auto& [id, bytes] : mine) {
    w.u32(id);
    w.u32(static_cast<std::uint32_t>(bytes.size()));
    w.raw(bytes.data(), bytes.size());
  }
  auto all = gather(std::move(out), /*more=*/true);  // the handoff ends the round
  SavedControllers merged;
  if (dist_.process == 0) {
    merged = mine;
    for (int p = 1; p < dist_.processes; ++p) {
      try {
        log::ByteReader r(all[p].data(), all[p].size(), "a message");
        if (r.u8() != kControllers || r.i64() != state_.tick)
          throw log::LogError("a message of another kind or tick");
        for (std::uint32_t k = r.u32(); k > 0; --k) {
          const EntityId id = r.u32();
          const std::uint32_t len = r.u32();
          const std::uint8_t* bytes = r.take(len);
          if (id >= host_.size() || host_[id] != p || state_.robot_index(id) == kNoIndex)
            throw log::LogError("a controller of a robot it does not hold");
          merged.emplace_back(id, std::vector<std::uint8_t>(bytes, bytes + len));
        }
        if (r.remaining() != 0) throw log::LogError("trailing bytes");
      } catch (const log::LogError& e) {
        desync(p, std::string("a malformed 'C' message (") + e.what() + ")");
      }
    }
    std::sort(merged.begin(), merged.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 1; k < merged.size(); ++k)
      if (merged[k].first == merged[k - 1].first)
        desync(host_[merged[k].first], "a controller another process also sent");
  }
  xstats_.seconds += seconds_since(t0);
  return merged;
}

void Simulation::gather_state() {
  if (!distributed()) {
    world_hash_ = state_.hash();
    world_robots_ = state_.robot_count();
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t before = xstats_.bytes_sent;
  if (partitioned_) {
    hash_partitioned_world();
  } else {
    // Every column of every robot, from the process that held it last.
    exchange_rows(kState, row_columns_, host_, true);
    world_hash_ = state_.hash();
    world_robots_ = state_.robot_count();
  }
  xstats_.gather_bytes = xstats_.bytes_sent - before;
  xstats_.gather_seconds = seconds_since(t0);
  xstats_.seconds += xstats_.gather_seconds;
}

void Simulation::partition() {
  // (border_halo_: loop functions, if any, are in the per-process form.)
  partitioned_ = dist_.partition_storage && border_halo_ && !checkpoints_ && !resuming_;
  holds_all_ = !partitioned_ || (dist_.process == 0 && !log_every_.empty());
  if (!partitioned_ || holds_all_) return;
  borders_.partial = true;
  refresh_owners();
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  std::vector<std::uint8_t> keep(n);
  for (std::size_t i = 0; i < n; ++i)
    keep[i] = owner_[ids[i]] == dist_.process || within_reach({state_.x()[i], state_.y()[i]});
  state_.retain_robots(keep);
  state_.robots.shrink_to_fit();
  // The robot grid covers the domain and its reach only (its cells sized to the robots held):
  // one over the whole arena would be as large as the whole swarm's.
  const Domains::Box& own = dist_.domains.box(dist_.process);
  const Vec2 lo = model_->arena_min(), hi = model_->arena_max();
  const double reach = halo_reach_;
  const Vec2 a{std::clamp(own.min.x - reach, lo.x, hi.x),
               std::clamp(own.min.y - reach, lo.y, hi.y)};
  const Vec2 b{std::clamp(own.max.x + reach, lo.x, hi.x),
               std::clamp(own.max.y + reach, lo.y, hi.y)};
  if (b.x > a.x && b.y > a.y)
    index_.init(*model_, state_.robot_count(), near_reach_, std::make_pair(a, b));
  // What the load and the whole world's columns took goes back to the system (the allocator
  // keeps freed memory otherwise, and the process would stay as large as the world).
  malloc_trim(0);
}

void Simulation::hash_partitioned_world() {
  // WorldState::hash() of the whole world, without it on any process. The hash takes the
  // robots as one sum per column of digests of (id, column, row), so each process sums the
  // digests of the robots it ran last (their rows are the newest: ghosts are left out), the
  // processes exchange their sums and counts (a few hundred bytes each), and every process
  // adds them up, in any order, and hashes them with the tick, status, objects and tags, which
  // every process holds alike. No process sees another's robots.
  const auto procs = static_cast<std::size_t>(dist_.processes);
  const auto me = static_cast<std::int16_t>(dist_.process);
  const auto ids = state_.robot_id();
  std::vector<std::uint8_t> take(ids.size());
  std::uint64_t mine = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    take[i] = host_[ids[i]] == me;
    mine += take[i];
  }
  const std::vector<std::uint64_t> own = state_.robot_digests(take);
  std::vector<std::uint8_t> piece;
  log::ByteWriter w(piece);
  w.u8(kState);
  w.i64(state_.tick);
  w.u64(mine);
  w.u32(static_cast<std::uint32_t>(own.size()));
  for (std::uint64_t d : own) w.u64(d);
  const auto all = gather(std::move(piece));
  std::uint64_t total = 0;
  std::vector<std::uint64_t> sums(own.size(), 0);
  for (std::size_t p = 0; p < procs; ++p) {
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "a message");
      if (r.u8() != kState || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      total += r.u64();
      if (r.u32() != sums.size()) throw log::LogError("another number of columns");
      for (auto& d : sums) d += r.u64();
      if (r.remaining() != 0) throw log::LogError("bytes after its end");
    } catch (const log::LogError& e) {
      desync(static_cast<int>(p), std::string("a malformed 'S' message (") + e.what() + ")");
    }
  }
  world_hash_ = state_.hash_with(total, sums);
  world_robots_ = total;
}

}  // namespace fleetsim
