#include "ros2/ros2_inputs.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/simulation.hpp"

namespace fleetsim::ros2 {

namespace {

template <class T>
bool parse(const std::string& s, T& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::string format_velocity_input(const VelocityInput& i) {
  return fmt::format("{} {} {} {}", i.tick, i.robot, i.linear_x, i.angular_z);
}

std::string format_announced_input(EntityId id, const VelocityInput& i) {
  return fmt::format("ros2-cmd_vel {} {}", id, format_velocity_input(i));
}

bool is_announced_input(const std::string& line) {
  return line.rfind("ros2-cmd_vel ", 0) == 0;
}

bool parse_announced_input(const std::string& line, EntityId& id, VelocityInput& out) {
  std::istringstream words(line);
  std::vector<std::string> w;
  for (std::string s; words >> s;) w.push_back(s);
  if (w.size() != 6 || w[0] != "ros2-cmd_vel" || !parse(w[1], id) || !parse(w[2], out.tick) ||
      !parse(w[4], out.linear_x) || !parse(w[5], out.angular_z) || !std::isfinite(out.linear_x) ||
      !std::isfinite(out.angular_z))
    return false;
  out.robot = w[3];
  return true;
}

std::optional<std::vector<VelocityInput>> load_velocity_inputs(const std::string& path,
                                                               Diagnostics& diags) {
  std::ifstream in(path);
  if (!in) {
    diags.error({path, 0}, "cannot read the ROS 2 inputs file");
    return std::nullopt;
  }
  std::vector<VelocityInput> out;
  bool bad = false;
  Tick last = 0;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (const auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    const SourceLocation at{path, line};
    VelocityInput i;
    i.line = line;
    if (w.size() != 4 || !parse(w[0], i.tick) || i.tick < 0 || !parse(w[2], i.linear_x) ||
        !parse(w[3], i.angular_z) || !std::isfinite(i.linear_x) || !std::isfinite(i.angular_z)) {
      diags.error(at,
                  "malformed input (expected: TICK ROBOT LINEAR_X ANGULAR_Z, a tick >= 0, a "
                  "robot id and two finite numbers)");
      bad = true;
      continue;
    }
    i.robot = w[1];
    if (i.tick < last) {
      diags.error(at, fmt::format("tick {} comes after tick {} (expected ticks in increasing "
                                  "order)",
                                  i.tick, last));
      bad = true;
      continue;
    }
    last = i.tick;
    out.push_back(std::move(i));
  }
  if (bad) return std::nullopt;
  return out;
}

const VelocityDriver::Drive& VelocityDriver::drive_of(std::uint16_t kind) {
  auto it = drives_.find(kind);
  if (it != drives_.end()) return it->second;
  Drive d;
  for (const auto& a : sim_.model().kinds[kind].actuators)
    if (a.type == "differential_drive") {
      d.wheels = sim_.state().robots.find(a.name);
      d.axle_m = a.params.real("axle_length", 0.053);
    }
  return drives_.emplace(kind, d).first->second;
}

std::uint32_t VelocityDriver::row_of(const std::string& robot) {
  const auto& names = sim_.state().robot_name();
  if (rows_for_ != names.size()) {
    rows_.clear();
    for (std::size_t row = 0; row < names.size(); ++row)
      rows_[std::string(names[row])] = static_cast<std::uint32_t>(row);
    rows_for_ = names.size();
  }
  auto it = rows_.find(robot);
  return it == rows_.end() ? kNoIndex : it->second;
}

bool VelocityDriver::take(const VelocityInput& input) {
  const std::uint32_t row = row_of(input.robot);
  if (row == kNoIndex) return false;
  commanded_[sim_.state().robot_id()[row]] = {input.linear_x, input.angular_z};
  return true;
}

void VelocityDriver::take(EntityId id, double linear_x, double angular_z) {
  commanded_[id] = {linear_x, angular_z};
}

void VelocityDriver::apply() {
  const int here = sim_.distribution().process;
  const bool several = sim_.distribution().processes > 1;
  for (const auto& [id, s] : commanded_) {
    const std::uint32_t row = sim_.state().robot_index(id);
    if (row == kNoIndex) continue;  // (removed by the loop functions, or held elsewhere)
    // (Several processes: written where the robot's controller runs, as a controller would.)
    if (several && sim_.controller_process(id) != here) continue;
    const Drive& d = drive_of(sim_.state().robot_kind()[row]);
    if (d.wheels != kNoColumn) {
      const double wheels[2] = {s.linear - s.angular * d.axle_m / 2,
                                s.linear + s.angular * d.axle_m / 2};
      sim_.set_command(row, d.wheels, wheels);
    } else {
      const double v[1] = {s.linear}, w[1] = {s.angular};
      sim_.set_command(row, body::kSpeedCmd, v);
      sim_.set_command(row, body::kTurnCmd, w);
    }
  }
}

void InputReplay::before_step(Simulation& sim) {
  if (!driver_) driver_.emplace(sim);
  const Tick now = sim.state().tick;
  for (; next_ < inputs_.size() && inputs_[next_].tick <= now; ++next_) {
    // (An input before `now`, on a run resumed from a checkpoint, still sets the speed the
    // robot has kept since.)
    const VelocityInput& i = inputs_[next_];
    if (!driver_->take(i))
      throw RunError(
          fmt::format("{}:{}: tick {}: the run has no robot '{}'", path_, i.line, i.tick, i.robot));
  }
  driver_->apply();
}

}  // namespace fleetsim::ros2
