#include "robots/proximity_sensor.hpp"

#include <cmath>

namespace fleetsim {

namespace {
const ProximityDirections& dir = proximity_directions();  // read once, not per robot
constexpr double kNever = 1e300;

// The kernel: robot at slot `self` of the grid, with pose (p, theta), radius r and range.
void cast_rays(const SpatialIndex& index, std::uint32_t self, Vec2 p, double theta, double r,
               double range, float* out) {
  const double ct = std::cos(theta), st = std::sin(theta);
  // Sensor directions in the world frame, and the nearest hit per ray.
  // (Separate x and y arrays so the ray loop below vectorises.)
  alignas(64) double ux[kProximityCount], uy[kProximityCount];
  alignas(64) double ox[kProximityCount], oy[kProximityCount];
  alignas(64) double best[kProximityCount];
  Vec2 u[kProximityCount], o[kProximityCount];
  for (int k = 0; k < kProximityCount; ++k) {
    u[k] = {ct * dir.cos[k] - st * dir.sin[k], st * dir.cos[k] + ct * dir.sin[k]};
    o[k] = p + u[k] * r;
    ux[k] = u[k].x, uy[k] = u[k].y, ox[k] = o[k].x, oy[k] = o[k].y;
    best[k] = range;
  }
  const RobotGrid& grid = index.robots;
  const double* gx = grid.sorted_x().data();
  const double* gy = grid.sorted_y().data();
  const double* gr = grid.sorted_r().data();
  grid.for_each_near(p, [&](std::uint32_t s) {
    if (s == self) return;
    Vec2 c{gx[s], gy[s]};
    double rj = gr[s];
    Vec2 rel = c - p;
    double reach = r + range + rj;
    double d2 = dot(rel, rel);
    if (d2 > reach * reach) return;
    // The 8 rays against the circle without branches (the compiler vectorises it); the same
    // arithmetic as ray_circle, so the same bits.
    const double rj2 = rj * rj;
#pragma omp simd
    for (int k = 0; k < kProximityCount; ++k) {
      const double mx = ox[k] - c.x, my = oy[k] - c.y;
      const double bk = mx * ux[k] + my * uy[k];
      const double cc = (mx * mx + my * my) - rj2;
      const double disc = bk * bk - cc;
      double t = -bk - std::sqrt(disc >= 0 ? disc : 0.0);
      t = t < 0 ? 0.0 : t;
      // No hit (infinity) when moving away or missing; 0 when the origin is inside; none when
      // behind the origin plane by more than the radius. Selects only: no branches.
      double v = disc >= 0 ? t : kNever;
      v = bk <= 0 ? v : kNever;
      v = cc <= 0 ? 0.0 : v;
      v = -bk < -rj ? kNever : v;
      best[k] = v < best[k] ? v : best[k];
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

}  // namespace

void read_proximity_slot(const WorldModel& model, const WorldState& state,
                         const SpatialIndex& index, std::uint32_t slot, float* out) {
  const std::uint32_t i = index.robots.order()[slot];
  const RobotKind& kind = model.kinds[state.robot_kind[i]];
  if (kind.proximity_range_m <= 0) {
    for (int k = 0; k < kProximityCount; ++k) out[k] = 0;
    return;
  }
  const Vec2 p{index.robots.sorted_x()[slot], index.robots.sorted_y()[slot]};
  cast_rays(index, slot, p, state.theta[i], kind.radius_m, kind.proximity_range_m, out);
}

void read_proximity(const WorldModel& model, const WorldState& state, const SpatialIndex& index,
                    std::size_t i, float* out) {
  const RobotKind& kind = model.kinds[state.robot_kind[i]];
  for (int k = 0; k < kProximityCount; ++k) out[k] = 0;
  if (kind.proximity_range_m <= 0) return;
  // Robot i's own slot (to skip itself): in the cells around it, linear in their population.
  const Vec2 p{state.x[i], state.y[i]};
  const auto& order = index.robots.order();
  std::uint32_t self = kNoIndex;
  index.robots.for_each_near(p, [&](std::uint32_t s) {
    if (order[s] == i) self = s;
  });
  cast_rays(index, self, p, state.theta[i], kind.radius_m, kind.proximity_range_m, out);
}

}  // namespace fleetsim
