// `fleetsim render LOG --png DIR/frame_%06d.png | --video out.mp4 [--every k] [--size WxH]
// [--fps F] [--config VIEW.xml]`: pictures and videos of a log without a browser or a display
// (docs/view-format.md, "Pictures and videos"). Frames are painted by FramePainter (the page's
// picture, in software), written as PNG files by libpng and as a video by an ffmpeg child
// process reading raw RGB frames on its standard input.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/diagnostics.hpp"
#include "log/log_reader.hpp"
#include "view/frame_painter.hpp"
#include "view/picture_files.hpp"
#include "view/view_command.hpp"
#include "view/view_config.hpp"

extern char** environ;

namespace fleetsim::view {

namespace {

struct RenderArgs {
  std::string log_path;
  std::string png;
  std::string video;
  std::string size = "1280x720";
  std::int64_t every = 1;
  double fps = 0;
  std::string config_path;
  bool quiet = false;
};

int run_render(const RenderArgs& o) {
  auto fail = [](const std::string& what, int status) {
    std::cerr << "fleetsim render: error: " << what << "\n";
    return status;
  };
  // 1. Everything the user gave, checked before any frame is painted.
  if (o.png.empty() && o.video.empty())
    return fail("nothing to write (expected --png DIR/frame_%06d.png, --video out.mp4 or both)",
                kExitUserError);
  int width = 0, height = 0;
  {
    const auto x = o.size.find('x');
    const char* s = o.size.data();
    const bool ok = x != std::string::npos && std::from_chars(s, s + x, width).ptr == s + x &&
                    std::from_chars(s + x + 1, s + o.size.size(), height).ptr == s + o.size.size();
    if (!ok || width < 16 || height < 16 || width > 16384 || height > 16384)
      return fail("--size '" + o.size + "' (expected WIDTHxHEIGHT in pixels, 16 to 16384 each)",
                  kExitUserError);
    if (!o.video.empty() && (width % 2 || height % 2))
      return fail("--size '" + o.size + "': a video's width and height are even (yuv420p)",
                  kExitUserError);
  }
  std::optional<NamePattern> pattern;
  if (!o.png.empty()) {
    pattern = parse_name_pattern(o.png);
    if (!pattern)
      return fail("--png '" + o.png +
                      "' (expected a file name with one frame-number field, such as "
                      "frames/frame_%06d.png)",
                  kExitUserError);
    const auto dir = std::filesystem::path(pattern->name(0)).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec)
      return fail("--png: cannot make the folder '" + dir.string() + "': " + ec.message(),
                  kExitUserError);
  }
  ViewConfig config = default_view_config();
  if (!o.config_path.empty()) {
    Diagnostics diags;
    auto loaded = load_view_config(o.config_path, diags);
    diags.print(std::cerr);
    if (!loaded) return kExitUserError;
    config = std::move(*loaded);
  }
  std::unique_ptr<log::LogReader> reader;
  try {
    reader = log::LogReader::open(o.log_path);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitUserError);  // (the reader's message names the file)
  }
  const log::LogHeader& h = reader->header();
  const std::size_t frames = reader->frame_count();
  if (frames == 0) return fail("log '" + o.log_path + "' has no complete frame", kExitUserError);
  {
    std::vector<std::string> kinds, classes;
    for (const auto& k : h.kinds) kinds.push_back(k.name);
    for (const auto& c : h.object_classes) classes.push_back(c.name);
    Diagnostics diags;
    warn_unknown_kinds_and_classes(config, kinds, classes, diags);
    diags.print(std::cerr);
  }
  FramePainter painter(h, config, width, height);
  for (const std::string& what : painter.unsupported())
    std::cerr << "fleetsim render: warning: " << what << " of the view configuration are not "
              << "drawn in pictures\n";
  // The video's rate: real time (a frame every `every` x the log's `every` ticks), unless given.
  double fps = o.fps;
  if (fps <= 0) {
    const double period_s =
        static_cast<double>(h.tick_period_ns) * static_cast<double>(h.every * o.every) / 1e9;
    fps = period_s > 0 ? std::clamp(1 / period_s, 1.0, 120.0) : 30;
  }

  // 2. Paint and write, frame by frame (the log is never loaded whole).
  std::unique_ptr<VideoEncoder> video;
  signal(SIGPIPE, SIG_IGN);  // (a dead ffmpeg is an error from write(), not a signal)
  try {
    if (!o.video.empty()) video = std::make_unique<VideoEncoder>(o.video, width, height, fps);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitRuntimeError);
  }
  std::vector<std::uint8_t> rgb;
  std::size_t written = 0;
  double paint_s = 0;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (std::size_t i = 0; i < frames; i += static_cast<std::size_t>(o.every)) {
      const log::LogFrame f = reader->read_frame(i);
      const auto p0 = std::chrono::steady_clock::now();
      painter.paint(f, rgb);
      paint_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
      if (pattern) write_png(pattern->name(i), width, height, rgb);
      if (video) video->write(rgb);
      ++written;
      if (!o.quiet && isatty(2))
        std::cerr << "\rfleetsim render: frame " << i + 1 << " / " << frames << std::flush;
    }
    if (video) video->finish();
  } catch (const std::exception& e) {
    if (!o.quiet && isatty(2)) std::cerr << "\n";
    return fail(e.what(), kExitRuntimeError);
  }
  if (!o.quiet && isatty(2)) std::cerr << "\n";
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.quiet) {
    std::cout << fmt::format(
                     "fleetsim render: {} frames of {} ({} x {} pixels, {:.1f} ms a frame "
                     "to paint, {:.1f} ms in all)",
                     written, o.log_path, width, height, 1000 * paint_s / written,
                     1000 * wall / written)
              << "\n";
    if (pattern)
      std::cout << "  pictures: " << pattern->name(0) << " ... "
                << pattern->name((frames - 1) / o.every * o.every) << "\n";
    if (!o.video.empty())
      std::cout << "  video: " << o.video << " (" << fps << " frames a second)\n";
  }
  return kExitOk;
}

}  // namespace

void add_render_command(CLI::App& app, int& status) {
  auto o = std::make_shared<RenderArgs>();
  CLI::App* render = app.add_subcommand(
      "render",
      "Paint a log's frames as the viewer page draws them, without a browser or a display: PNG "
      "pictures (--png) and/or a video (--video, made by ffmpeg)");
  render->add_option("LOG", o->log_path, "Log file written by `fleetsim run`")->required();
  render->add_option("--png", o->png,
                     "one PNG file a frame; the name has one frame-number field: "
                     "frames/frame_%06d.png (its folder is made)");
  render->add_option("--video", o->video,
                     "a video file (H.264 in .mp4, .mkv, .mov; VP9 in .webm), encoded by ffmpeg");
  render->add_option("--every", o->every, "paint every k-th frame of the log")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  render->add_option("--size", o->size, "picture size in pixels, WIDTHxHEIGHT")
      ->capture_default_str();
  render
      ->add_option("--fps", o->fps,
                   "video frames a second (default: real time, from the log's tick period)")
      ->check(CLI::Range(0.01, 1000.0));
  render->add_option("--config", o->config_path,
                     "View configuration XML (layers, colourings; docs/view-format.md)");
  render->add_flag("--quiet", o->quiet, "print nothing but errors");
  render->callback([o, &status] { status = run_render(*o); });
}

}  // namespace fleetsim::view
