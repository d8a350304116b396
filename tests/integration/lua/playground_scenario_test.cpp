// The DEECo playground's own scenario files (src/scenario/playground_file.hpp): the examples in
// examples/deeco/playground/ (the playground's simple-1 and predator, with a class mapping to
// Lua ports) run from the playground's format; what they show, worked out from the
// playground's rules; the same log on 1 and 2 threads; and what cannot map is reported at its
// line with what to do, status 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
const fs::path kExamples = fs::path(FLEETSIM_SOURCE_DIR) / "examples" / "deeco" / "playground";
const std::string kBasic = "cz.cuni.mff.d3s.deeco.playground.examples.basic.";

std::optional<Experiment> load(const fs::path& xml, const fs::path& log, PluginRegistry& reg,
                               Diagnostics& d, int threads = 1) {
  ExperimentOverrides o;
  o.threads = threads;
  o.log_path = log.string();
  return load_experiment(xml.string(), reg, o, d);
}

// simple-1 from the playground's file: 11 robots of the scenario's classes (kinds named after
// them: radius 3, the playground's default size; a field unit a metre, a cycle a second), the
// field 100 x 100, 500 cycles. The first robot (a SimpleRobot at field (50, 95), angle 180:
// up the field) is at field (50, 94) after one cycle, which is world (50, 6). The StaticRobot
// never moves; the SimpleRobots bounce off the walls (their heading turns by pi, never by
// anything else). The DEECo log's robot section names the Java classes with their radius.
TEST(PlaygroundScenario, SimpleOneRunsFromThePlaygroundsOwnFile) {
  const auto dir = testing::fresh_test_dir("playground");
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = load(kExamples / "simple-1.xml", dir / "simple-1.txt", reg, d);
  ASSERT_TRUE(ex) << d.str();
  EXPECT_EQ(ex->model->length_ticks, 500);
  EXPECT_EQ(ex->model->tick_period_ns, kNanosPerSecond);
  EXPECT_EQ(ex->model->arena_width_m, 100);
  EXPECT_EQ(ex->model->processing_time, 1);  // the playground's default: two rounds a tick
  Simulation sim(std::move(*ex), reg);
  sim.start();
  const WorldState& s = sim.state();
  ASSERT_EQ(s.robot_count(), 11u);
  const RobotKind& simple = sim.model().kinds[s.robot_kind()[0]];
  EXPECT_EQ(simple.name, kBasic + "SimpleRobot");
  EXPECT_EQ(simple.radius_m, 3);
  EXPECT_EQ(simple.max_speed_m_per_s, 1);
  sim.step();
  EXPECT_NEAR(s.x()[0], 50, 1e-9);
  EXPECT_NEAR(s.y()[0], 6, 1e-6);
  const double static_x = s.x()[4], static_y = s.y()[4];
  std::vector<int> bounces(s.robot_count()), other(s.robot_count());
  std::vector<double> last(s.theta().begin(), s.theta().end());
  while (!sim.done()) {
    sim.step();
    for (std::size_t i = 0; i < s.robot_count(); ++i) {
      const double turn = std::fabs(std::remainder(s.theta()[i] - last[i], 2 * kPi));
      if (turn > 1e-12) (std::fabs(turn - kPi) < 1e-9 ? bounces : other)[i] += 1;
      last[i] = s.theta()[i];
    }
  }
  sim.finish();
  EXPECT_EQ(s.x()[4], static_x);
  EXPECT_EQ(s.y()[4], static_y);
  for (std::size_t i : {0u, 2u, 3u, 5u, 8u}) {
    EXPECT_EQ(sim.model().kinds[s.robot_kind()[i]].name, kBasic + "SimpleRobot");
    EXPECT_GE(bounces[i], 2) << "robot " << i << " never bounced";
    EXPECT_EQ(other[i], 0) << "robot " << i << " turned by something else than pi";
  }
  const std::string log = testing::slurp(dir / "simple-1.txt");
  EXPECT_EQ(log.rfind("null\n100\n100\n---\n" + kBasic + "SimpleRobot,3.0\n" + kBasic +
                          "OrtogonalRobot,3.0\n",
                      0),
            0u)
      << log.substr(0, 200);
  // Cycles 0 to 500: 501 lines after the header.
  const std::size_t body = log.find("---\n---\n") + 8;
  EXPECT_EQ(std::count(log.begin() + static_cast<std::ptrdiff_t>(body), log.end(), '\n'), 501);
}

// predator from the playground's file: the ensemble alerts the prey within 20 units of the
// predator, and only those run. A user sees: a prey moves only once it has been within 20 of
// the predator; five ticks after it starts, it is farther from where the predator was then
// (as in the playground, its first step may go on along its heading: the second decision of
// the cycle, which is the one taken, finds it already reacting, and it turns its back a tick
// later); the prey never that close stay where they are; the predator roams the field.
TEST(PlaygroundScenario, PredatorsPreyRunOnlyWhenAlertedAndAway) {
  const auto dir = testing::fresh_test_dir("playground");
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = load(kExamples / "predator.xml", dir / "one.txt", reg, d);
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  const WorldState& s = sim.state();
  const std::size_t n = s.robot_count();
  ASSERT_EQ(n, 9u);
  std::vector<bool> near(n, false);
  std::vector<double> px(s.x().begin(), s.x().end()), py(s.y().begin(), s.y().end());
  // Per prey, from its first move: the predator's place then, its own, and the tick.
  struct Start {
    double pred_x, pred_y, x, y;
    Tick tick;
  };
  std::vector<std::optional<Start>> start(n);
  double roamed = 0;
  int fled = 0;
  while (!sim.done()) {
    // Within 20 of the predator now (the ensemble of the next tick sees this).
    for (std::size_t i = 1; i < n; ++i)
      near[i] = near[i] || std::hypot(s.x()[i] - s.x()[0], s.y()[i] - s.y()[0]) < 20;
    const std::vector<bool> was_near = near;
    const double pred_x = s.x()[0], pred_y = s.y()[0];
    sim.step();
    roamed += std::hypot(s.x()[0] - px[0], s.y()[0] - py[0]);
    for (std::size_t i = 1; i < n; ++i) {
      if (s.x()[i] != px[i] || s.y()[i] != py[i]) {
        EXPECT_TRUE(was_near[i]) << "prey " << i << " ran at tick " << s.tick
                                 << " without having been near the predator";
        if (!start[i]) start[i] = Start{pred_x, pred_y, px[i], py[i], s.tick};
      }
      if (start[i] && s.tick == start[i]->tick + 5) {
        const Start& a = *start[i];
        EXPECT_GT(std::hypot(s.x()[i] - a.pred_x, s.y()[i] - a.pred_y),
                  std::hypot(a.x - a.pred_x, a.y - a.pred_y))
            << "prey " << i << " did not get away from the predator";
        ++fled;
      }
    }
    std::copy(s.x().begin(), s.x().end(), px.begin());
    std::copy(s.y().begin(), s.y().end(), py.begin());
  }
  sim.finish();
  EXPECT_GE(fled, 4) << "the four prey 10 units from the predator at the start must run";
  for (std::size_t i = 1; i < n; ++i)
    if (!near[i]) EXPECT_FALSE(start[i]) << "prey " << i;
  EXPECT_GT(roamed, 200) << "the predator barely moved";
  // The same log on 2 threads.
  PluginRegistry reg2;
  register_builtins(reg2);
  auto ex2 = load(kExamples / "predator.xml", dir / "two.txt", reg2, d, 2);
  ASSERT_TRUE(ex2) << d.str();
  Simulation sim2(std::move(*ex2), reg2);
  sim2.start();
  while (!sim2.done()) sim2.step();
  sim2.finish();
  EXPECT_EQ(testing::slurp(dir / "one.txt"), testing::slurp(dir / "two.txt"));
}

// competition from the playground's file, as far as layers and objects in ensembles port it
// (examples/deeco/playground/competition.xml). What a user sees: the items show up after 20 to
// 59 of their behaviour's steps, two a cycle (processingTime 1): in the cycles 9 to 29, none
// before; a robot's energy (the "energy" layer) never exceeds 300, falls by at most one a cycle,
// and rises only within 12 units (the station's half side) of its team's station (red's at
// the top left, blue's at the bottom right); robots recharge; the items collected add up to the
// score of the run's status, and the first team to 30 ends the run before its 500 cycles with
// "wins the game!"; the same log on 1 and 2 threads.
TEST(PlaygroundScenario, CompetitionCollectsItemsAndRechargesAtTheStations) {
  const auto dir = testing::fresh_test_dir("playground");
  auto run = [&](int threads, const std::string& log, bool check) {
    PluginRegistry reg;
    register_builtins(reg);
    Diagnostics d;
    auto ex = load(kExamples / "competition.xml", dir / log, reg, d, threads);
    EXPECT_TRUE(ex) << d.str();
    if (!ex) return;
    Simulation sim(std::move(*ex), reg);
    sim.start();
    const WorldState& s = sim.state();
    auto column = [&](const ColumnStore& store, const char* name) {
      return static_cast<const double*>(store.data(store.find(name)));
    };
    std::vector<double> last(s.robot_count(), 300);
    int recharges = 0, first_shown = -1;
    // The command station (object 0) orders team red (robots 0 to 3); HackEnsemble shows its
    // orders to team blue (robots 4 to 7).
    std::deque<std::vector<double>> station_orders;  // of the last 3 ticks
    int follows = 0, follows_to_an_item = 0, hacked = 0, hacked_recent = 0;
    while (!sim.done()) {
      const Tick t = s.tick;
      // Where the robots were when the layer read them (it runs before the physics moves them).
      const std::vector<double> x0(s.x().begin(), s.x().end()), y0(s.y().begin(), s.y().end());
      sim.step();
      const double* orders = column(s.objects, "knowledge.orders");
      const double* order = column(s.robots, "knowledge.order");
      const double* enemy = column(s.robots, "knowledge.enemy_orders");
      const double* energy_now = column(s.robots, "layer.energy");
      for (std::size_t r = 0; r < 8; ++r) {
        const std::string tag = s.tags.str(s.robot_tag()[r]);
        EXPECT_EQ(tag, energy_now[r] > 0 ? std::to_string(static_cast<int>(energy_now[r]))
                                         : std::string("BROKEN"))
            << "robot " << r << "'s tag is its energy, at tick " << t;
      }
      for (std::size_t r = 0; r < 4; ++r) {
        if (order[3 * r] != 2) continue;
        ++follows;
        for (std::size_t o = 3; o < s.object_count(); ++o)
          if (s.object_x()[o] == order[3 * r + 1] && s.object_y()[o] == order[3 * r + 2]) {
            ++follows_to_an_item;
            break;
          }
      }
      station_orders.emplace_back(orders, orders + 12);
      if (station_orders.size() > 3) station_orders.pop_front();
      for (std::size_t r = 4; r < 8; ++r) {
        // (The orders of this cycle or of one of the two before; a cycle is two rounds, so
        // some are those the station held between them, which no test sees.)
        const std::vector<double> seen(enemy + 12 * r, enemy + 12 * r + 12);
        const bool recent =
            seen == std::vector<double>(12, 0.0) ||
            std::find(station_orders.begin(), station_orders.end(), seen) != station_orders.end();
        hacked += seen[0] != 0;
        hacked_recent += seen[0] != 0 && recent;
      }
      const double* energy = column(s.robots, "layer.energy");
      for (std::size_t o = 3; o < s.object_count(); ++o)  // (the items: after the stations
        if (s.object_size()[o] > 0 && first_shown < 0)    // and the counter)
          first_shown = static_cast<int>(t);
      for (std::size_t r = 0; r < s.robot_count(); ++r) {
        EXPECT_LE(energy[r], 300);
        EXPECT_GE(energy[r], last[r] - 1) << "robot " << r << " at tick " << t;
        if (energy[r] > last[r]) {
          ++recharges;
          // (Both stations are "Power Station"s: the playground charges at either.)
          EXPECT_LT(std::min(std::hypot(x0[r] - 8, y0[r] - 92), std::hypot(x0[r] - 92, y0[r] - 8)),
                    12)
              << r << " at tick " << t;
        }
        last[r] = energy[r];
      }
    }
    sim.finish();
    if (!check) return;
    EXPECT_GE(first_shown, 9);
    EXPECT_LE(first_shown, 29);
    EXPECT_GT(recharges, 0) << "no robot recharged";
    EXPECT_GT(follows, 100) << "red robot-cycles sent after an item";
    EXPECT_GE(follows_to_an_item, follows * 9 / 10) << "orders name the items' places";
    EXPECT_GT(hacked, 100) << "blue robot-cycles that saw the command station's orders";
    EXPECT_GE(hacked_recent, hacked * 9 / 10) << "orders the station had in the last 3 cycles";
    const double red = column(s.objects, "knowledge.t1")[2];
    const double blue = column(s.objects, "knowledge.t2")[2];
    EXPECT_TRUE(red >= 30 || blue >= 30) << red << "/" << blue;
    EXPECT_LT(s.tick, 500);
    EXPECT_NE(s.status.find(red >= 30 ? "Team Red wins the game!" : "Team Blue wins the game!"),
              std::string::npos)
        << s.status;
  };
  run(1, "one.txt", true);
  run(2, "two.txt", false);
  EXPECT_EQ(testing::slurp(dir / "one.txt"), testing::slurp(dir / "two.txt"));
}

// firefighters from the playground's file: a drone's extinguisher is an extra number of its
// deeco_wheels action, which the energy layer reads. Every cycle a robot tagged FIGHT has its
// extinguisher on and no other has; a robot away from the charging station that had it on
// pays at least 5 energy the next cycle; the robots go through the playground's states; the
// same log on 1 and 2 threads.
TEST(PlaygroundScenario, FirefightersFightFiresWithTheirExtinguishers) {
  const auto dir = testing::fresh_test_dir("playground");
  auto run = [&](int threads, const std::string& log, bool check) {
    PluginRegistry reg;
    register_builtins(reg);
    Diagnostics d;
    auto ex = load(kExamples / "firefighters.xml", dir / log, reg, d, threads);
    ASSERT_TRUE(ex) << d.str();
    Simulation sim(std::move(*ex), reg);
    sim.start();
    const WorldState& s = sim.state();
    auto column = [&](const char* name, std::size_t width) {
      const ColumnHandle c = s.robots.find(name);
      EXPECT_NE(c, kNoColumn) << name;
      EXPECT_EQ(s.robots.desc(c).width, width) << name;
      return static_cast<const double*>(s.robots.data(c));
    };
    std::set<std::string> tags;
    int fighting = 0, paid = 0;
    std::vector<double> energy_before(s.robot_count(), 1500);
    std::vector<bool> was_on(s.robot_count(), false);
    while (!sim.done()) {
      sim.step();
      const double* action = column("deeco_wheels", 4);  // speed, angle, extinguisher, request
      const double* layer = column("layer.energy", 21);  // energy, damage, ...
      for (std::size_t r = 0; r < s.robot_count(); ++r) {
        const std::string tag = s.tags.str(s.robot_tag()[r]);
        tags.insert(tag);
        const bool on = action[4 * r + 2] != 0;
        EXPECT_EQ(on, tag == "FIGHT") << "robot " << r << " at tick " << s.tick << ": " << tag;
        fighting += on;
        const double energy = layer[21 * r];
        // (The layer of this tick read the action of the last one.)
        if (was_on[r] && std::hypot(s.x()[r] - 55, s.y()[r] - 45) > 12.5) {
          EXPECT_LE(energy, energy_before[r] - 5) << "robot " << r << " at tick " << s.tick;
          ++paid;
        }
        was_on[r] = on;
        energy_before[r] = energy;
      }
    }
    sim.finish();
    if (!check) return;
    EXPECT_GT(fighting, 50) << "robot-cycles with the extinguisher on";
    EXPECT_GT(paid, 20);
    for (const char* state : {"ROAM", "FOLLOW", "FIGHT", "RECHARGE"})
      EXPECT_TRUE(tags.count(state)) << state;
  };
  run(1, "one.txt", true);
  run(2, "two.txt", false);
  EXPECT_EQ(testing::slurp(dir / "one.txt"), testing::slurp(dir / "two.txt"));
  // The layer says when a fire starts and when the extinguishers have put one out.
  const std::string out = (dir / "said.txt").string();
  const int raw = std::system(("cd '" + dir.string() + "' && " + std::string(FLEETSIM_BINARY_DIR) +
                               "/fleetsim run '" + (kExamples / "firefighters.xml").string() +
                               "' --quiet > '" + out + "' 2>&1")
                                  .c_str());
  ASSERT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 0) << testing::slurp(out);
  const std::string said = testing::slurp(out);
  std::size_t started = 0, out_count = 0;
  for (std::size_t at = 0; (at = said.find("a fire starts", at)) != std::string::npos; ++at)
    ++started;
  for (std::size_t at = 0; (at = said.find(" is out", at)) != std::string::npos; ++at) ++out_count;
  EXPECT_GE(started, 40u) << "about 500 / 7 fires start";
  EXPECT_GE(out_count, 10u) << said;
  EXPECT_TRUE(fs::exists(dir / "firefighters.txt")) << "the scenario's logfile, from the current "
                                                       "directory";
}

// simple-2 and simple-3 from the playground's files, in fleetsim's own fields of the maps'
// sizes (200 x 100 and 100 x 100: a wall around, two blocks; found beside the scenario, the
// current directory having no examples/maps): the OrtogonalRobots stay in the free part of
// the field, never inside a wall or a block, all move and turn away from what they touch, and
// the log is the same on 1 and 2 threads.
TEST(PlaygroundScenario, SimpleTwoAndThreeBounceInTheirFields) {
  const auto dir = testing::fresh_test_dir("playground");
  struct Case {
    const char* name;
    double width;
    std::vector<std::array<double, 4>> blocks;  // x0, y0, x1, y1 in field pixels (y down)
    std::size_t robots;
  };
  const Case cases[] = {
      {"simple-2", 200, {{110, 20, 130, 40}, {150, 60, 170, 80}}, 4},
      {"simple-3", 100, {{22, 22, 32, 32}, {78, 40, 88, 50}}, 11},
  };
  for (const Case& c : cases) {
    std::string logs[2];
    for (int threads : {1, 2}) {
      PluginRegistry reg;
      register_builtins(reg);
      Diagnostics d;
      const fs::path log = dir / (std::string(c.name) + std::to_string(threads) + ".txt");
      auto ex = load(kExamples / (std::string(c.name) + ".xml"), log, reg, d, threads);
      ASSERT_TRUE(ex) << d.str();
      Simulation sim(std::move(*ex), reg);
      sim.start();
      const WorldState& s = sim.state();
      ASSERT_EQ(s.robot_count(), c.robots);
      std::vector<double> x0(s.x().begin(), s.x().end()), y0(s.y().begin(), s.y().end());
      std::vector<int> turns(s.robot_count(), 0);
      std::vector<double> heading(s.theta().begin(), s.theta().end());
      while (!sim.done()) {
        sim.step();
        for (std::size_t r = 0; r < s.robot_count(); ++r) {
          const double x = s.x()[r], y = s.y()[r], radius = 3;
          // Inside the wall around the field (1 unit), and off each block, to 1e-6.
          EXPECT_GE(x - radius, 1 - 1e-6) << c.name << " robot " << r << " at tick " << s.tick;
          EXPECT_LE(x + radius, c.width - 1 + 1e-6) << c.name << " robot " << r;
          EXPECT_GE(y - radius, 1 - 1e-6) << c.name << " robot " << r;
          EXPECT_LE(y + radius, 99 + 1e-6) << c.name << " robot " << r;
          for (const auto& b : c.blocks) {
            const double cx = std::clamp(x, b[0], b[2]);
            const double cy = std::clamp(y, 100 - b[3], 100 - b[1]);
            EXPECT_GE(std::hypot(x - cx, y - cy), radius - 1e-6)
                << c.name << " robot " << r << " in a block at tick " << s.tick;
          }
          turns[r] += s.theta()[r] != heading[r];
          heading[r] = s.theta()[r];
        }
      }
      sim.finish();
      for (std::size_t r = 0; r < s.robot_count(); ++r) {
        EXPECT_GT(std::hypot(s.x()[r] - x0[r], s.y()[r] - y0[r]), 0) << c.name << " " << r;
        EXPECT_GT(turns[r], 0) << c.name << " robot " << r << " never turned away";
      }
      logs[threads - 1] = testing::slurp(log);
    }
    EXPECT_EQ(logs[0], logs[1]) << c.name;
  }
}

/// `fleetsim COMMAND FILE FLAGS` run in `dir`: its status and what it said.
std::pair<int, std::string> fleetsim(const std::string& command, const fs::path& file,
                                     const fs::path& dir, const std::string& flags = "") {
  const std::string out = (dir / "said.txt").string();
  const int raw = std::system(("cd '" + dir.string() + "' && " + std::string(FLEETSIM_BINARY_DIR) +
                               "/fleetsim " + command + " '" + file.string() + "' " + flags +
                               " > '" + out + "' 2>&1")
                                  .c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, testing::slurp(out)};
}
std::pair<int, std::string> check(const fs::path& file) {
  return fleetsim("check", file, file.parent_path());
}

// Several processes are refused before anything runs, at the line that asks for what runs on
// one process only: processingTime (the playground's default 1, at its root element).
TEST(PlaygroundScenario, SeveralProcessesAreRefusedAtTheLine) {
  const auto dir = testing::fresh_test_dir("playground");
  auto [status, said] = fleetsim("run", kExamples / "simple-1.xml", dir, "--processes 2");
  EXPECT_EQ(status, 2) << said;
  EXPECT_NE(said.find((kExamples / "simple-1.xml").string() +
                      ":9: error: processing_time > 0 run on one process for now"),
            std::string::npos)
      << said;
  EXPECT_FALSE(fs::exists(dir / "simple-1.txt"));
}

// What cannot map, all at once, at its line, with what to do; status 2.
TEST(PlaygroundScenario, WhatCannotMapIsReportedAtItsLine) {
  const auto dir = testing::fresh_test_dir("playground");
  std::ofstream(dir / "s.xml") << R"(<simulation cycles="10" logfile="s.txt" sizeX="50" sizeY="50">
  <robots>
    <robot class="pkg.Known" posX="10" posY="10" angle="0" arg="fast"/>
    <robot class="pkg.Unknown" posX="20" posY="10" angle="0"/>
    <robot class="pkg.Known" posX="30" posY="10" angle="0" size="0.5"/>
  </robots>
  <ensembles>
    <ensemble class="pkg.Gossip"/>
  </ensembles>
  <sensors>
    <sensor name="coords" processor="pkg.Coords"/>
  </sensors>
</simulation>
)";
  std::ofstream(dir / "classes.xml") << R"(<classes>
  <robot class="pkg.Known" type="idle"/>
</classes>
)";
  auto [status, said] = check(dir / "s.xml");
  EXPECT_EQ(status, 2) << said;
  const std::string s = (dir / "s.xml").string();
  EXPECT_NE(said.find(s + ":3: error: arg=\"fast\""), std::string::npos) << said;
  EXPECT_NE(said.find(s + ":4: error: robot class 'pkg.Unknown' has no fleetsim counterpart"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("<robot class=\"pkg.Unknown\" type=\"lua\""), std::string::npos) << said;
  EXPECT_NE(said.find(s + ":5: error: attribute 'size'"), std::string::npos) << said;
  EXPECT_NE(said.find(s + ":8: error: ensemble class 'pkg.Gossip'"), std::string::npos) << said;
  EXPECT_NE(said.find(s + ":11: error: sensor processor class 'pkg.Coords'"), std::string::npos)
      << said;
  // Without a mapping file: the scenario's root says what to write.
  fs::remove(dir / "classes.xml");
  auto [status2, said2] = check(dir / "s.xml");
  EXPECT_EQ(status2, 2);
  EXPECT_NE(said2.find(s + ":1: error: a DEECo playground scenario needs a class mapping"),
            std::string::npos)
      << said2;
}

}  // namespace
}  // namespace fleetsim
