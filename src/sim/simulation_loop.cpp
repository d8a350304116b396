// Loop functions in the per-process form (include/fleetsim/loop_functions.hpp,
// docs/loop-functions.md): on each process of a run they see the robots it moves; their changes
// are staged during a hook, then every process's are exchanged and applied alike everywhere, in
// an order that does not depend on how the robots are spread; global quantities come from
// reductions, each a round of the exchange.
// (Their rounds: distributed/tick_rounds.cpp.)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "log/byte_io.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

std::vector<EntityId> Simulation::robots() const {
  const auto ids = state_.robot_id();
  if (!(staging() && distributed())) return {ids.begin(), ids.end()};
  std::vector<EntityId> mine;
  for (std::uint32_t i = 0; i < ids.size(); ++i)
    if (process_of(i) == dist_.process) mine.push_back(ids[i]);
  std::sort(mine.begin(), mine.end());  // (a partitioned process's rows may not be in id order)
  return mine;
}

void Simulation::set_status(const std::string& status) {
  if (staging()) {
    staged_loop_.has_status = true;
    staged_loop_.status = status;
    return;
  }
  state_.status = status;
}

void Simulation::end_run() {
  if (staging()) {
    staged_loop_.end = true;
    return;
  }
  state_.end_requested = true;
}

void Simulation::run_hook(const std::function<void()>& hook, bool post_step) {
  if (!loop_local_) {
    hook();
    if (post_step && loop_->is_finished(*this)) state_.end_requested = true;
    return;
  }
  staged_loop_ = LoopChanges{};
  in_hook_ = true;
  bool finished = false;
  try {
    hook();
    finished = post_step && loop_->is_finished(*this);
  } catch (...) {
    in_hook_ = false;
    throw;
  }
  in_hook_ = false;
  apply_loop_changes(finished);
}

std::vector<std::array<std::uint8_t, 8>> Simulation::reduce(char op,
                                                            std::array<std::uint8_t, 8> mine) {
  if (!rounds_) return {mine};
  return rounds_->reduce(op, mine);
}

namespace {

/// Every process's value of a reduction (their 8 bytes as T), folded with `fold` from `first`.
template <class T, class Fold>
T fold_values(const std::vector<std::array<std::uint8_t, 8>>& values, T first, Fold fold) {
  T r = first;
  for (const auto& v : values) {
    T x;
    std::memcpy(&x, v.data(), sizeof x);
    r = fold(r, x);
  }
  return r;
}

template <class T>
std::array<std::uint8_t, 8> bytes_of(T v) {
  std::array<std::uint8_t, 8> b{};
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

}  // namespace

std::int64_t Simulation::sum(std::int64_t mine) {
  // Exact and modulo 2^64, as unsigned addition: the order does not matter, and a sum that
  // overflows wraps the same way on any number of processes.
  return static_cast<std::int64_t>(fold_values<std::uint64_t>(
      reduce('s', bytes_of(mine)), 0, [](std::uint64_t a, std::uint64_t b) { return a + b; }));
}

double Simulation::min(double mine) {
  return fold_values<double>(reduce('n', bytes_of(mine)), std::nan(""),
                             [](double a, double b) { return std::fmin(a, b); });
}

double Simulation::max(double mine) {
  return fold_values<double>(reduce('x', bytes_of(mine)), std::nan(""),
                             [](double a, double b) { return std::fmax(a, b); });
}

bool Simulation::any(bool mine) {
  return fold_values<std::uint8_t>(reduce('a', bytes_of<std::uint8_t>(mine)), 0,
                                   [](std::uint8_t a, std::uint8_t b) { return a | b; }) != 0;
}

bool Simulation::all(bool mine) {
  return fold_values<std::uint8_t>(reduce('l', bytes_of<std::uint8_t>(mine)), 1,
                                   [](std::uint8_t a, std::uint8_t b) { return a & b; }) != 0;
}

void Simulation::apply_loop_changes(bool finished) {
  LoopChanges merged = std::move(staged_loop_);
  staged_loop_ = LoopChanges{};
  merged.end = merged.end || finished;
  // A partitioned process holds some robots only: it applies the changes of those, and adds
  // only the robots it moves or may read.
  const bool partial = partitioned_ && !holds_all_;
  if (rounds_) rounds_->loop_changes(merged, partial);
  // The same order on every process, whoever made each change: by robot id (a robot's own in
  // the order they were made), then additions by what they add.
  auto by_id = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::stable_sort(merged.tags.begin(), merged.tags.end(), by_id);
  std::stable_sort(merged.moves.begin(), merged.moves.end(),
                   [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(merged.removes.begin(), merged.removes.end());
  merged.removes.erase(std::unique(merged.removes.begin(), merged.removes.end()),
                       merged.removes.end());
  std::sort(merged.adds.begin(), merged.adds.end(), [](const auto& a, const auto& b) {
    return std::tie(a.x, a.y, a.heading, a.kind, a.controller, a.tag) <
           std::tie(b.x, b.y, b.heading, b.kind, b.controller, b.tag);
  });
  // Applied as the world's (staging() is off: in_hook_ is false).
  if (merged.has_status) state_.status = merged.status;
  if (merged.end) state_.end_requested = true;
  auto held = [&](EntityId id) { return !partial || state_.robot_index(id) != kNoIndex; };
  for (const auto& [id, tag] : merged.tags) {
    if (held(id))
      set_robot_tag(id, tag);
    else
      state_.tags.intern(tag);  // (every process's tag table alike)
  }
  for (const auto& m : merged.moves)
    if (held(m.id)) move_robot(m.id, {m.x, m.y}, m.heading);
  for (EntityId id : merged.removes) {
    if (held(id)) remove_robot(id);
    host_.erase(id);  // (every process: no one runs it any more)
  }
  for (const auto& a : merged.adds) {
    const Vec2 p{a.x, a.y};
    if (!partial || dist_.domains.at(p) == dist_.process || within_reach(p)) {
      add_robot(a.kind, a.controller, p, a.heading, a.tag);
      continue;
    }
    // Not here: only its id, its tag in the table, and who runs it.
    state_.tags.intern(a.tag);
    // (A process holding its part keeps no entry for a robot it does not hold.)
    const EntityId id = state_.skip_robot_id();
    if (!host_.sparse()) host_.set(id, static_cast<std::int16_t>(dist_.domains.at(p)));
  }
  if (partitioned_ && !merged.moves.empty()) {
    // The robots moved may now be within reach of processes that do not hold them: their
    // movers send them (the processes that hold them moved them already).
    std::vector<EntityId> mine;
    for (const auto& m : merged.moves)
      if (const std::uint32_t i = state_.robot_index(m.id);
          i != kNoIndex && process_of(i) == dist_.process)
        mine.push_back(m.id);
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    rounds_->loop_moves(std::move(mine));
  }
}

}  // namespace fleetsim
