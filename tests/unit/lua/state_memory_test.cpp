// A state's memory: its small blocks come from chunks of its own (BlockArena), freed blocks
// serve the state again, and what the scripts build survives every move between sizes.
#include <gtest/gtest.h>

#include <lua.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "lua/script.hpp"

namespace fleetsim::lua {
namespace {

TEST(LuaStateMemory, BlocksAreDistinctAlignedAndFreedOnesServeAgain) {
  BlockArena arena;
  std::vector<std::pair<void*, std::size_t>> blocks;
  std::set<std::uintptr_t> starts;
  for (std::size_t i = 0; i < 2000; ++i) {
    const std::size_t size = 1 + (i * 37) % BlockArena::kLargest;
    void* b = arena.allocate(size);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 16, 0u);
    EXPECT_TRUE(starts.insert(reinterpret_cast<std::uintptr_t>(b)).second);
    std::memset(b, static_cast<int>(i & 0xff), size);  // each block is whole (no overlap)
    blocks.emplace_back(b, size);
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto* bytes = static_cast<const unsigned char*>(blocks[i].first);
    EXPECT_EQ(bytes[0], i & 0xff);
    EXPECT_EQ(bytes[blocks[i].second - 1], i & 0xff);
  }
  const std::size_t held = arena.chunk_bytes();
  EXPECT_GT(held, 0u);
  // A script that drops what it made and makes the same again (every tick) takes no more.
  for (int round = 0; round < 5; ++round) {
    for (auto& [b, size] : blocks) arena.release(b, size);
    for (auto& [b, size] : blocks) {
      b = arena.allocate(size);
      ASSERT_NE(b, nullptr);
    }
  }
  EXPECT_EQ(arena.chunk_bytes(), held);
}

TEST(LuaStateMemory, TablesAndStringsGrowAndShrinkThroughEverySizeIntact) {
  const auto path = std::filesystem::temp_directory_path() / "fleetsim_state_memory.lua";
  std::ofstream(path) << "-- empty\n";
  MemoryBudget budget;
  budget.limit = std::size_t{64} << 20;
  {
    StatePtr state = new_state(path.string(), budget);
    lua_State* L = state.get();
    // Tables grow one slot at a time from 0 to 2,000 (their slots move from small blocks to the
    // C library's), strings from 1 to 600 bytes, then most is dropped and collected.
    const char* code = R"(
      local t, h, s = {}, {}, ""
      for i = 1, 2000 do
        t[i] = i * 3
        h["k" .. i] = i
        if i <= 600 then s = s .. string.char(65 + i % 26) end
      end
      local sum = 0
      for i = 1, #t do sum = sum + t[i] end
      local hsum = 0
      for i = 1, 2000 do hsum = hsum + h["k" .. i] end
      for i = 2000, 3, -1 do t[i] = nil end
      collectgarbage()
      return sum, hsum, #s, s:sub(1, 3), s:sub(-3), t[1] + t[2], #t)";
    ASSERT_EQ(luaL_dostring(L, code), LUA_OK) << lua_tostring(L, -1);
    EXPECT_EQ(lua_tointeger(L, -7), 3 * 2000 * 2001 / 2);
    EXPECT_EQ(lua_tointeger(L, -6), 2000 * 2001 / 2);
    EXPECT_EQ(lua_tointeger(L, -5), 600);
    EXPECT_STREQ(lua_tostring(L, -4), "BCD");
    EXPECT_STREQ(lua_tostring(L, -3), "ABC");  // i = 598 = 23 * 26: 65 + 0
    EXPECT_EQ(lua_tointeger(L, -2), 9);
    EXPECT_EQ(lua_tointeger(L, -1), 2);
    lua_settop(L, 0);
    lua_gc(L, LUA_GCCOLLECT);
    EXPECT_GT(budget.used, 0u);
    EXPECT_LT(budget.used, std::size_t{200} << 10);  // the dropped tables and strings are back
  }
  EXPECT_EQ(budget.used, 0u);  // closing the state gave back every byte it had counted
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace fleetsim::lua
