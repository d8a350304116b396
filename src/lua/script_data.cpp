#include "lua/script_data.hpp"

#include <lua.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_set>

namespace fleetsim::lua {

namespace {

enum Tag : std::uint8_t { kNil, kFalse, kTrue, kInteger, kFloat, kString, kTable, kKeep };
constexpr int kMaxDepth = 100;

}  // namespace

std::vector<std::string> script_globals(lua_State* L, const std::set<std::string>& base) {
  std::vector<std::string> names;
  lua_pushglobaltable(L);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      std::string name = lua_tostring(L, -2);
      if (!base.count(name)) names.push_back(std::move(name));
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

/// Visits, in a fixed order, the upvalues of the script's global functions (recursively through
/// upvalues that hold functions), each once: `slot(fn, n, name)` is called with the upvalue's
/// value pushed and must pop it (it may set the upvalue first).
template <class Slot>
void walk_upvalues(lua_State* L, const std::set<std::string>& base, Slot&& slot) {
  std::unordered_set<void*> seen;
  auto visit = [&](auto&& self, int fn, int depth) -> void {
    if (lua_iscfunction(L, fn) || depth > kMaxDepth) return;
    luaL_checkstack(L, 4, "script data");
    for (int n = 1;; ++n) {
      const char* name = lua_getupvalue(L, fn, n);
      if (!name) break;
      void* id = lua_upvalueid(L, fn, n);
      if (!seen.insert(id).second || std::strcmp(name, "_ENV") == 0) {
        lua_pop(L, 1);
        continue;
      }
      if (lua_type(L, -1) == LUA_TFUNCTION) {
        self(self, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
        continue;
      }
      slot(fn, n, std::string(name));
    }
  };
  for (const auto& g : script_globals(L, base)) {
    if (lua_getglobal(L, g.c_str()) == LUA_TFUNCTION) visit(visit, lua_gettop(L), 0);
    lua_pop(L, 1);
  }
}

class Writer {
 public:
  Writer(lua_State* L, const std::set<std::string>& base, std::vector<std::uint8_t>& out)
      : L_(L), out_(out) {
    // Tables that belong to the receiving state: the standard libraries (globals present
    // before the script ran), the robot table and its parts' tables. A variable holding one
    // keeps the receiver's.
    for (const auto& name : base) {
      if (lua_getglobal(L, name.c_str()) == LUA_TTABLE) foreign_.insert(lua_topointer(L, -1));
      lua_pop(L, 1);
    }
    if (lua_getglobal(L, "robot") == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        if (lua_type(L, -1) == LUA_TTABLE) foreign_.insert(lua_topointer(L, -1));
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  void u8(std::uint8_t v) { out_.push_back(v); }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void text(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  /// Writes the value at `idx`; `where` names it in errors.
  void value(int idx, const std::string& where, int depth = 0) {
    idx = lua_absindex(L_, idx);
    switch (lua_type(L_, idx)) {
      case LUA_TNIL:
        u8(kNil);
        return;
      case LUA_TBOOLEAN:
        u8(lua_toboolean(L_, idx) ? kTrue : kFalse);
        return;
      case LUA_TNUMBER:
        if (lua_isinteger(L_, idx)) {
          u8(kInteger);
          const lua_Integer v = lua_tointeger(L_, idx);
          raw(&v, sizeof v);
        } else {
          u8(kFloat);
          const lua_Number v = lua_tonumber(L_, idx);
          raw(&v, sizeof v);
        }
        return;
      case LUA_TSTRING: {
        std::size_t n = 0;
        const char* s = lua_tolstring(L_, idx, &n);
        u8(kString);
        u32(static_cast<std::uint32_t>(n));
        raw(s, n);
        return;
      }
      case LUA_TFUNCTION:
        u8(kKeep);
        return;
      case LUA_TTABLE:
        table(idx, where, depth);
        return;
      default:
        throw std::runtime_error(where + " holds a " + luaL_typename(L_, idx) +
                                 ", which cannot move to another process (keep numbers, "
                                 "strings, booleans and tables of them in variables)");
    }
  }

 private:
  void table(int idx, const std::string& where, int depth) {
    const void* id = lua_topointer(L_, idx);
    if (foreign_.count(id)) {
      u8(kKeep);
      return;
    }
    if (depth > kMaxDepth || open_.count(id))
      throw std::runtime_error(where +
                               " holds a table that contains itself, which cannot move "
                               "to another process");
    open_.insert(id);
    luaL_checkstack(L_, 4, "script data");
    u8(kTable);
    const std::size_t count_at = out_.size();
    u32(0);
    std::uint32_t count = 0;
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      const int kt = lua_type(L_, -2);
      if (lua_type(L_, -1) == LUA_TFUNCTION) {  // the receiver's script made its own
        lua_pop(L_, 1);
        continue;
      }
      if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN)
        throw std::runtime_error(where + " has a key of type " + luaL_typename(L_, -2) +
                                 ", which cannot move to another process");
      value(-2, where, depth + 1);
      value(-1, where, depth + 1);
      ++count;
      lua_pop(L_, 1);
    }
    std::memcpy(out_.data() + count_at, &count, 4);
    open_.erase(id);
  }

  lua_State* L_;
  std::vector<std::uint8_t>& out_;
  std::unordered_set<const void*> foreign_, open_;
};

class Reader {
 public:
  Reader(lua_State* L, std::span<const std::uint8_t> in) : L_(L), in_(in) {}
  bool at_end() const { return at_ == in_.size(); }
  const std::uint8_t* take(std::size_t n) {
    if (n > in_.size() - at_) bad();
    const std::uint8_t* p = in_.data() + at_;
    at_ += n;
    return p;
  }
  std::uint8_t u8() { return *take(1); }
  std::uint32_t u32() {
    std::uint32_t v;
    std::memcpy(&v, take(4), 4);
    return v;
  }
  std::string text() {
    const std::uint32_t n = u32();
    const auto* p = take(n);
    return {reinterpret_cast<const char*>(p), n};
  }
  /// Replaces the value on top of the stack by the saved one (a table is filled in place when
  /// the top is already a table: its function fields stay).
  void value(int depth = 0) {
    if (depth > kMaxDepth) bad();
    luaL_checkstack(L_, 4, "script data");
    const std::uint8_t tag = u8();
    switch (tag) {
      case kKeep:
        return;
      case kNil:
      case kFalse:
      case kTrue:
      case kInteger:
      case kFloat:
      case kString:
        lua_pop(L_, 1);
        scalar(tag);
        return;
      case kTable:
        break;
      default:
        bad();
    }
    if (lua_type(L_, -1) == LUA_TTABLE) {
      const int t = lua_gettop(L_);
      lua_pushnil(L_);
      while (lua_next(L_, t)) {  // clearing existing fields while traversing is allowed
        const bool keep = lua_type(L_, -1) == LUA_TFUNCTION;
        lua_pop(L_, 1);
        if (!keep) {
          lua_pushvalue(L_, -1);
          lua_pushnil(L_);
          lua_rawset(L_, t);
        }
      }
    } else {
      lua_pop(L_, 1);
      lua_newtable(L_);
    }
    const int t = lua_gettop(L_);
    for (std::uint32_t n = u32(); n > 0; --n) {
      scalar(u8());  // the key
      if (lua_isnil(L_, -1)) bad();
      lua_pushvalue(L_, -1);
      lua_rawget(L_, t);  // the existing field, for nested tables
      value(depth + 1);
      lua_rawset(L_, t);
    }
  }
  [[noreturn]] void bad() const {
    throw std::runtime_error("a saved Lua state is corrupt or comes from another script");
  }

 private:
  void scalar(std::uint8_t tag) {
    switch (tag) {
      case kNil:
        lua_pushnil(L_);
        return;
      case kFalse:
      case kTrue:
        lua_pushboolean(L_, tag == kTrue);
        return;
      case kInteger: {
        lua_Integer v;
        std::memcpy(&v, take(sizeof v), sizeof v);
        lua_pushinteger(L_, v);
        return;
      }
      case kFloat: {
        lua_Number v;
        std::memcpy(&v, take(sizeof v), sizeof v);
        lua_pushnumber(L_, v);
        return;
      }
      case kString: {
        const std::uint32_t n = u32();
        const auto* p = take(n);
        lua_pushlstring(L_, reinterpret_cast<const char*>(p), n);
        return;
      }
      default:
        bad();
    }
  }

  lua_State* L_;
  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
};

}  // namespace

std::set<std::string> global_names(lua_State* L) {
  std::set<std::string> names;
  lua_pushglobaltable(L);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING) names.insert(lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return names;
}

void save_script_data(lua_State* L, const std::set<std::string>& base,
                      std::vector<std::uint8_t>& out) {
  Writer w(L, base, out);
  // The data globals, by name.
  std::vector<std::string> data;
  for (const auto& g : script_globals(L, base)) {
    const bool fn = lua_getglobal(L, g.c_str()) == LUA_TFUNCTION;
    lua_pop(L, 1);
    if (!fn) data.push_back(g);
  }
  w.u32(static_cast<std::uint32_t>(data.size()));
  for (const auto& g : data) {
    w.text(g);
    lua_getglobal(L, g.c_str());
    w.value(-1, "the global '" + g + "'");
    lua_pop(L, 1);
  }
  // The script's local variables, as upvalues of its functions, in walk order.
  walk_upvalues(L, base, [&](int, int, const std::string& name) {
    w.text(name);  // checked on restore: the receiver's script must have the same locals
    w.value(-1, "the local '" + name + "'");
    lua_pop(L, 1);
  });
}

void restore_script_data(lua_State* L, const std::set<std::string>& base,
                         std::span<const std::uint8_t> in) {
  Reader r(L, in);
  std::set<std::string> saved;
  for (std::uint32_t n = r.u32(); n > 0; --n) {
    std::string g = r.text();
    lua_getglobal(L, g.c_str());
    r.value();
    lua_setglobal(L, g.c_str());
    saved.insert(std::move(g));
  }
  // Data globals the receiving script made that the saved one no longer had.
  for (const auto& g : script_globals(L, base)) {
    const int type = lua_getglobal(L, g.c_str());
    lua_pop(L, 1);
    if (type != LUA_TFUNCTION && !saved.count(g)) {
      lua_pushnil(L);
      lua_setglobal(L, g.c_str());
    }
  }
  walk_upvalues(L, base, [&](int fn, int n, const std::string& name) {
    if (r.at_end() || r.text() != name) r.bad();
    r.value();
    lua_setupvalue(L, fn, n);
  });
  if (!r.at_end()) r.bad();
}

}  // namespace fleetsim::lua
