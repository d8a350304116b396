#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <thread>

#include "log/byte_io.hpp"
#include "log/frame_log_format.hpp"
#include "log/frame_log_reader.hpp"
#include "log/frame_log_writer.hpp"
#include "log/log_reader.hpp"
#include "log/log_writer.hpp"
#include "log_test_support.hpp"

namespace fleetsim::log {
namespace {

using test::expect_same_frame;
using test::read_file;
using test::TempDir;
using test::write_file;

using test::column;
using test::contains;
using test::ObjectRows;
using test::RobotRows;
using test::set_objects;
using test::set_robots;
using test::set_standard_columns;

/// A mixed swarm: e-pucks (one LED) and foot-bots (12 ring LEDs + beacon, range and bearing),
/// with the columns their parts declare besides the required ones.
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
  h.kinds = {{"epuck", 0.035, 1, 0}, {"foot-bot", 0.085, 13, 3.0}};
  h.kinds[0].rays = {{"proximity",
                      0.1,
                      {0.3054326, 0.8552113, 1.5707963, 2.6179939, -2.6179939, -1.5707963,
                       -0.8552113, -0.3054326}}};
  // A box-shaped kind no robot of the run has (yet).
  LogKind crate{"crate", std::sqrt(0.3 * 0.3 + 0.1 * 0.1) / 2, 0, 0};
  crate.shape = LogShape::kBox;
  crate.half_length_m = 0.15;
  crate.half_width_m = 0.05;
  h.kinds.push_back(crate);
  h.object_classes = {{"goal"}};
  h.robots = {{0, 0, "ep0"}, {1, 1, "fb1"}, {2, 0, "ep2"}};
  h.objects = {{100, 0, "g0"}};
  set_standard_columns(h, 13);
  h.robot_columns.push_back(column("proximity", ColumnType::kF32, 8));
  h.robot_columns.push_back(column("rab_data", ColumnType::kU8, 10));
  h.robot_columns.push_back(column("wheels", ColumnType::kI32, 2));
  h.robot_columns.push_back(column("bumps", ColumnType::kU16, 3));
  h.robot_columns.push_back(column("energy", ColumnType::kF64));
  h.robot_columns.push_back(column("role", ColumnType::kTag));
  h.object_columns.insert(h.object_columns.begin() + 2, column("mass", ColumnType::kF32));
  return h;
}

/// A run whose robots and objects come and go, whose tag table grows, with awkward doubles.
/// Columns beyond the required ones get random bytes (tags: random valid indices).
/// `count` frames of a run that starts with `robots_at_start` robots (ids from 0).
std::vector<LogFrame> make_frames(const LogHeader& h, std::size_t count, std::uint64_t seed = 7,
                                  std::size_t robots_at_start = 3) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pos(-20, 20);
  std::vector<LogFrame> frames;
  std::vector<std::string> tags{""};
  std::vector<EntityId> robots;
  for (std::size_t i = 0; i < robots_at_start; ++i) robots.push_back(static_cast<EntityId>(i));
  std::vector<EntityId> objects{100};
  auto next = static_cast<EntityId>(robots_at_start);
  const int led = column_index(h.robot_columns, "leds");
  const std::uint32_t led_width =
      led < 0 ? 0 : h.robot_columns[static_cast<std::size_t>(led)].width;
  auto fill_others = [&](const std::vector<ColumnDesc>& schema, std::size_t rows,
                         std::vector<std::vector<std::uint8_t>>& data) {
    for (std::size_t c = 0; c < schema.size(); ++c) {
      const ColumnDesc& d = schema[c];
      if (column_index(required_robot_columns(), d.name) >= 0 ||
          column_index(required_object_columns(), d.name) >= 0 || d.name == "leds") {
        continue;
      }
      data[c].resize(rows * d.row_bytes());
      if (d.type == ColumnType::kTag) {
        for (std::size_t i = 0; i < rows * d.width; ++i) {
          auto t = static_cast<std::uint32_t>(rng() % tags.size());
          std::memcpy(data[c].data() + 4 * i, &t, 4);
        }
      } else {
        for (auto& b : data[c]) b = static_cast<std::uint8_t>(rng());
      }
    }
  };
  for (std::size_t k = 0; k < count; ++k) {
    LogFrame f;
    f.tick = static_cast<Tick>(3 * k);
    f.time_ns = static_cast<SimTime>(300'000'000 * k);
    f.status = k % 4 == 0 ? "" : "phase " + std::to_string(k) + " & more";
    if (k % 3 == 1) tags.push_back("tag" + std::to_string(k) + (k % 2 ? ",x" : ""));
    if (k % 5 == 2) tags.push_back(std::string("\0bin\xff", 5));
    f.tags = tags;
    if (k % 4 == 3) robots.push_back(next++);                               // appears
    if (k % 6 == 5 && robots.size() > 1) robots.erase(robots.begin() + 1);  // disappears
    if (k % 7 == 6) objects.push_back(200 + static_cast<EntityId>(k));
    if (k == 9) objects.clear();
    RobotRows r;
    for (EntityId id : robots) {
      r.id.push_back(id);
      r.kind.push_back(static_cast<std::uint16_t>(id % 2));
      r.x.push_back(pos(rng));
      r.y.push_back(pos(rng));
      r.theta.push_back(pos(rng) / 7);
      r.tag.push_back(static_cast<std::uint32_t>(rng() % tags.size()));
      for (std::uint32_t j = 0; j < led_width; ++j)
        r.led.push_back(Color{static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(j), 200,
                              static_cast<std::uint8_t>(k)});
    }
    ObjectRows o;
    for (EntityId id : objects) {
      o.id.push_back(id);
      o.cls.push_back(0);
      o.x.push_back(pos(rng));
      o.y.push_back(pos(rng));
      o.size.push_back(0.5);
      o.tag.push_back(static_cast<std::uint32_t>(rng() % tags.size()));
    }
    // Values a careless encoder would not keep.
    if (k == 1) {
      r.x[0] = -0.0;
      r.y[0] = std::numeric_limits<double>::quiet_NaN();
      r.theta[0] = std::numeric_limits<double>::infinity();
    }
    if (k == 2) r.x[1] = std::numeric_limits<double>::denorm_min();
    set_robots(f, h, r);
    set_objects(f, h, o);
    fill_others(h.robot_columns, f.robot_count, f.robot_columns);
    fill_others(h.object_columns, f.object_count, f.object_columns);
    frames.push_back(std::move(f));
  }
  return frames;
}

std::vector<LogFrame> make_frames(std::size_t count, std::uint64_t seed = 7) {
  return make_frames(make_header(), count, seed);
}

void write_log(const std::string& path, const LogHeader& header,
               const std::vector<LogFrame>& frames, bool finish = true) {
  auto writer = make_frame_log_writer(path);
  writer->begin(header);
  for (const LogFrame& f : frames) writer->write(f.view());
  if (finish) writer->finish();
}

void expect_same_columns(const std::vector<ColumnDesc>& a, const std::vector<ColumnDesc>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].width, b[i].width);
    EXPECT_EQ(a[i].doc, b[i].doc);
  }
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
  ASSERT_EQ(a.kinds.size(), b.kinds.size());
  for (std::size_t i = 0; i < a.kinds.size(); ++i) {
    EXPECT_EQ(a.kinds[i].name, b.kinds[i].name);
    EXPECT_EQ(a.kinds[i].radius_m, b.kinds[i].radius_m);
    EXPECT_EQ(a.kinds[i].led_count, b.kinds[i].led_count);
    EXPECT_EQ(a.kinds[i].rab_range_m, b.kinds[i].rab_range_m);
    EXPECT_EQ(a.kinds[i].shape, b.kinds[i].shape);
    EXPECT_EQ(a.kinds[i].half_length_m, b.kinds[i].half_length_m);
    EXPECT_EQ(a.kinds[i].half_width_m, b.kinds[i].half_width_m);
    EXPECT_EQ(a.kinds[i].rays, b.kinds[i].rays);
  }
  ASSERT_EQ(a.object_classes.size(), b.object_classes.size());
  EXPECT_EQ(a.object_classes[0].name, b.object_classes[0].name);
  ASSERT_EQ(a.robots.size(), b.robots.size());
  for (std::size_t i = 0; i < a.robots.size(); ++i) {
    EXPECT_EQ(a.robots[i].id, b.robots[i].id);
    EXPECT_EQ(a.robots[i].type_index, b.robots[i].type_index);
    EXPECT_EQ(a.robots[i].name, b.robots[i].name);
  }
  ASSERT_EQ(a.objects.size(), b.objects.size());
  EXPECT_EQ(a.objects[0].name, b.objects[0].name);
  expect_same_columns(a.robot_columns, b.robot_columns);
  expect_same_columns(a.object_columns, b.object_columns);
}

TEST(FrameLog, WriteThenReadGivesIdenticalColumnsOverManyFrames) {
  TempDir dir;
  const std::string path = dir.file("run.flog");
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
  const std::string path = dir.file("run.flog");
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

// The run's workers transpose a frame's columns for zstd, each its own robots: the payload
// must be the same bytes however the robots are split, and decode back to the columns.
TEST(FrameLog, AFramesPayloadIsTheSameBytesHoweverItsRobotsAreSplit) {
  const LogHeader h = make_header();
  const auto layout = frame_format::PayloadLayout::of(h);
  std::mt19937_64 rng(3);
  LogFrame f;
  f.tick = 12;
  f.time_ns = 1'200'000'000;
  f.status = "running";
  f.robot_count = 10'007;
  f.object_count = 2;
  for (const ColumnDesc& d : h.robot_columns) {
    f.robot_columns.emplace_back(f.robot_count * d.row_bytes());
    for (auto& b : f.robot_columns.back()) b = static_cast<std::uint8_t>(rng());
  }
  for (const ColumnDesc& d : h.object_columns) {
    f.object_columns.emplace_back(f.object_count * d.row_bytes());
    for (auto& b : f.object_columns.back()) b = static_cast<std::uint8_t>(rng());
  }
  // Increasing ids with gaps of 1 to 3, so the robots fill some blocks partly.
  std::uint32_t id = 0;
  for (std::size_t r = 0; r < f.robot_count; ++r) {
    id += 1 + static_cast<std::uint32_t>(rng() % 3);
    std::memcpy(f.robot_columns[layout.robot_id_column].data() + 4 * r, &id, 4);
  }
  std::vector<std::uint8_t> serial, reversed, threaded;
  std::vector<std::size_t> starts;
  frame_format::shuffle_frame(f.view(), layout, serial, starts);
  // Uneven parts, the last first.
  frame_format::shuffle_frame(
      f.view(), layout, reversed, starts,
      [](std::size_t n, std::size_t, const std::function<void(std::size_t, std::size_t)>& body) {
        const std::size_t cut[] = {0, n / 7, n / 3 + 1, n - 5, n};
        for (int k = 3; k >= 0; --k) body(cut[k], cut[k + 1]);
      });
  // Parts on threads at once.
  frame_format::shuffle_frame(
      f.view(), layout, threaded, starts,
      [](std::size_t n, std::size_t, const std::function<void(std::size_t, std::size_t)>& body) {
        std::vector<std::thread> t;
        for (std::size_t k = 0; k < 4; ++k) t.emplace_back(body, n * k / 4, n * (k + 1) / 4);
        for (auto& x : t) x.join();
      });
  EXPECT_EQ(serial, reversed);
  EXPECT_EQ(serial, threaded);
  LogFrame back;
  frame_format::decode_payload(serial.data(), serial.size(), layout, back, "the payload");
  EXPECT_EQ(back.tick, f.tick);
  EXPECT_EQ(back.status, f.status);
  EXPECT_EQ(back.robot_columns, f.robot_columns);
  EXPECT_EQ(back.object_columns, f.object_columns);
}

// Issue 28: a frame's robot blocks encoded on their own (as the processes of a partitioned run
// encode theirs, each from its own rows) and written with write_blocks() give, byte for byte,
// the file write() makes of the whole frames; blocks out of order or that do not add up to
// the frame's robots are refused.
TEST(FrameLog, BlocksEncodedApartGiveTheBytesOfWholeFrames) {
  TempDir dir;
  const LogHeader header = make_header();
  const auto layout = frame_format::PayloadLayout::of(header);
  const auto frames = make_frames(header, 5, 11, 9'000);  // ids 0 to 9,000 and on: 3 blocks
  auto whole = make_frame_log_writer(dir.file("whole"));
  whole->begin(header);
  for (const LogFrame& f : frames) whole->write(f.view());
  whole->finish();
  FrameLogWriter apart(dir.file("apart"), FrameLogOptions{});
  apart.begin(header);
  std::size_t most_blocks = 0;
  for (const LogFrame& f : frames) {
    const LogFrameView v = f.view();
    const auto ids = column_as<std::uint32_t>(v.robot_columns[layout.robot_id_column]);
    std::vector<frame_format::EncodedBlock> blocks;
    std::size_t first = 0;
    for (const frame_format::RobotBlock& b : frame_format::robot_blocks(ids)) {
      // Each block from a copy of its own rows only, as a process holds them.
      LogFrame mine;
      mine.robot_count = b.rows;
      for (std::size_t c = 0; c < v.robot_columns.size(); ++c) {
        const std::size_t rb = header.robot_columns[c].row_bytes();
        mine.robot_columns.emplace_back(v.robot_columns[c].begin() + first * rb,
                                        v.robot_columns[c].begin() + (first + b.rows) * rb);
      }
      blocks.push_back(FrameLogWriter::encode_block(mine.view(), layout, b.index, 0, b.rows,
                                                    FrameLogOptions{}.zstd_level));
      first += b.rows;
    }
    most_blocks = std::max(most_blocks, blocks.size());
    if (&f == &frames[2]) {  // (refused before anything reaches the file)
      auto swapped = blocks;
      std::swap(swapped[0], swapped[1]);
      EXPECT_THROW(apart.write_blocks(v, swapped), LogError);
      auto fewer = blocks;
      fewer.pop_back();
      EXPECT_THROW(apart.write_blocks(v, fewer), LogError);
    }
    apart.write_blocks(v, std::move(blocks));
  }
  apart.finish();
  EXPECT_EQ(most_blocks, 3u);
  EXPECT_TRUE(read_file(dir.file("whole")) == read_file(dir.file("apart")));
  FrameLogReader reader(dir.file("apart"));
  ASSERT_EQ(reader.frame_count(), frames.size());
  const LogFrame back = reader.read_frame(4);
  EXPECT_EQ(back.robot_columns, frames[4].robot_columns);
  EXPECT_EQ(back.object_columns, frames[4].object_columns);
}

// A payload larger than a part is compressed in parts; the run's workers compress them when
// the writer is given a ParallelFor. The file must be the same bytes however the parts are
// shared out, or whether the writer's own thread compresses them, and read back whole.
TEST(FrameLog, PayloadPartsCompressedByWorkersGiveTheSameBytes) {
  TempDir dir;
  const LogHeader header = make_header();
  const auto frames = make_frames(header, 4, 7, 20'000);
  std::vector<std::uint8_t> raw;
  std::vector<std::size_t> starts;
  frame_format::shuffle_frame(frames[0].view(), frame_format::PayloadLayout::of(header), raw,
                              starts);
  ASSERT_GT(starts.size(), 4u);  // several parts, of several sizes
  ASSERT_NE(starts[2] - starts[1], starts.back() - starts[starts.size() - 2]);

  auto write_with = [&](const std::string& path, ParallelFor parallel) {
    FrameLogOptions o;
    o.parallel_for = std::move(parallel);
    auto writer = make_frame_log_writer(path, o);
    writer->begin(header);
    for (const LogFrame& f : frames) writer->write(f.view());
    writer->finish();
    return read_file(path);
  };
  const std::string own_thread = write_with(dir.file("a"), {});
  // Threads at once, the parts split unevenly.
  const std::string threads = write_with(
      dir.file("b"),
      [](std::size_t n, std::size_t, const std::function<void(std::size_t, std::size_t)>& body) {
        std::vector<std::thread> t;
        t.emplace_back(body, 0, 1);
        t.emplace_back(body, 1, n / 2);
        t.emplace_back(body, n / 2, n);
        for (auto& x : t) x.join();
      });
  // One part at a time, the last first.
  const std::string reversed = write_with(
      dir.file("c"),
      [](std::size_t n, std::size_t, const std::function<void(std::size_t, std::size_t)>& body) {
        for (std::size_t k = n; k-- > 0;) body(k, k + 1);
      });
  EXPECT_EQ(own_thread, threads);
  EXPECT_EQ(own_thread, reversed);
  auto reader = LogReader::open(dir.file("b"));
  ASSERT_EQ(reader->frame_count(), frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i));
    expect_same_frame(frames[i], reader->read_frame(i));
  }
}

// A run that fails mid-way destroys the writer while an exception unwinds, with frames still
// queued and the workers compressing: every frame written before the failure must be in the
// file, readable, and the file the same bytes as a finished log of those frames (the
// destructor writes the index), whatever threads compressed them.
TEST(FrameLog, ARunThatFailsMidWayLeavesEveryFrameWrittenBeforeItReadable) {
  TempDir dir;
  const LogHeader header = make_header();
  const auto frames = make_frames(header, 8, 11, 20'000);
  const ParallelFor two_threads = [](std::size_t n, std::size_t,
                                     const std::function<void(std::size_t, std::size_t)>& body) {
    std::thread t(body, 0, n / 2);
    body(n / 2, n);
    t.join();
  };
  // Writes the first `count` frames; throws after them when `fail` (the writer not finished).
  auto write = [&](const std::string& path, const ParallelFor& parallel, std::size_t count,
                   bool fail) {
    FrameLogOptions o;
    o.parallel_for = parallel;
    auto writer = make_frame_log_writer(path, o);
    writer->begin(header);
    for (std::size_t i = 0; i < count; ++i) writer->write(frames[i].view());
    if (fail) throw std::runtime_error("the run failed");
    writer->finish();
  };
  write(dir.file("own"), {}, 6, false);
  ASSERT_GT(read_file(dir.file("own")).size(), 2'000'000u);  // several MB of frames
  EXPECT_THROW(write(dir.file("failed"), two_threads, 6, true), std::runtime_error);
  EXPECT_EQ(read_file(dir.file("failed")), read_file(dir.file("own")));
  auto reader = LogReader::open(dir.file("failed"));
  ASSERT_EQ(reader->frame_count(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE("frame " + std::to_string(i));
    expect_same_frame(frames[i], reader->read_frame(i));
  }
}

// A record goes out in one writev of its header, tag block and parts. A blocking write into a
// full pipe that a signal interrupts returns what it wrote so far: the writer must resume
// mid-buffer and past empty buffers, losing and repeating nothing. (A timer's signal, without
// SA_RESTART, interrupts the writer while a slow reader keeps the pipe full.)
void ignore_signal(int) {}

TEST(FrameLog, WritingBuffersSurvivesShortWrites) {
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::uint8_t>> buffers;
  for (std::size_t size : {56u, 0u, 200'000u, 1u, 0u, 300'001u, 70'000u}) {
    buffers.emplace_back(size);
    for (auto& b : buffers.back()) b = static_cast<std::uint8_t>(rng());
  }
  std::vector<iovec> parts;
  std::vector<std::uint8_t> expected;
  for (auto& b : buffers) {
    parts.push_back({b.data(), b.size()});
    expected.insert(expected.end(), b.begin(), b.end());
  }
  int fd[2];
  ASSERT_EQ(pipe(fd), 0);
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  std::vector<std::uint8_t> received;
  std::thread reader([&] {
    pthread_sigmask(SIG_BLOCK, &alarm, nullptr);  // the writer's thread takes the signals
    std::uint8_t chunk[4096];
    for (;;) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      const ssize_t k = ::read(fd[0], chunk, sizeof chunk);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      received.insert(received.end(), chunk, chunk + k);
    }
  });
  struct sigaction on_alarm {
  }, before{};
  on_alarm.sa_handler = ignore_signal;  // no SA_RESTART: a blocked write returns early
  sigaction(SIGALRM, &on_alarm, &before);
  itimerval every{{0, 1000}, {0, 1000}}, off{};
  setitimer(ITIMER_REAL, &every, nullptr);
  write_all(fd[1], parts, "the pipe");
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &before, nullptr);
  ::close(fd[1]);
  reader.join();
  ::close(fd[0]);
  EXPECT_EQ(received, expected);
}

// The writer checksums a record's tag block and payload parts one after the other.
TEST(FrameLog, ChecksumOverPiecesIsTheChecksumOfTheWhole) {
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> bytes(1000);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = rng() % bytes.size();
    std::vector<std::size_t> cuts{0, n};
    for (int k = 0; k < 3; ++k) cuts.push_back(n == 0 ? 0 : rng() % (n + 1));
    std::sort(cuts.begin(), cuts.end());
    frame_format::LanesHash h;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
      h.update(bytes.data() + cuts[k], cuts[k + 1] - cuts[k]);
    ASSERT_EQ(h.value(), frame_format::checksum(bytes.data(), n)) << "n " << n;
  }
  // And it depends on the bytes (the comparison can fail).
  frame_format::LanesHash h;
  h.update(bytes.data() + 1, 64);
  EXPECT_NE(h.value(), frame_format::checksum(bytes.data(), 64));
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
  f.robot_columns[4].resize(f.robot_columns[4].size() - 8);  // theta: one robot short
  EXPECT_THROW(writer->write(f.view()), LogError);
  f = make_frames(1)[0];
  f.robot_columns[5][0] = 99;  // tag outside the tag table
  EXPECT_THROW(writer->write(f.view()), LogError);
  f = make_frames(1)[0];
  const int role = column_index(make_header().robot_columns, "role");
  f.robot_columns[static_cast<std::size_t>(role)][4] = 7;  // so is a tag in a plug-in's column
  EXPECT_THROW(writer->write(f.view()), LogError);
  f = make_frames(1)[0];
  f.robot_columns.pop_back();  // a column short
  EXPECT_THROW(writer->write(f.view()), LogError);
  // Nothing bad reached the file.
  writer->write(make_frames(1)[0].view());
  writer->finish();
  EXPECT_EQ(LogReader::open(dir.file("a"))->frame_count(), 1u);
}

TEST(FrameLog, CannotCreateInAMissingDirectory) {
  TempDir dir;
  EXPECT_THROW(make_frame_log_writer(dir.file("missing/run.flog")), LogError);
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
  std::vector<std::uint64_t> cuts{ends[8],  ends[8] + 1,  ends[11] - 1,
                                  ends[11], ends[11] + 5, full.size() - 1};
  for (int i = 0; i < 30; ++i) cuts.push_back(ends[7] + rng() % (full.size() - ends[7]));
  for (std::uint64_t cut : cuts) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut) + " of " + std::to_string(full.size()));
    write_file(dir.file("cut"), full.substr(0, cut));
    const auto complete =
        static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
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

TEST(FrameLog, ColumnsAreReadBackByNameWithTheirTypes) {
  TempDir dir;
  const LogHeader header = make_header();
  const auto frames = make_frames(header, 6);
  write_log(dir.file("a"), header, frames);
  auto reader = LogReader::open(dir.file("a"));
  const LogHeader& h = reader->header();
  const LogFrame f = reader->read_frame(5);
  const std::size_t n = f.robot_count;
  ASSERT_GT(n, 0u);
  // The required columns, typed.
  auto x = f.robot<double>("x", h);
  ASSERT_EQ(x.size(), n);
  EXPECT_EQ(std::vector<double>(x.begin(), x.end()),
            std::vector<double>(frames[5].robot<double>("x", header).begin(),
                                frames[5].robot<double>("x", header).end()));
  EXPECT_EQ(f.robot<EntityId>("id", h)[0], 0u);
  EXPECT_EQ(f.object<double>("size", h).size(), f.object_count);
  // A plug-in's column: width elements per robot, row-major.
  auto proximity = f.robot<float>("proximity", h);
  EXPECT_EQ(proximity.size(), n * 8);
  EXPECT_EQ(std::memcmp(proximity.data(), frames[5].robot<float>("proximity", header).data(),
                        proximity.size_bytes()),
            0);
  EXPECT_EQ(f.robot<Color>("leds", h).size(), n * 13);
  EXPECT_EQ(f.robot<std::uint8_t>("rab_data", h).size(), n * 10);
  // Absent, or asked with the wrong element size: empty.
  EXPECT_TRUE(f.robot<double>("no_such_column", h).empty());
  EXPECT_TRUE(f.robot<double>("proximity", h).empty());
  EXPECT_TRUE(f.object<float>("proximity", h).empty());
}

TEST(FrameLog, FramesBuiltFromTheCallersVectorsRoundTrip) {
  // The engine's way: its own vectors, named as in the header, no copy until write().
  TempDir dir;
  LogHeader h;
  h.kinds = {{"footbot", 0.085, 13, 3}};
  set_standard_columns(h, 13);
  h.robot_columns.push_back(column("test_value", ColumnType::kF32, 3));
  std::vector<EntityId> id{4, 9};
  std::vector<std::uint16_t> kind{0, 0};
  std::vector<double> x{1.5, -2}, y{0.25, 3}, theta{0, 1};
  std::vector<std::uint32_t> tag{0, 1};
  std::vector<Color> led(26, Color{1, 2, 3, 255});
  led[13] = Color{255, 0, 0, 255};  // robot 1's first ring LED
  std::vector<float> value{1, 2, 3, 4.5f, -5, 6e-3f};
  std::vector<EntityId> no_ids;
  std::vector<std::uint16_t> no_classes;
  std::vector<double> none;
  std::vector<std::uint32_t> no_tags;
  const std::vector<std::string> tags{"", "lead"};
  LogFrameView v{.tick = 7, .time_ns = 700, .status = "ok", .tags = tags};
  fill_columns(v, h,
               {{"id", id},
                {"kind", kind},
                {"x", x},
                {"y", y},
                {"theta", theta},
                {"tag", tag},
                {"leds", led},
                {"test_value", value}},
               {{"id", no_ids},
                {"class", no_classes},
                {"x", none},
                {"y", none},
                {"size", none},
                {"tag", no_tags}});
  EXPECT_EQ(v.robot_count, 2u);
  EXPECT_EQ(v.object_count, 0u);
  auto writer = make_frame_log_writer(dir.file("a"));
  writer->begin(h);
  writer->write(v);
  writer->finish();

  auto reader = LogReader::open(dir.file("a"));
  LogFrame f = reader->read_frame(0);
  EXPECT_EQ(f.tick, 7);
  auto got = f.robot<float>("test_value", reader->header());
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), value);
  EXPECT_EQ(f.robot<Color>("leds", reader->header())[13], (Color{255, 0, 0, 255}));
  EXPECT_EQ(f.robot<EntityId>("id", reader->header())[1], 9u);
  expect_same_frame(LogFrame::copy_of(v), f);
}

TEST(FrameLog, FillColumnsSaysWhichColumnIsWrong) {
  LogHeader h;
  set_standard_columns(h, 1);
  std::vector<EntityId> id{1, 2};
  std::vector<std::uint16_t> kind{0, 0};
  std::vector<double> two{0, 0}, one{0};
  std::vector<float> floats{0, 0};
  std::vector<std::uint32_t> tag{0, 0};
  std::vector<Color> led(2);
  std::vector<EntityId> no_ids;
  std::vector<std::uint16_t> no_classes;
  std::vector<double> none;
  std::vector<std::uint32_t> no_tags;
  const std::vector<NamedColumn> objects{{"id", no_ids}, {"class", no_classes}, {"x", none},
                                         {"y", none},    {"size", none},        {"tag", no_tags}};
  auto message = [&](const std::vector<NamedColumn>& robots) -> std::string {
    LogFrameView v;
    try {
      fill_columns(v, h, robots, objects);
    } catch (const LogError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message({{"id", id},
                     {"kind", kind},
                     {"x", two},
                     {"y", two},
                     {"theta", two},
                     {"tag", tag},
                     {"leds", led}}),
            "accepted");
  EXPECT_TRUE(contains(
      message({{"id", id}, {"kind", kind}, {"x", two}, {"y", two}, {"tag", tag}, {"leds", led}}),
      "robot column 'theta' not given"));
  EXPECT_TRUE(contains(message({{"id", id},
                                {"kind", kind},
                                {"x", two},
                                {"y", one},
                                {"theta", two},
                                {"tag", tag},
                                {"leds", led}}),
                       "robot column 'y' has 1 rows where others have 2"));
  EXPECT_TRUE(contains(message({{"id", id},
                                {"kind", kind},
                                {"x", floats},
                                {"y", two},
                                {"theta", two},
                                {"tag", tag},
                                {"leds", led}}),
                       "robot column 'x' is f64 x 1"));
  EXPECT_TRUE(contains(message({{"id", id},
                                {"kind", kind},
                                {"x", two},
                                {"y", two},
                                {"theta", two},
                                {"tag", tag},
                                {"leds", led},
                                {"speed", two}}),
                       "the header has no robot column 'speed'"));
}

TEST(FrameLog, HeadersWithoutTheRequiredColumnsAreRefused) {
  TempDir dir;
  auto message = [&](const LogHeader& h) -> std::string {
    auto writer = make_frame_log_writer(dir.file("h"));
    try {
      writer->begin(h);
    } catch (const LogError& e) {
      return e.what();
    }
    return "accepted";
  };
  LogHeader h = make_header();
  EXPECT_EQ(message(h), "accepted");
  h.robot_columns.erase(h.robot_columns.begin() + 4);  // theta
  EXPECT_TRUE(contains(message(h), "lack the required column 'theta' (f64)"));
  h = make_header();
  h.robot_columns[2].type = ColumnType::kF32;  // x
  EXPECT_TRUE(contains(message(h), "robot column 'x' is f32 x 1 (expected f64 x 1)"));
  h = make_header();
  h.object_columns.push_back(column("label", ColumnType::kString));
  EXPECT_TRUE(contains(message(h), "strings are never in frames"));
  h = make_header();
  h.robot_columns.push_back(column("x", ColumnType::kF64));
  EXPECT_TRUE(contains(message(h), "robot column 'x' is declared twice"));
  h = make_header();
  h.robot_columns.push_back(column("nothing", ColumnType::kU8, 0));
  EXPECT_TRUE(contains(message(h), "has width 0"));
  h = make_header();
  set_standard_columns(h, 1);  // foot-bots have 13 LEDs
  EXPECT_TRUE(contains(message(h),
                       "'foot-bot' has 13 LEDs but the 'leds' column holds 1 per "
                       "robot"));
}

// A log written by fleetsim's version-1 writer (commit aa62308, before the column lists):
// three robots (e-puck, foot-bot, e-puck) and one object, two frames.
TEST(FrameLog, Version1LogsAreStillRead) {
  FrameLogReader reader(FLEETSIM_SOURCE_DIR "/tests/data/frame-log-v1.flog");
  EXPECT_EQ(reader.version(), 1u);
  const LogHeader& h = reader.header();
  EXPECT_EQ(h.experiment, "v1.xml");
  EXPECT_EQ(h.every, 2);
  ASSERT_EQ(h.kinds.size(), 2u);
  EXPECT_EQ(h.kinds[1].name, "footbot");
  EXPECT_EQ(h.kinds[1].radius_m, 0.085);
  EXPECT_EQ(h.kinds[1].led_count, 1u);
  ASSERT_EQ(h.object_classes.size(), 1u);
  EXPECT_EQ(h.object_classes[0].name, "goal");
  EXPECT_EQ(h.robots[1].name, "fb1");
  EXPECT_EQ(h.robots[1].type_index, 1);
  // Version 1's fixed lists, in its frame order.
  std::vector<std::string> names;
  for (const ColumnDesc& c : h.robot_columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "kind", "x", "y", "theta", "tag", "leds"}));
  names.clear();
  for (const ColumnDesc& c : h.object_columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "class", "x", "y", "size", "tag"}));

  ASSERT_EQ(reader.frame_count(), 2u);
  const LogFrame f = reader.read_frame(1);
  EXPECT_EQ(f.tick, 2);
  EXPECT_EQ(f.time_ns, 200'000'000);
  EXPECT_EQ(f.status, "going");
  EXPECT_EQ(f.tags, (std::vector<std::string>{"", "red", "blue"}));
  auto vec = [](auto span) { return std::vector(span.begin(), span.end()); };
  EXPECT_EQ(vec(f.robot<EntityId>("id", h)), (std::vector<EntityId>{0, 1, 2}));
  EXPECT_EQ(vec(f.robot<std::uint16_t>("kind", h)), (std::vector<std::uint16_t>{0, 1, 0}));
  EXPECT_EQ(vec(f.robot<double>("x", h)), (std::vector<double>{0.5 + 0.01, -1.25, 1.75}));
  EXPECT_EQ(vec(f.robot<double>("y", h)), (std::vector<double>{-0.25, 0.5, 0.5}));
  EXPECT_EQ(vec(f.robot<double>("theta", h)), (std::vector<double>{0.1, -2.5, 3.0}));
  EXPECT_EQ(vec(f.robot<std::uint32_t>("tag", h)), (std::vector<std::uint32_t>{1, 0, 2}));
  EXPECT_EQ(vec(f.robot<Color>("leds", h)),
            (std::vector<Color>{{255, 0, 0, 255}, {0, 0, 255, 255}, {1, 2, 3, 4}}));
  EXPECT_EQ(vec(f.object<EntityId>("id", h)), (std::vector<EntityId>{3}));
  EXPECT_EQ(vec(f.object<double>("x", h)), (std::vector<double>{-1.5}));
  EXPECT_EQ(vec(f.object<double>("size", h)), (std::vector<double>{0.25}));
  EXPECT_EQ(vec(f.object<std::uint32_t>("tag", h)), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(reader.read_frame(0).status, "go");
}

// A log written by fleetsim's version-2 writer (before kinds carried shapes), from this
// experiment run for 0.2 s: an e-puck `ep0` (diffusion) at (-1, 0.5) heading 30 degrees and a
// passive box `box0` of the kind <kind name="crate" base="box" size="0.3,0.1"/> at
// (0.5, -0.5) heading 45 degrees, an object `goal` (class Goal) at (1, 1); 4 m x 4 m arena.
TEST(FrameLog, Version2LogsAreStillReadAsCircles) {
  FrameLogReader reader(FLEETSIM_SOURCE_DIR "/tests/data/frame-log-v2.flog");
  EXPECT_EQ(reader.version(), 2u);
  const LogHeader& h = reader.header();
  ASSERT_EQ(h.robots.size(), 2u);
  EXPECT_EQ(h.robots[1].name, "box0");
  const LogKind& crate = h.kinds.at(h.robots[1].type_index);
  EXPECT_EQ(crate.name, "crate");
  EXPECT_NEAR(crate.radius_m, std::sqrt(0.3 * 0.3 + 0.1 * 0.1) / 2, 1e-12);
  // Version 2 knows no shapes: every kind reads as a circle of its radius, without rays.
  for (const LogKind& k : h.kinds) {
    EXPECT_EQ(k.shape, LogShape::kCircle) << k.name;
    EXPECT_EQ(k.half_length_m, 0) << k.name;
    EXPECT_TRUE(k.rays.empty()) << k.name;
  }
  ASSERT_EQ(reader.frame_count(), 3u);
  const LogFrame f = reader.read_frame(0);
  ASSERT_EQ(f.robot_count, 2u);
  EXPECT_NEAR(f.robot<double>("x", h)[0], -1, 1e-9);
  EXPECT_NEAR(f.robot<double>("y", h)[0], 0.5, 1e-9);
  EXPECT_NEAR(f.robot<double>("theta", h)[1], M_PI / 4, 1e-9);
  ASSERT_EQ(f.object_count, 1u);
  EXPECT_NEAR(f.object<double>("x", h)[0], 1, 1e-9);
}

// A box-shaped kind's half extents, and each box robot's heading (its theta column), come back
// exactly; so do a kind's rays.
TEST(FrameLog, BoxShapesAndRaysRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("boxes.flog");
  LogHeader h = make_header();
  set_standard_columns(h, 13);
  h.robots = {{0, 0, "ep0"}, {3, 2, "crate3"}};
  h.objects.clear();
  LogFrame f;
  f.tags = {""};
  RobotRows rows{{0, 3}, {0, 2}, {0.5, 1.5}, {-0.25, 2.5}, {0.1, -2.75}, {0, 0}, {}};
  rows.led.assign(26, Color{0, 0, 0, 0});
  set_robots(f, h, rows);
  set_objects(f, h, {});
  write_log(path, h, {f});
  auto reader = LogReader::open(path);
  const LogHeader& r = reader->header();
  ASSERT_EQ(r.kinds.size(), 3u);
  EXPECT_EQ(r.kinds[2].shape, LogShape::kBox);
  EXPECT_EQ(r.kinds[2].half_length_m, 0.15);
  EXPECT_EQ(r.kinds[2].half_width_m, 0.05);
  EXPECT_EQ(r.kinds[1].shape, LogShape::kCircle);
  ASSERT_EQ(r.kinds[0].rays.size(), 1u);
  EXPECT_EQ(r.kinds[0].rays[0].column, "proximity");
  EXPECT_EQ(r.kinds[0].rays[0].range_m, 0.1);
  EXPECT_EQ(r.kinds[0].rays[0].angles.size(), 8u);
  EXPECT_EQ(r.kinds[0].rays[0].angles[2], 1.5707963);
  const LogFrame g = reader->read_frame(0);
  EXPECT_EQ(g.robot<std::uint16_t>("kind", r)[1], 2);
  EXPECT_EQ(g.robot<double>("theta", r)[1], -2.75);
}

TEST(FrameLog, BoxesWithoutExtentsAndBadRaysAreRefused) {
  TempDir dir;
  auto refused = [&](const LogHeader& h) {
    try {
      write_log(dir.file("bad.flog"), h, {});
    } catch (const LogError& e) {
      return std::string(e.what());
    }
    return std::string("(written)");
  };
  LogHeader h = make_header();
  h.kinds[2].half_width_m = 0;
  EXPECT_TRUE(contains(refused(h), "'crate' is a box whose half extents are not two lengths"));
  h = make_header();
  h.kinds[2].half_length_m = NAN;
  EXPECT_TRUE(contains(refused(h), "'crate' is a box"));
  h = make_header();
  h.kinds[0].rays[0].angles[3] = INFINITY;
  EXPECT_TRUE(contains(refused(h), "rays 'proximity' need a range >= 0"));
  h = make_header();
  h.kinds[0].rays[0].range_m = -1;
  EXPECT_TRUE(contains(refused(h), "rays 'proximity' need a range >= 0"));
}

/// Rewrites the header body of the frame log at `path` through `edit`, with valid checksums:
/// what a hostile or buggy producer could hand the reader.
void forge_header(const std::string& path, const std::function<void(std::string&)>& edit,
                  std::uint32_t version = frame_format::kVersion) {
  std::string bytes = read_file(path);
  std::uint64_t raw = 0, stored = 0;
  std::memcpy(&raw, bytes.data() + 16, 8);
  std::memcpy(&stored, bytes.data() + 24, 8);
  std::string body(raw, '\0');
  ASSERT_EQ(ZSTD_decompress(body.data(), raw, bytes.data() + 40, stored), raw);
  edit(body);
  std::string compressed(ZSTD_compressBound(body.size()), '\0');
  compressed.resize(
      ZSTD_compress(compressed.data(), compressed.size(), body.data(), body.size(), 1));
  std::string fixed = bytes.substr(0, 40);
  std::uint64_t raw2 = body.size(), stored2 = compressed.size();
  std::memcpy(fixed.data() + 8, &version, 4);
  std::memcpy(fixed.data() + 16, &raw2, 8);
  std::memcpy(fixed.data() + 24, &stored2, 8);
  const auto* f = reinterpret_cast<const std::uint8_t*>(fixed.data());
  const auto* c = reinterpret_cast<const std::uint8_t*>(compressed.data());
  std::uint64_t sum = frame_format::checksum(f, 32, c, compressed.size());
  std::memcpy(fixed.data() + 32, &sum, 8);
  write_file(path, fixed + compressed + bytes.substr(40 + stored));
}

TEST(FrameLog, HostileHeadersGiveLogErrorsNotCrashes) {
  TempDir dir;
  const std::string good = dir.file("good");
  write_log(good, make_header(), make_frames(3));
  auto expect_refused = [&](const std::string& what, const std::function<void(std::string&)>& edit,
                            const std::string& expected) {
    SCOPED_TRACE(what);
    const std::string path = dir.file("bad");
    write_file(path, read_file(good));
    forge_header(path, edit);
    try {
      auto reader = LogReader::open(path);
      ADD_FAILURE() << "opened";
    } catch (const LogError& e) {
      EXPECT_TRUE(contains(e.what(), expected));
    }
  };
  // The bytes after the column name "energy" (u32 length 6, then the name): type, width.
  auto at_energy = [](std::string& body) {
    const std::string key = std::string("\x06\0\0\0energy", 10);
    const auto at = body.find(key);
    EXPECT_NE(at, std::string::npos);
    return at + key.size();
  };
  expect_refused(
      "unknown type code", [&](std::string& b) { b[at_energy(b)] = 42; }, "unknown type code 42");
  expect_refused(
      "string column", [&](std::string& b) { b[at_energy(b)] = 8; }, "strings are never in frames");
  expect_refused(
      "width 0", [&](std::string& b) { std::memset(&b[at_energy(b) + 1], 0, 4); }, "has width 0");
  expect_refused(
      "huge width", [&](std::string& b) { std::memset(&b[at_energy(b) + 1], 0xff, 4); },
      "has width 4294967295");
  expect_refused(
      "x becomes a u8",
      [&](std::string& b) {
        const auto at = b.find(std::string("\x01\0\0\0x\x05", 6));
        ASSERT_NE(at, std::string::npos);
        b[at + 5] = 0;
      },
      "robot column 'x' is u8 x 1");
  expect_refused(
      "a column count larger than the header",
      [&](std::string& b) {
        // The object column count is the u32 before the object column "id".
        const auto at = b.rfind(std::string("\x02\0\0\0id", 6));
        ASSERT_NE(at, std::string::npos);
        std::memset(&b[at - 4], 0x7f, 4);
      },
      "corrupt");
}

TEST(FrameLog, NewerVersionsAreRefusedWithAClearMessage) {
  TempDir dir;
  const std::string path = dir.file("v5");
  write_log(path, make_header(), make_frames(2));
  forge_header(
      path, [](std::string&) {}, 5);
  try {
    LogReader::open(path);
    ADD_FAILURE() << "opened a version-5 log";
  } catch (const LogError& e) {
    EXPECT_TRUE(contains(e.what(),
                         "has format version 5; this fleetsim reads "
                         "versions 1 to 4 (a newer fleetsim wrote it)"));
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
