// A script's data moves from one Lua state to another that ran the same script (a robot changing
// process): globals, file-level locals, tables merged with the receiver's functions; what cannot
// move is named.
#include <gtest/gtest.h>

#include <lua.hpp>

#include "lua/script_data.hpp"

namespace fleetsim::lua {
namespace {

struct State {
  lua_State* L = luaL_newstate();
  std::set<std::string> base;
  explicit State(const char* script) {
    luaL_openlibs(L);
    base = global_names(L);
    EXPECT_EQ(luaL_dostring(L, script), LUA_OK) << lua_tostring(L, -1);
  }
  ~State() { lua_close(L); }
  void run(const char* code) { ASSERT_EQ(luaL_dostring(L, code), LUA_OK) << lua_tostring(L, -1); }
  std::string eval(const char* expr) {
    const std::string code = std::string("return tostring(") + expr + ")";
    EXPECT_EQ(luaL_dostring(L, code.c_str()), LUA_OK) << lua_tostring(L, -1);
    std::string v = lua_tostring(L, -1);
    lua_pop(L, 1);
    return v;
  }
};

const char* kScript = R"(
local turns = 0
local history = { 1, 2 }
memory = { last = 0, seen = {}, bump = function(self) self.last = self.last + 1 end }
function step()
  turns = turns + 1
  history[#history + 1] = turns * 0.5
  memory:bump()
  memory.seen["k" .. turns] = turns % 2 == 0
  count = (count or 0) + 1
end
function peek() return turns, #history end
)";

TEST(ScriptData, GlobalsLocalsAndTablesArriveExactlyAndFunctionsStayTheReceivers) {
  State a(kScript);
  a.run("for i = 1, 5 do step() end  gone = 1  pi = 3.141592653589793  big = 1 << 62");
  std::vector<std::uint8_t> bytes;
  save_script_data(a.L, a.base, bytes);
  State b(kScript);
  b.run("fresh_only = 'x'");  // a global the sender no longer has: cleared
  a.run("gone = nil");
  bytes.clear();
  save_script_data(a.L, a.base, bytes);
  restore_script_data(b.L, b.base, bytes);
  EXPECT_EQ(b.eval("count"), "5");
  EXPECT_EQ(b.eval("select(1, peek())"), "5");  // the local `turns`, through peek's upvalue
  EXPECT_EQ(b.eval("select(2, peek())"), "7");  // the local table `history`
  EXPECT_EQ(b.eval("memory.last"), "5");        // a table in a global
  EXPECT_EQ(b.eval("memory.seen.k4"), "true");
  EXPECT_EQ(b.eval("math.type(big)"), "integer");
  EXPECT_EQ(b.eval("big == 1 << 62"), "true");
  EXPECT_EQ(b.eval("pi == 3.141592653589793"), "true");
  EXPECT_EQ(b.eval("fresh_only"), "nil");
  EXPECT_EQ(b.eval("gone"), "nil");
  // The receiver's functions: the table's method and the script's step() go on from there.
  b.run("step()");
  a.run("step()");
  EXPECT_EQ(b.eval("memory.last"), a.eval("memory.last"));
  EXPECT_EQ(b.eval("select(1, peek())"), "6");
  EXPECT_EQ(b.eval("math.sin(0)"), "0.0") << "the library tables are the receiver's own";
}

TEST(ScriptData, WhatCannotMoveIsNamed) {
  State a("co = coroutine.create(function() end)");
  std::vector<std::uint8_t> bytes;
  try {
    save_script_data(a.L, a.base, bytes);
    FAIL() << "a coroutine was saved";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the global 'co' holds a thread"), std::string::npos)
        << e.what();
  }
  State c("loop = {}  loop.self = loop");
  bytes.clear();
  EXPECT_THROW(save_script_data(c.L, c.base, bytes), std::runtime_error);
}

TEST(ScriptData, BytesFromAnotherScriptOrCorruptAreRefused) {
  State a(kScript);
  a.run("step()");
  std::vector<std::uint8_t> bytes;
  save_script_data(a.L, a.base, bytes);
  State other("local x, y = 1, 2  function f() return x + y end");
  EXPECT_THROW(restore_script_data(other.L, other.base, bytes), std::runtime_error);
  for (std::size_t cut = 0; cut + 1 < bytes.size(); cut += 7) {
    State b(kScript);
    EXPECT_THROW(restore_script_data(b.L, b.base, {bytes.data(), cut}), std::runtime_error) << cut;
  }
}

}  // namespace
}  // namespace fleetsim::lua
