#include "sim/interventions.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/simulation.hpp"

namespace fleetsim {

std::string format_intervention(const Intervention& i) {
  // {} is the shortest text that reads back as the same double: the replay's pose is the
  // session's, bit for bit.
  if (i.kind == Intervention::Kind::kReset) return fmt::format("{} reset", i.tick);
  return fmt::format("{} move {} {} {} {}", i.tick, i.robot, i.x, i.y, i.heading);
}

namespace {

template <class T>
bool parse_number(const std::string& word, T& out) {
  auto r = std::from_chars(word.data(), word.data() + word.size(), out);
  return r.ec == std::errc() && r.ptr == word.data() + word.size();
}

}  // namespace

std::optional<std::vector<Intervention>> load_interventions(const std::string& path,
                                                            Diagnostics& diags) {
  std::ifstream in(path);
  if (!in) {
    diags.error({path, 0}, "cannot read the interventions file");
    return std::nullopt;
  }
  std::vector<Intervention> out;
  std::string text;
  int line = 0;
  Tick last = 0;
  while (std::getline(in, text)) {
    ++line;
    if (const auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    const SourceLocation at{path, line};
    if (w.size() < 2 || (w[1] != "move" && w[1] != "reset")) {
      diags.error(at, "'" + (w.size() > 1 ? w[1] : w[0]) +
                          "' is not an intervention (expected: TICK move ROBOT_ID X Y HEADING, "
                          "or TICK reset)");
      continue;
    }
    Intervention i;
    i.line = line;
    std::int64_t tick = -1;
    if (w[1] == "reset") {
      if (w.size() != 2 || !parse_number(w[0], tick) || tick < 0) {
        diags.error(at, "malformed reset (expected: TICK reset, a tick >= 0)");
        continue;
      }
      if (tick < last) {
        diags.error(at, "tick " + std::to_string(tick) + " comes after tick " +
                            std::to_string(last) + " (expected ticks in increasing order)");
        continue;
      }
      i.kind = Intervention::Kind::kReset;
      i.tick = tick;
      last = 0;  // the world is back at tick 0
      out.push_back(i);
      continue;
    }
    std::uint32_t robot = 0;
    if (w.size() != 6 || !parse_number(w[0], tick) || tick < 0 || !parse_number(w[2], robot) ||
        !parse_number(w[3], i.x) || !parse_number(w[4], i.y) || !parse_number(w[5], i.heading) ||
        !std::isfinite(i.x) || !std::isfinite(i.y) || !std::isfinite(i.heading)) {
      diags.error(at,
                  "malformed move (expected: TICK move ROBOT_ID X Y HEADING, a tick >= 0, a "
                  "robot id and three finite numbers)");
      continue;
    }
    i.tick = tick;
    i.robot = robot;
    if (i.tick < last) {
      diags.error(at, "tick " + std::to_string(i.tick) + " comes after tick " +
                          std::to_string(last) + " (expected ticks in increasing order)");
      continue;
    }
    last = i.tick;
    out.push_back(i);
  }
  if (diags.has_errors()) return std::nullopt;
  return out;
}

std::string intervention_problem(const Simulation& sim, const Intervention& i) {
  if (i.kind == Intervention::Kind::kReset) return sim.reset_problem();
  if (!std::isfinite(i.x) || !std::isfinite(i.y) || !std::isfinite(i.heading))
    return "a position or heading that is not a finite number";
  if (sim.state().robot_index(i.robot) == kNoIndex)
    return "there is no robot with id " + std::to_string(i.robot);
  const Vec2 lo = sim.model().arena_min(), hi = sim.model().arena_max();
  if (i.x < lo.x || i.x > hi.x || i.y < lo.y || i.y > hi.y)
    return fmt::format("({}, {}) is outside the arena (x {} .. {}, y {} .. {})", i.x, i.y, lo.x,
                       hi.x, lo.y, hi.y);
  return "";
}

void apply_intervention(Simulation& sim, const Intervention& i) {
  if (std::string why = intervention_problem(sim, i); !why.empty())
    throw RunError("tick " + std::to_string(sim.state().tick) +
                   (i.kind == Intervention::Kind::kReset
                        ? std::string(": reset: ")
                        : ": intervention on robot " + std::to_string(i.robot) + ": ") +
                   why);
  if (i.kind == Intervention::Kind::kReset) {
    sim.reset();
    return;
  }
  double z = 0;
  const WorldState& s = sim.state();
  if (const ColumnHandle zc = s.robots.find("z"); zc != kNoColumn)
    z = static_cast<const double*>(s.robots.data(zc))[s.robot_index(i.robot)];
  sim.place_robot(i.robot, {i.x, i.y}, i.heading, z);
}

}  // namespace fleetsim
