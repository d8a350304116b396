#include <gtest/gtest.h>

#include <cmath>

#include "log/log_reader.hpp"
#include "log/log_writer.hpp"
#include "log_test_support.hpp"

namespace fleetsim::log {
namespace {

using test::read_file;
using test::TempDir;
using test::write_file;

// --- Without a bitmap: a 10 m x 8 m arena centred on the origin, so field (0, 0) is the
// world point (-5, 4) and field y grows downwards.

LogHeader arena_header() {
  LogHeader h;
  h.arena_width_m = 10;
  h.arena_height_m = 8;
  h.robot_classes = {{"epuck", 0.035}};
  h.object_classes = {{"box", 0}};
  h.robots = {{10, 0, "ep0"}, {11, 0, "ep1"}};
  h.objects = {{20, 0, "o0"}};
  return h;
}

std::vector<LogFrame> arena_frames() {
  LogFrame a;
  a.tick = 0;
  a.status = "status&1";
  a.tags = {"", "a,b", "x;y&z\\"};
  a.robot_id = {10, 11};
  a.robot_class = {0, 0};
  a.robot_x = {-4, 1.25};
  a.robot_y = {3, -2.5};
  a.robot_theta = {0.5, -1.5};
  a.robot_tag = {1, 0};
  a.robot_led = {Color{}, Color{}};
  a.object_id = {20};
  a.object_class = {0};
  a.object_x = {0};
  a.object_y = {0};
  a.object_size = {2};
  a.object_tag = {2};

  LogFrame b = a;
  b.tick = 1;
  b.status = "";
  b.robot_x = {-5, 5};
  b.robot_y = {4, -4};
  b.robot_theta = {0, 3};
  b.object_x = {-6};  // objects may leave the field
  b.object_y = {5};
  b.object_size = {0.5};
  b.object_tag = {0};
  return {a, b};
}

// Written by hand from the grammar (report section 3): robot size = diameter = 2 x 0.035.
constexpr const char* kArenaLog =
    "null\n"
    "10\n"
    "8\n"
    "epuck,0.07\n"
    "epuck,0.07\n"
    "box\n"
    "status\\&1&&1,1,-0.5,a\\,b;;6.25,6.5,1.5,;;&&5,,4,,2,,x\\;y\\&z\\\\;;\n"
    "&&0,0,0,a\\,b;;10,8,-3,;;&&-1,,-1,,0.5,,;;\n";

// --- With a bitmap: 4 x 3 pixels of 0.5 m, top-left corner at world (-1, 0.75).

LogHeader bitmap_header() {
  LogHeader h;
  h.arena_width_m = 2;
  h.arena_height_m = 1.5;
  h.bitmap_width = 4;
  h.bitmap_height = 3;
  h.bitmap_resolution_m = 0.5;
  h.bitmap_top_left = {-1, 0.75};
  h.bitmap = {1, 1, 1, 1,  //
              1, 0, 0, 0,  //
              0, 0, 1, 1};
  h.robot_classes = {{"epuck", 0.125}, {"kilobot", 0.25}};
  h.object_classes = {{"goal", 0}};
  h.robots = {{0, 0, "a"}, {1, 1, "b"}};
  h.objects = {{2, 0, "g"}};
  return h;
}

LogFrame bitmap_frame() {
  LogFrame f;
  f.status = "ok";
  f.tags = {"", "t"};
  f.robot_id = {0, 1};
  f.robot_class = {0, 1};
  f.robot_x = {-0.25, 0.5};
  f.robot_y = {0.5, -0.5};
  f.robot_theta = {0.25, -2};
  f.robot_tag = {1, 0};
  f.robot_led = {Color{}, Color{}};
  f.object_id = {2};
  f.object_class = {0};
  f.object_x = {0};
  f.object_y = {0};
  f.object_size = {0.25};
  f.object_tag = {1};
  return f;
}

// Pixel units: robot a at ((-0.25 + 1) / 0.5, (0.75 - 0.5) / 0.5) = (1.5, 0.5); sizes are
// diameters in pixels (0.25 m / 0.5 = 0.5 and 0.5 m / 0.5 = 1).
constexpr const char* kBitmapLog =
    "4\n"
    "3\n"
    "111110000011\n"
    "epuck,0.5\n"
    "kilobot,1\n"
    "goal\n"
    "ok&&1.5,0.5,-0.25,t;;3,2.5,2,;;&&2,,1.5,,0.5,,t;;\n";

void write_deeco(const std::string& path, const LogHeader& h, const std::vector<LogFrame>& fs) {
  auto writer = make_deeco_log_writer(path);
  writer->begin(h);
  for (const LogFrame& f : fs) writer->write(f.view());
  writer->finish();
}

TEST(DeecoLog, WritesTheGrammarWithoutBitmap) {
  TempDir dir;
  write_deeco(dir.file("a.log"), arena_header(), arena_frames());
  EXPECT_EQ(read_file(dir.file("a.log")), kArenaLog);
}

TEST(DeecoLog, WritesTheGrammarWithBitmap) {
  TempDir dir;
  write_deeco(dir.file("b.log"), bitmap_header(), {bitmap_frame()});
  EXPECT_EQ(read_file(dir.file("b.log")), kBitmapLog);
}

TEST(DeecoLog, ReadsAHandWrittenLogIntoWorldMetres) {
  TempDir dir;
  write_file(dir.file("a.log"), kArenaLog);
  auto reader = LogReader::open(dir.file("a.log"));
  EXPECT_EQ(reader->format(), LogFormat::kDeeco);
  const LogHeader& h = reader->header();
  EXPECT_EQ(h.arena_width_m, 10);
  EXPECT_EQ(h.arena_height_m, 8);
  EXPECT_EQ(h.bitmap_width, 0);
  ASSERT_EQ(h.robot_classes.size(), 1u);
  EXPECT_EQ(h.robot_classes[0].name, "epuck");
  EXPECT_EQ(h.robot_classes[0].radius_m, 0.035);
  ASSERT_EQ(h.robots.size(), 2u);
  EXPECT_EQ(h.robots[1].name, "robot 1");
  ASSERT_EQ(h.objects.size(), 1u);
  EXPECT_EQ(h.objects[0].id, 2u);
  EXPECT_EQ(h.objects[0].name, "object 0");
  ASSERT_EQ(reader->frame_count(), 2u);

  // The arena is centred on the origin, as it was written: world values come back exactly.
  const auto expected = arena_frames();
  for (std::size_t i : {1, 0}) {
    SCOPED_TRACE("frame " + std::to_string(i));
    LogFrame f = reader->read_frame(i);
    EXPECT_EQ(f.tick, static_cast<Tick>(i));
    EXPECT_EQ(f.status, expected[i].status);
    EXPECT_EQ(f.robot_id, (std::vector<EntityId>{0, 1}));
    EXPECT_EQ(f.robot_x, expected[i].robot_x);
    EXPECT_EQ(f.robot_y, expected[i].robot_y);
    EXPECT_EQ(f.robot_theta, expected[i].robot_theta);
    EXPECT_EQ(f.object_x, expected[i].object_x);
    EXPECT_EQ(f.object_y, expected[i].object_y);
    EXPECT_EQ(f.object_size, expected[i].object_size);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(f.tags.at(f.robot_tag[k]), expected[i].tags[expected[i].robot_tag[k]]);
    }
    EXPECT_EQ(f.tags.at(f.object_tag[0]), expected[i].tags[expected[i].object_tag[0]]);
    EXPECT_EQ(f.tags.at(0), "");
  }
}

TEST(DeecoLog, ReadsABitmapLogWithOnePixelPerMetre) {
  TempDir dir;
  write_file(dir.file("b.log"), kBitmapLog);
  auto reader = LogReader::open(dir.file("b.log"));
  const LogHeader& h = reader->header();
  EXPECT_EQ(h.bitmap_width, 4);
  EXPECT_EQ(h.bitmap_height, 3);
  EXPECT_EQ(h.bitmap_resolution_m, 1);
  EXPECT_EQ(h.bitmap, bitmap_header().bitmap);
  EXPECT_EQ(h.arena_width_m, 4);
  EXPECT_EQ(h.bitmap_top_left, (Vec2{-2, 1.5}));
  ASSERT_EQ(h.robot_classes.size(), 2u);
  EXPECT_EQ(h.robot_classes[1].name, "kilobot");
  EXPECT_EQ(h.robot_classes[1].radius_m, 0.5);  // diameter 1 pixel
  LogFrame f = reader->read_frame(0);
  EXPECT_EQ(f.robot_class, (std::vector<std::uint16_t>{0, 1}));
  EXPECT_EQ(f.robot_x, (std::vector<double>{1.5 - 2, 3 - 2}));
  EXPECT_EQ(f.robot_y, (std::vector<double>{1.5 - 0.5, 1.5 - 2.5}));
  EXPECT_EQ(f.robot_theta, (std::vector<double>{0.25, -2}));
  EXPECT_EQ(f.object_size, (std::vector<double>{0.5}));
}

TEST(DeecoLog, EscapesRoundTrip) {
  TempDir dir;
  LogHeader h = arena_header();
  h.robot_classes[0].name = "org.example,Robot\\x";
  h.object_classes[0].name = "a;b&c";
  auto frames = arena_frames();
  const std::string nasty = "&&;;,,\\&;,\\\\ end\\";
  frames[0].status = nasty + "\nsecond line";
  frames[0].tags = {"", nasty, ",", ";", "&", "\\", ",,"};
  frames[0].robot_tag = {1, 6};
  frames[0].object_tag = {5};
  frames[1].tags = frames[0].tags;
  frames[1].robot_tag = {2, 3};
  frames[1].object_tag = {4};
  write_deeco(dir.file("e.log"), h, frames);

  auto reader = LogReader::open(dir.file("e.log"));
  EXPECT_EQ(reader->header().robot_classes[0].name, h.robot_classes[0].name);
  EXPECT_EQ(reader->header().object_classes[0].name, h.object_classes[0].name);
  ASSERT_EQ(reader->frame_count(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    LogFrame f = reader->read_frame(i);
    EXPECT_EQ(f.status, frames[i].status);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(f.tags.at(f.robot_tag[k]), frames[i].tags[frames[i].robot_tag[k]]);
    }
    EXPECT_EQ(f.tags.at(f.object_tag[0]), frames[i].tags[frames[i].object_tag[0]]);
  }
}

TEST(DeecoLog, NumbersRoundTripExactlyInFieldUnits) {
  // Arbitrary doubles: the text is the shortest that reads back as the same field value;
  // world metres differ from the input only by the rounding of the corner offset.
  TempDir dir;
  LogHeader h = arena_header();
  auto frames = arena_frames();
  frames[0].robot_x = {0.1 + 0.2, -1.0 / 3};
  frames[0].robot_theta = {1e-300, -2.718281828459045};
  write_deeco(dir.file("n.log"), h, frames);
  auto reader = LogReader::open(dir.file("n.log"));
  LogFrame f = reader->read_frame(0);
  EXPECT_EQ(f.robot_theta, frames[0].robot_theta);  // negation is exact
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(f.robot_x[k], frames[0].robot_x[k], 1e-15);
  }
}

TEST(DeecoLog, ChangingTheRobotSetIsRefusedWithAClearMessage) {
  TempDir dir;
  auto writer = make_deeco_log_writer(dir.file("x.log"));
  writer->begin(arena_header());
  auto frames = arena_frames();
  writer->write(frames[0].view());
  LogFrame added = frames[1];
  added.robot_id = {10, 12};
  try {
    writer->write(added.view());
    ADD_FAILURE() << "a frame with another robot was accepted";
  } catch (const LogError& e) {
    EXPECT_NE(std::string(e.what()).find("the DEECo log needs a fixed set of robots; use the "
                                         "frame log for runs that add or remove entities"),
              std::string::npos)
        << e.what();
  }
  LogFrame fewer = frames[1];
  fewer.object_id.clear();
  fewer.object_class.clear();
  fewer.object_x.clear();
  fewer.object_y.clear();
  fewer.object_size.clear();
  fewer.object_tag.clear();
  EXPECT_THROW(writer->write(fewer.view()), LogError);
  writer->finish();
}

TEST(DeecoLog, ReorderedEntitiesAreWrittenInHeaderOrder) {
  TempDir dir;
  auto frames = arena_frames();
  LogFrame swapped = frames[0];
  std::swap(swapped.robot_id[0], swapped.robot_id[1]);
  std::swap(swapped.robot_x[0], swapped.robot_x[1]);
  std::swap(swapped.robot_y[0], swapped.robot_y[1]);
  std::swap(swapped.robot_theta[0], swapped.robot_theta[1]);
  std::swap(swapped.robot_tag[0], swapped.robot_tag[1]);
  write_deeco(dir.file("s.log"), arena_header(), {swapped, frames[1]});
  EXPECT_EQ(read_file(dir.file("s.log")), kArenaLog);
}

TEST(DeecoLog, KilledRunShowsItsCompleteLines) {
  TempDir dir;
  std::string text = kArenaLog;
  text += "half&&1,2,3";  // the writer died in the middle of a line
  write_file(dir.file("k.log"), text);
  auto reader = LogReader::open(dir.file("k.log"));
  EXPECT_EQ(reader->frame_count(), 2u);
  EXPECT_EQ(reader->read_frame(1).status, "");

  // Only the header: zero frames.
  write_file(dir.file("h.log"), "null\n10\n8\nepuck,0.07\nbox\n");
  auto empty = LogReader::open(dir.file("h.log"));
  EXPECT_EQ(empty->frame_count(), 0u);
  EXPECT_EQ(empty->header().robots.size(), 1u);
  EXPECT_EQ(empty->header().objects.size(), 1u);
}

TEST(DeecoLog, MalformedLinesGiveLogErrorsWithTheLineNumber) {
  TempDir dir;
  auto expect_read_error = [&](const std::string& body, const std::string& expected) {
    write_file(dir.file("m.log"), std::string("null\n10\n8\nepuck,0.07\n") + body);
    auto reader = LogReader::open(dir.file("m.log"));
    ASSERT_EQ(reader->frame_count(), 1u);
    try {
      reader->read_frame(0);
      ADD_FAILURE() << "read " << body;
    } catch (const LogError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  expect_read_error("s&&1,2,x,;;&&\n", "line 5: angle 'x' is not a number");
  expect_read_error("s&&1,2,3,;;1,2,3,;;&&\n", "line 5: 2 robots");
  expect_read_error("s&&1,2,3;;&&\n", "not 'x,y,angle,tag'");
  expect_read_error("s&&1,2,3,;;&&1,,2,,;;\n", "1 objects where the header lists 1 and 0");

  write_file(dir.file("bad.log"), "null\n10\nten\n");
  EXPECT_THROW(LogReader::open(dir.file("bad.log")), LogError);
  write_file(dir.file("bits.log"), "3\n2\n10101\n");
  EXPECT_THROW(LogReader::open(dir.file("bits.log")), LogError);
}

TEST(DeecoLog, SameFramesGiveIdenticalBytes) {
  TempDir dir;
  write_deeco(dir.file("a"), bitmap_header(), {bitmap_frame(), bitmap_frame()});
  write_deeco(dir.file("b"), bitmap_header(), {bitmap_frame(), bitmap_frame()});
  EXPECT_EQ(read_file(dir.file("a")), read_file(dir.file("b")));
}

}  // namespace
}  // namespace fleetsim::log
