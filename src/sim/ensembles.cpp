#include "sim/ensembles.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "core/cpu_features.hpp"
#include "core/lane_tables.hpp"

namespace fleetsim {

namespace {

/// A coordinator's members in the slots [b, e) (EnsembleRunner::run's gather), for AVX2, four
/// slots at a time: the same tests in the same double operations (no fused multiply-add), so
/// the same slots in the same order as the scalar loop. Writes them at out + k and returns the
/// new k; `out` has room for e - b + 4 more; `member` is readable 4 bytes past `slots`.
[[gnu::target("avx2")]] [[gnu::noinline]] std::size_t members_within_avx2(
    const double* sx, const double* sy, const std::uint8_t* member, std::uint32_t slots,
    std::uint32_t b, std::uint32_t e, std::uint32_t self, double px, double py, double d2,
    std::uint32_t* out, std::size_t k) {
  const __m256d vpx = _mm256_set1_pd(px), vpy = _mm256_set1_pd(py), vd2 = _mm256_set1_pd(d2);
  const __m128i zero = _mm_setzero_si128();
  for (std::uint32_t s = b; s < e; s += 4) {
    const std::uint32_t width = std::min(4u, e - s);
    __m256d x, y;
    if (s + 4 <= slots) {  // (lanes past the run read its neighbours: their bits are cleared)
      x = _mm256_loadu_pd(sx + s);
      y = _mm256_loadu_pd(sy + s);
    } else {  // the array's last slots: the lanes past its end are not read
      const __m256i mask =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes::kFirst64[width]));
      x = _mm256_maskload_pd(sx + s, mask);
      y = _mm256_maskload_pd(sy + s, mask);
    }
    const __m256d dx = _mm256_sub_pd(x, vpx), dy = _mm256_sub_pd(y, vpy);
    const __m256d q = _mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy));
    unsigned bits = static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(q, vd2, _CMP_LE_OQ)));
    std::int32_t flags;
    std::memcpy(&flags, member + s, 4);
    bits &=
        ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_cvtsi32_si128(flags), zero))) &
        ((1u << width) - 1);
    if (self - s < width) bits &= ~(1u << (self - s));
    const __m128i pack = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes::kPack[bits]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k),
                     _mm_add_epi32(_mm_set1_epi32(static_cast<int>(s)), pack));
    k += lanes::kCount[bits];
  }
  return k;
}

/// The engine's EnsembleWorld: the state's columns, for the calling thread only.
class RunEnsembleWorld final : public EnsembleWorld {
 public:
  RunEnsembleWorld(const WorldModel& model, WorldState& state,
                   const std::vector<ColumnHandle>& knowledge, Tick tick,
                   const EnsembleRunner::Hooks& hooks,
                   const std::vector<ColumnHandle>* object_knowledge = nullptr)
      : model_(model), state_(state), tick_(tick), hooks_(hooks) {
    for (std::size_t f = 0; f < knowledge.size(); ++f) {
      data_.push_back(static_cast<double*>(state.robots.data(knowledge[f])));
      size_.push_back(model.knowledge_sizes[f]);
      if (object_knowledge && (*object_knowledge)[f] != kNoColumn)
        object_data_.push_back(static_cast<double*>(state.objects.data((*object_knowledge)[f])));
    }
  }
  std::span<double> knowledge(const Component& c, std::size_t field) override {
    if (field >= data_.size())
      throw std::runtime_error("knowledge field handle " + std::to_string(field) +
                               " out of range (" + std::to_string(data_.size()) + " fields)");
    if (c.object) {
      if (field >= object_data_.size()) throw std::runtime_error("no object knowledge here");
      return {object_data_[field] + std::size_t{c.row} * size_[field], size_[field]};
    }
    return {data_[field] + std::size_t{c.row} * size_[field], size_[field]};
  }
  Vec2 position(const Component& c) const override {
    if (c.object) return {state_.object_x()[c.row], state_.object_y()[c.row]};
    return {state_.x()[c.row], state_.y()[c.row]};
  }
  double heading(const Component& c) const override {
    return c.object ? 0.0 : state_.theta()[c.row];
  }
  const std::string& tag(const Component& c) const override {
    if (c.object) return state_.tags.str(state_.object_tag()[c.row]);
    return state_.tags.str(state_.robot_tag()[c.row]);
  }
  const KindInfo& kind(const Component& c) const override {
    if (c.object)
      throw std::runtime_error("object " + std::to_string(c.id) +
                               " has no kind (an object has a class)");
    return model_.kinds[state_.robot_kind()[c.row]];
  }
  std::string_view object_class(const Component& c) const override {
    if (!c.object) return {};
    return model_.object_classes[state_.object_class()[c.row]];
  }
  double size(const Component& c) const override {
    if (c.object) return state_.object_size()[c.row];
    return 2 * model_.kinds[state_.robot_kind()[c.row]].radius_m;
  }
  Tick tick() const override { return tick_; }
  void set_status(const std::string& status) override { hooks_.set_status(status); }
  void end_run() override { hooks_.end_run(); }

 private:
  const WorldModel& model_;
  WorldState& state_;
  Tick tick_;
  const EnsembleRunner::Hooks& hooks_;
  std::vector<double*> data_, object_data_;
  std::vector<std::uint32_t> size_;
};

/// A concurrent ensemble's world on one worker: the coordinator's own knowledge is live; the
/// member's (the only other component its calls get) is a copy of the snapshot taken before
/// the evaluation, which is in the grid's slot order (neighbours are near in it).
class ConcurrentEnsembleWorld final : public EnsembleWorld {
 public:
  ConcurrentEnsembleWorld(const WorldModel& model, WorldState& state,
                          const std::vector<ColumnHandle>& knowledge,
                          const std::vector<std::vector<double>>& snapshot,
                          const std::uint32_t* slot_of, Tick tick, std::vector<double>& copy)
      : model_(model),
        state_(state),
        snapshot_(snapshot),
        slot_of_(slot_of),
        tick_(tick),
        copy_(copy) {
    std::uint32_t at = 0;
    for (std::size_t f = 0; f < knowledge.size(); ++f) {
      data_.push_back(static_cast<double*>(state.robots.data(knowledge[f])));
      size_.push_back(model.knowledge_sizes[f]);
      offset_.push_back(at);
      at += model.knowledge_sizes[f];
    }
    copy_.assign(at, 0.0);
  }
  std::uint32_t coordinator = 0;  ///< the row being evaluated
  std::span<double> knowledge(const Component& c, std::size_t field) override {
    if (field >= data_.size())
      throw std::runtime_error("knowledge field handle " + std::to_string(field) +
                               " out of range (" + std::to_string(data_.size()) + " fields)");
    const std::uint32_t n = size_[field];
    if (c.row == coordinator) return {data_[field] + std::size_t{c.row} * n, n};
    const double* from = snapshot_[field].data() + std::size_t{slot_of_[c.row]} * n;
    double* to = copy_.data() + offset_[field];
    for (std::uint32_t k = 0; k < n; ++k) to[k] = from[k];  // (a few numbers: no memmove call)
    return {to, n};
  }
  Vec2 position(const Component& c) const override {
    return {state_.x()[c.row], state_.y()[c.row]};
  }
  double heading(const Component& c) const override { return state_.theta()[c.row]; }
  const std::string& tag(const Component& c) const override {
    return state_.tags.str(state_.robot_tag()[c.row]);
  }
  const KindInfo& kind(const Component& c) const override {
    return model_.kinds[state_.robot_kind()[c.row]];
  }
  std::string_view object_class(const Component&) const override { return {}; }
  double size(const Component& c) const override {
    return 2 * model_.kinds[state_.robot_kind()[c.row]].radius_m;
  }
  Tick tick() const override { return tick_; }
  void set_status(const std::string&) override {
    throw std::runtime_error(
        "set_status: not from a concurrent ensemble (its concurrent() is "
        "true; docs/experiment-format.md, <ensembles>)");
  }
  void end_run() override {
    throw std::runtime_error(
        "end_run: not from a concurrent ensemble (its concurrent() is "
        "true; docs/experiment-format.md, <ensembles>)");
  }

 private:
  const WorldModel& model_;
  WorldState& state_;
  const std::vector<std::vector<double>>& snapshot_;  ///< per field, in slot order
  const std::uint32_t* slot_of_;                      ///< per row, its slot
  Tick tick_;
  std::vector<double>& copy_;
  std::vector<double*> data_;
  std::vector<std::uint32_t> size_, offset_;
};

}  // namespace

EnsembleRunner::EnsembleRunner(const WorldModel& model, WorldState& state,
                               std::vector<EnsembleDecl>& ensembles, Hooks hooks)
    : model_(model), state_(state), ensembles_(ensembles), hooks_(std::move(hooks)) {
  for (const std::string& name : model.knowledge_names) {
    knowledge_.push_back(state.robots.find("knowledge." + name));
    object_knowledge_.push_back(state.objects.find("knowledge." + name));
  }
}

void EnsembleRunner::run_with_objects(EnsembleDecl& e, Tick tick, const SpatialIndex& index) {
  Ensemble& ens = *e.instance;
  RunEnsembleWorld world(model_, state_, knowledge_, tick, hooks_, &object_knowledge_);
  const auto& tags = state_.tags.strings();
  // The components a selector accepts (objects or robots), in increasing id order.
  auto components = [&](const ComponentSelector& s) {
    std::vector<Component> out;
    if (s.objects()) {
      for (std::uint32_t o = 0; o < state_.object_count(); ++o)
        if (s.by == ComponentSelector::By::kObjects || state_.object_class()[o] == s.kind)
          out.push_back({state_.object_id()[o], o, true});
    } else {
      for (std::uint32_t r = 0; r < state_.robot_count(); ++r) {
        const bool ok =
            s.by == ComponentSelector::By::kAll ||
            (s.by == ComponentSelector::By::kKind && state_.robot_kind()[r] == s.kind) ||
            (s.by == ComponentSelector::By::kTag && tags[state_.robot_tag()[r]] == s.value);
        if (ok) out.push_back({state_.robot_id()[r], r, false});
      }
    }
    std::sort(out.begin(), out.end(),
              [](const Component& a, const Component& b) { return a.id < b.id; });
    return out;
  };
  std::vector<Component> coordinators, members;
  // is_coordinator and is_member once per evaluation, in id order (robots and objects have
  // ids of one sequence).
  std::vector<Component> all = components(e.coordinators);
  const std::vector<Component> candidates = components(e.members);
  std::vector<std::pair<Component, int>> calls;
  for (const Component& c : all) calls.push_back({c, 0});
  for (const Component& m : candidates) calls.push_back({m, 1});
  std::stable_sort(calls.begin(), calls.end(),
                   [](const auto& a, const auto& b) { return a.first.id < b.first.id; });
  for (const auto& [c, which] : calls) {
    if (which == 0 && ens.is_coordinator(world, c)) coordinators.push_back(c);
    if (which == 1 && ens.is_member(world, c)) members.push_back(c);
  }
  const double d2 = e.within_m * e.within_m;
  std::vector<Component> near;
  std::vector<std::uint8_t> is_member;
  if (e.within_m > 0 && !e.members.objects()) {
    is_member.assign(state_.robot_count(), 0);
    for (const Component& m : members) is_member[m.row] = 1;
  }
  for (const Component& c : coordinators) {
    near.clear();
    const Vec2 p = world.position(c);
    if (e.within_m > 0 && !e.members.objects()) {
      // Robot members within reach, through the grid.
      const auto& order = index.robots.order();
      const auto& sx = index.robots.sorted_x();
      const auto& sy = index.robots.sorted_y();
      index.robots.for_each_within(p, e.within_m, [&](std::uint32_t slot) {
        const double dx = sx[slot] - p.x, dy = sy[slot] - p.y;
        const std::uint32_t row = order[slot];
        if (dx * dx + dy * dy <= d2 && is_member[row])
          near.push_back({state_.robot_id()[row], row, false});
      });
      std::sort(near.begin(), near.end(),
                [](const Component& a, const Component& b) { return a.id < b.id; });
    } else {
      for (const Component& m : members) {
        if (e.within_m > 0) {
          const Vec2 q = world.position(m);
          if ((q.x - p.x) * (q.x - p.x) + (q.y - p.y) * (q.y - p.y) > d2) continue;
        }
        near.push_back(m);
      }
    }
    for (const Component& m : near) {
      if (m.id == c.id) continue;
      ++pairs_;
      if (ens.membership(world, c, m)) {
        ++exchanges_;
        ens.exchange(world, c, m);
      }
    }
  }
}

bool EnsembleRunner::due(Tick tick) const {
  return std::any_of(ensembles_.begin(), ensembles_.end(),
                     [&](const EnsembleDecl& e) { return tick % e.period == 0; });
}

void EnsembleRunner::run(Tick tick, const SpatialIndex& index, ThreadPool& pool) {
  if (!due(tick)) return;
  pairs_ = exchanges_ = 0;
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::uint16_t* kinds = state_.robot_kind().data();
  const std::uint32_t* tags = state_.robot_tag().data();
  const std::uint32_t* order = index.robots.order().data();
  const double* sx = index.robots.sorted_x().data();
  const double* sy = index.robots.sorted_y().data();
  // Rows in increasing id order; ids in slot order.
  by_id_.resize(n);
  std::iota(by_id_.begin(), by_id_.end(), 0u);
  if (!state_.ids_in_order)
    std::sort(by_id_.begin(), by_id_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
  id_slot_.resize(n);
  slot_of_.resize(n);
  pool.parallel_for(n, 8192, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t s = b; s < e; ++s) {
      id_slot_[s] = ids[order[s]];
      slot_of_[order[s]] = static_cast<std::uint32_t>(s);
    }
  });
  RunEnsembleWorld world(model_, state_, knowledge_, tick, hooks_);
  coordinator_.assign(n, 0);
  member_.assign(n, 0);
  member_slot_.assign(n + 4, 0);  // (+ 4: the AVX2 gather reads 4 flags at a time)
  workers_.resize(static_cast<std::size_t>(pool.size()));
  for (EnsembleDecl& e : ensembles_) {
    if (tick % e.period != 0) continue;
    if (e.coordinators.objects() || e.members.objects()) {
      try {
        run_with_objects(e, tick, index);
      } catch (const std::exception& ex) {
        throw std::runtime_error("tick " + std::to_string(tick) + ", ensemble '" + e.type + "' (" +
                                 e.where.file + ":" + std::to_string(e.where.line) +
                                 "): " + ex.what());
      }
      continue;
    }
    Ensemble& ens = *e.instance;
    // A selector's tag as an index of the run's tag table (none: it selects no robot).
    auto tag_index = [&](const ComponentSelector& s) -> std::int64_t {
      const auto& strings = state_.tags.strings();
      for (std::size_t t = 0; t < strings.size(); ++t)
        if (strings[t] == s.value) return static_cast<std::int64_t>(t);
      return -1;
    };
    const std::int64_t coordinator_tag = tag_index(e.coordinators);
    const std::int64_t member_tag = tag_index(e.members);
    auto selected = [&](const ComponentSelector& s, std::int64_t tag, std::uint32_t row) {
      switch (s.by) {
        case ComponentSelector::By::kAll:
          return true;
        case ComponentSelector::By::kKind:
          return kinds[row] == s.kind;
        case ComponentSelector::By::kTag:
          return static_cast<std::int64_t>(tags[row]) == tag;
        case ComponentSelector::By::kObjects:
        case ComponentSelector::By::kClass:
          return false;  // (run_with_objects)
      }
      return false;
    };
    // A coordinator's members within reach: the grid's cells around it, read in slot order
    // (positions, flags and ids contiguous); each kept as its place in the batch's columns
    // (`at`: the slot for a concurrent ensemble, whose columns are in slot order, the row
    // otherwise), by increasing id unless the type is order_free.
    const double d2 = e.within_m * e.within_m;
    const bool order_free = ens.order_free();
    const bool concurrent = ens.concurrent();
    const bool avx2 = simd_path() == SimdPath::kAvx2;
    auto gather = [&](std::uint32_t cslot, WorkerScratch& w) {
      const double px = sx[cslot], py = sy[cslot];
      const std::uint8_t* member = member_slot_.data();
      std::vector<std::uint32_t>& near = w.at;
      std::size_t count = 0;
      // Without a branch per slot (a third of them pass, at random: a branch mispredicted half
      // the time cost more than the test): every slot is written, the count moves on the kept.
      auto run = [&](std::uint32_t b, std::uint32_t end) {
        if (near.size() < count + (end - b) + 4) near.resize(2 * (count + (end - b) + 4));
        std::uint32_t* out = near.data();
        if (avx2) {
          count = members_within_avx2(sx, sy, member, static_cast<std::uint32_t>(n), b, end, cslot,
                                      px, py, d2, out, count);
          return;
        }
        std::size_t k = count;
        for (std::uint32_t t = b; t < end; ++t) {
          const double dx = sx[t] - px, dy = sy[t] - py;
          out[k] = t;
          k +=
              static_cast<std::size_t>((dx * dx + dy * dy <= d2) & (member[t] != 0) & (t != cslot));
        }
        count = k;
      };
      // The cells the square of half side `within` around the coordinator touches (2 x 2 to
      // 3 x 3 cells when `within` is under a cell, where the block of for_each_run_within is
      // 5 x 5): the same members, fewer slots read. A reach of many cells takes the block.
      constexpr int kMaxRuns = 16;
      std::uint32_t rb[kMaxRuns], re[kMaxRuns];
      const int runs = index.robots.runs_within({px, py}, e.within_m, rb, re, kMaxRuns);
      if (runs >= 0) {
        for (int r = 0; r < runs; ++r)
          if (rb[r] < re[r]) run(rb[r], re[r]);
      } else {
        index.robots.for_each_run_within({px, py}, e.within_m, run);
      }
      std::uint32_t* at = near.data();
      if (!order_free) {  // by id: sorted as id << 32 | slot
        w.near.resize(count);
        for (std::size_t j = 0; j < count; ++j)
          w.near[j] = std::uint64_t{id_slot_[at[j]]} << 32 | at[j];
        std::sort(w.near.begin(), w.near.end());
        for (std::size_t j = 0; j < count; ++j) at[j] = static_cast<std::uint32_t>(w.near[j]);
      }
      if (!concurrent)
        for (std::size_t j = 0; j < count; ++j) at[j] = order[at[j]];
      return count;
    };
    try {
      if (ens.concurrent()) {
        // The selections on every worker (a concurrent type's is_coordinator and is_member
        // read and write only their robot), then the knowledge's snapshot and the flags in
        // slot order.
        for (WorkerScratch& w : workers_) w.error.clear();
        pool.parallel_for(n, 4096, [&](std::size_t b, std::size_t end, int k) {
          WorkerScratch& w = workers_[static_cast<std::size_t>(k)];
          ConcurrentEnsembleWorld cw(model_, state_, knowledge_, snapshot_, slot_of_.data(), tick,
                                     w.copy);
          try {
            for (std::size_t row = b; row < end; ++row) {
              const Component c{ids[row], static_cast<std::uint32_t>(row)};
              cw.coordinator = c.row;
              coordinator_[row] =
                  selected(e.coordinators, coordinator_tag, c.row) && ens.is_coordinator(cw, c);
              member_[row] = selected(e.members, member_tag, c.row) && ens.is_member(cw, c);
            }
          } catch (const std::exception& ex) {
            if (w.error.empty()) w.error = ex.what();
          }
        });
        for (WorkerScratch& w : workers_)
          if (!w.error.empty()) throw std::runtime_error(w.error);
      }
      // The selections, once per evaluation, in id order.
      std::vector<std::uint32_t> coordinators, members;
      if (!ens.concurrent()) {
        for (std::uint32_t row : by_id_) {
          const Component c{ids[row], row};
          coordinator_[row] =
              selected(e.coordinators, coordinator_tag, row) && ens.is_coordinator(world, c);
          member_[row] = selected(e.members, member_tag, row) && ens.is_member(world, c);
          if (coordinator_[row]) coordinators.push_back(row);
        }
      }
      if (e.within_m <= 0)
        for (std::uint32_t row : by_id_)
          if (member_[row]) members.push_back(row);
      pool.parallel_for(n, 8192, [&](std::size_t b, std::size_t end, int) {
        for (std::size_t s = b; s < end; ++s) member_slot_[s] = member_[order[s]];
      });
      // A coordinator's candidates go to the type's evaluate in one call, as columns: ids,
      // rows, knowledge and positions, in slot order for a concurrent ensemble (the snapshot
      // and the grid's), in row order otherwise (the live columns).
      auto batch = [&](const std::uint32_t* at, std::size_t count) {
        MemberBatch mb;
        mb.at = {at, count};
        mb.id = concurrent ? id_slot_.data() : ids;
        mb.row = concurrent ? order : rows_.data();
        mb.knowledge = concurrent ? std::span<double* const>(snapshot_data_)
                                  : std::span<double* const>(live_data_);
        mb.sizes = model_.knowledge_sizes;
        mb.x = concurrent ? sx : state_.x().data();
        mb.y = concurrent ? sy : state_.y().data();
        mb.writable = !concurrent;
        return mb;
      };
      // A global ensemble's members, by id, once: a coordinator's candidates are those before
      // it and those after it (two calls).
      std::vector<EntityId> member_ids;
      std::vector<std::uint32_t> member_at;
      if (e.within_m <= 0) {
        for (std::uint32_t row : members) {
          member_ids.push_back(ids[row]);
          member_at.push_back(concurrent ? slot_of_[row] : row);
        }
      }
      // Evaluates coordinator c with its candidates (a spatial one's the `count` first of
      // `at`), counting its pairs and exchanges.
      auto coordinate = [&](EnsembleWorld& on, const Component& c, const std::uint32_t* at,
                            std::size_t count, std::uint64_t& pairs, std::uint64_t& made) {
        if (e.within_m <= 0) {
          const auto split = static_cast<std::size_t>(
              std::lower_bound(member_ids.begin(), member_ids.end(), c.id) - member_ids.begin());
          const std::size_t after = split + static_cast<std::size_t>(split < member_ids.size() &&
                                                                     member_ids[split] == c.id);
          if (split > 0) {
            pairs += split;
            made += ens.evaluate(on, c, batch(member_at.data(), split));
          }
          if (after < member_ids.size()) {
            const std::size_t k = member_ids.size() - after;
            pairs += k;
            made += ens.evaluate(on, c, batch(member_at.data() + after, k));
          }
          return;
        }
        if (count == 0) return;
        pairs += count;
        made += ens.evaluate(on, c, batch(at, count));
      };
      if (!concurrent && rows_.size() != n) {
        rows_.resize(n);
        std::iota(rows_.begin(), rows_.end(), 0u);
      }
      live_data_.clear();
      for (std::size_t f = 0; f < knowledge_.size(); ++f)
        live_data_.push_back(static_cast<double*>(state_.robots.data(knowledge_[f])));
      if (concurrent) {
        // Every coordinator on some worker (each writes only itself, so their order is free:
        // slot order, for locality), members read from the snapshot, in slot order.
        snapshot_.resize(knowledge_.size());
        snapshot_data_.clear();
        for (std::size_t f = 0; f < knowledge_.size(); ++f) {
          const double* data = live_data_[f];
          const std::uint32_t size = model_.knowledge_sizes[f];
          snapshot_[f].resize(n * size);
          double* to = snapshot_[f].data();
          snapshot_data_.push_back(to);
          pool.parallel_for(n, 8192, [&](std::size_t b, std::size_t end, int) {
            for (std::size_t s = b; s < end; ++s)
              for (std::uint32_t k = 0; k < size; ++k)
                to[s * size + k] = data[std::size_t{order[s]} * size + k];
          });
        }
        for (WorkerScratch& w : workers_) w.pairs = w.exchanges = 0, w.error.clear();
        pool.parallel_for(n, 256, [&](std::size_t b, std::size_t end, int k) {
          WorkerScratch& w = workers_[static_cast<std::size_t>(k)];
          ConcurrentEnsembleWorld cw(model_, state_, knowledge_, snapshot_, slot_of_.data(), tick,
                                     w.copy);
          try {
            for (std::size_t i = b; i < end; ++i) {
              const auto cslot = static_cast<std::uint32_t>(i);
              const std::uint32_t crow = order[cslot];
              if (!coordinator_[crow]) continue;
              cw.coordinator = crow;
              const std::size_t count = e.within_m > 0 ? gather(cslot, w) : 0;
              coordinate(cw, {ids[crow], crow}, w.at.data(), count, w.pairs, w.exchanges);
            }
          } catch (const std::exception& ex) {
            if (w.error.empty()) w.error = ex.what();
          }
        });
        for (const WorkerScratch& w : workers_) {
          if (!w.error.empty()) throw std::runtime_error(w.error);
          pairs_ += w.pairs;
          exchanges_ += w.exchanges;
        }
        continue;
      }
      for (std::uint32_t crow : coordinators) {
        const std::size_t count = e.within_m > 0 ? gather(slot_of_[crow], main_) : 0;
        coordinate(world, {ids[crow], crow}, main_.at.data(), count, pairs_, exchanges_);
      }
    } catch (const std::exception& ex) {
      throw std::runtime_error("tick " + std::to_string(tick) + ", ensemble '" + e.type + "' (" +
                               e.where.file + ":" + std::to_string(e.where.line) +
                               "): " + ex.what());
    }
  }
}

}  // namespace fleetsim
