#include "robots/light_sensor.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/det_math.hpp"
#include "robots/engine_world.hpp"

namespace fleetsim {

namespace {

constexpr double kSpacing = kPi / 12;  ///< 15 degrees between readings
constexpr double kMaxScaledDistance = 2.5;

/// Reading k's angle, radians CCW from the heading, in (-pi, pi].
double reading_angle(int k) {
  return wrap_angle(kSpacing / 2 + k * kSpacing);
}

const std::array<float, kLightReadings>& reading_angles() {
  static const std::array<float, kLightReadings> a = [] {
    std::array<float, kLightReadings> v{};
    for (int k = 0; k < kLightReadings; ++k) v[k] = static_cast<float>(reading_angle(k));
    return v;
  }();
  return a;
}

/// Adds one unoccluded light's contribution to the 24 readings (the robot on the floor at p).
void add_light(const Light& l, Vec2 p, double theta, double* sum) {
  const double dx = (l.position.x - p.x) / l.intensity, dy = (l.position.y - p.y) / l.intensity;
  const double dz = l.z_m / l.intensity;
  const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
  if (d > kMaxScaledDistance) return;
  const double f = std::exp(-2 * d);
  // The light's bearing from the heading (not wrapped, as the index below expects).
  const double bearing = std::atan2(dy, dx) - theta;
  const double idx = (bearing - kSpacing / 2) / kSpacing;
  const int nearest = static_cast<int>(idx > 0 ? idx + 0.5 : idx - 0.5);
  for (int off = -6; off <= 6; ++off) {
    int k = (nearest + off) % kLightReadings;
    if (k < 0) k += kLightReadings;
    const double a = std::abs(wrap_angle(bearing - reading_angle(k)));
    if (a <= kPi / 2) sum[k] += f * (1 - 2 * a / kPi);
  }
}

/// The height at which the segment from the floor at p to light l enters a body of radius r
/// centred at c, or a negative value when it does not meet it before the light (metres).
/// `dist` is the horizontal distance to the light, (ux, uy) its unit direction.
double entry_height(Vec2 p, double ux, double uy, double dist, double z_light, Vec2 c, double r) {
  const double rx = c.x - p.x, ry = c.y - p.y;
  const double a = rx * ux + ry * uy;  // the closest approach along the ray
  const double q = rx * rx + ry * ry - a * a;
  if (q > r * r) return -1;
  const double s = a - std::sqrt(r * r - q);  // where the ray enters the circle
  if (a + std::sqrt(r * r - q) < 0 || s > dist) return -1;
  return z_light * std::max(0.0, s) / dist;
}

class FootbotLightSensor final : public BatchedSensor<FootbotLightSensor> {
 public:
  void setup(PartSetup& setup) override {
    noise_ = setup.params().real("noise_level", 0);
    if (noise_ < 0)
      setup.error("sensor '" + setup.name() + "': noise_level must be >= 0 (ARGoS's light noise)");
    column_ = setup.column({setup.name(), ColumnType::kF32, kLightReadings, true, false,
                            "light readings in [0, 1], one per 15 degrees from 7.5",
                            "footbot_light", false});
  }
  void describe(SensorView& out) const override { out.angles = reading_angles(); }

  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const EngineWorld& w = engine_world(ctx);
    const WorldModel& m = w.model();
    WorldState& s = w.state();
    float* values = static_cast<float*>(s.robots.data(column_)) +
                    std::size_t{robot.row} * s.robots.desc(column_).width;
    double sum[kLightReadings] = {};
    const Vec2 p{s.x()[robot.row], s.y()[robot.row]};
    const double theta = s.theta()[robot.row];
    for (const Light& l : m.lights)
      if (in_range(l, p) && !occluded(w, robot.slot, p, l)) add_light(l, p, theta, sum);
    if (noise_ > 0) {
      CounterRng rng(ctx.seed, robot.id, ctx.tick, RandomStream::kLightSensorNoise);
      for (double& v : sum) v += rng.uniform(-noise_, noise_);
    }
    for (int k = 0; k < kLightReadings; ++k)
      values[k] = static_cast<float>(std::clamp(sum[k], 0.0, 1.0));
    out.values = {values, kLightReadings};
    out.angles = reading_angles();
  }

 private:
  /// A light of positive intensity near enough to give a reading (before occlusion).
  static bool in_range(const Light& l, Vec2 p) {
    if (!(l.intensity > 0)) return false;
    const double dx = l.position.x - p.x, dy = l.position.y - p.y;
    const double reach = kMaxScaledDistance * l.intensity;
    return dx * dx + dy * dy + l.z_m * l.z_m <= reach * reach;
  }

  /// `self`: the sensing robot's grid slot.
  bool occluded(const EngineWorld& w, std::uint32_t self, Vec2 p, const Light& l) const {
    const double dx = l.position.x - p.x, dy = l.position.y - p.y;
    const double dist = std::sqrt(dx * dx + dy * dy);
    if (dist == 0) return false;  // straight above: nothing stands between
    const double ux = dx / dist, uy = dy / dist;
    // Static obstacles: blocked where the ray crosses one no higher than the obstacle.
    const WorldModel& m = w.model();
    const auto& segs = w.index().segments.segments();
    const bool walled = w.index().segments.any_crossing(p, l.position, [&](std::uint32_t k) {
      const double s = ray_segment(p, {ux, uy}, dist, segs[k]);
      const double h = k < m.segment_heights.size() ? m.segment_heights[k]
                                                    : std::numeric_limits<double>::infinity();
      return s >= 0 && l.z_m * s / dist <= h;
    });
    if (walled) return true;
    // Bodies that may block: those whose outline the ray enters below their height, so within
    // the part of the ray lower than the tallest body.
    const double rmax = m.max_radius_m();
    const double hmax = m.tallest_ground_body_m();
    const double span = l.z_m > 0 ? std::min(dist, hmax * dist / l.z_m) : dist;
    // The bodies near that part of the ray: a corridor of discs along it, nearest first (a
    // body next to the robot is the likeliest to block): a body that meets the ray has its
    // centre within rmax of it, so within L / 2 + rmax of a disc's centre.
    const WorldState& s = w.state();
    const RobotGrid& grid = w.index().robots;
    const double* gx = grid.sorted_x().data();
    const double* gy = grid.sorted_y().data();
    const std::uint32_t* order = grid.order().data();
    // (At most 4096 discs: a light kilometres away is looked for in coarser steps.)
    const double width = std::max(rmax, 1e-3);
    const int discs = static_cast<int>(std::clamp(std::ceil(span / (2 * width)), 1.0, 4096.0));
    const double step = span / discs;
    bool blocked = false;
    for (int d = 0; d < discs && !blocked; ++d) {
      const Vec2 c{p.x + ux * (d + 0.5) * step, p.y + uy * (d + 0.5) * step};
      grid.for_each_within(c, step / 2 + width, [&](std::uint32_t slot) {
        if (blocked || slot == self) return;
        const RobotKind& k = m.kinds[s.robot_kind()[order[slot]]];
        if (k.flies) return;
        const double h = entry_height(p, ux, uy, dist, l.z_m, {gx[slot], gy[slot]}, k.radius_m);
        blocked = h >= 0 && h <= k.height_m;
      });
    }
    return blocked;
  }

  double noise_ = 0;
  ColumnHandle column_ = kNoColumn;
};

}  // namespace

double light_occlusion_reach_m(const WorldModel& model) {
  const double hmax = model.tallest_ground_body_m();
  double reach = 0;
  for (const Light& l : model.lights) {
    // Farthest (horizontally) a light still gives a reading from.
    const double d3 = kMaxScaledDistance * l.intensity;
    if (l.intensity <= 0 || l.z_m > d3) continue;
    const double dist = std::sqrt(d3 * d3 - l.z_m * l.z_m);
    reach = std::max(reach, l.z_m > 0 ? std::min(dist, hmax * dist / l.z_m) : dist);
  }
  return reach > 0 ? reach + 2 * model.max_radius_m() : 0;
}

std::unique_ptr<Sensor> make_footbot_light_sensor() {
  return std::make_unique<FootbotLightSensor>();
}

}  // namespace fleetsim
