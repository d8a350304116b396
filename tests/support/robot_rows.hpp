// A robot's row and position by its name, for tests that follow named robots through a run.
#pragma once

#include <stdexcept>
#include <string>

#include "world/world.hpp"

namespace fleetsim::testing {

/// The row of the robot named `name`; throws when there is none.
inline std::uint32_t robot_row(const WorldState& state, const std::string& name) {
  const auto& names = state.robot_name();
  for (std::uint32_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  throw std::runtime_error("no robot " + name);
}

/// Where the robot named `name` is.
inline Vec2 robot_position(const WorldState& state, const std::string& name) {
  const std::uint32_t i = robot_row(state, name);
  return {state.x()[i], state.y()[i]};
}

}  // namespace fleetsim::testing
