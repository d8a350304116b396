#include "scenario/learning.hpp"

#include <fmt/format.h>

#include "core/diagnostics.hpp"

namespace fleetsim {

bool is_command_column(const PluginRegistry& registry, const ColumnDesc& column) {
  return registry.find(PluginKind::kActuator, column.owner) != nullptr ||
         (column.name.size() > 4 && column.name.ends_with("_cmd"));
}

namespace {

std::string no_column(const ColumnStore& robots, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& d : robots.schema()) names.push_back(d.name);
  return "no robot column '" + name +
         "' in this run (its columns: " + fmt::to_string(fmt::join(names, ", ")) + ")" +
         did_you_mean(name, names);
}

}  // namespace

std::string observation_column_problem(const ColumnStore& robots, const std::string& name) {
  const ColumnHandle h = robots.find(name);
  if (h == kNoColumn) return no_column(robots, name);
  if (robots.desc(h).type == ColumnType::kString)
    return "observation column '" + name + "' holds strings (expected a column of numbers)";
  return "";
}

std::string action_column_problem(const PluginRegistry& registry, const ColumnStore& robots,
                                  const std::string& name) {
  const ColumnHandle h = robots.find(name);
  if (h == kNoColumn) return no_column(robots, name);
  const ColumnDesc& d = robots.desc(h);
  if (!is_command_column(registry, d) || d.type != ColumnType::kF64)
    return "action column '" + name +
           "' is not a command column of f64 values (an actuator's, such as "
           "differential_drive, or speed_cmd, turn_cmd; `fleetsim list` shows the columns)";
  return "";
}

std::vector<std::uint32_t> agent_rows(const WorldModel& model, const WorldState& state) {
  std::vector<std::uint32_t> rows;
  for (std::uint32_t r = 0; r < state.robot_count(); ++r)
    if (model.controllers[state.robot_controller()[r]].type == "external") rows.push_back(r);
  return rows;
}

std::unique_ptr<Reward> make_reward(const PluginRegistry& registry, const std::string& type,
                                    const Params& params, const RewardSetup& setup) {
  const RewardFactory* f = registry.reward_factory(type);
  if (!f) {
    const auto names = registry.names(PluginKind::kReward);
    throw SetupError("no reward term '" + type +
                     "' (expected one of: " + fmt::to_string(fmt::join(names, ", ")) +
                     "; plug-in libraries are named in <plugins>)" + did_you_mean(type, names));
  }
  auto term = (*f)();
  term->init(params, setup);
  return term;
}

}  // namespace fleetsim
