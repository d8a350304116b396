// Files in tests: reading one whole, and a fresh output directory per test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fleetsim::testing {

/// The whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// BUILD/test-output/[group/]<the running test's name>/, emptied and created.
inline std::filesystem::path fresh_test_dir(const std::string& group = "") {
  auto dir = std::filesystem::path(FLEETSIM_BINARY_DIR) / "test-output";
  if (!group.empty()) dir /= group;
  dir /= ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// `command` (a program and its arguments, before any redirection) bounded in time: a run
/// that hangs is killed with its children after `seconds` and ends with status 124 (coreutils'
/// timeout), so the test fails naming the command instead of stalling the whole suite.
inline std::string time_limited(const std::string& command, int seconds = 300) {
  return "timeout -k 10 " + std::to_string(seconds) + " " + command;
}

/// A small experiment of three robots, one region: a run can use at most 3 processes.
inline void write_three_robots(const std::filesystem::path& xml) {
  std::ofstream(xml) << "<fleetsim>\n"
                        "  <framework ticks_per_second=\"10\" length=\"5\"/>\n"
                        "  <controllers><controller id=\"w\" type=\"random_walk\"/></controllers>\n"
                        "  <arena size=\"4,4\">\n"
                        "    <distribute count=\"3\" controller=\"w\" id_prefix=\"r\"/>\n"
                        "  </arena>\n"
                        "</fleetsim>\n";
}

/// Gives the footbot aggregation example (a copy at `xml`) a <distribution> that puts its
/// east region on process 0 and its west region on process 1, whole: a failure of the east's
/// robots is then process 0's alone.
inline void pin_regions(const std::filesystem::path& xml) {
  std::string text = slurp(xml);
  const auto at = text.find("</physics>");
  if (at == std::string::npos) return;
  text.insert(at + 10, "\n  <distribution><process regions=\"east\"/><process regions=\"west\"/>"
                       "</distribution>");
  std::ofstream(xml) << text;
}

}  // namespace fleetsim::testing
