#include "lua/lua_object.hpp"

#include <lua.hpp>

#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "lua/robot_table.hpp"
#include "lua/script.hpp"

namespace fleetsim::lua {

namespace {

constexpr int kMessageHandler = 1;
constexpr int kObjectTable = 2;
constexpr std::size_t kMemoryLimit = 64u << 20;

class LuaObjectBehaviour final : public ObjectBehaviour {
 public:
  ~LuaObjectBehaviour() override { state_.reset(); }

  void init(const Params& params, const ObjectSetup& setup) override {
    script_ = params.text("script");
    if (script_.empty())
      throw SetupError("the lua behaviour needs a script (expected script=\"file.lua\")");
    name_ = std::string(setup.name());
    budget_.limit = kMemoryLimit;
    state_ = new_state(script_, budget_);
    lua_State* L = state_.get();
    push_message_handler(L, &error_);  // slot 1
    // The object table (slot 2), its functions and its random table.
    lua_newtable(L);
    add_function("robots_within", robots_within);
    lua_newtable(L);
    add_function("uniform", random_uniform);
    add_function("uniform_int", random_uniform_int);
    lua_setfield(L, kObjectTable, "random");
    // object.knowledge.<field>: the experiment's knowledge fields, which objects have too.
    const auto fields = setup.knowledge_fields();
    if (!fields.empty()) {
      names_.assign(fields.begin(), fields.end());
      lua_newtable(L);
      lua_createtable(L, 0, 2);
      add_function("__index", knowledge_get);
      add_function("__newindex", knowledge_set);
      lua_setmetatable(L, -2);
      lua_setfield(L, kObjectTable, "knowledge");
    }
    lua_pushvalue(L, kObjectTable);
    table_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, kObjectTable);
    lua_setglobal(L, "object");
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, log, 1);
    lua_setglobal(L, "log");
    // init() sees the object as the experiment places it; draws there come from tick -1.
    ObjectIO start;
    start.id = setup.object();
    start.tick = -1;
    start.name = name_;
    start.object_class = setup.object_class();
    start.position = setup.position();
    start.size = setup.size();
    start.tag = std::string(setup.tag());
    start.rng = CounterRng(0, setup.object(), -1, RandomStream::kObjectBehaviour);
    io_ = &start;
    struct Unbind {
      ObjectIO*& io;
      ~Unbind() { io = nullptr; }
    } unbind{io_};
    push_fields(start);
    ScriptError e;
    if (!load_script(L, script_, e)) throw SetupError(e.text, e.file, e.line);
    if (lua_pcall(L, 0, 0, kMessageHandler) != LUA_OK) {
      lua_pop(L, 1);
      throw SetupError(error_.text, error_.file, error_.line);
    }
    if (!defined("step"))
      throw SetupError("the script '" + script_ +
                       "' defines no global function step() (expected `function step() ... "
                       "end`)");
    if (defined("init") && !call("init")) {
      if (error_.file.empty())
        throw SetupError("the script '" + script_ + "' failed in init(): " + error_.text);
      throw SetupError(error_.text, error_.file, error_.line);
    }
    lua_gc(L, LUA_GCCOLLECT);
  }

  void step(ObjectIO& io) override {
    io_ = &io;
    push_fields(io);
    const bool ok = call("step");
    io_ = nullptr;
    if (!ok) throw std::runtime_error(error_.str());
    pull_fields(io);
  }

  void reset() override {
    if (state_ && defined("reset") && !call("reset")) throw std::runtime_error(error_.str());
  }

 private:
  static LuaObjectBehaviour& self(lua_State* L) {
    return *static_cast<LuaObjectBehaviour*>(lua_touserdata(L, lua_upvalueindex(1)));
  }
  void add_function(const char* name, int (*f)(lua_State*)) {
    lua_State* L = state_.get();
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, -2, name);
  }
  bool defined(const char* name) { return is_global_function(state_.get(), name); }
  bool call(const char* name) {
    lua_State* L = state_.get();
    lua_getglobal(L, name);
    const int status = lua_pcall(L, 0, 0, kMessageHandler);
    if (status == LUA_OK) return true;
    if (status == LUA_ERRMEM)
      error_ = {"", 0, "not enough memory (an object's script may use 64 MiB)"};
    else if (status != LUA_ERRRUN)
      error_ = {"", 0, lua_tostring(L, -1) ? lua_tostring(L, -1) : "?"};
    lua_pop(L, 1);
    if (error_.file.empty() && std::string(name) != "init")
      error_.text = script_ + ": " + error_.text;
    return false;
  }
  void push_fields(const ObjectIO& io) {
    lua_State* L = state_.get();
    auto set_number = [&](const char* k, double v) {
      lua_pushnumber(L, v);
      lua_setfield(L, kObjectTable, k);
    };
    auto set_string = [&](const char* k, std::string_view v) {
      lua_pushlstring(L, v.data(), v.size());
      lua_setfield(L, kObjectTable, k);
    };
    set_string("id", io.name);
    lua_pushinteger(L, static_cast<lua_Integer>(io.id));
    lua_setfield(L, kObjectTable, "number");
    set_string("class", io.object_class);
    lua_pushinteger(L, static_cast<lua_Integer>(io.tick));
    lua_setfield(L, kObjectTable, "tick");
    lua_pushinteger(L, io.round);
    lua_setfield(L, kObjectTable, "round");
    set_number("x", io.position.x);
    set_number("y", io.position.y);
    set_number("size", io.size);
    set_string("tag", io.tag);
  }
  // The writable fields back into io; a wrong value is the script's error.
  void pull_fields(ObjectIO& io) {
    lua_State* L = state_.get();
    auto number = [&](const char* k, double lo) {
      lua_getfield(L, kObjectTable, k);
      int isnum = 0;
      const double v = lua_tonumberx(L, -1, &isnum);
      lua_pop(L, 1);
      if (!isnum || !std::isfinite(v) || v < lo)
        throw std::runtime_error(script_ + ": object." + k + " is not " +
                                 (lo == 0 ? "a number >= 0" : "a finite number") +
                                 " after step() (expected the object's " + k + " in metres)");
      return v;
    };
    io.position = {number("x", -HUGE_VAL), number("y", -HUGE_VAL)};
    io.size = number("size", 0);
    lua_getfield(L, kObjectTable, "tag");
    if (lua_type(L, -1) != LUA_TSTRING) {
      lua_pop(L, 1);
      throw std::runtime_error(script_ + ": object.tag is not a string after step()");
    }
    std::size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    io.tag.assign(s, n);
    lua_pop(L, 1);
  }

  static ObjectIO& io(lua_State* L) {
    LuaObjectBehaviour& b = self(L);
    if (!b.io_) luaL_error(L, "only during init() and step()");
    return *b.io_;
  }
  static int robots_within(lua_State* L) {
    ObjectIO& o = io(L);
    const double d = luaL_checknumber(L, 1);
    if (!o.world) {  // init(): no robots yet to read
      lua_newtable(L);
      return 1;
    }
    std::vector<RobotSeen>& seen = self(L).seen_;
    // Around the object where the script has put it so far (its table, not the C frame's
    // stack slot: this runs inside a call from Lua).
    lua_rawgeti(L, LUA_REGISTRYINDEX, self(L).table_ref_);
    lua_getfield(L, -1, "x");
    lua_getfield(L, -2, "y");
    const Vec2 p{lua_tonumber(L, -2), lua_tonumber(L, -1)};
    lua_pop(L, 3);
    o.world->robots_within(p, d, seen);
    lua_createtable(L, static_cast<int>(seen.size()), 0);
    for (std::size_t i = 0; i < seen.size(); ++i) {
      const RobotSeen& r = seen[i];
      lua_createtable(L, 0, 7);
      lua_pushlstring(L, r.name.data(), r.name.size());
      lua_setfield(L, -2, "id");
      lua_pushinteger(L, static_cast<lua_Integer>(r.id));
      lua_setfield(L, -2, "number");
      lua_pushnumber(L, r.position.x);
      lua_setfield(L, -2, "x");
      lua_pushnumber(L, r.position.y);
      lua_setfield(L, -2, "y");
      lua_pushnumber(L, r.heading);
      lua_setfield(L, -2, "heading");
      lua_pushlstring(L, r.tag.data(), r.tag.size());
      lua_setfield(L, -2, "tag");
      lua_pushlstring(L, r.kind.data(), r.kind.size());
      lua_setfield(L, -2, "kind");
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  }
  static std::span<double> knowledge(lua_State* L, std::size_t f) {
    const ObjectIO& o = io(L);
    if (!o.knowledge_columns) luaL_error(L, "object.knowledge: read and written in step() only");
    return o.knowledge(f);
  }
  static int knowledge_get(lua_State* L) {
    const std::size_t f = knowledge_field(L, 2, self(L).names_, "object.knowledge");
    push_knowledge(L, knowledge(L, f));
    return 1;
  }
  static int knowledge_set(lua_State* L) {
    const std::size_t f = knowledge_field(L, 2, self(L).names_, "object.knowledge");
    pull_knowledge(L, 3, knowledge(L, f), ("object.knowledge." + self(L).names_[f]).c_str());
    return 0;
  }
  static int random_uniform(lua_State* L) { return lua::random_uniform(L, io(L).rng, "object"); }
  static int random_uniform_int(lua_State* L) {
    return lua::random_uniform_int(L, io(L).rng, "object");
  }
  static int log(lua_State* L) {
    write_log_line(false, self(L).name_, log_text(L));
    return 0;
  }

  std::string script_, name_;
  MemoryBudget budget_;
  ScriptError error_;
  StatePtr state_;
  ObjectIO* io_ = nullptr;
  int table_ref_ = LUA_NOREF;  ///< the object table, in the registry
  std::vector<RobotSeen> seen_;
  std::vector<std::string> names_;  ///< the knowledge fields
};

}  // namespace

std::unique_ptr<ObjectBehaviour> make_lua_object_behaviour() {
  return std::make_unique<LuaObjectBehaviour>();
}

}  // namespace fleetsim::lua
