// docs/robot-parts.md lists the built-in columns that are not halo (read only by the robot's
// own parts and controller, so they do not travel between processes every tick). The list must
// be the code's: a column wrongly listed would make a plug-in author copy a wrong example, and
// a built-in column wrongly marked in the code makes a distributed run differ from one process.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "plugins/builtins.hpp"
#include "scenario/robot_assembly.hpp"
#include "world/world.hpp"

namespace fleetsim {
namespace {

/// "| owner | columns |" rows of the table after "Not halo among the built-in columns:".
std::map<std::string, std::set<std::string>> documented() {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/docs/robot-parts.md");
  std::string line;
  while (std::getline(in, line) && line.find("Not halo among the built-in columns") == std::string::npos) {
  }
  std::map<std::string, std::set<std::string>> out;
  bool table = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      if (table) break;
      continue;
    }
    table = true;
    if (line.find("---") != std::string::npos || line.find("| owner") == 0) continue;
    const auto mid = line.find('|', 1);
    std::string owners = line.substr(1, mid - 1), columns = line.substr(mid + 1);
    auto names = [](const std::string& text) {  // the `quoted` names
      std::vector<std::string> v;
      for (std::size_t a = text.find('`'); a != std::string::npos; a = text.find('`', a)) {
        const auto b = text.find('`', a + 1);
        v.push_back(text.substr(a + 1, b - a - 1));
        a = b + 1;
      }
      return v;
    };
    auto owner_names = names(owners);
    if (owners.find("body") != std::string::npos) owner_names.push_back("body");
    for (const auto& o : owner_names)
      for (const auto& c : names(columns)) out[o].insert(c);
  }
  return out;
}

TEST(HaloDocs, TheNotHaloTableIsTheCodes) {
  PluginRegistry reg;
  register_builtins(reg);
  std::map<std::string, std::set<std::string>> code;
  for (const auto& c : body_columns())
    if (!c.halo) code["body"].insert(c.name);
  for (const auto& info : reg.all()) {
    if (info.kind != PluginKind::kSensor && info.kind != PluginKind::kActuator) continue;
    for (auto c : part_columns(reg, info.kind, info.name)) {
      if (c.halo) continue;
      // A column named after the part (its name defaults to its interface) is documented as
      // `<name>`; range-and-bearing's fixed names are written out.
      const std::string base = info.interface.empty() ? info.name : info.interface;
      if (c.name.rfind(base, 0) == 0 && c.name.rfind("range_and_bearing", 0) != 0)
        c.name = "<name>" + c.name.substr(base.size());
      code[info.name].insert(c.name);
    }
  }
  const auto docs = documented();
  ASSERT_FALSE(docs.empty()) << "the table was not found in docs/robot-parts.md";
  for (const auto& [owner, columns] : code) {
    auto it = docs.find(owner);
    ASSERT_NE(it, docs.end()) << "docs/robot-parts.md does not list '" << owner << "'";
    EXPECT_EQ(it->second, columns) << owner;
  }
  for (const auto& [owner, columns] : docs)
    EXPECT_TRUE(code.count(owner)) << "docs/robot-parts.md lists '" << owner
                                   << "', which has no column that is not halo";
}

}  // namespace
}  // namespace fleetsim
