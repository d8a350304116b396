#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "log/frame_log_reader.hpp"
#include "log/log_reader.hpp"
#include "log/log_writer.hpp"
#include "log_test_support.hpp"

namespace fleetsim::log {
namespace {

using test::expect_same_frame;
using test::read_file;
using test::TempDir;
using test::write_file;

LogHeader make_header() {
  LogHeader h;
  h.experiment = "rooms.xml";
  h.seed = 42;
  h.tick_period_ns = 100'000'000;
  h.every = 3;
  h.arena_width_m = 40;
  h.arena_height_m = 30.5;
  h.arena_center = {0.25, -1};
  h.bitmap_width = 5;
  h.bitmap_height = 3;
  h.bitmap_resolution_m = 0.1;
  h.bitmap_top_left = {-0.25, 0.15};
  h.bitmap = {1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1};
  h.segments = {{{-20, -15}, {20, -15}}, {{20, -15}, {20, 15.25}}};
  h.robot_classes = {{"epuck", 0.035}, {"foot-bot", 0.085}};
  h.object_classes = {{"goal", 0}};
  h.robots = {{0, 0, "ep0"}, {1, 1, "fb1"}, {2, 0, "ep2"}};
  h.objects = {{100, 0, "g0"}};
  return h;
}

/// A run whose robots and objects come and go, whose tag table grows, with awkward doubles.
std::vector<LogFrame> make_frames(std::size_t count, std::uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pos(-20, 20);
  std::vector<LogFrame> frames;
  std::vector<std::string> tags{""};
  std::vector<EntityId> robots{0, 1, 2};
  std::vector<EntityId> objects{100};
  EntityId next = 3;
  for (std::size_t k = 0; k < count; ++k) {
    LogFrame f;
    f.tick = static_cast<Tick>(3 * k);
    f.time_ns = static_cast<SimTime>(300'000'000 * k);
    f.status = k % 4 == 0 ? "" : "phase " + std::to_string(k) + " & more";
    if (k % 3 == 1) tags.push_back("tag" + std::to_string(k) + (k % 2 ? ",x" : ""));
    if (k % 5 == 2) tags.push_back(std::string("\0bin\xff", 5));
    f.tags = tags;
    if (k % 4 == 3) robots.push_back(next++);                              // appears
    if (k % 6 == 5 && robots.size() > 1) robots.erase(robots.begin() + 1);  // disappears
    if (k % 7 == 6) objects.push_back(200 + static_cast<EntityId>(k));
    if (k == 9) objects.clear();
    for (EntityId id : robots) {
      f.robot_id.push_back(id);
      f.robot_class.push_back(static_cast<std::uint16_t>(id % 2));
      f.robot_x.push_back(pos(rng));
      f.robot_y.push_back(pos(rng));
      f.robot_theta.push_back(pos(rng) / 7);
      f.robot_tag.push_back(static_cast<std::uint32_t>(rng() % tags.size()));
      f.robot_led.push_back(Color{static_cast<std::uint8_t>(rng()), 7, 200,
                                  static_cast<std::uint8_t>(k)});
    }
    for (EntityId id : objects) {
      f.object_id.push_back(id);
      f.object_class.push_back(0);
      f.object_x.push_back(pos(rng));
      f.object_y.push_back(pos(rng));
      f.object_size.push_back(0.5);
      f.object_tag.push_back(static_cast<std::uint32_t>(rng() % tags.size()));
    }
    frames.push_back(std::move(f));
  }
  // Values a careless encoder would not keep.
  if (count > 2) {
    frames[1].robot_x[0] = -0.0;
    frames[1].robot_y[0] = std::numeric_limits<double>::quiet_NaN();
    frames[1].robot_theta[0] = std::numeric_limits<double>::infinity();
    frames[2].robot_x[1] = std::numeric_limits<double>::denorm_min();
  }
  return frames;
}

void write_log(const std::string& path, const LogHeader& header,
               const std::vector<LogFrame>& frames, bool finish = true) {
  auto writer = make_frame_log_writer(path);
  writer->begin(header);
  for (const LogFrame& f : frames) writer->write(f.view());
  if (finish) writer->finish();
}

void expect_same_header(const LogHeader& a, const LogHeader& b) {
  EXPECT_EQ(a.experiment, b.experiment);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.tick_period_ns, b.tick_period_ns);
  EXPECT_EQ(a.every, b.every);
  EXPECT_EQ(a.arena_width_m, b.arena_width_m);
  EXPECT_EQ(a.arena_height_m, b.arena_height_m);
  EXPECT_EQ(a.arena_center, b.arena_center);
  EXPECT_EQ(a.bitmap_width, b.bitmap_width);
  EXPECT_EQ(a.bitmap_height, b.bitmap_height);
  EXPECT_EQ(a.bitmap_resolution_m, b.bitmap_resolution_m);
  EXPECT_EQ(a.bitmap_top_left, b.bitmap_top_left);
  EXPECT_EQ(a.bitmap, b.bitmap);
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (std::size_t i = 0; i < a.segments.size(); ++i) {
    EXPECT_EQ(a.segments[i].a, b.segments[i].a);
    EXPECT_EQ(a.segments[i].b, b.segments[i].b);
  }
  ASSERT_EQ(a.robot_classes.size(), b.robot_classes.size());
  for (std::size_t i = 0; i < a.robot_classes.size(); ++i) {
    EXPECT_EQ(a.robot_classes[i].name, b.robot_classes[i].name);
    EXPECT_EQ(a.robot_classes[i].radius_m, b.robot_classes[i].radius_m);
  }
  ASSERT_EQ(a.object_classes.size(), b.object_classes.size());
  ASSERT_EQ(a.robots.size(), b.robots.size());
  for (std::size_t i = 0; i < a.robots.size(); ++i) {
    EXPECT_EQ(a.robots[i].id, b.robots[i].id);
    EXPECT_EQ(a.robots[i].class_index, b.robots[i].class_index);
    EXPECT_EQ(a.robots[i].name, b.robots[i].name);
  }
  ASSERT_EQ(a.objects.size(), b.objects.size());
  EXPECT_EQ(a.objects[0].name, b.objects[0].name);
}

TEST(FrameLog, WriteThenReadGivesIdenticalColumnsOverManyFrames) {
  TempDir dir;
  const std::string path = dir.file("run.fslog");
  const LogHeader header = make_header();
  const auto frames = make_frames(40);
  write_log(path, header, frames);

  auto reader = LogReader::open(path);
  EXPECT_EQ(reader->format(), LogFormat::kFrames);
  expect_same_header(header, reader->header());
  ASSERT_EQ(reader->frame_count(), frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i));
    expect_same_frame(frames[i], reader->read_frame(i));
  }
  EXPECT_THROW(reader->read_frame(frames.size()), LogError);
}

TEST(FrameLog, SeeksToAnyFrameInAnyOrder) {
  TempDir dir;
  const std::string path = dir.file("run.fslog");
  const auto frames = make_frames(12);
  write_log(path, make_header(), frames);
  auto reader = LogReader::open(path);
  for (std::size_t i : {7, 2, 9, 0, 11, 7}) {
    SCOPED_TRACE("frame " + std::to_string(i));
    expect_same_frame(frames[i], reader->read_frame(i));
  }
}

TEST(FrameLog, SameFramesGiveIdenticalBytes) {
  TempDir dir;
  const auto frames = make_frames(25);
  write_log(dir.file("a"), make_header(), frames);
  write_log(dir.file("b"), make_header(), frames);
  const std::string a = read_file(dir.file("a"));
  EXPECT_GT(a.size(), 100u);
  EXPECT_EQ(a, read_file(dir.file("b")));
  // And a different run gives different bytes (the comparison can fail).
  write_log(dir.file("c"), make_header(), make_frames(25, 8));
  EXPECT_NE(a, read_file(dir.file("c")));
}

TEST(FrameLog, WriterDestroyedWithoutFinishStillWritesTheIndex) {
  TempDir dir;
  const auto frames = make_frames(5);
  write_log(dir.file("a"), make_header(), frames, /*finish=*/false);
  FrameLogReader reader(dir.file("a"));
  EXPECT_TRUE(reader.has_index());
  EXPECT_EQ(reader.frame_count(), 5u);
}

TEST(FrameLog, FinishIsIdempotentAndWritesAfterItAreRefused) {
  TempDir dir;
  auto writer = make_frame_log_writer(dir.file("a"));
  writer->begin(make_header());
  const auto frames = make_frames(2);
  writer->write(frames[0].view());
  writer->finish();
  writer->finish();
  EXPECT_THROW(writer->write(frames[1].view()), LogError);
  EXPECT_EQ(LogReader::open(dir.file("a"))->frame_count(), 1u);
}

TEST(FrameLog, EmptyRunOpens) {
  TempDir dir;
  write_log(dir.file("a"), make_header(), {});
  auto reader = LogReader::open(dir.file("a"));
  EXPECT_EQ(reader->frame_count(), 0u);
  EXPECT_EQ(reader->header().robots.size(), 3u);
}

TEST(FrameLog, InconsistentColumnsAreRefused) {
  TempDir dir;
  auto writer = make_frame_log_writer(dir.file("a"));
  writer->begin(make_header());
  LogFrame f = make_frames(1)[0];
  f.robot_theta.pop_back();
  EXPECT_THROW(writer->write(f.view()), LogError);
  f = make_frames(1)[0];
  f.robot_tag[0] = 99;  // outside the tag table
  EXPECT_THROW(writer->write(f.view()), LogError);
}

TEST(FrameLog, CannotCreateInAMissingDirectory) {
  TempDir dir;
  EXPECT_THROW(make_frame_log_writer(dir.file("missing/run.fslog")), LogError);
}

TEST(FrameLog, TruncatedFileShowsExactlyTheCompleteFrames) {
  TempDir dir;
  const std::string path = dir.file("full");
  const auto frames = make_frames(12);
  write_log(path, make_header(), frames);
  const std::string full = read_file(path);
  std::vector<std::uint64_t> ends;  // end offset of each record
  {
    FrameLogReader reader(path);
    for (std::size_t i = 1; i < frames.size(); ++i) ends.push_back(reader.frame_offset(i));
  }
  // The last record ends where the index starts: the footer's first field.
  std::uint64_t index_offset;
  std::memcpy(&index_offset, full.data() + full.size() - 32, 8);
  ends.push_back(index_offset);

  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> cuts{ends[8], ends[8] + 1, ends[11] - 1, ends[11], ends[11] + 5,
                                  full.size() - 1};
  for (int i = 0; i < 30; ++i) cuts.push_back(ends[7] + rng() % (full.size() - ends[7]));
  for (std::uint64_t cut : cuts) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut) + " of " + std::to_string(full.size()));
    write_file(dir.file("cut"), full.substr(0, cut));
    const auto complete = static_cast<std::size_t>(
        std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
    auto reader = LogReader::open(dir.file("cut"));
    ASSERT_EQ(reader->frame_count(), complete);
    for (std::size_t k = 0; k < complete; ++k) expect_same_frame(frames[k], reader->read_frame(k));
  }
}

TEST(FrameLog, CorruptedFrameGivesLogErrorAndOthersStillRead) {
  TempDir dir;
  const std::string path = dir.file("a");
  const auto frames = make_frames(12);
  write_log(path, make_header(), frames);
  std::uint64_t at;
  {
    FrameLogReader reader(path);
    at = (reader.frame_offset(5) + reader.frame_offset(6)) / 2;
  }
  std::string bytes = read_file(path);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
  write_file(path, bytes);
  auto reader = LogReader::open(path);
  ASSERT_EQ(reader->frame_count(), 12u);
  EXPECT_THROW(reader->read_frame(5), LogError);
  expect_same_frame(frames[4], reader->read_frame(4));
  expect_same_frame(frames[6], reader->read_frame(6));
}

TEST(FrameLog, CorruptedBytesAnywhereNeverCrashOrLie) {
  TempDir dir;
  const std::string path = dir.file("a");
  const LogHeader header = make_header();
  const auto frames = make_frames(10);
  write_log(path, header, frames);
  const std::string original = read_file(path);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = original;
    const std::size_t at = rng() % bytes.size();
    bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
    write_file(dir.file("bad"), bytes);
    SCOPED_TRACE("byte " + std::to_string(at));
    try {
      auto reader = LogReader::open(dir.file("bad"));
      expect_same_header(header, reader->header());
      ASSERT_LE(reader->frame_count(), frames.size());
      for (std::size_t k = 0; k < reader->frame_count(); ++k) {
        try {
          expect_same_frame(frames[k], reader->read_frame(k));
        } catch (const LogError&) {
        }
      }
    } catch (const LogError&) {
    }
  }
}

TEST(LogReader, NonLogFilesGiveAClearError) {
  TempDir dir;
  auto expect_error = [&](const std::string& content, const std::string& expected) {
    write_file(dir.file("x"), content);
    try {
      LogReader::open(dir.file("x"));
      ADD_FAILURE() << "opened " << content.substr(0, 20);
    } catch (const LogError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  expect_error("hello world\n", "not a fleetsim log");
  expect_error(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16), "not a fleetsim log");
  expect_error("", "empty");
  expect_error("FLEETLOG", "truncated");
  expect_error("12\nabc\n", "bitmap height");
  EXPECT_THROW(LogReader::open(dir.file("does-not-exist")), LogError);
  EXPECT_THROW(LogReader::open(dir.file("")), LogError);  // a directory
}

}  // namespace
}  // namespace fleetsim::log
