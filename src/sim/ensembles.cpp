#include "sim/ensembles.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace fleetsim {

namespace {

/// The engine's EnsembleWorld: the state's columns, for the calling thread only.
class RunEnsembleWorld final : public EnsembleWorld {
 public:
  RunEnsembleWorld(const WorldModel& model, WorldState& state,
                   const std::vector<ColumnHandle>& knowledge, Tick tick,
                   const EnsembleRunner::Hooks& hooks)
      : model_(model), state_(state), tick_(tick), hooks_(hooks) {
    for (std::size_t f = 0; f < knowledge.size(); ++f) {
      data_.push_back(static_cast<double*>(state.robots.data(knowledge[f])));
      size_.push_back(model.knowledge_sizes[f]);
    }
  }
  std::span<double> knowledge(const Component& c, std::size_t field) override {
    if (field >= data_.size())
      throw std::runtime_error("knowledge field handle " + std::to_string(field) +
                               " out of range (" + std::to_string(data_.size()) + " fields)");
    return {data_[field] + std::size_t{c.row} * size_[field], size_[field]};
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
  Tick tick() const override { return tick_; }
  void set_status(const std::string& status) override { hooks_.set_status(status); }
  void end_run() override { hooks_.end_run(); }

 private:
  const WorldModel& model_;
  WorldState& state_;
  Tick tick_;
  const EnsembleRunner::Hooks& hooks_;
  std::vector<double*> data_;
  std::vector<std::uint32_t> size_;
};

}  // namespace

EnsembleRunner::EnsembleRunner(const WorldModel& model, WorldState& state,
                               std::vector<EnsembleDecl>& ensembles, Hooks hooks)
    : model_(model), state_(state), ensembles_(ensembles), hooks_(std::move(hooks)) {
  for (const std::string& name : model.knowledge_names)
    knowledge_.push_back(state.robots.find("knowledge." + name));
  const double dt = static_cast<double>(model.tick_period_ns) / kNanosPerSecond;
  for (const RobotKind& k : model.kinds)
    if (k.in_run) motion_m_ = std::max(motion_m_, 2 * k.max_speed_m_per_s * dt);
}

void EnsembleRunner::run(Tick tick, const SpatialIndex& index) {
  pairs_ = exchanges_ = 0;
  if (ensembles_.empty()) return;
  const std::size_t n = state_.robot_count();
  const EntityId* ids = state_.robot_id().data();
  const std::uint16_t* kinds = state_.robot_kind().data();
  const std::uint32_t* tags = state_.robot_tag().data();
  const double* x = state_.x().data();
  const double* y = state_.y().data();
  // Rows in increasing id order.
  by_id_.resize(n);
  std::iota(by_id_.begin(), by_id_.end(), 0u);
  if (!state_.ids_in_order)
    std::sort(by_id_.begin(), by_id_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
  RunEnsembleWorld world(model_, state_, knowledge_, tick, hooks_);
  coordinator_.assign(n, 0);
  member_.assign(n, 0);
  const auto& order = index.robots.order();
  for (EnsembleDecl& e : ensembles_) {
    if (tick % e.period != 0) continue;
    Ensemble& ens = *e.instance;
    // A selector's tag as an index of the run's tag table (none: it selects no robot).
    auto tag_index = [&](const ComponentSelector& s) -> std::int64_t {
      const auto& strings = state_.tags.strings();
      for (std::size_t t = 0; t < strings.size(); ++t)
        if (strings[t] == s.value) return static_cast<std::int64_t>(t);
      return -1;
    };
    const std::int64_t coordinator_tag = tag_index(e.coordinators),
                       member_tag = tag_index(e.members);
    auto selected = [&](const ComponentSelector& s, std::int64_t tag, std::uint32_t row) {
      switch (s.by) {
        case ComponentSelector::By::kAll:
          return true;
        case ComponentSelector::By::kKind:
          return kinds[row] == s.kind;
        case ComponentSelector::By::kTag:
          return static_cast<std::int64_t>(tags[row]) == tag;
      }
      return false;
    };
    try {
      // The selections, once per evaluation, in id order.
      std::vector<std::uint32_t> coordinators, members;
      for (std::uint32_t row : by_id_) {
        const Component c{ids[row], row};
        coordinator_[row] =
            selected(e.coordinators, coordinator_tag, row) && ens.is_coordinator(world, c);
        member_[row] = selected(e.members, member_tag, row) && ens.is_member(world, c);
        if (coordinator_[row]) coordinators.push_back(row);
        if (member_[row] && e.within_m <= 0) members.push_back(row);
      }
      auto pair = [&](const Component& c, std::uint32_t row) {
        const Component m{ids[row], row};
        ++pairs_;
        if (ens.membership(world, c, m)) {
          ++exchanges_;
          ens.exchange(world, c, m);
        }
      };
      for (std::uint32_t crow : coordinators) {
        const Component c{ids[crow], crow};
        if (e.within_m <= 0) {  // global: every member
          for (std::uint32_t row : members)
            if (row != crow) pair(c, row);
          continue;
        }
        // Spatial: the grid holds the positions of before the move; robots moved at most
        // motion_m_ closer, so its cells within `within` + motion_m_ hold every candidate.
        const Vec2 p{x[crow], y[crow]};
        const double d2 = e.within_m * e.within_m;
        near_.clear();
        index.robots.for_each_within(p, e.within_m + motion_m_, [&](std::uint32_t slot) {
          const std::uint32_t row = order[slot];
          if (row == crow || !member_[row]) return;
          const double dx = x[row] - p.x, dy = y[row] - p.y;
          if (dx * dx + dy * dy <= d2) near_.push_back({ids[row], row});
        });
        std::sort(near_.begin(), near_.end());
        for (const auto& [id, row] : near_) pair(c, row);
      }
    } catch (const std::exception& ex) {
      throw std::runtime_error("tick " + std::to_string(tick) + ", ensemble '" + e.type + "' (" +
                               e.where.file + ":" + std::to_string(e.where.line) +
                               "): " + ex.what());
    }
  }
}

}  // namespace fleetsim
