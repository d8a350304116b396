#include "robots/engine_world.hpp"

namespace fleetsim {

EntityId EngineWorld::robot_id(std::uint32_t row) const { return state_->robot_id()[row]; }

Vec2 EngineWorld::robot_position(std::uint32_t row) const {
  return {state_->x()[row], state_->y()[row]};
}

double EngineWorld::robot_heading(std::uint32_t row) const { return state_->theta()[row]; }

const KindInfo& EngineWorld::robot_kind(std::uint32_t row) const {
  return model_->kinds[state_->robot_kind()[row]];
}

void EngineWorld::robots_near(Vec2 p, double reach,
                              const std::function<void(std::uint32_t)>& f) const {
  const auto& order = index_->robots.order();
  index_->robots.for_each_within(p, reach, [&](std::uint32_t slot) { f(order[slot]); });
}

double EngineWorld::cast_ray_obstacles(Vec2 o, Vec2 u, double max_t) const {
  // The segments near the ray's origin and end cover rays up to a cell long; longer rays
  // test every segment the line's cells list.
  double best = max_t;
  const auto& segs = index_->segments.segments();
  if (max_t <= index_->interaction_m) {
    for (Vec2 p : {o, o + u * max_t})
      for (std::uint32_t si : index_->segments.near(p)) {
        double t = ray_segment(o, u, best, segs[si]);
        if (t >= 0 && t < best) best = t;
      }
    return best;
  }
  for (const Segment& s : segs) {
    double t = ray_segment(o, u, best, s);
    if (t >= 0 && t < best) best = t;
  }
  return best;
}

bool EngineWorld::line_blocked(Vec2 a, Vec2 b) const { return index_->segments.blocks(a, b); }

}  // namespace fleetsim
