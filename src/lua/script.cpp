#include "lua/script.hpp"

#include <lua.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace fleetsim::lua {

void StateCloser::operator()(lua_State* state) const { lua_close(state); }

std::string ScriptError::str() const {
  if (file.empty()) return text;
  return file + ":" + std::to_string(line) + ": " + text;
}

namespace {

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

StatePtr new_state(const std::string& script_path) {
  StatePtr state(luaL_newstate());
  if (!state) throw std::bad_alloc();
  lua_State* L = state.get();
  luaL_openlibs(L);
  lua_getglobal(L, "os");
  lua_pushcfunction(L, forbidden_exit);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  // package.path: the script's folder first, as ARGoS does.
  const std::size_t slash = script_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : script_path.substr(0, slash);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  const std::string path = dir + "/?.lua;" + dir + "/?/init.lua;" + lua_tostring(L, -1);
  lua_pop(L, 1);
  lua_pushstring(L, path.c_str());
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  return state;
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
  // As luaL_loadfile does: skip a UTF-8 byte-order mark and a first line starting with '#'
  // (keeping the newline, so line numbers stay right).
  if (code.compare(0, 3, "\xEF\xBB\xBF") == 0) code.erase(0, 3);
  if (!code.empty() && code[0] == '#') code.erase(0, code.find('\n'));
  const std::string chunk_name = "@" + path;
  if (luaL_loadbufferx(state, code.data(), code.size(), chunk_name.c_str(), "t") != LUA_OK) {
    const char* m = lua_tostring(state, -1);
    error = split_compile_error(m ? m : "unknown error", path);
    lua_pop(state, 1);
    return false;
  }
  return true;
}

}  // namespace fleetsim::lua
