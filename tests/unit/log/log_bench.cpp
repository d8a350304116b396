// Measures what the binary frame log costs the simulation: the time write() takes on the
// caller's thread (copying the columns), the time per frame including the background
// compression (total wall time / frames, with the queue full), and the bytes per frame.
//
//   log_bench [robots=100000] [frames=50] [path=/tmp/fleetsim_log_bench.flog] [zstd level]
// (the level: the writer's default, -20, when omitted)
//
// Prints one JSON line. Robots move a little each frame, like a diffusion run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "log/frame_log_writer.hpp"
#include "log/log_reader.hpp"
#include "log/log_writer.hpp"

using namespace fleetsim;
using namespace fleetsim::log;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const std::size_t robots = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000;
  const std::size_t frames = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 50;
  const std::string path = argc > 3 ? argv[3] : "/tmp/fleetsim_log_bench.flog";
  const int level = argc > 4 ? std::atoi(argv[4]) : FrameLogOptions{}.zstd_level;

  LogHeader header;
  header.arena_width_m = header.arena_height_m = 1000;
  header.kinds = {{"epuck", 0.035, 1, 0}};
  header.robot_columns = required_robot_columns();
  header.robot_columns.push_back(led_column(1));
  header.object_columns = required_object_columns();
  std::vector<std::string> tags{"", "searching", "found"};
  std::vector<EntityId> id(robots);
  std::vector<std::uint16_t> cls(robots, 0);
  std::vector<double> x(robots), y(robots), theta(robots);
  std::vector<std::uint32_t> tag(robots, 1);
  std::vector<Color> led(robots, Color{255, 0, 0, 255});
  const std::vector<EntityId> no_ids;
  const std::vector<std::uint16_t> no_classes;
  const std::vector<double> none;
  const std::vector<std::uint32_t> no_tags;
  std::uint64_t s = 12345;
  auto uniform = [&s] {  // splitmix64 -> [0, 1)
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1p-53;
  };
  for (std::size_t i = 0; i < robots; ++i) {
    id[i] = static_cast<EntityId>(i);
    x[i] = uniform() * 1000 - 500;
    y[i] = uniform() * 1000 - 500;
    theta[i] = uniform() * 6.28 - 3.14;
  }

  double write_ms = 0;
  FrameLogWriter::Stats stats;
  const auto start = Clock::now();
  {
    auto writer = std::make_unique<FrameLogWriter>(path, FrameLogOptions{level});
    writer->begin(header);
    for (std::size_t k = 0; k < frames; ++k) {
      // One step of motion (not timed).
      for (std::size_t i = 0; i < robots; ++i) {
        theta[i] += (uniform() - 0.5) * 0.2;
        x[i] += 0.01 * std::cos(theta[i]);
        y[i] += 0.01 * std::sin(theta[i]);
        if (i % 97 == k % 97) tag[i] = 3 - tag[i];
      }
      LogFrameView f{.tick = static_cast<Tick>(k),
                     .time_ns = static_cast<SimTime>(k) * 100'000'000,
                     .status = "running",
                     .tags = tags};
      fill_columns(f, header,
                   {{"id", id},
                    {"kind", cls},
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
      const auto t0 = Clock::now();
      writer->write(f);
      write_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    writer->finish();
    stats = writer->stats();
  }
  const double total_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const auto bytes = std::filesystem::file_size(path);

  const auto r0 = Clock::now();
  auto reader = LogReader::open(path);
  const double open_ms = std::chrono::duration<double, std::milli>(Clock::now() - r0).count();
  const auto r1 = Clock::now();
  LogFrame last = reader->read_frame(reader->frame_count() - 1);
  const double read_ms = std::chrono::duration<double, std::milli>(Clock::now() - r1).count();
  std::printf(
      "{\"bench\":\"frame_log\",\"robots\":%zu,\"frames\":%zu,\"zstd_level\":%d,"
      "\"write_call_ms_per_frame\":%.3f,\"copy_ms_per_frame\":%.3f,\"queue_wait_ms_per_frame\":%."
      "3f,"
      "\"background_encode_ms_per_frame\":%.3f,\"wall_ms_per_frame_incl_step\":%.3f,"
      "\"bytes_per_frame\":%.0f,\"bytes_per_robot\":%.2f,\"raw_bytes_per_robot\":38,"
      "\"open_ms\":%.3f,\"read_frame_ms\":%.3f,\"last_x_ok\":%s}\n",
      robots, frames, level, write_ms / frames, stats.copy_ms / frames, stats.wait_ms / frames,
      stats.encode_ms / frames, total_ms / frames, static_cast<double>(bytes) / frames,
      static_cast<double>(bytes) / frames / static_cast<double>(robots), open_ms, read_ms,
      std::ranges::equal(last.robot<double>("x", reader->header()), x) ? "true" : "false");
  std::filesystem::remove(path);
  return 0;
}
