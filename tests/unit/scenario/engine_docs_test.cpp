// The documentation lists the built-in physics engines with their parameters, and the built-in
// robot kinds: the lists must be the code's (a type or kind added without its docs fails here).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "plugins/builtins.hpp"
#include "robots/kinds.hpp"

namespace fleetsim {
namespace {

std::string doc(const std::string& name) {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/docs/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(EngineDocs, EveryEngineTypeAndParameterIsInTheExperimentFormat) {
  PluginRegistry reg;
  register_builtins(reg);
  const std::string format = doc("experiment-format.md");
  ASSERT_FALSE(format.empty());
  const auto engines = reg.names(PluginKind::kPhysicsEngine);
  EXPECT_GE(engines.size(), 3u);
  for (const std::string& e : engines) {
    EXPECT_NE(format.find("### `" + e + "`"), std::string::npos) << "no section for " << e;
    for (const ParamDoc& p : reg.find(PluginKind::kPhysicsEngine, e)->params)
      if (p.name != "id" && p.name != "region")
        EXPECT_NE(format.find("| `" + p.name + "` |"), std::string::npos) << e << "." << p.name;
  }
}

TEST(EngineDocs, EveryBuiltinKindIsInBothKindTables) {
  const std::string format = doc("experiment-format.md"), parts = doc("robot-parts.md");
  for (const RobotKind& k : builtin_kinds()) {
    EXPECT_NE(format.find("| `" + k.name + "` |"), std::string::npos) << k.name;
    EXPECT_NE(parts.find("| `" + k.name + "` |"), std::string::npos) << k.name;
  }
}

}  // namespace
}  // namespace fleetsim
