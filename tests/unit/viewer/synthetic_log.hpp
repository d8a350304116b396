// A LogReader that generates frames instead of reading a file: robots on circles, tags that
// change with time. For the viewer's unit tests (no dependency on the log module's files).
#pragma once

#include <cmath>
#include <stdexcept>

#include "log/log_reader.hpp"

namespace fleetsim::viewer::testing {

class SyntheticLogReader : public log::LogReader {
 public:
  SyntheticLogReader(std::size_t robots, std::size_t frames, std::size_t corrupt_from = SIZE_MAX)
      : frames_(frames), corrupt_from_(corrupt_from) {
    h_.experiment = "synthetic";
    h_.tick_period_ns = 100'000'000;
    h_.every = 1;
    h_.arena_width_m = 10;
    h_.arena_height_m = 8;
    h_.arena_center = {100, 50};
    h_.robot_classes = {{"epuck", 0.035}, {"footbot", 0.085}};
    h_.object_classes = {{"food", 0}};
    for (std::size_t i = 0; i < robots; ++i)
      h_.robots.push_back({static_cast<EntityId>(i), static_cast<std::uint16_t>(i % 2),
                           "r" + std::to_string(i)});
    h_.objects.push_back({static_cast<EntityId>(robots), 0, "food0"});
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
    for (std::size_t i = 0; i < h_.robots.size(); ++i) {
      double a = 0.1 * static_cast<double>(index) + static_cast<double>(i);
      f.robot_id.push_back(h_.robots[i].id);
      f.robot_class.push_back(h_.robots[i].class_index);
      f.robot_x.push_back(h_.arena_center.x + 3 * std::cos(a));
      f.robot_y.push_back(h_.arena_center.y + 3 * std::sin(a));
      f.robot_theta.push_back(wrap_angle(a + kPi / 2));
      f.robot_tag.push_back((index + i) % 2 == 0 ? 1 : 2);
      f.robot_led.push_back(Color{10, 20, 30, 255});
    }
    f.object_id = {h_.objects[0].id};
    f.object_class = {0};
    f.object_x = {h_.arena_center.x + 1};
    f.object_y = {h_.arena_center.y - 1};
    f.object_size = {0.2};
    f.object_tag = {0};
    return f;
  }

 private:
  log::LogHeader h_;
  std::size_t frames_;
  std::size_t corrupt_from_;
};

}  // namespace fleetsim::viewer::testing
