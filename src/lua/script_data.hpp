// A robot script's data, saved from one Lua state and restored into another that loaded the
// same script (a robot moving to another process in a distributed run, docs/distributed.md).
//
// What is carried: the script's global variables (those not present before the script ran)
// and the upvalues of its functions (the `local` variables at the top of a script), found by
// walking the script's global functions and their upvalues in a fixed order (globals sorted by
// name, upvalues by index), so the same script gives the same walk in both states. Values:
// nil, booleans, integers and floats (exact), strings and tables of those. Functions are not
// carried: the receiving state defined them when it ran the script; a table's function fields
// are kept from the receiving state and its other fields replaced. The standard library
// tables and the robot table are the receiving state's own. A value Lua cannot carry
// (userdata, a coroutine, a table that contains itself) makes save fail with a message naming
// the variable.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

struct lua_State;

namespace fleetsim::lua {

/// The names of the globals present in `state` now (call before the script runs).
std::set<std::string> global_names(lua_State* state);

/// The globals a script defined (those not in `base`, from global_names()), sorted by name
/// (string keys only; others are not variables).
std::vector<std::string> script_globals(lua_State* state, const std::set<std::string>& base);

/// Appends the script's data to `out`. Throws std::runtime_error naming a variable it cannot
/// carry. `base`: global_names() from before the script ran.
void save_script_data(lua_State* state, const std::set<std::string>& base,
                      std::vector<std::uint8_t>& out);

/// Restores what save_script_data wrote. Throws std::runtime_error when the bytes are not
/// such a record or do not fit the script's functions (a different script).
void restore_script_data(lua_State* state, const std::set<std::string>& base,
                         std::span<const std::uint8_t> in);

}  // namespace fleetsim::lua
