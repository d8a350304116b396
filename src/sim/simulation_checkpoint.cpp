// Checkpoints of a run (docs/checkpoints.md): what the simulation saves at the end of a tick,
// and how a run resumes from it.
//
// Saved state (Checkpoint::state; little-endian, strings as u32 length + bytes):
//   i64 tick, str status, u8 end requested, u32 next entity id, u64 t, t x str tags
//   objects: u64 rows, u32 columns, columns x (str name, u8 type, u32 width), then each
//     column's rows (fixed-size: the bytes as in the store; strings: rows x width x str)
//   u64 robots, u32 k, k x (u64 size, a part): the robots, in parts (below)
//   u8 has loop functions, u32 length, their save() bytes
//   u32 l, l x (str path, u8 format (0 frames, 1 deeco), u64 bytes, u64 hash, u32 length,
//     the writer's state): the logs
//   u64 WorldState::hash() of the world above
// A part: u64 size, then one zstd frame of: the robot columns of at most kCheckpointPartRobots
// robots as the objects' (rows by increasing id), then u64 c, c x (u32 robot id, u32 length,
// the per-robot controller's save() bytes) for at most as many controllers, by increasing id.
// Each process writes the parts of the robots it holds the newest rows of and of the
// controllers it runs (one process: every robot); the first process writes them to the file
// as they came, in process order, without decoding them.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <zstd.h>

#include "log/byte_io.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

namespace {

/// Entity ids a checkpoint may hold (bounds the id index a corrupt file could make us build).
constexpr std::uint64_t kMaxEntityIds = std::uint64_t{1} << 28;

/// The head of saved columns: u64 rows, u32 columns, each column's name, type and width.
void save_schema(const ColumnStore& s, std::size_t rows, log::ByteWriter& w) {
  w.u64(rows);
  w.u32(static_cast<std::uint32_t>(s.schema().size()));
  for (const ColumnDesc& d : s.schema()) {
    w.str(d.name);
    w.u8(static_cast<std::uint8_t>(d.type));
    w.u32(d.width);
  }
}

void save_columns(const ColumnStore& s, log::ByteWriter& w) {
  save_schema(s, s.rows(), w);
  for (ColumnHandle c = 0; c < s.schema().size(); ++c) {
    if (s.desc(c).type == ColumnType::kString) {
      const StringColumn& strings = s.strings(c);
      StringColumn::Buffer b;
      for (std::size_t i = 0; i < strings.size(); ++i) w.str(strings.view(i, b));
    } else {
      const auto bytes = s.bytes(c);
      w.raw(bytes.data(), s.rows() * s.desc(c).row_bytes());
    }
  }
}

/// The same for the rows `rows` of `s` only, in that order.
void save_rows(const ColumnStore& s, std::span<const std::uint32_t> rows,
               std::vector<std::uint8_t>& out) {
  log::ByteWriter w(out);
  save_schema(s, rows.size(), w);
  for (ColumnHandle c = 0; c < s.schema().size(); ++c) {
    if (s.desc(c).type == ColumnType::kString) {
      const StringColumn& strings = s.strings(c);
      const std::size_t width = s.desc(c).width;
      StringColumn::Buffer b;
      for (std::uint32_t r : rows)
        for (std::size_t k = 0; k < width; ++k) w.str(strings.view(r * width + k, b));
    } else {
      s.gather_rows(c, rows, out);
    }
  }
}

/// Reads columns saved by save_columns into `s`, whose schema must be the same.
void restore_columns(ColumnStore& s, log::ByteReader& r, const char* what) {
  const std::uint64_t rows = r.u64();
  const std::uint32_t columns = r.u32();
  if (columns != s.schema().size())
    throw RunError(std::string("the checkpoint's ") + what + " have " + std::to_string(columns) +
                   " columns and this run's " + std::to_string(s.schema().size()) +
                   " (another set of parts or plug-ins)");
  std::size_t row_bytes = 0;
  for (const ColumnDesc& d : s.schema()) {
    const std::string name = r.str();
    const auto type = static_cast<ColumnType>(r.u8());
    const std::uint32_t width = r.u32();
    if (name != d.name || type != d.type || width != d.width)
      throw RunError(std::string("the checkpoint's ") + what + " column '" + name +
                     "' is not this run's '" + d.name + "' (another set of parts or plug-ins)");
    row_bytes += d.type == ColumnType::kString ? 4 * d.width : d.row_bytes();
  }
  s.resize_rows(r.count(rows, std::max<std::size_t>(row_bytes, 1)));
  for (ColumnHandle c = 0; c < s.schema().size(); ++c) {
    const ColumnDesc& d = s.desc(c);
    if (d.type == ColumnType::kString) {
      StringColumn& strings = s.strings(c);
      for (std::size_t i = 0; i < strings.size(); ++i) strings.set(i, r.str());
    } else {
      const std::size_t n = s.rows() * d.row_bytes();
      if (n > 0) std::memcpy(s.data(c), r.take(n), n);
    }
  }
}

}  // namespace

namespace {

/// A store with `like`'s columns and no rows.
ColumnStore empty_like(const ColumnStore& like) {
  ColumnStore s;
  for (const ColumnDesc& d : like.schema()) s.add(d);
  return s;
}

/// A checkpoint's part, appended to `out`: u64 size, then the robots' rows of `rows` and the
/// controllers `saved`, compressed. `raw`: scratch.
void encode_part(const ColumnStore& robots, std::span<const std::uint32_t> rows,
                 std::span<const std::pair<EntityId, std::vector<std::uint8_t>>> saved,
                 std::vector<std::uint8_t>& raw, std::vector<std::uint8_t>& out) {
  raw.clear();
  save_rows(robots, rows, raw);
  log::ByteWriter w(raw);
  w.u64(saved.size());
  for (const auto& [id, bytes] : saved) {
    w.u32(id);
    w.u32(static_cast<std::uint32_t>(bytes.size()));
    w.raw(bytes.data(), bytes.size());
  }
  const std::size_t at = out.size();
  out.resize(at + 16 + ZSTD_compressBound(raw.size()));
  const std::uint64_t size = raw.size();
  std::memcpy(out.data() + at + 8, &size, 8);
  const std::size_t stored =
      ZSTD_compress(out.data() + at + 16, out.size() - at - 16, raw.data(), raw.size(), 1);
  if (ZSTD_isError(stored))
    throw RunError(std::string("checkpoint: cannot compress the robots: ") +
                   ZSTD_getErrorName(stored));
  const std::uint64_t part = 8 + stored;
  std::memcpy(out.data() + at, &part, 8);
  out.resize(at + 16 + stored);
}

}  // namespace

void Simulation::restore_world(const std::vector<std::uint8_t>& saved, bool part) {
  auto corrupt = [](const std::string& why) {
    throw RunError("the checkpoint's world is corrupt (" + why + ")");
  };
  resumed_ = std::make_unique<Resumed>();
  // A process that holds its part only keeps the robots within the halo's reach of its domain,
  // as partition() would keep them of the whole world, and no slot per id of the swarm.
  const double reach = part ? halo_reach() : 0;
  const Domains::Box own = part ? dist_.domains.box(dist_.process) : Domains::Box{};
  if (part) state_.make_index_sparse();
  try {
    log::ByteReader r(saved.data(), saved.size(), "the checkpoint's world");
    WorldState& s = state_;
    s.tick = r.i64();
    s.status = r.str();
    s.end_requested = r.u8() != 0;
    const std::uint32_t next = r.u32();
    if (s.tick < 0 || next > kMaxEntityIds) corrupt("a tick or entity count out of range");
    s.next_id = next;
    TagTable tags;
    const std::size_t ntags = r.count(r.u64(), 4);
    for (std::size_t t = 0; t < ntags; ++t) {
      const std::string text = r.str();
      if (tags.intern(text) != t) corrupt("a tag twice in its table");
    }
    if (ntags == 0) corrupt("no tag table");
    s.tags = std::move(tags);
    restore_columns(s.objects, r, "objects");

    // The robots, part by part: each decompressed, read and checked alone, so that no more
    // than a part is ever held beside the robots kept.
    const std::uint64_t total = r.u64();
    if (total > next) corrupt("more robots than entity ids");
    const std::size_t nparts = r.count(r.u32(), 8);
    std::vector<ColumnStore> pieces;
    std::vector<std::uint64_t> digests(s.robots.schema().size(), 0);
    std::uint64_t counted = 0;
    SavedControllers controllers;
    std::vector<std::uint8_t> raw;
    for (std::size_t k = 0; k < nparts; ++k) {
      const std::uint64_t size = r.u64();
      if (size < 8 || size > r.remaining()) corrupt("a part of the robots cut short");
      const std::uint8_t* stored = r.take(static_cast<std::size_t>(size));
      std::uint64_t raw_size = 0;
      std::memcpy(&raw_size, stored, 8);
      // (Bounded by what zstd can expand the stored bytes to, so that a hand-made part
      // cannot make us allocate more.)
      if (raw_size != ZSTD_getFrameContentSize(stored + 8, size - 8) || raw_size > (1u << 30) ||
          raw_size > (size - 8) * 32768 + 65536)
        corrupt("a part of the robots of a wrong size");
      raw.resize(static_cast<std::size_t>(raw_size));
      const std::size_t got = ZSTD_decompress(raw.data(), raw.size(), stored + 8, size - 8);
      if (ZSTD_isError(got) || got != raw_size) corrupt("a part of the robots does not decompress");
      log::ByteReader pr(raw.data(), raw.size(), "a part of the checkpoint's robots");
      ColumnStore piece = empty_like(s.robots);
      restore_columns(piece, pr, "robots");
      if (piece.rows() > kCheckpointPartRobots) corrupt("a part of too many robots");
      const auto ids = piece.span<EntityId>(body::kId);
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] >= next || (i > 0 && ids[i] <= ids[i - 1])) corrupt("robot ids out of order");
      piece.add_row_digests(ids, {}, digests);
      counted += piece.rows();
      if (part) {
        const auto xs = piece.span<double>(body::kX), ys = piece.span<double>(body::kY);
        std::vector<std::uint8_t> keep(piece.rows());
        for (std::size_t i = 0; i < keep.size(); ++i)
          keep[i] = Domains::distance(Vec2{xs[i], ys[i]}, own) <= reach ? 1 : 0;
        piece.retain(keep);
      }
      const std::size_t nctrl = pr.count(pr.u64(), 8);
      if (nctrl > kCheckpointPartRobots) corrupt("a part of too many controllers");
      for (std::size_t c = 0; c < nctrl; ++c) {
        const EntityId id = pr.u32();
        const std::uint32_t len = pr.u32();
        const std::uint8_t* bytes = pr.take(len);
        controllers.emplace_back(id, std::vector<std::uint8_t>(bytes, bytes + len));
      }
      if (pr.remaining() != 0) corrupt("bytes after a part of the robots");
      if (piece.rows() > 0) pieces.push_back(std::move(piece));
    }
    if (counted != total) corrupt("its robot count does not match its parts");
    // Every robot by id, in id order (each process wrote its own robots' parts).
    struct From {
      EntityId id;
      std::uint32_t piece, row;
    };
    std::vector<From> order;
    order.reserve(counted);
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      const auto ids = pieces[p].span<EntityId>(body::kId);
      for (std::size_t i = 0; i < ids.size(); ++i)
        order.push_back({ids[i], static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(i)});
    }
    std::sort(order.begin(), order.end(), [](const From& a, const From& b) { return a.id < b.id; });
    for (std::size_t i = 1; i < order.size(); ++i)
      if (order[i].id == order[i - 1].id) corrupt("a robot twice");
    s.robots.resize_rows(0);
    s.robots.resize_rows(order.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      s.robots.copy_row(pieces[order[i].piece], order[i].row, i);
    pieces.clear();
    order.clear();
    order.shrink_to_fit();

    // The id index, and what every row must be for the engine to step it.
    s.index_of.clear();
    s.index_of.cover(next);
    // Real numbers are finite and robots near the arena (bad_value(), as for received rows).
    for (ColumnStore* store : {&s.robots, &s.objects}) {
      std::vector<std::uint32_t> rows(store->rows());
      std::iota(rows.begin(), rows.end(), 0u);
      std::vector<ColumnHandle> columns(store->schema().size());
      std::iota(columns.begin(), columns.end(), ColumnHandle{0});
      if (auto why = bad_value(*store, rows, columns, store == &s.robots); !why.empty())
        corrupt(why);
    }
    const auto ids = s.robot_id();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      s.index_of.set(ids[i], static_cast<std::uint32_t>(i));
      if (s.robot_kind()[i] >= model_->kinds.size() || !model_->kinds[s.robot_kind()[i]].in_run ||
          s.robot_controller()[i] >= model_->controllers.size() ||
          s.robot_engine()[i] >= model_->engines.size() || s.robot_tag()[i] >= ntags)
        corrupt("robot '" + s.robot_name()[i] +
                "' has a kind, controller, region or tag this run does not have");
    }
    const auto oids = s.object_id();
    for (std::size_t o = 0; o < oids.size(); ++o) {
      if (oids[o] >= next || (o > 0 && oids[o] <= oids[o - 1]) ||
          s.index_of.get(oids[o]) != kNoIndex)
        corrupt("object ids out of order");
      s.index_of.set(oids[o], static_cast<std::uint32_t>(o) | WorldState::kObjectRow);
      if (s.object_class()[o] >= model_->object_classes.size() || s.object_tag()[o] >= ntags)
        corrupt("an object of a class or tag this run does not have");
    }

    std::sort(controllers.begin(), controllers.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 1; k < controllers.size(); ++k)
      if (controllers[k].first == controllers[k - 1].first) corrupt("a controller state twice");
    // (A process holding its part keeps the states of the robots it holds; the others' robots
    // are not here to say whether theirs is for a robot.)
    for (auto& c : controllers)
      if (s.robot_index(c.first) != kNoIndex)
        resumed_->controllers.push_back(std::move(c));
      else if (!part)
        corrupt("a controller state for no robot");
    controllers = {};
    resumed_->has_loop = r.u8() != 0;
    const std::uint32_t nloop = r.u32();
    const std::uint8_t* loop = r.take(nloop);
    resumed_->loop.assign(loop, loop + nloop);
    const std::size_t nlogs = r.count(r.u32(), 29);
    for (std::size_t k = 0; k < nlogs; ++k) {
      Resumed::Log l;
      l.path = r.str();
      const std::uint8_t format = r.u8();
      if (format > 1) corrupt("a log of an unknown format");
      l.format = format == 1 ? log::LogFormat::kDeeco : log::LogFormat::kFrames;
      l.mark.bytes = r.u64();
      l.mark.hash = r.u64();
      const std::uint32_t len = r.u32();
      const std::uint8_t* st = r.take(len);
      l.mark.state.assign(st, st + len);
      resumed_->logs.push_back(std::move(l));
    }
    const std::uint64_t hash = r.u64();
    if (r.remaining() != 0) corrupt("bytes after its end");
    if (hash != s.hash_with(counted, digests)) corrupt("its hash does not match its content");
    resumed_world_ = {hash, static_cast<std::size_t>(counted)};
    if (part) {
      make_maps_sparse();
      xstats_.placed_robots = s.robot_count();
    }
  } catch (const log::LogError& e) {
    corrupt(e.what());
  }
}

void Simulation::resume_controllers_and_logs() {
  // Per-robot controllers were made (and init()) for the robots of this process's regions; each
  // goes on from its saved state, as after a handoff.
  const std::size_t kinds = model_->kinds.size();
  std::vector<std::uint8_t> restored(state_.robot_count(), 0);
  for (const auto& [id, bytes] : resumed_->controllers) {
    const std::uint32_t i = state_.robot_index(id);
    Controller* c = instance(id);
    if (!c) {
      if (shared_[state_.robot_controller()[i] * kinds + state_.robot_kind()[i]])
        throw RunError("the checkpoint holds a state for robot '" + state_.robot_name()[i] +
                       "', whose controller is shared here (another controller type)");
      continue;  // another process simulates it
    }
    try {
      c->restore(bytes);
    } catch (const std::exception& e) {
      const auto& decl = model_->controllers[state_.robot_controller()[i]];
      throw RunError("robot '" + state_.robot_name()[i] + "', controller '" + decl.id +
                     "': cannot restore its state from the checkpoint: " + e.what());
    }
    restored[i] = 1;
  }
  instances_.for_each([&](EntityId id, std::unique_ptr<Controller>& c) {
    if (c && !restored[state_.robot_index(id)])
      throw RunError("the checkpoint holds no state for the controller of robot '" +
                     state_.robot_name()[state_.robot_index(id)] + "'");
  });

  if (loop_ || resumed_->has_loop) {
    if (!loop_ || !resumed_->has_loop)
      throw RunError(std::string("the checkpointed run ") + (loop_ ? "had no" : "had") +
                     " loop functions and this one " + (loop_ ? "has" : "has none"));
    try {
      // (In a hook, as init(): in the per-process form it sees the robots its process moves.)
      run_hook([&] { loop_->restore(experiment_.loop_params, *this, resumed_->loop); });
    } catch (const RunError&) {
      throw;
    } catch (const std::exception& e) {
      throw RunError("loop functions '" + experiment_.loop_functions +
                     "': cannot restore their state from the checkpoint: " + e.what());
    }
  }

  // The logs go on where they were (the first process writes them; check_resumed_logs()).
  log::LogHeader h = make_header();
  for (std::size_t w = 0; w < writers_.size(); ++w) {
    h.every = experiment_.logs[w].every;
    try {
      writers_[w]->resume(h, resumed_->logs[w].mark);
    } catch (const std::exception& e) {
      throw RunError("cannot continue log '" + experiment_.logs[w].path + "': " + e.what());
    }
  }
  if (observer_) begin_observer(std::move(h));  // (its first frame is the next tick's)
}

void Simulation::check_resumed_logs() const {
  if (experiment_.logs.empty()) return;  // (another process of a distributed run writes them)
  auto names = [](const auto& logs) {
    std::string s;
    for (const auto& l : logs) s += (s.empty() ? "" : ", ") + l.path;
    return s.empty() ? std::string("none") : s;
  };
  // As many logs, in the same order and formats; each may have moved (its content decides).
  const auto& theirs = resumed_->logs;
  if (experiment_.logs.size() != theirs.size())
    throw RunError("the checkpointed run wrote the logs " + names(theirs) +
                   " and this run writes " + names(experiment_.logs) +
                   " (resume with the --log options the checkpointed run had)");
  for (std::size_t w = 0; w < theirs.size(); ++w)
    if (experiment_.logs[w].format != theirs[w].format) {
      auto format = [](log::LogFormat f) {
        return f == log::LogFormat::kDeeco ? "deeco" : "frames";
      };
      throw RunError("the checkpointed run wrote " + theirs[w].path + " as a " +
                     format(theirs[w].format) + " log and this run writes " +
                     experiment_.logs[w].path + " as a " + format(experiment_.logs[w].format) +
                     " log (resume with the --log-format the checkpointed run had)");
    }
}

void Simulation::enable_checkpoints(CheckpointSink write) {
  checkpoint_write_ = std::move(write);
  checkpoints_ = true;
}

void Simulation::request_checkpoint() {
  if (!distributed())
    checkpoint_due_ = true;
  else if (dist_.process == 0)
    checkpoint_requested_ = true;  // announced with this process's next moves
}

void Simulation::take_checkpoint() {
  checkpoint_due_ = false;
  // (Every process of a distributed run takes part in the rounds, whether it writes or not.)
  if (!checkpoint_write_ && !distributed()) return;
  // The robots whose newest rows this process holds (on several processes, those it moved or
  // ran last), and the per-robot controllers it runs, each by increasing id.
  const std::size_t n = state_.robot_count();
  const auto ids = state_.robot_id();
  std::vector<std::uint32_t> rows;
  std::vector<std::uint8_t> take(distributed() ? n : 0, 0);
  SavedControllers saved;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!distributed() || host_of(i) == dist_.process) {
      rows.push_back(i);
      if (distributed()) take[i] = 1;
    }
    Controller* c = instance(ids[i]);
    if (!c) continue;
    std::vector<std::uint8_t> bytes;
    const std::string why = save_controller(*c, bytes);
    if (!why.empty()) {
      const auto& decl = model_->controllers[state_.robot_controller()[i]];
      throw RunError("tick " + std::to_string(state_.tick) + ": checkpoint: robot '" +
                     state_.robot_name()[i] + "', controller '" + decl.id + "': " + why);
    }
    saved.emplace_back(ids[i], std::move(bytes));
  }
  if (!state_.ids_in_order) {  // (a partitioned process's rows need not be in id order)
    std::sort(rows.begin(), rows.end(),
              [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
    std::sort(saved.begin(), saved.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  CheckpointParts mine;
  mine.robots = rows.size();
  mine.digests = state_.robot_digests(take);
  mine.parts =
      (std::max(rows.size(), saved.size()) + kCheckpointPartRobots - 1) / kCheckpointPartRobots;
  std::vector<std::uint8_t> parts, raw;
  for (std::size_t k = 0; k < mine.parts; ++k) {
    const std::size_t at = k * kCheckpointPartRobots;
    const auto slice = [&](const auto& v) {
      const std::size_t from = std::min(at, v.size());
      return std::span(v).subspan(from, std::min(kCheckpointPartRobots, v.size() - from));
    };
    encode_part(state_.robots, slice(rows), slice(saved), raw, parts);
  }
  rows = {};
  saved = {};
  raw = {};
  mine.chunk_bytes.push_back(parts.size());
  mine.chunks.push_back(std::move(parts));
  // On several processes: the parts to the first process, which writes the file.
  if (distributed()) {
    mine = rounds_->checkpoint(std::move(mine));
    if (dist_.process != 0) return;
  }

  std::vector<std::uint8_t> out;
  std::size_t parts_bytes = 0;
  for (std::size_t b : mine.chunk_bytes) parts_bytes += b;
  out.reserve(parts_bytes + (std::size_t{1} << 16) +
              state_.objects.rows() * (64 + 4 * state_.objects.schema().size()));
  log::ByteWriter w(out);
  w.i64(state_.tick);
  w.str(state_.status);
  w.u8(state_.end_requested ? 1 : 0);
  w.u32(state_.next_id);
  w.u64(state_.tags.strings().size());
  for (const auto& t : state_.tags.strings()) w.str(t);
  save_columns(state_.objects, w);
  w.u64(mine.robots);
  w.u32(static_cast<std::uint32_t>(mine.parts));
  for (std::size_t k = 0; k < mine.chunks.size(); ++k) {
    w.raw(mine.chunks[k].data(), mine.chunk_bytes[k]);
    mine.chunks[k] = {};  // (each freed once copied: the world is held about once)
  }
  std::vector<std::uint8_t> loop;
  if (loop_ && !loop_->save(loop))
    throw RunError("tick " + std::to_string(state_.tick) + ": checkpoint: loop functions '" +
                   experiment_.loop_functions + "' cannot save their state");
  w.u8(loop_ ? 1 : 0);
  w.u32(static_cast<std::uint32_t>(loop.size()));
  w.raw(loop.data(), loop.size());
  w.u32(static_cast<std::uint32_t>(writers_.size()));
  for (std::size_t l = 0; l < writers_.size(); ++l) {
    log::LogMark m;
    try {
      m = writers_[l]->mark();
    } catch (const std::exception& e) {
      throw RunError("tick " + std::to_string(state_.tick) + ": checkpoint: log '" +
                     experiment_.logs[l].path + "': " + e.what());
    }
    w.str(experiment_.logs[l].path);
    w.u8(experiment_.logs[l].format == log::LogFormat::kDeeco ? 1 : 0);
    w.u64(m.bytes);
    w.u64(m.hash);
    w.u32(static_cast<std::uint32_t>(m.state.size()));
    w.raw(m.state.data(), m.state.size());
  }
  const std::uint64_t hash = state_.hash_with(mine.robots, mine.digests);
  w.u64(hash);
  if (checkpoint_write_) checkpoint_write_(state_.tick, hash, std::move(out));
}

}  // namespace fleetsim
