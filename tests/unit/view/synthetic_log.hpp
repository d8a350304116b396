// A LogReader that generates frames instead of reading a file: robots on circles, tags that
// change with time, e-pucks (one LED) and foot-bots (13 LEDs, range and bearing), and one
// column no part of the viewer knows ("test_value"). For the viewer's unit tests and for
// working on the page by hand (synthetic_server).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "log/log_reader.hpp"

namespace fleetsim::view::testing {

class SyntheticLogReader : public log::LogReader {
 public:
  static constexpr std::uint32_t kLedWidth = 13;

  SyntheticLogReader(std::size_t robots, std::size_t frames, std::size_t corrupt_from = SIZE_MAX)
      : frames_(frames), corrupt_from_(corrupt_from) {
    h_.experiment = "synthetic";
    h_.tick_period_ns = 100'000'000;
    h_.every = 1;
    h_.arena_width_m = 10;
    h_.arena_height_m = 8;
    h_.arena_center = {100, 50};
    h_.kinds = {{"epuck", 0.035, 1, 0}, {"footbot", 0.085, kLedWidth, 0.8}};
    h_.object_classes = {{"food"}};
    for (std::size_t i = 0; i < robots; ++i)
      h_.robots.push_back({static_cast<EntityId>(i), static_cast<std::uint16_t>(i % 2),
                           std::string("r").append(std::to_string(i))});
    h_.objects.push_back({static_cast<EntityId>(robots), 0, "food0"});
    h_.robot_columns = log::required_robot_columns();
    h_.robot_columns.push_back(log::led_column(kLedWidth));
    ColumnDesc value;
    value.name = "test_value";
    value.type = ColumnType::kF32;
    value.width = 2;
    value.logged = true;
    value.doc = "a column the viewer has never heard of";
    h_.robot_columns.push_back(value);
    h_.object_columns = log::required_object_columns();
  }
  log::LogFormat format() const override { return log::LogFormat::kFrames; }
  const log::LogHeader& header() const override { return h_; }
  std::size_t frame_count() const override { return frames_; }
  log::LogFrame read_frame(std::size_t index) override {
    if (index >= corrupt_from_) throw log::LogError("frame " + std::to_string(index) + " is corrupted");
    log::LogFrame f;
    f.tick = static_cast<Tick>(index);
    f.time_ns = f.tick * h_.tick_period_ns;
    f.status = "frame " + std::to_string(index);
    f.tags = {"", "even", "odd"};
    std::vector<EntityId> id;
    std::vector<std::uint16_t> kind;
    std::vector<double> x, y, theta;
    std::vector<std::uint32_t> tag;
    std::vector<Color> led;
    std::vector<float> value;
    for (std::size_t i = 0; i < h_.robots.size(); ++i) {
      double a = 0.1 * static_cast<double>(index) + static_cast<double>(i);
      id.push_back(h_.robots[i].id);
      kind.push_back(h_.robots[i].type_index);
      x.push_back(h_.arena_center.x + 3 * std::cos(a));
      y.push_back(h_.arena_center.y + 3 * std::sin(a));
      theta.push_back(wrap_angle(a + kPi / 2));
      tag.push_back((index + i) % 2 == 0 ? 1 : 2);
      for (std::uint32_t k = 0; k < kLedWidth; ++k)
        led.push_back(k == 0 ? Color{10, 20, 30, 255}
                             : Color{static_cast<std::uint8_t>(20 * k), 0, 0, 255});
      value.push_back(static_cast<float>(i));
      value.push_back(static_cast<float>(index) + 0.5f);
    }
    f.set_robot("id", h_, id);
    f.set_robot("kind", h_, kind);
    f.set_robot("x", h_, x);
    f.set_robot("y", h_, y);
    f.set_robot("theta", h_, theta);
    f.set_robot("tag", h_, tag);
    f.set_robot("leds", h_, led);
    f.set_robot("test_value", h_, value);
    f.set_object("id", h_, std::vector<EntityId>{h_.objects[0].id});
    f.set_object("class", h_, std::vector<std::uint16_t>{0});
    f.set_object("x", h_, std::vector<double>{h_.arena_center.x + 1});
    f.set_object("y", h_, std::vector<double>{h_.arena_center.y - 1});
    f.set_object("size", h_, std::vector<double>{0.2});
    f.set_object("tag", h_, std::vector<std::uint32_t>{0});
    return f;
  }

 private:
  log::LogHeader h_;
  std::size_t frames_;
  std::size_t corrupt_from_;
};

}  // namespace fleetsim::view::testing
