#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "log/deeco_log_reader.hpp"
#include "log/deeco_text.hpp"
#include "log/log_reader.hpp"
#include "log/log_writer.hpp"
#include "log_test_support.hpp"

// clang says whether a sanitizer is on through __has_feature, not gcc's macros.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FLEETSIM_CLANG_SANITIZER 1
#endif
#endif
#ifndef FLEETSIM_CLANG_SANITIZER
#define FLEETSIM_CLANG_SANITIZER 0
#endif

namespace fleetsim::log {
namespace {

using test::contains;
using test::ObjectRows;
using test::read_file;
using test::RobotRows;
using test::set_objects;
using test::set_robots;
using test::set_standard_columns;
using test::TempDir;
using test::write_file;

template <class T>
std::vector<T> vec(std::span<const T> s) {
  return {s.begin(), s.end()};
}

// The fields a DEECo log carries, as typed rows, and the frame made of them.
struct Cycle {
  Tick tick = 0;
  std::string status;
  std::vector<std::string> tags;
  RobotRows robots;
  ObjectRows objects;

  LogFrame frame(const LogHeader& h) const {
    LogFrame f;
    f.tick = tick;
    f.status = status;
    f.tags = tags;
    set_robots(f, h, robots);
    set_objects(f, h, objects);
    return f;
  }
};

// --- Without a bitmap: a 10 m x 8 m arena centred on the origin, so field (0, 0) is the
// world point (-5, 4) and field y grows downwards.

LogHeader arena_header() {
  LogHeader h;
  h.arena_width_m = 10;
  h.arena_height_m = 8;
  h.kinds = {{"epuck", 0.035, 1, 0}};
  h.object_classes = {{"box"}};
  h.robots = {{10, 0, "ep0"}, {11, 0, "ep1"}};
  h.objects = {{20, 0, "o0"}};
  set_standard_columns(h, 1);
  return h;
}

std::vector<Cycle> arena_cycles() {
  Cycle a;
  a.tick = 0;
  a.status = "status&1";
  a.tags = {"", "a,b", "x;y&z\\"};
  a.robots.id = {10, 11};
  a.robots.kind = {0, 0};
  a.robots.x = {-4, 1.25};
  a.robots.y = {3, -2.5};
  // Headings whose playground angles (theta + pi/2) are exact: pi/2 and 0.
  a.robots.theta = {0, -kPi / 2};
  a.robots.tag = {1, 0};
  a.robots.led = {Color{}, Color{}};
  a.objects.id = {20};
  a.objects.cls = {0};
  a.objects.x = {0};
  a.objects.y = {0};
  a.objects.size = {2};
  a.objects.tag = {2};

  Cycle b = a;
  b.tick = 1;
  b.status = "";
  b.robots.x = {-5, 5};
  b.robots.y = {4, -4};
  b.robots.theta = {kPi / 2, -kPi / 2};  // playground angles pi and 0
  b.objects.x = {-6};                    // objects may leave the field
  b.objects.y = {5};
  b.objects.size = {0.5};
  b.objects.tag = {0};
  return {a, b};
}

std::vector<LogFrame> frames_of(const LogHeader& h, const std::vector<Cycle>& cycles) {
  std::vector<LogFrame> out;
  for (const Cycle& c : cycles) out.push_back(c.frame(h));
  return out;
}

// Written by hand from the playground program's writer (EnvironmentImpl.writeHeader and
// writeSimulationLogs): `---` after each header section; a robot's size is its radius
// (0.035); robot fields separated by `,,`; numbers as Java's Double.toString prints them
// (`1.0`; pi/2 and pi as Java prints Math.PI / 2 and Math.PI); the angle a moves a robot by
// (sin a, cos a) in the field (y down): theta + pi/2; an object's size is half its width.
constexpr const char* kArenaLog =
    "null\n"
    "10\n"
    "8\n"
    "---\n"
    "epuck,0.035\n"
    "epuck,0.035\n"
    "---\n"
    "box\n"
    "---\n"
    "status\\&1&&1.0,,1.0,,1.5707963267948966,,a\\,b;;6.25,,6.5,,0.0,,;;&&5.0,,4.0,,1.0,,"
    "x\\;y\\&z\\\\;;\n"
    "&&0.0,,0.0,,3.141592653589793,,a\\,b;;10.0,,8.0,,0.0,,;;&&-1.0,,-1.0,,0.25,,;;\n";

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
  h.kinds = {{"epuck", 0.125, 1, 0}, {"kilobot", 0.25, 1, 0}};
  h.object_classes = {{"goal"}};
  h.robots = {{0, 0, "a"}, {1, 1, "b"}};
  h.objects = {{2, 0, "g"}};
  set_standard_columns(h, 1);
  return h;
}

LogFrame bitmap_frame() {
  Cycle c;
  c.status = "ok";
  c.tags = {"", "t"};
  c.robots.id = {0, 1};
  c.robots.kind = {0, 1};
  c.robots.x = {-0.25, 0.5};
  c.robots.y = {0.5, -0.5};
  c.robots.theta = {-kPi / 2, kPi / 2};  // playground angles 0 and pi
  c.robots.tag = {1, 0};
  c.robots.led = {Color{}, Color{}};
  c.objects.id = {2};
  c.objects.cls = {0};
  c.objects.x = {0};
  c.objects.y = {0};
  c.objects.size = {0.25};
  c.objects.tag = {1};
  return c.frame(bitmap_header());
}

// Pixel units: robot a at ((-0.25 + 1) / 0.5, (0.75 - 0.5) / 0.5) = (1.5, 0.5); sizes are
// radii in pixels (0.125 m / 0.5 = 0.25 and 0.25 m / 0.5 = 0.5); the encoding column by
// column (columns 110, 100, 101, 101 from the rows 1111, 1000, 0011); the goal's 0.5 pixel
// width is written as its half, 0.25.
constexpr const char* kBitmapLog =
    "4\n"
    "3\n"
    "110100101101\n"
    "---\n"
    "epuck,0.25\n"
    "kilobot,0.5\n"
    "---\n"
    "goal\n"
    "---\n"
    "ok&&1.5,,0.5,,0.0,,t;;3.0,,2.5,,3.141592653589793,,;;&&2.0,,1.5,,0.25,,t;;\n";

void write_deeco(const std::string& path, const LogHeader& h, const std::vector<LogFrame>& fs) {
  auto writer = make_deeco_log_writer(path);
  writer->begin(h);
  for (const LogFrame& f : fs) writer->write(f.view());
  writer->finish();
}

TEST(DeecoLog, WritesTheGrammarWithoutBitmap) {
  TempDir dir;
  write_deeco(dir.file("a.log"), arena_header(), frames_of(arena_header(), arena_cycles()));
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
  ASSERT_EQ(h.kinds.size(), 1u);
  EXPECT_EQ(h.kinds[0].name, "epuck");
  EXPECT_EQ(h.kinds[0].radius_m, 0.035);
  EXPECT_EQ(h.kinds[0].led_count, 0u);  // the format has no LEDs
  ASSERT_EQ(h.robots.size(), 2u);
  EXPECT_EQ(h.robots[1].name, "robot 1");
  ASSERT_EQ(h.objects.size(), 1u);
  EXPECT_EQ(h.objects[0].id, 2u);
  EXPECT_EQ(h.objects[0].name, "object 0");
  EXPECT_EQ(column_index(h.robot_columns, "leds"), -1);
  EXPECT_EQ(h.robot_columns.size(), required_robot_columns().size());
  ASSERT_EQ(reader->frame_count(), 2u);

  // The arena is centred on the origin, as it was written: world values come back exactly.
  const auto expected = arena_cycles();
  for (std::size_t i : {1, 0}) {
    SCOPED_TRACE("frame " + std::to_string(i));
    LogFrame f = reader->read_frame(i);
    const Cycle& e = expected[i];
    EXPECT_EQ(f.tick, static_cast<Tick>(i));
    EXPECT_EQ(f.status, e.status);
    EXPECT_EQ(vec(f.robot<EntityId>("id", h)), (std::vector<EntityId>{0, 1}));
    EXPECT_EQ(vec(f.robot<double>("x", h)), e.robots.x);
    EXPECT_EQ(vec(f.robot<double>("y", h)), e.robots.y);
    EXPECT_EQ(vec(f.robot<double>("theta", h)), e.robots.theta);
    EXPECT_EQ(vec(f.object<double>("x", h)), e.objects.x);
    EXPECT_EQ(vec(f.object<double>("y", h)), e.objects.y);
    EXPECT_EQ(vec(f.object<double>("size", h)), e.objects.size);
    const auto tags = f.robot<std::uint32_t>("tag", h);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(f.tags.at(tags[k]), e.tags[e.robots.tag[k]]);
    }
    EXPECT_EQ(f.tags.at(f.object<std::uint32_t>("tag", h)[0]), e.tags[e.objects.tag[0]]);
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
  ASSERT_EQ(h.kinds.size(), 2u);
  EXPECT_EQ(h.kinds[1].name, "kilobot");
  EXPECT_EQ(h.kinds[1].radius_m, 0.5);  // radius half a pixel
  LogFrame f = reader->read_frame(0);
  EXPECT_EQ(vec(f.robot<std::uint16_t>("kind", h)), (std::vector<std::uint16_t>{0, 1}));
  EXPECT_EQ(vec(f.robot<double>("x", h)), (std::vector<double>{1.5 - 2, 3 - 2}));
  EXPECT_EQ(vec(f.robot<double>("y", h)), (std::vector<double>{1.5 - 0.5, 1.5 - 2.5}));
  EXPECT_EQ(vec(f.robot<double>("theta", h)), (std::vector<double>{-kPi / 2, kPi / 2}));
  EXPECT_EQ(vec(f.object<double>("size", h)), (std::vector<double>{0.5}));
}

// Numbers as Java's Double.toString prints them (the playground writes them so): a decimal
// point always, plain from 10^-3 to below 10^7, else d.dddE<n>.
TEST(DeecoLog, NumbersAreWrittenAsJavaPrintsDoubles) {
  auto java = [](double v) {
    std::string s;
    deeco::append_java_number(s, v);
    return s;
  };
  EXPECT_EQ(java(1), "1.0");
  EXPECT_EQ(java(-0.5), "-0.5");
  EXPECT_EQ(java(100), "100.0");
  EXPECT_EQ(java(0.001), "0.001");
  EXPECT_EQ(java(0.0015), "0.0015");
  EXPECT_EQ(java(1e-4), "1.0E-4");
  EXPECT_EQ(java(9999999), "9999999.0");
  EXPECT_EQ(java(1e7), "1.0E7");
  EXPECT_EQ(java(123456789), "1.23456789E8");
  EXPECT_EQ(java(-2.5e-300), "-2.5E-300");
  EXPECT_EQ(java(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(java(0.0), "0.0");
  EXPECT_EQ(java(-0.0), "-0.0");
  EXPECT_EQ(java(std::nan("")), "NaN");
  EXPECT_EQ(java(-INFINITY), "-Infinity");
  // And they read back.
  for (double v : {1e-4, 1.23456789e8, -2.5e-300, 0.1 + 0.2, -double(INFINITY)}) {
    double r = 0;
    ASSERT_TRUE(deeco::parse_number(java(v), r)) << java(v);
    EXPECT_EQ(r, v);
  }
  double r = 0;
  EXPECT_TRUE(deeco::parse_number("NaN", r) && std::isnan(r));
  EXPECT_TRUE(deeco::parse_number("Infinity", r) && r == INFINITY);
}

// Logs in the architecture document's grammar (fleetsim's DEECo logs before they followed the
// program: no `---` lines, a robot's size its diameter, its fields separated by one comma,
// angles measured from +x towards +y down, an object's full width) are still read.
TEST(DeecoLog, ReadsTheDocumentsGrammarToo) {
  TempDir dir;
  write_file(dir.file("r.log"),
             "null\n10\n8\nepuck,0.07\nepuck,0.07\nbox\n"
             "status\\&1&&1,1,-0.5,a\\,b;;6.25,6.5,1.5,;;&&5,,4,,2,,x\\;y\\&z\\\\;;\n");
  DeecoLogReader reader(dir.file("r.log"));
  EXPECT_FALSE(reader.playground_grammar());
  const LogHeader& h = reader.header();
  ASSERT_EQ(h.kinds.size(), 1u);
  EXPECT_EQ(h.kinds[0].radius_m, 0.035);
  LogFrame f = reader.read_frame(0);
  EXPECT_EQ(f.status, "status&1");
  EXPECT_EQ(vec(f.robot<double>("x", h)), (std::vector<double>{-4, 1.25}));
  EXPECT_EQ(vec(f.robot<double>("y", h)), (std::vector<double>{3, -2.5}));
  EXPECT_EQ(vec(f.robot<double>("theta", h)), (std::vector<double>{0.5, -1.5}));
  EXPECT_EQ(vec(f.object<double>("size", h)), (std::vector<double>{2}));
  EXPECT_EQ(f.tags.at(f.object<std::uint32_t>("tag", h)[0]), "x;y&z\\");
}

// What the playground writes, as its own code writes it: Java class names, integer field
// sizes, no special characters; a lone backslash in a tag (the playground does not escape it)
// stays a backslash.
TEST(DeecoLog, ReadsALogAsThePlaygroundWritesIt) {
  TempDir dir;
  write_file(dir.file("p.log"),
             "null\n"
             "20\n"
             "10\n"
             "---\n"
             "cz.cuni.mff.d3s.deeco.playground.examples.simple.SimpleRobot,0.5\n"
             "---\n"
             "cz.cuni.mff.d3s.deeco.playground.examples.simple.Item\n"
             "---\n"
             "&&2.0,,3.0,,0.0,,a\\b;;&&4.0,,5.0,,1.5,,;;\n"
             "end&&2.0,,3.5,,3.141592653589793,,;;&&4.0,,5.0,,1.5,,;;\n");
  DeecoLogReader reader(dir.file("p.log"));
  EXPECT_TRUE(reader.playground_grammar());
  const LogHeader& h = reader.header();
  EXPECT_EQ(h.arena_width_m, 20);
  EXPECT_EQ(h.kinds.at(0).radius_m, 0.5);
  EXPECT_EQ(h.object_classes.at(0).name, "cz.cuni.mff.d3s.deeco.playground.examples.simple.Item");
  ASSERT_EQ(reader.frame_count(), 2u);
  LogFrame f = reader.read_frame(0);
  // Field (2, 3) of a 20 x 10 field centred on the origin; angle 0 moves it down the field.
  EXPECT_EQ(vec(f.robot<double>("x", h)), (std::vector<double>{-8}));
  EXPECT_EQ(vec(f.robot<double>("y", h)), (std::vector<double>{2}));
  EXPECT_EQ(vec(f.robot<double>("theta", h)), (std::vector<double>{-kPi / 2}));
  EXPECT_EQ(f.tags.at(f.robot<std::uint32_t>("tag", h)[0]), "a\\b");
  EXPECT_EQ(vec(f.object<double>("size", h)), (std::vector<double>{3}));
  LogFrame g = reader.read_frame(1);
  EXPECT_EQ(g.status, "end");
  EXPECT_EQ(vec(g.robot<double>("theta", h)), (std::vector<double>{kPi / 2}));  // up the field
}

TEST(DeecoLog, ABitmapLogReadWithItsResolutionGivesMetres) {
  TempDir dir;
  write_file(dir.file("b.log"), kBitmapLog);
  DeecoLogReader reader(dir.file("b.log"), 0.5);
  const LogHeader& h = reader.header();
  EXPECT_EQ(h.bitmap_resolution_m, 0.5);
  EXPECT_EQ(h.arena_width_m, 2);
  EXPECT_EQ(h.kinds[1].radius_m, 0.25);
  LogFrame f = reader.read_frame(0);
  // Centred on the origin: the written world frame shifted by the bitmap's centre (0, 0).
  EXPECT_EQ(vec(f.robot<double>("x", h)), (std::vector<double>{-0.25, 0.5}));
  EXPECT_EQ(vec(f.robot<double>("y", h)), (std::vector<double>{0.5, -0.5}));
  EXPECT_EQ(vec(f.object<double>("size", h)), (std::vector<double>{0.25}));
}

TEST(DeecoLog, EscapesRoundTrip) {
  TempDir dir;
  LogHeader h = arena_header();
  h.kinds[0].name = "org.example,Robot\\x";
  h.object_classes[0].name = "a;b&c";
  auto cycles = arena_cycles();
  const std::string nasty = "&&;;,,\\&;,\\\\ end\\";
  cycles[0].status = nasty + "\nsecond line";
  cycles[0].tags = {"", nasty, ",", ";", "&", "\\", ",,"};
  cycles[0].robots.tag = {1, 6};
  cycles[0].objects.tag = {5};
  cycles[1].tags = cycles[0].tags;
  cycles[1].robots.tag = {2, 3};
  cycles[1].objects.tag = {4};
  write_deeco(dir.file("e.log"), h, frames_of(h, cycles));

  auto reader = LogReader::open(dir.file("e.log"));
  const LogHeader& r = reader->header();
  EXPECT_EQ(r.kinds[0].name, h.kinds[0].name);
  EXPECT_EQ(r.object_classes[0].name, h.object_classes[0].name);
  ASSERT_EQ(reader->frame_count(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    LogFrame f = reader->read_frame(i);
    const Cycle& c = cycles[i];
    EXPECT_EQ(f.status, c.status);
    const auto tags = f.robot<std::uint32_t>("tag", r);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(f.tags.at(tags[k]), c.tags[c.robots.tag[k]]);
    }
    EXPECT_EQ(f.tags.at(f.object<std::uint32_t>("tag", r)[0]), c.tags[c.objects.tag[0]]);
  }
}

TEST(DeecoLog, NumbersRoundTripExactlyInFieldUnits) {
  // Arbitrary doubles: the text is the shortest that reads back as the same field value;
  // world metres differ from the input only by the rounding of the corner offset.
  TempDir dir;
  LogHeader h = arena_header();
  auto cycles = arena_cycles();
  cycles[0].robots.x = {0.1 + 0.2, -1.0 / 3};
  cycles[0].robots.theta = {1e-300, -2.718281828459045};
  write_deeco(dir.file("n.log"), h, frames_of(h, cycles));
  auto reader = LogReader::open(dir.file("n.log"));
  LogFrame f = reader->read_frame(0);
  const LogHeader& r = reader->header();
  // The playground's angle is theta + pi/2: a heading comes back within the rounding of
  // that sum (a few units of the last place of pi).
  for (std::size_t k = 0; k < 2; ++k)
    EXPECT_NEAR(f.robot<double>("theta", r)[k], cycles[0].robots.theta[k], 1e-15);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(f.robot<double>("x", r)[k], cycles[0].robots.x[k], 1e-15);
  }
}

// The grammar's field width and height are integers: an arena of 12.5 m x 3 m is written in
// decimetres (a 125 x 30 field), and a reader told the unit gets metres back.
TEST(DeecoLog, NonIntegralArenaIsWrittenInIntegerUnits) {
  TempDir dir;
  LogHeader h = arena_header();
  h.arena_width_m = 12.5;
  h.arena_height_m = 3;
  h.kinds[0].radius_m = 0.05;
  auto cycles = arena_cycles();
  cycles[0].robots.x = {-6.25, 1.25};  // the left edge, and a point 7.5 m from it
  cycles[0].robots.y = {1.5, -1.25};   // the top edge, and a point 2.75 m below it
  cycles[0].objects.size = {0.25};
  write_deeco(dir.file("d.log"), h, frames_of(h, cycles));

  // The field is 125 x 30 decimetres; the robots' radius 0.05 m is 0.5 dm; the box's 0.25 m
  // width is 2.5 dm, written as its half (docs/log-format.md, 2.4, shows this file).
  EXPECT_EQ(read_file(dir.file("d.log")),
            "null\n"
            "125\n"
            "30\n"
            "---\n"
            "epuck,0.5\n"
            "epuck,0.5\n"
            "---\n"
            "box\n"
            "---\n"
            "status\\&1&&0.0,,0.0,,1.5707963267948966,,a\\,b;;75.0,,27.5,,0.0,,;;&&62.5,,15.0,,"
            "1.25,,x\\;y\\&z\\\\;;\n"
            "&&12.5,,-25.0,,3.141592653589793,,a\\,b;;112.5,,55.0,,0.0,,;;&&2.5,,-35.0,,2.5,,;;\n");

  DeecoLogReader reader(dir.file("d.log"), 0.1);
  const LogHeader& r = reader.header();
  EXPECT_DOUBLE_EQ(r.arena_width_m, 12.5);
  EXPECT_DOUBLE_EQ(r.arena_height_m, 3);
  EXPECT_DOUBLE_EQ(r.kinds[0].radius_m, 0.05);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("frame " + std::to_string(i));
    LogFrame f = reader.read_frame(i);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_NEAR(f.robot<double>("x", r)[k], cycles[i].robots.x[k], 1e-12);
      EXPECT_NEAR(f.robot<double>("y", r)[k], cycles[i].robots.y[k], 1e-12);
    }
    EXPECT_NEAR(f.object<double>("size", r)[0], cycles[i].objects.size[0], 1e-12);
  }
  // Read without the unit, it is a 125 x 30 field of metre units: the proportions hold.
  auto plain = LogReader::open(dir.file("d.log"));
  EXPECT_EQ(plain->header().arena_width_m, 125);
  EXPECT_EQ(plain->header().arena_height_m, 30);
}

TEST(DeecoLog, FieldUnitsFollowTheArenasDecimals) {
  auto units = [](double w, double h) {
    LogHeader header;
    header.arena_width_m = w;
    header.arena_height_m = h;
    auto t = deeco::FieldTransform::of(header);
    return std::to_string(t.width_units) + "x" + std::to_string(t.height_units);
  };
  EXPECT_EQ(units(40, 30), "40x30");  // whole metres: one unit per metre, as before
  EXPECT_EQ(units(12.5, 3), "125x30");
  EXPECT_EQ(units(0.25, 3.125), "250x3125");
  EXPECT_EQ(units(1e-5, 2), "1x200000");
  EXPECT_EQ(units(1.0 / 3, 1), "333333x1000000");  // rounded to the micrometre
  EXPECT_EQ(deeco::decimal_places(1.5e-7), 8);
}

TEST(DeecoLog, ChangingTheRobotSetIsRefusedWithAClearMessage) {
  TempDir dir;
  const LogHeader h = arena_header();
  auto writer = make_deeco_log_writer(dir.file("x.log"));
  writer->begin(h);
  auto cycles = arena_cycles();
  writer->write(cycles[0].frame(h).view());
  Cycle added = cycles[1];
  added.robots.id = {10, 12};
  try {
    writer->write(added.frame(h).view());
    ADD_FAILURE() << "a frame with another robot was accepted";
  } catch (const LogError& e) {
    EXPECT_TRUE(contains(e.what(),
                         "the DEECo log needs a fixed set of robots; use the frame "
                         "log for runs that add or remove entities"));
  }
  Cycle fewer = cycles[1];
  fewer.objects = {};
  EXPECT_THROW(writer->write(fewer.frame(h).view()), LogError);
  writer->finish();
}

TEST(DeecoLog, ReorderedEntitiesAreWrittenInHeaderOrder) {
  TempDir dir;
  auto cycles = arena_cycles();
  Cycle swapped = cycles[0];
  RobotRows& r = swapped.robots;
  std::swap(r.id[0], r.id[1]);
  std::swap(r.x[0], r.x[1]);
  std::swap(r.y[0], r.y[1]);
  std::swap(r.theta[0], r.theta[1]);
  std::swap(r.tag[0], r.tag[1]);
  write_deeco(dir.file("s.log"), arena_header(), frames_of(arena_header(), {swapped, cycles[1]}));
  EXPECT_EQ(read_file(dir.file("s.log")), kArenaLog);
}

TEST(DeecoLog, ExtraColumnsAreIgnored) {
  TempDir dir;
  LogHeader h = arena_header();
  h.robot_columns.push_back(test::column("proximity", ColumnType::kF32, 8));
  std::vector<LogFrame> frames = frames_of(h, arena_cycles());
  for (LogFrame& f : frames) f.set_robot("proximity", h, std::vector<float>(16, 0.5f));
  write_deeco(dir.file("x.log"), h, frames);
  EXPECT_EQ(read_file(dir.file("x.log")), kArenaLog);
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

// Opens `path` with 1 GB of address space; exits 0 printing the LogError, else 1.
[[noreturn]] void open_with_one_gb(const std::string& path) {
  const rlim_t one_gb = rlim_t{1} << 30;
  rlimit limit{one_gb, one_gb};
  setrlimit(RLIMIT_AS, &limit);
  try {
    DeecoLogReader reader(path);
  } catch (const LogError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(0);
  }
  std::exit(1);
}

// Found by the deeco_log fuzzer (tests/fuzz/regressions/deeco_log/oom-bitmap-size-claim.log):
// a header claiming a 2^30 x 2 bitmap made the reader reserve 2 GB before it read the encoding.
// The claim must give the encoding's error, not an allocation failure.
TEST(DeecoLog, BitmapSizeIsNotTrustedBeforeItsEncodingIsRead) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || FLEETSIM_CLANG_SANITIZER
  GTEST_SKIP() << "an address-space limit does not mix with the sanitizers' shadow memory";
#endif
  TempDir dir;
  const std::string path = dir.file("claim.log");
  write_file(path, "3000000000000\n2\n10101\nepuck,1\n");
  EXPECT_EXIT(open_with_one_gb(path), ::testing::ExitedWithCode(0),
              "line 3: expected the bitmap encoding \\(2147483648 characters 0 or 1\\)");
}

}  // namespace
}  // namespace fleetsim::log
