#include "robots/distance_scanner.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/det_math.hpp"
#include "robots/engine_world.hpp"
#include "robots/rotating_motor.hpp"

namespace fleetsim {
namespace {

/// The scanner's state column, written by the actuator, read by the sensor.
constexpr const char* kScannerStateColumn = "footbot_distance_scanner_rotation";

/// ARGoS's modes (`footbot_distance_scanner_equipped_entity.h`), as the command's first value.
enum ScannerMode : int { kScannerOff = 0, kScannerPosition = 1, kScannerSpeed = 2 };

// ARGoS's geometry (footbot_distance_scanner_rotzonly_sensor.cpp).
constexpr double kRayStart = 0.085036758;  ///< the foot-bot's radius, metres from its centre
constexpr double kShortLength = 0.26, kLongLength = 1.42;  ///< metres from the ray's start
constexpr double kShortMin = 0.0, kLongMin = 0.12;         ///< nearer reads -1
constexpr double kElevation = 0.123199866;                 ///< metres above the floor
/// Readings per ray: one in position control, six in speed control.
constexpr int kSweep = 6;
constexpr int kMaxReadings = 4 * kSweep;
/// The sensor's column: [0] the count of short-range readings, then kMaxReadings readings,
/// then their angles.
constexpr std::uint32_t kSensorWidth = 1 + 2 * kMaxReadings;

/// [0, 2 pi), as ARGoS's CRadians::UnsignedNormalize.
double unsigned_angle(double a) {
  a = std::fmod(a, 2 * kPi);
  return a < 0 ? a + 2 * kPi : a;
}

class ScannerActuator final : public RotatingMotor<ScannerActuator> {
 public:
  void setup(PartSetup& setup) override {
    declare(setup, "footbot_distance_scanner",
            "distance scanner command: mode (0 off, 1 position, 2 speed), angle (rad), speed "
            "(rad/s)",
            kScannerStateColumn, 3,
            "distance scanner: mode applied, rotation before and after the last act phase "
            "(rad, relative to the heading, in [0, 2 pi))");
  }
  /// st: the mode applied, the rotation before and after this act phase.
  void turn(double dt, int mode, const double* c, double* st) const {
    st[0] = mode;
    st[1] = st[2];
    if (mode == kScannerPosition && std::isfinite(c[1]))
      st[2] = unsigned_angle(c[1]);
    else if (mode == kScannerSpeed && std::isfinite(c[2]) && c[2] != 0)
      st[2] = unsigned_angle(st[2] + c[2] * dt);
  }
};

class ScannerSensor final : public BatchedSensor<ScannerSensor> {
 public:
  void setup(PartSetup& setup) override {
    column_ = setup.column({setup.name(), ColumnType::kF32, kSensorWidth, true, false,
                            "distance scanner readings: short-range count, 24 readings (m, -1 "
                            "too near, -2 nothing), 24 angles (rad)",
                            "footbot_distance_scanner", false});
    z_ = setup.find_column("z");
    near_.resize(static_cast<std::size_t>(setup.workers()));
  }
  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const EngineWorld& world = engine_world(ctx);
    // The actuator's column (set up after the sensors) and the largest body, at the first
    // sense: a kind without the actuator has its scanner off, as ARGoS's.
    std::call_once(resolved_, [&] {
      state_ = world.state().robots.find(kScannerStateColumn);
      for (const RobotKind& k : world.model().kinds)
        if (k.in_run) max_radius_ = std::max(max_radius_, k.radius_m);
    });
    float* row =
        world.column<float>(column_) + std::size_t{robot.row} * world.column_width(column_);
    std::size_t shorts = 0, longs = 0;
    if (state_ != kNoColumn) {
      const double* st = world.column<const double>(state_) + 3 * std::size_t{robot.row};
      const int mode = static_cast<int>(st[0]);
      if (mode == kScannerPosition || mode == kScannerSpeed)
        scan(ctx, robot, mode == kScannerSpeed ? st[1] : st[2], mode == kScannerSpeed, st[2], row,
             shorts, longs);
    }
    row[0] = static_cast<float>(shorts);
    out.values = {row + 1, shorts + longs};
    out.angles = {row + 1 + kMaxReadings, shorts + longs};
    out.scalar = static_cast<float>(shorts);
  }

 private:
  struct Reading {
    double angle;
    float value;
  };

  /// Casts the rays from `start` (and, sweeping, over the angle to `end`); writes the readings,
  /// short then long, each sorted by angle, one per angle (the last cast wins, as ARGoS's map).
  void scan(const PartContext& ctx, RobotRef robot, double start, bool sweep, double end,
            float* row, std::size_t& shorts, std::size_t& longs) {
    const EngineWorld& world = engine_world(ctx);
    const Vec2 c = world.robot_position(robot.row);
    const double heading = world.robot_heading(robot.row);
    // The bodies the long rays may reach, by row (robots_near's order depends on the grid).
    std::vector<std::uint32_t>& near = near_[static_cast<std::size_t>(ctx.worker)];
    near.clear();
    world.robots_near(c, kRayStart + kLongLength + max_radius_, [&](std::uint32_t j) {
      if (j != robot.row) near.push_back(j);
    });
    std::sort(near.begin(), near.end());
    const double span = sweep ? unsigned_angle(end - start) / kSweep : 0;
    const int casts = sweep ? kSweep : 1;
    Reading short_range[2 * kSweep], long_range[2 * kSweep];
    for (int ray = 0; ray < 4; ++ray) {  // ARGoS's order: short 0, short 2, long 1, long 3
      const bool is_short = ray < 2;
      const double offset = is_short ? (ray == 0 ? 0 : kPi) : (ray == 2 ? kPi / 2 : 3 * kPi / 2);
      for (int k = 0; k < casts; ++k) {
        const double angle = start + offset + k * span;
        const float value = cast(world, near, c, heading + angle, is_short);
        Reading* out = is_short ? short_range : long_range;
        out[(ray % 2) * casts + k] = {wrap_angle(angle), value};
      }
    }
    shorts = keep_by_angle(short_range, 2 * casts, row + 1, row + 1 + kMaxReadings);
    longs = keep_by_angle(long_range, 2 * casts, row + 1 + shorts, row + 1 + kMaxReadings + shorts);
  }

  /// Sorts readings by angle, keeping the last of equal angles; writes them; returns how many.
  static std::size_t keep_by_angle(Reading* r, int n, float* values, float* angles) {
    std::stable_sort(r, r + n,
                     [](const Reading& a, const Reading& b) { return a.angle < b.angle; });
    std::size_t m = 0;
    for (int i = 0; i < n; ++i) {
      if (i + 1 < n && r[i + 1].angle == r[i].angle) continue;  // a later one of this angle
      values[m] = r[i].value;
      angles[m] = static_cast<float>(r[i].angle);
      ++m;
    }
    return m;
  }

  /// One ray from the body's edge along world angle `a`: the reading (metres, -1, -2).
  float cast(const EngineWorld& world, const std::vector<std::uint32_t>& near, Vec2 c, double a,
             bool is_short) const {
    double s, co;
    det_sincos(a, s, co);
    const Vec2 u{co, s};
    const Vec2 o{c.x + kRayStart * co, c.y + kRayStart * s};
    const double length = is_short ? kShortLength : kLongLength;
    double t = world.cast_ray_obstacles(o, u, length);
    const double* z = z_ == kNoColumn ? nullptr : world.column<const double>(z_);
    for (std::uint32_t j : near) {
      const KindInfo& kind = world.robot_kind(j);
      const double bottom = z ? z[j] : 0.0;
      if (bottom > kElevation || bottom + kind.height_m < kElevation) continue;  // under, over
      const Vec2 p = world.robot_position(j);
      const double hit =
          kind.shape == BodyShape::kBox
              ? ray_box(o, u, p, world.robot_heading(j), kind.length_m / 2, kind.width_m / 2)
              : ray_circle(o, u, p, kind.radius_m);
      if (hit >= 0 && hit < t) t = hit;
    }
    if (t >= length) return -2.0f;
    return t > (is_short ? kShortMin : kLongMin) ? static_cast<float>(t) : -1.0f;
  }

  /// Distance along o + t u to a circle, 0 from inside, -1 for none.
  static double ray_circle(Vec2 o, Vec2 u, Vec2 p, double r) {
    const double dx = o.x - p.x, dy = o.y - p.y;
    const double b = dx * u.x + dy * u.y, cc = dx * dx + dy * dy - r * r;
    if (cc <= 0) return 0;
    const double disc = b * b - cc;
    if (b > 0 || disc < 0) return -1;
    return -b - std::sqrt(disc);
  }

  /// Distance along o + t u to an oriented box (half extents hx, hy), 0 from inside, -1 for none.
  static double ray_box(Vec2 o, Vec2 u, Vec2 p, double theta, double hx, double hy) {
    double s, c;
    det_sincos(theta, s, c);
    const double rx = o.x - p.x, ry = o.y - p.y;
    const double ox = c * rx + s * ry, oy = -s * rx + c * ry;
    const double ux = c * u.x + s * u.y, uy = -s * u.x + c * u.y;
    double lo = 0, hi = 1e300;
    for (const auto& [oo, uu, h] : {std::tuple{ox, ux, hx}, std::tuple{oy, uy, hy}}) {
      if (uu == 0) {
        if (oo < -h || oo > h) return -1;
        continue;
      }
      double t0 = (-h - oo) / uu, t1 = (h - oo) / uu;
      if (t0 > t1) std::swap(t0, t1);
      lo = std::max(lo, t0);
      hi = std::min(hi, t1);
      if (lo > hi) return -1;
    }
    return lo;
  }

  ColumnHandle column_ = kNoColumn, z_ = kNoColumn;
  std::once_flag resolved_;
  ColumnHandle state_ = kNoColumn;
  double max_radius_ = 0;
  std::vector<std::vector<std::uint32_t>> near_;  ///< per worker: the bodies within reach
};

}  // namespace

std::unique_ptr<Actuator> make_footbot_distance_scanner_actuator() {
  return std::make_unique<ScannerActuator>();
}
std::unique_ptr<Sensor> make_footbot_distance_scanner_sensor() {
  return std::make_unique<ScannerSensor>();
}

}  // namespace fleetsim
