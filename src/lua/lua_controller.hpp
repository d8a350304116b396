// `lua`: a controller written in Lua 5.4 against ARGoS's Lua robot API (docs/lua-api.md).
//
// XML parameters (attributes of <controller type="lua">):
//   script  path  (required)  the Lua file, relative to the experiment file
//
// One Lua state per robot (the controller is per robot): a script keeps its robot's state in
// globals, as ARGoS scripts do, and robots step concurrently on different workers without
// sharing anything. Loading: the script is compiled and run once per robot, then its init()
// is called; a syntax error, a missing file, a script without step() or an error in init()
// is a SetupError (at the script's file and line when there is one). During the run an error
// in step() is a std::runtime_error whose message starts with "file:line:".
#pragma once

#include <memory>
#include <set>
#include <string>

#include "core/script_globals.hpp"
#include "fleetsim/controller.hpp"
#include "lua/robot_table.hpp"
#include "lua/script.hpp"

namespace fleetsim {

namespace lua {

class LuaController final : public Controller, public ScriptGlobals {
 public:
  /// What one robot's script may allocate, bytes.
  static constexpr std::size_t kDefaultMemoryLimit = std::size_t{256} << 20;

  /// `log` receives log()/logerr() lines (default: stdout/stderr).
  explicit LuaController(LogSink log = {}, std::size_t memory_limit = kDefaultMemoryLimit)
      : log_(std::move(log)) {
    budget_.limit = memory_limit;
  }
  ~LuaController() override;
  void init(const Params& params, const ControllerSetup& setup) override;
  void step(RobotIO& io) override;
  void reset() override;
  void destroy() override;
  /// The script's globals and locals (src/lua/script_data.hpp), and whether commands given in
  /// init() still wait for the first step.
  bool save(std::vector<std::uint8_t>& out) const override;
  void restore(std::span<const std::uint8_t> state) override;

  /// Bytes the Lua state uses now (for measurements and tests).
  std::size_t memory_bytes() const;

  /// Between steps: the script's globals that are numbers, strings or booleans (the live view).
  std::vector<std::pair<std::string, ScriptValue>> script_globals() const override;
  std::string set_script_global(const std::string& name, const ScriptValue& value) override;

 private:
  /// Calls the global function `name` if the script defines it (returns false if not); on a
  /// Lua error fills error_ and throws what `make` returns.
  bool call(const char* name, bool required);
  /// In the check made at load: a SetupError at the line of the first use that reaches into a
  /// table of ARGoS's API the kind lacks (`robot.light[1]`), unless the script tests for it.
  void refuse_absent_tables() const;
  /// Adds to a Lua error on a nil `robot.<name>` which table the kind lacks.
  void explain(lua::ScriptError& error) const;

  LogSink log_;
  std::string script_;
  lua::ScriptError error_;    // written by the message handler (slot 1 of the stack)
  lua::MemoryBudget budget_;  // before state_: it must outlive the state
  lua::StatePtr state_;
  std::unique_ptr<lua::RobotTable> robot_;
  std::set<std::string> base_globals_;  ///< present before the script ran
  EntityId id_ = kNoEntity;
  std::string name_;  ///< robot.id
  bool destroyed_ = false;
};

}  // namespace lua

/// A new `lua` controller (the registry's factory).
std::unique_ptr<Controller> make_lua_controller();

}  // namespace fleetsim
