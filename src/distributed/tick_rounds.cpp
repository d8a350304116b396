// The rounds of a run on several processes (tick_rounds.hpp, docs/distributed.md): the start,
// the exchange of the robots' moves each tick, the handoff of robots that changed domain or
// region, the loop functions' rounds, a checkpoint's and the end's.
//
// Messages (every process sends one per round, the same to all, but for a partitioned run's
// routed rounds, 'N' and 'B', whose parts go to the sender's peers only: docs/distributed.md,
// "Routed rounds"; little-endian; the layouts are in docs/distributed.md, "Messages"):
//   moves    'M' i64 tick, u32 first row of the part, u32 n, then for each column of the
//            round's list the column's bytes of the sender's n rows of the part, in row order;
//            the last part then has u32 t, t x (u32 robot id, string tag), and u8 flags: 1 =
//            take a checkpoint at the start of the next tick, 2 = interventions follow
//            (string: lines of an interventions file) to land before the next tick, 4 = the
//            next tick's moves carry every robot to the first process (a whole frame for the
//            live view; a split run makes it in blocks instead, 'Q', 'W', 'F'), 16 (with 4) =
//            as rows even on a split run (the ROS 2 bridge's /NS/poses) (those four from the
//            first process only), 8 = a reply follows
//            (string: what became of interventions the sender landed alone; from the others
//            only, for the first process). With affinities, the last part
//            then has u32 k, k x (u32 row, the row's bytes column by column): the whole rows of the
//            robots the sender simulates whose controllers another process runs
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
//            process held (at the end of the run). A partitioned run's
//            end instead: 'S' i64 tick, u32 n, n x u32 ids of the robots it ran, then per hashed
//            column 'S' i64 tick, u32 column, u32 k, the column's bytes of the next k of them
//   checkpoint 'C' i64 tick, then to the first process only: k x (u64 size, the part's
//            bytes), u64 k, u64 robots, u32 c, c x u64 digest sums: a checkpoint's parts
//            (docs/checkpoints.md), a routed part of the handoff round
// A moves or state round is sent in parts of at most Distribution::part_bytes (rows [first, first +
// k) of the world, k from the row size), so a message stays under the transport's 64 MiB. Which
// rows a process sends is not in the message but for 'N': every process knows it (the robots it
// moves, or those it held).
//   reduction 'R' u8 operation ('s' sum, 'n' min, 'x' max, 'a' any, 'l' all), 8 bytes: the
//            value (i64, f64, or u8 then 7 zero bytes): loop functions in the per-process form,
//            a part of the run's next round
//   changes  'L' i64 tick, u8 flags (1: the run ends; 2: a status follows), [string status],
//            u32 n, n x (u32 robot id, string tag), u32 n, n x (u32 id, f64 x, f64 y,
//            f64 heading), u32 n, n x u32 id removed, u32 n, n x (string kind, string
//            controller, f64 x, f64 y, f64 heading, string tag) added: the same loop functions'
//            changes in one of their hooks, a part of the run's next round
//   hello    'E' u64 hash of the world state, u64 seed, u32 robots, u32 processes, string
//            experiment name: the first round, before tick 0; every process must agree
// Rows in 'M', 'A' and a whole-world run's 'S' are the dense robot indices, the same on every
// process (every process holds the same robots in the same order); the others name robots by
// id, since a partitioned process holds only some (docs/distributed.md, "What a process
// holds"). A message that does not fit (a row out of range, a robot the
// sender does not simulate, a size that does not add up) stops the run: the processes no
// longer agree, and going on would give a different world than one process.
#include "distributed/tick_rounds.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <queue>

#include "core/hash.hpp"
#include "log/byte_io.hpp"
#include "log/frame_log_writer.hpp"

namespace fleetsim::distributed {

using namespace message;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The common bytes of a routed part that carry only its kind and tick: throws LogError if
/// they are not `kind` and `tick`.
void expect_kind_and_tick(const std::vector<std::uint8_t>& in, char kind, Tick tick) {
  log::ByteReader h(in.data(), in.size(), "a message");
  if (h.u8() != static_cast<std::uint8_t>(kind) || h.i64() != tick || h.remaining() != 0)
    throw log::LogError("a message of another kind or tick");
}

}  // namespace

std::unique_ptr<ProcessRounds> make_tick_rounds(Simulation& sim) {
  return std::make_unique<TickRounds>(sim);
}

TickRounds::TickRounds(Simulation& sim)
    : sim_(sim),
      state_(sim.state_),
      model_(*sim.model_),
      dist_(sim.dist_),
      host_(sim.host_),
      owner_(sim.owner_),
      xstats_(sim.xstats_) {
  if (!dist_.exchange) throw RunError("a distributed run needs an exchange between processes");
  for (ColumnHandle c = 0; c < state_.robots.schema().size(); ++c) {
    const ColumnDesc& d = state_.robots.desc(c);
    if (d.type == ColumnType::kString || c == body::kId || c == body::kKind ||
        c == body::kController || c == body::kEngine || c == body::kTag)
      continue;
    row_columns_.push_back(c);
    if (d.halo) halo_columns_.push_back(c);
  }
}

void TickRounds::start() {
  hello();
  partition();
}

void TickRounds::actuation() {
  exchange_actuation();
}

void TickRounds::end() {
  const auto t0 = std::chrono::steady_clock::now();
  auto& xstats = xstats_;
  const std::uint64_t before = xstats.bytes_sent, before_received = xstats.bytes_received;
  if (sim_.partitioned_) {
    hash_partitioned_world();
  } else {
    // Every column of every robot, from the process that held it last.
    exchange_rows(kState, row_columns_, host_, true);
    sim_.world_hash_ = state_.hash();
    sim_.world_robots_ = state_.robot_count();
  }
  xstats_.gather_bytes = xstats_.bytes_sent - before;
  xstats_.gather_bytes_received = xstats_.bytes_received - before_received;
  xstats_.gather_seconds = seconds_since(t0);
  xstats_.seconds += xstats_.gather_seconds;
}

void TickRounds::check_received(int from, std::span<const std::uint32_t> rows,
                                const std::vector<ColumnHandle>& columns) const {
  if (auto why = sim_.bad_value(state_.robots, rows, columns, true); !why.empty())
    desync(from, why);
}

bool TickRounds::known_identity(std::uint16_t kind, std::uint16_t controller, std::uint8_t engine,
                                std::uint32_t tag) const {
  return kind < model_.kinds.size() && controller < model_.controllers.size() &&
         engine < model_.engines.size() && tag < state_.tags.strings().size();
}

void TickRounds::check_identity(int from, std::span<const std::uint32_t> rows) const {
  const auto kind = state_.robot_kind();
  const auto controller = state_.robot_controller();
  const auto engine = state_.robot_engine();
  const auto tag = state_.robot_tag();
  for (std::uint32_t i : rows)
    if (!known_identity(kind[i], controller[i], engine[i], tag[i]))
      desync(from, "a robot of no kind, controller, region or tag of this run");
}

void TickRounds::rebalance() {
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
    const int q = owner_.get(ids[i]);
    if (q >= 0 && static_cast<std::size_t>(q) < p) ++held[static_cast<std::size_t>(q)];
  }
  const double share = static_cast<double>(n) / static_cast<double>(p);
  if (static_cast<double>(*std::max_element(held.begin(), held.end())) <= kSlack * share) return;
  std::vector<Vec2> points(n);
  for (std::size_t i = 0; i < n; ++i) points[i] = {state_.x()[i], state_.y()[i]};
  dist_.domains = Domains::bisect(points, model_.arena_min(), model_.arena_max(), dist_.processes);
  ++xstats_.rebalances;
}

void TickRounds::desync(int from, const std::string& what) const {
  throw RunError("tick " + std::to_string(state_.tick) + ": process " + std::to_string(from) +
                 " sent " + what +
                 "; the processes no longer agree on the world (a corrupt message, or processes "
                 "built from different experiments or plug-ins)");
}

std::vector<std::vector<std::uint8_t>> TickRounds::gather(std::vector<std::uint8_t> mine,
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
  for (int p = 0; p < dist_.processes; ++p)
    if (p != dist_.process) xstats_.bytes_received += all[static_cast<std::size_t>(p)].size();
  return all;
}

RoutedReceived TickRounds::route(RoutedMessage mine, const std::vector<int>& peers, bool more) {
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t size = mine.common.size();
  for (int q : peers)
    if (static_cast<std::size_t>(q) < mine.to.size())
      size += mine.to[static_cast<std::size_t>(q)].size();
  if (size > (std::size_t{60} << 20))
    throw RunError("tick " + std::to_string(state_.tick) + ": a message of " +
                   std::to_string(size) +
                   " bytes for the other processes, more than a message may carry (robots "
                   "changing process at once, with large rows); run on fewer processes");
  xstats_.bytes_sent += size;
  ++xstats_.rounds;
  RoutedReceived got = dist_.exchange->routed(std::move(mine), dist_.process, peers, more);
  xstats_.wait_seconds += seconds_since(t0);
  const auto n = static_cast<std::size_t>(dist_.processes);
  if (got.common.size() != n || got.from.size() != n)
    throw RunError("the exchange returned " + std::to_string(got.common.size()) + " messages for " +
                   std::to_string(dist_.processes) + " processes");
  for (std::size_t p = 0; p < n; ++p)
    if (static_cast<int>(p) != dist_.process)
      xstats_.bytes_received += got.common[p].size() + got.from[p].size();
  return got;
}

bool TickRounds::may_move(std::uint32_t row, int p) const {
  // A partitioned process is sent the robots near its own domain only (routed rounds), so a
  // row it holds of a robot far from it may be older than the sender's: of who moves it, it
  // knows only that it is not itself. Every other process holds every robot's mover.
  return sim_.partitioned_ ? sim_.process_of(row) != dist_.process : sim_.process_of(row) == p;
}

void TickRounds::near_processes(Vec2 p, double reach, std::vector<int>& to) const {
  for (int q : peers_)
    if (Domains::distance(p, dist_.domains.box(q)) <= reach) to.push_back(q);
}

void TickRounds::hello() {
  const auto t0 = std::chrono::steady_clock::now();
  sim_.refuse_unsavable_controllers(
      "run on several processes: a robot moving to another process takes its controller's "
      "state",
      "pin its robots to one process (<distribution><process kinds=\"...\"/>, "
      "docs/distributed.md), or run on one process",
      /*pinned_ok=*/true);
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kHello);
  // (Processes that placed different parts of one plan compare the plan and the objects;
  // processes that resumed, each its part, the checkpoint's world.)
  if (sim_.resumed_world_) {
    w.u64(sim_.resumed_world_->first);
  } else if (sim_.planned_world_) {
    Hasher objects;
    for (ColumnHandle c = 0; c < state_.objects.schema().size(); ++c) {
      const auto bytes = state_.objects.bytes(c);
      objects.bytes(bytes.data(), bytes.size());
    }
    w.u64(sim_.planned_world_->first ^ objects.value());
  } else {
    w.u64(state_.hash());
  }
  w.u64(model_.seed);
  w.u32(static_cast<std::uint32_t>(sim_.resumed_world_   ? sim_.resumed_world_->second
                                   : sim_.planned_world_ ? sim_.planned_world_->second
                                                         : state_.robot_count()));
  w.u32(static_cast<std::uint32_t>(dist_.processes));
  w.str(std::filesystem::path(model_.name).filename().string());
  auto all = gather(out);
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process || all[p] == out) continue;
    throw RunError("process " + std::to_string(p) +
                   " starts from another world (a different experiment file, seed, option or "
                   "plug-in library); every process must run the same experiment");
  }
  xstats_.seconds += seconds_since(t0);
}

void TickRounds::handoff() {
  const auto t0 = std::chrono::steady_clock::now();
  // (A partitioned process holds some positions only: the domains stay as they are.)
  if (!sim_.partitioned_) rebalance();
  sim_.refresh_owners();  // robots of a split region belong to the domain they are in now
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::size_t kinds = model_.kinds.size();
  // Robots this process holds whose region or domain another process simulates now (loop
  // functions moved them, or the physics took them across). The robots it holds that come
  // here must come (a partitioned process may get others it does not hold).
  std::vector<std::uint32_t> leaving;
  std::vector<EntityId> expected;
  {
    const auto workers = static_cast<std::size_t>(sim_.pool_.size());
    std::vector<std::vector<std::uint32_t>> leave_by(workers);
    std::vector<std::vector<EntityId>> expect_by(workers);
    sim_.pool_.parallel_for(n, 4096, [&](std::size_t b, std::size_t e, int worker) {
      auto& leave = leave_by[static_cast<std::size_t>(worker)];
      auto& expect = expect_by[static_cast<std::size_t>(worker)];
      for (std::size_t i = b; i < e; ++i) {
        const int to = sim_.host_of(static_cast<std::uint32_t>(i));
        const int from = host_.get(ids[i]);
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
  // A robot's record: who it is, its row and its controller's state, for the process it goes
  // to.
  auto put_record = [&](std::vector<std::uint8_t>& out, std::uint32_t i) {
    log::ByteWriter w(out);
    w.u32(ids[i]);
    w.u16(static_cast<std::uint16_t>(sim_.host_of(i)));
    w.u16(state_.robot_kind()[i]);
    w.u16(state_.robot_controller()[i]);
    w.u8(state_.robot_engine()[i]);
    w.u32(state_.robot_tag()[i]);
    w.str(state_.robot_name()[i]);
    for (ColumnHandle c : row_columns_) state_.robots.gather_rows(c, {&i, 1}, out);
    std::vector<std::uint8_t> saved;
    if (Controller* c = sim_.instance(ids[i])) {
      try {
        if (!c->save(saved)) throw std::runtime_error("its controller type cannot save its state");
      } catch (const std::exception& e) {
        const auto& decl = model_.controllers[state_.robot_controller()[i]];
        throw RunError("tick " + std::to_string(state_.tick) + ", robot '" +
                       state_.robot_name()[i] + "' cannot move to process " +
                       std::to_string(sim_.host_of(i)) + ": controller '" + decl.id + "' (type '" +
                       decl.type + "'): " + e.what());
      }
      sim_.instances_.erase(ids[i]);  // it goes on elsewhere: no destroy()
    }
    w.u32(static_cast<std::uint32_t>(saved.size()));
    w.raw(saved.data(), saved.size());
  };
  // A partitioned run routes the records: each goes to the process the robot goes to, which
  // is a peer (a robot crosses into a domain next to its own), or, for a robot loop functions
  // moved far, to every process; who goes where goes to every process, which keeps the hosts
  // of the robots it holds. Otherwise every record goes to every process.
  const bool routed = sim_.partitioned_;
  const auto processes = static_cast<std::size_t>(dist_.processes);
  std::vector<std::uint8_t> head;
  log::ByteWriter w(head);
  w.u8(kHandoff);
  w.i64(state_.tick);
  RoutedMessage m;
  if (routed) {
    std::vector<std::vector<std::uint32_t>> by_peer(processes);
    std::vector<std::uint32_t> far;
    w.u32(static_cast<std::uint32_t>(leaving.size()));
    for (std::uint32_t i : leaving) {
      const int to = sim_.host_of(i);
      w.u32(ids[i]);
      w.u16(static_cast<std::uint16_t>(to));
      if (std::binary_search(peers_.begin(), peers_.end(), to))
        by_peer[static_cast<std::size_t>(to)].push_back(i);
      else
        far.push_back(i);
    }
    w.u32(static_cast<std::uint32_t>(far.size()));
    for (std::uint32_t i : far) put_record(head, i);
    m.to.resize(processes);
    for (int q : peers_) {
      const auto& rows = by_peer[static_cast<std::size_t>(q)];
      auto& part = m.to[static_cast<std::size_t>(q)];
      log::ByteWriter(part).u32(static_cast<std::uint32_t>(rows.size()));
      for (std::uint32_t i : rows) put_record(part, i);
    }
  } else {
    w.u32(static_cast<std::uint32_t>(leaving.size()));
    for (std::uint32_t i : leaving) put_record(head, i);
  }
  xstats_.migrations_out += leaving.size();
  for (std::uint32_t i : leaving) host_.set(ids[i], static_cast<std::int16_t>(sim_.host_of(i)));
  // Every process takes part in every round, even with nothing to hand over.
  std::vector<std::vector<std::uint8_t>> heads, parts;
  if (routed) {
    m.common = std::move(head);
    RoutedReceived got = route(std::move(m), peers_, /*more=*/false);
    heads = std::move(got.common);
    parts = std::move(got.from);
  } else {
    heads = gather(std::move(head));
  }
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
  struct Move {
    int from = 0, to = 0;
    EntityId id = 0;
  };
  std::vector<Move> moved;        // every robot changing process, wherever it goes
  std::vector<Arrival> arrivals;  // the records of those coming here
  std::vector<EntityId> fresh;    // those coming here that this process does not hold
  std::size_t row_bytes = 0;
  for (ColumnHandle c : row_columns_) row_bytes += state_.robots.desc(c).row_bytes();
  for (int p = 0; p < dist_.processes; ++p) {
    if (p == dist_.process) continue;
    try {
      // Who goes where: checked against what this process knows of the robots it holds.
      auto take_move = [&](EntityId id, int to) {
        // (A process holding its part knows the hosts of the robots it holds only.)
        const int host = host_.get(id);
        if ((host >= 0 ? host != p : !host_.sparse()) || to == p || to >= dist_.processes)
          throw log::LogError("a robot it did not hold, or to no other process");
        // Where this process holds the robot it knows where it goes (its position is fresh:
        // it was near a border). A partitioned run's process is sent only the robots near its
        // own domain, so it knows that of the robots coming to it only.
        const std::uint32_t i = state_.robot_index(id);
        const bool knows = i != kNoIndex && (!sim_.partitioned_ || to == dist_.process);
        if (knows ? sim_.host_of(i) != to : !sim_.partitioned_)
          throw log::LogError("a robot that does not go there");
        if (to == dist_.process && i == kNoIndex) fresh.push_back(id);
        moved.push_back({p, to, id});
      };
      auto take_records = [&](log::ByteReader& r, bool for_me) {
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
          if (!known_identity(a.kind, a.controller, a.engine, a.tag))
            throw log::LogError("a robot of no kind, controller, region or tag of this run");
          if (for_me && a.to != dist_.process)
            throw log::LogError("a record of a robot going to another process");
          if (!routed) take_move(a.id, a.to);
          if (a.to == dist_.process) arrivals.push_back(std::move(a));
        }
      };
      log::ByteReader r(heads[static_cast<std::size_t>(p)].data(),
                        heads[static_cast<std::size_t>(p)].size(), "a handoff");
      if (r.u8() != kHandoff || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      const std::size_t first_move = moved.size(), first_arrival = arrivals.size();
      if (routed) {
        for (std::uint32_t k = r.u32(); k > 0; --k) {
          const EntityId id = r.u32();
          take_move(id, r.u16());
        }
        take_records(r, false);  // (robots going to processes that are not its peers)
        const auto& part = parts[static_cast<std::size_t>(p)];
        if (!part.empty()) {
          log::ByteReader b(part.data(), part.size(), "a handoff");
          take_records(b, true);
          if (b.remaining() != 0) throw log::LogError("trailing bytes");
        }
        // Every robot it said comes here, and no other, has its record.
        std::vector<EntityId> listed, sent;
        for (std::size_t k = first_move; k < moved.size(); ++k)
          if (moved[k].to == dist_.process) listed.push_back(moved[k].id);
        for (std::size_t k = first_arrival; k < arrivals.size(); ++k)
          sent.push_back(arrivals[k].id);
        std::sort(listed.begin(), listed.end());
        std::sort(sent.begin(), sent.end());
        if (listed != sent) throw log::LogError("records of other robots than those it hands over");
      } else {
        take_records(r, false);
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(p, std::string("a malformed handoff (") + e.what() + ")");
    }
  }
  std::sort(fresh.begin(), fresh.end());
  if (std::adjacent_find(fresh.begin(), fresh.end()) != fresh.end())
    desync(host_.get(*std::adjacent_find(fresh.begin(), fresh.end())), "a robot another also sent");
  if (!fresh.empty()) state_.insert_robots(fresh);
  // (A process holding its part keeps the hosts of the robots it holds: those coming here
  // were inserted above.)
  for (const Move& a : moved)
    if (!host_.sparse() || state_.robot_index(a.id) != kNoIndex)
      host_.set(a.id, static_cast<std::int16_t>(a.to));
  std::vector<EntityId> came;
  for (const Arrival& a : arrivals) {
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
    owner_.set(a.id, static_cast<std::int16_t>(a.to));
    try {
      sim_.make_controller_instance(i);
    } catch (const RunError& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ", a robot arriving from process " +
                     std::to_string(a.from) + ": " + e.what());
    }
    if (Controller* c = sim_.instance(a.id)) {
      try {
        c->restore({a.saved, a.saved_len});
      } catch (const std::exception& e) {
        const auto& decl = model_.controllers[a.controller];
        throw RunError("tick " + std::to_string(state_.tick) + ", robot '" + a.name +
                       "' arriving from process " + std::to_string(a.from) + ": controller '" +
                       decl.id + "': " + e.what());
      }
    } else if (!sim_.shared_[a.controller * kinds + a.kind]) {
      desync(a.from, "a robot whose controller could not be made here");
    }
    came.push_back(a.id);
    ++xstats_.migrations_in;
  }
  std::sort(came.begin(), came.end());
  for (EntityId id : expected)
    if (!std::binary_search(came.begin(), came.end(), id))
      desync(host_.get(id), "no handoff of robot '" + state_.robot_name()[state_.robot_index(id)] +
                                "', which it held");
  sim_.mark_rows();
  xstats_.seconds += seconds_since(t0);
}

/// Rows per part of a round, so that a part's message stays well under the transport's limit
/// (64 MiB, docs/wire-format.md): the same on every process (it depends on the schema only).
std::size_t TickRounds::rows_per_part(const std::vector<ColumnHandle>& columns) const {
  std::size_t bytes = 1;
  for (ColumnHandle c : columns) bytes += state_.robots.desc(c).row_bytes();
  return std::max<std::size_t>(1, dist_.part_bytes / bytes);
}

void TickRounds::put_moves_tail(std::vector<std::uint8_t>& out) const {
  log::ByteWriter w(out);
  const EntityId* ids = state_.robot_id().data();
  w.u32(static_cast<std::uint32_t>(sim_.staged_tags_.size()));
  for (const auto& [row, tag] : sim_.staged_tags_) {
    w.u32(ids[row]);
    w.str(tag);
  }
  const bool announce = dist_.process == 0 && !sim_.interventions_announced_.empty();
  const bool whole = dist_.process == 0 && sim_.whole_frame_requested_;
  const bool rows = whole && sim_.whole_rows_requested_;
  const bool reply = dist_.process != 0 && !sim_.replies_out_.empty();
  w.u8((dist_.process == 0 && sim_.checkpoint_requested_ ? 1 : 0) | (announce ? 2 : 0) |
       (whole ? 4 : 0) | (reply ? 8 : 0) | (rows ? 16 : 0));
  if (announce) w.str(sim_.interventions_announced_);
  if (reply) w.str(sim_.replies_out_);
  if (sim_.pinned_) {  // whole rows for the processes running these robots' controllers
    std::vector<std::uint32_t> away;
    for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
      if (sim_.process_of(i) == dist_.process && host_.get(ids[i]) != dist_.process)
        away.push_back(i);
    w.u32(static_cast<std::uint32_t>(away.size()));
    for (std::uint32_t i : away) put_row(out, i);
  }
}

void TickRounds::take_moves_tail(log::ByteReader& r, int p) {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  for (std::uint32_t t = r.u32(); t > 0; --t) {
    const EntityId id = r.u32();
    const int host = host_.get(id);  // (known to a process holding its part if it holds it)
    if (host >= 0 ? host != p : !host_.sparse())
      throw log::LogError("a tag for a robot it does not run");
    incoming_tags_.emplace_back(id, r.str());
  }
  const std::uint8_t flags = r.u8();
  if (flags > 31 || ((flags & 23) != 0 && p != 0) || ((flags & 8) != 0 && p == 0) ||
      ((flags & 16) != 0 && (flags & 4) == 0))
    throw log::LogError("unknown flags");
  if (flags & 1) sim_.checkpoint_due_ = true;
  if (flags & 2) sim_.interventions_due_ = r.str();
  if (flags & 4) sim_.whole_frame_next_ = true;
  if (flags & 16) sim_.whole_rows_next_ = true;
  if (flags & 8) {  // (a reply: for the first process only)
    std::string lines = r.str();
    if (dist_.process == 0) sim_.replies_in_ += lines;
  }
  if (sim_.pinned_)
    for (std::uint32_t k = r.u32(); k > 0; --k) {
      const std::uint32_t row = r.u32();
      if (row >= n || sim_.process_of(row) != p || host_.get(ids[row]) == p)
        throw log::LogError("a whole row of a robot it does not simulate for another");
      take_row(r, row, true);
      const std::uint32_t one[1] = {row};
      check_received(p, one, row_columns_);
    }
}

void TickRounds::exchange_rows(char kind, const std::vector<ColumnHandle>& columns,
                               const IdMap<std::int16_t>& holder, bool by_host, bool more_after) {
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::size_t part = rows_per_part(columns);
  std::vector<std::vector<std::uint32_t>> rows(static_cast<std::size_t>(dist_.processes));
  for (std::size_t lo = 0;; lo += part) {
    const std::size_t hi = std::min(n, lo + part);
    // Who sends which rows of this part: every process knows (the same world everywhere).
    for (auto& r : rows) r.clear();
    for (std::size_t i = lo; i < hi; ++i) {
      const int p = by_host ? holder.get(ids[i]) : sim_.process_of(static_cast<std::uint32_t>(i));
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

void TickRounds::exchange_listed(const std::vector<ColumnHandle>& columns,
                                 std::vector<EntityId> listed, bool end_of_tick, bool frame) {
  // Parts by id: ids [lo, lo + part) (every process has the same next_id).
  const std::size_t part = rows_per_part(columns);
  const EntityId end = state_.next_id;
  const bool takes_in = sim_.partitioned_ && !sim_.holds_all_;
  // A partitioned run routes each robot to the processes whose domains it is within reach of
  // (and on a frame's tick every robot to the first process, which writes it); the robots
  // loop functions moved, which may be anywhere, go to every process.
  const bool routed = sim_.partitioned_;
  const std::vector<int>& peers = !end_of_tick ? others_ : frame ? frame_peers_ : peers_;
  std::vector<EntityId> received;  // the robots of other processes this process was sent
  std::size_t bytes = 0;
  for (ColumnHandle c : columns) bytes += state_.robots.desc(c).row_bytes();
  const auto processes = static_cast<std::size_t>(dist_.processes);
  for (std::size_t lo = 0;; lo += part) {
    const std::size_t hi = std::min<std::size_t>(end, lo + part);
    const bool last = hi >= end;
    const auto first = std::lower_bound(listed.begin(), listed.end(), lo);
    const auto stop = std::lower_bound(first, listed.end(), hi);
    // The robots (u32 n, n x u32 id, then their columns) of `ids`.
    auto put_robots = [&](std::vector<std::uint8_t>& out, std::span<const EntityId> ids) {
      log::ByteWriter w(out);
      std::vector<std::uint32_t> rows;
      rows.reserve(ids.size());
      w.u32(static_cast<std::uint32_t>(ids.size()));
      for (EntityId id : ids) {
        w.u32(id);
        rows.push_back(state_.robot_index(id));
      }
      for (ColumnHandle c : columns) state_.robots.gather_rows(c, rows, out);
      xstats_.halo_rows_sent += rows.size();
    };
    std::vector<std::uint8_t> head;
    {
      log::ByteWriter w(head);
      w.u8(static_cast<std::uint8_t>(kBorderMoves));
      w.i64(state_.tick);
      w.u32(static_cast<std::uint32_t>(lo));
    }
    // What each process received: `head[p]` (the kind, tick and part, and in its last part
    // the tail) and `body[p]` (the robots); one message when not routed (head, robots, tail).
    std::vector<std::vector<std::uint8_t>> heads, bodies;
    // (Loop functions' moves are sent in parts of the round that follows, as their changes.)
    const bool more = !last || !end_of_tick;
    if (routed) {
      RoutedMessage m;
      if (last) put_moves_tail(head);
      m.common = std::move(head);
      m.to.resize(processes);
      std::vector<EntityId> to;
      for (int q : peers) {
        to.clear();
        const bool all = !end_of_tick || (frame && q == 0);
        const Domains::Box& box = dist_.domains.box(q);
        for (auto at = first; at != stop; ++at) {
          const std::uint32_t i = state_.robot_index(*at);
          if (all || Domains::distance(Vec2{state_.x()[i], state_.y()[i]}, box) <= sim_.halo_reach_)
            to.push_back(*at);
        }
        put_robots(m.to[static_cast<std::size_t>(q)], to);
      }
      RoutedReceived got = route(std::move(m), peers, more);
      heads = std::move(got.common);
      bodies = std::move(got.from);
    } else {
      put_robots(head, std::span<const EntityId>(first, stop));
      if (last) put_moves_tail(head);
      heads = gather(std::move(head), more);
    }
    // First every message's robots (a partitioned process takes in those it does not hold,
    // all at once), then their columns.
    struct Part {
      std::vector<EntityId> ids;
      std::size_t tail = 0;  ///< where the tail starts in the head
      std::size_t at = 0;    ///< where the columns start in the body
    };
    std::vector<Part> parts(processes);
    std::vector<EntityId> fresh;
    auto body_of = [&](int p) -> const std::vector<std::uint8_t>& {
      return routed ? bodies[static_cast<std::size_t>(p)] : heads[static_cast<std::size_t>(p)];
    };
    for (int p = 0; p < dist_.processes; ++p) {
      if (p == dist_.process) continue;
      Part& t = parts[static_cast<std::size_t>(p)];
      try {
        const auto& in = heads[static_cast<std::size_t>(p)];
        log::ByteReader h(in.data(), in.size(), "a message");
        if (h.u8() != static_cast<std::uint8_t>(kBorderMoves) || h.i64() != state_.tick ||
            h.u32() != lo)
          throw log::LogError("a message of another kind, tick or part");
        t.tail = in.size() - h.remaining();
        const auto& body = body_of(p);
        const std::size_t from = routed ? 0 : t.tail;
        if (routed && body.empty()) continue;  // (not a peer: no robots)
        log::ByteReader r(body.data() + from, body.size() - from, "a message");
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
          } else if (!may_move(i, p)) {
            throw log::LogError("a robot it does not move");
          }
        }
        if (r.remaining() < k * bytes) throw log::LogError("truncated");
        t.at = body.size() - r.remaining();
      } catch (const log::LogError& e) {
        desync(p, std::string("a malformed 'N' message (") + e.what() + ")");
      }
    }
    if (!fresh.empty()) {
      std::sort(fresh.begin(), fresh.end());
      if (std::adjacent_find(fresh.begin(), fresh.end()) != fresh.end())
        desync(host_.get(*std::adjacent_find(fresh.begin(), fresh.end())),
               "a robot another process also moves");
      state_.insert_robots(fresh);
    }
    for (int p = 0; p < dist_.processes; ++p) {
      if (p == dist_.process) continue;
      const Part& t = parts[static_cast<std::size_t>(p)];
      try {
        const auto& body = body_of(p);
        log::ByteReader r(body.data() + t.at, body.size() - t.at, "a message");
        std::vector<std::uint32_t> theirs(t.ids.size());
        for (std::size_t j = 0; j < t.ids.size(); ++j) {
          theirs[j] = state_.robot_index(t.ids[j]);
          owner_.set(t.ids[j], static_cast<std::int16_t>(p));
          // (The process moving a robot of a partitioned run runs it: no affinities.)
          if (host_.sparse()) host_.set(t.ids[j], static_cast<std::int16_t>(p));
        }
        for (ColumnHandle c : columns)
          state_.robots.scatter_rows(c, theirs,
                                     r.take(theirs.size() * state_.robots.desc(c).row_bytes()));
        check_received(p, theirs, columns);
        if (sim_.partitioned_) check_identity(p, theirs);
        if (routed) {
          if (r.remaining() != 0) throw log::LogError("trailing bytes");
          const auto& in = heads[static_cast<std::size_t>(p)];
          log::ByteReader h(in.data() + t.tail, in.size() - t.tail, "a message");
          if (last) take_moves_tail(h, p);
          if (h.remaining() != 0) throw log::LogError("trailing bytes");
        } else {
          if (last) take_moves_tail(r, p);
          if (r.remaining() != 0) throw log::LogError("trailing bytes");
        }
      } catch (const log::LogError& e) {
        desync(p, std::string("a malformed 'N' message (") + e.what() + ")");
      }
      if (takes_in) received.insert(received.end(), t.ids.begin(), t.ids.end());
    }
    if (last) break;
  }
  // (On a frame's tick the first process keeps them all for the frame, until the next tick.)
  if (!takes_in || !end_of_tick || (frame && dist_.process == 0)) return;
  // What this process needs: the robots it moves, and those it was sent that its robots may
  // read in the next tick. A robot it was not sent is near no other domain than its own, so
  // none of this process's robots can read it (docs/distributed.md, "What a process holds").
  // The others stay until they are a sixteenth of what it holds, and are then dropped at
  // once: dropping is a pass over every row, and they are never read (their rows are those
  // of the last tick they travelled, as in a run where every process holds the whole world;
  // a process is sent every robot within the halo reach of its domain, so a robot held here
  // is up to date whenever one of its robots may read it).
  // (Counted first, without a pass over every row: this process's robots are those it moves
  // this tick, counted by mark_rows; the robots taken in since were sent, so not its own.)
  const std::size_t n = state_.robot_count();
  std::size_t needed = sim_.moving_count_;
  for (EntityId id : received) {
    const std::uint32_t i = state_.robot_index(id);
    needed += sim_.within_reach({state_.x()[i], state_.y()[i]}) ? 1 : 0;
  }
  if ((n - std::min(n, needed)) * 16 <= n) return;
  const EntityId* ids = state_.robot_id().data();
  std::vector<std::uint8_t> keep(n, 0);
  for (std::size_t i = 0; i < n; ++i) keep[i] = owner_.get(ids[i]) == dist_.process;
  for (EntityId id : received) {
    const std::uint32_t i = state_.robot_index(id);
    keep[i] = keep[i] || sim_.within_reach({state_.x()[i], state_.y()[i]});
  }
  state_.retain_robots(keep);
  sim_.forget_robots_not_held();
}

std::vector<ColumnHandle> TickRounds::moves_columns(bool logged) const {
  std::vector<ColumnHandle> columns = halo_columns_;
  if (logged)
    for (ColumnHandle c : row_columns_)
      if (state_.robots.desc(c).logged && !state_.robots.desc(c).halo) columns.push_back(c);
  // A partitioned process may be sent robots it does not hold: with who they are.
  if (sim_.partitioned_)
    for (ColumnHandle c : {body::kKind, body::kController, body::kEngine, body::kTag})
      columns.push_back(c);
  std::sort(columns.begin(), columns.end());
  return columns;
}

void TickRounds::moves() {
  const auto t0 = std::chrono::steady_clock::now();
  // The logged columns too when the first process writes a frame after this tick (the next
  // tick's number).
  const Tick next = state_.tick + 1;
  bool logged = sim_.log_due(next);
  // (A split log takes each robot's logged columns from its own process: frame_blocks.)
  if (sim_.split_log_) logged = false;
  // Or when the first process asked for a whole frame for the live view, with the last moves;
  // but a run split over domains (with no log or a split one) makes it in blocks after the step,
  // as its frame log's (frame_blocks): the first process never takes in every robot.
  const bool wanted = std::exchange(sim_.whole_frame_next_, false);
  const bool rows_wanted = std::exchange(sim_.whole_rows_next_, false);
  const bool blocks =
      wanted && !rows_wanted && sim_.partitioned_ && (sim_.split_log_ || sim_.log_every_.empty());
  const bool frame = logged || (wanted && !blocks);
  sim_.whole_frame_tick_ = frame && !logged ? next : -1;
  sim_.view_blocks_tick_ = blocks ? next : -1;
  const std::vector<ColumnHandle> columns = moves_columns(frame);
  // The robots each process moved this tick are those of its regions (engines as the tick
  // began: migration comes after the exchange).
  // This process's tags are sent (staged_tags_) and merged with the others' (incoming_tags_).
  incoming_tags_.clear();
  for (const auto& [row, tag] : sim_.staged_tags_)
    incoming_tags_.emplace_back(state_.robot_id()[row], tag);
  // A run whose robots read only their neighbours (may_send_border_halo), on a tick no log
  // keeps: only the robots near another domain, whose halo another process may read. A
  // partitioned run sends those alike, or on such a tick every robot each process moves.
  // (A frame for the live view only leaves it as it would be: it may not change the run.)
  last_moves_full_ = !(sim_.border_halo_ && !logged);
  if (sim_.partitioned_ || !last_moves_full_) {
    std::vector<EntityId> listed;
    const EntityId* ids = state_.robot_id().data();
    if (!frame) {
      for (std::uint32_t i : sim_.halo_list_) listed.push_back(ids[i]);
    } else {
      for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
        if (sim_.mover_[i] == dist_.process) listed.push_back(ids[i]);
    }
    std::sort(listed.begin(), listed.end());  // (rows may not be in id order)
    exchange_listed(columns, std::move(listed), /*end_of_tick=*/true, frame);
  } else {
    exchange_rows(kMoves, columns, host_, false);
  }
  sim_.staged_tags_.clear();
  if (sim_.checkpoint_requested_) {  // announced: every process takes it at the next step
    sim_.checkpoint_requested_ = false;
    sim_.checkpoint_due_ = true;
  }
  if (dist_.process == 0) {  // (announced: every process lands them before the next step)
    sim_.interventions_due_ = std::exchange(sim_.interventions_announced_, {});
    if (std::exchange(sim_.whole_frame_requested_, false)) sim_.whole_frame_next_ = true;
    if (std::exchange(sim_.whole_rows_requested_, false)) sim_.whole_rows_next_ = true;
  } else {
    sim_.replies_out_.clear();  // (sent)
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
  xstats_.id_table_bytes =
      std::max<std::uint64_t>(xstats_.id_table_bytes, state_.index_of.bytes() + host_.bytes() +
                                                          owner_.bytes() + sim_.instances_.bytes());
  xstats_.seconds += seconds_since(t0);
}

void TickRounds::put_row(std::vector<std::uint8_t>& out, std::uint32_t row) const {
  log::ByteWriter w(out);
  w.u32(row);
  for (ColumnHandle c : row_columns_) state_.robots.gather_rows(c, {&row, 1}, out);
}

void TickRounds::take_row(log::ByteReader& r, std::uint32_t row, bool write) {
  const std::uint32_t one[1] = {row};
  for (ColumnHandle c : row_columns_) {
    const auto* bytes = r.take(state_.robots.desc(c).row_bytes());
    if (write) state_.robots.scatter_rows(c, one, bytes);
  }
}

void TickRounds::exchange_actuation() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint32_t n = static_cast<std::uint32_t>(state_.robot_count());
  const EntityId* ids = state_.robot_id().data();
  // The robots this process ran whose region another process simulates: their readings,
  // commands and everything the actuators set, for the physics there (and the halo after).
  std::vector<std::uint32_t> away;
  for (std::uint32_t i = 0; i < n; ++i)
    if (host_.get(ids[i]) == dist_.process && sim_.process_of(i) != dist_.process)
      away.push_back(i);
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
        if (i >= n || host_.get(ids[i]) != p || sim_.process_of(i) == p)
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

CheckpointParts TickRounds::checkpoint(CheckpointParts mine) {
  // One routed part of the handoff round: every process's parts to the first process only
  // (the handoff ends the round). The parts travel first and the counts after them, so that
  // neither the sender nor the first process copies them: the first process adds up the robots
  // and the digests, checks that the parts' sizes add up, and keeps each process's bytes as
  // they came, without decoding them. No process gathers another's rows.
  const auto t0 = std::chrono::steady_clock::now();
  RoutedMessage m;
  {
    log::ByteWriter w(m.common);
    w.u8(static_cast<std::uint8_t>(kControllers));
    w.i64(state_.tick);
  }
  m.to.resize(static_cast<std::size_t>(dist_.processes));
  if (dist_.process != 0) {
    if (mine.chunk_bytes.front() > (std::size_t{59} << 20))
      throw RunError("tick " + std::to_string(state_.tick) + ": checkpoint: this process's " +
                     std::to_string(mine.robots) + " robots take " +
                     std::to_string(mine.chunk_bytes.front()) +
                     " bytes compressed, more than a message may carry (60 MiB); run on more "
                     "processes, or without --checkpoint-every");
    std::vector<std::uint8_t>& out = m.to[0];
    out = std::move(mine.chunks.front());
    out.resize(mine.chunk_bytes.front());
    log::ByteWriter w(out);
    w.u64(mine.parts);
    w.u64(mine.robots);
    w.u32(static_cast<std::uint32_t>(mine.digests.size()));
    for (std::uint64_t d : mine.digests) w.u64(d);
    mine.chunks.clear();
  }
  std::vector<int> to;
  if (dist_.process == 0) {
    for (int q = 1; q < dist_.processes; ++q) to.push_back(q);
  } else {
    to.push_back(0);
  }
  RoutedReceived got = route(std::move(m), to, /*more=*/true);
  xstats_.seconds += seconds_since(t0);
  if (dist_.process != 0) return {};
  const std::size_t tail = 8 + 8 + 4 + 8 * mine.digests.size();
  for (int q = 1; q < dist_.processes; ++q) {
    const auto p = static_cast<std::size_t>(q);
    try {
      expect_kind_and_tick(got.common[p], kControllers, state_.tick);
      std::vector<std::uint8_t>& body = got.from[p];
      if (body.size() < tail) throw log::LogError("truncated");
      const std::size_t bytes = body.size() - tail;
      log::ByteReader r(body.data() + bytes, tail, "a message");
      const std::uint64_t parts = r.u64(), robots = r.u64();
      if (r.u32() != mine.digests.size()) throw log::LogError("another number of columns");
      if (robots > state_.next_id) throw log::LogError("more robots than the run has ids");
      for (std::uint64_t& d : mine.digests) d += r.u64();
      // The parts' sizes add up to the bytes before the counts.
      log::ByteReader sizes(body.data(), bytes, "a message");
      for (std::uint64_t k = 0; k < parts; ++k) {
        const std::uint64_t size = sizes.u64();
        if (size > sizes.remaining()) throw log::LogError("a part cut short");
        sizes.take(static_cast<std::size_t>(size));
      }
      if (sizes.remaining() != 0) throw log::LogError("bytes beyond its parts");
      mine.parts += parts;
      mine.robots += robots;
      mine.chunk_bytes.push_back(bytes);
      mine.chunks.push_back(std::move(body));
    } catch (const log::LogError& e) {
      desync(q, std::string("a malformed 'C' message (") + e.what() + ")");
    }
  }
  if (mine.robots > state_.next_id)
    desync(dist_.processes - 1, "more robots in a checkpoint than the run has ids");
  return mine;
}

void TickRounds::partition() {
  // (border_halo_: loop functions, if any, are in the per-process form.)
  sim_.partitioned_ = dist_.partition_storage && sim_.border_halo_;
  // A log in the DEECo format is written whole by the first process, which then holds every
  // robot; frame logs are written in blocks by every process (frame_blocks).
  sim_.split_log_ = sim_.partitioned_ && !sim_.log_every_.empty() && sim_.frame_logs_only_;
  sim_.holds_all_ =
      !sim_.partitioned_ || (dist_.process == 0 && !sim_.log_every_.empty() && !sim_.split_log_);
  if (sim_.partitioned_) {
    // Peers: domains within the halo reach of each other (a symmetric relation, the same on
    // every process). The domains stay as they are in a partitioned run.
    const Domains::Box& own = dist_.domains.box(dist_.process);
    for (int q = 0; q < dist_.processes; ++q) {
      if (q == dist_.process) continue;
      others_.push_back(q);
      if (Domains::distance(own, dist_.domains.box(q)) <= sim_.halo_reach_) peers_.push_back(q);
    }
    frame_peers_ = dist_.process == 0 ? others_ : peers_;
    if (dist_.process != 0 && (peers_.empty() || peers_.front() != 0))
      frame_peers_.insert(frame_peers_.begin(), 0);
    sim_.borders_.routed = true;
  }
  if (!sim_.partitioned_ || sim_.holds_all_) return;
  sim_.borders_.partial = true;
  sim_.refresh_owners();
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  std::vector<std::uint8_t> keep(n);
  for (std::size_t i = 0; i < n; ++i)
    keep[i] =
        owner_.get(ids[i]) == dist_.process || sim_.within_reach({state_.x()[i], state_.y()[i]});
  state_.retain_robots(keep);
  sim_.make_maps_sparse();
  state_.robots.shrink_to_fit();
  // The robot grid covers the domain and its reach only (its cells sized to the robots held):
  // one over the whole arena would be as large as the whole swarm's.
  const Domains::Box& own = dist_.domains.box(dist_.process);
  const Vec2 lo = model_.arena_min(), hi = model_.arena_max();
  const double reach = sim_.halo_reach_;
  const Vec2 a{std::clamp(own.min.x - reach, lo.x, hi.x),
               std::clamp(own.min.y - reach, lo.y, hi.y)};
  const Vec2 b{std::clamp(own.max.x + reach, lo.x, hi.x),
               std::clamp(own.max.y + reach, lo.y, hi.y)};
  if (b.x > a.x && b.y > a.y)
    sim_.index_.init(model_, state_.robot_count(), sim_.near_reach_, std::make_pair(a, b));
  // What the load and the whole world's columns took goes back to the system (the allocator
  // keeps freed memory otherwise, and the process would stay as large as the world).
  malloc_trim(0);
}

void TickRounds::hash_partitioned_world() {
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
    take[i] = host_.get(ids[i]) == me;
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
  sim_.world_hash_ = state_.hash_with(total, sums);
  sim_.world_robots_ = total;
}

std::vector<std::array<std::uint8_t, 8>> TickRounds::reduce(char op,
                                                            std::array<std::uint8_t, 8> mine) {
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

void TickRounds::loop_changes(LoopChanges& merged, bool partial) {
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u8(kLoopChanges);
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
      if (r.u8() != kLoopChanges || r.i64() != state_.tick)
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
        if (i == kNoIndex ? !partial || id >= state_.next_id : !may_move(i, p))
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

void TickRounds::loop_moves(std::vector<EntityId> mine) {
  exchange_listed(moves_columns(/*logged=*/false), std::move(mine), /*end_of_tick=*/false,
                  /*frame=*/false);
}

bool TickRounds::log_start(bool deferred, std::vector<std::uint8_t>& robots, std::uint64_t& count) {
  const auto t0 = std::chrono::steady_clock::now();
  // 'G', first part: the first process says whether it placed its part only.
  std::vector<std::uint8_t> out;
  {
    log::ByteWriter w(out);
    w.u8(static_cast<std::uint8_t>(kLogStart));
    w.u8(dist_.process == 0 && deferred ? 1 : 0);
  }
  const auto flags = gather(std::move(out), /*more=*/true);
  bool need = false;
  for (int p = 0; p < dist_.processes; ++p) {
    const auto& in = flags[static_cast<std::size_t>(p)];
    if (in.size() != 2 || in[0] != static_cast<std::uint8_t>(kLogStart) || in[1] > 1 ||
        (p != 0 && in[1] != 0))
      desync(p, "a malformed 'G' message");
    if (p == 0) need = in[1] == 1;
  }
  if (!need) {
    xstats_.seconds += seconds_since(t0);
    return false;
  }
  // Second part, to the first process: who this process's robots are (the header lists every
  // robot present at the start), by id, as the header stores them.
  RoutedMessage m;
  log::ByteWriter(m.common).u8(static_cast<std::uint8_t>(kLogStart));
  m.to.resize(static_cast<std::size_t>(dist_.processes));
  std::vector<std::uint32_t> rows;
  for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
    if (sim_.process_of(i) == dist_.process) rows.push_back(i);
  const auto ids = state_.robot_id();
  std::sort(rows.begin(), rows.end(), [&](auto a, auto b) { return ids[a] < ids[b]; });
  std::vector<std::uint8_t> mine;
  {
    log::ByteWriter w(mine);
    w.u32(static_cast<std::uint32_t>(rows.size()));
    for (std::uint32_t i : rows)
      log::frame_format::encode_entity(w, ids[i], state_.robot_kind()[i], state_.robot_name()[i]);
  }
  rows = {};
  if (dist_.process != 0) m.to[0] = std::move(mine);
  const std::vector<int> zero{0};
  RoutedReceived got = route(std::move(m), dist_.process == 0 ? others_ : zero, /*more=*/true);
  xstats_.seconds += seconds_since(t0);
  if (dist_.process != 0) return true;
  got.from[0] = std::move(mine);
  // Each process's list, checked, then merged by id into the header's bytes: no entity per
  // robot, and each entry copied once.
  std::uint64_t total = 0;
  std::size_t bytes = 0;
  for (int q = 0; q < dist_.processes; ++q) {
    const auto p = static_cast<std::size_t>(q);
    try {
      if (q != 0 &&
          (got.common[p].size() != 1 || got.common[p][0] != static_cast<std::uint8_t>(kLogStart)))
        throw log::LogError("a message of another kind");
      const auto& body = got.from[p];
      log::ByteReader r(body.data(), body.size(), "a message");
      const std::size_t k = r.count(r.u32(), 10);
      std::int64_t last = -1;
      for (std::size_t j = 0; j < k; ++j) {
        const std::uint32_t id = r.u32();
        const std::uint16_t kind = r.u16();
        r.take(r.u32());
        if (id >= state_.next_id || kind >= model_.kinds.size())
          throw log::LogError("a robot of no id or kind of the run");
        if (static_cast<std::int64_t>(id) <= last) throw log::LogError("robots out of id order");
        last = id;
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
      total += k;
      bytes += body.size() - 4;
    } catch (const log::LogError& e) {
      desync(q, std::string("a malformed 'G' message (") + e.what() + ")");
    }
  }
  // The entry at byte `at` of a checked list: its id, and where the next one starts.
  const auto id_at = [](const std::vector<std::uint8_t>& b, std::size_t at) {
    std::uint32_t id;
    std::memcpy(&id, b.data() + at, 4);
    return id;
  };
  const auto end_of = [](const std::vector<std::uint8_t>& b, std::size_t at) {
    std::uint32_t n;
    std::memcpy(&n, b.data() + at + 6, 4);
    return at + 10 + n;
  };
  robots.clear();
  robots.reserve(bytes);
  using Head = std::pair<std::uint32_t, std::size_t>;  // (id, process)
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<std::size_t> at(got.from.size(), 4);  // past each list's count
  for (std::size_t p = 0; p < got.from.size(); ++p)
    if (at[p] < got.from[p].size()) heads.push({id_at(got.from[p], at[p]), p});
  std::int64_t last = -1;
  while (!heads.empty()) {
    const auto [id, p] = heads.top();
    heads.pop();
    if (static_cast<std::int64_t>(id) == last)
      throw RunError("robot " + std::to_string(id) + " was listed by two processes at the start");
    last = id;
    const auto& b = got.from[p];
    const std::size_t end = end_of(b, at[p]);
    robots.insert(robots.end(), b.begin() + static_cast<std::ptrdiff_t>(at[p]),
                  b.begin() + static_cast<std::ptrdiff_t>(end));
    at[p] = end;
    if (at[p] < b.size()) heads.push({id_at(b, at[p]), p});
  }
  count = total;
  return true;
}

std::vector<log::frame_format::EncodedBlock> TickRounds::frame_blocks(
    const std::vector<ColumnHandle>& columns, const log::frame_format::PayloadLayout& layout,
    int level) {
  namespace ff = log::frame_format;
  const auto t0 = std::chrono::steady_clock::now();
  const auto processes = static_cast<std::size_t>(dist_.processes);
  const auto me = static_cast<std::size_t>(dist_.process);
  // This process's robots (those it moves), by id: it holds their rows as they are now.
  const EntityId* ids = state_.robot_id().data();
  std::vector<std::pair<EntityId, std::uint32_t>> mine;
  for (std::uint32_t i = 0; i < state_.robot_count(); ++i)
    if (sim_.process_of(i) == dist_.process) mine.emplace_back(ids[i], i);
  std::sort(mine.begin(), mine.end());
  std::vector<EntityId> mine_ids(mine.size());
  for (std::size_t j = 0; j < mine.size(); ++j) mine_ids[j] = mine[j].first;
  // 1. 'Q': how many robots of each block every process moves. A block's writer is the process
  // that moves most of its robots (the lowest of those on a tie): the same on every process.
  std::vector<std::uint8_t> out;
  {
    log::ByteWriter w(out);
    w.u8(static_cast<std::uint8_t>(kBlockCounts));
    w.i64(state_.tick);
    const std::vector<ff::RobotBlock> blocks = ff::robot_blocks(mine_ids);
    w.u32(static_cast<std::uint32_t>(blocks.size()));
    for (const ff::RobotBlock& b : blocks) {
      w.u32(b.index);
      w.u32(b.rows);
    }
  }
  const auto counts = gather(std::move(out), /*more=*/true);
  struct Best {
    std::uint32_t rows = 0;  ///< the writer's robots in the block
    int process = -1;
  };
  std::map<std::uint32_t, Best> writer;  // by block index
  const std::uint32_t max_block = state_.next_id / ff::kRobotBlockIds;
  for (std::size_t p = 0; p < processes; ++p) {
    try {
      const auto& in = counts[p];
      log::ByteReader r(in.data(), in.size(), "a message");
      if (r.u8() != static_cast<std::uint8_t>(kBlockCounts) || r.i64() != state_.tick)
        throw log::LogError("a message of another kind or tick");
      const std::size_t k = r.count(r.u32(), 8);
      std::uint32_t last = 0;
      for (std::size_t j = 0; j < k; ++j) {
        const std::uint32_t b = r.u32(), rows = r.u32();
        if (b > max_block || (j > 0 && b <= last) || rows == 0 || rows > ff::kRobotBlockIds)
          throw log::LogError("a block out of order, out of range or of a wrong size");
        last = b;
        Best& best = writer[b];
        if (rows > best.rows) best = {rows, static_cast<int>(p)};
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(static_cast<int>(p), std::string("a malformed 'Q' message (") + e.what() + ")");
    }
  }
  auto writer_of = [&](EntityId id) { return writer.at(id / ff::kRobotBlockIds).process; };
  // 2. 'W': the rows of this process's robots in blocks another process writes, to it.
  std::size_t row_bytes = 0;
  for (ColumnHandle c : columns) row_bytes += state_.robots.desc(c).row_bytes();
  RoutedMessage m;
  {
    log::ByteWriter w(m.common);
    w.u8(static_cast<std::uint8_t>(kBlockRows));
    w.i64(state_.tick);
  }
  m.to.resize(processes);
  {
    std::vector<std::vector<EntityId>> to_ids(processes);
    std::vector<std::vector<std::uint32_t>> rows(processes);
    for (const auto& [id, row] : mine) {
      const auto q = static_cast<std::size_t>(writer_of(id));
      if (q == me) continue;
      to_ids[q].push_back(id);
      rows[q].push_back(row);
    }
    for (int q : others_) {
      const auto p = static_cast<std::size_t>(q);
      log::ByteWriter w(m.to[p]);
      w.u32(static_cast<std::uint32_t>(to_ids[p].size()));
      for (EntityId id : to_ids[p]) w.u32(id);
      for (ColumnHandle c : columns) state_.robots.gather_rows(c, rows[p], m.to[p]);
    }
  }
  RoutedReceived got = route(std::move(m), others_, /*more=*/true);
  // Every robot of the blocks this process writes: (id, the process that sent it or this one,
  // its place there: a row here, or its index in the sender's message).
  struct Source {
    EntityId id;
    std::uint32_t from;
    std::uint32_t at;
  };
  std::vector<Source> rows;
  for (const auto& [id, row] : mine)
    if (writer_of(id) == dist_.process) rows.push_back({id, static_cast<std::uint32_t>(me), row});
  std::vector<const std::uint8_t*> columns_from(processes, nullptr);  // where each's columns start
  std::vector<std::uint32_t> sent(processes, 0);
  for (int q : others_) {
    const auto p = static_cast<std::size_t>(q);
    try {
      expect_kind_and_tick(got.common[p], kBlockRows, state_.tick);
      const auto& body = got.from[p];
      log::ByteReader r(body.data(), body.size(), "a message");
      const std::uint32_t k = r.u32();
      if (k > r.remaining() / 4) throw log::LogError("truncated");
      EntityId last = 0;
      for (std::uint32_t j = 0; j < k; ++j) {
        const EntityId id = r.u32();
        const auto b = writer.find(id / ff::kRobotBlockIds);
        if ((j > 0 && id <= last) || b == writer.end() || b->second.process != dist_.process)
          throw log::LogError("a robot out of order or of a block this process does not write");
        last = id;
        rows.push_back({id, static_cast<std::uint32_t>(p), j});
      }
      if (r.remaining() != std::size_t{k} * row_bytes) throw log::LogError("a wrong size");
      columns_from[p] = body.data() + (body.size() - r.remaining());
      sent[p] = k;
    } catch (const log::LogError& e) {
      desync(q, std::string("a malformed 'W' message (") + e.what() + ")");
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Source& a, const Source& b) { return a.id < b.id; });
  for (std::size_t j = 1; j < rows.size(); ++j)
    if (rows[j].id == rows[j - 1].id)
      desync(static_cast<int>(rows[j].from == me ? rows[j - 1].from : rows[j].from),
             "a robot another process also moves (a 'W' message)");
  // This process's blocks, one at a time (a block's columns at most, copied): every logged
  // column, its robots in id order, encoded and compressed.
  std::vector<std::size_t> row_bytes_of(columns.size()), offset(columns.size(), 0);
  for (std::size_t c = 0; c < columns.size(); ++c) {
    row_bytes_of[c] = state_.robots.desc(columns[c]).row_bytes();
    if (c > 0) offset[c] = offset[c - 1] + row_bytes_of[c - 1];  // (in a sender's message)
  }
  std::vector<std::vector<std::uint8_t>> data(columns.size());
  std::vector<ff::EncodedBlock> encoded;
  for (std::size_t first = 0; first < rows.size();) {
    const std::uint32_t b = rows[first].id / ff::kRobotBlockIds;
    std::size_t end = first;
    while (end < rows.size() && rows[end].id / ff::kRobotBlockIds == b) ++end;
    log::LogFrameView view;
    view.robot_count = end - first;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::size_t rb = row_bytes_of[c];
      const auto* here = static_cast<const std::uint8_t*>(state_.robots.data(columns[c]));
      data[c].resize(view.robot_count * rb);
      for (std::size_t j = first; j < end; ++j) {
        const Source& src = rows[j];
        const std::uint8_t* from =
            src.from == me
                ? here + std::size_t{src.at} * rb
                : columns_from[src.from] + offset[c] * sent[src.from] + std::size_t{src.at} * rb;
        std::memcpy(data[c].data() + (j - first) * rb, from, rb);
      }
      view.robot_columns.emplace_back(data[c]);
    }
    encoded.push_back(
        log::FrameLogWriter::encode_block(view, layout, b, 0, view.robot_count, level));
    first = end;
  }
  // 3. 'F': the blocks, to the first process, which writes them as they are.
  RoutedMessage f;
  {
    log::ByteWriter w(f.common);
    w.u8(static_cast<std::uint8_t>(kFrameBlocks));
    w.i64(state_.tick);
  }
  f.to.resize(processes);
  if (dist_.process != 0) {
    log::ByteWriter w(f.to[0]);
    w.u32(static_cast<std::uint32_t>(encoded.size()));
    for (const ff::EncodedBlock& e : encoded) {
      w.u32(e.block.index);
      w.u32(e.block.rows);
      w.u64(e.raw_size);
      w.u64(e.bytes.size());
      w.raw(e.bytes.data(), e.bytes.size());
    }
    encoded.clear();
  }
  const std::vector<int> zero{0};
  RoutedReceived blocks = route(std::move(f), dist_.process == 0 ? others_ : zero, /*more=*/true);
  xstats_.seconds += seconds_since(t0);
  if (dist_.process != 0) return {};
  for (int q : others_) {
    const auto p = static_cast<std::size_t>(q);
    try {
      expect_kind_and_tick(blocks.common[p], kFrameBlocks, state_.tick);
      const auto& body = blocks.from[p];
      log::ByteReader r(body.data(), body.size(), "a message");
      const std::size_t k = r.count(r.u32(), 24);
      for (std::size_t j = 0; j < k; ++j) {
        ff::EncodedBlock e;
        e.block.index = r.u32();
        e.block.rows = r.u32();
        e.raw_size = r.u64();
        const auto b = writer.find(e.block.index);
        if (b == writer.end() || b->second.process != q || e.block.rows == 0 ||
            e.block.rows > ff::kRobotBlockIds ||
            e.raw_size != std::uint64_t{e.block.rows} * layout.robot_row_bytes)
          throw log::LogError("a block it does not write, or of a wrong size");
        const std::uint64_t size = r.u64();
        if (size > r.remaining()) throw log::LogError("truncated");
        const std::uint8_t* bytes = r.take(static_cast<std::size_t>(size));
        e.bytes.assign(bytes, bytes + size);
        encoded.push_back(std::move(e));
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
    } catch (const log::LogError& e) {
      desync(q, std::string("a malformed 'F' message (") + e.what() + ")");
    }
  }
  std::sort(encoded.begin(), encoded.end(),
            [](const auto& a, const auto& b) { return a.block.index < b.block.index; });
  for (std::size_t j = 1; j < encoded.size(); ++j)
    if (encoded[j].block.index == encoded[j - 1].block.index)
      throw RunError("tick " + std::to_string(state_.tick) + ": robot block " +
                     std::to_string(encoded[j].block.index) + " came twice");
  return encoded;
}

}  // namespace fleetsim::distributed
