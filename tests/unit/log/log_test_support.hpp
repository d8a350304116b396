// Helpers shared by the log tests: temporary files, headers with the standard column lists,
// frames built column by column, and bit-exact frame comparison.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "log/log_types.hpp"

namespace fleetsim::log::test {

/// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("fleetsim_log_" + std::to_string(::getpid()) + "_" + info->test_suite_name() +
             "_" + info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Succeeds when `text` contains `part` (and prints the text when it does not).
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

/// The required column lists, plus `leds` of `led_width` colours when it is not 0.
inline void set_standard_columns(LogHeader& h, std::uint32_t led_width = 1) {
  h.robot_columns = required_robot_columns();
  if (led_width > 0) h.robot_columns.push_back(led_column(led_width));
  h.object_columns = required_object_columns();
}

/// A column declared the way an engine part declares one.
inline ColumnDesc column(const std::string& name, ColumnType type, std::uint32_t width = 1) {
  ColumnDesc c;
  c.name = name;
  c.type = type;
  c.width = width;
  c.logged = true;
  c.doc = "test column " + name;
  return c;
}

/// The required robot columns (and `led`) as typed vectors, as an engine holds them.
struct RobotRows {
  std::vector<EntityId> id;
  std::vector<std::uint16_t> kind;
  std::vector<double> x, y, theta;
  std::vector<std::uint32_t> tag;
  std::vector<Color> led;  ///< the header's led width per robot
};

/// The required object columns as typed vectors.
struct ObjectRows {
  std::vector<EntityId> id;
  std::vector<std::uint16_t> cls;
  std::vector<double> x, y, size;
  std::vector<std::uint32_t> tag;
};

/// Sets the required columns (and `led` when the header has it) of `f` from `r`.
inline void set_robots(LogFrame& f, const LogHeader& h, const RobotRows& r) {
  f.set_robot("id", h, r.id);
  f.set_robot("kind", h, r.kind);
  f.set_robot("x", h, r.x);
  f.set_robot("y", h, r.y);
  f.set_robot("theta", h, r.theta);
  f.set_robot("tag", h, r.tag);
  if (column_index(h.robot_columns, "leds") >= 0) f.set_robot("leds", h, r.led);
}

/// Sets the object columns of `f` from `o`.
inline void set_objects(LogFrame& f, const LogHeader& h, const ObjectRows& o) {
  f.set_object("id", h, o.id);
  f.set_object("class", h, o.cls);
  f.set_object("x", h, o.x);
  f.set_object("y", h, o.y);
  f.set_object("size", h, o.size);
  f.set_object("tag", h, o.tag);
}

/// Every field and every column byte for byte (so NaN == NaN and -0 != +0).
inline void expect_same_frame(const LogFrame& a, const LogFrame& b) {
  EXPECT_EQ(a.tick, b.tick);
  EXPECT_EQ(a.time_ns, b.time_ns);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.tags, b.tags);
  EXPECT_EQ(a.robot_count, b.robot_count);
  EXPECT_EQ(a.object_count, b.object_count);
  ASSERT_EQ(a.robot_columns.size(), b.robot_columns.size());
  for (std::size_t c = 0; c < a.robot_columns.size(); ++c)
    EXPECT_EQ(a.robot_columns[c], b.robot_columns[c]) << "robot column " << c;
  ASSERT_EQ(a.object_columns.size(), b.object_columns.size());
  for (std::size_t c = 0; c < a.object_columns.size(); ++c)
    EXPECT_EQ(a.object_columns[c], b.object_columns[c]) << "object column " << c;
}

}  // namespace fleetsim::log::test
