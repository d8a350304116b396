#include "scenario/argos_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/named_colors.hpp"
#include "fleetsim/random.hpp"
#include "robots/kinds.hpp"

namespace fleetsim {

namespace {

constexpr double kPiHere = 3.14159265358979323846;
/// What fleetsim's world builder asks between bodies placed at the start; an ARGoS
/// <distribute> keeps its bodies this far apart too, so that the builder accepts them.
constexpr double kPlacementGap = 1e-5;
/// The sides of the polygon that stands for an immovable <cylinder> (fleetsim's static
/// obstacles are segments).
constexpr int kCylinderSides = 24;
constexpr const char* kCppPlugins =
    "ARGoS C++ plug-ins cannot be loaded; see docs/argos.md for what to do";

using Vec3 = std::array<double, 3>;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
std::string vec2(double x, double y) {
  return num(x) + "," + num(y);
}

/// The robots of ARGoS's Lua API that fleetsim has, by ARGoS element name.
enum RobotBit : unsigned { kFootBot = 1, kEPuck = 2, kEyeBot = 4, kAnyRobot = 7 };
struct ArgosRobot {
  const char* element;  ///< <foot-bot>
  const char* kind;     ///< fleetsim's built-in kind
  RobotBit bit;
  double rab_range_m;  ///< ARGoS's defaults for rab_range and rab_data_size
  int rab_data_size;
};
constexpr ArgosRobot kRobots[] = {{"foot-bot", "footbot", kFootBot, 3.0, 10},
                                  {"e-puck", "epuck", kEPuck, 0.8, 2},
                                  {"eye-bot", "eyebot", kEyeBot, 3.0, 10}};

/// One sensor or actuator of a <lua_controller>: the fleetsim part it becomes ("" for none
/// needed), the robots it fits, or why fleetsim cannot have it.
struct PartMapping {
  const char* argos;
  const char* part;
  unsigned robots;
  const char* lacking;  ///< non-null: fleetsim has no such part
};
constexpr PartMapping kSensors[] = {
    {"footbot_proximity", "proximity", kFootBot, nullptr},
    {"epuck_proximity", "proximity", kEPuck, nullptr},
    {"positioning", "positioning", kAnyRobot, nullptr},
    {"range_and_bearing", "range_and_bearing", kAnyRobot, nullptr},
    {"colored_blob_omnidirectional_camera", "colored_blob_omnidirectional_camera", kAnyRobot,
     nullptr},
    // robot.wheels' readings come from the differential_drive actuator in fleetsim.
    {"differential_steering", "", kFootBot | kEPuck, nullptr},
    {"footbot_light", "footbot_light", kFootBot, nullptr},
    {"footbot_motor_ground", "footbot_motor_ground", kFootBot, nullptr},
    {"footbot_base_ground", "footbot_base_ground", kFootBot, nullptr},
    {"eyebot_light", nullptr, 0, "eye-bot light sensor (the foot-bot's is footbot_light)"},
    {"epuck_light", nullptr, 0, "e-puck light sensor (the foot-bot's is footbot_light)"},
    {"light", nullptr, 0, "generic light sensor (the foot-bot's is footbot_light)"},
    {"epuck_ground", nullptr, 0,
     "e-puck ground sensor (the foot-bot's are footbot_motor_ground and footbot_base_ground)"},
    {"ground", nullptr, 0,
     "generic ground sensor (the foot-bot's are footbot_motor_ground and footbot_base_ground)"},
    {"colored_blob_perspective_camera", nullptr, 0, "perspective camera"},
    {"battery", nullptr, 0, "battery model"},
    {"footbot_turret_encoder", "footbot_turret_encoder", kFootBot, nullptr},
    {"footbot_distance_scanner", "footbot_distance_scanner", kFootBot, nullptr},
    {"eyebot_proximity", nullptr, 0, "eye-bot proximity sensor"},
};
constexpr PartMapping kActuators[] = {
    {"differential_steering", "differential_drive", kFootBot | kEPuck, nullptr},
    {"leds", "leds", kAnyRobot, nullptr},
    {"range_and_bearing", "range_and_bearing", kAnyRobot, nullptr},
    {"quadrotor_speed", "quadrotor_speed", kEyeBot, nullptr},
    {"quadrotor_position", nullptr, 0,
     "position-controlled quadrotor (its eye-bot has quadrotor_speed: steer towards the target "
     "with robot.quadrotor.set_linear_velocity)"},
    {"footbot_gripper", "footbot_gripper", kFootBot, nullptr},
    {"footbot_turret", "footbot_turret", kFootBot, nullptr},
    {"footbot_distance_scanner", "footbot_distance_scanner", kFootBot, nullptr},
};

/// ARGoS's device noise attributes (uniform ranges "a:b", standard deviations, levels).
constexpr const char* kNoiseAttributes[] = {
    "noise_level",        "noise_std_dev",      "packet_drop_prob",  "noise_range",
    "pos_noise_range",    "angle_noise_range",  "axis_noise_range",  "dist_noise_range",
    "vel_noise_range",    "bias_avg",           "bias_avg_left",     "bias_avg_right",
    "bias_stddev",        "bias_stddev_left",   "bias_stddev_right", "factor_stddev",
    "factor_stddev_left", "factor_stddev_right"};

/// Where a body sits, for the overlap checks of <distribute>: a circle, or an oriented box.
struct Footprint {
  double x = 0, y = 0;
  double r = 0;      ///< bounding radius
  bool box = false;  ///< an oriented box: half extents hx, hy, angle a
  double hx = 0, hy = 0, a = 0;
  bool fixed = false;  ///< an immovable obstacle: it may stick out of the arena, as in ARGoS
};

/// The corners of an oriented box.
std::array<std::array<double, 2>, 4> corners(const Footprint& b) {
  const double ca = std::cos(b.a), sa = std::sin(b.a);
  std::array<std::array<double, 2>, 4> c;
  const double sx[4] = {-1, 1, 1, -1}, sy[4] = {-1, -1, 1, 1};
  for (int k = 0; k < 4; ++k) {
    const double lx = sx[k] * b.hx, ly = sy[k] * b.hy;
    c[k] = {b.x + ca * lx - sa * ly, b.y + sa * lx + ca * ly};
  }
  return c;
}

/// Two oriented boxes overlap unless one of their four edge directions separates them.
bool boxes_overlap(const Footprint& p, const Footprint& q) {
  const auto cp = corners(p), cq = corners(q);
  for (double a : {p.a, p.a + kPiHere / 2, q.a, q.a + kPiHere / 2}) {
    const double ux = std::cos(a), uy = std::sin(a);
    double p0 = 1e300, p1 = -1e300, q0 = 1e300, q1 = -1e300;
    for (int k = 0; k < 4; ++k) {
      const double dp = cp[k][0] * ux + cp[k][1] * uy, dq = cq[k][0] * ux + cq[k][1] * uy;
      p0 = std::min(p0, dp);
      p1 = std::max(p1, dp);
      q0 = std::min(q0, dq);
      q1 = std::max(q1, dq);
    }
    if (p1 + kPlacementGap <= q0 || q1 + kPlacementGap <= p0) return false;
  }
  return true;
}

bool overlaps(const Footprint& p, const Footprint& q) {
  const double dx = q.x - p.x, dy = q.y - p.y;
  if (std::hypot(dx, dy) >= p.r + q.r + kPlacementGap) return false;
  if (p.box && q.box) return boxes_overlap(p, q);
  if (!p.box && !q.box) return true;
  const Footprint& b = p.box ? p : q;
  const Footprint& c = p.box ? q : p;
  // The circle's centre in the box's frame, then the nearest point of the box.
  const double ca = std::cos(b.a), sa = std::sin(b.a);
  const double lx = ca * (c.x - b.x) + sa * (c.y - b.y);
  const double ly = -sa * (c.x - b.x) + ca * (c.y - b.y);
  const double nx = std::clamp(lx, -b.hx, b.hx), ny = std::clamp(ly, -b.hy, b.hy);
  return std::hypot(lx - nx, ly - ny) < c.r + kPlacementGap;
}

/// The bodies placed so far, for <distribute>'s overlap test: small ones (robots, most
/// objects) in a hash grid of half-metre cells, so that placing n robots costs about n tests
/// and not n^2; large ones (walls) in a list that every test reads.
class PlacedBodies {
 public:
  void add(const Footprint& f) {
    if (f.r > kSmall) {
      large_.push_back(f);
      return;
    }
    cells_[key(cell(f.x), cell(f.y))].push_back(f);
  }
  bool touches(const Footprint& f) const {
    for (const Footprint& o : large_)
      if (overlaps(f, o)) return true;
    // Small bodies whose centre is within f.r + kSmall (+ the gap) of f's.
    const double reach = f.r + kSmall + kPlacementGap;
    const std::int64_t x0 = cell(f.x - reach), x1 = cell(f.x + reach);
    const std::int64_t y0 = cell(f.y - reach), y1 = cell(f.y + reach);
    if ((x1 - x0 + 1) * (y1 - y0 + 1) > static_cast<std::int64_t>(4 * cells_.size() + 16)) {
      for (const auto& [k, bodies] : cells_)  // a huge body: every cell is nearer
        for (const Footprint& o : bodies)
          if (overlaps(f, o)) return true;
      return false;
    }
    for (std::int64_t cy = y0; cy <= y1; ++cy)
      for (std::int64_t cx = x0; cx <= x1; ++cx) {
        auto it = cells_.find(key(cx, cy));
        if (it == cells_.end()) continue;
        for (const Footprint& o : it->second)
          if (overlaps(f, o)) return true;
      }
    return false;
  }

 private:
  static constexpr double kCell = 0.5;    ///< metres
  static constexpr double kSmall = 0.25;  ///< bodies up to this radius go in the grid
  static std::int64_t cell(double v) {
    return static_cast<std::int64_t>(std::floor(std::clamp(v, -1e9, 1e9) / kCell));
  }
  static std::int64_t key(std::int64_t cx, std::int64_t cy) { return cx * 4'000'000'007LL + cy; }
  std::vector<Footprint> large_;
  std::map<std::int64_t, std::vector<Footprint>> cells_;
};

/// A <position> or <orientation> method of <distribute>, drawing 3-vectors.
struct Generator {
  enum class Method { kConstant, kUniform, kGaussian, kGrid } method = Method::kConstant;
  Vec3 a{}, b{};  ///< values | min, max | mean, std_dev | center, distances
  std::array<long long, 3> layout{1, 1, 1};
  long long placed = 0;
  bool ok = false;
};

class ArgosReader {
 public:
  ArgosReader(const XmlFile& in, Diagnostics& d, std::optional<std::int64_t> max_tries,
              std::optional<std::uint64_t> seed)
      : in_(in), d_(d), max_tries_(max_tries), seed_override_(seed) {}

  std::unique_ptr<XmlFile> read() {
    out_ = XmlFile::derived(in_.path());
    XmlElement root(in_, in_.root(), d_);
    root.finish();
    root.check_children({"framework", "controllers", "loop_functions", "arena", "physics_engines",
                         "media", "visualization"});
    fleetsim_ = out_->document().append_child("fleetsim");
    out_->set_line(fleetsim_, root.where().line);
    root.check_at_most_one(
        {"framework", "controllers", "loop_functions", "arena", "physics_engines", "media"});
    auto first = [&](const char* n) { return root.first_child(n); };
    if (auto e = first("framework"))
      read_framework(*e);
    else
      root.error(
          "missing <framework> (expected <framework><experiment ticks_per_second=\"10\"/>"
          "</framework>)");
    if (auto e = first("controllers")) read_controllers(*e);
    if (auto e = first("loop_functions")) read_loop_functions(*e);
    if (auto e = first("media")) read_media(*e);
    if (auto e = first("physics_engines"))
      read_physics(*e);
    else
      root.error(
          "missing <physics_engines> (expected one, e.g. <physics_engines><dynamics2d "
          "id=\"dyn2d\"/></physics_engines>)");
    // Kinds go before the arena in fleetsim's format, but are made as the arena's robots
    // name them: the node is placed first and filled later.
    kinds_ = fleetsim_.append_child("kinds");
    out_->set_line(kinds_, root.where().line);
    if (auto e = first("arena"))
      read_arena(*e);
    else
      root.error("missing <arena> (expected <arena size=\"W,H,Z\">)");
    if (!floor_seen_)
      for (int line : ground_lines_)
        d_.error({in_.path(), line},
                 "a ground sensor needs a <floor> in the <arena> (ARGoS refuses to start "
                 "without one; expected <floor id=\"f\" source=\"image\" path=\"floor.png\"/>)");
    for (auto& v : root.children("visualization"))
      v.warning(
          "<visualization> is ignored: fleetsim runs without a window; `fleetsim run FILE "
          "--log L` then `fleetsim view L` replays the run");
    if (d_.has_errors()) return nullptr;
    return std::move(out_);
  }

 private:
  // ---------------------------------------------------------------- output helpers
  pugi::xml_node add(pugi::xml_node parent, const char* name, int line) {
    return out_->add_element(parent, name, line);
  }
  void set(pugi::xml_node n, const char* attr, const std::string& value, int line) {
    out_->add_attribute(n, attr, value, line);
  }
  static int line_of(const XmlElement& e, const char* attr) { return e.where(attr).line; }

  // ---------------------------------------------------------------- <framework>
  void read_framework(XmlElement& e) {
    e.finish();
    e.check_children({"experiment", "system", "profiling"});
    pugi::xml_node f = add(fleetsim_, "framework", e.where().line);
    for (const char* once : {"experiment", "system"}) {
      auto v = e.children(once);
      for (std::size_t k = 1; k < v.size(); ++k)
        v[k].error(std::string("<") + once + "> appears more than once (expected at most one)");
    }
    auto experiments = e.children("experiment");
    if (experiments.size() > 1) experiments.erase(experiments.begin() + 1, experiments.end());
    if (experiments.empty())
      e.error(
          "missing <experiment> (expected <experiment length=\"60\" ticks_per_second=\"10\" "
          "random_seed=\"1\"/>)");
    for (auto& x : experiments) {
      const std::int64_t tps = x.integer("ticks_per_second", 10, 1, 1'000'000, true);
      const double length = x.real("length", 0, 0, 1e9);
      const std::int64_t seed = x.integer("random_seed", 0, 0, 4294967295LL);
      if (x.boolean("real_time", false))
        x.warning(
            "real_time=\"true\" is not read from the file (expected `fleetsim run FILE "
            "--time-mode realtime`, which paces the run the same way)");
      x.finish();
      x.check_children({});
      set(f, "ticks_per_second", std::to_string(tps), line_of(x, "ticks_per_second"));
      set(f, "length", num(length), line_of(x, "length"));
      set(f, "seed", std::to_string(seed), line_of(x, "random_seed"));
      // `fleetsim run --seed` places the <distribute>d entities too, as ARGoS's seed does.
      seed_ = seed_override_ ? *seed_override_ : static_cast<std::uint64_t>(seed);
    }
    auto systems = e.children("system");
    if (systems.size() > 1) systems.erase(systems.begin() + 1, systems.end());
    for (auto& s : systems) {
      // ARGoS's 0 is "the main thread only"; its scheduling method and thread pinning change
      // nothing in a fleetsim run, whose results never depend on threads.
      const std::int64_t threads = s.integer("threads", 0, 0, 1024);
      s.choice("method", {"balance_quantity", "balance_length"}, "balance_quantity");
      s.boolean("pin_threads_to_cores", false);
      s.finish();
      s.check_children({});
      set(f, "threads", std::to_string(std::max<std::int64_t>(1, threads)), line_of(s, "threads"));
    }
    for (auto& p : e.children("profiling"))
      p.error(
          "<profiling> is not supported (expected no <profiling>; `fleetsim run --json` "
          "reports the run's wall time, and bench/ measures the phases)");
  }

  // ---------------------------------------------------------------- <controllers>
  struct LuaPart {
    const PartMapping* map;
    std::string argos;
    int line;
    std::string noise_level;  ///< carried over to the parts that model ARGoS's noise
  };
  struct LuaController {
    std::string id;
    int line = 0;
    std::vector<LuaPart> sensors, actuators;
  };

  void read_controllers(XmlElement& e) {
    e.finish();
    pugi::xml_node cs = add(fleetsim_, "controllers", e.where().line);
    for (auto& c : e.children()) {
      const std::string id = c.node().attribute("id").as_string();
      if (std::string(c.name()) != "lua_controller") {
        // A controller written in C++ against ARGoS's API: <footbot_diffusion_controller
        // id="fdc" library="build/controllers/...">.
        std::string message = "<";  // (appended: GCC 12 warns wrongly about "<" + name)
        message.append(c.name()).append("> is an ARGoS C++ controller: ").append(kCppPlugins);
        c.error(message);
        refused_controllers_.insert(id);
        continue;
      }
      LuaController lc;
      lc.id = c.text("id", "", true);
      lc.line = c.where().line;
      if (c.has("library")) {
        c.error(std::string("library= on <lua_controller> loads ARGoS C++ code: ") + kCppPlugins);
        c.accept("library");
      }
      c.finish();
      c.check_children({"actuators", "sensors", "params"});
      for (auto& a : c.children("actuators")) read_parts(a, kActuators, lc.actuators);
      for (auto& s : c.children("sensors")) read_parts(s, kSensors, lc.sensors);
      std::string script;
      for (auto& p : c.children("params")) script = read_params(p);
      if (c.children("params").empty())
        c.error("<lua_controller id=\"" + lc.id +
                "\"> has no <params script=\"...\"/> (expected the Lua script's path)");
      if (lc.id.empty()) continue;
      if (controllers_.count(lc.id) || refused_controllers_.count(lc.id)) {
        c.error("controller id '" + lc.id + "' is declared twice (expected unique ids)");
        continue;
      }
      pugi::xml_node x = add(cs, "controller", lc.line);
      set(x, "id", lc.id, line_of(c, "id"));
      set(x, "type", "lua", lc.line);
      if (!script.empty()) set(x, "script", script, script_line_);
      controllers_.emplace(lc.id, std::move(lc));
    }
  }

  void read_parts(XmlElement& list, const auto& table, std::vector<LuaPart>& out) {
    list.finish();
    std::vector<std::string> names;
    for (const PartMapping& m : table) names.push_back(m.argos);
    const bool sensors = &table[0] == &kSensors[0];
    for (auto& p : list.children()) {
      const std::string n = p.name();
      const PartMapping* map = nullptr;
      for (const PartMapping& m : table)
        if (n == m.argos) map = &m;
      if (!map) {
        p.error(std::string("unknown ARGoS ") + (sensors ? "sensor" : "actuator") + " <" + n +
                "> (expected one of: " + join(names) + ")" + did_you_mean(n, names));
        continue;
      }
      if (map->lacking) {
        p.error(std::string("<") + n + ">: fleetsim has no " + map->lacking +
                " yet (expected it removed from <" + list.name() +
                ">, and the script not to use its table; see docs/argos.md)");
        continue;
      }
      // ARGoS's implementation names; rays and lines of sight are drawn by its GUI only; a
      // medium is where LEDs and messages travel, one per device type in fleetsim.
      p.text("implementation");
      p.boolean("show_rays", false);
      p.text("medium");
      if (sensors && n == "range_and_bearing" && p.has("range")) {
        // Not an attribute of ARGoS's sensor (a robot's reach is its rab_range): ARGoS ignores
        // it, files written for it run the same here.
        p.real("range", 0);
        p.warning(
            "range on the <range_and_bearing> sensor is ignored, as ARGoS ignores it (a "
            "robot's range-and-bearing reach is its rab_range attribute)");
      }
      // ARGoS's noise settings: read, and only "none" (0, or the range "0:0") carries over,
      // but for the parts that draw ARGoS's noise_level from the counter-based generator.
      const std::string part = map->part ? map->part : "";
      const bool models_noise = part == "proximity" || part == "footbot_light" ||
                                part == "footbot_motor_ground" || part == "footbot_base_ground";
      std::string noise_level;
      for (const char* noise : kNoiseAttributes) {
        if (!p.has(noise)) continue;
        if (models_noise && std::string(noise) == "noise_level") {
          const double v = p.real("noise_level", 0, 0, 1);
          if (v > 0) noise_level = num(v);
          continue;
        }
        if (!sensors && n == "differential_steering" && std::string(noise) == "noise_level") {
          // ARGoS's actuator reads no noise_level (its noise is bias_avg, bias_stddev,
          // factor_avg, factor_stddev): files that set one run without noise there, as here.
          p.real("noise_level", 0);
          p.warning(
              "noise_level on the <differential_steering> actuator is ignored, as ARGoS ignores "
              "it (ARGoS's wheel noise is bias_avg, bias_stddev, factor_avg, factor_stddev)");
          continue;
        }
        if (sensors && n == "footbot_distance_scanner" && std::string(noise) == "noise_range") {
          // ARGoS's rot_z_only scanner reads noise_range and never adds it to a reading.
          p.accept(noise);
          p.warning(
              "noise_range on the <footbot_distance_scanner> sensor is ignored, as ARGoS's "
              "rot_z_only scanner reads it and adds no noise");
          continue;
        }
        p.accept(noise);
        const std::string v = p.node().attribute(noise).as_string();
        bool zero = true;
        for (std::size_t start = 0; start <= v.size();) {
          const std::size_t colon = std::min(v.find(':', start), v.size());
          const auto x = parse_real(v.substr(start, colon - start));
          zero = zero && x && *x == 0;
          start = colon + 1;
        }
        if (!zero)
          d_.error(p.where(noise),
                   std::string(noise) + "=\"" + v + "\" on <" + n +
                       "> is not supported (expected 0: fleetsim's noise models differ from "
                       "ARGoS's, so the run would not be the same experiment; see docs/argos.md)");
      }
      p.finish();
      p.check_children({});
      if (sensors && std::string(n).find("ground") != std::string::npos)
        ground_lines_.push_back(p.where().line);
      out.push_back({map, n, p.where().line, noise_level});
    }
  }

  /// <params script="..."/>: the script, found as ARGoS's program finds it (relative to the
  /// directory the simulator was started from), else beside the .argos file.
  std::string read_params(XmlElement& p) {
    std::string written = p.text("script", "");
    script_line_ = line_of(p, "script");
    for (const auto& a : p.node().attributes()) {
      const std::string n = a.name();
      if (n == "script") continue;
      p.accept(a.name());
      d_.error(p.where(a.name()),
               "<params " + n +
                   "=...> is not passed to the script (fleetsim has no robot.params yet; "
                   "expected only script=, with the value written in the script)");
    }
    p.finish();
    p.check_children({});
    if (written.empty()) {
      p.error(
          "<params> has no script= (expected the Lua script's path; fleetsim has no GUI to "
          "load one later)");
      return "";
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path from_cwd = fs::absolute(written, ec).lexically_normal();
    if (fs::is_regular_file(from_cwd, ec)) return from_cwd.string();
    const std::string beside = in_.resolve(written);
    if (fs::is_regular_file(beside, ec))
      return fs::absolute(beside, ec).lexically_normal().string();
    d_.error(p.where("script"), "script '" + written + "' is not a file: not '" +
                                    from_cwd.string() +
                                    "' (ARGoS reads it from the directory it is started from), "
                                    "nor '" +
                                    beside + "' (beside the .argos file)");
    return "";
  }

  // ---------------------------------------------------------------- <loop_functions>, <media>
  void read_loop_functions(XmlElement& e) {
    e.error(std::string("<loop_functions") + (e.has("library") ? " library=...>" : " label=...>") +
            " names ARGoS C++ code: " + kCppPlugins);
  }

  void read_media(XmlElement& e) {
    e.finish();
    for (auto& m : e.children()) {
      const std::string n = m.name();
      if (n == "led" || n == "range_and_bearing") {
        m.text("id", "", true);
        m.text("grid_size");
        m.text("index");
        if (n == "range_and_bearing") rab_occlusions_ = m.boolean("check_occlusions", true);
        m.finish();
        m.check_children({});
        continue;
      }
      std::vector<std::string> known{"led", "range_and_bearing"};
      m.error("medium <" + n + "> is not supported (expected <led> or <range_and_bearing>)" +
              did_you_mean(n, known));
    }
  }

  // ---------------------------------------------------------------- <physics_engines>
  void read_physics(XmlElement& e) {
    e.finish();
    pugi::xml_node ph = add(fleetsim_, "physics", e.where().line);
    for (auto& x : e.children()) {
      const std::string type = x.name();
      if (type != "dynamics2d" && type != "pointmass3d") {
        std::vector<std::string> known{"dynamics2d", "pointmass3d"};
        x.error("physics engine <" + type +
                "> is not supported (expected dynamics2d or pointmass3d; fleetsim also has "
                "kinematics2d, in its own format)" +
                did_you_mean(type, known));
        continue;
      }
      pugi::xml_node en = add(ph, type.c_str(), x.where().line);
      set(en, "id", x.text("id", type, true), line_of(x, "id"));
      // ARGoS's `iterations` are its physics steps per tick, each with as many solver
      // iterations: dynamics2d's sub_steps and velocity_iterations (10 by default in both).
      if (type == "dynamics2d" && x.has("iterations")) {
        const std::string it = std::to_string(x.integer("iterations", 10, 1, 100));
        set(en, "sub_steps", it, line_of(x, "iterations"));
        set(en, "velocity_iterations", it, line_of(x, "iterations"));
      } else {
        x.integer("iterations", 10, 1, 1000);
      }
      if (type == "dynamics2d") {
        x.real("elevation", 0);
        x.real("gripping_rigidity", 0);
      } else {
        x.real("gravity", 9.81);
      }
      x.finish();
      x.check_children({"boundaries", "friction", "spatial_hash"});
      for (auto& f : x.children("friction"))
        f.error(
            "<friction> is not supported (expected no <friction>: fleetsim's dynamics2d "
            "has its own friction model; see docs/argos.md)");
      for (auto& s : x.children("spatial_hash")) {
        s.accept("cell_size");
        s.accept("cell_num");
        s.finish();
      }
      for (auto& b : x.children("boundaries")) read_boundaries(b, en);
    }
  }

  /// ARGoS's region: a prism (a polygon of sides, a bottom and a top height). fleetsim's
  /// regions are boxes of the plane: the polygon must be an axis-aligned rectangle.
  void read_boundaries(XmlElement& b, pugi::xml_node engine) {
    b.finish();
    b.check_children({"top", "bottom", "sides"});
    for (const char* h : {"top", "bottom"})
      for (auto& t : b.children(h)) {
        t.real("height", 0, -1e6, 1e6, true);
        t.finish();
        t.check_children({});
      }
    for (auto& s : b.children("sides")) {
      s.finish();
      s.check_children({"vertex"});
      std::vector<std::array<double, 2>> pts;
      for (auto& v : s.children("vertex")) {
        auto p = v.reals("point", 2, true);
        v.finish();
        v.check_children({});
        if (p.size() == 2) pts.push_back({p[0], p[1]});
      }
      double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
      for (auto& p : pts) {
        x0 = std::min(x0, p[0]);
        y0 = std::min(y0, p[1]);
        x1 = std::max(x1, p[0]);
        y1 = std::max(y1, p[1]);
      }
      bool rectangle = pts.size() == 4;
      for (auto& p : pts)
        rectangle = rectangle && (p[0] == x0 || p[0] == x1) && (p[1] == y0 || p[1] == y1);
      if (!rectangle) {
        s.error(
            "the engine's <sides> are not an axis-aligned rectangle (expected four "
            "<vertex point=\"x,y\"/> at the corners of a box: fleetsim's engine regions "
            "are boxes)");
        continue;
      }
      if (engine.attribute("region")) {
        s.error("the engine's <sides> appear more than once (expected one <boundaries><sides>)");
        continue;
      }
      set(engine, "region", num(x0) + "," + num(y0) + "," + num(x1) + "," + num(y1),
          s.where().line);
    }
  }

  // ---------------------------------------------------------------- <arena>
  void read_arena(XmlElement& e) {
    auto size = e.reals("size", 3, true);
    auto center = e.has("center") ? e.reals("center", 3) : std::vector<double>{0, 0, 0};
    e.text("positional_index");  // ARGoS's spatial index: fleetsim has its own
    e.text("positional_grid_size");
    e.finish();
    e.check_children(
        {"box", "cylinder", "foot-bot", "e-puck", "eye-bot", "distribute", "light", "floor"});
    arena_ = add(fleetsim_, "arena", e.where().line);
    if (size.size() == 3) {
      set(arena_, "size", vec2(size[0], size[1]), line_of(e, "size"));
      arena_lo_ = {center.size() == 3 ? center[0] - size[0] / 2 : 0,
                   center.size() == 3 ? center[1] - size[1] / 2 : 0};
      arena_hi_ = {arena_lo_[0] + size[0], arena_lo_[1] + size[1]};
    }
    if (center.size() == 3) set(arena_, "center", vec2(center[0], center[1]), line_of(e, "center"));
    // ARGoS places every entity written out, then the <distribute> ones.
    for (auto& x : e.children()) {
      const std::string n = x.name();
      if (n == "light")
        light(x, std::nullopt);
      else if (n == "floor")
        floor(x, size);
      else if (n != "distribute" && known_entity(n))
        if (auto f = entity(x, x, std::nullopt)) placed_.add(*f);
    }
    int index = 0;
    for (auto& x : e.children("distribute")) distribute(x, index++);
  }

  static bool known_entity(const std::string& n) {
    if (n == "box" || n == "cylinder") return true;
    for (const ArgosRobot& r : kRobots)
      if (n == r.element) return true;
    return false;
  }

  struct Placed {
    Vec3 position{}, orientation{};  ///< metres; yaw, pitch, roll in degrees
  };

  /// <light id= position="x,y,z" orientation= color= intensity= medium=/>: a static light,
  /// written out or (`at`) placed by a <distribute> (`read`: the first copy reads the element).
  void light(XmlElement& x, std::optional<Placed> at, const std::string& id_override = "",
             bool read = true, int line = 0) {
    if (read) {
      light_id_ = x.text("id", "", true);
      auto pos = at ? std::vector<double>{0, 0, 0} : x.reals("position", 3, true);
      if (pos.size() == 3) light_at_ = {pos[0], pos[1], pos[2]};
      if (!at && x.has("orientation")) x.reals("orientation", 3);
      if (at) x.accept("position");
      if (at) x.accept("orientation");
      light_color_ = x.text("color", "", true);
      light_intensity_ = x.real("intensity", 1, 0, 1e9, true);
      x.text("medium", "", true);  // the LED medium that carries it to cameras (not modelled)
      x.finish();
      x.check_children({});
      if (!light_color_.empty() && !parse_color(light_color_))
        d_.error(x.where("color"), "color=\"" + light_color_ +
                                       "\" is not a colour (expected a name such as yellow, "
                                       "or \"r,g,b\")");
    }
    if (d_.has_errors()) return;
    Vec3 p = at ? at->position : light_at_;
    if (!line) line = x.where().line;
    pugi::xml_node l = add(arena_, "light", line);
    set(l, "id", id_override.empty() ? light_id_ : id_override, line);
    set(l, "position", vec2(p[0], p[1]), line);
    set(l, "height", num(p[2]), line);
    set(l, "color", light_color_, line);
    set(l, "intensity", num(light_intensity_), line);
  }

  /// <floor id= source="image" path=.../>: the image stretched over the arena, as ARGoS maps
  /// it (about the origin, whatever the arena's center).
  void floor(XmlElement& x, const std::vector<double>& arena_size) {
    x.text("id", "", true);
    const std::string source = x.choice("source", {"image", "loop_functions"}, "", true);
    const std::string path = x.text("path", "", source == "image");
    x.accept("pixels_per_meter");  // used by source="loop_functions" only
    x.finish();
    x.check_children({});
    floor_seen_ = true;
    if (source == "loop_functions") {
      x.error(
          "<floor source=\"loop_functions\"> asks ARGoS C++ loop functions for the floor's "
          "colours: " +
          std::string(kCppPlugins) +
          " (expected source=\"image\" with path= a PNG of the floor, e.g. saved from ARGoS's "
          "window or drawn)");
      return;
    }
    if (source != "image" || path.empty() || arena_size.size() != 3) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path from_cwd = fs::absolute(path, ec).lexically_normal();
    std::string found;
    if (fs::is_regular_file(from_cwd, ec))
      found = from_cwd.string();
    else if (fs::is_regular_file(in_.resolve(path), ec))
      found = fs::absolute(in_.resolve(path), ec).lexically_normal().string();
    if (found.empty()) {
      d_.error(x.where("path"), "floor image '" + path + "' is not a file: not '" +
                                    from_cwd.string() +
                                    "' (ARGoS reads it from the directory it is started from), "
                                    "nor '" +
                                    in_.resolve(path) + "' (beside the .argos file)");
      return;
    }
    if (fs::path(found).extension() != ".png" && fs::path(found).extension() != ".PNG") {
      d_.error(x.where("path"), "floor image '" + path +
                                    "' is not a PNG (expected a .png file: fleetsim reads PNG "
                                    "only; convert it, e.g. with `convert in.jpg out.png`)");
      return;
    }
    const int line = x.where().line;
    pugi::xml_node f = add(arena_, "floor", line);
    set(f, "image", found, line_of(x, "path"));
    set(f, "center", "0,0", line);
    set(f, "size", vec2(arena_size[0], arena_size[1]), line);
  }

  /// One entity: read from its own <body>, or (`at`) placed by a <distribute>. Returns its
  /// footprint when it is a body.
  std::optional<Footprint> entity(XmlElement& x, const XmlElement& where, std::optional<Placed> at,
                                  const std::string& id_override = "", bool emit = true) {
    const std::string n = x.name();
    const int line = where.where().line;
    std::string id = x.text("id", "", true);
    if (!id_override.empty()) id = id_override;
    Placed p;
    for (auto& b : x.children("body")) {
      auto pos = b.has("position") ? b.reals("position", 3) : std::vector<double>{0, 0, 0};
      auto ori = b.has("orientation") ? b.reals("orientation", 3) : std::vector<double>{0, 0, 0};
      b.finish();
      b.check_children({});
      if (pos.size() == 3) p.position = {pos[0], pos[1], pos[2]};
      if (ori.size() == 3) p.orientation = {ori[0], ori[1], ori[2]};
    }
    if (at)
      p = *at;
    else if (x.children("body").empty())
      x.error("<" + n +
              "> has no <body> (expected <body position=\"x,y,z\" "
              "orientation=\"yaw,pitch,roll\"/>)");
    if (p.orientation[1] != 0 || p.orientation[2] != 0)
      x.error("<" + n + " id=\"" + id + "\"> is tilted (pitch " + num(p.orientation[1]) +
              ", roll " + num(p.orientation[2]) +
              "; expected orientation=\"yaw,0,0\": fleetsim's bodies stand on the plane)");
    double heading = std::remainder(p.orientation[0], 360.0);
    Footprint fp;
    fp.x = p.position[0];
    fp.y = p.position[1];
    if (n == "box" || n == "cylinder") {
      const bool movable = x.boolean("movable", false);
      fp.fixed = !movable;
      if (!x.has("movable"))
        x.error("<" + n + "> is missing attribute 'movable' (expected true or false)");
      double mass = movable ? x.real("mass", 1, 1e-9, 1e9, true) : x.real("mass", 1);
      std::vector<double> size;
      double radius = 0, height = 0;
      if (n == "box") {
        size = x.reals("size", 3, true);
        if (size.size() == 3) {
          if (!(size[0] > 0 && size[1] > 0))
            x.error("box size must be positive (expected \"x,y,z\" in metres)");
          fp.box = true;
          fp.hx = size[0] / 2;
          fp.hy = size[1] / 2;
          fp.a = heading * kPiHere / 180;
          fp.r = std::hypot(fp.hx, fp.hy);
          height = size[2];
        }
      } else {
        radius = x.real("radius", 0.1, 1e-6, 1e6, true);
        height = x.real("height", 0.1, 0, 1e6, true);
        fp.r = radius;
      }
      x.finish();
      x.check_children({"body", "leds"});
      for (auto& l : x.children("leds"))
        l.error("<leds> on a <" + n +
                "> is not supported (expected none: fleetsim's passive "
                "bodies have no LEDs)");
      if (!emit || d_.has_errors()) return fp;
      if (!movable && n == "box" && size.size() == 3) {
        pugi::xml_node b = add(arena_, "box", line);
        set(b, "center", vec2(fp.x, fp.y), line);
        set(b, "size", vec2(size[0], size[1]), line);
        set(b, "angle", num(heading), line);
        set(b, "height", num(height), line);
      } else if (!movable) {
        // An immovable cylinder: a polygon of walls around it.
        for (int k = 0; k < kCylinderSides; ++k) {
          const double a0 = 2 * kPiHere * k / kCylinderSides;
          const double a1 = 2 * kPiHere * (k + 1) / kCylinderSides;
          pugi::xml_node w = add(arena_, "wall", line);
          set(w, "from", vec2(fp.x + radius * std::cos(a0), fp.y + radius * std::sin(a0)), line);
          set(w, "to", vec2(fp.x + radius * std::cos(a1), fp.y + radius * std::sin(a1)), line);
          set(w, "height", num(height), line);
        }
      } else {
        // A movable one: a passive body of a kind of its size.
        const std::string kind = passive_kind(n, size, radius, height, mass, line);
        pugi::xml_node r = add(arena_, "robot", line);
        set(r, "id", id, line);
        set(r, "kind", kind, line);
        set(r, "position", vec2(fp.x, fp.y), line);
        set(r, "heading", num(heading), line);
      }
      return fp;
    }
    // A robot.
    const ArgosRobot* robot = nullptr;
    for (const ArgosRobot& r : kRobots)
      if (n == r.element) robot = &r;
    if (!robot) return std::nullopt;
    const double rab_range = x.real("rab_range", robot->rab_range_m, 0, 1e6);
    const std::int64_t rab_size = x.integer("rab_data_size", robot->rab_data_size, 1, 4096);
    for (const char* unsupported :
         {"omnidirectional_camera_aperture", "perspective_camera_front",
          "perspective_camera_aperture", "perspective_camera_focal_length",
          "perspective_camera_range", "camera_front", "camera_aperture", "camera_focal_length",
          "camera_range"})
      if (x.has(unsupported)) {
        x.accept(unsupported);
        d_.error(x.where(unsupported), std::string("attribute '") + unsupported +
                                           "' is not supported (expected none: fleetsim's "
                                           "cameras are set by their range; see docs/argos.md)");
      }
    x.finish();
    x.check_children({"body", "controller", "battery"});
    for (auto& b : x.children("battery"))
      b.error("<battery> is not supported (expected none: fleetsim has no battery model yet)");
    std::string config;
    for (auto& c : x.children("controller")) {
      config = c.text("config", "", true);
      c.finish();
      c.check_children({});
    }
    if (x.children("controller").empty())
      x.error("<" + n +
              "> has no <controller config=\"...\"/> (expected the id of a "
              "<lua_controller>)");
    for (const Kind& k : all_kinds())
      if (k.name == robot->kind) fp.r = k.radius;
    if (p.position[2] != 0 && robot->bit == kEyeBot)
      x.warning("eye-bot '" + id + "' starts on the ground, not at z = " + num(p.position[2]) +
                " (fleetsim's flyers take off from z = 0; see docs/argos.md)");
    if (!emit || config.empty() || refused_controllers_.count(config)) return fp;
    auto c = controllers_.find(config);
    if (c == controllers_.end()) {
      if (!unknown_configs_.insert(config).second) return fp;  // once, not once per copy
      std::vector<std::string> ids;
      for (const auto& [cid, _] : controllers_) ids.push_back(cid);
      x.error("unknown controller config '" + config +
              "' (expected the id of a "
              "<lua_controller>: " +
              join(ids) + ")" + did_you_mean(config, ids));
      return fp;
    }
    const std::string kind = robot_kind(*robot, c->second, rab_range, rab_size);
    if (kind.empty()) return fp;
    pugi::xml_node r = add(arena_, "robot", line);
    set(r, "id", id, line);
    set(r, "kind", kind, line);
    set(r, "controller", config, line);
    set(r, "position", vec2(fp.x, fp.y), line);
    set(r, "heading", num(heading), line);
    return fp;
  }

  // ---------------------------------------------------------------- <distribute>
  void distribute(XmlElement& e, int index) {
    e.finish();
    e.check_children({"position", "orientation", "entity"});
    auto positions = e.children("position");
    auto orientations = e.children("orientation");
    auto entities = e.children("entity");
    for (auto [list, name] :
         {std::pair{&positions, "position"}, {&orientations, "orientation"}, {&entities, "entity"}})
      if (list->empty())
        e.error(std::string("<distribute> has no <") + name +
                "> (expected <position>, "
                "<orientation> and <entity>)");
    if (positions.empty() || orientations.empty() || entities.empty()) return;
    Generator pos = generator(positions[0]);
    Generator ori = generator(orientations[0]);
    XmlElement& en = entities[0];
    const std::int64_t quantity = en.integer("quantity", 0, 0, 10'000'000, true);
    const std::int64_t trials = en.integer("max_trials", 0, 0, 1'000'000'000, true);
    const std::int64_t base_num = en.integer("base_num", 0, 0);
    en.finish();
    auto kids = en.children();
    if (kids.empty()) {
      en.error("<entity> names no entity to distribute (expected e.g. <foot-bot id=\"fb\">)");
      return;
    }
    for (std::size_t k = 1; k < kids.size(); ++k)
      kids[k].error(
          "<entity> distributes its first child only (ARGoS ignores the others; "
          "expected one <distribute> per entity type)");
    XmlElement& what = kids[0];
    const std::string type = what.name();
    std::vector<std::string> types{"foot-bot", "e-puck", "eye-bot", "box", "cylinder", "light"};
    if (std::find(types.begin(), types.end(), type) == types.end()) {
      what.error("cannot distribute <" + type + "> (expected one of: " + join(types) + ")" +
                 did_you_mean(type, types));
      return;
    }
    if (!pos.ok || !ori.ok) return;
    const std::string base = what.node().attribute("id").as_string();
    if (type == "light") {  // no body: placed where drawn, without tries
      CounterRng rng(seed_, static_cast<EntityId>(index), 0, RandomStream::kPlacement);
      for (std::int64_t i = 0; i < quantity; ++i) {
        auto p = draw(pos, rng, false, positions[0]);
        auto o = draw(ori, rng, false, orientations[0]);
        if (!p || !o) return;
        light(what, Placed{*p, *o}, base + std::to_string(i + base_num), i == 0, e.where().line);
      }
      return;
    }
    // The first entity's errors (a missing attribute) once, not once per copy.
    const std::size_t errors_before = d_.items().size();
    auto footprint = entity(what, what, Placed{}, base + std::to_string(base_num), false);
    if (d_.items().size() != errors_before || !footprint) return;
    CounterRng rng(seed_, static_cast<EntityId>(index), 0, RandomStream::kPlacement);
    for (std::int64_t i = 0; i < quantity; ++i) {
      const std::string id = base + std::to_string(i + base_num);
      bool retry = false;
      for (std::int64_t trial = 0;; ++trial) {
        if (max_tries_ && ++tries_ > *max_tries_) {
          en.error("placing the entities takes more than " + std::to_string(*max_tries_) +
                   " tries in all, this check's limit (expected fewer entities)");
          return;
        }
        auto p = draw(pos, rng, retry, positions[0]);
        auto o = draw(ori, rng, retry, orientations[0]);
        if (!p || !o) return;
        Footprint f = *footprint;
        f.x = (*p)[0];
        f.y = (*p)[1];
        if (f.box) f.a = std::remainder((*o)[0], 360.0) * kPiHere / 180;
        if (fits(f)) {
          entity(what, e, Placed{*p, *o}, id);
          break;
        }
        retry = true;
        if (trial + 1 > trials) {
          en.error("could not place " + type + " '" + id + "' after " + std::to_string(trials) +
                   " tries (placed " + std::to_string(i) + " of " + std::to_string(quantity) +
                   "; expected fewer entities, a larger area or a higher max_trials)");
          return;
        }
      }
    }
  }

  /// True when a body at `f` lies inside the arena and touches nothing placed before; then it
  /// is recorded.
  bool fits(const Footprint& f) {
    if (!f.fixed && (f.x - f.r < arena_lo_[0] || f.x + f.r > arena_hi_[0] ||
                     f.y - f.r < arena_lo_[1] || f.y + f.r > arena_hi_[1]))
      return false;
    if (placed_.touches(f)) return false;
    placed_.add(f);
    return true;
  }

  Generator generator(XmlElement& g) {
    Generator out;
    const std::string m = g.choice("method", {"uniform", "gaussian", "constant", "grid"}, "", true);
    auto v3 = [&](const char* attr) {
      auto v = g.reals(attr, 3, true);
      return v.size() == 3 ? std::optional<Vec3>(Vec3{v[0], v[1], v[2]}) : std::nullopt;
    };
    std::optional<Vec3> a, b;
    if (m == "uniform") {
      out.method = Generator::Method::kUniform;
      a = v3("min");
      b = v3("max");
      if (a && b && !((*a)[0] <= (*b)[0] && (*a)[1] <= (*b)[1] && (*a)[2] <= (*b)[2]))
        g.error("min is not less than or equal to max (expected min <= max in each of x, y, z)");
    } else if (m == "gaussian") {
      out.method = Generator::Method::kGaussian;
      a = v3("mean");
      b = v3("std_dev");
    } else if (m == "constant") {
      out.method = Generator::Method::kConstant;
      a = v3("values");
      b = Vec3{};
    } else if (m == "grid") {
      out.method = Generator::Method::kGrid;
      a = v3("center");
      b = v3("distances");
      auto l = g.reals("layout", 3, true);
      if (l.size() == 3) {
        for (int k = 0; k < 3; ++k)
          out.layout[k] = static_cast<long long>(std::clamp(l[k], 0.0, 1e7));
        if (l[0] < 1 || l[1] < 1 || l[2] < 1 || l[0] > 1e7 || l[1] > 1e7 || l[2] > 1e7 ||
            l[0] != std::floor(l[0]) || l[1] != std::floor(l[1]) || l[2] != std::floor(l[2]))
          g.error(
              "layout must be three whole numbers from 1 to 10000000 (expected e.g. \"5,4,1\")");
      } else {
        b.reset();
      }
    }
    g.finish();
    g.check_children({});
    if (a && b) {
      out.a = *a;
      out.b = *b;
      out.ok = !m.empty();
    }
    return out;
  }

  std::optional<Vec3> draw(Generator& g, CounterRng& rng, bool retry, XmlElement& where) {
    Vec3 v{};
    switch (g.method) {
      case Generator::Method::kConstant:
        return g.a;
      case Generator::Method::kUniform:
        for (int k = 0; k < 3; ++k) v[k] = g.b[k] > g.a[k] ? rng.uniform(g.a[k], g.b[k]) : g.b[k];
        return v;
      case Generator::Method::kGaussian:
        for (int k = 0; k < 3; ++k) v[k] = g.a[k] + g.b[k] * rng.normal();
        return v;
      case Generator::Method::kGrid: {
        if (retry) {
          where.error("method \"grid\" cannot place entity #" + std::to_string(g.placed) +
                      ": its place is taken (expected grid places free of other bodies)");
          return std::nullopt;
        }
        const long long n = g.placed;
        const double places = static_cast<double>(g.layout[0]) * static_cast<double>(g.layout[1]) *
                              static_cast<double>(g.layout[2]);
        if (static_cast<double>(n) >= places) {
          where.error("method \"grid\" has " + num(places) +
                      " places and the <entity> quantity is more (expected quantity <= the "
                      "product of layout)");
          return std::nullopt;
        }
        // As ARGoS fills it: x first, from +x to -x, then y, then z, about the centre.
        const long long ix = n % g.layout[0];
        const long long iy = (n / g.layout[0]) % g.layout[1];
        const long long iz = n / (g.layout[0] * g.layout[1]);
        const long long idx[3] = {ix, iy, iz};
        for (int k = 0; k < 3; ++k)
          v[k] = g.a[k] + static_cast<double>(g.layout[k] - 1) * g.b[k] * 0.5 -
                 static_cast<double>(idx[k]) * g.b[k];
        ++g.placed;
        return v;
      }
    }
    return std::nullopt;
  }

  // ---------------------------------------------------------------- kinds
  struct Kind {
    std::string name;
    double radius;
  };
  static std::vector<Kind> all_kinds() {
    std::vector<Kind> v;
    for (const RobotKind& k : builtin_kinds()) v.push_back({k.name, k.radius_m});
    return v;
  }

  /// A passive kind of this size and mass (one per distinct size).
  std::string passive_kind(const std::string& shape, const std::vector<double>& size, double radius,
                           double height, double mass, int line) {
    const std::string key = shape + "|" +
                            (size.size() == 3 ? vec2(size[0], size[1]) : num(radius)) + "|" +
                            num(height) + "|" + num(mass);
    auto it = kind_names_.find(key);
    if (it != kind_names_.end()) return it->second;
    const std::string name = "argos_" + shape + std::to_string(kind_names_.size());
    pugi::xml_node k = add(kinds_, "kind", line);
    set(k, "name", name, line);
    set(k, "base", shape, line);
    if (shape == "box")
      set(k, "size", vec2(size[0], size[1]), line);
    else
      set(k, "radius", num(radius), line);
    set(k, "height", num(height), line);
    set(k, "mass", num(mass), line);
    kind_names_.emplace(key, name);
    return name;
  }

  /// The kind of a robot of type `robot` driven by `c`: the built-in body with the parts the
  /// controller lists (as ARGoS gives a controller the devices it names). "" when a part does
  /// not fit the robot (reported).
  std::string robot_kind(const ArgosRobot& robot, const LuaController& c, double rab_range,
                         std::int64_t rab_size) {
    const std::string key = std::string(robot.kind) + "|" + c.id + "|" + num(rab_range) + "|" +
                            std::to_string(rab_size);
    auto it = kind_names_.find(key);
    if (it != kind_names_.end()) return it->second;
    const RobotKind* base = nullptr;
    static const std::vector<RobotKind> builtins = builtin_kinds();
    for (const RobotKind& k : builtins)
      if (k.name == robot.kind) base = &k;
    bool fit = true;
    for (const auto* parts : {&c.sensors, &c.actuators})
      for (const LuaPart& p : *parts)
        if ((p.map->robots & robot.bit) == 0) {
          d_.error({in_.path(), p.line},
                   "<" + p.argos + "> does not fit the " + robot.element + " (controller '" + c.id +
                       "' drives one; expected the " + robot.element + "'s own devices)");
          fit = false;
        }
    if (!fit) {
      kind_names_.emplace(key, "");
      return "";
    }
    std::string name = std::string(robot.kind) + "_" + c.id;
    for (int n = 2; used_kind_names_.count(name); ++n)
      name = std::string(robot.kind) + "_" + c.id + "_" + std::to_string(n);
    used_kind_names_.insert(name);
    pugi::xml_node k = add(kinds_, "kind", c.line);
    set(k, "name", name, c.line);
    set(k, "base", robot.kind, c.line);
    auto emit = [&](const LuaPart& p, const char* element, const std::vector<PartDecl>& own) {
      if (!*p.map->part) return;
      pugi::xml_node x = add(k, element, p.line);
      set(x, "type", p.map->part, p.line);
      if (!p.noise_level.empty()) set(x, "noise_level", p.noise_level, p.line);
      const std::string type = p.map->part;
      // The base kind's parameters for the part, when it has it (rays, axle, LED count).
      for (const PartDecl& d : own)
        if (d.type == type)
          for (const auto& [param, value] : d.params.values())
            if (param != "range" || type != "range_and_bearing")
              set(x, param.c_str(), value, p.line);
      if (type == "range_and_bearing") {
        if (std::string(element) == "sensor") {
          x.remove_attribute("data_size");
          set(x, "range", num(rab_range), p.line);
          // The medium's check_occlusions: walls and other robots' bodies block messages.
          for (const char* flag : {"blocked_by_obstacles", "blocked_by_bodies"}) {
            x.remove_attribute(flag);
            set(x, flag, rab_occlusions_ ? "true" : "false", p.line);
          }
        }
        x.remove_attribute("data_size");
        set(x, "data_size", std::to_string(rab_size), p.line);
      }
    };
    for (const LuaPart& p : c.sensors) emit(p, "sensor", base->sensors);
    for (const LuaPart& p : c.actuators) emit(p, "actuator", base->actuators);
    kind_names_.emplace(key, name);
    return name;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "none" : s;
  }

  const XmlFile& in_;
  Diagnostics& d_;
  std::unique_ptr<XmlFile> out_;
  pugi::xml_node fleetsim_, kinds_, arena_;
  std::map<std::string, LuaController> controllers_;
  std::set<std::string> refused_controllers_;  ///< C++ controllers: their robots say nothing
  std::set<std::string> unknown_configs_;      ///< reported already
  int script_line_ = 0;
  std::vector<int> ground_lines_;  ///< ground sensors listed by the controllers
  bool floor_seen_ = false;
  std::string light_id_, light_color_;  ///< the <light> a <distribute> copies
  Vec3 light_at_{};
  double light_intensity_ = 1;
  bool rab_occlusions_ = true;  ///< ARGoS's range_and_bearing medium checks them by default
  std::uint64_t seed_ = 0;
  std::array<double, 2> arena_lo_{}, arena_hi_{};
  std::optional<std::int64_t> max_tries_;       ///< ExperimentOverrides::max_placement_tries
  std::optional<std::uint64_t> seed_override_;  ///< ExperimentOverrides::seed
  std::int64_t tries_ = 0;
  PlacedBodies placed_;  ///< bodies placed by <distribute>, and those written out
  std::map<std::string, std::string> kind_names_;  ///< by body and parts
  std::set<std::string> used_kind_names_;
};

}  // namespace

bool is_argos_configuration(const XmlFile& file) {
  return std::string(file.root().name()) == "argos-configuration";
}

std::unique_ptr<XmlFile> read_argos_experiment(const XmlFile& argos, Diagnostics& diags,
                                               std::optional<std::int64_t> max_placement_tries,
                                               std::optional<std::uint64_t> seed) {
  return ArgosReader(argos, diags, max_placement_tries, seed).read();
}

}  // namespace fleetsim
