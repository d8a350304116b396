// What an environment for learning (Python's fleetsim.Env, docs/python.md) observes, commands
// and rewards, as the experiment's <learning> element declares it (docs/experiment-format.md),
// and the engine's side of the reward terms' interface (fleetsim/reward.hpp).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"
#include "fleetsim/plugin.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// One <reward> of <learning>: a reward term and its weight.
struct RewardDecl {
  std::string type;
  double weight = 1;
  Params params;
  SourceLocation where;
};

/// <learning>: each part is set when the file declares it.
struct LearningSpec {
  SourceLocation where;
  std::optional<std::vector<std::string>> observations;  ///< robot columns, per agent
  std::optional<std::vector<std::string>> actions;       ///< command columns, per agent
  std::optional<std::vector<RewardDecl>> rewards;
};

/// A column a program outside the run may write for `external` robots: an actuator's, or the
/// body's commands (`speed_cmd`, `turn_cmd`, any `*_cmd`).
bool is_command_column(const PluginRegistry& registry, const ColumnDesc& column);

/// Why `name` cannot be an observation (a robot column of numbers), or "".
std::string observation_column_problem(const ColumnStore& robots, const std::string& name);
/// Why `name` cannot be an action (an f64 command column), or "".
std::string action_column_problem(const PluginRegistry& registry, const ColumnStore& robots,
                                  const std::string& name);

/// The rows of the robots whose controller is `external`, in row order: the agents.
std::vector<std::uint32_t> agent_rows(const WorldModel& model, const WorldState& state);

/// RewardSetup over a world's robot columns and its agents.
class StateRewardSetup final : public RewardSetup {
 public:
  StateRewardSetup(const ColumnStore& robots, std::span<const std::uint32_t> agents)
      : robots_(&robots), agents_(agents) {}
  ColumnHandle find_column(const std::string& name) const override { return robots_->find(name); }
  const ColumnDesc& column(ColumnHandle c) const override { return robots_->desc(c); }
  std::span<const std::uint32_t> agents() const override { return agents_; }

 private:
  const ColumnStore* robots_;
  std::span<const std::uint32_t> agents_;
};

/// RewardWorld over a world's state.
class StateRewardWorld final : public RewardWorld {
 public:
  StateRewardWorld(const WorldModel& model, const WorldState& state)
      : model_(&model), state_(&state) {}
  std::size_t robot_count() const override { return state_->robot_count(); }
  EntityId robot_id(std::uint32_t row) const override { return state_->robot_id()[row]; }
  Vec2 robot_position(std::uint32_t row) const override {
    return {state_->x()[row], state_->y()[row]};
  }
  double robot_heading(std::uint32_t row) const override { return state_->theta()[row]; }
  const void* column_data(ColumnHandle c) const override { return state_->robots.data(c); }
  std::uint32_t column_width(ColumnHandle c) const override { return state_->robots.desc(c).width; }
  Tick tick() const override { return state_->tick; }
  double tick_s() const override { return static_cast<double>(model_->tick_period_ns) / 1e9; }

 private:
  const WorldModel* model_;
  const WorldState* state_;
};

/// Makes reward term `type` and calls its init(params); throws SetupError (the term's own,
/// or an unknown type).
std::unique_ptr<Reward> make_reward(const PluginRegistry& registry, const std::string& type,
                                    const Params& params, const RewardSetup& setup);

}  // namespace fleetsim
