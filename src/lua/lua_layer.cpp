#include "lua/lua_layer.hpp"

#include <lua.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "lua/robot_table.hpp"
#include "lua/script.hpp"

namespace fleetsim::lua {

namespace {

constexpr int kMessageHandler = 1;
constexpr int kLayerTable = 2;
constexpr std::size_t kMemoryLimit = 256u << 20;

class LuaLayer final : public Layer {
 public:
  ~LuaLayer() override { state_.reset(); }

  void init(const Params& params, const LayerSetup& setup) override {
    script_ = params.text("script");
    name_ = std::string(setup.name());
    const std::int64_t size = params.integer("size", 1);
    if (size < 1 || size > 64)
      throw SetupError("size=" + std::to_string(size) + " (expected 1 to 64 numbers per robot)");
    size_ = static_cast<std::uint32_t>(size);
    budget_.limit = kMemoryLimit;
    state_ = new_state(script_, budget_);
    lua_State* L = state_.get();
    push_message_handler(L, &error_);  // slot 1
    lua_newtable(L);                   // the layer table, slot 2
    lua_pushlstring(L, name_.data(), name_.size());
    lua_setfield(L, kLayerTable, "name");
    lua_pushinteger(L, size_);
    lua_setfield(L, kLayerTable, "size");
    lua_pushinteger(L, -1);
    lua_setfield(L, kLayerTable, "tick");
    lua_createtable(L, 0, 4);
    const Vec2 lo = setup.arena_min(), hi = setup.arena_max();
    const std::pair<const char*, double> corners[] = {
        {"min_x", lo.x}, {"min_y", lo.y}, {"max_x", hi.x}, {"max_y", hi.y}};
    for (const auto& [k, v] : corners) {
      lua_pushnumber(L, v);
      lua_setfield(L, -2, k);
    }
    lua_setfield(L, kLayerTable, "arena");
    lua_newtable(L);
    lua_setfield(L, kLayerTable, "robots");
    lua_newtable(L);
    lua_setfield(L, kLayerTable, "objects");
    add_function("obstacle", obstacle);
    lua_newtable(L);
    add_function("uniform", random_uniform);
    add_function("uniform_int", random_uniform_int);
    lua_setfield(L, kLayerTable, "random");
    lua_pushvalue(L, kLayerTable);
    lua_setglobal(L, "layer");
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, log, 1);
    lua_setglobal(L, "log");
    ScriptError e;
    if (!load_script(L, script_, e)) throw SetupError(e.text, e.file, e.line);
    if (lua_pcall(L, 0, 0, kMessageHandler) != LUA_OK) {
      lua_pop(L, 1);
      throw SetupError(error_.text, error_.file, error_.line);
    }
    if (!is_global_function(L, "value"))
      throw SetupError("the script '" + script_ +
                       "' defines no global function value(r) (expected `function value(r) ... "
                       "return number end`)");
    if (is_global_function(L, "init") && !call("init", 0, 0)) {
      if (error_.file.empty())
        throw SetupError("the script '" + script_ + "' failed in init(): " + error_.text);
      throw SetupError(error_.text, error_.file, error_.line);
    }
  }

  std::uint32_t size() const override { return size_; }

  void compute(const LayerWorld& world, std::span<double> values) override {
    lua_State* L = state_.get();
    world_ = &world;
    struct Unbind {
      const LayerWorld*& w;
      ~Unbind() { w = nullptr; }
    } unbind{world_};
    lua_pushinteger(L, static_cast<lua_Integer>(world.tick()));
    lua_setfield(L, kLayerTable, "tick");
    lua_pushnumber(L, world.dt_s());
    lua_setfield(L, kLayerTable, "dt");
    const std::span<const LayerObject> objects = world.objects();
    lua_createtable(L, static_cast<int>(objects.size()), 0);
    for (std::size_t o = 0; o < objects.size(); ++o) {
      const LayerObject& x = objects[o];
      lua_createtable(L, 0, 7);
      set_string(L, "id", x.name);
      set_integer(L, "number", x.id);
      set_string(L, "class", x.object_class);
      set_number(L, "x", x.position.x);
      set_number(L, "y", x.position.y);
      set_number(L, "size", x.size);
      set_string(L, "tag", x.tag);
      lua_rawseti(L, -2, static_cast<lua_Integer>(o + 1));
    }
    lua_setfield(L, kLayerTable, "objects");
    const std::span<const LayerRobot> robots = world.robots();
    lua_createtable(L, static_cast<int>(robots.size()), 0);
    const int list = lua_gettop(L);
    for (std::size_t r = 0; r < robots.size(); ++r) {
      const LayerRobot& x = robots[r];
      lua_createtable(L, 0, 9);
      set_string(L, "id", x.name);
      set_integer(L, "number", x.id);
      set_string(L, "kind", x.kind);
      set_number(L, "x", x.position.x);
      set_number(L, "y", x.position.y);
      set_number(L, "heading", x.heading);
      set_number(L, "radius", x.radius_m);
      set_string(L, "tag", x.tag);
      if (!x.action.empty()) {  // r.action: its deeco_wheels action (speed, angle, extras)
        lua_createtable(L, 0, static_cast<int>(x.action.size()));
        set_number(L, "speed", x.action[0]);
        set_number(L, "angle", x.action[1]);
        for (std::size_t k = 0; k < x.action_extras.size() && 2 + k < x.action.size(); ++k)
          set_number(L, x.action_extras[k].c_str(), x.action[2 + k]);
        lua_setfield(L, -2, "action");
      }
      push_knowledge(L, values.subspan(r * size_, size_));
      lua_setfield(L, -2, "value");
      lua_rawseti(L, list, static_cast<lua_Integer>(r + 1));
    }
    lua_setfield(L, kLayerTable, "robots");
    if (is_global_function(L, "step") && !call("step", 0, 0))
      throw std::runtime_error(error_.str());
    lua_getfield(L, kLayerTable, "robots");
    const int robots_table = lua_gettop(L);
    for (std::size_t r = 0; r < robots.size(); ++r) {
      lua_rawgeti(L, robots_table, static_cast<lua_Integer>(r + 1));
      if (!call("value", 1, 1)) {
        lua_settop(L, kLayerTable);
        throw std::runtime_error(error_.str());
      }
      const std::string problem = pull(L, values.subspan(r * size_, size_));
      lua_pop(L, 1);
      if (!problem.empty()) {
        lua_settop(L, kLayerTable);
        throw std::runtime_error(script_ + ": value(r) for robot '" + std::string(robots[r].name) +
                                 "' returned " + problem);
      }
    }
    lua_settop(L, kLayerTable);
  }

  void reset() override {
    if (state_ && is_global_function(state_.get(), "reset") && !call("reset", 0, 0))
      throw std::runtime_error(error_.str());
  }

 private:
  static LuaLayer& self(lua_State* L) {
    return *static_cast<LuaLayer*>(lua_touserdata(L, lua_upvalueindex(1)));
  }
  static void set_string(lua_State* L, const char* k, std::string_view v) {
    lua_pushlstring(L, v.data(), v.size());
    lua_setfield(L, -2, k);
  }
  static void set_number(lua_State* L, const char* k, double v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
  }
  static void set_integer(lua_State* L, const char* k, std::uint64_t v) {
    lua_pushinteger(L, static_cast<lua_Integer>(v));
    lua_setfield(L, -2, k);
  }
  void add_function(const char* name, int (*f)(lua_State*)) {
    lua_State* L = state_.get();
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, -2, name);
  }
  /// Calls the global `name` with the `args` values on top of the stack; leaves `results`.
  bool call(const char* name, int args, int results) {
    lua_State* L = state_.get();
    lua_getglobal(L, name);
    lua_insert(L, -args - 1);
    const int status = lua_pcall(L, args, results, kMessageHandler);
    if (status == LUA_OK) return true;
    if (status == LUA_ERRMEM)
      error_ = {"", 0, "not enough memory (a layer's script may use 256 MiB)"};
    else if (status != LUA_ERRRUN)
      error_ = {"", 0, lua_tostring(L, -1) ? lua_tostring(L, -1) : "?"};
    lua_pop(L, 1);
    if (error_.file.empty() && std::string(name) != "init")
      error_.text = script_ + ": " + error_.text;
    return false;
  }
  /// The value on top of the stack into `out`; "" or what is wrong with it.
  std::string pull(lua_State* L, std::span<double> out) const {
    const std::string expected =
        size_ == 1 ? "a number" : "a table of " + std::to_string(size_) + " numbers";
    if (size_ == 1 && lua_type(L, -1) == LUA_TNUMBER) {
      out[0] = lua_tonumber(L, -1);
      return std::isfinite(out[0]) ? "" : "a number that is not finite";
    }
    if (lua_type(L, -1) != LUA_TTABLE || lua_rawlen(L, -1) != size_)
      return std::string(luaL_typename(L, -1)) + " (expected " + expected + ")";
    for (std::uint32_t i = 0; i < size_; ++i) {
      lua_rawgeti(L, -1, i + 1);
      int isnum = 0;
      out[i] = lua_tonumberx(L, -1, &isnum);
      lua_pop(L, 1);
      if (!isnum || !std::isfinite(out[i]))
        return "a table whose number " + std::to_string(i + 1) + " is not a finite number";
    }
    return "";
  }
  static const LayerWorld& world(lua_State* L) {
    LuaLayer& l = self(L);
    if (!l.world_) luaL_error(L, "layer.obstacle and layer.random: only during step() and value()");
    return *l.world_;
  }
  static int obstacle(lua_State* L) {
    const Vec2 p{luaL_checknumber(L, 1), luaL_checknumber(L, 2)};
    lua_pushboolean(L, world(L).obstacle(p));
    return 1;
  }
  static int random_uniform(lua_State* L) {
    return lua::random_uniform(L, world(L).rng(), "layer");
  }
  static int random_uniform_int(lua_State* L) {
    return lua::random_uniform_int(L, world(L).rng(), "layer");
  }
  static int log(lua_State* L) {
    write_log_line(false, "layer " + self(L).name_, log_text(L));
    return 0;
  }

  std::string script_, name_;
  std::uint32_t size_ = 1;
  MemoryBudget budget_;
  ScriptError error_;
  StatePtr state_;
  const LayerWorld* world_ = nullptr;
};

}  // namespace

std::unique_ptr<Layer> make_lua_layer() {
  return std::make_unique<LuaLayer>();
}

}  // namespace fleetsim::lua
