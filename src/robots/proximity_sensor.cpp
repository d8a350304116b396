#include "robots/proximity_sensor.hpp"

#include <cmath>

namespace fleetsim {

namespace {
struct Direction {
  double c[kProximityCount], s[kProximityCount];
  Direction() {
    for (int k = 0; k < kProximityCount; ++k) {
      c[k] = std::cos(kProximityAngles[k]);
      s[k] = std::sin(kProximityAngles[k]);
    }
  }
};
const Direction kDir;
}  // namespace

void read_proximity(const WorldModel& model, const WorldState& state, const SpatialIndex& index,
                    std::size_t i, float* out) {
  const RobotKind& kind = model.kinds[state.robot_kind[i]];
  const double range = kind.proximity_range_m;
  for (int k = 0; k < kProximityCount; ++k) out[k] = 0;
  if (range <= 0) return;
  const Vec2 p{state.x[i], state.y[i]};
  const double r = kind.radius_m;
  const double ct = std::cos(state.theta[i]), st = std::sin(state.theta[i]);
  // Sensor directions in the world frame, and the nearest hit per ray.
  Vec2 u[kProximityCount];
  Vec2 o[kProximityCount];
  double best[kProximityCount];
  for (int k = 0; k < kProximityCount; ++k) {
    u[k] = {ct * kDir.c[k] - st * kDir.s[k], st * kDir.c[k] + ct * kDir.s[k]};
    o[k] = p + u[k] * r;
    best[k] = range;
  }
  const RobotGrid& grid = index.robots;
  const auto& gx = grid.sorted_x();
  const auto& gy = grid.sorted_y();
  const auto& gr = grid.sorted_r();
  const auto& order = grid.order();
  grid.for_each_near(p, [&](std::uint32_t s) {
    if (order[s] == i) return;
    Vec2 c{gx[s], gy[s]};
    double rj = gr[s];
    Vec2 rel = c - p;
    double reach = r + range + rj;
    double d2 = dot(rel, rel);
    if (d2 > reach * reach) return;
    for (int k = 0; k < kProximityCount; ++k) {
      // Cheap reject: the circle is behind the ray's origin plane by more than its radius.
      if (dot(c - o[k], u[k]) < -rj) continue;
      double t = ray_circle(o[k], u[k], best[k], c, rj);
      if (t >= 0 && t < best[k]) best[k] = t;
    }
  });
  const auto& segs = index.segments.segments();
  for (std::uint32_t si : index.segments.near(p)) {
    const Segment& sg = segs[si];
    if (distance_to_segment(p, sg) > r + range) continue;
    for (int k = 0; k < kProximityCount; ++k) {
      double t = ray_segment(o[k], u[k], best[k], sg);
      if (t >= 0 && t < best[k]) best[k] = t;
    }
  }
  for (int k = 0; k < kProximityCount; ++k)
    out[k] = best[k] < range ? static_cast<float>(1.0 - best[k] / range) : 0.0f;
}

}  // namespace fleetsim
