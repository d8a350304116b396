// The built-in reward terms for learning: target, centroid, collision, neighbours
// (fleetsim/reward.hpp).
#pragma once

#include "fleetsim/plugin.hpp"

namespace fleetsim {

/// Adds the built-in reward terms to `registry` (register_builtins calls it).
void register_builtin_rewards(PluginRegistry& registry);

}  // namespace fleetsim
