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

/// A term that reads the robots' positions: the body's `x` and `y` columns, as arrays (no call
/// per robot, or per pair).
class PositionReward : public Reward {
 public:
  void init(const Params& params, const RewardSetup& setup) override {
    x_ = setup.find_column("x");
    y_ = setup.find_column("y");
    init_term(params);
  }

 protected:
  virtual void init_term(const Params&) {}
  const double* xs(const RewardWorld& world) const { return world.column<double>(x_); }
  const double* ys(const RewardWorld& world) const { return world.column<double>(y_); }

 private:
  ColumnHandle x_ = kNoColumn, y_ = kNoColumn;
};

/// `target`: minus the distance to a point, metres.
class TargetReward final : public PositionReward {
 public:
  void init_term(const Params& params) override {
    const std::string at = params.text("at", "0,0");
    std::istringstream in(at);
    char comma = 0;
    if (!(in >> x_ >> comma >> y_) || comma != ',' || !(in >> std::ws).eof() ||
        !std::isfinite(x_) || !std::isfinite(y_))
      throw SetupError("at=\"" + at + "\" is not a point (expected \"x,y\" in metres)");
  }
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    const double *x = xs(world), *y = ys(world);
    for (std::size_t i = 0; i < agents.size(); ++i)
      values[i] = -distance(x[agents[i]] - x_, y[agents[i]] - y_);
  }

 private:
  double x_ = 0, y_ = 0;
};

/// `centroid`: minus the distance to the centroid of the world's agents, metres.
class CentroidReward final : public PositionReward {
 public:
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    const double *x = xs(world), *y = ys(world);
    double cx = 0, cy = 0;
    for (auto r : agents) cx += x[r], cy += y[r];
    cx /= static_cast<double>(agents.size());
    cy /= static_cast<double>(agents.size());
    for (std::size_t i = 0; i < agents.size(); ++i)
      values[i] = -distance(x[agents[i]] - cx, y[agents[i]] - cy);
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
    switch (type_) {  // (the type once, then a loop per type)
      case ColumnType::kU8:
        return mark(world.column<std::uint8_t>(column_), width, agents, values);
      case ColumnType::kF32:
        return mark(world.column<float>(column_), width, agents, values);
      case ColumnType::kF64:
        return mark(world.column<double>(column_), width, agents, values);
      default:
        return mark(world.column<std::uint32_t>(column_), width, agents, values);
    }
  }

 private:
  template <class T>
  static void mark(const T* v, std::size_t width, std::span<const std::uint32_t> agents,
                   std::span<double> values) {
    for (std::size_t i = 0; i < agents.size(); ++i)
      if (v[agents[i] * width] != 0) values[i] = -1;
  }

  ColumnHandle column_ = kNoColumn;
  ColumnType type_ = ColumnType::kU8;
};

/// `neighbours`: +1 per other agent within `radius` metres.
class NeighboursReward final : public PositionReward {
 public:
  void init_term(const Params& params) override {
    radius_ = params.real("radius", 0.3);
    if (!(radius_ >= 0) || !std::isfinite(radius_))
      throw SetupError("radius must be a finite number >= 0 (metres)");
  }
  void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
               std::span<double> values) override {
    const double *x = xs(world), *y = ys(world);
    const double r2 = radius_ * radius_;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const double ax = x[agents[i]], ay = y[agents[i]];
      int n = 0;
      for (std::size_t j = 0; j < agents.size(); ++j) {
        const double dx = x[agents[j]] - ax, dy = y[agents[j]] - ay;
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
