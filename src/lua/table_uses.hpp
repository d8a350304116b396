// Where a script's text names a table of the `robot` API (`robot.light[1].value`), found before
// the script runs, so that a script using a table its robot's kind lacks can be refused at
// load with the line of the use (docs/lua-api.md, "Tables a kind lacks").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fleetsim::lua {

/// One `robot.<name>` in a script's code (comments and strings are skipped).
struct TableUse {
  std::string name;  ///< the field of `robot`
  int line = 0;      ///< 1-based
  /// The use reaches into the table (`robot.x.y`, `robot.x[i]`, `robot.x:f()`, `robot.x()`,
  /// `#robot.x`), which fails when it is nil; otherwise the table itself is the value
  /// (`if robot.x then`, `local t = robot.x`), as a script that tests for it does.
  bool reaches_in = false;
};

/// Every `robot.<name>` of `source`, in order.
std::vector<TableUse> robot_table_uses(std::string_view source);

}  // namespace fleetsim::lua
