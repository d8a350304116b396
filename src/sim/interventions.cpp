#include "sim/interventions.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/named_colors.hpp"
#include "robots/body_parts.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

std::string format_intervention(const Intervention& i) {
  // {} is the shortest text that reads back as the same double: the replay's pose is the
  // session's, bit for bit.
  switch (i.kind) {
    case Intervention::Kind::kReset:
      return fmt::format("{} reset", i.tick);
    case Intervention::Kind::kAdd:
      return fmt::format("{} add {} {} {} {} {}", i.tick, i.robot_kind, i.controller, i.x, i.y,
                         i.heading);
    case Intervention::Kind::kRemove:
      return fmt::format("{} remove {}", i.tick, i.robot);
    case Intervention::Kind::kLeds:
      return fmt::format("{} leds {} {},{},{},{}", i.tick, i.robot, i.color.r, i.color.g, i.color.b,
                         i.color.a);
    case Intervention::Kind::kCommand:
      return fmt::format("{} command {} {} {}", i.tick, i.robot, i.actuator,
                         fmt::join(i.values, ","));
    case Intervention::Kind::kRelease:
      return fmt::format("{} release {} {}", i.tick, i.robot, i.actuator);
    case Intervention::Kind::kParam:
      return fmt::format("{} param {} {} {}", i.tick, i.robot, i.name, i.value.json());
    case Intervention::Kind::kMove:
      break;
  }
  return fmt::format("{} move {} {} {} {}", i.tick, i.robot, i.x, i.y, i.heading);
}

namespace {

template <class T>
bool parse_number(const std::string& word, T& out) {
  auto r = std::from_chars(word.data(), word.data() + word.size(), out);
  return r.ec == std::errc() && r.ptr == word.data() + word.size();
}

/// Where a `#` comment starts in `text` (not inside a double-quoted string), or npos.
std::size_t comment_start(const std::string& text) {
  bool quoted = false;
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (quoted && text[k] == '\\') {
      ++k;
    } else if (text[k] == '"') {
      quoted = !quoted;
    } else if (!quoted && text[k] == '#') {
      return k;
    }
  }
  return std::string::npos;
}

/// `text` after its first `n` words and the blanks after them, without trailing blanks.
std::string after_words(const std::string& text, int n) {
  std::size_t k = 0;
  for (int w = 0; w < n; ++w) {
    k = text.find_first_not_of(" \t\r", k);
    k = text.find_first_of(" \t\r", k == std::string::npos ? text.size() : k);
    if (k == std::string::npos) return "";
  }
  k = text.find_first_not_of(" \t\r", k);
  if (k == std::string::npos) return "";
  const std::size_t end = text.find_last_not_of(" \t\r");
  return text.substr(k, end + 1 - k);
}

/// "0.1,-0.1" as numbers; false if any is not a finite number.
bool parse_values(const std::string& list, std::vector<double>& out) {
  out.clear();
  std::size_t k = 0;
  for (;;) {
    const std::size_t comma = list.find(',', k);
    const std::string word = list.substr(k, comma == std::string::npos ? comma : comma - k);
    double v = 0;
    if (!parse_number(word, v) || !std::isfinite(v)) return false;
    out.push_back(v);
    if (comma == std::string::npos) return true;
    k = comma + 1;
  }
}

}  // namespace

std::optional<std::vector<Intervention>> load_interventions(const std::string& path,
                                                            Diagnostics& diags) {
  std::ifstream in(path);
  if (!in) {
    diags.error({path, 0}, "cannot read the interventions file");
    return std::nullopt;
  }
  return read_interventions(in, path, diags);
}

std::optional<std::vector<Intervention>> read_interventions(std::istream& in,
                                                            const std::string& path,
                                                            Diagnostics& diags) {
  std::vector<Intervention> out;
  std::string text;
  int line = 0;
  Tick last = 0;
  while (std::getline(in, text)) {
    ++line;
    if (const auto hash = comment_start(text); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    const SourceLocation at{path, line};
    static const char* kExpected =
        "expected: TICK move ROBOT_ID X Y HEADING, TICK add KIND CONTROLLER X Y HEADING, TICK "
        "remove ROBOT_ID, TICK leds ROBOT_ID R,G,B,A, TICK command ROBOT_ID ACTUATOR V1,V2,..., "
        "TICK release ROBOT_ID ACTUATOR, TICK param ROBOT_ID NAME VALUE or TICK reset";
    Intervention i;
    i.line = line;
    std::int64_t tick = -1;
    const std::string what = w.size() > 1 ? w[1] : w[0];
    std::size_t words_wanted = 0;
    if (what == "move") {
      i.kind = Intervention::Kind::kMove;
      words_wanted = 6;
    } else if (what == "add") {
      i.kind = Intervention::Kind::kAdd;
      words_wanted = 7;
    } else if (what == "remove") {
      i.kind = Intervention::Kind::kRemove;
      words_wanted = 3;
    } else if (what == "leds") {
      i.kind = Intervention::Kind::kLeds;
      words_wanted = 4;
    } else if (what == "reset") {
      i.kind = Intervention::Kind::kReset;
      words_wanted = 2;
    } else if (what == "command") {
      i.kind = Intervention::Kind::kCommand;
      words_wanted = 5;
    } else if (what == "release") {
      i.kind = Intervention::Kind::kRelease;
      words_wanted = 4;
    } else if (what == "param") {
      // The value (JSON: a number, true, false or a string in double quotes) may hold blanks.
      i.kind = Intervention::Kind::kParam;
      words_wanted = w.size() >= 5 ? w.size() : 5;
    } else {
      diags.error(at, "'" + what + "' is not an intervention (" + kExpected + ")");
      continue;
    }
    bool ok = w.size() == words_wanted && parse_number(w[0], tick) && tick >= 0;
    if (ok && i.kind == Intervention::Kind::kMove)
      ok = parse_number(w[2], i.robot) && parse_number(w[3], i.x) && parse_number(w[4], i.y) &&
           parse_number(w[5], i.heading);
    if (ok && i.kind == Intervention::Kind::kAdd) {
      i.robot_kind = w[2];
      i.controller = w[3];
      ok = parse_number(w[4], i.x) && parse_number(w[5], i.y) && parse_number(w[6], i.heading);
    }
    if (ok && i.kind == Intervention::Kind::kRemove) ok = parse_number(w[2], i.robot);
    if (ok && i.kind == Intervention::Kind::kLeds) {
      const auto color = parse_color(w[3]);
      ok = parse_number(w[2], i.robot) && color.has_value();
      if (ok) i.color = *color;
    }
    if (ok && (i.kind == Intervention::Kind::kCommand || i.kind == Intervention::Kind::kRelease)) {
      i.actuator = w[3];
      ok = parse_number(w[2], i.robot) &&
           (i.kind == Intervention::Kind::kRelease || parse_values(w[4], i.values));
    }
    if (ok && i.kind == Intervention::Kind::kParam) {
      i.name = w[3];
      ok = parse_number(w[2], i.robot) && ScriptValue::parse(after_words(text, 4), i.value);
    }
    ok = ok && std::isfinite(i.x) && std::isfinite(i.y) && std::isfinite(i.heading);
    if (!ok) {
      diags.error(at, "malformed " + what + " (" + kExpected +
                          "; a tick >= 0, robot ids and finite numbers)");
      continue;
    }
    i.tick = tick;
    if (i.tick < last) {
      diags.error(at, "tick " + std::to_string(i.tick) + " comes after tick " +
                          std::to_string(last) + " (expected ticks in increasing order)");
      continue;
    }
    // After a reset the world is back at tick 0.
    last = i.kind == Intervention::Kind::kReset ? 0 : i.tick;
    out.push_back(i);
  }
  if (diags.has_errors()) return std::nullopt;
  return out;
}

namespace {

/// Distance from `p` to segment `s`.
double distance_to(const Segment& s, Vec2 p) {
  const double dx = s.b.x - s.a.x, dy = s.b.y - s.a.y;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - s.a.x) * dx + (p.y - s.a.y) * dy) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(p.x - (s.a.x + t * dx), p.y - (s.a.y + t * dy));
}

/// Why a robot of kind `k` cannot stand at `p` ("" when it can): outside the arena, over an
/// obstacle or a wall, or overlapping another robot (but the one in row `except`). Flyers
/// collide with nothing (pointmass3d) and ground robots do not meet them.
std::string placement_problem(const Simulation& sim, std::uint16_t k, Vec2 p,
                              std::uint32_t except) {
  const WorldModel& m = sim.model();
  const WorldState& s = sim.state();
  const Vec2 lo = m.arena_min(), hi = m.arena_max();
  if (p.x < lo.x || p.x > hi.x || p.y < lo.y || p.y > hi.y)
    return fmt::format("({}, {}) is outside the arena (x {} .. {}, y {} .. {})", p.x, p.y, lo.x,
                       hi.x, lo.y, hi.y);
  const RobotKind& kind = m.kinds[k];
  if (kind.flies) return "";
  const double r = kind.radius_m;
  if (m.inside_obstacle(p)) return fmt::format("({}, {}) is inside an obstacle", p.x, p.y);
  for (const Segment& w : m.segments)
    if (distance_to(w, p) < r)
      return fmt::format("at ({}, {}) it would overlap a wall or obstacle", p.x, p.y);
  const auto kinds = s.robot_kind();
  for (std::uint32_t j = 0; j < s.robot_count(); ++j) {
    if (j == except || m.kinds[kinds[j]].flies) continue;
    const double d = std::hypot(s.x()[j] - p.x, s.y()[j] - p.y);
    if (d < r + m.kinds[kinds[j]].radius_m)
      return fmt::format("at ({}, {}) it would overlap robot '{}' (id {})", p.x, p.y,
                         s.robot_name()[j], s.robot_id()[j]);
  }
  return "";
}

}  // namespace

ColumnHandle command_column(const Simulation& sim, std::uint16_t kind, const std::string& actuator,
                            std::string& why) {
  const RobotKind& k = sim.model().kinds[kind];
  const ColumnStore& robots = sim.state().robots;
  std::string names;
  ColumnHandle found = kNoColumn;
  for (const auto& a : k.actuators) {
    // A flyer's speed actuator writes the engine's column; the others their own.
    const ColumnHandle c =
        robots.find(a.type == "quadrotor_speed" || a.interface == "quadrotor_speed"
                        ? std::string("velocity_cmd")
                        : a.name);
    if (c == kNoColumn || robots.desc(c).type != ColumnType::kF64) continue;
    names += (names.empty() ? "" : ", ") + a.name;
    if (a.name == actuator) found = c;
  }
  if (found == kNoColumn)
    why = fmt::format("robot kind '{}' has no actuator '{}' with a numeric command ({})", k.name,
                      actuator, names.empty() ? std::string("it has none") : "its: " + names);
  return found;
}

std::string intervention_problem(const Simulation& sim, const Intervention& i) {
  const WorldState& s = sim.state();
  const WorldModel& m = sim.model();
  if (sim.distribution().processes > 1 &&
      (!sim.distribution().interventions || sim.sends_border_robots_only()))
    return "on several processes this run gives each process only the robots near its domain, "
           "so not every process holds every robot as it is: run it with --view-steer to "
           "intervene (docs/view-format.md)";
  switch (i.kind) {
    case Intervention::Kind::kReset:
      return sim.reset_problem();
    case Intervention::Kind::kRemove:
      return s.robot_index(i.robot) == kNoIndex
                 ? "there is no robot with id " + std::to_string(i.robot)
                 : "";
    case Intervention::Kind::kLeds: {
      const std::uint32_t row = s.robot_index(i.robot);
      if (row == kNoIndex) return "there is no robot with id " + std::to_string(i.robot);
      const RobotKind& kind = m.kinds[s.robot_kind()[row]];
      if (led_count(kind) == 0 ||
          s.robots.find(std::string(kViewerLedColumn) + "_cmd") == kNoColumn)
        return "robot " + std::to_string(i.robot) + "'s kind '" + kind.name + "' has no LEDs";
      return "";
    }
    case Intervention::Kind::kCommand:
    case Intervention::Kind::kRelease: {
      const std::uint32_t row = s.robot_index(i.robot);
      if (row == kNoIndex) return "there is no robot with id " + std::to_string(i.robot);
      std::string why;
      const ColumnHandle c = command_column(sim, s.robot_kind()[row], i.actuator, why);
      if (c == kNoColumn) return why;
      if (i.kind == Intervention::Kind::kRelease)
        return sim.held_commands().count({i.robot, c})
                   ? ""
                   : fmt::format("robot {}'s '{}' is not held (nothing to release)", i.robot,
                                 i.actuator);
      const std::size_t width = s.robots.desc(c).width;
      if (i.values.size() != width)
        return fmt::format("actuator '{}' takes {} value{} ({}), not {}", i.actuator, width,
                           width == 1 ? "" : "s", s.robots.desc(c).doc, i.values.size());
      for (double v : i.values)
        if (!std::isfinite(v)) return "a command value that is not a finite number";
      return "";
    }
    case Intervention::Kind::kParam: {
      if (s.robot_index(i.robot) == kNoIndex)
        return "there is no robot with id " + std::to_string(i.robot);
      if (i.value.type == ScriptValue::Type::kNumber && !std::isfinite(i.value.number))
        return "a value that is not a finite number";
      // On several processes only the process running the robot's controller holds its
      // script: it checks the rest when it lands it (land_intervention).
      if (sim.distribution().processes > 1 &&
          sim.controller_process(i.robot) != sim.distribution().process)
        return "";
      auto* globals = dynamic_cast<ScriptGlobals*>(sim.controller_between_steps(i.robot));
      if (!globals)
        return fmt::format(
            "robot {}'s controller has no parameters to change (only a Lua controller's script "
            "globals can be set)",
            i.robot);
      for (const auto& [name, now] : globals->script_globals()) {
        if (name != i.name) continue;
        if (!now.same_kind(i.value))
          return fmt::format(
              "global '{}' of robot {}'s script is a {}, not a {}", name, i.robot,
              now.type == ScriptValue::Type::kInteger ? "number" : now.type_name(),
              i.value.type == ScriptValue::Type::kInteger ? "number" : i.value.type_name());
        return "";
      }
      std::string names;
      for (const auto& [name, now] : globals->script_globals())
        names += (names.empty() ? "" : ", ") + name;
      return fmt::format(
          "robot {}'s script has no global '{}' that is a number, a string or a boolean ({})",
          i.robot, i.name, names.empty() ? std::string("it has none") : "its: " + names);
    }
    case Intervention::Kind::kAdd: {
      if (!std::isfinite(i.x) || !std::isfinite(i.y) || !std::isfinite(i.heading))
        return "a position or heading that is not a finite number";
      int k = -1;
      std::string kinds, controllers;
      for (std::size_t n = 0; n < m.kinds.size(); ++n) {
        if (!m.kinds[n].in_run) continue;
        if (m.kinds[n].name == i.robot_kind) k = static_cast<int>(n);
        kinds += (kinds.empty() ? "" : ", ") + m.kinds[n].name;
      }
      if (k < 0)
        return "no robot kind '" + i.robot_kind + "' in this run (its kinds: " + kinds + ")";
      bool controller = false;
      for (const ControllerDecl& c : m.controllers) {
        controller = controller || c.id == i.controller;
        controllers += (controllers.empty() ? "" : ", ") + c.id;
      }
      if (!controller)
        return "no controller '" + i.controller + "' in this run (its controllers: " + controllers +
               ")";
      return placement_problem(sim, static_cast<std::uint16_t>(k), {i.x, i.y}, kNoIndex);
    }
    case Intervention::Kind::kMove:
      break;
  }
  if (!std::isfinite(i.x) || !std::isfinite(i.y) || !std::isfinite(i.heading))
    return "a position or heading that is not a finite number";
  const std::uint32_t row = s.robot_index(i.robot);
  if (row == kNoIndex) return "there is no robot with id " + std::to_string(i.robot);
  return placement_problem(sim, s.robot_kind()[row], {i.x, i.y}, row);
}

void apply_intervention(Simulation& sim, const Intervention& i) {
  if (std::string why = intervention_problem(sim, i); !why.empty())
    throw RunError("tick " + std::to_string(sim.state().tick) + ": " + describe(i) + ": " + why);
  switch (i.kind) {
    case Intervention::Kind::kReset:
      sim.reset();
      return;
    case Intervention::Kind::kAdd:
      sim.add_robot_between_steps(i.robot_kind, i.controller, {i.x, i.y}, i.heading);
      return;
    case Intervention::Kind::kRemove:
      sim.remove_robot_between_steps(i.robot);
      return;
    case Intervention::Kind::kLeds: {
      // The visible colours and the command, as if the controller had set them: what others
      // see now, and what the actuator shows again unless the controller sets others.
      WorldState& s = sim.state_between_steps();
      const std::uint32_t row = s.robot_index(i.robot);
      const std::size_t count = led_count(sim.model().kinds[s.robot_kind()[row]]);
      for (const std::string& name :
           {std::string(kViewerLedColumn), std::string(kViewerLedColumn) + "_cmd"}) {
        const ColumnHandle c = s.robots.find(name);
        const std::size_t width = s.robots.desc(c).width;
        Color* leds = static_cast<Color*>(s.robots.data(c)) + row * width;
        std::fill(leds, leds + std::min(count, width), i.color);
      }
      return;
    }
    case Intervention::Kind::kCommand:
    case Intervention::Kind::kRelease: {
      const WorldState& s = sim.state();
      std::string why;
      const ColumnHandle c =
          command_column(sim, s.robot_kind()[s.robot_index(i.robot)], i.actuator, why);
      if (i.kind == Intervention::Kind::kRelease)
        sim.release_command(i.robot, c);
      else
        sim.hold_command(i.robot, c, i.values);
      return;
    }
    case Intervention::Kind::kParam: {
      auto* globals = dynamic_cast<ScriptGlobals*>(sim.controller_between_steps(i.robot));
      if (!globals)  // (another process runs its controller: land_intervention)
        throw RunError(describe(i) + ": this process does not run its controller");
      if (std::string why = globals->set_script_global(i.name, i.value); !why.empty())
        throw RunError(why);
      return;
    }
    case Intervention::Kind::kMove:
      break;
  }
  double z = 0;
  const WorldState& s = sim.state();
  if (const ColumnHandle zc = s.robots.find("z"); zc != kNoColumn)
    z = static_cast<const double*>(s.robots.data(zc))[s.robot_index(i.robot)];
  sim.place_robot(i.robot, {i.x, i.y}, i.heading, z);
}

std::string land_intervention(Simulation& sim, const Intervention& i) {
  // A script's global is set by the process running the robot's controller alone (the others
  // hold no instance of it); that process alone says what became of it.
  if (i.kind == Intervention::Kind::kParam && sim.distribution().processes > 1 &&
      sim.state().robot_index(i.robot) != kNoIndex &&
      sim.controller_process(i.robot) != sim.distribution().process)
    return "";
  if (std::string why = intervention_problem(sim, i); !why.empty()) return why;
  apply_intervention(sim, i);
  return "";
}

std::string describe(const Intervention& i) {
  switch (i.kind) {
    case Intervention::Kind::kReset:
      return "reset";
    case Intervention::Kind::kAdd:
      return "add a robot of kind '" + i.robot_kind + "'";
    case Intervention::Kind::kRemove:
      return "remove robot " + std::to_string(i.robot);
    case Intervention::Kind::kLeds:
      return "set the LEDs of robot " + std::to_string(i.robot);
    case Intervention::Kind::kCommand:
      return "command robot " + std::to_string(i.robot) + "'s '" + i.actuator + "'";
    case Intervention::Kind::kRelease:
      return "release robot " + std::to_string(i.robot) + "'s '" + i.actuator + "'";
    case Intervention::Kind::kParam:
      return "set global '" + i.name + "' of robot " + std::to_string(i.robot) + "'s script";
    case Intervention::Kind::kMove:
      break;
  }
  return "move robot " + std::to_string(i.robot);
}

}  // namespace fleetsim
