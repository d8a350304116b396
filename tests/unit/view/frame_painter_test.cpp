// Pictures without a browser (`fleetsim render`, src/view/frame_painter.hpp): the colours at
// known places of a known frame are the page's (the outside, the floor, the bitmap and walls,
// a robot's body, heading stripe and rim, a foot-bot's LED dots and beacon, objects), the
// colourings of a view configuration apply, and a PNG written reads back the same.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/test_files.hpp"
#include "view/frame_painter.hpp"

namespace fleetsim::view {
namespace {

using RGB = std::array<int, 3>;

/// A 4 m x 3 m arena centred at (1, -0.5) (off the origin), a bitmap with one obstacle block,
/// one wall; an e-puck (one LED) heading +x at (0, -0.5), a foot-bot (12 ring LEDs and a beacon)
/// heading +y at (2, 0), an object at (-0.5, -1.5).
struct Scene {
  log::LogHeader h;
  log::LogFrame f;
  Scene() {
    h.experiment = "painter";
    h.tick_period_ns = 100'000'000;
    h.every = 1;
    h.arena_width_m = 4;
    h.arena_height_m = 3;
    h.arena_center = {1, -0.5};
    h.bitmap_width = 40;
    h.bitmap_height = 30;
    h.bitmap_resolution_m = 0.1;
    h.bitmap_top_left = {-1, 1};
    h.bitmap.assign(40 * 30, 0);
    for (int j = 2; j < 8; ++j)
      for (int i = 33; i < 38; ++i) h.bitmap[j * 40 + i] = 1;  // world x 2.3 .. 2.8, y 0.2 .. 0.8
    h.segments.push_back({{-0.8, -1.8}, {0.2, -1.8}});
    h.kinds = {{"epuck", 0.05, 1, 0}, {"footbot", 0.1, 13, 0.8}};
    h.object_classes = {{"food"}};
    h.robots = {{0, 0, "ep0"}, {1, 1, "fb1"}};
    h.objects = {{2, 0, "food2"}};
    h.robot_columns = log::required_robot_columns();
    h.robot_columns.push_back(log::led_column(13));
    h.object_columns = log::required_object_columns();
    f.tags = {"", "hungry"};
    f.set_robot("id", h, std::vector<EntityId>{0, 1});
    f.set_robot("kind", h, std::vector<std::uint16_t>{0, 1});
    f.set_robot("x", h, std::vector<double>{0, 2});
    f.set_robot("y", h, std::vector<double>{-0.5, 0});
    f.set_robot("theta", h, std::vector<double>{0, kPi / 2});
    f.set_robot("tag", h, std::vector<std::uint32_t>{1, 0});
    std::vector<Color> leds(26, Color{0, 0, 0, 0});
    leds[0] = {0, 200, 0, 255};          // the e-puck's LED: green
    leds[13] = {255, 0, 255, 255};       // the foot-bot's LED 0 (ahead): magenta
    leds[13 + 12] = {255, 255, 0, 255};  // its beacon: yellow
    f.set_robot("leds", h, leds);
    f.set_object("id", h, std::vector<EntityId>{2});
    f.set_object("class", h, std::vector<std::uint16_t>{0});
    f.set_object("x", h, std::vector<double>{-0.5});
    f.set_object("y", h, std::vector<double>{-1.5});
    f.set_object("size", h, std::vector<double>{0.2});
    f.set_object("tag", h, std::vector<std::uint32_t>{0});
  }
};

struct Picture {
  const FramePainter& painter;
  std::vector<std::uint8_t> rgb;
  /// The pixel under world point (x, y).
  RGB at(double x, double y) const {
    auto [px, py] = painter.to_image(x, y);
    const std::size_t i =
        (static_cast<std::size_t>(py) * static_cast<std::size_t>(painter.width()) +
         static_cast<std::size_t>(px)) *
        3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

::testing::AssertionResult near(const RGB& got, const RGB& want, int tol = 1) {
  for (int k = 0; k < 3; ++k)
    if (std::abs(got[k] - want[k]) > tol)
      return ::testing::AssertionFailure()
             << "got (" << got[0] << ", " << got[1] << ", " << got[2] << "), expected (" << want[0]
             << ", " << want[1] << ", " << want[2] << ")";
  return ::testing::AssertionSuccess();
}

constexpr RGB kRed{255, 0, 0}, kWhite{255, 255, 255}, kBlack{0, 0, 0};

TEST(FramePainter, TheDefaultPictureHasThePagesColoursWhereTheFrameSays) {
  Scene s;
  const FramePainter painter(s.h, default_view_config(), 800, 600);
  // The page's fit: the arena with 3 % margins (600 / 3.18 pixels a metre).
  EXPECT_NEAR(painter.scale(), 600 / 3.18, 1e-9);
  Picture p{painter, {}};
  painter.paint(s.f, p.rgb);
  ASSERT_EQ(p.rgb.size(), 800u * 600 * 3);
  EXPECT_TRUE(near({p.rgb[0], p.rgb[1], p.rgb[2]}, {217, 218, 221})) << "the outside";
  EXPECT_TRUE(near(p.at(1, 0.9), kWhite)) << "the floor";
  EXPECT_TRUE(near(p.at(2.55, 0.5), kBlack)) << "the bitmap's block";
  EXPECT_TRUE(near(p.at(-0.3, -1.8), kBlack)) << "the wall";
  EXPECT_TRUE(near(p.at(-0.3, -1.75), kWhite)) << "beside the wall";
  // The e-puck (9.4 pixels in radius): red, the heading stripe ahead x 0.3, the rim x 0.55.
  const double r = 0.05;
  EXPECT_TRUE(near(p.at(-0.45 * r, -0.5), kRed)) << "behind its centre";
  EXPECT_TRUE(near(p.at(0.5 * r, -0.5), {77, 0, 0})) << "its heading stripe";
  EXPECT_TRUE(near(p.at(0, -0.5 + 0.5 * r), kRed)) << "beside the stripe";
  EXPECT_TRUE(near(p.at(0, -0.5 - 0.92 * r), {140, 0, 0})) << "its rim";
  EXPECT_TRUE(near(p.at(0, -0.5 - 1.2 * r), kWhite)) << "outside it";
  // The foot-bot heading +y: LED 0 straight ahead at 0.75 r, its beacon at the centre.
  const double R = 0.1;
  EXPECT_TRUE(near(p.at(2, 0.75 * R), {255, 0, 255})) << "ring LED 0";
  EXPECT_TRUE(near(p.at(2, 0), {255, 255, 0})) << "the beacon";
  EXPECT_TRUE(near(p.at(2 - 0.75 * R, 0), kRed)) << "an LED that is off (LED 3): the body";
  EXPECT_TRUE(near(p.at(2, -0.5 * R), kRed)) << "behind its centre";
  // The object: a yellow square 0.2 m wide (its corner is inside).
  EXPECT_TRUE(near(p.at(-0.5 + 0.09, -1.5 + 0.09), {255, 217, 0}));
  EXPECT_TRUE(near(p.at(-0.5 + 0.12, -1.5), kWhite));
  EXPECT_TRUE(painter.unsupported().empty());
}

// A box-shaped kind (0.3 m x 0.1 m) is drawn as that box turned by the robot's heading, not
// as its bounding circle.
TEST(FramePainter, BoxesAreDrawnAsBoxesTurnedByTheirHeading) {
  Scene s;
  log::LogKind crate{"crate", std::sqrt(0.15 * 0.15 + 0.05 * 0.05), 0, 0};
  crate.shape = log::LogShape::kBox;
  crate.half_length_m = 0.15;
  crate.half_width_m = 0.05;
  s.h.kinds.push_back(crate);
  s.h.robots.push_back({3, 2, "crate3"});
  const double a = kPi / 6, cx = 0.5, cy = 0.5;  // heading 30 degrees
  s.f.set_robot("id", s.h, std::vector<EntityId>{0, 1, 3});
  s.f.set_robot("kind", s.h, std::vector<std::uint16_t>{0, 1, 2});
  s.f.set_robot("x", s.h, std::vector<double>{0, 2, cx});
  s.f.set_robot("y", s.h, std::vector<double>{-0.5, 0, cy});
  s.f.set_robot("theta", s.h, std::vector<double>{0, kPi / 2, a});
  s.f.set_robot("tag", s.h, std::vector<std::uint32_t>{1, 0, 0});
  s.f.set_robot("leds", s.h, std::vector<Color>(39, Color{0, 0, 0, 0}));
  const FramePainter painter(s.h, default_view_config(), 800, 600);
  Picture p{painter, {}};
  painter.paint(s.f, p.rgb);
  // A point of the box's frame (u along the heading, v across it), in the world.
  auto at = [&](double u, double v) {
    return p.at(cx + u * std::cos(a) - v * std::sin(a), cy + u * std::sin(a) + v * std::cos(a));
  };
  EXPECT_TRUE(near(at(-0.08, 0), kRed)) << "inside, behind its centre";
  EXPECT_TRUE(near(at(-0.08, 0.03), kRed)) << "inside, off its axis";
  EXPECT_TRUE(near(at(-0.146, 0), {140, 0, 0})) << "its rim, at its back";
  // Inside the bounding circle (0.158 m) but outside the box: the floor.
  EXPECT_TRUE(near(at(0, 0.08), kWhite)) << "beside its long side";
  EXPECT_TRUE(near(at(0, -0.12), kWhite)) << "beside its long side";
  // A corner of the box had it not been turned: outside the turned box.
  EXPECT_TRUE(near(p.at(cx - 0.14, cy + 0.045), kWhite)) << "an unturned box's corner";
}

TEST(FramePainter, AViewConfigurationsColouringsAndLayerOrderApply) {
  Scene s;
  auto paint = [&](const std::string& xml) {
    Diagnostics diags;
    auto config = parse_view_config(xml, "view.xml", diags);
    EXPECT_TRUE(config) << diags.str();
    auto painter = std::make_unique<FramePainter>(s.h, *config, 800, 600);
    Picture p{*painter, {}};
    painter->paint(s.f, p.rgb);
    return std::make_pair(std::move(painter), std::move(p.rgb));
  };
  auto at = [](const auto& pic, double x, double y) {
    return Picture{*pic.first, pic.second}.at(x, y);
  };
  // By kind; LEDs not drawn as dots; the map blue; the background over the floor.
  auto by_kind = paint(R"(<view><background color="0,0,0.5,0.5"/><map color="blue"/>)"
                       R"(<robots by="kind" leds="false"><default color="red"/>)"
                       R"(<coloring value="footbot" color="0,0.6,0"/></robots></view>)");
  EXPECT_TRUE(near(at(by_kind, 2, -0.02), {0, 153, 0})) << "the foot-bot's kind colour, no beacon";
  EXPECT_TRUE(near(at(by_kind, -0.02, -0.5), kRed)) << "the e-puck: the default";
  EXPECT_TRUE(near(at(by_kind, 2.55, 0.5), {0, 0, 255})) << "the map";
  EXPECT_TRUE(near(at(by_kind, 1, 0.9), {128, 128, 191})) << "half-transparent navy on white";
  // By LED: the body takes the first lit LED; by tag; an invisible object layer.
  auto by_led = paint(R"(<view><robots by="led"/><objects transparent="true"/></view>)");
  EXPECT_TRUE(near(at(by_led, -0.02, -0.5), {0, 200, 0})) << "the e-puck's LED";
  EXPECT_TRUE(near(at(by_led, 2, -0.05), {255, 0, 255})) << "the foot-bot's first lit LED";
  EXPECT_TRUE(near(at(by_led, -0.5 + 0.09, -1.5 + 0.09), kWhite)) << "no object";
  auto by_tag =
      paint(R"(<view><robots by="tag" color="gray"><coloring value="hungry" color="orange"/>)"
            R"(</robots><objects label="id"/></view>)");
  EXPECT_TRUE(near(at(by_tag, -0.02, -0.5), {255, 140, 0}, 2)) << "the e-puck is hungry";
  EXPECT_TRUE(near(at(by_tag, 2, -0.05), {128, 128, 128}, 2)) << "the foot-bot is not";
  EXPECT_EQ(by_tag.first->unsupported(), std::vector<std::string>{"labels"});
}

// A <field> layer (an environment layer's map): its PNG stretched over the 4 x 3 m arena, under
// the map and the robots. A 4 x 3 picture, one pixel a square metre: black but for the top
// right pixel (world x 2..3, y 0..1), white, and the one below the top left (x -1..0, y
// -1..0), orange. The picture shows them there; the arena's other places are black; the robots
// and the bitmap's block are drawn over it; nothing is reported as not drawn.
TEST(FramePainter, AFieldLayerDrawsItsPictureOverTheArena) {
  Scene s;
  const auto dir = testing::fresh_test_dir("painter");
  std::vector<std::uint8_t> px(4 * 3 * 3, 0);
  for (int c = 0; c < 3; ++c) px[(0 * 4 + 3) * 3 + c] = 255;
  px[(1 * 4 + 0) * 3 + 0] = 255, px[(1 * 4 + 0) * 3 + 1] = 140;
  write_png((dir / "heat.png").string(), 4, 3, px);
  std::ofstream(dir / "view.xml") << R"(<view><field image="heat.png"/></view>)";
  Diagnostics diags;
  auto config = load_view_config((dir / "view.xml").string(), diags);
  ASSERT_TRUE(config) << diags.str();
  const FramePainter painter(s.h, *config, 800, 600);
  Picture p{painter, {}};
  painter.paint(s.f, p.rgb);
  EXPECT_TRUE(near(p.at(2.9, 0.2), kWhite)) << "the white pixel";
  EXPECT_TRUE(near(p.at(-0.5, -0.8), {255, 140, 0})) << "the orange pixel";
  EXPECT_TRUE(near(p.at(0.5, 0.5), kBlack)) << "a black pixel";
  EXPECT_TRUE(near(p.at(1.5, -1.5), kBlack)) << "another";
  EXPECT_TRUE(near(p.at(-0.45 * 0.05, -0.5), kRed)) << "the e-puck, over it";
  EXPECT_TRUE(painter.unsupported().empty());
}

TEST(FramePainter, APngReadsBackTheSamePixels) {
  Scene s;
  const FramePainter painter(s.h, default_view_config(), 320, 240);
  std::vector<std::uint8_t> rgb;
  painter.paint(s.f, rgb);
  const auto dir = testing::fresh_test_dir("frame_painter");
  write_png((dir / "f.png").string(), 320, 240, rgb);
  int w = 0, h = 0;
  EXPECT_EQ(read_png((dir / "f.png").string(), w, h), rgb);
  EXPECT_EQ(w, 320);
  EXPECT_EQ(h, 240);
  EXPECT_THROW(write_png((dir / "no" / "such" / "dir.png").string(), 320, 240, rgb),
               std::runtime_error);
  EXPECT_THROW(FramePainter(s.h, default_view_config(), 0, 240), std::invalid_argument);
}

}  // namespace
}  // namespace fleetsim::view
