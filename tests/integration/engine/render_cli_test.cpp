// `fleetsim render` as a user meets it: pictures of a run's log (every k-th frame, named by
// frame number, of the size asked), a video made by ffmpeg with as many frames, and mistakes
// refused with a clear message and status 2 before anything is written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "support/processes.hpp"
#include "view/frame_painter.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
const std::string kFleetsim = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim";
const std::string kDiffusion =
    std::string(FLEETSIM_SOURCE_DIR) + "/examples/diffusion/diffusion.xml";

class RenderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_test_dir("render_cli");
    auto r = run_command(kFleetsim + " run " + kDiffusion + " --length 2 --quiet --log " +
                             (dir_ / "run.flog").string(),
                         dir_, 120);
    ASSERT_EQ(r.status, 0) << r.err;  // 21 frames: ticks 0 .. 20
  }
  testing::CommandResult render(const std::string& args) {
    return run_command(kFleetsim + " render " + (dir_ / "run.flog").string() + " " + args, dir_,
                       120);
  }
  fs::path dir_;
};

TEST_F(RenderCli, PicturesOfEveryKthFrameNamedByFrameNumber) {
  auto r = render("--png " + (dir_ / "pics/f_%03d.png").string() + " --every 5 --size 320x200");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("5 frames of"), std::string::npos) << r.out;
  for (int frame = 0; frame <= 20; ++frame) {
    std::string name = "f_000.png";
    name.replace(2, 3, std::string(3 - std::to_string(frame).size(), '0') + std::to_string(frame));
    const fs::path png = dir_ / "pics" / name;
    EXPECT_EQ(fs::exists(png), frame % 5 == 0) << png;
  }
  int w = 0, h = 0;
  const auto rgb = view::read_png((dir_ / "pics" / "f_010.png").string(), w, h);
  EXPECT_EQ(w, 320);
  EXPECT_EQ(h, 200);
  // Not a blank picture: the floor (white), the outside (grey) and red robots are there.
  std::size_t red = 0, white = 0;
  for (std::size_t i = 0; i < rgb.size(); i += 3) {
    red += rgb[i] > 200 && rgb[i + 1] < 60 && rgb[i + 2] < 60;
    white += rgb[i] == 255 && rgb[i + 1] == 255 && rgb[i + 2] == 255;
  }
  EXPECT_GT(red, 20u);
  EXPECT_GT(white, 1000u);
}

TEST_F(RenderCli, AVideoHasAFrameForEachPaintedOne) {
  if (std::system("command -v ffprobe >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no ffmpeg (scripts/install-deps.sh installs it)";
  auto r = render("--video " + (dir_ / "clip.mp4").string() + " --size 320x240 --every 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("clip.mp4 (5 frames a second)"), std::string::npos) << r.out;
  auto probe = run_command(
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
      "stream=nb_read_frames,width,height,codec_name -of csv=p=0 " +
          (dir_ / "clip.mp4").string(),
      dir_, 60);
  ASSERT_EQ(probe.status, 0) << probe.err;
  EXPECT_EQ(probe.out, "h264,320,240,11\n");
}

// `fleetsim run --render-png` paints the run's frames as it computes them: the same files,
// byte for byte, as `fleetsim render` of its log; `--render-video` has a frame a picture.
TEST_F(RenderCli, ARunPaintsWhileItRunsThePicturesRenderPaintsFromItsLog) {
  auto run = run_command(kFleetsim + " run " + kDiffusion + " --length 2 --quiet --log " +
                             (dir_ / "again.flog").string() + " --render-png " +
                             (dir_ / "live/f_%03d.png").string() +
                             " --render-every 5 --render-size 320x200",
                         dir_, 120);
  ASSERT_EQ(run.status, 0) << run.err;
  auto r = render("--png " + (dir_ / "post/f_%03d.png").string() + " --every 5 --size 320x200");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"f_000.png", "f_005.png", "f_010.png", "f_015.png", "f_020.png"}) {
    ASSERT_TRUE(fs::exists(dir_ / "live" / name)) << name;
    EXPECT_TRUE(testing::slurp(dir_ / "live" / name) == testing::slurp(dir_ / "post" / name))
        << name << " differs";
  }
  EXPECT_FALSE(fs::exists(dir_ / "live" / "f_001.png"));
  if (std::system("command -v ffprobe >/dev/null 2>&1") == 0) {
    run = run_command(kFleetsim + " run " + kDiffusion + " --length 2 --quiet --log '' " +
                          "--render-video " + (dir_ / "run.mp4").string() +
                          " --render-every 2 --render-size 320x240",
                      dir_, 120);
    ASSERT_EQ(run.status, 0) << run.err;
    auto probe = run_command(
        "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
        "stream=nb_read_frames -of csv=p=0 " +
            (dir_ / "run.mp4").string(),
        dir_, 60);
    EXPECT_EQ(probe.out, "11\n") << "ticks 0, 2, ..., 20";
  }
  for (const char* bad :
       {"--render-png f.png", "--render-png 'f%d.png' --render-size 99",
        "--render-video v.mp4 --render-size 641x480", "--render-png 'f%d.png' --view"}) {
    auto refused = run_command(
        kFleetsim + " run " + kDiffusion + " --length 1 --quiet --log '' " + bad, dir_, 60);
    EXPECT_EQ(refused.status, 2) << bad << "\n" << refused.err;
  }
}

TEST_F(RenderCli, MistakesAreRefusedBeforeAnythingIsWritten) {
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"", "nothing to write"},
      {"--png out.png", "--png 'out.png' (expected a file name with one frame-number field"},
      {"--png 'a%d_%d.png'", "one frame-number field"},
      {"--png f%d.png --size 640", "--size '640' (expected WIDTHxHEIGHT"},
      {"--png f%d.png --size 8x8", "16 to 16384"},
      {"--video v.mp4 --size 641x480", "a video's width and height are even"},
      {"--png f%d.png --config " + (dir_ / "none.xml").string(), "none.xml"},
  };
  for (const Case& c : cases) {
    auto r = render(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  auto r = run_command(
      kFleetsim + " render " + kDiffusion + " --png " + (dir_ / "f%d.png").string(), dir_, 60);
  EXPECT_EQ(r.status, 2) << "an experiment file is not a log";
  EXPECT_NE(r.err.find("is not a fleetsim log"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "f0.png")) << "nothing is written";
  r = run_command("env PATH=/nonexistent " + kFleetsim + " render " + (dir_ / "run.flog").string() +
                      " --video " + (dir_ / "v.mp4").string() + " --size 64x64",
                  dir_, 60);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("a video needs the ffmpeg program"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fleetsim
