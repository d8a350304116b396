// ARGoS's Lua geometry types: the globals `vector2`, `vector3` and `quaternion` (constructors of
// tables with x, y[, z] / w, x, y, z fields, arithmetic metamethods and ARGoS's methods). They are
// made in a state the first time a script names one of them: most controllers never do, and
// each state would otherwise pay for them.
#pragma once

struct lua_State;

namespace fleetsim::lua {

/// Defines the three globals in `state` (rawset on the globals table). Raises a Lua error if
/// the definitions fail to load (a bug).
void open_geometry_types(lua_State* state);

}  // namespace fleetsim::lua
