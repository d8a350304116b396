#include "lua/lua_ensemble.hpp"

#include <lua.hpp>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "lua/script.hpp"

namespace fleetsim::lua {

namespace {

constexpr int kMessageHandler = 1;
constexpr std::size_t kMemoryLimit = 256u << 20;

/// A component proxy's storage (a full userdata would cost an allocation per call: the two
/// proxies are made once and pointed at each call's components).
struct Proxy {
  Component component;
  bool knowledge = false;  ///< the proxy's `knowledge` sub-table rather than the component
};

class LuaEnsemble final : public Ensemble {
 public:
  ~LuaEnsemble() override { state_.reset(); }

  void init(const Params& params, const EnsembleSetup& setup) override {
    script_ = params.text("script");
    if (script_.empty())
      throw SetupError("the lua ensemble needs a script (expected script=\"file.lua\")");
    names_.assign(setup.knowledge_fields().begin(), setup.knowledge_fields().end());
    budget_.limit = kMemoryLimit;
    state_ = new_state(script_, budget_);
    lua_State* L = state_.get();
    push_message_handler(L, &error_);  // slot 1
    // Globals: tick(), status(text), end_run(), log(...).
    add_global("tick", [](lua_State* S) {
      lua_pushinteger(S, static_cast<lua_Integer>(self(S).world_->tick()));
      return 1;
    });
    add_global("status", [](lua_State* S) {
      self(S).world_->set_status(luaL_checkstring(S, 1));
      return 0;
    });
    add_global("end_run", [](lua_State* S) {
      self(S).world_->end_run();
      return 0;
    });
    add_global("log", [](lua_State* S) {
      std::string line = "[ensemble] ";
      for (int i = 1; i <= lua_gettop(S); ++i) line += luaL_tolstring(S, i, nullptr), lua_pop(S, 1);
      line += "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
      return 0;
    });
    // The component proxies (slots 2 to 7: three components, each with its knowledge table).
    for (int k = 0; k < 3; ++k) {
      proxies_[k][0].knowledge = false;
      proxies_[k][1].knowledge = true;
      make_proxy(&proxies_[k][1]);
      const int knowledge = lua_gettop(L);
      make_proxy(&proxies_[k][0]);
      // The knowledge table is kept in the component's metatable (see get).
      lua_getmetatable(L, -1);
      lua_pushvalue(L, knowledge);
      lua_setfield(L, -2, "__knowledge");
      lua_pop(L, 1);
      slot_[k] = lua_gettop(L);
    }
    ScriptError e;
    if (!load_script(L, script_, e)) throw SetupError(e.text, e.file, e.line);
    if (lua_pcall(L, 0, 0, kMessageHandler) != LUA_OK) {
      lua_pop(L, 1);
      throw SetupError(error_.text, error_.file, error_.line);
    }
    has_ = {defined("is_coordinator"), defined("is_member"), defined("membership"),
            defined("exchange")};
    if (!has_[3])
      throw SetupError("the ensemble script '" + script_ +
                       "' defines no global function exchange(c, m) (expected `function "
                       "exchange(c, m) ... end`)");
    lua_gc(L, LUA_GCCOLLECT);
  }

  bool is_coordinator(EnsembleWorld& world, const Component& c) override {
    return !has_[0] || call("is_coordinator", world, &c, nullptr, true);
  }
  bool is_member(EnsembleWorld& world, const Component& m) override {
    return !has_[1] || call("is_member", world, &m, nullptr, true);
  }
  bool membership(EnsembleWorld& world, const Component& c, const Component& m) override {
    return !has_[2] || call("membership", world, &c, &m, true);
  }
  void exchange(EnsembleWorld& world, const Component& c, const Component& m) override {
    call("exchange", world, &c, &m, false);
  }

 private:
  static LuaEnsemble& self(lua_State* L) {
    return *static_cast<LuaEnsemble*>(lua_touserdata(L, lua_upvalueindex(1)));
  }
  static Proxy& proxy(lua_State* L, int index) {
    lua_getmetatable(L, index);
    lua_getfield(L, -1, "__proxy");
    Proxy* p = static_cast<Proxy*>(lua_touserdata(L, -1));
    lua_pop(L, 2);
    return *p;
  }
  void add_global(const char* name, int (*f)(lua_State*)) {
    lua_State* L = state_.get();
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, f, 1);
    lua_setglobal(L, name);
  }
  // An empty table whose metatable reads (and, for knowledge, writes) through `p`.
  void make_proxy(Proxy* p) {
    lua_State* L = state_.get();
    lua_newtable(L);
    lua_createtable(L, 0, 4);
    lua_pushlightuserdata(L, p);
    lua_setfield(L, -2, "__proxy");
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, get, 1);
    lua_setfield(L, -2, "__index");
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, set, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushvalue(L, -1);
    lua_setmetatable(L, -3);
    lua_pop(L, 1);  // the proxy stays; its metatable is reachable from it
  }
  std::size_t field(lua_State* L, int arg) const {
    return knowledge_field(L, arg, names_, "knowledge");
  }
  static int get(lua_State* L) {
    LuaEnsemble& e = self(L);
    const Proxy& p = proxy(L, 1);
    EnsembleWorld& w = *e.world_;
    if (p.knowledge) {
      push_knowledge(L, w.knowledge(p.component, e.field(L, 2)));
      return 1;
    }
    const std::string key = luaL_checkstring(L, 2);
    const Component& c = p.component;
    if (key == "id") {
      lua_pushinteger(L, static_cast<lua_Integer>(c.id));
    } else if (key == "tag") {
      lua_pushstring(L, w.tag(c).c_str());
    } else if (key == "kind") {
      if (c.object) return luaL_error(L, "an object has no kind (read its class)");
      lua_pushstring(L, w.kind(c).name.c_str());
    } else if (key == "class") {
      const std::string_view cls = w.object_class(c);
      lua_pushlstring(L, cls.data(), cls.size());
    } else if (key == "object") {
      lua_pushboolean(L, c.object);
    } else if (key == "size") {
      lua_pushnumber(L, w.size(c));
    } else if (key == "x") {
      lua_pushnumber(L, w.position(c).x);
    } else if (key == "y") {
      lua_pushnumber(L, w.position(c).y);
    } else if (key == "heading") {
      lua_pushnumber(L, w.heading(c));
    } else if (key == "knowledge") {
      lua_getmetatable(L, 1);
      lua_getfield(L, -1, "__knowledge");
    } else {
      return luaL_error(L,
                        "a component has no field '%s' (expected id, tag, kind, class, object, "
                        "size, x, y, heading or knowledge)",
                        key.c_str());
    }
    return 1;
  }
  static int set(lua_State* L) {
    LuaEnsemble& e = self(L);
    const Proxy& p = proxy(L, 1);
    if (!p.knowledge)
      return luaL_error(L,
                        "a component's fields are read only (write its knowledge: "
                        "c.knowledge.name = value)");
    const std::size_t f = e.field(L, 2);
    pull_knowledge(L, 3, e.world_->knowledge(p.component, f), ("knowledge." + e.names_[f]).c_str());
    return 0;
  }
  bool defined(const char* name) { return is_global_function(state_.get(), name); }
  // Calls the script's `name` with one or two components; returns its result as a boolean.
  bool call(const char* name, EnsembleWorld& world, const Component* a, const Component* b,
            bool result) {
    lua_State* L = state_.get();
    world_ = &world;
    lua_getglobal(L, name);
    int args = 0;
    for (const Component* c : {a, b}) {
      if (!c) continue;
      proxies_[args][0].component = proxies_[args][1].component = *c;
      lua_pushvalue(L, slot_[args]);
      ++args;
    }
    if (lua_pcall(L, args, result ? 1 : 0, kMessageHandler) != LUA_OK) {
      std::string message = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
      lua_pop(L, 1);
      throw std::runtime_error(message);
    }
    if (!result) return false;
    const bool r = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return r;
  }

  std::string script_;
  std::vector<std::string> names_;
  MemoryBudget budget_;
  ScriptError error_;
  StatePtr state_;
  Proxy proxies_[3][2];
  int slot_[3] = {0, 0, 0};
  std::array<bool, 4> has_{};
  EnsembleWorld* world_ = nullptr;
};

}  // namespace

std::unique_ptr<Ensemble> make_lua_ensemble() {
  return std::make_unique<LuaEnsemble>();
}

}  // namespace fleetsim::lua
