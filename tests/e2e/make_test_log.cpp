// Writes the logs the viewer's browser tests load, deterministically, with the log module's
// writers (no engine needed):
//   make_test_log OUT_DIR            example.fslog, example.deeco.log, expect.json and the
//                                    broken logs (truncated, corrupted, not a log)
//   make_test_log OUT_DIR --bench N F  bench.fslog: N robots, F frames (replay benchmark)
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "log/log_reader.hpp"
#include "log/log_writer.hpp"

namespace fs = std::filesystem;
using namespace fleetsim;
using namespace fleetsim::log;

namespace {

// The example world: a 4 m x 3 m arena centred at (1, -0.5) (off the origin, to check that
// the viewer places things in world coordinates), a bitmap with one obstacle block and a wall
// segment, two robot classes, three objects.
LogHeader example_header(std::size_t robots) {
  LogHeader h;
  h.experiment = "viewer-e2e";
  h.seed = 7;
  h.tick_period_ns = 100'000'000;  // 10 ticks per second
  h.every = 1;
  h.arena_width_m = 4;
  h.arena_height_m = 3;
  h.arena_center = {1, -0.5};
  h.bitmap_width = 40;
  h.bitmap_height = 30;
  h.bitmap_resolution_m = 0.1;
  h.bitmap_top_left = {-1, 1};
  h.bitmap.assign(40 * 30, 0);
  for (int j = 3; j < 7; ++j)
    for (int i = 33; i < 38; ++i) h.bitmap[j * 40 + i] = 1;  // top-right block
  h.segments.push_back({{-0.8, -1.8}, {0.2, -1.8}});
  h.robot_classes = {{"epuck", 0.05}, {"footbot", 0.1}};
  h.object_classes = {{"food", 0}};
  for (std::size_t i = 0; i < robots; ++i)
    h.robots.push_back({static_cast<EntityId>(i), static_cast<std::uint16_t>(i == 0 ? 1 : i % 2),
                        "r" + std::to_string(i)});
  for (std::size_t i = 0; i < 3; ++i)
    h.objects.push_back({static_cast<EntityId>(robots + i), 0, "food" + std::to_string(i)});
  return h;
}

// Robot i at frame k: robot 0 (a footbot, the one the tests look at) crawls right along
// y = 0; the others orbit on rings. Tags: robot 0 is "leader"; others "follower", and every
// fifth robot becomes "leader" from frame 60.
LogFrame example_frame(const LogHeader& h, Tick k) {
  LogFrame f;
  f.tick = k;
  f.time_ns = k * h.tick_period_ns;
  f.tags = {"", "leader", "follower"};
  std::size_t n = h.robots.size();
  std::size_t leaders = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double x, y, theta;
    if (i == 0) {
      x = -0.5 + 0.01 * static_cast<double>(k);
      y = 0.0;
      theta = 0.3;
    } else {
      double ring = 0.35 + 0.25 * static_cast<double>(i % 4);
      double a = 0.02 * static_cast<double>(k) + 2 * kPi * static_cast<double>(i) / n;
      x = 1.2 + ring * std::cos(a);
      y = -0.6 + ring * std::sin(a);
      theta = wrap_angle(a + kPi / 2);
    }
    bool leader = i == 0 || (i % 5 == 0 && k >= 60);
    leaders += leader;
    f.robot_id.push_back(h.robots[i].id);
    f.robot_class.push_back(h.robots[i].class_index);
    f.robot_x.push_back(x);
    f.robot_y.push_back(y);
    f.robot_theta.push_back(theta);
    f.robot_tag.push_back(leader ? 1 : 2);
    f.robot_led.push_back(leader ? Color{0, 0, 255, 255} : Color{0, 200, 0, 255});
  }
  for (std::size_t i = 0; i < h.objects.size(); ++i) {
    f.object_id.push_back(h.objects[i].id);
    f.object_class.push_back(0);
    f.object_x.push_back(-0.6 + 0.5 * static_cast<double>(i));
    f.object_y.push_back(-1.4);
    f.object_size.push_back(0.15);
    f.object_tag.push_back(0);
  }
  f.status = "step " + std::to_string(k) + ": " + std::to_string(leaders) + " leaders";
  return f;
}

void write_log(LogWriter& w, const LogHeader& h, Tick frames) {
  w.begin(h);
  for (Tick k = 0; k < frames; ++k) {
    LogFrame f = example_frame(h, k);
    w.write(f.view());
  }
  w.finish();
}

// The bench world: N robots on a grid filling a 100 m x 100 m arena, each circling slowly.
void write_bench(const fs::path& path, std::size_t robots, Tick frames) {
  LogHeader h;
  h.experiment = "viewer-bench";
  h.tick_period_ns = 100'000'000;
  h.arena_width_m = 100;
  h.arena_height_m = 100;
  h.robot_classes = {{"epuck", 0.035}, {"footbot", 0.085}};
  for (std::size_t i = 0; i < robots; ++i)
    h.robots.push_back({static_cast<EntityId>(i), static_cast<std::uint16_t>(i % 2), ""});
  auto w = make_frame_log_writer(path.string());
  w->begin(h);
  std::size_t side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(robots))));
  double pitch = 100.0 / static_cast<double>(side);
  LogFrame f;
  f.tags = {"", "a", "b"};
  f.robot_id.resize(robots);
  f.robot_class.resize(robots);
  f.robot_x.resize(robots);
  f.robot_y.resize(robots);
  f.robot_theta.resize(robots);
  f.robot_tag.resize(robots);
  f.robot_led.assign(robots, Color{255, 0, 0, 255});
  for (Tick k = 0; k < frames; ++k) {
    f.tick = k;
    f.time_ns = k * h.tick_period_ns;
    f.status = "bench frame " + std::to_string(k);
    for (std::size_t i = 0; i < robots; ++i) {
      double a = 0.2 * static_cast<double>(k) + static_cast<double>(i % 97);
      double cx = -50 + pitch * (static_cast<double>(i % side) + 0.5);
      double cy = -50 + pitch * (static_cast<double>(i / side) + 0.5);
      f.robot_id[i] = static_cast<EntityId>(i);
      f.robot_class[i] = static_cast<std::uint16_t>(i % 2);
      f.robot_x[i] = cx + 0.25 * pitch * std::cos(a);
      f.robot_y[i] = cy + 0.25 * pitch * std::sin(a);
      f.robot_theta[i] = wrap_angle(a + kPi / 2);
      f.robot_tag[i] = static_cast<std::uint32_t>(1 + (i + static_cast<std::size_t>(k)) % 2);
    }
    w->write(f.view());
  }
  w->finish();
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_test_log OUT_DIR [--bench ROBOTS FRAMES]\n";
    return 2;
  }
  fs::path out = argv[1];
  fs::create_directories(out);
  try {
    if (argc >= 5 && std::string(argv[2]) == "--bench") {
      write_bench(out / "bench.fslog", std::stoul(argv[3]), std::stol(argv[4]));
      return 0;
    }
    const Tick frames = 120;
    LogHeader h = example_header(24);
    auto frame_log = make_frame_log_writer((out / "example.fslog").string());
    write_log(*frame_log, h, frames);
    auto deeco_log = make_deeco_log_writer((out / "example.deeco.log").string());
    write_log(*deeco_log, h, frames);

    // What the tests expect to see, straight from the generator.
    nlohmann::json expect;
    expect["frames"] = frames;
    expect["robots"] = h.robots.size();
    expect["tickPeriodNs"] = h.tick_period_ns;
    for (Tick k : {Tick{0}, Tick{10}, Tick{60}}) {
      LogFrame f = example_frame(h, k);
      nlohmann::json robots = nlohmann::json::array();
      for (std::size_t i = 0; i < f.robot_x.size(); ++i)
        robots.push_back({{"x", f.robot_x[i]},
                          {"y", f.robot_y[i]},
                          {"theta", f.robot_theta[i]},
                          {"radius", h.robot_classes[f.robot_class[i]].radius_m},
                          {"tag", f.tags[f.robot_tag[i]]}});
      expect["frame" + std::to_string(k)] = {{"status", f.status}, {"robots", robots}};
    }
    // Broken logs: cut inside the header; one frame's bytes damaged; not a log at all.
    std::string bytes = read_all(out / "example.fslog");
    write_all(out / "cut-header.fslog", bytes.substr(0, 24));
    // Damage 16 bytes somewhere past the middle, moving on until the damage is one the reader
    // finds only when it reads that frame (the log opens, one frame is corrupted): that is the
    // case the page must report while it is already open.
    expect["corruptFrame"] = -1;
    for (std::size_t at = bytes.size() / 2; at + 16 < bytes.size(); at += 97) {
      std::string corrupt = bytes;
      for (std::size_t i = at; i < at + 16; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
      write_all(out / "corrupt.fslog", corrupt);
      auto reader = LogReader::open((out / "corrupt.fslog").string());
      if (reader->frame_count() != static_cast<std::size_t>(frames)) continue;
      int bad = -1;
      for (std::size_t k = 0; k < reader->frame_count() && bad < 0; ++k) {
        try {
          reader->read_frame(k);
        } catch (const LogError&) {
          bad = static_cast<int>(k);
        }
      }
      if (bad >= 0) {
        expect["corruptFrame"] = bad;
        break;
      }
    }
    write_all(out / "truncated.fslog", bytes.substr(0, bytes.size() * 2 / 3));
    write_all(out / "not-a-log.fslog", "hello, this is not a log\n");
    expect["truncatedFrames"] = LogReader::open((out / "truncated.fslog").string())->frame_count();
    std::ofstream(out / "expect.json") << expect.dump(1);
  } catch (const std::exception& e) {
    std::cerr << "make_test_log: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
