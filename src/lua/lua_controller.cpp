#include "lua/lua_controller.hpp"

#include <lua.hpp>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "lua/script_data.hpp"
#include "lua/table_uses.hpp"

namespace fleetsim {

namespace lua {

namespace {
// Stack slots: the message handler, the globals table and the string "step" (so the call of
// every tick finds the function without hashing its name).
constexpr int kMessageHandler = 1;
constexpr int kGlobals = 2;
constexpr int kStepName = 3;

/// Runs `f` when the scope ends (the step's cleanup on every path).
template <class F>
struct AtExit {
  F f;
  ~AtExit() { f(); }
};
template <class F>
AtExit(F) -> AtExit<F>;
}  // namespace

// The state goes first: closing it runs the script's finalizers (__gc), which may still call
// the robot table's functions.
LuaController::~LuaController() {
  state_.reset();
}

void LuaController::init(const Params& params, const ControllerSetup& setup) {
  script_ = params.text("script");
  if (script_.empty())
    throw SetupError("the lua controller needs a script (expected script=\"file.lua\")");
  id_ = setup.robot();
  state_ = new_state(script_, budget_);
  lua_State* L = state_.get();
  push_message_handler(L, &error_);
  lua_pushglobaltable(L);
  lua_pushliteral(L, "step");
  // robot.id is the robot's name, as in ARGoS (its number when a setup gives no name). The
  // parser's check of the script (before any robot exists) has no robot: robot.id is the name
  // of the first robot it will drive there (a script may read its role from it in init).
  // Its log lines are dropped: a user would see them once more than there are robots.
  const bool check = id_ == kNoEntity;
  name_ = !setup.robot_name().empty() ? std::string(setup.robot_name())
          : check                     ? std::string()
                                      : std::to_string(id_);
  robot_ = std::make_unique<RobotTable>(
      L, setup, name_, check ? LogSink([](bool, std::string_view, std::string_view) {}) : log_);
  // Draws in init and reset: a fixed stream per robot (tick -1). The experiment's seed is not
  // known here; see docs/lua-api.md.
  robot_->set_rng_outside_step(CounterRng(0, id_, -1, RandomStream::kController));

  base_globals_ = global_names(L);
  if (check) refuse_absent_tables();
  ScriptError e;
  if (!load_script(L, script_, e)) throw SetupError(e.text, e.file, e.line);
  if (const int status = lua_pcall(L, 0, 0, kMessageHandler); status != LUA_OK) {
    if (status != LUA_ERRRUN) error_ = {"", 0, lua_tostring(L, -1) ? lua_tostring(L, -1) : "?"};
    lua_pop(L, 1);
    explain(error_);
    if (error_.file.empty())
      throw SetupError("the script '" + script_ + "' failed while loading: " + error_.text);
    throw SetupError(error_.text, error_.file, error_.line);
  }
  if (!is_global_function(L, "step"))
    throw SetupError("the script '" + script_ +
                     "' defines no global function step() (expected `function step() ... end`)");
  call("init", false);
  // What loading left behind (the source text, the parser's tables) would otherwise stay until
  // the collector's next cycle, in every robot's state.
  lua_gc(L, LUA_GCCOLLECT);
}

void LuaController::refuse_absent_tables() const {
  std::ifstream in(script_);
  if (!in) return;  // (load_script says why)
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<TableUse> uses = robot_table_uses(text.str());
  for (const TableUse& use : uses) {
    if (!use.reaches_in) continue;
    const std::string absent = robot_->absent_table(use.name);
    if (absent.empty()) continue;
    // A script that tests for the table (`if robot.light then`) may run on kinds without it.
    bool tested = false;
    for (const TableUse& other : uses) tested |= other.name == use.name && !other.reaches_in;
    if (!tested) throw SetupError(absent, script_, use.line);
  }
}

void LuaController::explain(ScriptError& error) const {
  // Lua says "attempt to index a nil value (field 'light')"; when the line reads robot.light
  // and the kind lacks that table, say so.
  const std::size_t field = error.text.find("a nil value (field '");
  if (field == std::string::npos || error.file.empty() || error.line <= 0) return;
  const std::size_t from = field + 20, to = error.text.find('\'', from);
  if (to == std::string::npos) return;
  const std::string name = error.text.substr(from, to - from);
  const std::string absent = robot_->absent_table(name);
  if (absent.empty()) return;
  std::ifstream in(error.file);
  std::string line;
  for (int k = 0; k < error.line && std::getline(in, line); ++k) {
  }
  if (line.find("robot." + name) == std::string::npos) return;
  error.text += " (" + absent + ")";
}

bool LuaController::call(const char* name, bool required) {
  lua_State* L = state_.get();
  int type = LUA_TNIL;
  if (required) {  // step
    lua_pushvalue(L, kStepName);
    type = lua_rawget(L, kGlobals);
  }
  if (type == LUA_TNIL) {
    lua_pop(L, required ? 1 : 0);
    type = lua_getglobal(L, name);
  }
  if (type != LUA_TFUNCTION && !required) {
    lua_pop(L, 1);
    return false;
  }
  const int status = lua_pcall(L, 0, 0, kMessageHandler);
  if (status == LUA_OK) return true;
  if (status == LUA_ERRMEM) {
    // Lua does not call the message handler for a memory error: no line to give.
    error_ = {"", 0,
              "not enough memory (a robot's script may use " + std::to_string(budget_.limit >> 20) +
                  " MiB; it holds " + std::to_string(budget_.used >> 20) + " MiB)"};
  } else if (status != LUA_ERRRUN) {
    const char* m = lua_tostring(L, -1);
    error_ = {"", 0, m ? m : "error in the error handler"};
  }
  lua_pop(L, 1);
  explain(error_);
  const std::string where = error_.file.empty() ? script_ + ": " : "";
  if (std::string(name) == "init") {
    if (error_.file.empty())
      throw SetupError("the script '" + script_ + "' failed in init(): " + error_.text);
    throw SetupError(error_.text, error_.file, error_.line);
  }
  throw std::runtime_error(where + error_.str());
}

void LuaController::step(RobotIO& io) {
  AtExit unbind{[this] { robot_->end_step(); }};
  robot_->begin_step(io);
  call("step", true);
}

void LuaController::reset() {
  if (!state_) return;
  // reset() draws what init() drew (ARGoS starts its generators again on a reset).
  robot_->set_rng_outside_step(CounterRng(0, id_, -1, RandomStream::kController));
  call("reset", false);
}

void LuaController::destroy() {
  if (!state_ || destroyed_) return;
  destroyed_ = true;
  try {
    // The parser's check instance (no robot) never ran: its script is not told it ends.
    if (id_ != kNoEntity) call("destroy", false);
  } catch (const std::exception& e) {
    // The run is over: report, but do not turn a finished run into a failed one.
    (log_ ? log_ : LogSink(write_log_line))(true, name_,
                                            std::string("error in destroy(): ") + e.what());
  }
  state_.reset();  // first: its finalizers may call the robot table
  robot_.reset();
}

bool LuaController::save(std::vector<std::uint8_t>& out) const {
  if (!state_) return true;
  out.push_back(robot_->has_staged() ? 1 : 0);
  try {
    save_script_data(state_.get(), base_globals_, out);
  } catch (const std::exception& e) {
    throw std::runtime_error("the script '" + script_ + "': " + e.what());
  }
  return true;
}

void LuaController::restore(std::span<const std::uint8_t> in) {
  if (in.empty() || in[0] > 1)
    throw std::runtime_error("the script '" + script_ + "': a saved Lua state is corrupt");
  // init() ran here too; what it staged was applied long ago where the robot came from.
  if (in[0] == 0) robot_->clear_staged();
  try {
    restore_script_data(state_.get(), base_globals_, in.subspan(1));
  } catch (const std::exception& e) {
    throw std::runtime_error("the script '" + script_ + "': " + e.what());
  }
}

std::size_t LuaController::memory_bytes() const {
  return state_ ? budget_.used : 0;
}

namespace {

/// The value on top of the stack if it is a number, a string or a boolean.
std::optional<ScriptValue> scalar(lua_State* L) {
  ScriptValue v;
  switch (lua_type(L, -1)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, -1)) {
        v.type = ScriptValue::Type::kInteger;
        v.integer = lua_tointeger(L, -1);
      } else {
        v.type = ScriptValue::Type::kNumber;
        v.number = lua_tonumber(L, -1);
      }
      return v;
    case LUA_TSTRING: {
      std::size_t n = 0;
      const char* text = lua_tolstring(L, -1, &n);
      v.type = ScriptValue::Type::kString;
      v.text.assign(text, n);
      return v;
    }
    case LUA_TBOOLEAN:
      v.type = ScriptValue::Type::kBoolean;
      v.boolean = lua_toboolean(L, -1);
      return v;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::vector<std::pair<std::string, ScriptValue>> LuaController::script_globals() const {
  std::vector<std::pair<std::string, ScriptValue>> out;
  if (!state_) return out;
  lua_State* L = state_.get();
  for (const std::string& name : lua::script_globals(L, base_globals_)) {
    lua_getglobal(L, name.c_str());
    if (auto v = scalar(L)) out.emplace_back(name, std::move(*v));
    lua_pop(L, 1);
  }
  return out;
}

std::string LuaController::set_script_global(const std::string& name, const ScriptValue& value) {
  if (!state_) return "the robot's script is not loaded";
  lua_State* L = state_.get();
  std::optional<ScriptValue> now;
  if (!base_globals_.count(name)) {
    lua_getglobal(L, name.c_str());
    now = scalar(L);
    lua_pop(L, 1);
  }
  if (!now) {
    std::string names;
    for (const auto& [n, v] : script_globals()) names += (names.empty() ? "" : ", ") + n;
    return "the script '" + script_ + "' has no global '" + name +
           "' that is a number, a string or a boolean (" +
           (names.empty() ? std::string("it has none") : "its: " + names) + ")";
  }
  if (!now->same_kind(value))
    return "global '" + name + "' of the script is a " +
           (now->type == ScriptValue::Type::kInteger ? std::string("number") : now->type_name()) +
           ", not a " +
           (value.type == ScriptValue::Type::kInteger ? std::string("number") : value.type_name());
  switch (value.type) {
    case ScriptValue::Type::kInteger:
      // A global keeps its subtype (Lua tells integers from floats in `//`, tostring, ...):
      // a float global given an integer gets it as a float, an integer one given an integral
      // number gets it as an integer.
      if (now->type == ScriptValue::Type::kNumber)
        lua_pushnumber(L, static_cast<lua_Number>(value.integer));
      else
        lua_pushinteger(L, value.integer);
      break;
    case ScriptValue::Type::kNumber:
      if (now->type == ScriptValue::Type::kInteger && std::trunc(value.number) == value.number &&
          std::abs(value.number) < 9.2e18)
        lua_pushinteger(L, static_cast<lua_Integer>(value.number));
      else
        lua_pushnumber(L, value.number);
      break;
    case ScriptValue::Type::kString:
      lua_pushlstring(L, value.text.data(), value.text.size());
      break;
    case ScriptValue::Type::kBoolean:
      lua_pushboolean(L, value.boolean);
      break;
  }
  lua_setglobal(L, name.c_str());
  return "";
}

}  // namespace lua

std::unique_ptr<Controller> make_lua_controller() {
  return std::make_unique<lua::LuaController>();
}

}  // namespace fleetsim
