// The page decodes a column it has never heard of: a frame log whose robots carry an extra
// column ("test_value", f32 x 3) goes through the log writer, the log reader and
// encode_chunk(), and the page's own decoder (web/js/frames.js, parseChunk) reads it under
// node. Nothing in between names the column.
//
// And the whole path from a part's declaration: a test plug-in sensor declares a column; a run
// stores it, hashes it, logs it; the log reads it back and the page decodes it. No file of
// the engine, the log, the viewer or the page was edited for that column.
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
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "view/frame_encoding.hpp"

namespace fleetsim::view {
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

/// Runs the page's decoder (web/js/frames.js, byte for byte, as .mjs so that any node
/// takes it as an ES module) under node on dir/header.json and dir/chunk.bin, and returns
/// what it prints: a JSON array with robot column `column` of every frame.
std::string decode_with_page(const fs::path& dir, const std::string& column) {
  fs::copy_file(FLEETSIM_SOURCE_DIR "/web/js/frames.js", dir / "frames.mjs",
                fs::copy_options::overwrite_existing);
  const std::string script =
      "import { readFileSync } from 'node:fs';"
      "import { parseChunk } from '" +
      (dir / "frames.mjs").string() +
      "';"
      "const header = JSON.parse(readFileSync(process.argv[1], 'utf8'));"
      "const bytes = readFileSync(process.argv[2]);"
      "const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);"
      "const { frames } = parseChunk(buffer, header);"
      "console.log(JSON.stringify(frames.map((f) => Array.from(f.robots." + column + "))));";
  const std::string out =
      run(std::string(FLEETSIM_NODE) + " --input-type=module -e \"" + script + "\" " +
          (dir / "header.json").string() + " " + (dir / "chunk.bin").string() + " 2>&1");
  std::cout << "node printed: " << out.substr(0, 400) << "\n";
  return out;
}

/// What the server would send for frames [0, count) of `log_path`: the header JSON and one
/// chunk, written to dir/header.json and dir/chunk.bin.
void serve_to_files(const fs::path& dir, const fs::path& log_path, std::size_t count) {
  auto reader = log::LogReader::open(log_path.string());
  write_file(dir / "header.json",
             header_json(reader->header(), reader->format(), reader->frame_count(),
                         log_path.filename().string())
                 .dump());
  write_file(dir / "chunk.bin", encode_chunk(*reader, 0, count, 1 << 20));
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(PageDecoder, DecodesAColumnItHasNeverHeardOf) {
  const TempDir tmp("fleetsim_js_decode");
  const fs::path& dir = tmp.path;

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

  serve_to_files(dir, dir / "run.flog", 2);
  const std::string out = decode_with_page(dir, "test_value");
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


/// A test plug-in sensor with a column of its own: ticks seen, and a value from the robot's id.
class TickCounter final : public Sensor {
 public:
  void setup(PartSetup& setup) override {
    column_ = setup.column(
        {"test_count", ColumnType::kU32, 2, true, true, "ticks seen, then id * 3", ""});
  }
  void sense(const PartContext& ctx, RobotRef robot, SensorView&) override {
    auto* c = ctx.world->column<std::uint32_t>(column_) + 2 * std::size_t{robot.row};
    c[0] += 1;
    c[1] = robot.id * 3;
  }

 private:
  ColumnHandle column_ = kNoColumn;
};

TEST(PageDecoder, APlugInColumnReachesTheHashTheLogAndThePage) {
  const TempDir tmp("fleetsim_plugin_column");
  const fs::path& dir = tmp.path;
  PluginRegistry reg;
  register_builtins(reg);
  reg.add_sensor({PluginKind::kSensor, "tick_counter", "test", {}},
                 [] { return std::make_unique<TickCounter>(); });
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"1\" seed=\"4\"/>\n"
      "  <kinds><kind name=\"counted\" base=\"epuck\">\n"
      "    <sensor type=\"proximity\"/>\n"
      "    <sensor type=\"tick_counter\"/>\n"
      "    <actuator type=\"differential_drive\"/>\n"
      "  </kind></kinds>\n"
      "  <controllers><controller id=\"c\" type=\"diffusion\"/></controllers>\n"
      "  <arena size=\"3,3\">\n"
      "    <distribute count=\"5\" kind=\"counted\" controller=\"c\"/>\n"
      "  </arena>\n"
      "  <log path=\"" + (dir / "run.flog").string() + "\" format=\"frames\"/>\n"
      "</fleetsim>\n";
  Diagnostics diags;
  auto ex = parse_experiment(xml, (dir / "exp.xml").string(), reg, {}, diags);
  ASSERT_TRUE(ex) << diags.str();

  Simulation sim(std::move(*ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  // The hash: the column is in it (one value changed, another hash).
  WorldState copy = sim.state();
  const std::uint64_t hash = copy.hash();
  copy.robots.span<std::uint32_t>(copy.robots.find("test_count"))[0] += 1;
  EXPECT_NE(copy.hash(), hash);

  // The log: the header declares it as the part did, every frame carries it.
  auto reader = log::LogReader::open((dir / "run.flog").string());
  const log::LogHeader& h = reader->header();
  const int c = log::column_index(h.robot_columns, "test_count");
  ASSERT_GE(c, 0);
  EXPECT_EQ(h.robot_columns[static_cast<std::size_t>(c)].type, ColumnType::kU32);
  EXPECT_EQ(h.robot_columns[static_cast<std::size_t>(c)].width, 2u);
  ASSERT_EQ(reader->frame_count(), 11u);  // tick 0 and 10 ticks
  std::vector<std::vector<std::uint32_t>> logged;
  for (std::size_t k = 0; k < reader->frame_count(); ++k) {
    const log::LogFrame f = reader->read_frame(k);
    auto v = f.robot<std::uint32_t>("test_count", h);
    auto ids = f.robot<EntityId>("id", h);
    ASSERT_EQ(v.size(), 2 * ids.size());
    for (std::size_t r = 0; r < ids.size(); ++r) {
      EXPECT_EQ(v[2 * r], k) << "frame " << k;  // the sense phase ran k times
      EXPECT_EQ(v[2 * r + 1], k == 0 ? 0 : ids[r] * 3) << "frame " << k;
    }
    logged.emplace_back(v.begin(), v.end());
  }

  // The page: decoded from the header's list alone.
  serve_to_files(dir, dir / "run.flog", reader->frame_count());
  nlohmann::json decoded = nlohmann::json::parse(decode_with_page(dir, "test_count"), nullptr,
                                                 false);
  ASSERT_TRUE(decoded.is_array());
  ASSERT_EQ(decoded.size(), logged.size());
  for (std::size_t k = 0; k < logged.size(); ++k)
    EXPECT_EQ(decoded[k].get<std::vector<std::uint32_t>>(), logged[k]) << "frame " << k;
}

}  // namespace
}  // namespace fleetsim::view
