// Runs small random worlds (docs/testing.md, "The harnesses"): the input's bytes choose the
// structure of an experiment (arena, walls, boxes, objects, engines of every type and their
// regions, robots of every built-in kind and a custom one, their controllers, robots on region
// borders, loop functions that add, move and remove robots), which the harness writes as an
// experiment file and loads as `fleetsim run` does (load_experiment: a refused file is fine
// and ends the input). The world then runs a few ticks on 1 thread and on 2 threads. Checked:
//   - nothing crashes (ASan, UBSan) and nothing but RunError is thrown;
//   - both thread counts give the same state hash after every tick, the same frame log bytes
//     and the same error, if any (docs/architecture.md: results do not depend on threads);
//   - after every physics phase, no two robots of one kinematics2d region overlap (the
//     engine's promise, docs/experiment-format.md: centres at least the two radii apart, as
//     tests/unit/physics checks it), and every position is finite.
//
// Robots added or removed during a run: the only built-in loop functions (`tag_on_contact`)
// never do, so the harness registers its own, `fuzz_churn`, through the plug-in SDK
// (LoopFunctions, WorldAccess::add_robot / move_robot / remove_robot), as a library's would
// be. It follows a plan the input chose, and never puts a body over another body or a wall
// (the API leaves that to its caller).
//
// Lua controllers are chosen from a set of valid scripts (kScripts) that drive the wheels, or
// a flyer's rotors, from the sensors, so that robots move, meet and collide. The experiment
// file, the scripts and the logs live in a temporary directory, removed at exit.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fs = std::filesystem;
using namespace fleetsim;

namespace {

// ---- The controllers' scripts --------------------------------------------------------------

/// Valid scripts, each working on every kind (a part a kind lacks is nil in `robot`).
constexpr const char* kScripts[] = {
    // 0: avoid what the proximity rays see, else straight on; flyers drift and climb.
    R"(function step()
  if robot.wheels then
    local l, r = 10, 10
    if robot.proximity then
      for i = 1, #robot.proximity do
        local p = robot.proximity[i]
        if p.value > 0.2 then
          if p.angle > 0 then r = -10 else l = -10 end
        end
      end
    end
    robot.wheels.set_velocity(l, r)
  end
  if robot.quadrotor then
    robot.quadrotor.set_linear_velocity(robot.random.uniform(-1, 1), robot.random.uniform(-1, 1), 0.5)
    robot.quadrotor.set_rotational_speed(0.3)
  end
end
)",
    // 1: full speed ahead (beyond the wheels' limit), backing off when blocked.
    R"(local back = 0
function step()
  if robot.collision and robot.collision.realization < 0.5 then back = 3 end
  if robot.wheels then
    if back > 0 then
      back = back - 1
      robot.wheels.set_velocity(-100, -60)
    else
      robot.wheels.set_velocity(100, 100)
    end
  end
  if robot.quadrotor then robot.quadrotor.set_linear_velocity(5, -5, -1) end
end
)",
    // 2: random wheel speeds, LEDs and range-and-bearing bytes every tick.
    R"(local colours = {"red", "green", "blue", "off", "yellow"}
function init()
  if robot.colored_blob_omnidirectional_camera then
    robot.colored_blob_omnidirectional_camera.enable()
  end
end
function step()
  if robot.wheels then
    robot.wheels.set_velocity(robot.random.uniform(-40, 40), robot.random.uniform(-40, 40))
  end
  if robot.leds then robot.leds.set_all_colors(colours[robot.random.uniform_int(1, 6)]) end
  if robot.range_and_bearing and robot.range_and_bearing.set_data then
    robot.range_and_bearing.set_data(1, robot.random.uniform_int(256))
  end
  if robot.quadrotor then
    robot.quadrotor.set_linear_velocity(robot.random.gaussian(1), robot.random.gaussian(1),
                                        robot.random.gaussian(1))
  end
end
)",
    // 3: toward the arena's centre when it knows where it is (positioning), a crowd's jam.
    R"(local function heading()
  local a, axis = robot.positioning.orientation:toangleaxis()
  if axis.z < 0 then a = -a end
  return a
end
function step()
  if robot.positioning and robot.wheels then
    local p = robot.positioning.position
    local want = math.atan(-p.y, -p.x)
    local d = want - heading()
    while d > math.pi do d = d - 2 * math.pi end
    while d < -math.pi do d = d + 2 * math.pi end
    local k = math.max(-1, math.min(1, d))
    robot.wheels.set_velocity(20 * (1 - k), 20 * (1 + k))
  elseif robot.wheels then
    robot.wheels.set_velocity(15, 13)
  end
  if robot.quadrotor and robot.positioning then
    local p = robot.positioning.position
    robot.quadrotor.set_linear_velocity(-p.x, -p.y, 1 - p.z)
  end
end
)",
    // 4: follows the nearest lit LED or message, or spins; lights its own LEDs.
    R"(function init()
  if robot.leds then robot.leds.set_all_colors("green") end
  if robot.colored_blob_omnidirectional_camera then
    robot.colored_blob_omnidirectional_camera.enable()
  end
end
function step()
  local angle = nil
  if robot.colored_blob_omnidirectional_camera then
    local best = 1e9
    for i = 1, #robot.colored_blob_omnidirectional_camera do
      local b = robot.colored_blob_omnidirectional_camera[i]
      if b.distance < best then best, angle = b.distance, b.angle end
    end
  end
  if angle == nil and robot.range_and_bearing then
    for i = 1, #robot.range_and_bearing do
      angle = robot.range_and_bearing[i].horizontal_bearing
    end
  end
  if robot.wheels then
    if angle == nil then
      robot.wheels.set_velocity(-8, 8)
    else
      robot.wheels.set_velocity(10 - 5 * angle, 10 + 5 * angle)
    end
  end
  if robot.range_and_bearing and robot.range_and_bearing.set_data then
    robot.range_and_bearing.clear_data()
  end
  if robot.quadrotor then
    robot.quadrotor.set_linear_velocity(0, 0, -1)
    robot.quadrotor.set_rotational_speed(angle or 1)
  end
end
)",
};
constexpr int kScriptCount = static_cast<int>(std::size(kScripts));

// ---- The world's pieces --------------------------------------------------------------------

enum EngineType { kKinematics, kDynamics, kPointMass, kEngineTypes };
constexpr const char* kEngineNames[] = {"kinematics2d", "dynamics2d", "pointmass3d"};

/// The kinds a world may use: the five built-in ones and `scout`, declared in <kinds>.
struct KindSpec {
  const char* name;
  double radius_m;  ///< for the harness's own placement checks (the run reads the model's)
  bool passive, flies, box;
};
constexpr KindSpec kKinds[] = {
    {"epuck", 0.035, false, false, false},   {"footbot", 0.085, false, false, false},
    {"cylinder", 0.1, true, false, false},   {"box", 0.1415, true, false, true},
    {"eyebot", 0.25, false, true, false},    {"scout", 0.05, false, false, false},
};
constexpr int kKindCount = static_cast<int>(std::size(kKinds));

/// Controller ids: the scripts are lua0.., then the C++ ones.
constexpr const char* kCppControllers[][2] = {
    {"diffuse", "diffusion"}, {"walk", "random_walk"}, {"still", "idle"}, {"ext", "external"}};
constexpr int kCppControllerCount = static_cast<int>(std::size(kCppControllers));

struct Box {
  double x0, y0, x1, y1;
};

/// Everything the loop functions need to keep bodies apart: the static obstacles' segments
/// and which kinds and controllers the file declares.
struct Geometry {
  std::vector<Segment> segments;
  std::vector<std::array<Vec2, 4>> boxes;
  Box arena{};
};

/// One change the `fuzz_churn` loop functions make.
struct ChurnOp {
  Tick tick = 0;
  bool post = false;  ///< in post_step, else in pre_step
  int what = 0;       ///< 0 add, 1 remove, 2 move
  int spawn = 0;      ///< add: index into World::spawnable
  std::size_t robot = 0;  ///< remove, move: index into the robots (modulo their count)
  double fx = 0, fy = 0, heading = 0;  ///< the position as fractions of the arena
};

struct World {
  Geometry geometry;
  /// (kind index, controller id) pairs the loop functions may add.
  std::vector<std::pair<int, std::string>> spawnable;
  std::vector<ChurnOp> plan;
  int ticks = 3;
};

World g_world;  // the current input's (the loop functions read it)

bool inside_convex(const std::array<Vec2, 4>& c, Vec2 p) {
  for (int i = 0; i < 4; ++i)
    if (cross(c[(i + 1) % 4] - c[i], p - c[i]) < 0) return false;
  return true;
}

/// Whether a body of radius r fits at p: inside the arena, clear of every obstacle and of the
/// bodies (x, y, radius) by a millimetre.
bool fits(const Geometry& g, Vec2 p, double r, const std::vector<std::array<double, 3>>& bodies) {
  constexpr double kClear = 1e-3;
  if (p.x - r < g.arena.x0 || p.x + r > g.arena.x1 || p.y - r < g.arena.y0 ||
      p.y + r > g.arena.y1)
    return false;
  for (const Segment& s : g.segments)
    if (distance_to_segment(p, s) < r + kClear) return false;
  for (const auto& b : g.boxes)
    if (inside_convex(b, p)) return false;
  for (const auto& b : bodies) {
    const double dx = p.x - b[0], dy = p.y - b[1], rs = r + b[2] + kClear;
    if (dx * dx + dy * dy < rs * rs) return false;
  }
  return true;
}

// ---- The loop functions that add, move and remove robots ----------------------------------

class FuzzChurn final : public LoopFunctions {
 public:
  void pre_step(WorldAccess& w) override { apply(w, false); }
  void post_step(WorldAccess& w) override { apply(w, true); }

 private:
  /// The other robots' bodies (all of them: a body of another engine may overlap this one
  /// by the rules, but the harness never makes it).
  static std::vector<std::array<double, 3>> bodies(WorldAccess& w, EntityId except,
                                                   const std::vector<double>& radius) {
    std::vector<std::array<double, 3>> out;
    const auto ids = w.robots();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] == except) continue;
      const Vec2 p = w.robot_position(ids[k]);
      out.push_back({p.x, p.y, radius[k]});
    }
    return out;
  }

  void apply(WorldAccess& w, bool post) {
    for (const ChurnOp& op : g_world.plan) {
      if (op.tick != w.tick() || op.post != post) continue;
      const auto ids = w.robots();
      // The radius of each robot, from the kind the harness gave it (added robots are named
      // robotN; the harness remembers every id it added with its kind).
      std::vector<double> radius(ids.size(), kMaxRadius);
      for (std::size_t k = 0; k < ids.size(); ++k)
        for (const auto& [id, r] : added_)
          if (id == ids[k]) radius[k] = r;
      const Box& a = g_world.geometry.arena;
      const Vec2 p{a.x0 + op.fx * (a.x1 - a.x0), a.y0 + op.fy * (a.y1 - a.y0)};
      if (op.what == 0) {
        if (g_world.spawnable.empty()) continue;
        const auto& [kind, controller] =
            g_world.spawnable[static_cast<std::size_t>(op.spawn) % g_world.spawnable.size()];
        const double r = kKinds[kind].radius_m;
        if (!fits(g_world.geometry, p, r, bodies(w, kNoEntity, radius))) continue;
        added_.push_back({w.add_robot(kKinds[kind].name, controller, p, op.heading, "added"), r});
      } else if (!ids.empty()) {
        const std::size_t k = op.robot % ids.size();
        if (op.what == 1) {
          w.remove_robot(ids[k]);
        } else if (fits(g_world.geometry, p, radius[k], bodies(w, ids[k], radius))) {
          w.move_robot(ids[k], p, op.heading);
        }
      }
    }
  }

  static constexpr double kMaxRadius = 0.25;  ///< a robot the file placed: the largest kind's
  std::vector<std::pair<EntityId, double>> added_;
};

// ---- From bytes to an experiment file ------------------------------------------------------

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string pair_text(double a, double b) { return num(a) + "," + num(b); }

/// Writes the experiment the input describes into `xml`; fills g_world.
std::string decode(FuzzedDataProvider& in, const std::string& dir) {
  World& world = g_world;
  world = World{};
  std::string x = "<fleetsim>\n";
  const int tps = in.PickValueInArray({1, 5, 10, 20, 50});
  world.ticks = in.ConsumeIntegralInRange(3, 8);
  x += "  <framework ticks_per_second=\"" + std::to_string(tps) + "\" length=\"0\" seed=\"" +
       std::to_string(in.ConsumeIntegral<std::uint16_t>()) + "\"/>\n";

  // The arena: 1 to 4 m a side in halves of a metre, so that sixteenths (region cuts, robot
  // positions) are exact in binary and in the file's decimals.
  const double w = 0.5 * in.ConsumeIntegralInRange(2, 8), h = 0.5 * in.ConsumeIntegralInRange(2, 8);
  const double cx = 0.5 * in.ConsumeIntegralInRange(-2, 2), cy = 0.5 * in.ConsumeIntegralInRange(-2, 2);
  const bool closed = in.ConsumeProbability<double>() < 0.85;
  const Box arena{cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
  world.geometry.arena = arena;
  auto at_x = [&](int sixteenths) { return arena.x0 + w * sixteenths / 16; };
  auto at_y = [&](int sixteenths) { return arena.y0 + h * sixteenths / 16; };
  if (closed) {
    world.geometry.segments.push_back({{arena.x0, arena.y0}, {arena.x1, arena.y0}});
    world.geometry.segments.push_back({{arena.x1, arena.y0}, {arena.x1, arena.y1}});
    world.geometry.segments.push_back({{arena.x1, arena.y1}, {arena.x0, arena.y1}});
    world.geometry.segments.push_back({{arena.x0, arena.y1}, {arena.x0, arena.y0}});
  }

  // Engines: each type present or not, its regions strips or a grid with cuts at sixteenths.
  std::array<bool, kEngineTypes> present{};
  std::array<std::vector<Box>, kEngineTypes> regions;
  std::vector<double> cuts_x, cuts_y;  // every region border inside the arena
  const bool any_physics = in.ConsumeBool();
  for (int t = 0; t < kEngineTypes && any_physics; ++t) {
    present[t] = in.ConsumeBool();
    if (!present[t]) continue;
    auto cuts = [&](int parts) {
      std::vector<int> c{0, 16};
      for (int k = 1; k < parts; ++k) c.push_back(in.ConsumeIntegralInRange(1, 15));
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      return c;
    };
    const int layout = in.ConsumeIntegralInRange(0, 3);
    const std::vector<int> cx_cuts = cuts(layout == 0 ? 1 : layout == 1 ? 3 : 2);
    const std::vector<int> cy_cuts = cuts(layout >= 2 ? 2 + (layout - 2) : 1);
    for (std::size_t j = 0; j + 1 < cy_cuts.size(); ++j)
      for (std::size_t i = 0; i + 1 < cx_cuts.size(); ++i)
        regions[t].push_back(
            {at_x(cx_cuts[i]), at_y(cy_cuts[j]), at_x(cx_cuts[i + 1]), at_y(cy_cuts[j + 1])});
    for (std::size_t i = 1; i + 1 < cx_cuts.size(); ++i) cuts_x.push_back(at_x(cx_cuts[i]));
    for (std::size_t j = 1; j + 1 < cy_cuts.size(); ++j) cuts_y.push_back(at_y(cy_cuts[j]));
  }
  const bool any_declared = present[kKinematics] || present[kDynamics] || present[kPointMass];
  if (!any_declared) present[kKinematics] = true;  // no <physics>: one kinematics2d
  const bool both_2d = present[kKinematics] && present[kDynamics];

  // Kinds: usable when an engine of the world accepts them; ground kinds choose their 2D type
  // when both are there (the file must then say).
  std::array<bool, kKindCount> usable{};
  std::array<int, kKindCount> engine_of{};
  std::string kinds;
  for (int k = 0; k < kKindCount; ++k) {
    const KindSpec& s = kKinds[k];
    if (s.flies) {
      usable[k] = present[kPointMass];
      engine_of[k] = kPointMass;
    } else if (s.box) {
      usable[k] = present[kDynamics];
      engine_of[k] = kDynamics;
    } else {
      usable[k] = present[kKinematics] || present[kDynamics];
      engine_of[k] = both_2d ? (in.ConsumeBool() ? kDynamics : kKinematics)
                             : (present[kKinematics] ? kKinematics : kDynamics);
    }
    if (!usable[k]) continue;
    const std::string engine =
        both_2d && !s.flies && !s.box ? std::string(" engine=\"") + kEngineNames[engine_of[k]] + "\""
                                      : "";
    if (std::string(s.name) == "scout")
      kinds += "    <kind name=\"scout\" base=\"footbot\" radius=\"0.05\" max_speed=\"0.2\"" +
               engine + "/>\n";
    else if (!engine.empty())
      kinds += std::string("    <kind name=\"") + s.name + "\" base=\"" + s.name + "\"" + engine +
               "/>\n";
  }

  // Static obstacles: walls and boxes between sixteenths of the arena; DEECo objects.
  std::string bodies;
  const int walls = in.ConsumeIntegralInRange(0, 3);
  for (int k = 0; k < walls; ++k) {
    const Vec2 a{at_x(in.ConsumeIntegralInRange(0, 16)), at_y(in.ConsumeIntegralInRange(0, 16))};
    const Vec2 b{at_x(in.ConsumeIntegralInRange(0, 16)), at_y(in.ConsumeIntegralInRange(0, 16))};
    if (a == b) continue;
    world.geometry.segments.push_back({a, b});
    bodies += "    <wall from=\"" + pair_text(a.x, a.y) + "\" to=\"" + pair_text(b.x, b.y) + "\"/>\n";
  }
  const int boxes = in.ConsumeIntegralInRange(0, 2);
  for (int k = 0; k < boxes; ++k) {
    const Vec2 c{at_x(in.ConsumeIntegralInRange(1, 15)), at_y(in.ConsumeIntegralInRange(1, 15))};
    const double sx = 0.0625 * in.ConsumeIntegralInRange(1, 6),
                 sy = 0.0625 * in.ConsumeIntegralInRange(1, 6);
    const double angle = 15.0 * in.ConsumeIntegralInRange(0, 11);
    const double ca = std::cos(angle * kPi / 180), sa = std::sin(angle * kPi / 180);
    std::array<Vec2, 4> corners;
    const double hx[4] = {-1, 1, 1, -1}, hy[4] = {-1, -1, 1, 1};
    for (int q = 0; q < 4; ++q) {
      const Vec2 l{hx[q] * sx / 2, hy[q] * sy / 2};
      corners[q] = c + Vec2{ca * l.x - sa * l.y, sa * l.x + ca * l.y};
    }
    world.geometry.boxes.push_back(corners);
    for (int q = 0; q < 4; ++q) world.geometry.segments.push_back({corners[q], corners[(q + 1) % 4]});
    bodies += "    <box center=\"" + pair_text(c.x, c.y) + "\" size=\"" + pair_text(sx, sy) +
              "\" angle=\"" + num(angle) + "\"/>\n";
  }
  const int objects = in.ConsumeIntegralInRange(0, 3);
  for (int k = 0; k < objects; ++k)
    bodies += "    <object id=\"o" + std::to_string(k) + "\" class=\"" +
              (in.ConsumeBool() ? "Food" : "Nest") + "\" position=\"" +
              pair_text(at_x(in.ConsumeIntegralInRange(-4, 20)), at_y(in.ConsumeIntegralInRange(-4, 20))) +
              "\" size=\"0.25\"/>\n";

  // Robots: groups of one kind and controller, one robot at a chosen place (on a region
  // border, at a corner of regions, anywhere) or distributed at random; 50 at most.
  std::array<bool, kScriptCount> script_used{};
  std::array<bool, kCppControllerCount> cpp_used{};
  std::vector<std::array<double, 3>> placed;  // the <robot>s: x, y, radius
  std::vector<int> usable_kinds;
  for (int k = 0; k < kKindCount; ++k)
    if (usable[k]) usable_kinds.push_back(k);
  int robots = 0, named = 0;
  const int groups = in.ConsumeIntegralInRange(0, 8);
  for (int gi = 0; gi < groups && robots < 50 && !usable_kinds.empty(); ++gi) {
    const int k = usable_kinds[in.ConsumeIntegralInRange<std::size_t>(0, usable_kinds.size() - 1)];
    const KindSpec& s = kKinds[k];
    // The controller: none for a passive body (or `still`), a script or a C++ one otherwise
    // (flyers: scripts, idle or external; the C++ drivers need wheels and rays).
    // Scripts two times in three: they move robots the most ways.
    std::string controller;
    const int pick = in.ConsumeIntegralInRange(0, 2 * kCppControllerCount - 1);
    if (s.passive) {
      if (pick % 2) {
        controller = "still";
        cpp_used[2] = true;
      }
    } else if (pick < kCppControllerCount) {
      const int script = in.ConsumeIntegralInRange(0, kScriptCount - 1);
      controller = "lua" + std::to_string(script);
      script_used[script] = true;
    } else {
      int c = pick - kCppControllerCount;
      if (s.flies && c < 2) c = 2;
      controller = kCppControllers[c][0];
      cpp_used[c] = true;
    }
    const std::pair<int, std::string> spawn{k, controller.empty() ? "(passive body)" : controller};
    const std::string ctrl = controller.empty() ? "" : " controller=\"" + controller + "\"";
    const int place = in.ConsumeIntegralInRange(0, 3);
    if (place == 3) {
      const int count = std::min(in.ConsumeIntegralInRange(1, 12), 50 - robots);
      std::string region;
      if (in.ConsumeBool()) {
        // At least a quarter of the arena each way (smaller ones mostly refuse the robots).
        int a = in.ConsumeIntegralInRange(0, 12), b = in.ConsumeIntegralInRange(a + 4, 16);
        int c = in.ConsumeIntegralInRange(0, 12), d = in.ConsumeIntegralInRange(c + 4, 16);
        region = " region=\"" + pair_text(at_x(a), at_y(c)) + "," + pair_text(at_x(b), at_y(d)) + "\"";
      }
      bodies += "    <distribute count=\"" + std::to_string(count) + "\" kind=\"" + s.name + "\"" +
                ctrl + " id_prefix=\"g" + std::to_string(gi) + "_\"" + region + "/>\n";
      robots += count;
      world.spawnable.push_back(spawn);
      continue;
    }
    // One robot: on a vertical or horizontal border of regions, on a corner of four, or at
    // any sixteenth.
    double px = at_x(in.ConsumeIntegralInRange(0, 16)), py = at_y(in.ConsumeIntegralInRange(0, 16));
    if ((place == 0 || place == 2) && !cuts_x.empty())
      px = cuts_x[in.ConsumeIntegralInRange<std::size_t>(0, cuts_x.size() - 1)];
    if ((place == 1 || place == 2) && !cuts_y.empty())
      py = cuts_y[in.ConsumeIntegralInRange<std::size_t>(0, cuts_y.size() - 1)];
    const double heading = 30.0 * in.ConsumeIntegralInRange(-6, 6);
    if (!fits(world.geometry, {px, py}, s.radius_m, placed)) continue;
    placed.push_back({px, py, s.radius_m});
    bodies += "    <robot id=\"r" + std::to_string(named++) + "\" kind=\"" + s.name + "\"" + ctrl +
              " position=\"" + pair_text(px, py) + "\" heading=\"" + num(heading) + "\"/>\n";
    ++robots;
    world.spawnable.push_back(spawn);
  }

  // Loop functions: none, the built-in tag_on_contact, or the harness's churn with its plan.
  std::string loop;
  const int loop_kind = in.ConsumeIntegralInRange(0, 3);
  if (loop_kind == 1) {
    loop = "  <loop_functions type=\"tag_on_contact\" tag=\"hit\"/>\n";
  } else if (loop_kind >= 2) {
    loop = "  <loop_functions type=\"fuzz_churn\"/>\n";
    const int ops = in.ConsumeIntegralInRange(1, 12);
    for (int k = 0; k < ops; ++k) {
      ChurnOp op;
      op.tick = in.ConsumeIntegralInRange<Tick>(0, static_cast<Tick>(world.ticks));
      op.post = in.ConsumeBool();
      op.what = in.ConsumeIntegralInRange(0, 2);
      op.spawn = in.ConsumeIntegralInRange(0, 7);
      op.robot = in.ConsumeIntegralInRange<std::size_t>(0, 63);
      op.fx = in.ConsumeIntegralInRange(0, 64) / 64.0;
      op.fy = in.ConsumeIntegralInRange(0, 64) / 64.0;
      op.heading = in.ConsumeIntegralInRange(-6, 6) * kPi / 6;
      world.plan.push_back(op);
    }
  }

  std::string controllers;
  for (int s = 0; s < kScriptCount; ++s)
    if (script_used[s])
      controllers += "    <controller id=\"lua" + std::to_string(s) + "\" type=\"lua\" script=\"" +
                     dir + "/s" + std::to_string(s) + ".lua\"/>\n";
  for (int c = 0; c < kCppControllerCount; ++c)
    if (cpp_used[c])
      controllers += std::string("    <controller id=\"") + kCppControllers[c][0] + "\" type=\"" +
                     kCppControllers[c][1] + "\"/>\n";

  if (!kinds.empty()) x += "  <kinds>\n" + kinds + "  </kinds>\n";
  if (!controllers.empty()) x += "  <controllers>\n" + controllers + "  </controllers>\n";
  x += "  <arena size=\"" + pair_text(w, h) + "\" center=\"" + pair_text(cx, cy) + "\" closed=\"" +
       (closed ? "true" : "false") + "\">\n" + bodies + "  </arena>\n";
  if (any_declared) {
    x += "  <physics>\n";
    int id = 0;
    for (int t = 0; t < kEngineTypes; ++t)
      for (const Box& r : regions[t])
        x += std::string("    <") + kEngineNames[t] + " id=\"e" + std::to_string(id++) +
             "\" region=\"" + pair_text(r.x0, r.y0) + "," + pair_text(r.x1, r.y1) + "\"/>\n";
    x += "  </physics>\n";
  }
  x += loop + "</fleetsim>\n";
  return x;
}

// ---- Running it ----------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

/// The engine's promise after every physics phase: no two robots of one kinematics2d region
/// overlap (centres at least the two radii apart), and every position is finite.
void check_bodies(const WorldModel& m, const WorldState& s) {
  const std::size_t n = s.robot_count();
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(s.x()[i]) || !std::isfinite(s.y()[i]) || !std::isfinite(s.theta()[i]))
      fail("robot " + std::to_string(s.robot_id()[i]) + " has a non-finite pose at tick " +
           std::to_string(s.tick));
    const std::uint8_t e = s.robot_engine()[i];
    if (m.engine_types[m.engines[e].type_index] != "kinematics2d") continue;
    for (std::size_t j = i + 1; j < n; ++j) {
      if (s.robot_engine()[j] != e) continue;
      const double dx = s.x()[i] - s.x()[j], dy = s.y()[i] - s.y()[j];
      const double rs = m.kinds[s.robot_kind()[i]].radius_m + m.kinds[s.robot_kind()[j]].radius_m;
      if (dx * dx + dy * dy < rs * rs) {
        char b[256];
        std::snprintf(b, sizeof b,
                      "robots %u and %u overlap in kinematics2d region '%s' after the physics "
                      "of tick %lld: distance %.17g < %.17g",
                      s.robot_id()[i], s.robot_id()[j], m.engines[e].id.c_str(),
                      static_cast<long long>(s.tick), std::sqrt(dx * dx + dy * dy), rs);
        fail(b);
      }
    }
  }
}

struct Outcome {
  bool loaded = false;
  std::vector<std::uint64_t> hashes;  ///< after each tick
  std::string error;                  ///< a RunError's message, if the run stopped
  std::string log;                    ///< the frame log's bytes
  std::size_t robots_start = 0, robots_end = 0;
};

PluginRegistry* registry = nullptr;
std::string work_dir;

Outcome run(const std::string& path, int threads) {
  Outcome out;
  const std::string log = work_dir + "/t" + std::to_string(threads) + ".flog";
  std::filesystem::remove(log);
  Diagnostics diags;
  ExperimentOverrides ov;
  ov.threads = threads;
  ov.log_path = log;
  ov.log_format = log::LogFormat::kFrames;
  ov.max_placement_tries = 100'000;
  auto ex = load_experiment(path, *registry, ov, diags);
  fuzz::check_refusal(ex.has_value(), diags);
  if (!ex) {
    if (std::getenv("FLEETSIM_FUZZ_RUN_PRINT")) diags.print(std::cerr);
    return out;
  }
  out.loaded = true;
  try {
    Simulation sim(std::move(*ex), *registry);
    sim.on_phase = [&](Phase p, const WorldState& s) {
      if (p == Phase::kPhysics) check_bodies(sim.model(), s);
    };
    out.robots_start = sim.state().robot_count();
    sim.start();
    for (int t = 0; t < g_world.ticks && !sim.done(); ++t) {
      sim.step();
      out.hashes.push_back(sim.state().hash());
      out.robots_end = sim.state().robot_count();
    }
    sim.finish();
  } catch (const RunError& e) {
    out.error = e.what();
  }
  std::ifstream in(log, std::ios::binary);
  out.log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  registry = new PluginRegistry;
  register_builtins(*registry);
  registry->add_loop_functions(
      {PluginKind::kLoopFunctions, "fuzz_churn",
       "the run fuzzer's: adds, moves and removes robots as the input's plan says",
       {}},
      [] { return std::make_unique<FuzzChurn>(); });
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/fleetsim-fuzz-run-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  work_dir = pattern;
  for (int s = 0; s < kScriptCount; ++s) {
    std::ofstream(work_dir + "/s" + std::to_string(s) + ".lua") << kScripts[s];
  }
  std::atexit([] { std::filesystem::remove_all(work_dir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string xml = decode(in, work_dir);
  const std::string path = work_dir + "/run.xml";
  {
    std::ofstream out(path, std::ios::trunc);
    out << xml;
  }
  // FLEETSIM_FUZZ_RUN_PRINT=1: each input's experiment file and what became of it.
  const bool print = std::getenv("FLEETSIM_FUZZ_RUN_PRINT") != nullptr;
  if (print) std::fputs(xml.c_str(), stderr);
  const Outcome one = run(path, 1);
  if (print)
    std::fprintf(stderr, "fuzz: %s, %zu ticks, robots %zu to %zu, log %zu bytes%s%s\n",
                 one.loaded ? "loaded" : "refused", one.hashes.size(), one.robots_start,
                 one.robots_end, one.log.size(), one.error.empty() ? "" : ", stopped: ",
                 one.error.c_str());
  if (!one.loaded) return 0;
  const Outcome two = run(path, 2);
  if (!two.loaded) fail("the file loads for 1 thread but not for 2");
  if (one.error != two.error)
    fail("1 and 2 threads stop differently: '" + one.error + "' and '" + two.error + "'");
  if (one.hashes != two.hashes) {
    std::size_t t = 0;
    while (t < one.hashes.size() && t < two.hashes.size() && one.hashes[t] == two.hashes[t]) ++t;
    fail("1 and 2 threads give different state hashes from tick " + std::to_string(t + 1));
  }
  if (one.log != two.log) fail("1 and 2 threads write different frame logs");
  return 0;
}
