// The page decodes a column it has never heard of: a frame log whose robots carry an extra
// column ("test_value", f32 x 3) goes through the log writer, the log reader and
// encode_chunk(), and the page's own decoder (viewer/js/frames.js, parseChunk) reads it under
// node. Nothing in between names the column.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "log/log_reader.hpp"
#include "log/log_writer.hpp"
#include "viewer/frame_encoding.hpp"

namespace fleetsim::viewer {
namespace {

namespace fs = std::filesystem;

std::string run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(PageDecoder, DecodesAColumnItHasNeverHeardOf) {
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim_js_decode_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{dir};

  // A log whose robots carry test_value, three floats each, besides the usual columns.
  log::LogHeader h;
  h.arena_width_m = 4;
  h.arena_height_m = 3;
  h.arena_center = {1, -0.5};
  h.kinds = {{"epuck", 0.035, 1, 0}};
  h.object_classes = {{"food"}};
  h.robot_columns = log::required_robot_columns();
  h.robot_columns.push_back(log::led_column(1));
  ColumnDesc extra;
  extra.name = "test_value";
  extra.type = ColumnType::kF32;
  extra.width = 3;
  extra.logged = true;
  h.robot_columns.push_back(extra);
  h.object_columns = log::required_object_columns();
  const std::vector<std::vector<float>> written = {
      {1.5f, -2.25f, 1e-3f, 7, 8, 9, 0.1f, 1e30f, -0.0f},
      {3, 2, 1, -1.5f, 0.25f, 65504, 12345.678f, -7e-8f, 42}};
  {
    auto writer = log::make_frame_log_writer((dir / "run.flog").string());
    writer->begin(h);
    for (std::size_t k = 0; k < written.size(); ++k) {
      log::LogFrame f;
      f.tick = static_cast<Tick>(k);
      f.tags = {""};
      f.set_robot("id", h, std::vector<EntityId>{0, 1, 2});
      f.set_robot("kind", h, std::vector<std::uint16_t>{0, 0, 0});
      f.set_robot("x", h, std::vector<double>{0, 1, 2});
      f.set_robot("y", h, std::vector<double>{0, 0, 0});
      f.set_robot("theta", h, std::vector<double>{0, 0, 0});
      f.set_robot("tag", h, std::vector<std::uint32_t>{0, 0, 0});
      f.set_robot("leds", h, std::vector<Color>(3));
      f.set_robot("test_value", h, written[k]);
      f.set_object("id", h, std::vector<EntityId>{});
      f.set_object("class", h, std::vector<std::uint16_t>{});
      f.set_object("x", h, std::vector<double>{});
      f.set_object("y", h, std::vector<double>{});
      f.set_object("size", h, std::vector<double>{});
      f.set_object("tag", h, std::vector<std::uint32_t>{});
      writer->write(f.view());
    }
    writer->finish();
  }

  // What the server would send: the header JSON and one chunk of both frames.
  auto reader = log::LogReader::open((dir / "run.flog").string());
  write_file(
      dir / "header.json",
      header_json(reader->header(), reader->format(), reader->frame_count(), "run.flog").dump());
  write_file(dir / "chunk.bin", encode_chunk(*reader, 0, 2, 1 << 20));

  // The page's decoder, byte for byte (as .mjs so that any node takes it as an ES module).
  fs::copy_file(FLEETSIM_SOURCE_DIR "/viewer/js/frames.js", dir / "frames.mjs");
  const std::string script =
      "import { readFileSync } from 'node:fs';"
      "import { parseChunk } from '" +
      (dir / "frames.mjs").string() +
      "';"
      "const header = JSON.parse(readFileSync(process.argv[1], 'utf8'));"
      "const bytes = readFileSync(process.argv[2]);"
      "const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);"
      "const { frames } = parseChunk(buffer, header);"
      "console.log(JSON.stringify(frames.map((f) => Array.from(f.robots.test_value))));";
  const std::string out =
      run(std::string(FLEETSIM_NODE) + " --input-type=module -e \"" + script + "\" " +
          (dir / "header.json").string() + " " + (dir / "chunk.bin").string() + " 2>&1");
  std::cout << "node printed: " << out;

  nlohmann::json decoded = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(decoded.is_array()) << out;
  ASSERT_EQ(decoded.size(), written.size());
  for (std::size_t k = 0; k < written.size(); ++k) {
    ASSERT_EQ(decoded[k].size(), written[k].size()) << "frame " << k;
    for (std::size_t i = 0; i < written[k].size(); ++i) {
      // JSON carries the float32 exactly (as the double it widens to).
      EXPECT_EQ(decoded[k][i].get<double>(), static_cast<double>(written[k][i]))
          << "frame " << k << ", value " << i;
    }
  }
}

}  // namespace
}  // namespace fleetsim::viewer
