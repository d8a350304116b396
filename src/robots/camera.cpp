#include "robots/camera.hpp"

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
    enabled_ = setup.column({setup.name() + "_enabled", ColumnType::kU8, 1, true, false,
                             "1 when the camera is enabled (0 at first, as in ARGoS)",
                             kColoredBlobOmnidirectionalCamera});
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
    sc.near.clear();

    // Robots with LEDs whose body comes within range (any of its LEDs may then be).
    const RobotGrid& grid = w.index().robots;
    const double* gx = grid.sorted_x().data();
    const double* gy = grid.sorted_y().data();
    const std::uint32_t* order = grid.order().data();
    const std::uint16_t* kind = w.state().robot_kind().data();
    const Vec2 p{gx[robot.slot], gy[robot.slot]};
    grid.for_each_within(p, range_ + max_radius_, [&](std::uint32_t s) {
      const double dx = gx[s] - p.x, dy = gy[s] - p.y;
      const std::uint32_t row = order[s];
      const KindLeds& k = kinds_[kind[row]];
      if (k.parts.empty() || s == robot.slot) return;
      const double reach = range_ + k.radius_m;
      if (dx * dx + dy * dy > reach * reach) return;
      sc.near.push_back({row, dx, dy});
    });
    // The documented order: by owner id (rows are sorted by id), then LED index.
    std::sort(sc.near.begin(), sc.near.end(),
              [](const Near& a, const Near& b) { return a.row < b.row; });

    const auto& state = w.state();
    const double theta = state.theta()[robot.row];
    const double c = std::cos(theta), sn = std::sin(theta);
    for (const Near& n : sc.near) {
      const KindLeds& k = kinds_[kind[n.row]];
      const double tj = state.theta()[n.row];
      const double cj = std::cos(tj), sj = std::sin(tj);
      for (const LedPart& part : k.parts) {
        const std::size_t width = state.robots.desc(part.column).width;
        const Color* colors = w.column<Color>(part.column) + n.row * width;
        for (std::uint32_t i = 0; i < part.count; ++i) {
          const Color col = colors[i];
          if (col.r == 0 && col.g == 0 && col.b == 0) continue;
          // The LED relative to this robot's centre, world frame.
          double rx = n.dx, ry = n.dy;
          if (i < part.ring_cos.size()) {
            rx += k.radius_m * (cj * part.ring_cos[i] - sj * part.ring_sin[i]);
            ry += k.radius_m * (sj * part.ring_cos[i] + cj * part.ring_sin[i]);
          }
          const double d2 = rx * rx + ry * ry;
          if (d2 > range2_) continue;
          if (blocked_ && w.line_blocked(p, {p.x + rx, p.y + ry})) continue;
          const double lx = c * rx + sn * ry, ly = c * ry - sn * rx;
          sc.blobs.push_back(
              {col, static_cast<float>(std::sqrt(d2)), static_cast<float>(frame_bearing(lx, ly))});
        }
      }
    }
    out.blobs = sc.blobs;
  }

 private:
  /// One `leds` part of a kind: its visible column and LED layout.
  struct LedPart {
    ColumnHandle column = kNoColumn;
    std::uint32_t count = 0;
    std::vector<double> ring_cos, ring_sin;  ///< the ring LEDs' directions (count - 1, or none)
  };
  struct KindLeds {
    std::vector<LedPart> parts;
    double radius_m = 0;
  };
  /// Every kind's LEDs, read once from the model (known only once the run is assembled).
  void find_leds(const EngineWorld& w) {
    const WorldModel& model = w.model();
    kinds_.resize(model.kinds.size());
    for (std::size_t k = 0; k < model.kinds.size(); ++k) {
      KindLeds& kl = kinds_[k];
      kl.radius_m = model.kinds[k].radius_m;
      for (const PartDecl& a : model.kinds[k].actuators) {
        if (!provides(a, "leds")) continue;
        LedPart part;
        part.column = w.state().robots.find(a.name);
        if (part.column == kNoColumn) continue;
        const auto count = a.params.integer("count", 1);
        part.count = static_cast<std::uint32_t>(
            std::clamp<std::int64_t>(count, 0, w.state().robots.desc(part.column).width));
        if (part.count > 1)
          for (int i = 0; i + 1 < static_cast<int>(part.count); ++i) {
            const double a_i = led_ring_angle(i, static_cast<int>(part.count));
            part.ring_cos.push_back(std::cos(a_i));
            part.ring_sin.push_back(std::sin(a_i));
          }
        kl.parts.push_back(std::move(part));
      }
      if (!kl.parts.empty()) max_radius_ = std::max(max_radius_, kl.radius_m);
    }
  }

  /// A robot with LEDs near enough: its row and position relative to the camera (world frame).
  struct Near {
    std::uint32_t row;
    double dx, dy;
  };
  /// One worker's lists: valid until that worker senses its next robot.
  struct Scratch {
    std::vector<Near> near;
    std::vector<Blob> blobs;
  };

  double range_ = 3, range2_ = 9, max_radius_ = 0;
  bool blocked_ = false;
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
