#include "lua/geometry_types.hpp"

#include <lua.hpp>

#include <string>

namespace fleetsim::lua {

namespace {

// The types in Lua: a few dozen lines, only run by the scripts that use them. Values are plain
// tables with a metatable; every function reads fields by name, so any table with x, y (and
// z, w) works as an argument (robot.positioning.position and .orientation included). As in
// ARGoS, normalize() and rotate() change the vector and return it; vector2's cross() returns
// the scalar x1*y2 - y1*x2 (ARGoS's returns the first vector unchanged).
constexpr const char* kGeometry = R"lua(
local sqrt, cos, sin, acos, atan, asin = math.sqrt, math.cos, math.sin, math.acos, math.atan, math.asin
local type, setmetatable, error = type, setmetatable, error

local V2, V3, Q = {}, {}, {}
V2.__index, V3.__index, Q.__index = V2, V3, Q

local function v2(x, y) return setmetatable({x = x, y = y}, V2) end
local function v3(x, y, z) return setmetatable({x = x, y = y, z = z}, V3) end
local function q(w, x, y, z) return setmetatable({w = w, x = x, y = y, z = z}, Q) end

local function vector2(a, b)
  if a == nil then return v2(0, 0) end
  if type(a) == "table" and b == nil then return v2(a.x, a.y) end
  if type(a) == "number" and type(b) == "number" then return v2(a, b) end
  error("invalid arguments to vector2", 2)
end
function V2.__add(a, b) return v2(a.x + b.x, a.y + b.y) end
function V2.__sub(a, b) return v2(a.x - b.x, a.y - b.y) end
function V2.__unm(a) return v2(-a.x, -a.y) end
function V2.__mul(a, b)
  if type(a) == "number" then a, b = b, a end
  if type(b) ~= "number" then error("invalid arguments for multiplication by scalar", 2) end
  return v2(a.x * b, a.y * b)
end
function V2.__eq(a, b) return a.x == b.x and a.y == b.y end
function V2.__tostring(a) return a.x .. "," .. a.y end
function V2.length(a) return sqrt(a.x * a.x + a.y * a.y) end
function V2.normalize(a)
  local l = sqrt(a.x * a.x + a.y * a.y)
  a.x, a.y = a.x / l, a.y / l
  return a
end
function V2.dot(a, b) return a.x * b.x + a.y * b.y end
function V2.cross(a, b) return a.x * b.y - a.y * b.x end
function V2.rotate(a, angle)
  if type(angle) ~= "number" then error("invalid arguments to rotate", 2) end
  local c, s = cos(angle), sin(angle)
  a.x, a.y = a.x * c - a.y * s, a.x * s + a.y * c
  return a
end

local function vector3(a, b, c)
  if a == nil then return v3(0, 0, 0) end
  if type(a) == "table" and b == nil then return v3(a.x, a.y, a.z or 0) end
  if type(a) == "number" and type(b) == "number" and type(c) == "number" then return v3(a, b, c) end
  error("invalid arguments to vector3", 2)
end
function V3.__add(a, b) return v3(a.x + b.x, a.y + b.y, a.z + b.z) end
function V3.__sub(a, b) return v3(a.x - b.x, a.y - b.y, a.z - b.z) end
function V3.__unm(a) return v3(-a.x, -a.y, -a.z) end
function V3.__mul(a, b)
  if type(a) == "number" then a, b = b, a end
  if type(b) ~= "number" then error("invalid arguments for multiplication by scalar", 2) end
  return v3(a.x * b, a.y * b, a.z * b)
end
function V3.__eq(a, b) return a.x == b.x and a.y == b.y and a.z == b.z end
function V3.__tostring(a) return a.x .. "," .. a.y .. "," .. a.z end
function V3.length(a) return sqrt(a.x * a.x + a.y * a.y + a.z * a.z) end
function V3.normalize(a)
  local l = sqrt(a.x * a.x + a.y * a.y + a.z * a.z)
  a.x, a.y, a.z = a.x / l, a.y / l, a.z / l
  return a
end
function V3.dot(a, b) return a.x * b.x + a.y * b.y + a.z * b.z end
function V3.cross(a, b)
  a.x, a.y, a.z = a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x
  return a
end
function V3.rotate(a, r)  -- by the quaternion r: a' = r a r*
  local tx = 2 * (r.y * a.z - r.z * a.y)
  local ty = 2 * (r.z * a.x - r.x * a.z)
  local tz = 2 * (r.x * a.y - r.y * a.x)
  a.x, a.y, a.z = a.x + r.w * tx + (r.y * tz - r.z * ty),
                  a.y + r.w * ty + (r.z * tx - r.x * tz),
                  a.z + r.w * tz + (r.x * ty - r.y * tx)
  return a
end

local function quaternion(a, b, c, d)
  if a == nil then return q(1, 0, 0, 0) end
  if type(a) == "table" and b == nil then return q(a.w, a.x, a.y, a.z) end
  if type(a) == "number" and type(b) == "table" and c == nil then  -- angle, axis
    local l = sqrt(b.x * b.x + b.y * b.y + b.z * b.z)
    local s = sin(a / 2) / l
    return q(cos(a / 2), b.x * s, b.y * s, b.z * s)
  end
  if type(a) == "number" and type(b) == "number" and type(c) == "number" and type(d) == "number" then
    return q(a, b, c, d)
  end
  error("invalid arguments to quaternion", 2)
end
function Q.__mul(a, b)
  return q(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
           a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
           a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
           a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
end
function Q.__eq(a, b) return a.w == b.w and a.x == b.x and a.y == b.y and a.z == b.z end
function Q.__tostring(a) return a.w .. "," .. a.x .. "," .. a.y .. "," .. a.z end
function Q.normalize(a)
  local l = sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z)
  a.w, a.x, a.y, a.z = a.w / l, a.x / l, a.y / l, a.z / l
  return a
end
function Q.inverse(a) return q(a.w, -a.x, -a.y, -a.z) end
function Q.toangleaxis(a)
  local l2 = a.x * a.x + a.y * a.y + a.z * a.z
  if l2 > 0 then
    local w = a.w
    if w > 1 then w = 1 elseif w < -1 then w = -1 end
    local inv = 1 / sqrt(l2)
    return 2 * acos(w), v3(a.x * inv, a.y * inv, a.z * inv)
  end
  return 0, v3(1, 0, 0)
end
function Q.toeulerangles(a)  -- z (yaw), y (pitch), x (roll)
  local w, x, y, z = a.w, a.x, a.y, a.z
  local p = 2 * (w * y - z * x)
  if p > 1 then p = 1 elseif p < -1 then p = -1 end
  return atan(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)), asin(p),
         atan(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
end

return vector2, vector3, quaternion
)lua";

}  // namespace

void open_geometry_types(lua_State* L) {
  if (luaL_loadbufferx(L, kGeometry, std::char_traits<char>::length(kGeometry),
                       "=fleetsim geometry types", "t") != LUA_OK)
    lua_error(L);
  lua_call(L, 0, 3);
  lua_pushglobaltable(L);
  lua_pushvalue(L, -4);
  lua_setfield(L, -2, "vector2");
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "vector3");
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "quaternion");
  lua_pop(L, 4);
}

}  // namespace fleetsim::lua
