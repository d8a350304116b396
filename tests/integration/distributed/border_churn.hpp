// Loop functions that stir the world near a border (x = border_x): what the distributed-swarm,
// checkpoint and MPI tests run. Built against the SDK only, so that a plug-in library
// (border_churn_plugin.cpp) can register them for the fleetsim program too.
#pragma once

#include <memory>
#include <string>

#include "fleetsim/loop_functions.hpp"
#include "fleetsim/plugin.hpp"
#include "fleetsim/random.hpp"

namespace fleetsim::testing {

/// What both forms below share: their parameters (the border, the tick to end at), which are
/// all they keep (checkpoints save nothing).
class ChurnBase : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess&) override {
    end_at_ = p.integer("end_at", -1);
    border_x_ = p.real("border_x", 0.0);
  }
  bool is_finished(const WorldAccess& w) const override {
    return end_at_ >= 0 && w.tick() >= end_at_;
  }
  bool save(std::vector<std::uint8_t>&) const override { return true; }
  void restore(const Params& p, WorldAccess& w, std::span<const std::uint8_t>) override {
    init(p, w);
  }

 protected:
  std::int64_t end_at_ = -1;
  double border_x_ = 0;
};

/// Loop functions that stir the world near region borders: every few ticks they move a robot
/// across a border, add one beside a border, remove one, and tag robots; they end the run
/// early when asked. Deterministic (counter-based draws), as loop functions must be.
class BorderChurn final : public ChurnBase {
 public:
  void pre_step(WorldAccess& w) override {
    CounterRng rng(w.seed(), 1, w.tick(), RandomStream::kLoopFunctions);
    auto ids = w.robots();
    if (ids.empty() || w.tick() % 3 != 0) return;
    // Hop a robot to the other side of the border, just across it.
    const EntityId id = ids[rng.below(static_cast<std::uint32_t>(ids.size()))];
    const Vec2 p = w.robot_position(id);
    const double side = p.x < border_x_ ? 1 : -1;
    w.move_robot(id, {border_x_ + side * (0.05 + 0.3 * rng.uniform()), p.y}, rng.uniform() * 6);
  }
  void post_step(WorldAccess& w) override {
    CounterRng rng(w.seed(), 2, w.tick(), RandomStream::kLoopFunctions);
    auto ids = w.robots();
    if (w.tick() % 5 == 0 && ids.size() > 20)
      w.remove_robot(ids[rng.below(static_cast<std::uint32_t>(ids.size()))]);
    if (w.tick() % 4 == 0) {
      const Vec2 at{border_x_ + (rng.uniform() - 0.5) * 0.6, (rng.uniform() - 0.5) * 3.0};
      w.add_robot("epuck", rng.uniform() < 0.5 ? "walk" : "script", at, rng.uniform() * 6, "added");
    }
    if (!ids.empty() && w.tick() % 7 == 0)
      w.set_robot_tag(ids[rng.below(static_cast<std::uint32_t>(ids.size()))],
                      "t" + std::to_string(w.tick()));
    w.set_status("robots " + std::to_string(w.robots().size()));
  }
};

/// The same stirring in the per-process form (LoopFunctions::per_process): each process draws
/// for the robots it moves (by robot id and tick, so the draws do not depend on which process
/// makes them): a robot hops across the border, is removed or tagged; the process holding the
/// lowest id adds a robot beside the border every fourth tick; the status counts the robots
/// with a sum over the processes.
class BorderChurnLocal final : public ChurnBase {
 public:
  bool per_process() const override { return true; }
  void pre_step(WorldAccess& w) override {
    for (EntityId id : w.robots()) {
      CounterRng rng(w.seed(), 1000 + id, w.tick(), RandomStream::kLoopFunctions);
      if (rng.uniform() >= 0.02) continue;
      const Vec2 p = w.robot_position(id);
      const double side = p.x < border_x_ ? 1 : -1;
      w.move_robot(id, {border_x_ + side * (0.05 + 0.3 * rng.uniform()), p.y}, rng.uniform() * 6);
    }
  }
  void post_step(WorldAccess& w) override {
    const auto ids = w.robots();
    const std::int64_t robots = w.sum(static_cast<std::int64_t>(ids.size()));
    for (EntityId id : ids) {
      CounterRng rng(w.seed(), 1000 + id, w.tick(), RandomStream::kLoopFunctions);
      const double u = rng.uniform();
      if (robots > 20 && u < 0.005) {
        w.remove_robot(id);
      } else if (u > 0.99) {
        w.set_robot_tag(id, "t" + std::to_string(w.tick()));
      }
    }
    // One robot added by one process: the one holding the lowest id.
    const double lowest = w.min(ids.empty() ? 1e300 : static_cast<double>(ids.front()));
    if (w.tick() % 4 == 0 && !ids.empty() && static_cast<double>(ids.front()) == lowest) {
      CounterRng rng(w.seed(), 2, w.tick(), RandomStream::kLoopFunctions);
      const Vec2 at{border_x_ + (rng.uniform() - 0.5) * 0.6, (rng.uniform() - 0.5) * 3.0};
      w.add_robot("epuck", rng.uniform() < 0.5 ? "walk" : "script", at, rng.uniform() * 6, "added");
    }
    w.set_status("robots " + std::to_string(robots));
  }
};

/// Loop functions that gather the swarm in the west: every tick a fifth of the robots east of
/// x (by id and tick) jump just west of it, so the robots' spread over the domains drifts. In
/// the per-process form (`local`) each process moves the robots it runs, so that a robot may
/// jump from a domain to one far from it (not its domain's neighbour).
class GatherWest final : public ChurnBase {
 public:
  explicit GatherWest(bool local) : local_(local) {}
  bool per_process() const override { return local_; }
  void init(const Params& p, WorldAccess& w) override {
    ChurnBase::init(p, w);
    x_ = p.real("x", 0.0);
  }
  void post_step(WorldAccess& w) override {
    for (EntityId id : w.robots()) {
      const Vec2 at = w.robot_position(id);
      if (at.x <= x_ || (id + static_cast<std::uint64_t>(w.tick())) % 5 != 0) continue;
      CounterRng rng(w.seed(), 3000 + id, w.tick(), RandomStream::kLoopFunctions);
      w.move_robot(id, {x_ - 0.05 - 0.4 * rng.uniform(), at.y}, w.robot_heading(id));
    }
  }

 private:
  bool local_ = false;
  double x_ = 0;
};

/// Registers them as `border_churn`, `border_churn_local`, `gather_west` and
/// `gather_west_local`.
inline void add_border_churn(PluginRegistry& registry) {
  const std::vector<ParamDoc> params = {{"end_at", "integer", "-1", "tick"},
                                        {"border_x", "real", "0", "metres"}};
  registry.add_loop_functions({PluginKind::kLoopFunctions, "border_churn", "test", params},
                              [] { return std::make_unique<BorderChurn>(); });
  registry.add_loop_functions(
      {PluginKind::kLoopFunctions, "border_churn_local", "test (per-process form)", params},
      [] { return std::make_unique<BorderChurnLocal>(); });
  registry.add_loop_functions({PluginKind::kLoopFunctions,
                               "gather_west",
                               "test",
                               {{"end_at", "integer", "-1", "tick"}, {"x", "real", "0", "metres"}}},
                              [] { return std::make_unique<GatherWest>(false); });
  registry.add_loop_functions({PluginKind::kLoopFunctions,
                               "gather_west_local",
                               "test (per-process form)",
                               {{"end_at", "integer", "-1", "tick"}, {"x", "real", "0", "metres"}}},
                              [] { return std::make_unique<GatherWest>(true); });
}

}  // namespace fleetsim::testing
