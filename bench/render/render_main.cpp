// bench/render: what `fleetsim render` costs a frame (issue 30: a 1,000-robot frame in at most
// 20 ms, a 100,000-robot one in at most 500 ms at 1920 x 1080, on one core). The diffusion
// scene of bench/diffusion (its e-pucks in the rooms bitmap, 40 m x 40 m up to 100,000 robots)
// runs for --seconds and logs every tick; then each of the log's frames is painted
// (FramePainter, the page's picture with its default layers) and written as a PNG file, on
// this one thread, --repeat times over.
//
//   render --robots N --size WxH --seconds S --repeat K --seed S
//
// Prints one JSON line: the milliseconds to read a frame from the log (`read_ms_median`), to
// paint it (`paint_ms_median`, `paint_ms_min`, `paint_ms_max`) and to encode and write it as a
// PNG file (`png_ms_median`), `frame_ms_median` (paint + PNG, what `fleetsim render --png`
// spends a frame beyond reading), the picture's size and the frames painted.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/command_line.hpp"
#include "diffusion_scene.hpp"
#include "log/log_reader.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "view/frame_painter.hpp"

namespace {

using namespace fleetsim;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  bench::DiffusionSceneOptions o;
  o.robots = 1000;
  o.seconds = 1;
  o.log_frames = true;
  std::string size = "1920x1080";
  int repeat = 3;
  CLI::App app{
      "What `fleetsim render` costs a frame: the diffusion scene's log painted as the page draws "
      "it and written as PNG files, on one thread; prints one JSON line (docs/benchmarks.md, "
      "\"Rendering\").",
      "render"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", o.robots, "Number of e-pucks N")->check(CLI::Range(1, 100'000'000));
  app.add_option("--size", size, "Picture size in pixels, WIDTHxHEIGHT");
  app.add_option("--seconds", o.seconds, "Simulated seconds logged (10 frames a second)")
      ->check(CLI::Range(0.1, 1e4));
  app.add_option("--repeat", repeat, "Times each frame is painted and written")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seed", o.seed, "Random seed of the placement and the controllers")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{0x7fffffffffffffff}));
  if (int status = parse_command_line(app, argc, argv); status >= 0) return status;
  int width = 0, height = 0;
  if (std::sscanf(size.c_str(), "%dx%d", &width, &height) != 2 || width < 16 || height < 16 ||
      width > 16384 || height > 16384) {
    std::cerr << "render: error: --size '" << size << "' (expected WIDTHxHEIGHT, 16 to 16384)\n";
    return kExitUserError;
  }

  const auto dir = std::filesystem::temp_directory_path() /
                   ("fleetsim_bench_render_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {  // The scene's log.
    PluginRegistry registry;
    register_builtins(registry);
    Diagnostics diags;
    auto ex = bench::make_diffusion_experiment(o, dir.string(), registry, diags);
    if (!ex) {
      diags.print(std::cerr);
      return kExitUserError;
    }
    Simulation sim(std::move(*ex), registry);
    sim.start();
    while (!sim.done()) sim.step();
    sim.finish();
  }
  auto reader = log::LogReader::open((dir / "diffusion.flog").string());
  view::FramePainter painter(reader->header(), view::default_view_config(), width, height);
  std::vector<double> read_ms, paint_ms, png_ms, frame_ms;
  std::vector<std::uint8_t> rgb;
  const std::string png = (dir / "frame.png").string();
  for (int k = 0; k < repeat; ++k)
    for (std::size_t i = 0; i < reader->frame_count(); ++i) {
      auto t = Clock::now();
      const log::LogFrame f = reader->read_frame(i);
      read_ms.push_back(ms_since(t));
      t = Clock::now();
      painter.paint(f, rgb);
      paint_ms.push_back(ms_since(t));
      t = Clock::now();
      view::write_png(png, width, height, rgb);
      png_ms.push_back(ms_since(t));
      frame_ms.push_back(paint_ms.back() + png_ms.back());
    }
  std::filesystem::remove_all(dir);
  nlohmann::json j{{"bench", "render"},
                   {"robots", o.robots},
                   {"width", width},
                   {"height", height},
                   {"pixels_per_metre", painter.scale()},
                   {"frames_painted", paint_ms.size()},
                   {"read_ms_median", median(read_ms)},
                   {"paint_ms_median", median(paint_ms)},
                   {"paint_ms_min", *std::min_element(paint_ms.begin(), paint_ms.end())},
                   {"paint_ms_max", *std::max_element(paint_ms.begin(), paint_ms.end())},
                   {"png_ms_median", median(png_ms)},
                   {"frame_ms_median", median(frame_ms)}};
  std::cout << j.dump() << std::endl;
  return 0;
}
