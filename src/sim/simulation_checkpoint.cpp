// Checkpoints of a run (docs/checkpoints.md): what the simulation saves at the end of a tick,
// and how a run resumes from it.
//
// Saved state (Checkpoint::state; little-endian, strings as u32 length + bytes):
//   i64 tick, str status, u8 end requested, u32 next entity id, u64 t, t x str tags
//   robots, then objects: u64 rows, u32 columns, columns x (str name, u8 type, u32 width),
//     then each column's rows (fixed-size: the bytes as in the store; strings: rows x width
//     x str)
//   u64 c, c x (u32 robot id, u32 length, the per-robot controller's save() bytes), by id
//   u8 has loop functions, u32 length, their save() bytes
//   u32 l, l x (str path, u8 format (0 frames, 1 deeco), u64 bytes, u64 hash, u32 length,
//     the writer's state): the logs
//   u64 WorldState::hash() of the world above
#include <algorithm>
#include <cmath>
#include <numeric>

#include "log/byte_io.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

namespace {

/// Entity ids a checkpoint may hold (bounds the id index a corrupt file could make us build).
constexpr std::uint64_t kMaxEntityIds = std::uint64_t{1} << 28;

void save_columns(const ColumnStore& s, log::ByteWriter& w) {
  w.u64(s.rows());
  w.u32(static_cast<std::uint32_t>(s.schema().size()));
  for (const ColumnDesc& d : s.schema()) {
    w.str(d.name);
    w.u8(static_cast<std::uint8_t>(d.type));
    w.u32(d.width);
  }
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

void Simulation::restore_world(const std::vector<std::uint8_t>& saved) {
  auto corrupt = [](const std::string& why) {
    throw RunError("the checkpoint's world is corrupt (" + why + ")");
  };
  resumed_ = std::make_unique<Resumed>();
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
    restore_columns(s.robots, r, "robots");
    restore_columns(s.objects, r, "objects");

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
      if (ids[i] >= next || (i > 0 && ids[i] <= ids[i - 1])) corrupt("robot ids out of order");
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

    const std::size_t nctrl = r.count(r.u64(), 8);
    for (std::size_t k = 0; k < nctrl; ++k) {
      const EntityId id = r.u32();
      const std::uint32_t len = r.u32();
      const std::uint8_t* bytes = r.take(len);
      if (s.robot_index(id) == kNoIndex ||
          (!resumed_->controllers.empty() && id <= resumed_->controllers.back().first))
        corrupt("a controller state for no robot, or out of order");
      resumed_->controllers.emplace_back(id, std::vector<std::uint8_t>(bytes, bytes + len));
    }
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
    if (hash != s.hash()) corrupt("its hash does not match its content");
  } catch (const log::LogError& e) {
    corrupt(e.what());
  }
}

void Simulation::resume_controllers_and_logs() {
  // Per-robot controllers were made (and init()) for the robots of this process's regions; each
  // goes on from its saved state, as after a handoff.
  const std::size_t kinds = model_->kinds.size();
  std::vector<std::uint8_t> restored(state_.next_id, 0);
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
    restored[id] = 1;
  }
  instances_.for_each([&](EntityId id, std::unique_ptr<Controller>& c) {
    if (c && !restored[id])
      throw RunError("the checkpoint holds no state for the controller of robot '" +
                     state_.robot_name()[state_.robot_index(id)] + "'");
  });

  if (loop_ || resumed_->has_loop) {
    if (!loop_ || !resumed_->has_loop)
      throw RunError(std::string("the checkpointed run ") + (loop_ ? "had no" : "had") +
                     " loop functions and this one " + (loop_ ? "has" : "has none"));
    try {
      loop_->restore(experiment_.loop_params, *this, resumed_->loop);
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
  if (placed_part_)
    throw RunError(
        "checkpoints need every robot placed on every process: load the experiment "
        "without ExperimentOverrides::defer_placement");
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
  // This process's per-robot controllers, in robot order.
  std::vector<std::pair<EntityId, std::vector<std::uint8_t>>> saved;
  for (std::size_t i = 0; i < state_.robot_count(); ++i) {
    const EntityId id = state_.robot_id()[i];
    Controller* c = instance(id);
    if (!c) continue;
    std::vector<std::uint8_t> bytes;
    const std::string why = save_controller(*c, bytes);
    if (!why.empty()) {
      const auto& decl = model_->controllers[state_.robot_controller()[i]];
      throw RunError("tick " + std::to_string(state_.tick) + ": checkpoint: robot '" +
                     state_.robot_name()[i] + "', controller '" + decl.id + "': " + why);
    }
    saved.emplace_back(id, std::move(bytes));
  }
  // On several processes: every column of every robot and every controller's state to the
  // first process, which writes the file.
  if (distributed()) {
    auto all = rounds_->checkpoint(saved);
    if (dist_.process != 0) return;
    saved = std::move(all);
  }

  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.i64(state_.tick);
  w.str(state_.status);
  w.u8(state_.end_requested ? 1 : 0);
  w.u32(state_.next_id);
  w.u64(state_.tags.strings().size());
  for (const auto& t : state_.tags.strings()) w.str(t);
  save_columns(state_.robots, w);
  save_columns(state_.objects, w);
  w.u64(saved.size());
  for (const auto& [id, bytes] : saved) {
    w.u32(id);
    w.u32(static_cast<std::uint32_t>(bytes.size()));
    w.raw(bytes.data(), bytes.size());
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
  const std::uint64_t hash = state_.hash();
  w.u64(hash);
  if (checkpoint_write_) checkpoint_write_(state_.tick, hash, std::move(out));
}

}  // namespace fleetsim
