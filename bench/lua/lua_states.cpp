// bench/lua_states: what the `lua` controller costs per robot, outside the engine.
//
//   lua_states --robots N --ticks T [--script bench/diffusion/diffusion.lua]
//
// N e-puck-like robots (8 proximity rays, collision, wheels, one LED) each get a LuaController
// running the script; every tick each robot's readings change (a fixed pattern) and it steps.
// The same loop with the built-in C++ diffusion rule gives the baseline. Then, for the choice
// of one Lua state per robot, the alternative is measured: one state holding all N robots,
// each script loaded with its own environment (_ENV) as a per-worker state would hold them.
// Prints one JSON line: init seconds, bytes per robot (Lua's own count and the resident set's
// growth), CPU ns per robot-step for Lua and C++, and the shared state's bytes and ns.
#include <sys/resource.h>
#include <time.h>
#include <lua.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "control/diffusion.hpp"
#include "core/command_line.hpp"
#include "lua/lua_controller.hpp"
#include "robots/proximity_sensor.hpp"

namespace {

using namespace fleetsim;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double rss_bytes() {
  std::ifstream status("/proc/self/statm");
  long pages = 0, resident = 0;
  status >> pages >> resident;
  return static_cast<double>(resident) * 4096.0;
}

class EpuckSetup final : public ControllerSetup {
 public:
  explicit EpuckSetup(EntityId id) : id_(id) {}
  EntityId robot() const override { return id_; }
  const KindInfo& kind() const override { return kind_; }
  std::size_t sensor(std::string_view, std::string_view) const override { return 0; }
  std::size_t actuator(std::string_view, std::string_view) const override { return 0; }
  std::optional<std::size_t> find_sensor_type(std::string_view) const override { return {}; }
  std::optional<std::size_t> find_actuator_type(std::string_view) const override { return {}; }
  std::span<const SensorView> sensors() const override { return sensors_; }
  std::span<const ActuatorView> actuators() const override { return actuators_; }

 private:
  EntityId id_;
  KindInfo kind_;
  SensorView sensors_[2] = {{"proximity", "proximity"}, {"collision", "collision"}};
  ActuatorView actuators_[2] = {{"differential_drive", "differential_drive"}, {"leds", "leds"}};
};

/// Robot r's reading of ray k at tick t: most rays see nothing, a few see something.
float reading(std::size_t r, int k, std::int64_t t) {
  const std::uint64_t h =
      mix64(r * 131 + static_cast<std::uint64_t>(k) * 7 + static_cast<std::uint64_t>(t) * 1009);
  return (h & 7) == 0 ? static_cast<float>(h >> 40) / 16777216.0f : 0.0f;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One state, many robots: each robot's copy of the script runs in its own environment.
const char* kSharedDriver = R"(
local n, ticks, source = ...
local envs, prox = {}, {}
for r = 1, n do
  local robot = {id = tostring(r), proximity = {}, collision = {realization = 1}, wheels = {}}
  for i = 1, 8 do robot.proximity[i] = {value = 0, angle = (i - 0.5) * math.pi / 4} end
  robot.wheels.set_velocity = function(left, right) robot.left, robot.right = left, right end
  local env = setmetatable({robot = robot}, {__index = _G})
  assert(load(source, "=script", "t", env))()
  env.init()
  envs[r], prox[r] = env, robot.proximity
end
collectgarbage()
local bytes = collectgarbage("count") * 1024
local t0 = os.clock()
for t = 1, ticks do
  for r = 1, n do
    local p = prox[r]
    for i = 1, 8 do p[i].value = ((r * 131 + i * 7 + t * 1009) % 8 == 0) and 0.5 or 0 end
    envs[r].step()
  end
end
return bytes, os.clock() - t0
)";

}  // namespace

int main(int argc, char** argv) {
  std::size_t robots = 10000;
  int ticks = 100;
  std::string script = std::string(FLEETSIM_SOURCE_DIR) + "/bench/diffusion/diffusion.lua";
  CLI::App app{
      "What the lua controller costs per robot, outside the engine: N e-puck-like robots each "
      "running the script for T ticks, against the built-in diffusion rule and one Lua state "
      "shared by all. Prints one JSON line (docs/benchmarks.md, Lua controllers).",
      "lua_states"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", robots, "Number of robots N")->check(CLI::Range(1, 10'000'000));
  app.add_option("--ticks", ticks, "Ticks T")->check(CLI::Range(1, 100'000'000));
  app.add_option("--script", script, "The controller's Lua script")->check(CLI::ExistingFile);
  if (int status = fleetsim::parse_command_line(app, argc, argv); status >= 0) return status;

  // Per-robot storage, as the engine's columns would hold it.
  std::vector<float> proximity(robots * 8);
  std::vector<double> wheels(robots * 2);
  std::vector<Color> leds(robots);
  std::vector<float> angles(kEpuckProximityAngles, kEpuckProximityAngles + 8);
  std::vector<Vec2> directions;
  for (double a : kEpuckProximityAngles) directions.push_back({std::cos(a), std::sin(a)});
  const double axle[2] = {0.053, 0.13};

  const double rss0 = rss_bytes();
  double c0 = cpu_seconds();
  std::vector<std::unique_ptr<lua::LuaController>> controllers;
  controllers.reserve(robots);
  Params params({{"script", script}});
  for (std::size_t r = 0; r < robots; ++r) {
    controllers.push_back(std::make_unique<lua::LuaController>());
    controllers.back()->init(params, EpuckSetup(static_cast<EntityId>(r)));
  }
  const double init_s = cpu_seconds() - c0;

  auto run = [&](bool lua) {
    const double start = cpu_seconds();
    for (std::int64_t t = 1; t <= ticks; ++t) {
      for (std::size_t r = 0; r < robots; ++r) {
        float* p = &proximity[r * 8];
        for (int k = 0; k < 8; ++k) p[k] = reading(r, k, t);
        SensorView s[2] = {{"proximity", "proximity"}, {"collision", "collision"}};
        s[0].values = {p, 8};
        s[0].angles = angles;
        s[0].directions = directions;
        s[1].scalar = 1.0f;
        ActuatorView a[2] = {{"differential_drive", "differential_drive"}, {"leds", "leds"}};
        a[0].values = {&wheels[r * 2], 2};
        a[0].constants = axle;
        a[1].colors = {&leds[r], 1};
        if (lua) {
          RobotIO io;
          io.id = static_cast<EntityId>(r);
          io.tick = t;
          io.sensors = s;
          io.actuators = a;
          io.rng = CounterRng(1, io.id, t, RandomStream::kController);
          controllers[r]->step(io);
        } else {
          diffusion_step(DiffusionParams{}, s[0].values, s[0].directions, s[1].scalar,
                         wheels[r * 2], wheels[r * 2 + 1]);
        }
      }
    }
    return (cpu_seconds() - start) * 1e9 / (static_cast<double>(robots) * ticks);
  };
  const double cpp_ns = run(false);
  const double lua_ns = run(true);
  double lua_bytes = 0;
  for (auto& c : controllers) lua_bytes += static_cast<double>(c->memory_bytes());
  const double rss_per_robot = (rss_bytes() - rss0) / static_cast<double>(robots);
  controllers.clear();

  // The alternative: one state for all robots.
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  const double shared_base = lua_gc(L, LUA_GCCOUNT) * 1024.0 + lua_gc(L, LUA_GCCOUNTB);
  luaL_loadstring(L, kSharedDriver);
  lua_pushinteger(L, static_cast<lua_Integer>(robots));
  lua_pushinteger(L, ticks);
  const std::string source = read_file(script);
  lua_pushlstring(L, source.data(), source.size());
  if (lua_pcall(L, 3, 2, 0) != LUA_OK) {
    std::cerr << "lua_states: " << lua_tostring(L, -1) << "\n";
    return 1;
  }
  const double shared_bytes = (lua_tonumber(L, -2) - shared_base) / static_cast<double>(robots);
  const double shared_ns = lua_tonumber(L, -1) * 1e9 / (static_cast<double>(robots) * ticks);
  lua_close(L);

  nlohmann::ordered_json j = {{"bench", "lua_states"},
                              {"robots", robots},
                              {"ticks", ticks},
                              {"init_seconds", init_s},
                              {"lua_bytes_per_robot", lua_bytes / static_cast<double>(robots)},
                              {"rss_bytes_per_robot", rss_per_robot},
                              {"cpp_ns_per_robot_step", cpp_ns},
                              {"lua_ns_per_robot_step", lua_ns},
                              {"lua_extra_ns_per_robot_step", lua_ns - cpp_ns},
                              {"shared_state_bytes_per_robot", shared_bytes},
                              {"shared_state_ns_per_robot_step", shared_ns}};
  std::cout << j.dump() << std::endl;
  return 0;
}
