// Loop functions in the per-process form (include/fleetsim/loop_functions.hpp,
// docs/loop-functions.md): on each process of a run they see the robots it moves; their changes
// are staged during a hook, then every process's are exchanged and applied alike everywhere, in
// an order that does not depend on how the robots are spread; global quantities come from
// reductions, each a round of the exchange.
//
// Messages (every process sends one per round, the same to all; little-endian), parts of the
// run's next round (Exchange::all_gather with `more`):
//   reduction 'R' u8 operation ('s' sum, 'n' min, 'x' max, 'a' any, 'l' all), 8 bytes: the
//             value (i64, f64, or u8 then 7 zero bytes)
//   changes  'L' i64 tick, u8 flags (1: the run ends; 2: a status follows), [string status],
//            u32 n, n x (u32 robot id, string tag), u32 n, n x (u32 id, f64 x, f64 y,
//            f64 heading), u32 n, n x u32 id removed, u32 n, n x (string kind, string
//            controller, f64 x, f64 y, f64 heading, string tag) added
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "log/byte_io.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

namespace {
constexpr char kReduction = 'R', kChanges = 'L';
}  // namespace

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
  if (!distributed()) return {mine};
  std::vector<std::uint8_t> out = {static_cast<std::uint8_t>(kReduction),
                                   static_cast<std::uint8_t>(op)};
  out.insert(out.end(), mine.begin(), mine.end());
  auto all = gather(std::move(out), /*more=*/true);
  std::vector<std::array<std::uint8_t, 8>> values(all.size());
  for (std::size_t p = 0; p < all.size(); ++p) {
    const auto& m = all[p];
    if (m.size() != 10 || m[0] != kReduction) desync(static_cast<int>(p), "a malformed reduction");
    if (m[1] != static_cast<std::uint8_t>(op))
      throw RunError("tick " + std::to_string(state_.tick) + ": loop functions asked for " +
                     "different reductions on process " + std::to_string(dist_.process) +
                     " and process " + std::to_string(p) +
                     " (every process must call the same ones in the same order)");
    std::memcpy(values[p].data(), m.data() + 2, 8);
  }
  return values;
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
  return static_cast<std::int64_t>(
      fold_values<std::uint64_t>(reduce('s', bytes_of(mine)), 0,
                                 [](std::uint64_t a, std::uint64_t b) { return a + b; }));
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
  if (distributed()) {
    std::vector<std::uint8_t> out;
    log::ByteWriter w(out);
    w.u8(kChanges);
    w.i64(state_.tick);
    w.u8(static_cast<std::uint8_t>((merged.end ? 1 : 0) | (merged.has_status ? 2 : 0)));
    if (merged.has_status) w.str(merged.status);
    w.u32(static_cast<std::uint32_t>(merged.tags.size()));
    for (const auto& [id, tag] : merged.tags) {
      w.u32(id);
      w.str(tag);
    }
    w.u32(static_cast<std::uint32_t>(merged.moves.size()));
    for (const auto& m : merged.moves) {
      w.u32(m.id);
      w.f64(m.x);
      w.f64(m.y);
      w.f64(m.heading);
    }
    w.u32(static_cast<std::uint32_t>(merged.removes.size()));
    for (EntityId id : merged.removes) w.u32(id);
    w.u32(static_cast<std::uint32_t>(merged.adds.size()));
    for (const auto& a : merged.adds) {
      w.str(a.kind);
      w.str(a.controller);
      w.f64(a.x);
      w.f64(a.y);
      w.f64(a.heading);
      w.str(a.tag);
    }
    auto all = gather(std::move(out), /*more=*/true);
    // Process 0's status; everyone's end, tags, moves, removals and additions.
    bool status0 = merged.has_status && dist_.process == 0;
    std::string status = status0 ? merged.status : "";
    if (dist_.process != 0) {
      merged.has_status = false;
      merged.status.clear();
    }
    for (int p = 0; p < dist_.processes; ++p) {
      if (p == dist_.process) continue;
      try {
        log::ByteReader r(all[p].data(), all[p].size(), "loop functions' changes");
        if (r.u8() != kChanges || r.i64() != state_.tick)
          throw log::LogError("a message of another kind or tick");
        const std::uint8_t flags = r.u8();
        if (flags > 3) throw log::LogError("unknown flags");
        merged.end = merged.end || (flags & 1);
        if (flags & 2) {
          std::string s = r.str();
          if (p == 0) {
            status0 = true;
            status = std::move(s);
          }
        }
        // Each robot's changes come from the process that moves it.
        // (A partitioned process may not hold it: it then does not know who moves it.)
        auto own = [&](EntityId id) {
          const std::uint32_t i = state_.robot_index(id);
          if (i == kNoIndex ? !partial || id >= state_.next_id : process_of(i) != p)
            throw log::LogError("a change of a robot it does not move");
        };
        for (std::uint32_t k = r.u32(); k > 0; --k) {
          const EntityId id = r.u32();
          own(id);
          merged.tags.emplace_back(id, r.str());
        }
        for (std::uint32_t k = r.u32(); k > 0; --k) {
          LoopChanges::Move m{};
          m.id = r.u32();
          own(m.id);
          m.x = r.f64();
          m.y = r.f64();
          m.heading = r.f64();
          merged.moves.push_back(m);
        }
        for (std::uint32_t k = r.u32(); k > 0; --k) {
          const EntityId id = r.u32();
          own(id);
          merged.removes.push_back(id);
        }
        for (std::uint32_t k = r.u32(); k > 0; --k) {
          LoopChanges::Add a;
          a.kind = r.str();
          a.controller = r.str();
          a.x = r.f64();
          a.y = r.f64();
          a.heading = r.f64();
          a.tag = r.str();
          merged.adds.push_back(std::move(a));
        }
        if (r.remaining() != 0) throw log::LogError("trailing bytes");
      } catch (const log::LogError& e) {
        desync(p, std::string("malformed loop functions' changes (") + e.what() + ")");
      }
    }
    merged.has_status = status0;
    merged.status = status;
  }
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
    if (id < host_.size()) host_[id] = -1;  // (every process: no one runs it any more)
  }
  for (const auto& a : merged.adds) {
    const Vec2 p{a.x, a.y};
    if (!partial || dist_.domains.at(p) == dist_.process || within_reach(p)) {
      add_robot(a.kind, a.controller, p, a.heading, a.tag);
      continue;
    }
    // Not here: only its id, its tag in the table, and who runs it.
    state_.tags.intern(a.tag);
    const EntityId id = state_.skip_robot_id();
    owner_.resize(state_.next_id, -1);
    host_.resize(state_.next_id, -1);
    host_[id] = static_cast<std::int16_t>(dist_.domains.at(p));
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
    exchange_listed(moves_columns(/*logged=*/false), std::move(mine), /*end_of_tick=*/false);
  }
}

}  // namespace fleetsim
