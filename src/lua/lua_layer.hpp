// `<layer type="lua" script="file.lua" size="n">`: an environment layer written in Lua
// (docs/lua-api.md, "Layers"; include/fleetsim/layer.hpp).
//
// The script defines value(r) (required), and optionally step(), init() and reset(). Each tick
// the engine fills the global table `layer` (name, size, tick, dt, robots, objects), calls
// step() once, then value(r) for every robot r of layer.robots in increasing id order:
//   r.id, r.number, r.kind, r.x, r.y, r.heading, r.radius, r.tag    the robot (metres, radians)
//   r.value         its values of the previous tick: a number (size 1) or a table of n numbers
// value(r) returns the robot's new values, in the same form. layer.objects lists the objects
// {id, number, class, x, y, size, tag} by increasing number; layer.obstacle(x, y) says whether
// a point is outside the arena or on a black pixel of its bitmap; layer.arena = {min_x, min_y,
// max_x, max_y}; layer.random.uniform([a[, b]]) and uniform_int(a, b) draw the same every run.
// One Lua state per layer, used on the run's main thread only.
#pragma once

#include <memory>

#include "fleetsim/layer.hpp"

namespace fleetsim::lua {

std::unique_ptr<Layer> make_lua_layer();

}  // namespace fleetsim::lua
