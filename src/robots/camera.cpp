#include "robots/camera.hpp"
#include "core/det_math.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "fleetsim/controller.hpp"
#include "robots/engine_world.hpp"
#include "robots/part_geometry.hpp"

namespace fleetsim {

double led_ring_angle(int i, int count) {
  return wrap_angle((static_cast<double>(i) + 0.5) * 2 * kPi / static_cast<double>(count - 1));
}

namespace {

class ColoredBlobOmnidirectionalCamera final : public Sensor {
 public:
  void setup(PartSetup& setup) override {
    const Params& p = setup.params();
    range_ = p.real("range", kCameraDefaultRangeM);
    if (!(range_ >= 0) || !std::isfinite(range_))
      setup.error("sensor '" + setup.name() + "': range must be >= 0 (metres)");
    range2_ = range_ * range_;
    blocked_ = p.boolean("blocked_by_obstacles", false);
    const std::string field = p.text("field", "disc");
    if (field == "square") {
      square_ = true;
    } else if (field != "disc") {
      setup.error("sensor '" + setup.name() + "': field=\"" + field +
                  "\" is not a camera field (expected disc or square)");
    }
    // The horizontal distance within which an LED can be seen: the square's corner.
    reach_ = square_ ? range_ * std::sqrt(2.0) : range_;
    bodies_ = p.boolean("blocked_by_bodies", false);
    camera_height_ = p.real("camera_height", 0.288699733);
    if (!(camera_height_ > 0) || !std::isfinite(camera_height_))
      setup.error("sensor '" + setup.name() + "': camera_height must be > 0 (metres)");
    enabled_ = setup.column({setup.name() + "_enabled", ColumnType::kU8, 1, true, false,
                             "1 when the camera is enabled (0 at first, as in ARGoS)",
                             kColoredBlobOmnidirectionalCamera, false});
    scratch_.resize(static_cast<std::size_t>(std::max(1, setup.workers())));
  }

  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const EngineWorld& w = engine_world(ctx);
    std::uint8_t* enabled = static_cast<std::uint8_t*>(w.state().robots.data(enabled_)) + robot.row;
    // The column's bytes hold bools (0 or 1) that the controller writes through this pointer.
    out.enabled = reinterpret_cast<bool*>(enabled);
    out.scalar = static_cast<float>(range_);
    Scratch& sc = scratch_[static_cast<std::size_t>(ctx.worker)];
    sc.blobs.clear();
    out.blobs = {};
    if (*enabled == 0) return;
    std::call_once(kinds_once_, [&] { find_leds(w); });

    // 1. Robots with LEDs whose body comes within range (any of its LEDs may then be), as
    //    id << 32 | grid slot, sorted by id: the documented order is by owner id, then LED
    //    index.
    const RobotGrid& grid = w.index().robots;
    const double* gx = grid.sorted_x().data();
    const double* gy = grid.sorted_y().data();
    const std::uint32_t* order = grid.order().data();
    const std::uint16_t* kind = w.state().robot_kind().data();
    const EntityId* ids = w.state().robot_id().data();
    const Vec2 p{gx[robot.slot], gy[robot.slot]};
    sc.near.clear();
    sc.bodies.clear();
    grid.for_each_within(p, reach_ + max_body_radius_, [&](std::uint32_t s) {
      const double dx = gx[s] - p.x, dy = gy[s] - p.y;
      const std::uint32_t row = order[s];
      if (s == robot.slot) return;
      const KindLeds& k = kinds_[kind[row]];
      // Bodies that may hide an LED (ground bodies: flyers never do), kept by slot.
      if (bodies_ && !k.flies) {
        const double reach = reach_ + k.radius_m;
        if (dx * dx + dy * dy <= reach * reach)
          sc.bodies.push_back({dx, dy, k.radius_m, k.radius_m * k.radius_m, k.height_m, s});
      }
      if (k.parts.empty()) return;
      const double reach = reach_ + k.radius_m;
      if (dx * dx + dy * dy > reach * reach) return;
      // Every LED of the owner lies within its radius of its centre: an owner whose disc is
      // outside the field (by a margin far above rounding) has none in it. Left out without
      // reading its LEDs; the same answer as testing each (the field's corners are beyond
      // `reach`, so a square leaves out about a third of the owners within reach).
      const double spread = k.radius_m * (1 + 1e-9) + 1e-9 * (1 + range_);
      if (square_ ? std::abs(dx) - spread >= range_ || std::abs(dy) - spread >= range_
                  : dx * dx + dy * dy > (range_ + spread) * (range_ + spread))
        return;
      sc.near.push_back(std::uint64_t{ids[row]} << 32 | s);
    });
    sort_by_row(sc.near, sc.rows, sc.sorted);

    // 2. Their lit LEDs within range, relative to this robot's centre (world frame). The
    //    walls an LED's line may cross are found once (most robots have none near).
    const SegmentGrid& walls = w.index().segments;
    if (blocked_) walls.near_point(p, reach_, sc.walls);
    const bool walled = blocked_ && !sc.walls.empty();
    const WorldState& state = w.state();
    const double* theta = state.theta().data();
    sc.rx.clear();
    sc.ry.clear();
    sc.colors.clear();
    for (const std::uint64_t item : sc.near) {
      const auto s = static_cast<std::uint32_t>(item);
      const std::uint32_t row = order[s];
      const double dx = gx[s] - p.x, dy = gy[s] - p.y;
      const KindLeds& k = kinds_[kind[row]];
      if (bodies_) bodies_near_line(sc, dx, dy, k.radius_m, s);
      double cj = 0, sj = 0;
      bool turned = false;  // the owner's heading is needed for ring LEDs only
      for (const LedPart& part : k.parts) {
        const Color* colors = static_cast<const Color*>(state.robots.data(part.column)) +
                              std::size_t{row} * part.width;
        for (std::uint32_t i = 0; i < part.count; ++i) {
          const Color col = colors[i];
          if ((col.r | col.g | col.b) == 0) continue;
          double rx = dx, ry = dy;
          if (i < part.ring_cos.size()) {
            if (!turned) {
              det_sincos(theta[row], sj, cj);
              turned = true;
            }
            rx += k.radius_m * (cj * part.ring_cos[i] - sj * part.ring_sin[i]);
            ry += k.radius_m * (sj * part.ring_cos[i] + cj * part.ring_sin[i]);
          }
          if (square_ ? std::abs(rx) >= range_ || std::abs(ry) >= range_
                      : rx * rx + ry * ry > range2_)
            continue;
          if (walled) {
            const Vec2 q{p.x + rx, p.y + ry};
            if (walls.crosses_any(p, q, sc.walls) && w.line_blocked(p, q)) continue;
          }
          // LED heights: the foot-bot's in ARGoS (ring 0.085 m, beacon 0.1742 m, of a body
          // 0.1469 m high), in proportion to the owner's height.
          const double led_height =
              k.height_m *
              (i < part.ring_cos.size() ? 0.085 / 0.146899733 : 0.174249733 / 0.146899733);
          if (bodies_ && hidden_by_body(sc, rx, ry, led_height)) continue;
          sc.rx.push_back(rx);
          sc.ry.push_back(ry);
          sc.colors.push_back(col);
        }
      }
    }

    // 3. Distances and bearings in this robot's frame (bearings on vectors).
    const std::size_t m = sc.colors.size();
    double c, sn;
    det_sincos(theta[robot.row], sn, c);
    sc.bearing.resize(m);
    frame_bearings(m, sc.rx.data(), sc.ry.data(), c, sn, sc.bearing.data());
    sc.blobs.resize(m);
    for (std::size_t k = 0; k < m; ++k)
      sc.blobs[k] = {sc.colors[k],
                     static_cast<float>(std::sqrt(sc.rx[k] * sc.rx[k] + sc.ry[k] * sc.ry[k])),
                     static_cast<float>(sc.bearing[k])};
    out.blobs = sc.blobs;
  }

 private:
  /// One `leds` part of a kind: its visible column and LED layout.
  struct LedPart {
    ColumnHandle column = kNoColumn;
    std::size_t width = 0;  ///< the column's (final once the run is assembled)
    std::uint32_t count = 0;
    std::vector<double> ring_cos, ring_sin;  ///< the ring LEDs' directions (count - 1, or none)
  };
  struct KindLeds {
    std::vector<LedPart> parts;
    double radius_m = 0, height_m = 0;
    bool flies = false;
  };

  struct Scratch;

  /// A ground body that may hide an LED: its offset from the camera's foot, radius, squared
  /// radius, height and grid slot.
  struct Body {
    double cx, cy, r, r2, height;
    std::uint32_t slot;
  };

  /// The bodies (`sc.bodies`, the owner's aside) that may hide one of the LEDs of the owner at
  /// (ox, oy) of radius `ro`, into `sc.near_line`. Every LED of the owner lies within `ro` of
  /// its centre, so the line from the camera's foot to any of them stays within `ro` of the
  /// segment to the centre: a body can meet that line only if its centre is within r + ro of
  /// the segment. A margin far above rounding keeps every body the exact test below could
  /// find, so the answer is the same as testing them all; this only skips bodies off the way.
  void bodies_near_line(Scratch& sc, double ox, double oy, double ro, std::uint32_t owner) const {
    sc.near_line.clear();
    const double o2 = ox * ox + oy * oy;
    const double margin = 1e-6 * (1 + reach_);
    for (const Body& b : sc.bodies) {
      if (b.slot == owner) continue;
      double t = o2 > 0 ? (b.cx * ox + b.cy * oy) / o2 : 0.0;
      t = std::clamp(t, 0.0, 1.0);
      const double ex = b.cx - t * ox, ey = b.cy - t * oy;
      const double reach = b.r + ro + margin;
      if (ex * ex + ey * ey <= reach * reach)
        sc.near_line.push_back(static_cast<std::uint32_t>(&b - sc.bodies.data()));
    }
  }

  /// ARGoS's occlusion check, in fleetsim's geometry: the line from the camera (camera_height
  /// above the sensing robot's centre) down to an LED (at `led_height`, offset (rx, ry) from the
  /// camera's foot) is hidden by a body (not the sensing robot's, not the LED's owner's: the
  /// bodies `bodies_near_line` kept for the owner) when the line passes through the body's
  /// circle at a height no greater than the body's top. The line descends, so its lowest point
  /// in a circle is where it leaves the circle (or the LED, if that comes first).
  bool hidden_by_body(const Scratch& sc, double rx, double ry, double led_height) const {
    const double len2 = rx * rx + ry * ry;
    if (!(len2 > 0)) return false;
    for (const std::uint32_t j : sc.near_line) {
      const Body& b = sc.bodies[j];
      const double cx = b.cx, cy = b.cy;
      // Where the line (t in [0, 1] from the camera's foot to the LED) meets the circle.
      const double along = (cx * rx + cy * ry) / len2;
      const double off2 = cx * cx + cy * cy - along * along * len2;
      const double r2 = b.r2;
      if (off2 >= r2) continue;
      const double half = std::sqrt((r2 - off2) / len2);
      const double t0 = along - half, t1 = std::min(along + half, 1.0);
      if (t1 < 0 || t0 > 1) continue;
      const double z = camera_height_ + (led_height - camera_height_) * t1;
      if (z <= b.height) return true;
    }
    return false;
  }
  /// Every kind's LEDs, read once from the model (known only once the run is assembled).
  void find_leds(const EngineWorld& w) {
    const WorldModel& model = w.model();
    kinds_.resize(model.kinds.size());
    for (std::size_t k = 0; k < model.kinds.size(); ++k) {
      KindLeds& kl = kinds_[k];
      kl.radius_m = model.kinds[k].radius_m;
      kl.height_m = model.kinds[k].height_m;
      kl.flies = model.kinds[k].flies;
      if (model.kinds[k].in_run && !kl.flies)
        max_body_radius_ = std::max(max_body_radius_, kl.radius_m);
      for (const PartDecl& a : model.kinds[k].actuators) {
        if (!provides(a, "leds")) continue;
        LedPart part;
        part.column = w.state().robots.find(a.name);
        if (part.column == kNoColumn) continue;
        part.width = w.state().robots.desc(part.column).width;
        const auto count = a.params.integer("count", 1);
        part.count = static_cast<std::uint32_t>(
            std::clamp<std::int64_t>(count, 0, w.state().robots.desc(part.column).width));
        if (part.count > 1)
          for (int i = 0; i + 1 < static_cast<int>(part.count); ++i) {
            const double a_i = led_ring_angle(i, static_cast<int>(part.count));
            double s_i, c_i;
            det_sincos(a_i, s_i, c_i);
            part.ring_cos.push_back(c_i);
            part.ring_sin.push_back(s_i);
          }
        kl.parts.push_back(std::move(part));
      }
      if (!kl.parts.empty()) max_body_radius_ = std::max(max_body_radius_, kl.radius_m);
    }
  }

  /// One worker's lists: valid until that worker senses its next robot.
  struct Scratch {
    std::vector<std::uint64_t> near;       ///< robots with LEDs in reach: row << 32 | grid slot
    std::vector<Body> bodies;              ///< blocked_by_bodies: the bodies in reach
    std::vector<std::uint32_t> near_line;  ///< those that may hide the current owner's LEDs
    std::vector<std::uint32_t> rows;       ///< sorting scratch
    std::vector<std::uint64_t> sorted;
    std::vector<double> rx, ry, bearing;  ///< per blob: offset (world frame), bearing
    std::vector<Color> colors;
    std::vector<Blob> blobs;
    std::vector<std::uint32_t> walls;  ///< blocked_by_obstacles: the segments within reach
  };

  double range_ = 3, range2_ = 9, reach_ = 3;
  double max_body_radius_ =
      0;  ///< the largest radius of a kind with LEDs or (blocked_by_bodies) a body
  double camera_height_ = 0.288699733;
  bool blocked_ = false, square_ = false, bodies_ = false;
  ColumnHandle enabled_ = kNoColumn;
  std::vector<Scratch> scratch_;
  std::once_flag kinds_once_;
  std::vector<KindLeds> kinds_;
};

}  // namespace

std::unique_ptr<Sensor> make_colored_blob_omnidirectional_camera() {
  return std::make_unique<ColoredBlobOmnidirectionalCamera>();
}

}  // namespace fleetsim
