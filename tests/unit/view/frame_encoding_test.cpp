#include "view/frame_encoding.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "synthetic_log.hpp"

namespace fleetsim::view {
namespace {

// Reads the chunk the way the page does (web/js/frames.js), to pin the layout.
class ChunkParser {
 public:
  explicit ChunkParser(const std::string& b) : b_(b) {}
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, b_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string str() {
    auto n = get<std::uint32_t>();
    std::string s = b_.substr(at_, n);
    at_ += n;
    align();
    return s;
  }
  void align() { at_ = (at_ + 3) / 4 * 4; }
  template <typename T>
  std::vector<T> column(std::size_t n) {
    std::vector<T> v(n);
    std::memcpy(v.data(), b_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    align();
    return v;
  }
  std::size_t at_ = 0;

 private:
  const std::string& b_;
};

TEST(FrameEncoding, ChunkCarriesFramesRelativeToTheArenaCentre) {
  testing::SyntheticLogReader reader(5, 10);
  std::string chunk = encode_chunk(reader, 2, 3, 1 << 20);
  ChunkParser p(chunk);
  EXPECT_EQ(p.get<std::uint32_t>(), kChunkMagic);
  EXPECT_EQ(p.get<std::uint32_t>(), kChunkVersion);
  EXPECT_EQ(p.get<std::uint32_t>(), 3u);
  EXPECT_EQ(p.get<std::uint32_t>(), 2u);
  std::uint32_t ntags = p.get<std::uint32_t>();
  std::vector<std::string> tags;
  for (std::uint32_t i = 0; i < ntags; ++i) tags.push_back(p.str());
  EXPECT_EQ(tags.size(), 3u);  // only the tags used: "even", "odd" and the objects' ""

  const log::LogHeader& h = reader.header();
  log::LogFrame expected = reader.read_frame(2);
  std::size_t frame_start = p.at_;
  std::uint32_t bytes = p.get<std::uint32_t>();
  EXPECT_EQ(p.get<double>(), 2.0);
  EXPECT_EQ(p.get<double>(), 2.0 * 100'000'000);
  ASSERT_EQ(p.get<std::uint32_t>(), 5u);
  ASSERT_EQ(p.get<std::uint32_t>(), 1u);
  EXPECT_EQ(p.str(), "frame 2");
  // The header's robot columns, in order: f64 as f32, tags remapped, the rest as they are.
  auto id = p.column<std::uint32_t>(5);
  auto kind = p.column<std::uint16_t>(5);
  auto x = p.column<float>(5);
  auto y = p.column<float>(5);
  auto theta = p.column<float>(5);
  auto tag = p.column<std::uint32_t>(5);
  auto led = p.column<std::uint32_t>(5 * 13);
  auto value = p.column<float>(5 * 2);
  const auto ex = expected.robot<double>("x", h), ey = expected.robot<double>("y", h);
  const auto etheta = expected.robot<double>("theta", h);
  const auto etag = expected.robot<std::uint32_t>("tag", h);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(x[i], ex[i] - 100, 1e-5);
    EXPECT_NEAR(y[i], ey[i] - 50, 1e-5);
    EXPECT_NEAR(theta[i], etheta[i], 1e-6);
    EXPECT_EQ(id[i], i);
    EXPECT_EQ(tags[tag[i]], expected.tags[etag[i]]);
    EXPECT_EQ(led[i * 13], 10u | 20u << 8 | 30u << 16 | 255u << 24);
    EXPECT_EQ(led[i * 13 + 12], 240u | 255u << 24);
    EXPECT_EQ(kind[i], i % 2);
    EXPECT_EQ(value[2 * i], static_cast<float>(i));
    EXPECT_EQ(value[2 * i + 1], 2.5f);
  }
  p.column<std::uint32_t>(1);  // object id
  p.column<std::uint16_t>(1);  // class
  auto ox = p.column<float>(1);
  auto oy = p.column<float>(1);
  auto size = p.column<float>(1);
  p.column<std::uint32_t>(1);  // tag
  EXPECT_NEAR(ox[0], 1, 1e-6);
  EXPECT_NEAR(oy[0], -1, 1e-6);
  EXPECT_NEAR(size[0], 0.2, 1e-6);
  EXPECT_EQ(p.at_ - frame_start, bytes);
  EXPECT_EQ(bytes % 4, 0u);
}

TEST(FrameEncoding, ChunkStopsAtTheByteBudgetButHoldsOneFrame) {
  testing::SyntheticLogReader reader(1000, 10);
  std::string one = encode_chunk(reader, 0, 10, 1);
  ChunkParser p(one);
  p.get<std::uint32_t>();
  p.get<std::uint32_t>();
  EXPECT_EQ(p.get<std::uint32_t>(), 1u);
  std::string past_end = encode_chunk(reader, 8, 10, 1 << 30);
  ChunkParser q(past_end);
  q.get<std::uint32_t>();
  q.get<std::uint32_t>();
  EXPECT_EQ(q.get<std::uint32_t>(), 2u);
}

TEST(FrameEncoding, CorruptedFrameThrowsTheReadersError) {
  testing::SyntheticLogReader reader(3, 10, 4);
  // Frames before the damaged one are sent; a chunk starting at it is an error.
  std::string partial = encode_chunk(reader, 2, 5, 1 << 20);
  std::uint32_t frames = 0;
  std::memcpy(&frames, partial.data() + 8, 4);
  EXPECT_EQ(frames, 2u);
  EXPECT_THROW(encode_chunk(reader, 4, 5, 1 << 20), log::LogError);
}

TEST(FrameEncoding, HeaderJsonCarriesKindsAndColumnLists) {
  testing::SyntheticLogReader reader(3, 10);
  auto j = header_json(reader.header(), reader.format(), reader.frame_count(), "x.log");
  EXPECT_EQ(j["frameCount"], 10);
  EXPECT_EQ(j["arena"]["width"], 10);
  EXPECT_EQ(j["robots"]["names"][2], "r2");
  EXPECT_EQ(j["robots"]["kinds"][1], 1);
  EXPECT_EQ(j["kinds"][1]["name"], "footbot");
  EXPECT_EQ(j["kinds"][1]["ledCount"], 13);
  EXPECT_EQ(j["kinds"][1]["rabRange"], 0.8);
  EXPECT_EQ(j["objectClasses"][0]["name"], "food");
  EXPECT_TRUE(j["bitmap"].is_null());
  ASSERT_EQ(j["robotColumns"].size(), 8u);
  EXPECT_EQ(
      j["robotColumns"][6],
      (nlohmann::json{
          {"name", "leds"}, {"type", "color"}, {"width", 13}, {"doc", log::led_column(13).doc}}));
  EXPECT_EQ(j["robotColumns"][7]["name"], "test_value");
  EXPECT_EQ(j["objectColumns"][1]["name"], "class");
  EXPECT_EQ(j["chunkVersion"], kChunkVersion);
}

TEST(FrameEncoding, HeaderJsonCarriesShapesAndRays) {
  log::LogHeader h;
  log::LogKind crate{"crate", 0.25, 0, 0};
  crate.shape = log::LogShape::kBox;
  crate.half_length_m = 0.2;
  crate.half_width_m = 0.15;
  log::LogKind epuck{"epuck", 0.035, 1, 0};
  epuck.rays = {{"proximity", 0.1, {0.5, -0.5}}};
  h.kinds = {crate, epuck};
  auto j = header_json(h, log::LogFormat::kFrames, 0, "x.log");
  EXPECT_EQ(j["kinds"][0]["shape"], "box");
  EXPECT_EQ(j["kinds"][0]["halfLength"], 0.2);
  EXPECT_EQ(j["kinds"][0]["halfWidth"], 0.15);
  EXPECT_EQ(j["kinds"][1]["shape"], "circle");
  EXPECT_FALSE(j["kinds"][1].contains("halfLength"));
  EXPECT_EQ(
      j["kinds"][1]["rays"],
      (nlohmann::json::parse(R"([{"column": "proximity", "range": 0.1, "angles": [0.5, -0.5]}])")));
}

TEST(FrameEncoding, ClickedRobotJsonHasExactValuesAndEveryOtherColumn) {
  testing::SyntheticLogReader reader(3, 10);
  auto r = robot_json(reader, 3, 1);
  EXPECT_EQ(r["name"], "r1");
  EXPECT_EQ(r["kind"], "footbot");
  EXPECT_EQ(r["tag"], "even");  // frame 3, robot 1: (3 + 1) % 2 == 0
  EXPECT_DOUBLE_EQ(r["x"].get<double>(), 100 + 3 * std::cos(0.3 + 1));
  EXPECT_EQ(r["columns"]["test_value"], (nlohmann::json{1.0, 3.5}));
  EXPECT_EQ(r["columns"]["leds"][0], (nlohmann::json{10, 20, 30, 255}));
  EXPECT_FALSE(r["columns"].contains("x"));
  EXPECT_TRUE(robot_json(reader, 3, 3).is_null());
}

}  // namespace
}  // namespace fleetsim::view
