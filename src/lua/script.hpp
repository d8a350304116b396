// A controller script in a Lua state: reading and compiling it, running its functions, and
// turning Lua's errors into fleetsim's (`file:line: message`, with the script's full path, not
// Lua's shortened one).
//
// Lua here is the Debian build compiled as C++ (liblua5.4-c++): a Lua error unwinds C++
// frames with their destructors, so the C functions of the robot API may hold std::string
// and vectors while they check arguments.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "fleetsim/random.hpp"

struct lua_State;

namespace fleetsim::lua {

/// Closes the state when the owner goes.
struct StateCloser {
  void operator()(lua_State* state) const;
};
using StatePtr = std::unique_ptr<lua_State, StateCloser>;

/// Where and why a script failed, filled by the message handler.
struct ScriptError {
  std::string file;  ///< full path of the script (or module) where the error was raised
  int line = 0;      ///< 1-based, 0 when unknown
  std::string text;  ///< the message without its position
  /// "file:line: text" (or just the text when there is no position).
  std::string str() const;
};

/// Where a state's small blocks live (script.cpp): made by new_state, kept with the budget.
class BlockHeap;
struct BlockHeapDeleter {
  void operator()(BlockHeap* heap) const;
};

/// The memory a state may use: an allocation past `limit` fails, which Lua raises as a "not
/// enough memory" error in the script (a runaway script stops its run instead of the machine).
/// Owned by the state's owner; must outlive the state (and is not moved while it lives).
struct MemoryBudget {
  std::size_t limit = 0;  ///< bytes
  std::size_t used = 0;   ///< bytes now held by the state
  /// The state's blocks of up to 512 bytes (its tables, their slots, short strings): laid out
  /// one after the other in the order the state asks for them, without the C library's
  /// per-block header, on memory the kernel is asked to back with huge pages (script.cpp).
  std::unique_ptr<BlockHeap, BlockHeapDeleter> heap;
};

/// A new state, its memory counted in `budget`, with Lua's standard libraries, `os.exit` replaced
/// by an error (a script must not end the run without its log), and the script's folder first in
/// package.path (as in ARGoS: `require "x"` finds x.lua beside the script).
StatePtr new_state(const std::string& script_path, MemoryBudget& budget);

/// Pushes the message handler used with every lua_pcall of a script function; it records the
/// error's position into `error` (which must outlive the state) and leaves "file:line: text"
/// as the error value.
void push_message_handler(lua_State* state, ScriptError* error);

/// Whether the script defined a global function `name` (after its chunk ran).
bool is_global_function(lua_State* state, const char* name);

/// Reads the script at `path` and compiles it (text only: binary chunks are refused, since a
/// crafted one can crash Lua). On success pushes the chunk and returns true; otherwise fills
/// `error` (line set for a syntax error, 0 when the file cannot be read) and pushes nothing.
bool load_script(lua_State* state, const std::string& path, ScriptError& error);

/// Pushes a knowledge field's numbers: a number when it has one, else a table 1..n.
void push_knowledge(lua_State* state, std::span<const double> values);

/// The index in `names` of the knowledge field named by the string at stack index `arg`; a Lua
/// error "<prefix>.<key>: no such knowledge field (the experiment declares: ...)" otherwise.
std::size_t knowledge_field(lua_State* state, int arg, std::span<const std::string> names,
                            const char* prefix);

/// Writes the value at stack index `index` into `out`: a number for a field of one, else a
/// table of exactly out.size() numbers; a Lua error naming `what` (e.g. "knowledge.energy")
/// for anything else, with `out` unchanged.
void pull_knowledge(lua_State* state, int index, std::span<double> out, const char* what);

/// `<what>.random.uniform([a[, b]])` and `.uniform_int(a, b)` of the scripts that are not a
/// robot's (objects, layers): a draw of `rng` from the call's arguments pushed; returns 1.
int random_uniform(lua_State* state, CounterRng& rng, const char* what);
int random_uniform_int(lua_State* state, CounterRng& rng, const char* what);

/// The call's arguments as log() writes them, one after the other (tostring of each).
std::string log_text(lua_State* state);

/// Splits a compile error message ("<chunk>:<line>: text") given the chunk's file path.
ScriptError split_compile_error(std::string_view message, const std::string& path);

}  // namespace fleetsim::lua
