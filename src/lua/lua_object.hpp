// `<behaviour type="lua" script="file.lua">`: an object's behaviour written in Lua
// (docs/lua-api.md, "Objects"; include/fleetsim/object_behaviour.hpp).
//
// The script defines step() (required), and optionally init() and reset(). It reads and writes
// the global table `object`:
//   object.x, object.y   position, metres (writable)
//   object.size          full width, metres, >= 0 (writable)
//   object.tag           string (writable)
//   object.id            its id in the experiment; object.number its entity id;
//   object.class         its class (read)
//   object.tick          the tick; object.round the round within it (processing_time)
//   object.robots_within(d)       the robots within d metres: a list of tables {id, number,
//                                 x, y, heading, tag, kind}, by increasing number
//   object.random.uniform([a[, b]]), object.random.uniform_int(a, b)   (the same every run)
// and log(...). One Lua state per object, used on the run's main thread only. What step()
// leaves in the table's writable fields becomes the object's state.
#pragma once

#include <memory>

#include "fleetsim/object_behaviour.hpp"

namespace fleetsim::lua {

std::unique_ptr<ObjectBehaviour> make_lua_object_behaviour();

}  // namespace fleetsim::lua
