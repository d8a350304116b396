#include "robots/deeco_wheels.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "robots/engine_world.hpp"

namespace fleetsim {

namespace {

class DeecoWheels final : public BatchedActuator<DeecoWheels> {
 public:
  void setup(PartSetup& setup) override {
    if (setup.kind().engine != "kinematics2d")
      setup.error("actuator '" + setup.name() + "': the DEECo playground's action model needs a " +
                  "kinematics2d body (this kind's engine is '" + setup.kind().engine +
                  "'; expected engine=\"kinematics2d\")");
    constants_[0] = setup.kind().max_speed_m_per_s;
    const std::vector<std::string> extras = deeco_action_extras(setup.params().text("extras", ""));
    if (extras.size() > kMaxDeecoActionExtras)
      setup.error("actuator '" + setup.name() + "': extras names " + std::to_string(extras.size()) +
                  " numbers (at most " + std::to_string(kMaxDeecoActionExtras) + ")");
    command_ = setup.column(
        {setup.name(), ColumnType::kF64, static_cast<std::uint32_t>(2 + extras.size()), true, false,
         "DEECo action command: speed (fraction of max_speed), angle (rad), then the extras",
         "deeco_wheels", false});
    width_ = 2 + extras.size();
    echo_ = setup.column({kDeecoActionColumn, ColumnType::kF64, 3, true, false,
                          "last DEECo action applied: speed fraction, angle (rad), type code",
                          "deeco_wheels", false});
  }
  void describe(ActuatorView& out) const override { out.constants = constants_; }
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    auto* c = static_cast<double*>(engine_world(ctx).state().robots.data(command_));
    out.values = {c + width_ * std::size_t{robot.row}, width_};
    out.constants = constants_;
  }
  // The playground's Action constructor and SimulationEngine.moveRobots' turn: the heading
  // changes here, before the physics, which then moves along it (turn_cmd 0: kinematics2d's
  // mid-tick heading is the new heading itself, bit for bit).
  void act(const PartContext& ctx, RobotRef robot) override {
    WorldState& s = engine_world(ctx).state();
    const std::size_t r = robot.row;
    const double* c = static_cast<const double*>(s.robots.data(command_)) + width_ * r;
    double* echo = static_cast<double*>(s.robots.data(echo_)) + 3 * r;
    // A non-finite command is no action (hot loops never throw).
    const double given_speed = std::isfinite(c[0]) ? c[0] : 0.0;
    const double given_angle = std::isfinite(c[1]) ? c[1] : 0.0;
    const bool moves = given_speed != 0, turns = given_angle != 0;
    const DeecoActionType type = moves && turns ? DeecoActionType::kRotateAndMove
                                 : moves        ? DeecoActionType::kMove
                                 : turns        ? DeecoActionType::kRotate
                                                : DeecoActionType::kStay;
    const double speed = moves ? std::clamp(given_speed, 0.0, 1.0) : 0.0;
    const double angle = turns ? wrap_angle(given_angle) : 0.0;
    if (turns) s.theta()[r] = wrap_angle(s.theta()[r] + angle);
    s.speed_cmd()[r] = speed * constants_[0];
    s.turn_cmd()[r] = 0;
    echo[0] = speed;
    echo[1] = angle;
    echo[2] = static_cast<double>(type);
  }

 private:
  double constants_[1] = {0};  ///< the kind's max_speed, m/s
  std::size_t width_ = 2;      ///< speed, angle, extras
  ColumnHandle command_ = kNoColumn, echo_ = kNoColumn;
};

}  // namespace

std::vector<std::string> deeco_action_extras(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char ch : text + " ") {
    if (ch == ' ' || ch == ',' || ch == '\t' || ch == '\n') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  return out;
}

std::unique_ptr<Actuator> make_deeco_wheels() {
  return std::make_unique<DeecoWheels>();
}

}  // namespace fleetsim
