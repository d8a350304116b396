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

/// Loop functions that stir the world near region borders: every few ticks they move a robot
/// across a border, add one beside a border, remove one, and tag robots; they end the run
/// early when asked. Deterministic (counter-based draws), as loop functions must be.
class BorderChurn final : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess& w) override {
    end_at_ = p.integer("end_at", -1);
    border_x_ = p.real("border_x", 0.0);
  }
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
  bool is_finished(const WorldAccess& w) const override {
    return end_at_ >= 0 && w.tick() >= end_at_;
  }
  // Checkpoints: everything they keep comes from the parameters.
  bool save(std::vector<std::uint8_t>&) const override { return true; }
  void restore(const Params& p, WorldAccess& w, std::span<const std::uint8_t>) override {
    init(p, w);
  }

 private:
  std::int64_t end_at_ = -1;
  double border_x_ = 0;
};

/// Registers them as `border_churn`.
inline void add_border_churn(PluginRegistry& registry) {
  registry.add_loop_functions(
      {PluginKind::kLoopFunctions,
       "border_churn",
       "test",
       {{"end_at", "integer", "-1", "tick"}, {"border_x", "real", "0", "metres"}}},
      [] { return std::make_unique<BorderChurn>(); });
}

}  // namespace fleetsim::testing
