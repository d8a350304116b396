// docs/lua-api.md lists every table of ARGoS's Lua API with fleetsim's counterpart: the list
// must be the code's (a table added, or one of ARGoS's left out, without its row fails here).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "lua/robot_table.hpp"
#include "lua_test_robot.hpp"

namespace fleetsim::lua::test {
namespace {

struct Row {
  std::string fleetsim, argos;
};

/// The rows of the "ARGoS correspondence" table.
std::vector<Row> correspondence() {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/docs/lua-api.md");
  std::vector<Row> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## ARGoS correspondence";
    if (!in_section || line.rfind("| ", 0) != 0 || line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream s(line.substr(1));
    for (std::string cell; std::getline(s, cell, '|');)
      cells.push_back(cell.substr(1, cell.size() > 2 ? cell.size() - 2 : 0));
    if (cells.size() >= 2 && cells[0] != "fleetsim") rows.push_back({cells[0], cells[1]});
  }
  return rows;
}

/// "x" for a cell that starts with `robot.x` (followed by `.`, `[`, `(` or the backquote).
std::string robot_table(const std::string& cell) {
  if (cell.rfind("`robot.", 0) != 0) return "";
  std::size_t end = 7;
  while (end < cell.size() &&
         (std::isalnum(static_cast<unsigned char>(cell[end])) || cell[end] == '_'))
    ++end;
  return cell.substr(7, end - 7);
}

TEST(LuaApiDocs, EveryArgosTableHasItsRowAndMissingMeansMissing) {
  const std::vector<Row> rows = correspondence();
  ASSERT_GT(rows.size(), 20u) << "no ARGoS correspondence table in docs/lua-api.md";
  for (const ArgosTable& t : argos_tables()) {
    const Row* row = nullptr;
    for (const Row& r : rows)
      if (robot_table(r.argos) == t.name) row = &r;
    ASSERT_TRUE(row) << "docs/lua-api.md has no row for ARGoS's robot." << t.name;
    if (t.in_fleetsim())
      EXPECT_EQ(robot_table(row->fleetsim), t.name) << "robot." << t.name << " exists";
    else
      EXPECT_EQ(row->fleetsim, "missing") << "robot." << t.name << " is not in fleetsim";
  }
}

TEST(LuaApiDocs, TheTablesOfARobotWithEveryPartAreTheDocumentedOnes) {
  // Every interface the Lua API knows.
  LuaRobot r({"proximity", "collision", "positioning", "range_and_bearing",
              "colored_blob_omnidirectional_camera", "light", "motor_ground", "base_ground",
              "turret_encoder", "distance_scanner"},
             {"differential_drive", "leds", "range_and_bearing", "quadrotor_speed", "deeco_wheels",
              "gripper", "turret", "distance_scanner"});
  r.load("function step() for k in pairs(robot) do log(k) end end");
  r.step();
  const std::set<std::string> in_code(r.lines.begin(), r.lines.end());
  std::set<std::string> in_doc;
  for (const Row& row : correspondence())
    if (!robot_table(row.fleetsim).empty()) in_doc.insert(robot_table(row.fleetsim));
  EXPECT_EQ(in_code, in_doc);
  // And each is one of ARGoS's tables, but fleetsim's own (and robot.id, robot.random).
  std::set<std::string> argos = {"id", "random", "collision", "deeco_wheels", "tag", "set_tag"};
  for (const ArgosTable& t : argos_tables())
    if (t.in_fleetsim()) argos.insert(t.name);
  EXPECT_EQ(in_code, argos);
}

}  // namespace
}  // namespace fleetsim::lua::test
