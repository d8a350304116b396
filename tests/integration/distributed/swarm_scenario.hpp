// A random swarm experiment whose robots cross region borders often, whose loop functions add,
// move and remove robots near the borders and set tags, with per-robot controllers that carry
// state (C++ and Lua): what the distributed-swarm and checkpoint tests run.
#pragma once

#include <memory>
#include <sstream>
#include <string>

#include "border_churn.hpp"
#include "fleetsim/plugin.hpp"
#include "plugins/builtins.hpp"

namespace fleetsim::testing {

/// A Lua controller whose motion depends on state kept in globals, a table and a local: a
/// robot that lost any of it on its way to another process would drive differently.
inline const char* kScript = R"(
local turns = 0
memory = { last = 0, seen = {} }
function init() robot.leds.set_all_colors("blue") end
function step()
  count = (count or 0) + 1
  local p = robot.proximity
  local near = 0
  for i = 1, #p do near = near + p[i].value end
  memory.seen[#memory.seen % 5 + 1] = near
  if near > 0.2 or count % 17 == 0 then turns = turns + 1 end
  local k = (turns % 3) - 1
  robot.wheels.set_velocity(5 + 2 * k + memory.last, 5 - 2 * k)
  memory.last = (memory.last + 1) % 3
  if turns % 2 == 0 then robot.leds.set_all_colors("green") else robot.leds.set_all_colors("red") end
end
)";

struct Scenario {
  std::string xml;
  int regions = 0;
};

/// A random experiment: an arena split into 2 to 4 regions (vertical strips, or a 2x2 grid),
/// robots crowded around the borders, three controllers.
/// `library`: a plug-in library that registers border_churn (border_churn_plugin.cpp), for a
/// run of the fleetsim program; empty for the tests' own registry.
inline Scenario random_scenario(std::uint64_t seed, const std::string& script,
                                const std::string& log, const std::string& library = "") {
  CounterRng rng(seed, 0, 0, RandomStream::kPlacement);
  // Sizes in whole decimetres (written exactly in the XML).
  const double w = 6 + static_cast<double>(rng.below(40)) / 10;
  const double h = 4 + static_cast<double>(rng.below(20)) / 10;
  const int layout = static_cast<int>(rng.below(3));  // 0: 2 strips, 1: 3 strips, 2: 2x2
  std::ostringstream physics;
  int regions = 0;
  auto box = [&](double x0, double y0, double x1, double y1) {
    physics << "    <kinematics2d id=\"r" << regions++ << "\" region=\"" << x0 << "," << y0 << ","
            << x1 << "," << y1 << "\"/>\n";
  };
  const double hw = w / 2, hh = h / 2;
  if (layout == 0) {
    box(-hw, -hh, 0, hh);
    box(0, -hh, hw, hh);
  } else if (layout == 1) {
    box(-hw, -hh, -hw / 3, hh);
    box(-hw / 3, -hh, 0, hh);
    box(0, -hh, hw, hh);
  } else {
    box(-hw, -hh, 0, 0);
    box(0, -hh, hw, 0);
    box(-hw, 0, 0, hh);
    box(0, 0, hw, hh);
  }
  const int n = 60 + static_cast<int>(rng.below(60));
  std::ostringstream xml;
  xml << R"(<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="12" seed=")"
      << seed << R"("/>
)" << (library.empty() ? "" : "  <plugins><library path=\"" + library + "\"/></plugins>\n")
      << R"(
  <controllers>
    <controller id="diffuse" type="diffusion" speed="0.12"/>
    <controller id="walk" type="random_walk" speed="0.12" turn_probability="0.2"/>
    <controller id="script" type="lua" script=")"
      << script << R"("/>
  </controllers>
  <arena size=")"
      << w << "," << h << R"(">
    <wall from="-1,-1" to="1,1"/>
    <distribute count=")"
      << n / 3 << R"(" kind="epuck" controller="diffuse" id_prefix="d" region="-1.5,)" << -hh
      << ",1.5," << hh << R"("/>
    <distribute count=")"
      << n / 3 << R"(" kind="epuck" controller="walk" id_prefix="w" region="-1.5,)" << -hh
      << ",1.5," << hh << R"("/>
    <distribute count=")"
      << n / 3 << R"(" kind="epuck" controller="script" id_prefix="s"/>
  </arena>
  <physics>
)" << physics.str()
      << R"(  </physics>
  <loop_functions type="border_churn" end_at=")"
      << 90 + rng.below(30) << R"("/>
  <log path=")"
      << log << R"("/>
</fleetsim>
)";
  return {xml.str(), regions};
}

/// Removes a scenario's <physics>: one kinematics2d region over the whole arena.
inline void drop_physics(std::string& xml) {
  const auto from = xml.find("  <physics>"), to = xml.find("</physics>\n");
  if (from != std::string::npos && to != std::string::npos) xml.erase(from, to + 11 - from);
}

inline std::unique_ptr<PluginRegistry> test_registry() {
  auto reg = std::make_unique<PluginRegistry>();
  register_builtins(*reg);
  add_border_churn(*reg);
  return reg;
}

}  // namespace fleetsim::testing
