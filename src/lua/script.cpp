#include "lua/script.hpp"

#include "lua/geometry_types.hpp"

#include <lua.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include <sys/mman.h>

namespace fleetsim::lua {

void StateCloser::operator()(lua_State* state) const {
  lua_close(state);
}

std::string ScriptError::str() const {
  if (file.empty()) return text;
  return file + ":" + std::to_string(line) + ": " + text;
}

namespace {

// Where a state's small blocks live. A refresh of the robot table touches some 150 small
// tables per robot and tick, each a header and a block of slots, made one after the other; the
// C library gives each block a header of its own and takes huge pages only when told
// (GLIBC_TUNABLES), so a state's tables spread over more cache lines and pages than they need.
// Here blocks of up to kSmallMax bytes are cut one after the other from chunks of kChunk bytes,
// in the order the state asks for them (a table's slots next to its header), with no header;
// a freed block goes to its state's list of blocks of that size, which serves the next request
// of the size. Chunks come from regions of kRegion bytes that the kernel is asked to back with
// huge pages, shared by all states (under a lock, once per chunk), and go back to them when
// the state's budget goes; regions are kept to the process's end. Addresses never reach a
// result: pairs() visits keys in a fixed order (robot_table.cpp), and nothing else hashes them.
constexpr std::size_t kGrain = 16;                   // every block is aligned and sized to this
constexpr std::size_t kSmallMax = 512;               // larger blocks come from the C library
constexpr std::size_t kChunk = (16 << 10) + 5 * 64;  // what a state takes at a time (see below)
constexpr std::size_t kRegion = 2 << 20;             // a huge page

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kUseHeap = false;  // the sanitizers check each block through the C library
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kUseHeap = false;
#else
constexpr bool kUseHeap = true;
#endif
#else
constexpr bool kUseHeap = true;
#endif

/// The chunks of all states: cut from huge-page regions, handed out and taken back.
class ChunkSource {
 public:
  static ChunkSource& get() {
    static ChunkSource* source = new ChunkSource;  // never destroyed: states may outlive statics
    return *source;
  }
  void* take() {
    std::lock_guard lock(mutex_);
    if (!returned_.empty()) {
      void* chunk = returned_.back();
      returned_.pop_back();
      return chunk;
    }
    if (static_cast<std::size_t>(end_ - next_) < kChunk) {  // the rest of a region is left
      void* region = std::aligned_alloc(kRegion, kRegion);
      if (!region) return nullptr;
#ifdef MADV_HUGEPAGE
      madvise(region, kRegion, MADV_HUGEPAGE);  // a hint: without it, small pages
#endif
      regions_.push_back(region);
      next_ = static_cast<char*>(region);
      end_ = next_ + kRegion;
    }
    void* chunk = next_;
    next_ += kChunk;
    return chunk;
  }
  void give_back(const std::vector<void*>& chunks) {
    std::lock_guard lock(mutex_);
    returned_.insert(returned_.end(), chunks.rbegin(), chunks.rend());
  }

 private:
  std::mutex mutex_;
  std::vector<void*> regions_, returned_;
  char* next_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace

class BlockHeap {
 public:
  BlockHeap() = default;
  BlockHeap(const BlockHeap&) = delete;
  BlockHeap& operator=(const BlockHeap&) = delete;
  ~BlockHeap() { ChunkSource::get().give_back(chunks_); }

  static std::size_t grains(std::size_t bytes) { return (bytes + kGrain - 1) / kGrain; }

  /// A block of `g` grains (1 <= g <= kSmallMax / kGrain), or null when memory is out.
  void* take(std::size_t g) {
    if (FreeBlock* b = free_[g]) {
      free_[g] = b->next;
      return b;
    }
    const std::size_t bytes = g * kGrain;
    if (static_cast<std::size_t>(end_ - next_) < bytes) {
      if (next_ != end_) keep_tail();
      void* chunk = ChunkSource::get().take();
      if (!chunk) return nullptr;
      chunks_.push_back(chunk);
      next_ = static_cast<char*>(chunk);
      end_ = next_ + kChunk;
    }
    void* block = next_;
    next_ += bytes;
    return block;
  }
  void give(void* block, std::size_t g) {
    auto* b = static_cast<FreeBlock*>(block);
    b->next = free_[g];
    free_[g] = b;
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  /// The rest of a chunk too short for a request: kept as a free block of its size.
  void keep_tail() { give(next_, static_cast<std::size_t>(end_ - next_) / kGrain); }

  FreeBlock* free_[kSmallMax / kGrain + 1] = {};
  char* next_ = nullptr;
  char* end_ = nullptr;
  std::vector<void*> chunks_;
};

void BlockHeapDeleter::operator()(BlockHeap* heap) const {
  delete heap;
}

namespace {

/// lua_Alloc counting a state's bytes against its MemoryBudget. Lua passes a block's size as
/// old_size whenever the block is not null, and never expects a shrink to fail. Blocks of up to
/// kSmallMax bytes come from the budget's BlockHeap (its blocks are known by their size: a block
/// Lua sizes at most kSmallMax is always one of the heap's), larger ones from the C library.
void* budgeted_alloc(void* ud, void* block, std::size_t old_size, std::size_t new_size) {
  auto& budget = *static_cast<MemoryBudget*>(ud);
  const std::size_t old_bytes = block ? old_size : 0;
  BlockHeap* heap = budget.heap.get();
  const bool old_small = heap && block && old_bytes <= kSmallMax;
  const bool new_small = heap && new_size > 0 && new_size <= kSmallMax;
  if (new_size == 0) {
    if (old_small)
      heap->give(block, BlockHeap::grains(old_bytes));
    else
      std::free(block);
    budget.used -= old_bytes;
    return nullptr;
  }
  if (new_size > old_bytes && budget.used - old_bytes + new_size > budget.limit) return nullptr;
  void* moved = nullptr;
  if (old_small && new_small && BlockHeap::grains(old_bytes) == BlockHeap::grains(new_size)) {
    moved = block;
  } else if (!old_small && !new_small) {
    moved = std::realloc(block, new_size);
  } else {
    moved = new_small ? heap->take(BlockHeap::grains(new_size)) : std::malloc(new_size);
    if (moved && block) {
      std::memcpy(moved, block, std::min(old_bytes, new_size));
      if (old_small)
        heap->give(block, BlockHeap::grains(old_bytes));
      else
        std::free(block);
    }
  }
  // Out of memory for a new chunk while shrinking: the block stays where it is (large enough;
  // given back later as a block of the smaller size, which it holds).
  if (!moved && new_size < old_bytes) {
    budget.used -= old_bytes - new_size;
    return block;
  }
  if (moved) budget.used = budget.used - old_bytes + new_size;
  return moved;
}

// load, loadfile and dofile with text chunks only: Lua does not check bytecode, and a crafted
// binary chunk can crash the interpreter (the script's own file is loaded as text too).

/// load(chunk [, chunkname [, mode [, env]]]) with mode "t"; upvalue 1 is Lua's load.
int load_text(lua_State* L) {
  const int given = lua_gettop(L);
  lua_settop(L, given < 4 ? 2 : 4);  // chunk, chunkname (nil if absent), [mode, env]
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushliteral(L, "t");
  if (given >= 4) lua_pushvalue(L, 4);  // an env given as nil is still given
  lua_call(L, given >= 4 ? 4 : 3, 2);
  return 2;
}

/// loadfile([filename [, mode [, env]]]) with mode "t"; upvalue 1 is Lua's loadfile.
int loadfile_text(lua_State* L) {
  const int given = lua_gettop(L);
  lua_settop(L, given < 3 ? 1 : 3);  // filename (nil if absent), [mode, env]
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushliteral(L, "t");
  if (given >= 3) lua_pushvalue(L, 3);
  lua_call(L, given >= 3 ? 3 : 2, 2);
  return 2;
}

/// dofile([filename]) of a text chunk.
int dofile_text(lua_State* L) {
  const char* name = luaL_optstring(L, 1, nullptr);
  lua_settop(L, 1);
  if (luaL_loadfilex(L, name, "t") != LUA_OK) return lua_error(L);
  lua_call(L, 0, LUA_MULTRET);
  return lua_gettop(L) - 1;
}

/// An error outside any protected call (only a failed allocation in the API can do that):
/// Lua aborts after this returns.
int panic(lua_State* state) {
  const char* m = lua_tostring(state, -1);
  std::fprintf(stderr, "fleetsim: unrecoverable Lua error: %s\n", m ? m : "(not a string)");
  return 0;
}

int forbidden_exit(lua_State* state) {
  return luaL_error(state,
                    "os.exit() is not available to a controller (the run would stop without "
                    "its log; raise an error with error() instead)");
}

/// Length of "<digits>: " at the start of `s`, or 0.
std::size_t line_tag_length(std::string_view s, int& line) {
  std::size_t i = 0;
  line = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i < 9)
    line = line * 10 + (s[i++] - '0');
  if (i == 0 || i + 1 >= s.size() || s[i] != ':' || s[i + 1] != ' ') return 0;
  return i + 2;
}

/// True when `shown` is how Lua shows `path` in messages: whole, or "..." and its tail.
bool shows_path(std::string_view shown, std::string_view path) {
  if (shown == path) return true;
  if (shown.size() > 3 && shown.substr(0, 3) == "...") {
    std::string_view tail = shown.substr(3);
    return path.size() >= tail.size() && path.substr(path.size() - tail.size()) == tail;
  }
  return false;
}

/// A Lua frame with a current line.
struct Frame {
  std::string file;       ///< full path for file chunks, else Lua's short name
  std::string short_src;  ///< as Lua writes it in messages
  int line = 0;
};

/// The message handler: finds which frame the message's "src:line:" prefix names (or the
/// innermost frame with a line), and rewrites the prefix with the full path.
int message_handler(lua_State* state) {
  auto* error = static_cast<ScriptError*>(lua_touserdata(state, lua_upvalueindex(1)));
  std::string text;
  if (const char* m = lua_tostring(state, 1)) {
    text = m;
  } else if (luaL_callmeta(state, 1, "__tostring") && lua_type(state, -1) == LUA_TSTRING) {
    text = lua_tostring(state, -1);
  } else {
    text = std::string("(error object is a ") + luaL_typename(state, 1) + " value)";
  }
  std::vector<Frame> frames;
  lua_Debug ar;
  for (int level = 1; lua_getstack(state, level, &ar); ++level) {
    lua_getinfo(state, "Sl", &ar);
    if (ar.currentline <= 0) continue;
    Frame f;
    f.short_src = ar.short_src;
    f.file = ar.source && ar.source[0] == '@' ? std::string(ar.source + 1) : f.short_src;
    f.line = ar.currentline;
    frames.push_back(std::move(f));
  }
  ScriptError e;
  e.text = text;
  for (const Frame& f : frames) {
    const std::string prefix = f.short_src + ":" + std::to_string(f.line) + ": ";
    if (text.compare(0, prefix.size(), prefix) == 0) {
      e = {f.file, f.line, text.substr(prefix.size())};
      break;
    }
  }
  if (e.file.empty() && !frames.empty()) {
    // An error raised with a level that points nowhere, or by a C function without luaL_where:
    // the innermost line of the script is the best place to send the user.
    e.file = frames.front().file;
    e.line = frames.front().line;
  }
  if (error) *error = e;
  lua_pushstring(state, e.str().c_str());
  return 1;
}

}  // namespace

namespace {

/// Libraries opened when the script first names them: most controllers never touch io, os,
/// debug, coroutine, utf8 or require, and each costs 1-2 KiB in every robot's state. ARGoS's
/// vector2, vector3 and quaternion are made the same way (geometry_types.hpp).
struct LazyLibrary {
  const char* global;  ///< the global whose first read opens it
  const char* name;
  lua_CFunction open;
};
constexpr LazyLibrary kLazyLibraries[] = {{"io", LUA_IOLIBNAME, luaopen_io},
                                          {"os", LUA_OSLIBNAME, luaopen_os},
                                          {"debug", LUA_DBLIBNAME, luaopen_debug},
                                          {"coroutine", LUA_COLIBNAME, luaopen_coroutine},
                                          {"utf8", LUA_UTF8LIBNAME, luaopen_utf8},
                                          {"package", LUA_LOADLIBNAME, luaopen_package},
                                          {"require", LUA_LOADLIBNAME, luaopen_package}};

/// Adjusts a library as fleetsim wants it, right after it is opened (on top of the stack).
void adjust_library(lua_State* L, std::string_view name) {
  if (name == LUA_OSLIBNAME) {
    lua_pushcfunction(L, forbidden_exit);
    lua_setfield(L, -2, "exit");
  } else if (name == LUA_LOADLIBNAME) {
    // package.path: the script's folder first, as ARGoS does (upvalue 1 of the loader).
    const std::string dir = lua_tostring(L, lua_upvalueindex(1));
    lua_getfield(L, -1, "path");
    const std::string path = dir + "/?.lua;" + dir + "/?/init.lua;" + lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_pushstring(L, path.c_str());
    lua_setfield(L, -2, "path");
  }
}

/// __index of _G: opens a lazy library on its first use, then it is an ordinary global.
int open_lazy_library(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  if (!key || lua_type(L, 2) != LUA_TSTRING) return 0;
  if (std::strcmp(key, "vector2") == 0 || std::strcmp(key, "vector3") == 0 ||
      std::strcmp(key, "quaternion") == 0) {
    open_geometry_types(L);
    lua_rawget(L, 1);
    return 1;
  }
  for (const LazyLibrary& lib : kLazyLibraries) {
    if (std::strcmp(key, lib.global) != 0) continue;
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    const bool opened = lua_getfield(L, -1, lib.name) != LUA_TNIL;
    lua_pop(L, 2);
    if (!opened) {
      luaL_requiref(L, lib.name, lib.open, 1);
      adjust_library(L, lib.name);
      lua_pop(L, 1);
    }
    lua_rawget(L, 1);  // the library's global (or `require`), now set
    return 1;
  }
  return 0;
}

}  // namespace

StatePtr new_state(const std::string& script_path, MemoryBudget& budget) {
  if (kUseHeap && !budget.heap) budget.heap.reset(new BlockHeap);
  StatePtr state(lua_newstate(budgeted_alloc, &budget));
  if (!state) throw std::bad_alloc();
  lua_State* L = state.get();
  lua_atpanic(L, panic);
  for (const luaL_Reg& lib : {luaL_Reg{LUA_GNAME, luaopen_base},
                              {LUA_TABLIBNAME, luaopen_table},
                              {LUA_STRLIBNAME, luaopen_string},
                              {LUA_MATHLIBNAME, luaopen_math}}) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  for (const luaL_Reg& text_only : {luaL_Reg{"load", load_text}, {"loadfile", loadfile_text}}) {
    lua_getglobal(L, text_only.name);
    lua_pushcclosure(L, text_only.func, 1);
    lua_setglobal(L, text_only.name);
  }
  lua_register(L, "dofile", dofile_text);
  const std::size_t slash = script_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : script_path.substr(0, slash);
  lua_pushglobaltable(L);
  lua_createtable(L, 0, 1);
  lua_pushstring(L, dir.c_str());
  lua_pushcclosure(L, open_lazy_library, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  return state;
}

void push_knowledge(lua_State* state, std::span<const double> values) {
  if (values.size() == 1) {
    lua_pushnumber(state, values[0]);
    return;
  }
  lua_createtable(state, static_cast<int>(values.size()), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    lua_pushnumber(state, values[i]);
    lua_rawseti(state, -2, static_cast<lua_Integer>(i + 1));
  }
}

std::size_t knowledge_field(lua_State* state, int arg, std::span<const std::string> names,
                            const char* prefix) {
  const char* key = lua_tostring(state, arg);
  if (key && lua_type(state, arg) == LUA_TSTRING)
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == key) return i;
  std::string fields;
  for (const auto& n : names) fields += (fields.empty() ? "" : ", ") + n;
  luaL_error(state, "%s.%s: no such knowledge field (the experiment declares: %s)", prefix,
             key ? key : "?", fields.empty() ? "none" : fields.c_str());
  return 0;
}

void pull_knowledge(lua_State* state, int index, std::span<double> out, const char* what) {
  if (lua_type(state, index) == LUA_TNUMBER && out.size() == 1) {
    out[0] = lua_tonumber(state, index);
    return;
  }
  if (lua_type(state, index) != LUA_TTABLE || lua_rawlen(state, index) != out.size())
    luaL_error(state, "%s: expected %s", what,
               out.size() == 1 ? "a number"
                               : ("a table of " + std::to_string(out.size()) + " numbers").c_str());
  double values[64];
  for (std::size_t i = 0; i < out.size(); ++i) {
    lua_rawgeti(state, index, static_cast<lua_Integer>(i + 1));
    if (lua_type(state, -1) != LUA_TNUMBER)
      luaL_error(state, "%s[%d]: expected a number", what, static_cast<int>(i + 1));
    values[i] = lua_tonumber(state, -1);
    lua_pop(state, 1);
  }
  std::copy(values, values + out.size(), out.begin());
}

int random_uniform(lua_State* state, CounterRng& rng, const char* what) {
  switch (lua_gettop(state)) {
    case 0:
      lua_pushnumber(state, rng.uniform());
      return 1;
    case 1:
      lua_pushnumber(state, rng.uniform(0, luaL_checknumber(state, 1)));
      return 1;
    case 2:
      lua_pushnumber(state, rng.uniform(luaL_checknumber(state, 1), luaL_checknumber(state, 2)));
      return 1;
    default:
      return luaL_error(state, "%s.random.uniform() expects 0, 1, or 2 arguments", what);
  }
}

int random_uniform_int(lua_State* state, CounterRng& rng, const char* what) {
  const lua_Integer lo = luaL_checkinteger(state, 1), hi = luaL_checkinteger(state, 2);
  if (hi <= lo)
    return luaL_error(state,
                      "%s.random.uniform_int(%I, %I): the range [a, b) is empty (expected a < b)",
                      what, lo, hi);
  lua_pushinteger(state, lo + static_cast<lua_Integer>(rng.below(static_cast<std::uint64_t>(hi) -
                                                                 static_cast<std::uint64_t>(lo))));
  return 1;
}

std::string log_text(lua_State* state) {
  std::string line;
  for (int i = 1; i <= lua_gettop(state); ++i) {
    line += luaL_tolstring(state, i, nullptr);
    lua_pop(state, 1);
  }
  return line;
}

bool is_global_function(lua_State* state, const char* name) {
  lua_getglobal(state, name);
  const bool f = lua_isfunction(state, -1);
  lua_pop(state, 1);
  return f;
}

void push_message_handler(lua_State* state, ScriptError* error) {
  lua_pushlightuserdata(state, error);
  lua_pushcclosure(state, message_handler, 1);
}

ScriptError split_compile_error(std::string_view message, const std::string& path) {
  for (std::size_t colon = message.find(':'); colon != std::string_view::npos;
       colon = message.find(':', colon + 1)) {
    int line = 0;
    const std::size_t tag = line_tag_length(message.substr(colon + 1), line);
    if (tag > 0 && shows_path(message.substr(0, colon), path))
      return {path, line, std::string(message.substr(colon + 1 + tag))};
  }
  return {path, 0, std::string(message)};
}

namespace {

/// Scripts compiled by this process, by path: every robot of a run loads the same file, which
/// is parsed once and then loaded as Lua bytecode (about ten times cheaper). The text is kept
/// to notice a file that changed between two loads.
struct CompiledScript {
  std::string text;
  std::string bytecode;
};
std::mutex compiled_mutex;
std::map<std::string, CompiledScript> compiled;

int append_bytes(lua_State*, const void* bytes, std::size_t size, void* out) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(bytes), size);
  return 0;
}

}  // namespace

bool load_script(lua_State* state, const std::string& path, ScriptError& error) {
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) in.open(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in.is_open() || in.bad()) {
    error = {"", 0, "cannot read the script '" + path + "' (expected a readable Lua file)"};
    return false;
  }
  std::string code = text.str();
  const std::string chunk_name = "@" + path;
  {
    std::string bytecode;
    {
      std::lock_guard<std::mutex> lock(compiled_mutex);
      auto it = compiled.find(path);
      if (it != compiled.end() && it->second.text == code) bytecode = it->second.bytecode;
    }
    // Bytecode this process made from the same text (binary chunks from files are refused).
    if (!bytecode.empty() && luaL_loadbufferx(state, bytecode.data(), bytecode.size(),
                                              chunk_name.c_str(), "b") == LUA_OK)
      return true;
  }
  const std::string source = code;
  // As luaL_loadfile does: skip a UTF-8 byte-order mark and a first line starting with '#'
  // (keeping the newline, so line numbers stay right).
  if (code.compare(0, 3, "\xEF\xBB\xBF") == 0) code.erase(0, 3);
  if (!code.empty() && code[0] == '#') code.erase(0, code.find('\n'));
  if (luaL_loadbufferx(state, code.data(), code.size(), chunk_name.c_str(), "t") != LUA_OK) {
    const char* m = lua_tostring(state, -1);
    error = split_compile_error(m ? m : "unknown error", path);
    lua_pop(state, 1);
    return false;
  }
  std::string bytecode;
  if (lua_dump(state, append_bytes, &bytecode, 0) == 0) {  // 0: keep line numbers
    std::lock_guard<std::mutex> lock(compiled_mutex);
    compiled[path] = {source, std::move(bytecode)};
  }
  return true;
}

}  // namespace fleetsim::lua
