#include "robots/ground_sensors.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "core/det_math.hpp"
#include "robots/engine_world.hpp"

namespace fleetsim {

namespace {

constexpr Vec2 kMotorGround[] = {
    {0.063, 0.0116}, {-0.063, 0.0116}, {-0.063, -0.0116}, {0.063, -0.0116}};
constexpr Vec2 kBaseGround[] = {{0.08, 0.0},  {0.042, 0.065},   {0.0, 0.08},  {-0.042, 0.065},
                                {-0.08, 0.0}, {-0.042, -0.065}, {0.0, -0.08}, {0.042, -0.065}};

class GroundSensor final : public BatchedSensor<GroundSensor> {
 public:
  GroundSensor(std::span<const Vec2> offsets, bool thresholded, const char* type)
      : offsets_(offsets.begin(), offsets.end()), thresholded_(thresholded), type_(type) {}

  void setup(PartSetup& setup) override {
    noise_ = setup.params().real("noise_level", 0);
    if (noise_ < 0)
      setup.error("sensor '" + setup.name() + "': noise_level must be >= 0 (ARGoS's ground noise)");
    column_ = setup.column({setup.name(), ColumnType::kF32,
                            static_cast<std::uint32_t>(offsets_.size()), true, false,
                            thresholded_ ? "base ground readings, 0 (dark) or 1 (light)"
                                         : "motor ground readings, grey level in [0, 1]",
                            type_, false});
  }
  void describe(SensorView& out) const override { out.directions = offsets_; }

  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const EngineWorld& w = engine_world(ctx);
    WorldState& s = w.state();
    const Floor& floor = w.model().floor;
    float* values = static_cast<float*>(s.robots.data(column_)) +
                    std::size_t{robot.row} * s.robots.desc(column_).width;
    const Vec2 p{s.x()[robot.row], s.y()[robot.row]};
    double sn, cs;
    det_sincos(s.theta()[robot.row], sn, cs);
    CounterRng rng(ctx.seed, robot.id, ctx.tick, RandomStream::kGroundSensorNoise);
    for (std::size_t k = 0; k < offsets_.size(); ++k) {
      const Vec2 o = offsets_[k];
      const Vec2 at{p.x + cs * o.x - sn * o.y, p.y + sn * o.x + cs * o.y};
      double v = floor_gray(floor.color_at(at));
      if (noise_ > 0) v += rng.uniform(-noise_, noise_);
      values[k] =
          thresholded_ ? (v < 0.5 ? 0.0f : 1.0f) : static_cast<float>(std::clamp(v, 0.0, 1.0));
    }
    out.values = {values, offsets_.size()};
    out.directions = offsets_;
  }

 private:
  std::vector<Vec2> offsets_;
  bool thresholded_;
  const char* type_;
  double noise_ = 0;
  ColumnHandle column_ = kNoColumn;
};

}  // namespace

double floor_gray(Color c) {
  // In single precision, as ARGoS's CColor::ToGrayScale computes it (float constants times
  // 8-bit channels), then divided in double.
  const float grey = 0.299f * static_cast<float>(c.r) + 0.587f * static_cast<float>(c.g) +
                     0.114f * static_cast<float>(c.b);
  return static_cast<double>(grey) / 255.0;
}

std::unique_ptr<Sensor> make_footbot_motor_ground_sensor() {
  return std::make_unique<GroundSensor>(kMotorGround, false, "footbot_motor_ground");
}

std::unique_ptr<Sensor> make_footbot_base_ground_sensor() {
  return std::make_unique<GroundSensor>(kBaseGround, true, "footbot_base_ground");
}

}  // namespace fleetsim
