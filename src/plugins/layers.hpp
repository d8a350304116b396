// The built-in environment layers: bitmap (a PNG sampled at the robot) and nearest_object
// (the distance, and bearing, to the nearest object of a tag or class); fleetsim/layer.hpp.
// The Lua layer is in src/lua/lua_layer.hpp.
#pragma once

#include "fleetsim/plugin.hpp"

namespace fleetsim {

/// Adds the built-in layers to `registry` (register_builtins calls it).
void register_builtin_layers(PluginRegistry& registry);

}  // namespace fleetsim
