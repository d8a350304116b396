// Migration between region engines over random multi-engine scenes and thousands of ticks: no
// robot is lost or duplicated, no two robots of one engine ever overlap, each robot belongs
// to the engine owning its position after every physics phase (or waits in its engine while it
// overlaps a robot of the new one), and it keeps its id, its controller's state and its tag.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fleetsim/random.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/sanitizers.hpp"

namespace fleetsim::testing {
namespace {

/// Drives at random and checks, every tick, that its own state followed it: the number of
/// steps it ran equals the tick, its id is the robot's, and the tag it set is still there.
class MigrationProbe : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    id_ = setup.robot();
    wheels_ = setup.actuator("differential_drive");
  }
  void step(RobotIO& io) override {
    if (io.id != id_)
      throw std::runtime_error("controller of robot " + std::to_string(id_) + " was given robot " +
                               std::to_string(io.id));
    if (steps_ != io.tick)
      throw std::runtime_error("controller state lost: " + std::to_string(steps_) +
                               " steps at tick " + std::to_string(io.tick));
    const std::string mine = "probe" + std::to_string(id_);
    if (io.tick == 0)
      io.set_tag(mine);
    else if (*io.tag != mine)
      throw std::runtime_error("tag lost: '" + *io.tag + "'");
    ++steps_;
    // Mostly forward, sometimes turning: robots cross region borders often.
    if (turning_ > 0 || io.rng.uniform() < 0.05) {
      if (turning_ == 0) turning_ = 1 + static_cast<int>(io.rng.below(8));
      --turning_;
      io.actuator(wheels_).values[0] = -0.13;
      io.actuator(wheels_).values[1] = 0.13;
    } else {
      io.actuator(wheels_).values[0] = io.actuator(wheels_).values[1] = 0.13;
    }
  }

 private:
  EntityId id_ = kNoEntity;
  std::size_t wheels_ = 0;
  Tick steps_ = 0;
  int turning_ = 0;
};

/// An arena of `size` m cut into columns x rows engines at random positions, with `robots`
/// robots distributed at random.
std::string scene_xml(std::uint64_t seed, int columns, int rows, int robots, double size) {
  CounterRng rng(seed, 0, 0, RandomStream::kPlacement);
  auto cuts = [&](int parts) {
    std::vector<double> c{-size / 2};
    for (int k = 1; k < parts; ++k)
      c.push_back(-size / 2 + size * (k + rng.uniform(-0.3, 0.3)) / parts);
    c.push_back(size / 2);
    return c;
  };
  auto xs = cuts(columns), ys = cuts(rows);
  auto num = [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  };
  std::string x = "<fleetsim><framework ticks_per_second=\"10\" seed=\"" + std::to_string(seed) +
                  "\"/><controllers><controller id=\"p\" type=\"migration_probe\"/></controllers>"
                  "<arena size=\"" +
                  num(size) + "," + num(size) +
                  "\">"
                  "<wall from=\"-0.5,-0.3\" to=\"0.4,0.6\"/>"
                  "<distribute count=\"" +
                  std::to_string(robots) + "\" controller=\"p\"/></arena><physics>";
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c)
      x += "<kinematics2d id=\"e" + std::to_string(r * columns + c) + "\" region=\"" + num(xs[c]) +
           "," + num(ys[r]) + "," + num(xs[c + 1]) + "," + num(ys[r + 1]) + "\"/>";
  return x + "</physics></fleetsim>";
}

struct Outcome {
  std::uint64_t hash = 0;
  long migrations = 0;
  long deferred = 0;  ///< robot-ticks spent waiting outside their region
};

Outcome run_scene(std::uint64_t seed, int threads, Tick ticks) {
  PluginRegistry registry;
  register_builtins(registry);
  registry.add_controller({PluginKind::kController, "migration_probe", "test", {}},
                          [] { return std::make_unique<MigrationProbe>(); });
  Diagnostics diags;
  ExperimentOverrides ov;
  ov.threads = threads;
  const int columns = 2 + static_cast<int>(seed % 3), rows = 2 + static_cast<int>(seed % 2);
  auto ex = parse_experiment(scene_xml(seed, columns, rows, 400, 3.0), "migration.xml", registry,
                             ov, diags);
  EXPECT_TRUE(ex) << diags.str();
  if (!ex) return {};
  Simulation sim(std::move(*ex), registry);
  const WorldModel& model = sim.model();
  const auto id_span = sim.state().robot_id();
  const std::vector<EntityId> ids(id_span.begin(), id_span.end());
  const double r = model.kinds[0].radius_m;
  Outcome out;
  std::vector<std::uint8_t> engine_before;
  sim.on_phase = [&](Phase p, const WorldState& s) {
    if (p == Phase::kAct) {  // just before physics
      engine_before.assign(s.robot_engine().begin(), s.robot_engine().end());
      return;
    }
    if (p != Phase::kPhysics) return;
    // Nobody lost or duplicated; ids unchanged and in order.
    ASSERT_EQ(std::vector<EntityId>(s.robot_id().begin(), s.robot_id().end()), ids);
    const std::size_t n = s.robot_count();
    std::vector<int> region(n);
    for (std::size_t i = 0; i < n; ++i) {
      region[i] = model.engine_at({s.x()[i], s.y()[i]}, s.robot_kind()[i]);
      if (s.robot_engine()[i] != engine_before[i]) ++out.migrations;
    }
    auto overlap = [&](std::size_t i, std::size_t j) {
      double dx = s.x()[i] - s.x()[j], dy = s.y()[i] - s.y()[j];
      return dx * dx + dy * dy < 4 * r * r;
    };
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        if (s.robot_engine()[i] != s.robot_engine()[j]) continue;
        ASSERT_FALSE(overlap(i, j)) << "robots " << i << " and " << j << " overlap in engine "
                                    << int(s.robot_engine()[i]) << " at tick " << s.tick;
      }
      if (s.robot_engine()[i] == region[i]) continue;
      // Outside its region: only while it overlaps a robot that was in, or is entering, the
      // engine of its new position.
      ++out.deferred;
      bool blocked = false;
      for (std::size_t j = 0; j < n && !blocked; ++j)
        blocked =
            j != i && (engine_before[j] == region[i] || region[j] == region[i]) && overlap(i, j);
      ASSERT_TRUE(blocked) << "robot " << i << " left its region without reason";
    }
  };
  for (Tick t = 0; t < ticks; ++t) sim.step();
  out.hash = sim.state().hash();
  return out;
}

TEST(Migration, RandomMultiEngineScenesKeepEveryRobotWhole) {
  const int seeds = property_cases(3);
  for (std::uint64_t seed = 1; seed <= static_cast<std::uint64_t>(seeds); ++seed) {
    Outcome one = run_scene(seed, 1, 2000);
    if (HasFatalFailure()) return;
    EXPECT_GT(one.migrations, 500) << "seed " << seed << ": robots should cross engines often";
    // Waiting outside the region is the exception (here ~1 % of robot-ticks).
    EXPECT_LT(one.deferred, 400 * 2000 / 20) << "seed " << seed;
    // And the same run with two threads gives the same state.
    Outcome two = run_scene(seed, 2, 2000);
    EXPECT_EQ(one.hash, two.hash) << "seed " << seed;
  }
}

}  // namespace
}  // namespace fleetsim::testing
