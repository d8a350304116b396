// The engine's implementation of the SDK's WorldView: what sensors see in the sense phase.
// Built-in parts also reach the engine's own structures (the spatial index, the model)
// through it, which plug-ins cannot.
#pragma once

#include "fleetsim/parts.hpp"
#include "physics/kinematics2d.hpp"
#include "world/world.hpp"

namespace fleetsim {

class EngineWorld final : public WorldView {
 public:
  EngineWorld(const WorldModel& model, WorldState& state, const SpatialIndex& index)
      : model_(&model), state_(&state), index_(&index) {
    arena_min = model.arena_min();
    arena_max = model.arena_max();
  }
  std::size_t robot_count() const override { return state_->robot_count(); }
  EntityId robot_id(std::uint32_t row) const override;
  Vec2 robot_position(std::uint32_t row) const override;
  double robot_heading(std::uint32_t row) const override;
  const KindInfo& robot_kind(std::uint32_t row) const override;
  void* column_data(ColumnHandle column) const override { return state_->robots.data(column); }
  std::uint32_t column_width(ColumnHandle column) const override {
    return state_->robots.desc(column).width;
  }
  void robots_near(Vec2 p, double reach,
                   const std::function<void(std::uint32_t)>& f) const override;
  double cast_ray_obstacles(Vec2 o, Vec2 u, double max_t) const override;
  bool line_blocked(Vec2 a, Vec2 b) const override;

  const WorldModel& model() const { return *model_; }
  WorldState& state() const { return *state_; }
  const SpatialIndex& index() const { return *index_; }

 private:
  const WorldModel* model_;
  WorldState* state_;
  const SpatialIndex* index_;
};

/// The engine's world behind a part context (built-in parts only).
inline const EngineWorld& engine_world(const PartContext& ctx) {
  return static_cast<const EngineWorld&>(*ctx.world);
}

}  // namespace fleetsim
