#include "view/picture_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace fleetsim::view {

std::string NamePattern::name(std::size_t n) const {
  return before + (zero ? fmt::format("{:0{}}", n, width) : fmt::format("{:{}}", n, width)) + after;
}

std::optional<NamePattern> parse_name_pattern(const std::string& text) {
  NamePattern p;
  bool found = false;
  std::string* out = &p.before;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      *out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '%') {
      *out += '%';
      ++i;
      continue;
    }
    if (found) return std::nullopt;
    std::size_t j = i + 1;
    if (j < text.size() && text[j] == '0') p.zero = true, ++j;
    const std::size_t digits = j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j - digits > 2) return std::nullopt;
    if (j > digits) std::from_chars(text.data() + digits, text.data() + j, p.width);
    if (j >= text.size() || text[j] != 'd') return std::nullopt;
    found = true;
    out = &p.after;
    i = j;
  }
  if (!found) return std::nullopt;
  return p;
}

VideoEncoder::VideoEncoder(const std::string& path, int width, int height, double fps)
    : path_(path) {
  const bool webm = std::filesystem::path(path).extension() == ".webm";
  std::vector<std::string> args = {"ffmpeg",    "-hide_banner",
                                   "-loglevel", "error",
                                   "-nostdin",  "-y",
                                   "-f",        "rawvideo",
                                   "-pix_fmt",  "rgb24",
                                   "-s",        fmt::format("{}x{}", width, height),
                                   "-r",        fmt::format("{}", fps),
                                   "-i",        "-"};
  if (webm)
    args.insert(args.end(), {"-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "32"});
  else
    args.insert(args.end(), {"-c:v", "libx264", "-preset", "veryfast", "-crf", "20"});
  args.insert(args.end(), {"-pix_fmt", "yuv420p", path});
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot make a pipe to ffmpeg: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int err = posix_spawnp(&pid_, "ffmpeg", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (err != 0) {
    close(fds[1]);
    pid_ = -1;
    throw std::runtime_error(
        err == ENOENT ? "a video needs the ffmpeg program, which is not on the PATH (Debian "
                        "package ffmpeg; scripts/install-deps.sh installs it)"
                      : std::string("cannot start ffmpeg: ") + std::strerror(err));
  }
  fd_ = fds[1];
}
VideoEncoder::~VideoEncoder() {
  try {
    finish();
  } catch (...) {
  }
}

void VideoEncoder::write(const std::vector<std::uint8_t>& rgb) {
  std::size_t at = 0;
  while (at < rgb.size()) {
    const ssize_t n = ::write(fd_, rgb.data() + at, rgb.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      finish();
      throw std::runtime_error("ffmpeg stopped taking frames (" + why + ")");
    }
    at += static_cast<std::size_t>(n);
  }
}
void VideoEncoder::finish() {
  if (pid_ < 0) return;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("ffmpeg could not write '" + path_ +
                             "' (its message is above; status " + std::to_string(status) + ")");
}

FramePictures::FramePictures(RenderOptions options) : options_(std::move(options)) {
  if (!options_.png.empty()) {
    pattern_ = parse_name_pattern(options_.png);
    if (!pattern_) throw std::invalid_argument("'" + options_.png + "' has no frame-number field");
  }
}

void FramePictures::begin(const log::LogHeader& header) {
  if (begun_) return;  // (again after a reset: the same world, the same picture)
  begun_ = true;
  header_ = header;
  painter_ =
      std::make_unique<FramePainter>(header_, options_.config, options_.width, options_.height);
  double fps = options_.fps;
  if (fps <= 0) {
    const double period_s =
        static_cast<double>(header.tick_period_ns) * static_cast<double>(options_.every) / 1e9;
    fps = period_s > 0 ? std::clamp(1 / period_s, 1.0, 120.0) : 30;
  }
  signal(SIGPIPE, SIG_IGN);  // (a dead ffmpeg is an error from write(), not a signal)
  if (!options_.video.empty())
    video_ = std::make_unique<VideoEncoder>(options_.video, options_.width, options_.height, fps);
}

void FramePictures::write(const log::LogFrameView& frame) {
  // (The run's last frame comes twice: at its step and at finish().)
  if (!painter_ || frame.tick % options_.every != 0 || (written_ > 0 && frame.tick == last_tick_))
    return;
  last_tick_ = frame.tick;
  painter_->paint(log::LogFrame::copy_of(frame), rgb_);
  if (pattern_)
    write_png(pattern_->name(static_cast<std::size_t>(frame.tick)), options_.width, options_.height,
              rgb_);
  if (video_) video_->write(rgb_);
  ++written_;
}

void FramePictures::finish() {
  if (video_) video_->finish();
}

void FramePictures::resume(const log::LogHeader&, const log::LogMark&) {
  throw log::LogError("pictures are not continued from a checkpoint (render the run's log)");
}

}  // namespace fleetsim::view
