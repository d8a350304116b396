#include "footbot_scene.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "diffusion_scene.hpp"
#include "plugins/builtins.hpp"

namespace fleetsim::bench {

namespace {

std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::atomic<std::uint64_t> g_payload_errors{0};

void put_u32(std::span<std::uint8_t> data, std::size_t at, std::uint32_t v) {
  for (std::size_t b = 0; b < 4 && at + b < data.size(); ++b)
    data[at + b] = static_cast<std::uint8_t>(v >> (8 * b));
}

std::uint32_t get_u32(std::span<const std::uint8_t> data, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t b = 0; b < 4 && at + b < data.size(); ++b)
    v |= static_cast<std::uint32_t>(data[at + b]) << (8 * b);
  return v;
}

class RabDisperse final : public Controller {
 public:
  void init(const Params& p, const ControllerSetup& setup) override {
    spacing_ = p.real("spacing", 1.0);
    speed_ = p.real("speed", 0.2);
    rab_in_ = setup.sensor("range_and_bearing");
    rab_out_ = setup.actuator("range_and_bearing");
    proximity_ = setup.sensor("proximity");
    wheels_ = setup.actuator("differential_drive");
    if (p.boolean("camera", false)) {
      camera_ = setup.sensor("colored_blob_omnidirectional_camera");
      leds_ = setup.actuator("leds");
    }
    scanner_ = setup.find_actuator_type("footbot_distance_scanner");
  }

  void step(RobotIO& io) override {
    // Broadcast who and when; check that what is heard was sent in the previous tick.
    std::span<std::uint8_t> out = io.actuator(rab_out_).data;
    put_u32(out, 0, io.id);
    put_u32(out, 4, static_cast<std::uint32_t>(io.tick));
    const SensorView& rab = io.sensor(rab_in_);
    if (io.tick > 0 && out.size() >= 8)
      for (const RabMessage& m : rab.messages)
        if (get_u32(m.data, 0) != m.sender ||
            get_u32(m.data, 4) != static_cast<std::uint32_t>(io.tick - 1))
          g_payload_errors.fetch_add(1, std::memory_order_relaxed);

    // The nearest robot heard (the first by id on a tie).
    const RabMessage* nearest = nullptr;
    for (const RabMessage& m : rab.messages)
      if (!nearest || m.range_m < nearest->range_m) nearest = &m;

    // The distance scanner, when the kind has one, turns at 30 rpm (its readings unread).
    if (scanner_) {
      std::span<double> scan = io.actuator(*scanner_).values;
      scan[0] = 2;
      scan[2] = M_PI;
    }

    std::span<double> wheels = io.actuator(wheels_).values;
    // Obstacle in the frontal cone (as diffusion): spin away from it.
    const SensorView& prox = io.sensor(proximity_);
    double ox = 0, oy = 0;
    for (std::size_t k = 0; k < prox.values.size(); ++k) {
      ox += prox.values[k] * prox.directions[k].x;
      oy += prox.values[k] * prox.directions[k].y;
    }
    if (ox > 0 && ox * ox + oy * oy > 0.01 && std::abs(oy) < ox) {
      wheels[0] = oy > 0 ? speed_ : -speed_;
      wheels[1] = -wheels[0];
    } else if (nearest && nearest->range_m < spacing_) {
      // Away from the nearest neighbour: turn the other way, harder when it is ahead.
      const double ahead = std::cos(nearest->horizontal_bearing);
      const double turn = (nearest->horizontal_bearing > 0 ? -0.5 : 0.5) * (1 + ahead);
      wheels[0] = speed_ * (1 - turn);
      wheels[1] = speed_ * (1 + turn);
    } else {
      wheels[0] = wheels[1] = speed_;
    }

    if (camera_) {
      const SensorView& cam = io.sensor(*camera_);
      *cam.enabled = true;
      int balance = 0;
      for (const Blob& b : cam.blobs) balance += b.color.r > b.color.b ? 1 : -1;
      std::span<Color> leds = io.actuator(*leds_).colors;
      const Color ring = balance > 0 ? Color{0, 255, 0, 255} : Color{0, 0, 0, 255};
      for (std::size_t i = 0; i + 1 < leds.size(); ++i) leds[i] = ring;
      leds.back() = io.id % 2 == 0 ? Color{255, 0, 0, 255} : Color{0, 0, 255, 255};
    }
  }

 private:
  double spacing_ = 1, speed_ = 0.2;
  std::size_t rab_in_ = 0, rab_out_ = 0, proximity_ = 0, wheels_ = 0;
  std::optional<std::size_t> camera_, leds_, scanner_;
};

}  // namespace

double footbot_arena_side_m(const FootbotSceneOptions& o) {
  return std::sqrt(static_cast<double>(o.robots) / o.density_per_m2);
}

std::uint64_t rab_disperse_payload_errors() {
  return g_payload_errors.load();
}

void register_rab_disperse(PluginRegistry& registry) {
  registry.add_controller(
      {PluginKind::kController,
       "rab_disperse",
       "benchmark: broadcasts id and tick on range-and-bearing, turns away from the nearest "
       "robot it hears within `spacing`, avoids obstacles",
       {{"spacing", "real", "1", "distance below which it turns away from a neighbour, metres"},
        {"speed", "real", "0.2", "wheel speed, m/s"},
        {"camera", "bool", "false", "enable the camera, light the beacon, react to blobs"}}},
      [] { return std::make_unique<RabDisperse>(); }, ControllerScope::kShared);
}

std::string footbot_experiment_xml(const FootbotSceneOptions& o) {
  const double side = footbot_arena_side_m(o);
  std::string x = "<?xml version=\"1.0\"?>\n<fleetsim>\n";
  x += "  <framework ticks_per_second=\"10\" length=\"" + real(o.seconds) + "\" seed=\"" +
       std::to_string(o.seed) + "\" threads=\"" + std::to_string(o.threads) + "\"/>\n";
  const char* kind = "footbot";
  if (o.light) {
    kind = "footbot_lit";  // the built-in foot-bot's parts and the light and ground sensors
    x += "  <kinds><kind name=\"footbot_lit\" base=\"footbot\">\n"
         "    <sensor type=\"proximity\" rays=\"24\" range=\"0.1\"/><sensor type=\"collision\"/>"
         "<sensor type=\"positioning\"/>\n"
         "    <sensor type=\"range_and_bearing\" range=\"3\" data_size=\"10\"/>"
         "<sensor type=\"colored_blob_omnidirectional_camera\" range=\"3\"/>\n"
         "    <sensor type=\"footbot_light\"/><sensor type=\"footbot_motor_ground\"/>"
         "<sensor type=\"footbot_base_ground\"/>\n"
         "    <actuator type=\"differential_drive\" axle_length=\"0.14\" "
         "max_wheel_speed=\"0.3\"/><actuator type=\"leds\" count=\"13\"/>"
         "<actuator type=\"range_and_bearing\" data_size=\"10\"/>\n"
         "  </kind></kinds>\n";
  } else if (o.scanner) {
    kind = "footbot_scan";  // the built-in foot-bot's parts and the distance scanner
    x += "  <kinds><kind name=\"footbot_scan\" base=\"footbot\">\n"
         "    <sensor type=\"proximity\" rays=\"24\" range=\"0.1\" response=\"footbot\"/>"
         "<sensor type=\"collision\"/><sensor type=\"positioning\"/>\n"
         "    <sensor type=\"range_and_bearing\" range=\"3\" data_size=\"10\" "
         "blocked_by_obstacles=\"true\" blocked_by_bodies=\"true\"/>\n"
         "    <sensor type=\"colored_blob_omnidirectional_camera\" range=\"0.7932\" "
         "field=\"square\" blocked_by_obstacles=\"true\" blocked_by_bodies=\"true\"/>\n"
         "    <sensor type=\"footbot_distance_scanner\"/>\n"
         "    <actuator type=\"differential_drive\" axle_length=\"0.14\" "
         "max_wheel_speed=\"0.3\"/><actuator type=\"leds\" count=\"13\"/>"
         "<actuator type=\"range_and_bearing\" data_size=\"10\"/>"
         "<actuator type=\"footbot_distance_scanner\"/>\n"
         "  </kind></kinds>\n";
  }
  if (!o.light && !o.scanner && !o.occlusion) {
    kind = "footbot_open";  // the built-in foot-bot, its messages never blocked
    x += "  <kinds><kind name=\"footbot_open\" base=\"footbot\">\n"
         "    <sensor type=\"proximity\" rays=\"24\" range=\"0.1\" response=\"footbot\"/>"
         "<sensor type=\"collision\"/><sensor type=\"positioning\"/>\n"
         "    <sensor type=\"range_and_bearing\" range=\"3\" data_size=\"10\" "
         "blocked_by_obstacles=\"false\" blocked_by_bodies=\"false\"/>\n"
         "    <sensor type=\"colored_blob_omnidirectional_camera\" range=\"0.7932\" "
         "field=\"square\" blocked_by_obstacles=\"true\" blocked_by_bodies=\"true\"/>\n"
         "    <actuator type=\"differential_drive\" axle_length=\"0.14\" "
         "max_wheel_speed=\"0.3\"/><actuator type=\"leds\" count=\"13\"/>"
         "<actuator type=\"range_and_bearing\" data_size=\"10\"/>\n"
         "  </kind></kinds>\n";
  }
  x += "  <controllers>\n    <controller id=\"c\" type=\"rab_disperse\" camera=\"" +
       std::string(o.camera ? "true" : "false") + "\"/>\n  </controllers>\n";
  x += "  <arena size=\"" + real(side) + "," + real(side) + "\">\n";
  if (o.light) {
    x += "    <floor color=\"128,128,128\"/>\n";
    const int per_side = std::max(1, static_cast<int>(side / 10));
    for (int i = 0; i < per_side; ++i)
      for (int j = 0; j < per_side; ++j)
        x += "    <light position=\"" + real(-side / 2 + side * (i + 0.5) / per_side) + "," +
             real(-side / 2 + side * (j + 0.5) / per_side) +
             "\" height=\"0.5\" intensity=\"2\"/>\n";
  }
  // Uniform placement, stratified in horizontal strips of ~2,500 robots (as bench/diffusion):
  // ids then follow space, so the rows a worker touches stay in cache.
  const double r = 0.085, lo = -side / 2, hi = side / 2;
  const std::int64_t strips = std::max<std::int64_t>(1, o.robots / 2500);
  for (std::int64_t k = 0; k < strips; ++k) {
    const std::int64_t count = (k + 1) * o.robots / strips - k * o.robots / strips;
    const double y0 = k == 0 ? lo : std::max(lo, lo + side * k / strips - r);
    const double y1 = k + 1 == strips ? hi : std::min(hi, lo + side * (k + 1) / strips + r);
    x += "    <distribute count=\"" + std::to_string(count) + "\" kind=\"" + kind +
         "\" controller=\"c\" id_prefix=\"fb" + std::to_string(k) + "_\" region=\"" + real(lo) +
         "," + real(y0) + "," + real(hi) + "," + real(y1) + "\"/>\n";
  }
  x += "  </arena>\n";
  int columns = 1, rows = 1;
  if (o.engines > 1 && engine_grid(o.engines, columns, rows)) {
    auto edge = [&](int k, int parts) {
      return k == 0 ? lo : k == parts ? hi : lo + side * k / parts;
    };
    x += "  <physics>\n";
    for (int rr = 0; rr < rows; ++rr)
      for (int c = 0; c < columns; ++c)
        x += "    <kinematics2d id=\"e" + std::to_string(rr * columns + c) + "\" region=\"" +
             real(edge(c, columns)) + "," + real(edge(rr, rows)) + "," +
             real(edge(c + 1, columns)) + "," + real(edge(rr + 1, rows)) + "\"/>\n";
    x += "  </physics>\n";
  }
  x += "</fleetsim>\n";
  return x;
}

std::optional<Experiment> make_footbot_experiment(const FootbotSceneOptions& o,
                                                  const std::string& directory,
                                                  PluginRegistry& registry, Diagnostics& diags) {
  return parse_experiment(footbot_experiment_xml(o), directory + "/footbot.xml", registry,
                          ExperimentOverrides{}, diags);
}

double mean_neighbours_within(const WorldState& state, double range_m) {
  const std::size_t n = state.robot_count();
  if (n == 0) return 0;
  auto x = state.x();
  auto y = state.y();
  const double x0 = *std::min_element(x.begin(), x.end());
  const double y0 = *std::min_element(y.begin(), y.end());
  const double x1 = *std::max_element(x.begin(), x.end());
  const double y1 = *std::max_element(y.begin(), y.end());
  const auto nx = static_cast<std::size_t>((x1 - x0) / range_m) + 1;
  const auto ny = static_cast<std::size_t>((y1 - y0) / range_m) + 1;
  auto cell = [&](std::size_t i) {
    return static_cast<std::size_t>((y[i] - y0) / range_m) * nx +
           static_cast<std::size_t>((x[i] - x0) / range_m);
  };
  // Counting sort of the robots into cells of side `range_m`.
  std::vector<std::size_t> start(nx * ny + 1, 0), items(n);
  for (std::size_t i = 0; i < n; ++i) ++start[cell(i) + 1];
  for (std::size_t c = 0; c < nx * ny; ++c) start[c + 1] += start[c];
  std::vector<std::size_t> fill(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) items[fill[cell(i)]++] = i;
  std::uint64_t pairs = 0;
  const double r2 = range_m * range_m;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = cell(i), cx = c % nx, cy = c / nx;
    for (std::size_t gy = cy > 0 ? cy - 1 : 0; gy <= std::min(cy + 1, ny - 1); ++gy)
      for (std::size_t gx = cx > 0 ? cx - 1 : 0; gx <= std::min(cx + 1, nx - 1); ++gx)
        for (std::size_t k = start[gy * nx + gx]; k < start[gy * nx + gx + 1]; ++k) {
          const std::size_t j = items[k];
          const double dx = x[j] - x[i], dy = y[j] - y[i];
          if (j != i && dx * dx + dy * dy <= r2) ++pairs;
        }
  }
  return static_cast<double>(pairs) / static_cast<double>(n);
}

}  // namespace fleetsim::bench
