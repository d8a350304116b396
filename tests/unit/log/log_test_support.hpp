// Helpers shared by the log tests: temporary files and bit-exact frame comparison.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
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

/// Doubles compared by their bits (NaN == NaN, -0 != +0).
inline std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> out;
  for (double d : v) out.push_back(std::bit_cast<std::uint64_t>(d));
  return out;
}

inline void expect_same_frame(const LogFrame& a, const LogFrame& b) {
  EXPECT_EQ(a.tick, b.tick);
  EXPECT_EQ(a.time_ns, b.time_ns);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.tags, b.tags);
  EXPECT_EQ(a.robot_id, b.robot_id);
  EXPECT_EQ(a.robot_class, b.robot_class);
  EXPECT_EQ(bits(a.robot_x), bits(b.robot_x));
  EXPECT_EQ(bits(a.robot_y), bits(b.robot_y));
  EXPECT_EQ(bits(a.robot_theta), bits(b.robot_theta));
  EXPECT_EQ(a.robot_tag, b.robot_tag);
  EXPECT_EQ(a.robot_led, b.robot_led);
  EXPECT_EQ(a.object_id, b.object_id);
  EXPECT_EQ(a.object_class, b.object_class);
  EXPECT_EQ(bits(a.object_x), bits(b.object_x));
  EXPECT_EQ(bits(a.object_y), bits(b.object_y));
  EXPECT_EQ(bits(a.object_size), bits(b.object_size));
  EXPECT_EQ(a.object_tag, b.object_tag);
}

}  // namespace fleetsim::log::test
