// Writes the logs the viewer's browser tests load, deterministically, with the log module's
// writers (no engine needed):
//   make_test_log OUT_DIR            example.flog, example.deeco.log, expect.json and the
//                                    broken logs (truncated, corrupted, not a log)
//   make_test_log OUT_DIR --bench N F  bench.flog: N robots, F frames (replay benchmark)
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

constexpr std::uint32_t kFootbotLeds = 13;  // 12 ring LEDs + the beacon
constexpr double kFootbotRabRange = 0.6;

float test_value(std::size_t robot, Tick frame, int c) {
  return static_cast<float>(robot) + 0.25f * static_cast<float>(c) +
         1000.0f * static_cast<float>(frame);
}

// The example world: a 4 m x 3 m arena centred at (1, -0.5) (off the origin, to check that
// the viewer places things in world coordinates), a bitmap with one obstacle block and a wall
// segment, two robot kinds (e-pucks with one LED; foot-bots with a ring of 12 LEDs, a beacon
// and range-and-bearing), three objects, and a column only this log has ("test_value").
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
  h.kinds = {{"epuck", 0.05, 1, 0}, {"footbot", 0.1, kFootbotLeds, kFootbotRabRange}};
  h.object_classes = {{"food"}};
  // (Names built with append: GCC 12 warns falsely about "r" + std::to_string(i) here.)
  for (std::size_t i = 0; i < robots; ++i)
    h.robots.push_back({static_cast<EntityId>(i), static_cast<std::uint16_t>(i == 0 ? 1 : i % 2),
                        std::string("r").append(std::to_string(i))});
  for (std::size_t i = 0; i < 3; ++i)
    h.objects.push_back(
        {static_cast<EntityId>(robots + i), 0, std::string("food").append(std::to_string(i))});
  h.robot_columns = required_robot_columns();
  h.robot_columns.push_back(led_column(kFootbotLeds));
  ColumnDesc value;
  value.name = "test_value";
  value.type = ColumnType::kF32;
  value.width = 3;
  value.logged = true;
  value.doc = "three numbers per robot that no part of the viewer knows";
  h.robot_columns.push_back(value);
  h.object_columns = required_object_columns();
  return h;
}

/// LED j of robot i at frame k. E-pucks (one LED): blue for leaders, green for the others.
/// Foot-bots: ring LEDs alternate magenta (even j) and cyan (odd j), the beacon is yellow.
Color example_led(std::uint16_t kind, std::size_t j, bool leader) {
  if (kind == 0) return j == 0 ? (leader ? Color{0, 0, 255, 255} : Color{0, 200, 0, 255}) : Color{};
  if (j + 1 == kFootbotLeds) return Color{255, 255, 0, 255};
  return j % 2 == 0 ? Color{255, 0, 255, 255} : Color{0, 255, 255, 255};
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
  std::vector<EntityId> id;
  std::vector<std::uint16_t> kind;
  std::vector<double> xs, ys, thetas;
  std::vector<std::uint32_t> tag;
  std::vector<Color> led;
  std::vector<float> value;
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
    id.push_back(h.robots[i].id);
    kind.push_back(h.robots[i].type_index);
    xs.push_back(x);
    ys.push_back(y);
    thetas.push_back(theta);
    tag.push_back(leader ? 1 : 2);
    for (std::size_t j = 0; j < kFootbotLeds; ++j)
      led.push_back(example_led(h.robots[i].type_index, j, leader));
    for (int c = 0; c < 3; ++c) value.push_back(test_value(i, k, c));
  }
  f.set_robot("id", h, id);
  f.set_robot("kind", h, kind);
  f.set_robot("x", h, xs);
  f.set_robot("y", h, ys);
  f.set_robot("theta", h, thetas);
  f.set_robot("tag", h, tag);
  f.set_robot("leds", h, led);
  f.set_robot("test_value", h, value);
  std::vector<EntityId> oid;
  std::vector<std::uint16_t> cls;
  std::vector<double> ox, oy, size;
  std::vector<std::uint32_t> otag;
  for (std::size_t i = 0; i < h.objects.size(); ++i) {
    oid.push_back(h.objects[i].id);
    cls.push_back(0);
    ox.push_back(-0.6 + 0.5 * static_cast<double>(i));
    oy.push_back(-1.4);
    size.push_back(0.15);
    otag.push_back(0);
  }
  f.set_object("id", h, oid);
  f.set_object("class", h, cls);
  f.set_object("x", h, ox);
  f.set_object("y", h, oy);
  f.set_object("size", h, size);
  f.set_object("tag", h, otag);
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
  h.kinds = {{"epuck", 0.035, 1, 0}, {"footbot", 0.085, 1, 0}};
  for (std::size_t i = 0; i < robots; ++i)
    h.robots.push_back({static_cast<EntityId>(i), static_cast<std::uint16_t>(i % 2), ""});
  h.robot_columns = required_robot_columns();
  h.robot_columns.push_back(led_column(1));
  h.object_columns = required_object_columns();
  auto w = make_frame_log_writer(path.string());
  w->begin(h);
  std::size_t side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(robots))));
  double pitch = 100.0 / static_cast<double>(side);
  const std::vector<std::string> tags{"", "a", "b"};
  std::vector<EntityId> id(robots);
  std::vector<std::uint16_t> kind(robots);
  std::vector<double> x(robots), y(robots), theta(robots);
  std::vector<std::uint32_t> tag(robots);
  std::vector<Color> led(robots, Color{255, 0, 0, 255});
  const std::vector<EntityId> no_ids;
  const std::vector<std::uint16_t> no_classes;
  const std::vector<double> none;
  const std::vector<std::uint32_t> no_tags;
  for (Tick k = 0; k < frames; ++k) {
    const std::string status = "bench frame " + std::to_string(k);
    for (std::size_t i = 0; i < robots; ++i) {
      double a = 0.2 * static_cast<double>(k) + static_cast<double>(i % 97);
      double cx = -50 + pitch * (static_cast<double>(i % side) + 0.5);
      double cy = -50 + pitch * (static_cast<double>(i / side) + 0.5);
      id[i] = static_cast<EntityId>(i);
      kind[i] = static_cast<std::uint16_t>(i % 2);
      x[i] = cx + 0.25 * pitch * std::cos(a);
      y[i] = cy + 0.25 * pitch * std::sin(a);
      theta[i] = wrap_angle(a + kPi / 2);
      tag[i] = static_cast<std::uint32_t>(1 + (i + static_cast<std::size_t>(k)) % 2);
    }
    LogFrameView f{.tick = k, .time_ns = k * h.tick_period_ns, .status = status, .tags = tags};
    fill_columns(f, h,
                 {{"id", id},
                  {"kind", kind},
                  {"x", x},
                  {"y", y},
                  {"theta", theta},
                  {"tag", tag},
                  {"leds", led}},
                 {{"id", no_ids},
                  {"class", no_classes},
                  {"x", none},
                  {"y", none},
                  {"size", none},
                  {"tag", no_tags}});
    w->write(f);
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

// boxes.flog: one frame of a 2 m x 2 m arena with two box-shaped robots (0.6 m x 0.2 m)
// turned 30 and -60 degrees and an e-puck, for the pictures of boxes
// (render_vs_page.test.mjs).
void write_boxes_log(const std::string& path) {
  LogHeader h;
  h.experiment = "boxes";
  h.tick_period_ns = 100'000'000;
  h.every = 1;
  h.arena_width_m = 2;
  h.arena_height_m = 2;
  LogKind crate{"crate", std::sqrt(0.3 * 0.3 + 0.1 * 0.1), 0, 0};
  crate.shape = LogShape::kBox;
  crate.half_length_m = 0.3;
  crate.half_width_m = 0.1;
  h.kinds = {crate, {"epuck", 0.1, 1, 0}};
  h.robots = {{0, 0, "crate0"}, {1, 0, "crate1"}, {2, 1, "ep2"}};
  h.robot_columns = required_robot_columns();
  h.robot_columns.push_back(led_column(1));
  h.object_columns = required_object_columns();
  LogFrame f;
  f.tags = {""};
  f.set_robot("id", h, std::vector<EntityId>{0, 1, 2});
  f.set_robot("kind", h, std::vector<std::uint16_t>{0, 0, 1});
  f.set_robot("x", h, std::vector<double>{-0.4, 0.4, 0.4});
  f.set_robot("y", h, std::vector<double>{0.3, -0.3, 0.6});
  f.set_robot("theta", h, std::vector<double>{kPi / 6, -kPi / 3, 0});
  f.set_robot("tag", h, std::vector<std::uint32_t>{0, 0, 0});
  f.set_robot("leds", h, std::vector<Color>(3, Color{0, 0, 0, 0}));
  for (const char* c : {"x", "y", "size"}) f.set_object(c, h, std::vector<double>{});
  f.set_object("id", h, std::vector<EntityId>{});
  f.set_object("class", h, std::vector<std::uint16_t>{});
  f.set_object("tag", h, std::vector<std::uint32_t>{});
  auto w = make_frame_log_writer(path);
  w->begin(h);
  w->write(f.view());
  w->finish();
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_test_log OUT_DIR [--bench ROBOTS FRAMES]\n";
    return 2;
  }
  fs::path out = argv[1];
  fs::create_directories(out);
  try {
    if (argc >= 5 && std::string(argv[2]) == "--bench") {
      write_bench(out / "bench.flog", std::stoul(argv[3]), std::stol(argv[4]));
      return 0;
    }
    const Tick frames = 120;
    LogHeader h = example_header(24);
    auto frame_log = make_frame_log_writer((out / "example.flog").string());
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
      const auto x = f.robot<double>("x", h), y = f.robot<double>("y", h);
      const auto theta = f.robot<double>("theta", h);
      const auto kind = f.robot<std::uint16_t>("kind", h);
      const auto tag = f.robot<std::uint32_t>("tag", h);
      const auto value = f.robot<float>("test_value", h);
      nlohmann::json robots = nlohmann::json::array();
      for (std::size_t i = 0; i < f.robot_count; ++i)
        robots.push_back({{"x", x[i]},
                          {"y", y[i]},
                          {"theta", theta[i]},
                          {"kind", h.kinds[kind[i]].name},
                          {"radius", h.kinds[kind[i]].radius_m},
                          {"tag", f.tags[tag[i]]},
                          {"testValue", {value[3 * i], value[3 * i + 1], value[3 * i + 2]}}});
      expect["frame" + std::to_string(k)] = {{"status", f.status}, {"robots", robots}};
    }
    expect["footbotRabRange"] = kFootbotRabRange;
    // Broken logs: cut inside the header; one frame's bytes damaged; not a log at all.
    std::string bytes = read_all(out / "example.flog");
    write_all(out / "cut-header.flog", bytes.substr(0, 24));
    // Damage 16 bytes somewhere past the middle, moving on until the damage is one the reader
    // finds only when it reads that frame (the log opens, one frame is corrupted): that is the
    // case the page must report while it is already open.
    expect["corruptFrame"] = -1;
    for (std::size_t at = bytes.size() / 2; at + 16 < bytes.size(); at += 97) {
      std::string corrupt = bytes;
      for (std::size_t i = at; i < at + 16; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
      write_all(out / "corrupt.flog", corrupt);
      auto reader = LogReader::open((out / "corrupt.flog").string());
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
    write_boxes_log((out / "boxes.flog").string());
    write_all(out / "truncated.flog", bytes.substr(0, bytes.size() * 2 / 3));
    write_all(out / "not-a-log.flog", "hello, this is not a log\n");
    expect["truncatedFrames"] = LogReader::open((out / "truncated.flog").string())->frame_count();
    std::ofstream(out / "expect.json") << expect.dump(1);
  } catch (const std::exception& e) {
    std::cerr << "make_test_log: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
