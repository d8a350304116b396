// ARGoS .argos experiment files, as users bring them: the public files collected in
// tests/data/argos/ (SOURCES.md) each load and run, or are refused with file:line messages
// that say why; and small inline files check each mapping (docs/argos.md).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
const std::string kArgos = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/argos/";

struct Loaded {
  std::optional<Experiment> ex;
  Diagnostics diags;
};

Loaded load(const std::string& path, int threads = 1, double length_s = 30,
            std::optional<std::uint64_t> seed = std::nullopt) {
  Loaded l;
  PluginRegistry reg;
  register_builtins(reg);
  ExperimentOverrides ov;
  ov.seed = seed;
  ov.threads = threads;
  ov.length_s = length_s;
  ov.log_path = "";
  l.ex = load_experiment(path, reg, ov, l.diags);
  return l;
}

/// Robots (not passive bodies) of a loaded experiment.
std::vector<std::size_t> driven_rows(const Experiment& ex) {
  std::vector<std::size_t> rows;
  auto kind = ex.state.robot_kind();
  for (std::size_t i = 0; i < ex.state.robot_count(); ++i)
    if (!ex.model->kinds[kind[i]].passive) rows.push_back(i);
  return rows;
}

// ---------------------------------------------------------------- the collected files

/// What a user sees for each collected file. A file that loads places `robots` robots
/// (<distribute> quantity, or those written out) inside the square |x|, |y| <= `within` (the
/// distribute's position range), and its Lua script drives them; `check` says what else a user
/// would see. A refused one names what fleetsim lacks: `refusal` occurs in one of its
/// file:line errors.
enum class Check {
  kMoves,  ///< the robots move
  /// The robots reach the light: at some tick one is within half a metre of the nearest
  /// light, or half as far as they started on average. (Random obstacles higher than the ray
  /// may hide it from there on: fleetsim draws other places than ARGoS.)
  kPhototaxis,
  kSpotLeds,   ///< "hello robot": red LEDs exactly when a motor ground point is on black
  kBlackSpot,  ///< aggregation: more robots end on the black spot than its area's share
  /// The script indexes robot.motor_ground, which its controller does not list: it stops at
  /// its first step with Lua's error, as in ARGoS.
  kScriptFails,
};
struct Expectation {
  const char* file;
  int robots;     ///< -1: refused
  double within;  ///< metres
  const char* refusal;
  Check check = Check::kMoves;
};

const Expectation kFiles[] = {
    // Lua controllers whose devices fleetsim has: proximity, wheels, LEDs, positioning.
    {"EmanueleArte+intelligent-robotic-systems/lab-1/Random-walk-ca/base/random-walk-ca.argos", 1,
     1.9, nullptr},
    {"andrea-acampora+robotic-argos-programs/hellorobot/02-obstacle_avoidance/"
     "obstacleAvoidance.argos",
     3, 1.9, nullptr},
    {"angelo-will+intelligent-robotic-system-labs/lab-01-&-02-2023-03-01/code/"
     "obstacle-avoidance.argos",
     1, 1.9, nullptr},
    // Phototaxis: the light sensor and light entities.
    {"EmanueleArte+intelligent-robotic-systems/lab-1/Phototaxis/base/phototaxis.argos", 1, 1.9,
     nullptr, Check::kPhototaxis},
    {"EmanueleArte+intelligent-robotic-systems/lab-1/Phototaxis/extra-light/phototaxis.argos", 1,
     1.9, nullptr, Check::kPhototaxis},
    // (noise_level="0.1" on the light sensor: ARGoS's uniform noise, drawn to repeat)
    {"EmanueleArte+intelligent-robotic-systems/lab-1/Phototaxis/sensor-noise/phototaxis.argos", 1,
     1.9, nullptr, Check::kPhototaxis},
    {"andrea-acampora+robotic-argos-programs/hellorobot/01-phototaxis/phototaxis.argos", 1, 1.9,
     nullptr, Check::kPhototaxis},
    // (noise_level="0.05" on <differential_steering>: ARGoS's actuator reads none, a warning)
    {"floyddc+Intelligent-Robotic-Systems/lab01/phototaxis/phototaxis.argos", 20, 1.5, nullptr,
     Check::kPhototaxis},
    {"angelo-will+intelligent-robotic-system-labs/lab-01-&-02-2023-03-01/code/photoaxis.argos", 1,
     1.9, nullptr, Check::kPhototaxis},
    {"GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01a-phototaxis/phototaxis.argos",
     1, 1.9, nullptr, Check::kPhototaxis},
    // Obstacle avoidance that still lists the light sensor (and no light).
    {"GiuliaNardicchia+intelligent-robotic-system/lab_activity-01/01b-obstacle-avoidance/"
     "obstacle_avoidance.argos",
     3, 1.9, nullptr},  // (noise_level="0.1" on the proximity sensor: ARGoS's uniform noise)
    {"floyddc+Intelligent-Robotic-Systems/lab01/collisions/collisions_avoidance.argos", 2, 1.9,
     nullptr, Check::kScriptFails},
    // Composite behaviours: phototaxis with obstacle avoidance (and random walk).
    {"andrea-acampora+robotic-argos-programs/hellorobot/03-composite_behaviour/"
     "compositeBehaviour.argos",
     1, 1.9, nullptr, Check::kPhototaxis},
    {"andrea-acampora+robotic-argos-programs/motor-schemas/motor-schemas.argos", 1, 1.9, nullptr,
     Check::kPhototaxis},
    {"andrea-acampora+robotic-argos-programs/subsumption-architecture/subsumption_arch.argos", 1,
     1.9, nullptr, Check::kPhototaxis},
    {"GiuliaNardicchia+intelligent-robotic-system/lab_activity-02/01_composite_behaviour.argos", 1,
     1.9, nullptr, Check::kPhototaxis},
    {"floyddc+Intelligent-Robotic-Systems/lab02/composite_behaviors.argos", 4, 2.9, nullptr,
     Check::kPhototaxis},
    {"angelo-will+intelligent-robotic-system-labs/lab-01-&-02-2023-03-01/code/"
     "composite-behavior.argos",
     5, 1.9, nullptr, Check::kPhototaxis},
    {"angelo-will+intelligent-robotic-system-labs/lab-03-2023-03-17/code/composite-behavior.argos",
     1, 1.9, nullptr, Check::kPhototaxis},
    {"angelo-will+intelligent-robotic-system-labs/lab-04-2023-03-31/composite-behavior.argos", 1,
     1.9, nullptr, Check::kPhototaxis},
    // The course's "hello robot": a floor image, a light, ground and light sensors; the LEDs
    // turn red on a black spot, yellow near the light.
    {"EmanueleArte+intelligent-robotic-systems/hellorobot/hellorobot.argos", 1, 1.9, nullptr,
     Check::kSpotLeds},
    {"GiuliaNardicchia+intelligent-robotic-system/ARGoS_example_code/hellorobot.argos", 1, 1.9,
     nullptr, Check::kSpotLeds},
    {"andrea-acampora+robotic-argos-programs/hellorobot/example/hellorobot.argos", 1, 1.9, nullptr,
     Check::kSpotLeds},
    {"angelo-will+intelligent-robotic-system-labs/lab-01-&-02-2023-03-01/code/hellorobot.argos", 1,
     1.9, nullptr, Check::kSpotLeds},
    {"floyddc+Intelligent-Robotic-Systems/lab00/hellorobot.argos", 1, 1.9, nullptr,
     Check::kSpotLeds},
    {"floyddc+Intelligent-Robotic-Systems/lab01/hellorobot.argos", 1, 1.9, nullptr,
     Check::kSpotLeds},
    // Aggregation on black spots: a floor and the motor ground sensor.
    {"andrea-acampora+robotic-argos-programs/swarm-robotics/01-aggregation/aggregation.argos", 50,
     2.5, nullptr},
    {"andrea-acampora+robotic-argos-programs/swarm-robotics/02-aggregation_black_spot/"
     "blank_spot.argos",
     50, 2.5, nullptr, Check::kBlackSpot},
    {"andrea-acampora+robotic-argos-programs/swarm-robotics/03-aggregation_two_spots/"
     "two_spots.argos",
     50, 2.5, nullptr, Check::kBlackSpot},
    // Its floor image is in floors/, not beside it nor in the working directory.
    {"angelo-will+intelligent-robotic-system-labs/lab-05-2023-04-14/test-aggregation.argos", -1, 0,
     "floor image 'no_spot.png' is not a file"},
    {"a-hamzah+argos_simulator_projects/boundry_following/boundry_following.argos", 1, 2, nullptr},
    // Its gripper, turret and encoder load; the LEDs on its cylinders do not.
    {"a-hamzah+argos_simulator_projects/obstacle_avoidance/obstacleAvoidance.argos", -1, 0,
     "<leds> on a <cylinder> is not supported"},
    // A flocking swarm on range-and-bearing: its sensor's range= (not an attribute of ARGoS's
    // sensor) is ignored with a warning, as ARGoS ignores it.
    {"Cuongpetter+Collective_Robots/Task2_Swarm_Behaviour/simulation.argos", 80, 5, nullptr},
    // Robots that grip and carry objects marked by LEDs.
    {"Emjaidi+argos3-personal/about_face/form_path.argos", -1, 0, "<leds> on a <box>"},
    {"Emjaidi+argos3-personal/comms/comms.argos", 20, 2.5, nullptr},
    // ilpincy/argos3-examples: C++ controllers and loop functions.
    {"ilpincy+argos3-examples/experiments/diffusion_1.argos", -1, 0,
     "ARGoS C++ plug-ins cannot be loaded; see docs/argos.md for what to do"},
    {"ilpincy+argos3-examples/experiments/diffusion_10.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/custom_distributions.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/epuck_obstacleavoidance.argos", -1, 0,
     "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/eyebot_circle.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/eyebot_flocking.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/flocking.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/foraging.argos", -1, 0, "<loop_functions"},
    {"ilpincy+argos3-examples/experiments/galib-trial.argos", -1, 0, "<loop_functions"},
    {"ilpincy+argos3-examples/experiments/galib.argos", -1, 0, "<loop_functions"},
    {"ilpincy+argos3-examples/experiments/gripping.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/id.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/manualcontrol.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/mpga-trial.argos", -1, 0, "<loop_functions"},
    {"ilpincy+argos3-examples/experiments/mpga.argos", -1, 0, "<loop_functions"},
    {"ilpincy+argos3-examples/experiments/multiple_engines.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/synchronization.argos", -1, 0, "ARGoS C++ plug-ins"},
    {"ilpincy+argos3-examples/experiments/trajectory.argos", -1, 0, "ARGoS C++ plug-ins"},
};

TEST(ArgosFiles, EveryCollectedFileIsInTheTable) {
  std::set<std::string> listed;
  for (const auto& e : kFiles) listed.insert(e.file);
  std::size_t found = 0;
  for (const auto& f : fs::recursive_directory_iterator(kArgos))
    if (f.path().extension() == ".argos") {
      ++found;
      EXPECT_TRUE(listed.count(fs::relative(f.path(), kArgos).string()))
          << f.path() << " is collected but not in kFiles";
    }
  EXPECT_EQ(found, std::size(kFiles));
}

TEST(ArgosFiles, RefusedFilesSayWhyAtTheirLines) {
  for (const auto& e : kFiles) {
    if (e.robots >= 0) continue;
    SCOPED_TRACE(e.file);
    const std::string path = kArgos + e.file;
    auto l = load(path);
    EXPECT_FALSE(l.ex);
    ASSERT_TRUE(l.diags.has_errors());
    bool named = false;
    for (const Diagnostic& d : l.diags.items()) {
      if (d.severity != Diagnostic::Severity::kError) continue;
      EXPECT_EQ(d.where.file, path);
      EXPECT_GT(d.where.line, 0) << d.message;
      named = named || d.message.find(e.refusal) != std::string::npos;
    }
    EXPECT_TRUE(named) << "no error says '" << e.refusal << "':\n" << l.diags.str();
  }
}

/// Horizontal distance from (x, y) to the nearest light of the run.
double to_nearest_light(const WorldModel& m, double x, double y) {
  double best = 1e300;
  for (const Light& l : m.lights)
    best = std::min(best, std::hypot(l.position.x - x, l.position.y - y));
  return best;
}

/// True when the floor under (x, y) is dark (grey level below 0.5).
bool dark_floor(const WorldModel& m, double x, double y) {
  const Color c = m.floor.color_at({x, y});
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 0.5 * 255;
}

/// True when one of the foot-bot's motor ground points (ARGoS's offsets) is on black.
bool motor_ground_on_black(const WorldModel& m, double x, double y, double theta) {
  const double off[4][2] = {{0.063, 0.0116}, {-0.063, 0.0116}, {-0.063, -0.0116}, {0.063, -0.0116}};
  for (const auto& o : off) {
    const Color c = m.floor.color_at({x + std::cos(theta) * o[0] - std::sin(theta) * o[1],
                                      y + std::sin(theta) * o[0] + std::cos(theta) * o[1]});
    if (0.299 * c.r + 0.587 * c.g + 0.114 * c.b == 0) return true;
  }
  return false;
}

TEST(ArgosFiles, LoadedFilesPlaceTheirRobotsAndTheScriptsDriveThem) {
  int red_ticks = 0;  // over the "hello robot" files: their robots did cross black spots
  for (const auto& e : kFiles) {
    if (e.robots < 0) continue;
    SCOPED_TRACE(e.file);
    const double length_s = e.check == Check::kBlackSpot ? 120 : 60;
    auto l = load(kArgos + e.file, 1, length_s);
    ASSERT_TRUE(l.ex) << l.diags.str();
    const auto rows = driven_rows(*l.ex);
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(e.robots));
    std::vector<std::pair<double, double>> start;
    for (std::size_t i : rows) {
      const double x = l.ex->state.x()[i], y = l.ex->state.y()[i];
      EXPECT_LE(std::abs(x), e.within);
      EXPECT_LE(std::abs(y), e.within);
      start.push_back({x, y});
    }
    auto model = l.ex->model;
    PluginRegistry reg;
    register_builtins(reg);
    Simulation sim(std::move(*l.ex), reg);
    sim.start();
    if (e.check == Check::kScriptFails) {
      try {
        sim.step();
        ADD_FAILURE() << "the script ran its first step";
      } catch (const std::exception& x) {
        EXPECT_NE(std::string(x.what()).find("attempt to index a nil value (local 'ground')"),
                  std::string::npos)
            << x.what();
      }
      continue;
    }
    const ColumnHandle leds = sim.state().robots.find("leds");
    int red = 0, agree = 0, ticks = 0;
    double closest = 1e300;  // the nearest any robot came to a light
    while (!sim.done()) {
      if (!model->lights.empty()) {
        for (std::size_t k : rows)
          closest =
              std::min(closest, to_nearest_light(*model, sim.state().x()[k], sim.state().y()[k]));
      }
      // The pose the sensors read this tick, then the LEDs the script set from it.
      const std::size_t i = rows[0];
      const double x = sim.state().x()[i], y = sim.state().y()[i], th = sim.state().theta()[i];
      sim.step();
      if (e.check != Check::kSpotLeds) continue;
      const Color c = sim.state().robots.span<Color>(leds)[i * sim.state().robots.desc(leds).width];
      const bool on_black = motor_ground_on_black(*model, x, y, th);
      red += c == Color{255, 0, 0, 255};
      agree += on_black == (c == Color{255, 0, 0, 255});
      ++ticks;
    }
    sim.finish();
    EXPECT_EQ(sim.state().tick, static_cast<Tick>(length_s * 10));
    double moved = 0, light_before = 0;
    int on_dark = 0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::size_t i = rows[k];
      const double x = sim.state().x()[i], y = sim.state().y()[i];
      moved = std::max(moved, std::hypot(x - start[k].first, y - start[k].second));
      EXPECT_GT(x, model->arena_min().x);
      EXPECT_LT(x, model->arena_max().x);
      EXPECT_GT(y, model->arena_min().y);
      EXPECT_LT(y, model->arena_max().y);
      if (!model->lights.empty()) {
        light_before += to_nearest_light(*model, start[k].first, start[k].second) / rows.size();
      }
      on_dark += dark_floor(*model, x, y);
    }
    EXPECT_GT(moved, 0.3) << "the Lua script did not drive the robots";
    switch (e.check) {
      case Check::kMoves:
      case Check::kScriptFails:
        break;
      case Check::kPhototaxis:
        // The robots went to the light: within half a metre of it on average, or half as far
        // as they started.
        EXPECT_LT(closest, std::max(0.5, light_before / 2))
            << "from " << light_before << " m to at best " << closest << " m";
        break;
      case Check::kSpotLeds:
        EXPECT_EQ(agree, ticks) << red << " red ticks";
        red_ticks += red;
        break;
      case Check::kBlackSpot: {
        // The share of the arena that is dark, against the share of robots that end there.
        int dark = 0, samples = 0;
        for (double x = model->arena_min().x + 0.01; x < model->arena_max().x; x += 0.02)
          for (double y = model->arena_min().y + 0.01; y < model->arena_max().y; y += 0.02) {
            dark += dark_floor(*model, x, y);
            ++samples;
          }
        const double area_share = static_cast<double>(dark) / samples;
        const double robot_share = static_cast<double>(on_dark) / rows.size();
        EXPECT_GT(robot_share, 2 * area_share)
            << robot_share << " of the robots on " << area_share << " of the floor";
        break;
      }
    }
  }
  EXPECT_GT(red_ticks, 0);
}

std::uint64_t run_hash(const std::string& file, int threads) {
  auto l = load(file, threads, 20);
  EXPECT_TRUE(l.ex) << l.diags.str();
  PluginRegistry reg;
  register_builtins(reg);
  Simulation sim(std::move(*l.ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  return sim.state().hash();
}

TEST(ArgosFiles, SameBitsOnOneAndTwoThreads) {
  const std::string f = kArgos +
                        "andrea-acampora+robotic-argos-programs/hellorobot/02-obstacle_avoidance/"
                        "obstacleAvoidance.argos";
  EXPECT_EQ(run_hash(f, 1), run_hash(f, 2));
}

TEST(ArgosFiles, CheckCommandRefusesWithStatusTwo) {
  const std::string cmd = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim check '" + kArgos +
                          "ilpincy+argos3-examples/experiments/diffusion_1.argos' 2>/dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string ok = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim check '" + kArgos +
                         std::string(kFiles[0].file) + "' >/dev/null 2>&1";
  EXPECT_EQ(std::system(ok.c_str()), 0);
}

// ---------------------------------------------------------------- each mapping, inline

/// A directory with a Lua script and the .argos files the tests write in it.
class ArgosInline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fleetsim_argos_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "forward.lua")
        << "function init() end\n"
           "function step() robot.wheels.set_velocity(10, 10) end\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  /// Writes `body` (the children of <argos-configuration>) and loads it.
  Loaded run(const std::string& body, const std::string& name = "exp.argos") {
    path_ = (dir_ / name).string();
    std::ofstream(path_) << "<?xml version=\"1.0\" ?>\n<argos-configuration>\n"
                         << body << "</argos-configuration>\n";
    return load(path_, 1, 5);
  }
  fs::path dir_;
  std::string path_;
};

const char* kFramework =
    "  <framework><system threads=\"0\"/>"
    "<experiment length=\"0\" ticks_per_second=\"10\" random_seed=\"7\"/></framework>\n";  // 3
const char* kController =
    "  <controllers><lua_controller id=\"c\">\n"  // 4
    "    <actuators><differential_steering implementation=\"default\"/>"
    "<leds implementation=\"default\" medium=\"leds\"/></actuators>\n"  // 5
    "    <sensors><footbot_proximity implementation=\"default\" show_rays=\"true\"/>"
    "<positioning implementation=\"default\"/></sensors>\n"  // 6
    "    <params script=\"forward.lua\"/>\n"                 // 7
    "  </lua_controller></controllers>\n";                   // 8
const char* kPhysics =
    "  <physics_engines><dynamics2d id=\"dyn2d\"/></physics_engines>\n"  // 9
    "  <media><led id=\"leds\"/></media>\n";                             // 10

std::string arena(const std::string& inside) {
  return "  <arena size=\"4,4,1\" center=\"0,0,0.5\">\n" + inside + "  </arena>\n";  // 11..
}

TEST_F(ArgosInline, ARobotWrittenOutIsWhereTheFileSaysAndDrives) {
  auto l = run(std::string(kFramework) + kController + kPhysics +
               arena("    <foot-bot id=\"solo\"><body position=\"0.5,-1,0\" "
                     "orientation=\"90,0,0\"/><controller config=\"c\"/></foot-bot>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  ASSERT_EQ(l.ex->state.robot_count(), 1u);
  EXPECT_EQ(l.ex->state.robot_name()[0], "solo");
  EXPECT_DOUBLE_EQ(l.ex->state.x()[0], 0.5);
  EXPECT_DOUBLE_EQ(l.ex->state.y()[0], -1);
  EXPECT_EQ(l.ex->model->seed, 7u);
  EXPECT_EQ(l.ex->threads, 1);
  EXPECT_EQ(l.ex->model->kinds[l.ex->state.robot_kind()[0]].engine, "dynamics2d");
  PluginRegistry reg;
  register_builtins(reg);
  Simulation sim(std::move(*l.ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  // Heading 90 degrees: forward is +y; 10 cm/s for 5 s.
  EXPECT_NEAR(sim.state().x()[0], 0.5, 0.05);
  EXPECT_GT(sim.state().y()[0], -0.7);
}

TEST_F(ArgosInline, AGripperControllerGripsAMovableBoxPullsItAndLeavesIt) {
  // ARGoS's gripping example's moves, in Lua: ahead into the box, lock, back up, unlock.
  std::ofstream(dir_ / "grip.lua")
      << "local t = 0\n"
         "function init()\n"
         "  robot.turret.set_position_control_mode(); robot.turret.set_rotation(0)\n"
         "end\n"
         "function step()\n"
         "  t = t + 1\n"
         "  if t <= 40 then robot.wheels.set_velocity(10, 10)\n"
         "  elseif t == 41 then robot.wheels.set_velocity(0, 0); robot.gripper.lock_positive()\n"
         "  elseif t <= 100 then robot.wheels.set_velocity(-10, -10)\n"
         "  elseif t == 101 then robot.wheels.set_velocity(0, 0); robot.gripper.unlock()\n"
         "  else robot.wheels.set_velocity(-10, -10) end\n"
         "  if robot.turret.rotation ~= 0 then logerr('the turret moved') end\n"
         "end\n";
  auto l = run(std::string(kFramework) +
               "  <controllers><lua_controller id=\"c\">\n"
               "    <actuators><differential_steering implementation=\"default\"/>"
               "<footbot_gripper implementation=\"default\"/>"
               "<footbot_turret implementation=\"default\"/></actuators>\n"
               "    <sensors><footbot_turret_encoder implementation=\"default\"/></sensors>\n"
               "    <params script=\"grip.lua\"/>\n"
               "  </lua_controller></controllers>\n" +
               kPhysics +
               arena("    <foot-bot id=\"fb\"><body position=\"-1,0,0\" orientation=\"0,0,0\"/>"
                     "<controller config=\"c\"/></foot-bot>\n"
                     "    <box id=\"crate\" size=\"0.2,0.2,0.2\" movable=\"true\" mass=\"0.5\">"
                     "<body position=\"-0.5,0,0\" orientation=\"0,0,0\"/></box>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  PluginRegistry reg;
  register_builtins(reg);
  Simulation sim(std::move(*l.ex), reg);
  sim.start();
  auto x_of = [&](const char* name) {
    const auto& names = sim.state().robot_name();
    for (std::uint32_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return sim.state().x()[i];
    ADD_FAILURE() << "no " << name;
    return 0.0;
  };
  for (int k = 0; k < 41; ++k) sim.step();
  const double pushed = x_of("crate");
  EXPECT_GT(pushed, -0.48) << "pushed ahead";
  // Backing up 6 s at 10 cm/s: the box comes along.
  for (int k = 0; k < 59; ++k) sim.step();
  EXPECT_NEAR(x_of("crate"), pushed - 0.59, 0.01);
  EXPECT_NEAR(x_of("crate") - x_of("fb"), 0.085 + 0.1, 0.01);
  // Released: the robot goes on backing up, the box stays.
  const double left = x_of("crate");
  for (int k = 0; k < 30; ++k) sim.step();
  EXPECT_NEAR(x_of("crate"), left, 0.005);
  EXPECT_LT(x_of("fb"), left - 0.185 - 0.25);
}

TEST_F(ArgosInline, TheDistanceScannerLoadsAndItsIgnoredNoiseGetsAWarning) {
  auto l = run(std::string(kFramework) +
               "  <controllers><lua_controller id=\"c\">\n"  // 4
               "    <actuators><footbot_distance_scanner implementation=\"default\"/>"
               "<differential_steering implementation=\"default\"/></actuators>\n"  // 5
               "    <sensors><footbot_distance_scanner implementation=\"rot_z_only\" "
               "noise_range=\"-0.1:0.1\"/></sensors>\n"  // 6
               "    <params script=\"forward.lua\"/>\n"  // 7
               "  </lua_controller></controllers>\n" +   // 8
               kPhysics +
               arena("    <foot-bot id=\"fb\"><body position=\"0,0,0\" orientation=\"0,0,0\"/>"
                     "<controller config=\"c\"/></foot-bot>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  const RobotKind& kind = l.ex->model->kinds[l.ex->state.robot_kind()[0]];
  ASSERT_EQ(kind.sensors.size(), 1u);
  EXPECT_EQ(kind.sensors[0].type, "footbot_distance_scanner");
  ASSERT_EQ(kind.actuators.size(), 2u);
  EXPECT_EQ(kind.actuators[0].type, "footbot_distance_scanner");
  EXPECT_NE(l.diags.str().find(path_ + ":6: warning: noise_range on the <footbot_distance_scanner> "
                                       "sensor is ignored, as ARGoS's rot_z_only scanner reads "
                                       "it and adds no noise"),
            std::string::npos)
      << l.diags.str();
}

TEST_F(ArgosInline, DistributeMethodsPlaceAsArgosDoes) {
  auto l = run(std::string(kFramework) + kController + kPhysics +
               arena("    <distribute>\n"
                     "      <position method=\"grid\" center=\"0,0,0\" distances=\"0.5,0.4,0\" "
                     "layout=\"3,2,1\"/>\n"
                     "      <orientation method=\"constant\" values=\"45,0,0\"/>\n"
                     "      <entity quantity=\"6\" max_trials=\"1\" base_num=\"10\">"
                     "<foot-bot id=\"g\"><controller config=\"c\"/></foot-bot></entity>\n"
                     "    </distribute>\n"
                     "    <distribute>\n"
                     "      <position method=\"gaussian\" mean=\"1,1,0\" std_dev=\"0.2,0.2,0\"/>\n"
                     "      <orientation method=\"uniform\" min=\"0,0,0\" max=\"360,0,0\"/>\n"
                     "      <entity quantity=\"5\" max_trials=\"100\">"
                     "<cylinder id=\"cy\" radius=\"0.05\" height=\"0.1\" movable=\"true\" "
                     "mass=\"0.1\"/></entity>\n"
                     "    </distribute>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  const auto& st = l.ex->state;
  ASSERT_EQ(st.robot_count(), 11u);
  // The grid fills x first, from +x to -x, then y, about its centre.
  std::map<std::string, std::pair<double, double>> at;
  for (std::size_t i = 0; i < st.robot_count(); ++i)
    at[st.robot_name()[i]] = {st.x()[i], st.y()[i]};
  EXPECT_DOUBLE_EQ(at["g10"].first, 0.5);
  EXPECT_DOUBLE_EQ(at["g10"].second, 0.2);
  EXPECT_DOUBLE_EQ(at["g12"].first, -0.5);
  EXPECT_DOUBLE_EQ(at["g13"].first, 0.5);
  EXPECT_DOUBLE_EQ(at["g15"].second, -0.2);
  EXPECT_NEAR(st.theta()[0], 45 * 3.14159265358979 / 180, 1e-9);
  // The cylinders, passive bodies of radius 0.05, around (1, 1).
  for (int k = 0; k < 5; ++k) {
    const auto p = at["cy" + std::to_string(k)];
    EXPECT_LT(std::hypot(p.first - 1, p.second - 1), 1.0);
  }
}

// `fleetsim run --seed S` is the file with random_seed="S": the distributed robots are placed
// anew too (as ARGoS's seed places them), not only the run's draws.
TEST_F(ArgosInline, TheSeedOptionPlacesDistributedRobotsAsTheFilesSeedDoes) {
  const std::string body = std::string(kController) + kPhysics +
                           arena(
                               "    <distribute>\n"
                               "      <position method=\"uniform\" min=\"-1.5,-1.5,0\" "
                               "max=\"1.5,1.5,0\"/>\n"
                               "      <orientation method=\"uniform\" min=\"0,0,0\" "
                               "max=\"360,0,0\"/>\n"
                               "      <entity quantity=\"8\" max_trials=\"100\">"
                               "<foot-bot id=\"fb\"><controller config=\"c\"/></foot-bot>"
                               "</entity>\n"
                               "    </distribute>\n");
  auto places = [](const Loaded& l) {
    std::vector<double> xy;
    for (std::size_t i = 0; i < l.ex->state.robot_count(); ++i) {
      xy.push_back(l.ex->state.x()[i]);
      xy.push_back(l.ex->state.y()[i]);
    }
    return xy;
  };
  auto seed7 = run(kFramework + body);  // random_seed="7"
  ASSERT_TRUE(seed7.ex) << seed7.diags.str();
  std::string framework9 = kFramework;
  framework9.replace(framework9.find("random_seed=\"7\""), 15, "random_seed=\"9\"");
  auto seed9 = run(framework9 + body, "nine.argos");
  ASSERT_TRUE(seed9.ex) << seed9.diags.str();
  auto seed7_as_9 = load((dir_ / "exp.argos").string(), 1, 5, 9);
  ASSERT_TRUE(seed7_as_9.ex) << seed7_as_9.diags.str();
  EXPECT_NE(places(seed7), places(seed9));
  EXPECT_EQ(places(seed7_as_9), places(seed9));
  EXPECT_EQ(seed7_as_9.ex->model->seed, 9u);
}

TEST_F(ArgosInline, TooManyForTheGridOrTheTriesIsRefusedAtTheDistribute) {
  auto l = run(std::string(kFramework) + kController + kPhysics +
               arena("    <distribute>\n"  // 12
                     "      <position method=\"uniform\" min=\"-0.1,-0.1,0\" max=\"0.1,0.1,0\"/>\n"
                     "      <orientation method=\"constant\" values=\"0,0,0\"/>\n"
                     "      <entity quantity=\"50\" max_trials=\"20\">\n"  // 15
                     "<foot-bot id=\"fb\"><controller config=\"c\"/></foot-bot></entity>\n"
                     "    </distribute>\n"));
  EXPECT_FALSE(l.ex);
  EXPECT_NE(l.diags.str().find(path_ + ":15: error: could not place foot-bot 'fb"),
            std::string::npos)
      << l.diags.str();
}

TEST_F(ArgosInline, MisspellingsGetLinesAndSuggestions) {
  auto l = run(std::string(kFramework) + kController +
               "  <physics_engine><dynamics2d id=\"d\"/></physics_engine>\n" +  // 9
               "  <media><led id=\"leds\"/></media>\n" +                        // 10
               arena("    <foot-bot id=\"a\" rab_rnage=\"2\"><body position=\"0,0,0\"/>"
                     "<controller config=\"cc\"/></foot-bot>\n"  // 12
                     "    <foot_bot id=\"b\"/>\n"));             // 13
  EXPECT_FALSE(l.ex);
  const std::string s = l.diags.str();
  EXPECT_NE(s.find(path_ + ":9: error: unknown element <physics_engine>"), std::string::npos) << s;
  EXPECT_NE(s.find("did you mean 'physics_engines'"), std::string::npos) << s;
  EXPECT_NE(s.find(path_ + ":12: error: unknown attribute 'rab_rnage'"), std::string::npos) << s;
  EXPECT_NE(s.find("did you mean 'rab_range'"), std::string::npos) << s;
  EXPECT_NE(s.find(path_ + ":13: error: unknown element <foot_bot>"), std::string::npos) << s;
  EXPECT_NE(s.find("did you mean 'foot-bot'"), std::string::npos) << s;
  EXPECT_NE(s.find("unknown controller config 'cc'"), std::string::npos) << s;
}

TEST_F(ArgosInline, WhatFleetsimLacksIsRefusedAllAtOnce) {
  auto l = run(
      std::string(kFramework) +
      "  <controllers><lua_controller id=\"c\">\n"                                     // 4
      "    <actuators><quadrotor_position implementation=\"default\"/></actuators>\n"  // 5
      "    <sensors><epuck_light implementation=\"rot_z_only\"/></sensors>\n"          // 6
      "    <params script=\"forward.lua\" speed=\"3\"/>\n"                             // 7
      "  </lua_controller></controllers>\n"                                            // 8
      "  <loop_functions library=\"build/libmy_loop\" label=\"my_loop\"/>\n" +         // 9
      kPhysics +                                                                       // 10, 11
      arena("    <light id=\"l\" position=\"0,0,1\" orientation=\"0,0,0\" "
            "color=\"yellow\" intensity=\"1\" medium=\"leds\"/>\n"                          // 13
            "    <floor id=\"f\" source=\"loop_functions\" pixels_per_meter=\"50\"/>\n"));  // 14
  EXPECT_FALSE(l.ex);
  const std::string s = l.diags.str();
  for (const char* want :
       {":5: error: <quadrotor_position>", ":6: error: <epuck_light>: fleetsim has no e-puck light",
        ":7: error: <params speed=",
        ":9: error: <loop_functions library=...> names ARGoS C++ code: ARGoS C++ plug-ins cannot "
        "be loaded; see docs/argos.md for what to do",
        ":14: error: <floor source=\"loop_functions\"> asks ARGoS C++ loop functions for the "
        "floor's colours: ARGoS C++ plug-ins cannot be loaded"})
    EXPECT_NE(s.find(path_ + want), std::string::npos) << want << "\n" << s;
}

TEST_F(ArgosInline, LightsAndAFloorImageMapAsArgosPlacesThem) {
  // A floor image beside the file: one of the collected ones (400 x 500 pixels).
  fs::copy_file(kArgos +
                    "andrea-acampora+robotic-argos-programs/swarm-robotics/floors/"
                    "two_spots.png",
                dir_ / "spots.png");
  auto l = run(std::string(kFramework) + kController + kPhysics +
               arena("    <light id=\"l\" position=\"1,-1,0.5\" orientation=\"0,0,0\" "
                     "color=\"yellow\" intensity=\"2\" medium=\"leds\"/>\n"
                     "    <floor id=\"f\" source=\"image\" path=\"spots.png\"/>\n"
                     "    <distribute>\n"
                     "      <position method=\"grid\" center=\"0,0,0.25\" distances=\"1,0,0\" "
                     "layout=\"2,1,1\"/>\n"
                     "      <orientation method=\"constant\" values=\"0,0,0\"/>\n"
                     "      <entity quantity=\"2\" max_trials=\"1\"><light id=\"g\" "
                     "color=\"red\" intensity=\"0.5\" medium=\"leds\"/></entity>\n"
                     "    </distribute>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  const WorldModel& m = *l.ex->model;
  ASSERT_EQ(m.lights.size(), 3u);
  EXPECT_EQ(m.lights[0].id, "l");
  EXPECT_DOUBLE_EQ(m.lights[0].position.x, 1);
  EXPECT_DOUBLE_EQ(m.lights[0].position.y, -1);
  EXPECT_DOUBLE_EQ(m.lights[0].z_m, 0.5);
  EXPECT_DOUBLE_EQ(m.lights[0].intensity, 2);
  EXPECT_EQ(m.lights[1].id, "g0");
  EXPECT_DOUBLE_EQ(m.lights[1].position.x, 0.5);
  EXPECT_DOUBLE_EQ(m.lights[2].z_m, 0.25);
  EXPECT_EQ(m.lights[2].color, (Color{255, 0, 0, 255}));
  // The image is stretched over the whole arena (4 x 4 m), its top row at +y.
  EXPECT_EQ(m.floor.width, 400);
  EXPECT_DOUBLE_EQ(m.floor.min.x, -2);
  EXPECT_DOUBLE_EQ(m.floor.max.y, 2);
}

/// `fleetsim run` on `file` with `args`; its JSON summary's state_hash.
std::string cli_state_hash(const std::string& file, const std::string& args) {
  const std::string cmd = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim run '" + file + "' " +
                          args + " --quiet --json 2>/dev/null";
  std::FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) {
    EXPECT_EQ(pclose(p), 0) << cmd;
  }
  const auto at = out.find("\"state_hash\":\"");
  return at == std::string::npos ? "" : out.substr(at + 14, 16);
}

/// Two dynamics2d regions side by side, west and east of x = 0 (a run on two processes).
const char* kWestAndEast =
    "  <physics_engines>\n"
    "    <dynamics2d id=\"west\"><boundaries><top height=\"1\"/><bottom height=\"0\"/>"
    "<sides><vertex point=\"-2,-2\"/><vertex point=\"0,-2\"/><vertex point=\"0,2\"/>"
    "<vertex point=\"-2,2\"/></sides></boundaries></dynamics2d>\n"
    "    <dynamics2d id=\"east\"><boundaries><top height=\"1\"/><bottom height=\"0\"/>"
    "<sides><vertex point=\"0,-2\"/><vertex point=\"2,-2\"/><vertex point=\"2,2\"/>"
    "<vertex point=\"0,2\"/></sides></boundaries></dynamics2d>\n"
    "  </physics_engines>\n";

TEST_F(ArgosInline, LightsAndAFloorGiveTheSameBitsOnThreadsAndProcesses) {
  fs::copy_file(kArgos +
                    "andrea-acampora+robotic-argos-programs/swarm-robotics/floors/"
                    "two_spots.png",
                dir_ / "spots.png");
  std::ofstream(dir_ / "photo.lua")
      << "function step()\n"
         "  local best, at = 0, 1\n"
         "  for i = 1, #robot.light do\n"
         "    if robot.light[i].value > best then best, at = robot.light[i].value, i end\n"
         "  end\n"
         "  if robot.motor_ground[1].value < 0.5 then robot.wheels.set_velocity(1, 1)\n"
         "  elseif robot.light[at].angle > 0 then robot.wheels.set_velocity(5, 10)\n"
         "  else robot.wheels.set_velocity(10, 5) end\n"
         "end\n";
  run(std::string(kFramework) +
      "  <controllers><lua_controller id=\"c\">\n"
      "    <actuators><differential_steering implementation=\"default\"/></actuators>\n"
      "    <sensors><footbot_light implementation=\"rot_z_only\" noise_level=\"0.05\"/>"
      "<footbot_motor_ground implementation=\"rot_z_only\"/></sensors>\n"
      "    <params script=\"photo.lua\"/>\n"
      "  </lua_controller></controllers>\n" +
      std::string(kWestAndEast) +
      arena("    <light id=\"l\" position=\"0.5,0.5,0.3\" orientation=\"0,0,0\" "
            "color=\"yellow\" intensity=\"1\" medium=\"leds\"/>\n"
            "    <floor id=\"f\" source=\"image\" path=\"spots.png\"/>\n"
            "    <distribute>\n"
            "      <position method=\"uniform\" min=\"-1.8,-1.8,0\" max=\"1.8,1.8,0\"/>\n"
            "      <orientation method=\"uniform\" min=\"0,0,0\" max=\"360,0,0\"/>\n"
            "      <entity quantity=\"30\" max_trials=\"100\"><foot-bot id=\"fb\">"
            "<controller config=\"c\"/></foot-bot></entity>\n"
            "    </distribute>\n"));
  const std::string one = cli_state_hash(path_, "--length 20 --threads 1");
  ASSERT_EQ(one.size(), 16u);
  EXPECT_EQ(cli_state_hash(path_, "--length 20 --threads 2"), one);
  EXPECT_EQ(cli_state_hash(path_, "--length 20 --threads 1 --processes 2"), one);
}

// ARGoS's behaviour by default (docs/argos.md): the velocity-controlled drive against walls and
// other robots, the foot-bot's proximity curve with its noise_level, and the camera's square
// view with occlusion, all feeding back into the motion, give the same bits on one and two
// threads and on two processes.
TEST_F(ArgosInline, ArgosDriveProximityNoiseAndCameraGiveTheSameBitsOnThreadsAndProcesses) {
  std::ofstream(dir_ / "avoid.lua")
      << "function init() robot.colored_blob_omnidirectional_camera.enable() "
         "robot.leds.set_all_colors(\"red\") end\n"
         "function step()\n"
         "  local x, y = 0, 0\n"
         "  for i = 1, #robot.proximity do\n"
         "    x = x + robot.proximity[i].value * math.cos(robot.proximity[i].angle)\n"
         "    y = y + robot.proximity[i].value * math.sin(robot.proximity[i].angle)\n"
         "  end\n"
         "  local seen = #robot.colored_blob_omnidirectional_camera\n"
         "  if x > 0.2 then\n"
         "    if y > 0 then robot.wheels.set_velocity(10, -10) else robot.wheels.set_velocity(-10, "
         "10) end\n"
         "  elseif seen > 3 then robot.wheels.set_velocity(15, 10)\n"
         "  else robot.wheels.set_velocity(10, 10) end\n"
         "end\n";
  run(std::string(kFramework) +
      "  <controllers><lua_controller id=\"c\">\n"
      "    <actuators><differential_steering implementation=\"default\"/>"
      "<leds implementation=\"default\" medium=\"leds\"/></actuators>\n"
      "    <sensors><footbot_proximity implementation=\"default\" noise_level=\"0.05\"/>"
      "<colored_blob_omnidirectional_camera implementation=\"rot_z_only\" medium=\"leds\"/>"
      "</sensors>\n"
      "    <params script=\"avoid.lua\"/>\n"
      "  </lua_controller></controllers>\n" +
      std::string(kWestAndEast) + "  <media><led id=\"leds\"/></media>\n" +
      arena("    <box id=\"b\" size=\"0.1,1.5,0.2\" movable=\"false\"><body "
            "position=\"0.6,0,0\" orientation=\"30,0,0\"/></box>\n"
            "    <distribute>\n"
            "      <position method=\"uniform\" min=\"-1.8,-1.8,0\" max=\"1.8,1.8,0\"/>\n"
            "      <orientation method=\"uniform\" min=\"0,0,0\" max=\"360,0,0\"/>\n"
            "      <entity quantity=\"40\" max_trials=\"100\"><foot-bot id=\"fb\">"
            "<controller config=\"c\"/></foot-bot></entity>\n"
            "    </distribute>\n"));
  const std::string one = cli_state_hash(path_, "--length 20 --threads 1");
  ASSERT_EQ(one.size(), 16u);
  EXPECT_EQ(cli_state_hash(path_, "--length 20 --threads 2"), one);
  EXPECT_EQ(cli_state_hash(path_, "--length 20 --threads 1 --processes 2"), one);
}

// ARGoS's range-and-bearing medium checks occlusions unless check_occlusions="false": three
// foot-bots in a row, each driving on only when it hears two others. The middle one hears both
// ends; the ends hide each other behind it, so with occlusions only the middle one drives (for
// the first 0.8 s: then it has left the line between them, by more than its radius).
TEST_F(ArgosInline, RangeAndBearingMessagesAreBlockedByRobotsUnlessTheMediumSaysNot) {
  std::ofstream(dir_ / "count.lua")
      << "function step()\n"
         "  if #robot.range_and_bearing >= 2 then robot.wheels.set_velocity(10, 10)\n"
         "  else robot.wheels.set_velocity(0, 0) end\n"
         "end\n";
  for (const char* occlusions : {"", " check_occlusions=\"false\"", " check_occlusions=\"true\""}) {
    SCOPED_TRACE(occlusions);
    std::string bots;
    for (int i = 0; i < 3; ++i)
      bots += "    <foot-bot id=\"fb" + std::to_string(i) + "\"><body position=\"" +
              std::to_string(i - 1) +
              ",0,0\" orientation=\"90,0,0\"/><controller config=\"c\"/></foot-bot>\n";
    auto l = run(std::string(kFramework) +
                 "  <controllers><lua_controller id=\"c\">\n"
                 "    <actuators><differential_steering implementation=\"default\"/>"
                 "<range_and_bearing implementation=\"default\"/></actuators>\n"
                 "    <sensors><range_and_bearing implementation=\"medium\" medium=\"rab\"/>"
                 "</sensors>\n"
                 "    <params script=\"count.lua\"/>\n"
                 "  </lua_controller></controllers>\n"
                 "  <physics_engines><dynamics2d id=\"dyn2d\"/></physics_engines>\n"
                 "  <media><range_and_bearing id=\"rab\"" +
                 std::string(occlusions) + "/></media>\n" + arena(bots));
    ASSERT_TRUE(l.ex) << l.diags.str();
    PluginRegistry reg;
    register_builtins(reg);
    Simulation sim(std::move(*l.ex), reg);
    sim.start();
    for (int t = 0; t < 6; ++t) sim.step();
    sim.finish();
    const bool checked = std::string(occlusions).find("false") == std::string::npos;
    for (std::size_t i = 0; i < 3; ++i) {
      const bool drives = sim.state().y()[i] > 0.02;
      EXPECT_EQ(drives, i == 1 || !checked) << sim.state().robot_name()[i];
    }
  }
}

// 120 foot-bots steering by what their neighbours say, messages blocked by bodies (ARGoS's
// default): the same bits on 1 and 2 threads and on 2 processes; occlusion changes the run.
TEST_F(ArgosInline, RangeAndBearingOcclusionGivesTheSameBitsOnThreadsAndProcesses) {
  std::ofstream(dir_ / "steer.lua")
      << "function step()\n"
         "  local n = #robot.range_and_bearing\n"
         "  robot.range_and_bearing.set_data(1, n)\n"
         "  local turn = 0\n"
         "  for i = 1, n do\n"
         "    local m = robot.range_and_bearing[i]\n"
         "    turn = turn + m.data[1] * math.sin(m.horizontal_bearing)\n"
         "  end\n"
         "  if turn > 0 then robot.wheels.set_velocity(5, 10) else "
         "robot.wheels.set_velocity(10, 5) end\n"
         "end\n";
  std::string hashes[2];
  for (int checked = 0; checked < 2; ++checked) {
    run(std::string(kFramework) +
        "  <controllers><lua_controller id=\"c\">\n"
        "    <actuators><differential_steering implementation=\"default\"/>"
        "<range_and_bearing implementation=\"default\"/></actuators>\n"
        "    <sensors><range_and_bearing implementation=\"medium\" medium=\"rab\"/></sensors>\n"
        "    <params script=\"steer.lua\"/>\n"
        "  </lua_controller></controllers>\n" +
        std::string(kWestAndEast) + "  <media><range_and_bearing id=\"rab\" check_occlusions=\"" +
        std::string(checked ? "true" : "false") + "\"/></media>\n" +
        arena("    <distribute>\n"
              "      <position method=\"uniform\" min=\"-1.8,-1.8,0\" max=\"1.8,1.8,0\"/>\n"
              "      <orientation method=\"uniform\" min=\"0,0,0\" max=\"360,0,0\"/>\n"
              "      <entity quantity=\"120\" max_trials=\"100\"><foot-bot id=\"fb\">"
              "<controller config=\"c\"/></foot-bot></entity>\n"
              "    </distribute>\n"));
    hashes[checked] = cli_state_hash(path_, "--length 10 --threads 1");
    ASSERT_EQ(hashes[checked].size(), 16u);
  }
  EXPECT_NE(hashes[0], hashes[1]) << "bodies between the robots should block some messages";
  EXPECT_EQ(cli_state_hash(path_, "--length 10 --threads 2"), hashes[1]);
  EXPECT_EQ(cli_state_hash(path_, "--length 10 --threads 1 --processes 2"), hashes[1]);
}

TEST_F(ArgosInline, AGroundSensorWithoutAFloorIsRefusedAsArgosDoes) {
  auto l = run(std::string(kFramework) +
               "  <controllers><lua_controller id=\"c\">\n"  // 4
               "    <actuators><differential_steering implementation=\"default\"/>"
               "</actuators>\n"  // 5
               "    <sensors><footbot_motor_ground implementation=\"rot_z_only\" "
               "noise_level=\"0.1\"/></sensors>\n"       // 6
               "    <params script=\"forward.lua\"/>\n"  // 7
               "  </lua_controller></controllers>\n" +
               kPhysics + arena(""));
  EXPECT_FALSE(l.ex);
  EXPECT_NE(l.diags.str().find(path_ + ":6: error: a ground sensor needs a <floor>"),
            std::string::npos)
      << l.diags.str();
  // noise_level is ARGoS's own there: not refused.
  EXPECT_EQ(l.diags.str().find("noise_level"), std::string::npos) << l.diags.str();
}

TEST_F(ArgosInline, ScriptIsFoundBesideTheFileWhenNotInTheWorkingDirectory) {
  // The test runs in the build directory, which has no forward.lua: ARGoS would not find it
  // there; fleetsim then looks beside the .argos file.
  ASSERT_FALSE(fs::exists("forward.lua"));
  auto l = run(std::string(kFramework) + kController + kPhysics + arena(""));
  ASSERT_TRUE(l.ex) << l.diags.str();
  EXPECT_EQ(l.ex->model->controllers[0].params.text("script", ""), (dir_ / "forward.lua").string());
  auto missing = run(std::string(kFramework) +
                     "  <controllers><lua_controller id=\"c\"><actuators/><sensors/>\n"
                     "    <params script=\"nowhere.lua\"/>\n"  // 5
                     "  </lua_controller></controllers>\n" +
                     kPhysics + arena(""));
  EXPECT_NE(missing.diags.str().find(path_ + ":5: error: script 'nowhere.lua' is not a file"),
            std::string::npos)
      << missing.diags.str();
}

TEST_F(ArgosInline, StaticBodiesBecomeObstaclesAndRegionsBoxes) {
  auto l = run(std::string(kFramework) + kController + kWestAndEast +
               arena("    <box id=\"w\" size=\"0.2,2,0.5\" movable=\"false\"><body "
                     "position=\"1,0,0\"/></box>\n"
                     "    <cylinder id=\"p\" radius=\"0.2\" height=\"0.5\" movable=\"false\">"
                     "<body position=\"-1,0,0\"/></cylinder>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  ASSERT_EQ(l.ex->model->engines.size(), 2u);
  EXPECT_EQ(l.ex->model->engines[0].id, "west");
  EXPECT_DOUBLE_EQ(l.ex->model->engines[0].max.x, 0);
  EXPECT_EQ(l.ex->model->boxes.size(), 1u);
  EXPECT_EQ(l.ex->state.robot_count(), 0u);
  EXPECT_TRUE(l.ex->model->inside_obstacle({1, 0.5}));
}

TEST_F(ArgosInline, EPucksAndEyeBotsOnTheirOwnEngines) {
  std::ofstream(dir_ / "fly.lua") << "function step() "
                                     "robot.quadrotor.set_linear_velocity(0.5, 0, 0.5) end\n";
  auto l = run(std::string(kFramework) +
               "  <controllers>\n"
               "    <lua_controller id=\"ep\"><actuators><differential_steering "
               "implementation=\"default\"/></actuators><sensors><epuck_proximity "
               "implementation=\"default\"/></sensors><params script=\"forward.lua\"/>"
               "</lua_controller>\n"
               "    <lua_controller id=\"eb\"><actuators><quadrotor_speed "
               "implementation=\"default\"/></actuators><sensors><positioning "
               "implementation=\"default\"/></sensors><params script=\"fly.lua\"/>"
               "</lua_controller>\n"
               "  </controllers>\n"
               "  <physics_engines><dynamics2d id=\"dyn2d\"/><pointmass3d id=\"pm3d\"/>"
               "</physics_engines>\n" +
               arena("    <e-puck id=\"ep0\"><body position=\"-1,0,0\"/><controller "
                     "config=\"ep\"/></e-puck>\n"
                     "    <eye-bot id=\"eb0\"><body position=\"0,1,0\"/><controller "
                     "config=\"eb\"/></eye-bot>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  const auto& m = *l.ex->model;
  const auto kind = l.ex->state.robot_kind();
  EXPECT_EQ(m.kinds[kind[0]].engine, "dynamics2d");
  EXPECT_EQ(m.kinds[kind[1]].engine, "pointmass3d");
  EXPECT_TRUE(m.kinds[kind[1]].flies);
  // The e-puck's proximity readings follow ARGoS's e-puck curve.
  std::string response;
  for (const PartDecl& p : m.kinds[kind[0]].sensors)
    if (p.type == "proximity") response = p.params.text("response");
  EXPECT_EQ(response, "epuck");
  PluginRegistry reg;
  register_builtins(reg);
  Simulation sim(std::move(*l.ex), reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  EXPECT_GT(sim.state().x()[0], -0.9);  // the e-puck drove forward (+x)
  EXPECT_GT(sim.state().x()[1], 0.5);   // the eye-bot flew towards +x
}

TEST_F(ArgosInline, ARangeOnTheRangeAndBearingSensorIsIgnoredAsArgosIgnoresItWithAWarning) {
  auto l = run(std::string(kFramework) +
               "  <controllers><lua_controller id=\"c\">\n"  // 4
               "    <actuators><differential_steering implementation=\"default\"/>"
               "<range_and_bearing implementation=\"default\"/></actuators>\n"  // 5
               "    <sensors><range_and_bearing implementation=\"medium\" medium=\"rab\" "
               "range=\"1.5\"/></sensors>\n"  // 6
               "    <params script=\"forward.lua\"/>\n"
               "  </lua_controller></controllers>\n" +
               kPhysics +
               arena("    <foot-bot id=\"fb0\"><body position=\"0,0,0\"/><controller "
                     "config=\"c\"/></foot-bot>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  EXPECT_NE(l.diags.str().find(path_ + ":6: warning: range on the <range_and_bearing> sensor is "
                                       "ignored, as ARGoS ignores it"),
            std::string::npos)
      << l.diags.str();
}

TEST_F(ArgosInline, NoiseLevelOnTheWheelsIsIgnoredAsArgosIgnoresItWithAWarning) {
  auto l = run(std::string(kFramework) +
               "  <controllers><lua_controller id=\"c\">\n"  // 4
               "    <actuators><differential_steering implementation=\"default\" "
               "noise_level=\"0.05\"/></actuators>\n"  // 5
               "    <sensors><footbot_proximity implementation=\"default\" "
               "noise_level=\"0.1\"/></sensors>\n"  // 6
               "    <params script=\"forward.lua\"/>\n"
               "  </lua_controller></controllers>\n" +
               kPhysics +
               arena("    <foot-bot id=\"fb0\"><body position=\"0,0,0\"/><controller "
                     "config=\"c\"/></foot-bot>\n"));
  ASSERT_TRUE(l.ex) << l.diags.str();
  EXPECT_NE(
      l.diags.str().find(path_ + ":5: warning: noise_level on the <differential_steering> actuator "
                                 "is ignored, as ARGoS ignores it"),
      std::string::npos)
      << l.diags.str();
  // The proximity sensor's is ARGoS's uniform noise, with ARGoS's foot-bot curve.
  const auto& kind = l.ex->model->kinds[l.ex->state.robot_kind()[0]];
  for (const PartDecl& p : kind.sensors)
    if (p.type == "proximity") {
      EXPECT_DOUBLE_EQ(p.params.real("noise_level", 0), 0.1);
      EXPECT_EQ(p.params.text("response"), "footbot");
    }
}

TEST_F(ArgosInline, ADeviceOfAnotherRobotIsRefusedAtItsLine) {
  auto l = run(std::string(kFramework) + kController + kPhysics +
               arena("    <e-puck id=\"ep0\"><body position=\"-1,0,0\"/><controller "
                     "config=\"c\"/></e-puck>\n"));
  EXPECT_FALSE(l.ex);
  EXPECT_NE(l.diags.str().find(path_ + ":6: error: <footbot_proximity> does not fit the e-puck"),
            std::string::npos)
      << l.diags.str();
}

TEST_F(ArgosInline, TheRootElementSaysItIsArgosWhateverTheExtension) {
  auto l = run(std::string(kFramework) + kController + kPhysics +
                   arena("    <foot-bot id=\"a\"><body position=\"0,0,0\"/>"
                         "<controller config=\"c\"/></foot-bot>\n"),
               "lab.xml");
  ASSERT_TRUE(l.ex) << l.diags.str();
  EXPECT_EQ(l.ex->state.robot_count(), 1u);
}

TEST_F(ArgosInline, VisualizationIsIgnoredWithAWarning) {
  auto l = run(std::string(kFramework) + kController + kPhysics + arena("") +
               "  <visualization><qt-opengl/></visualization>\n");
  ASSERT_TRUE(l.ex) << l.diags.str();
  ASSERT_EQ(l.diags.items().size(), 1u);
  EXPECT_EQ(l.diags.items()[0].severity, Diagnostic::Severity::kWarning);
  EXPECT_NE(l.diags.items()[0].message.find("<visualization> is ignored"), std::string::npos);
}

}  // namespace
}  // namespace fleetsim
