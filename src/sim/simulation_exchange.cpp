// The distributed part of a run (sim/distribution.hpp, docs/distributed.md): which robots this
// process simulates, the exchange of their moves each tick, and the handoff of robots whose
// region passed to another process.
//
// Messages (every process sends one per round, the same to all; little-endian):
//   moves    'M' u64 tick, u32 n, u32 row x n, then for each column of the round's list the
//            column's bytes of those n rows, then u32 t, t x (u32 row, string tag)
//   handoff  'H' u64 tick, u32 n, n x (u32 row, the row's bytes column by column,
//            u32 length, the controller's saved state)
//   state    'S' like moves without the tags: every column of the robots this process held
//   hello    'E' u64 hash of the world state, u64 seed, u32 robots, u32 processes, string
//            experiment name: the first round, before tick 0; every process must agree
// Rows are the dense robot indices, the same on every process (every process holds the same
// robots in the same order). A message that does not fit (a row out of range, a robot the
// sender does not simulate, a size that does not add up) stops the run: the processes no
// longer agree, and going on would give a different world than one process.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "log/byte_io.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

namespace {
constexpr std::uint8_t kMoves = 'M', kHandoff = 'H', kState = 'S', kHello = 'E';

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Reads a row list; checks each row is a robot the sender simulated (`sender_of(row)`).
std::vector<std::uint32_t> read_rows(log::ByteReader& r, std::size_t robots) {
  const std::uint32_t n = r.u32();
  if (n > robots) throw log::LogError("its row count is larger than the world's");
  std::vector<std::uint32_t> rows(n);
  for (auto& row : rows) {
    row = r.u32();
    if (row >= robots) throw log::LogError("a row is out of range");
  }
  return rows;
}
}  // namespace

void Simulation::setup_distribution() {
  for (const auto& spec : experiment_.logs) log_every_.push_back(spec.every);
  if (!distributed()) return;
  if (!dist_.exchange) throw RunError("a distributed run needs an exchange between processes");
  if (dist_.engine_process.size() != model_->engines.size())
    throw RunError("the distribution names " + std::to_string(dist_.engine_process.size()) +
                   " regions; the experiment has " + std::to_string(model_->engines.size()));
  owned_engine_.assign(model_->engines.size(), 0);
  for (std::size_t e = 0; e < model_->engines.size(); ++e)
    owned_engine_[e] = dist_.engine_process[e] == dist_.process ? 1 : 0;
  host_.assign(state_.next_id, -1);
  for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
    host_[state_.robot_id()[i]] = static_cast<std::int16_t>(process_of(i));
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

void Simulation::desync(int from, const std::string& what) const {
  throw RunError("tick " + std::to_string(state_.tick) + ": process " + std::to_string(from) +
                 " sent " + what +
                 "; the processes no longer agree on the world (a corrupt message, or processes "
                 "built from different experiments or plug-ins)");
}

std::vector<std::vector<std::uint8_t>> Simulation::gather(std::vector<std::uint8_t> mine) {
  const auto t0 = std::chrono::steady_clock::now();
  xstats_.bytes_sent += mine.size();
  ++xstats_.rounds;
  auto all = dist_.exchange->all_gather(std::move(mine));
  xstats_.wait_seconds += seconds_since(t0);
  if (all.size() != static_cast<std::size_t>(dist_.processes))
    throw RunError("the exchange returned " + std::to_string(all.size()) + " messages for " +
                   std::to_string(dist_.processes) + " processes");
  return all;
}

void Simulation::hello() {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kHello);
  w.u64(state_.hash());
  w.u64(model_->seed);
  w.u32(static_cast<std::uint32_t>(state_.robot_count()));
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
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::size_t kinds = model_->kinds.size();
  // Robots this process holds whose region another process simulates now (loop functions
  // moved them, or the physics migrated them last tick).
  std::vector<std::uint32_t> leaving;
  bool any = false;
  for (std::uint32_t i = 0; i < n; ++i) {
    const int to = process_of(i);
    if (host_[ids[i]] == to) continue;
    any = true;
    if (host_[ids[i]] == dist_.process) leaving.push_back(i);
  }
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kHandoff);
  w.i64(state_.tick);
  w.u32(static_cast<std::uint32_t>(leaving.size()));
  for (std::uint32_t i : leaving) {
    w.u32(i);
    for (ColumnHandle c : row_columns_) state_.robots.gather_rows(c, {&i, 1}, out);
    std::vector<std::uint8_t> saved;
    if (Controller* c = instances_[ids[i]].get()) {
      try {
        if (!c->save(saved)) throw std::runtime_error("its controller type cannot save its state");
      } catch (const std::exception& e) {
        const auto& decl = model_->controllers[state_.robot_controller()[i]];
        throw RunError("tick " + std::to_string(state_.tick) + ", robot '" +
                       state_.robot_name()[i] + "' cannot move to process " +
                       std::to_string(process_of(i)) + ": controller '" + decl.id + "' (type '" +
                       decl.type + "'): " + e.what());
      }
      instances_[ids[i]].reset();  // it goes on elsewhere: no destroy()
    }
    w.u32(static_cast<std::uint32_t>(saved.size()));
    w.raw(saved.data(), saved.size());
  }
  xstats_.migrations_out += leaving.size();
  // Every process takes part in every round, even with nothing to hand over.
  auto all = gather(std::move(out));
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process) continue;
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "a handoff");
      if (r.u8() != kHandoff || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      for (std::uint32_t k = r.u32(); k > 0; --k) {
        const std::uint32_t i = r.u32();
        if (i >= n || host_[ids[i]] != p || process_of(i) == p)
          throw log::LogError("a robot it did not hold or keeps");
        const std::uint32_t row[1] = {i};
        const bool here = process_of(i) == dist_.process;
        for (ColumnHandle c : row_columns_) {
          const auto* bytes = r.take(state_.robots.desc(c).row_bytes());
          if (here) state_.robots.scatter_rows(c, row, bytes);
        }
        const std::uint32_t len = r.u32();
        const auto* saved = r.take(len);
        if (!here) continue;
        make_controller_instance(i);
        if (Controller* c = instances_[ids[i]].get()) {
          try {
            c->restore({saved, len});
          } catch (const std::exception& e) {
            const auto& decl = model_->controllers[state_.robot_controller()[i]];
            throw RunError("tick " + std::to_string(state_.tick) + ", robot '" +
                           state_.robot_name()[i] + "' arriving from process " +
                           std::to_string(p) + ": controller '" + decl.id + "': " + e.what());
          }
        } else if (!shared_[state_.robot_controller()[i] * kinds + state_.robot_kind()[i]]) {
          desync(p, "a robot whose controller could not be made here");
        }
        ++xstats_.migrations_in;
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(p, std::string("a malformed handoff (") + e.what() + ")");
    }
  }
  if (any)
    for (std::uint32_t i = 0; i < n; ++i) host_[ids[i]] = static_cast<std::int16_t>(process_of(i));
  xstats_.seconds += seconds_since(t0);
}

void Simulation::exchange_moves() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = state_.robot_count();
  // The robots this process moved this tick, in row order.
  std::vector<std::uint32_t> rows;
  for (std::uint32_t i = 0; i < n; ++i)
    if (owned_engine_[state_.robot_engine()[i]]) rows.push_back(i);
  // The halo columns, and the logged ones when the first process writes a frame after this
  // tick (the next tick's number).
  std::vector<ColumnHandle> columns = halo_columns_;
  const Tick next = state_.tick + 1;
  bool frame = false;
  for (std::int64_t every : log_every_) frame = frame || next % every == 0;
  if (frame)
    for (ColumnHandle c : row_columns_)
      if (state_.robots.desc(c).logged && !state_.robots.desc(c).halo) columns.push_back(c);
  std::sort(columns.begin(), columns.end());
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kMoves);
  w.i64(state_.tick);
  w.u32(static_cast<std::uint32_t>(rows.size()));
  for (std::uint32_t i : rows) w.u32(i);
  for (ColumnHandle c : columns) state_.robots.gather_rows(c, rows, out);
  w.u32(static_cast<std::uint32_t>(staged_tags_.size()));
  for (const auto& [row, tag] : staged_tags_) {
    w.u32(row);
    w.str(tag);
  }
  xstats_.halo_rows_sent += rows.size();
  auto all = gather(std::move(out));
  // Everyone's tags, interned in robot order as one process would (each robot's come from the
  // one process that stepped it, in the order it set them).
  std::vector<std::pair<std::uint32_t, std::string>> tags = std::move(staged_tags_);
  staged_tags_.clear();
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process) continue;
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "a move message");
      if (r.u8() != kMoves || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      const auto theirs = read_rows(r, n);
      for (std::uint32_t i : theirs)
        if (process_of(i) != p) throw log::LogError("a robot it does not simulate");
      for (ColumnHandle c : columns)
        state_.robots.scatter_rows(c, theirs, r.take(theirs.size() * state_.robots.desc(c).row_bytes()));
      for (std::uint32_t t = r.u32(); t > 0; --t) {
        const std::uint32_t row = r.u32();
        if (row >= n || process_of(row) != p) throw log::LogError("a tag for a robot it does not simulate");
        tags.emplace_back(row, r.str());
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(p, std::string("a malformed move message (") + e.what() + ")");
    }
  }
  if (!tags.empty()) {
    std::stable_sort(tags.begin(), tags.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    auto robot_tag = state_.robot_tag();
    for (auto& [i, t] : tags) robot_tag[i] = state_.tags.intern(t);
  }
  xstats_.seconds += seconds_since(t0);
}

void Simulation::gather_state() {
  if (!distributed()) return;
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  std::vector<std::uint32_t> rows;
  for (std::uint32_t i = 0; i < n; ++i)
    if (host_[ids[i]] == dist_.process) rows.push_back(i);
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kState);
  w.i64(state_.tick);
  w.u32(static_cast<std::uint32_t>(rows.size()));
  for (std::uint32_t i : rows) w.u32(i);
  for (ColumnHandle c : row_columns_) state_.robots.gather_rows(c, rows, out);
  auto all = gather(std::move(out));
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process) continue;
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "a state message");
      if (r.u8() != kState || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      const auto theirs = read_rows(r, n);
      for (std::uint32_t i : theirs)
        if (host_[ids[i]] != p) throw log::LogError("a robot it did not hold");
      for (ColumnHandle c : row_columns_)
        state_.robots.scatter_rows(c, theirs, r.take(theirs.size() * state_.robots.desc(c).row_bytes()));
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(p, std::string("a malformed state message (") + e.what() + ")");
    }
  }
  xstats_.seconds += seconds_since(t0);
}

}  // namespace fleetsim
