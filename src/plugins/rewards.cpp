// The built-in reward terms for learning (fleetsim/reward.hpp, docs/python.md "Rewards").
#include "plugins/rewards.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace fleetsim {
namespace {

/// sqrt(dx² + dy²): correctly rounded and several times faster than std::hypot (whose extra
/// care for overflow no arena needs).
double distance(double dx, double dy) {
  return std::sqrt(dx * dx + dy * dy);
}

/// `target`: minus the distance to a point, metres.
class TargetReward final : public Reward {
 public:
  void init(const Params& params, const RewardSetup&) override {
    const std::string at = params.text("at", "0,0");
    std::istringstream in(at);
    char comma = 0;
    if (!(in >> x_ >> comma >> y_) || comma != ',' || !(in >> std::ws).eof() ||
        !std::isfinite(x_) || !std::isfinite(y_))
      throw SetupError("at=\"" + at + "\" is not a point (expected \"x,y\" in metres)");
  }
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const Vec2 p = world.robot_position(agents[i]);
      values[i] = -distance(p.x - x_, p.y - y_);
    }
  }

 private:
  double x_ = 0, y_ = 0;
};

/// `centroid`: minus the distance to the centroid of the world's agents, metres.
class CentroidReward final : public Reward {
 public:
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    double cx = 0, cy = 0;
    for (auto r : agents) {
      const Vec2 p = world.robot_position(r);
      cx += p.x, cy += p.y;
    }
    cx /= static_cast<double>(agents.size());
    cy /= static_cast<double>(agents.size());
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const Vec2 p = world.robot_position(agents[i]);
      values[i] = -distance(p.x - cx, p.y - cy);
    }
  }
};

/// `collision`: -1 while the robot's `collision` column is set (0 when no robot senses
/// collisions).
class CollisionReward final : public Reward {
 public:
  void init(const Params&, const RewardSetup& setup) override {
    column_ = setup.find_column("collision");
    if (column_ != kNoColumn) type_ = setup.column(column_).type;
  }
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    if (column_ == kNoColumn) return;
    const std::size_t width = world.column_width(column_);
    const void* base = world.column_data(column_);
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const std::size_t at = agents[i] * width;
      bool set = false;
      switch (type_) {
        case ColumnType::kU8:
          set = static_cast<const std::uint8_t*>(base)[at] != 0;
          break;
        case ColumnType::kF32:
          set = static_cast<const float*>(base)[at] != 0;
          break;
        case ColumnType::kF64:
          set = static_cast<const double*>(base)[at] != 0;
          break;
        default:
          set = static_cast<const std::uint32_t*>(base)[at] != 0;
          break;
      }
      if (set) values[i] = -1;
    }
  }

 private:
  ColumnHandle column_ = kNoColumn;
  ColumnType type_ = ColumnType::kU8;
};

/// `neighbours`: +1 per other agent within `radius` metres.
class NeighboursReward final : public Reward {
 public:
  void init(const Params& params, const RewardSetup&) override {
    radius_ = params.real("radius", 0.3);
    if (!(radius_ >= 0) || !std::isfinite(radius_))
      throw SetupError("radius must be a finite number >= 0 (metres)");
  }
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    const double r2 = radius_ * radius_;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const Vec2 a = world.robot_position(agents[i]);
      int n = 0;
      for (std::size_t j = 0; j < agents.size(); ++j) {
        const Vec2 b = world.robot_position(agents[j]);
        const double dx = b.x - a.x, dy = b.y - a.y;
        n += (j != i && dx * dx + dy * dy <= r2) ? 1 : 0;
      }
      values[i] = n;
    }
  }

 private:
  double radius_ = 0.3;
};

}  // namespace

void register_builtin_rewards(PluginRegistry& r) {
  r.add_reward({PluginKind::kReward,
                "target",
                "minus the agent's distance to a point, metres",
                {{"at", "string", "0,0", "the point, \"x,y\" in metres"}}},
               [] { return std::make_unique<TargetReward>(); });
  r.add_reward({PluginKind::kReward,
                "centroid",
                "minus the agent's distance to the centroid of its world's agents, metres",
                {}},
               [] { return std::make_unique<CentroidReward>(); });
  r.add_reward({PluginKind::kReward,
                "collision",
                "-1 while the agent's `collision` column is set (a kind with the collision "
                "sensor)",
                {}},
               [] { return std::make_unique<CollisionReward>(); });
  r.add_reward({PluginKind::kReward,
                "neighbours",
                "+1 per other agent within `radius` metres",
                {{"radius", "real", "0.3", "metres"}}},
               [] { return std::make_unique<NeighboursReward>(); });
}

}  // namespace fleetsim
