// Worlds whose physics regions hold no robot (issue #33, item 1): a file with several regions
// and no robots, regions that every robot leaves, and runs whose robots are all removed. Each
// engine type, alone and with the others, on 1 and 2 threads, steps them without a crash and
// with the same bits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::testing {
namespace {

/// Removes every robot after the physics of tick `at` (parameter, default 2).
class RemoveAll final : public LoopFunctions {
 public:
  void init(const Params& p, WorldAccess&) override { at_ = p.integer("at", 2); }
  void post_step(WorldAccess& w) override {
    if (w.tick() != at_) return;
    for (EntityId id : w.robots()) w.remove_robot(id);
  }

 private:
  Tick at_ = 2;
};

/// Drives straight ahead at the e-puck's full speed.
class Straight final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    wheels_ = setup.actuator("differential_drive");
  }
  void step(RobotIO& io) override {
    io.actuator(wheels_).values[0] = io.actuator(wheels_).values[1] = 0.13;
  }

 private:
  std::size_t wheels_ = 0;
};

struct Result {
  Tick ticks = 0;
  std::size_t robots = 0;
  std::uint64_t hash = 0;
  std::vector<std::string> regions;  ///< each robot's region id at the end
};

/// Runs `xml` for `ticks` ticks on `threads` threads.
Result run(const std::string& xml, int threads, Tick ticks) {
  PluginRegistry registry;
  register_builtins(registry);
  registry.add_loop_functions({PluginKind::kLoopFunctions, "remove_all", "test",
                               {{"at", "integer", "2", "tick"}}},
                              [] { return std::make_unique<RemoveAll>(); });
  registry.add_controller({PluginKind::kController, "straight", "test", {}},
                          [] { return std::make_unique<Straight>(); });
  Diagnostics diags;
  ExperimentOverrides ov;
  ov.threads = threads;
  auto ex = parse_experiment(xml, "empty.xml", registry, ov, diags);
  EXPECT_TRUE(ex) << diags.str();
  if (!ex) return {};
  Simulation sim(std::move(*ex), registry);
  for (Tick t = 0; t < ticks; ++t) sim.step();
  sim.finish();
  Result r{sim.state().tick, sim.state().robot_count(), sim.state().hash(), {}};
  for (std::uint8_t e : sim.state().robot_engine()) r.regions.push_back(sim.model().engines[e].id);
  return r;
}

/// Four regions of `type` tiling a 4 m arena (quadrants), as examples/diffusion has.
std::string quadrants(const std::string& type) {
  return "<" + type + " id=\"sw\" region=\"-2,-2,0,0\"/><" + type +
         " id=\"se\" region=\"0,-2,2,0\"/><" + type + " id=\"nw\" region=\"-2,0,0,2\"/><" + type +
         " id=\"ne\" region=\"0,0,2,2\"/>";
}

std::string experiment(const std::string& physics, const std::string& bodies,
                       const std::string& extra = "") {
  return "<fleetsim><framework ticks_per_second=\"10\"/>"
         "<controllers><controller id=\"go\" type=\"straight\"/></controllers>"
         "<arena size=\"4,4\">" +
         bodies + "</arena><physics>" + physics + "</physics>" + extra + "</fleetsim>";
}

// The file: examples/diffusion without its <distribute>, i.e. several kinematics2d
// regions and no robot (a segmentation fault in KinematicsEngine::step before the fix).
TEST(EmptyRegions, SeveralRegionsOfEachEngineTypeAndNoRobotStep) {
  for (const std::string type : {"kinematics2d", "dynamics2d", "pointmass3d"}) {
    for (int threads : {1, 2}) {
      const Result r = run(experiment(quadrants(type), ""), threads, 5);
      EXPECT_EQ(r.ticks, 5) << type << ", " << threads << " threads";
      EXPECT_EQ(r.robots, 0u);
    }
  }
  // Every type at once, each with its regions empty.
  const std::string all = quadrants("kinematics2d") +
                          "<dynamics2d id=\"d\"/><pointmass3d id=\"air\"/>";
  for (int threads : {1, 2}) EXPECT_EQ(run(experiment(all, ""), threads, 5).ticks, 5);
}

// Robots in one region only: the other regions of the type, and the other types, stay empty;
// then robots leave their region for an empty one, and finally every robot is removed.
TEST(EmptyRegions, RegionsThatRobotsLeaveOrNeverEnterAndRunsWithoutRobotsLeft) {
  // Two e-pucks in the south-west quadrant heading east cross into the empty south-east one
  // (about 0.013 m a tick: 0.05 m from the border, they cross by tick 5).
  const std::string robots =
      "<robot id=\"a\" controller=\"go\" position=\"-0.05,-1\" heading=\"0\"/>"
      "<robot id=\"b\" controller=\"go\" position=\"-0.05,-1.5\" heading=\"0\"/>";
  for (const std::string type : {"kinematics2d", "dynamics2d"}) {
    const std::string kind = "<kinds><kind name=\"epuck\" base=\"epuck\" engine=\"" + type +
                             "\"/></kinds>";
    const std::string physics = quadrants("kinematics2d") + "<dynamics2d id=\"d\"/>";
    auto file = [&](const std::string& loop) {
      std::string x = experiment(physics, robots, loop);
      return x.insert(x.find("<controllers>"), kind);
    };
    // Crossing into the empty quadrant.
    const Result crossed = run(file(""), 1, 10);
    const std::vector<std::string> east =
        type == "kinematics2d" ? std::vector<std::string>{"se", "se"}
                               : std::vector<std::string>{"d", "d"};
    EXPECT_EQ(crossed.regions, east) << type;
    EXPECT_EQ(run(file(""), 2, 10).hash, crossed.hash) << type;
    // Every robot removed after tick 2 (before any crossed): the run goes on with none.
    const std::string loop = "<loop_functions type=\"remove_all\" at=\"2\"/>";
    const Result emptied = run(file(loop), 1, 6);
    EXPECT_EQ(emptied.ticks, 6) << type;
    EXPECT_EQ(emptied.robots, 0u) << type;
    EXPECT_EQ(run(file(loop), 2, 6).hash, emptied.hash) << type;
  }
}

}  // namespace
}  // namespace fleetsim::testing
