// Where `fleetsim render` and `fleetsim run --render` put their pictures: PNG files named by a
// frame-number pattern, and a video encoded by an ffmpeg child process; and the live writer
// that paints a run's frames as the run computes them (docs/view-format.md, "Pictures and
// videos").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "log/log_writer.hpp"
#include "view/frame_painter.hpp"

namespace fleetsim::view {

/// A file name pattern with one printf-style integer field (`frame_%06d.png`).
struct NamePattern {
  std::string before, after;
  int width = 0;
  bool zero = false;  ///< zero-padded to `width`
  /// The name of frame `n`.
  std::string name(std::size_t n) const;
};

/// Reads `text` as a pattern with exactly one %d (optionally %0Nd or %Nd, N < 100; %% for a
/// percent sign). nullopt otherwise.
std::optional<NamePattern> parse_name_pattern(const std::string& text);

/// An ffmpeg child process that encodes the raw RGB frames written to it into a video file
/// (H.264 in .mp4, .mkv, .mov; VP9 in .webm). Main thread only.
class VideoEncoder {
 public:
  /// Starts ffmpeg; throws std::runtime_error when it cannot (not on the PATH: says so).
  VideoEncoder(const std::string& path, int width, int height, double fps);
  ~VideoEncoder();
  /// Writes one frame (width x height x 3 bytes). Throws when ffmpeg has gone.
  void write(const std::vector<std::uint8_t>& rgb);
  /// Closes its input and waits for it; throws when it failed.
  void finish();

 private:
  std::string path_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

/// What `fleetsim run --render` paints, and where.
struct RenderOptions {
  std::string png;         ///< a NamePattern, or "" for none
  std::string video;       ///< a video file, or "" for none
  std::int64_t every = 1;  ///< a picture every `every` ticks
  int width = 1280, height = 720;
  double fps = 0;  ///< 0: real time
  ViewConfig config = default_view_config();
};

/// A run's frames painted as the run computes them (`fleetsim run --render`), given to
/// Simulation::observe_frames as a log of its own: a picture of every tick that is a multiple of
/// `every` (the PNG named by the tick), the same picture `fleetsim render` paints from the run's
/// log. Run thread only.
class FramePictures final : public log::LogWriter {
 public:
  explicit FramePictures(RenderOptions options);
  void begin(const log::LogHeader& header) override;
  void write(const log::LogFrameView& frame) override;
  void finish() override;
  log::LogMark mark() override { return {}; }
  void resume(const log::LogHeader& header, const log::LogMark& mark) override;
  std::size_t written() const { return written_; }

 private:
  RenderOptions options_;
  std::optional<NamePattern> pattern_;
  log::LogHeader header_;
  std::unique_ptr<FramePainter> painter_;
  std::unique_ptr<VideoEncoder> video_;
  std::vector<std::uint8_t> rgb_;
  std::size_t written_ = 0;
  Tick last_tick_ = 0;
  bool begun_ = false;
};

}  // namespace fleetsim::view
