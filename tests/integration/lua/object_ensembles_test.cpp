// Objects in ensembles (docs/experiment-format.md, <ensembles>: the `objects` and `class:NAME`
// selectors) and objects' knowledge, as the DEECo playground's competition uses them: a power
// station tells the robots of its team where it is (ChargerPositionEnsemble), an item is
// collected by the first robot within reach (CollectEnsemble) and its behaviour hides it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

std::optional<Experiment> parse(PluginRegistry& reg, const std::string& xml, Diagnostics& d,
                                const fs::path& name, int threads = 1) {
  ExperimentOverrides o;
  o.threads = threads;
  return parse_experiment(xml, name.string(), reg, o, d);
}

const double* column(const WorldState& s, bool objects, const std::string& name) {
  const ColumnStore& store = objects ? s.objects : s.robots;
  const ColumnHandle c = store.find(name);
  EXPECT_NE(c, kNoColumn) << name;
  return static_cast<const double*>(store.data(c));
}

constexpr const char* kFiles[][2] = {
    // The station (coordinator, an object) gives its position to the robots of its team.
    {"station.lua", R"(
function membership(c, m)
  return c.tag == "Power Station" and m.knowledge.team > 0 and c.knowledge.team == m.knowledge.team
end
function exchange(c, m) m.knowledge.station = {c.x, c.y} end
)"},
    // The item (coordinator) is found by the first robot within reach; the robot scores.
    {"collect.lua", R"(
function membership(c, m) return c.knowledge.found == 0 and c.class == "Item" and c.object end
function exchange(c, m)
  c.knowledge.found = 1
  c.knowledge.by = m.id
  m.knowledge.score = m.knowledge.score + 1
end
)"},
    // The item's behaviour: its team at start; hidden once found.
    {"item.lua", R"(
function step()
  if object.knowledge.found == 1 then object.size = 0; object.tag = "found" end
end
)"},
    {"station_team.lua", "function step() object.knowledge.team = 2 end\n"},
    // Robots: team 2 for the ids "a*", 1 for the others.
    {"team.lua", R"(
function step() robot.knowledge.team = (robot.id:sub(1, 1) == "a") and 2 or 1 end
)"},
};

std::string experiment(int length_ticks) {
  return R"(<fleetsim>
  <framework ticks_per_second="10" length=")" +
         std::to_string(length_ticks / 10.0) + R"("/>
  <knowledge>
    <field name="team"/><field name="station" size="2"/><field name="score"/>
    <field name="found"/><field name="by"/>
  </knowledge>
  <controllers>
    <controller id="go" type="random_walk" speed="0.1" turn_probability="0"/>
    <controller id="team" type="lua" script="team.lua"/>
    <behaviour id="item" type="lua" script="item.lua"/>
    <behaviour id="station" type="lua" script="station_team.lua"/>
  </controllers>
  <arena size="10,10">
    <robot id="a1" controller="go" position="-0.6,0" heading="0"/>
    <robot id="a2" controller="team" position="-3,-3"/>
    <robot id="b1" controller="team" position="-3,3"/>
    <object id="gem" class="Item" position="0,0" size="0.3" tag="item" behaviour="item"/>
    <object id="ps" class="Station" position="3,4" size="1" tag="Power Station" behaviour="station"/>
    <object id="rock" class="Rock" position="2,2" size="1" tag="Power Station"/>
  </arena>
  <ensembles>
    <ensemble type="lua" script="station.lua" coordinators="class:Station" members="all"/>
    <ensemble type="lua" script="collect.lua" coordinators="objects" members="all" within="0.3"/>
  </ensembles>
</fleetsim>)";
}

// The station's position reaches the robots of its team only (a1 would be of team 2 from its
// id, but random_walk sets no knowledge, so its team stays 0 and it gets nothing; a2 is of
// team 2; b1 of team 1), once the station's behaviour has set its team (tick 0) and the
// robots theirs: from tick 1. The rock, tagged as a station but of another class, is never a
// coordinator. The robot driving at the item (0.01 m a tick from 0.6 m) is within 0.3 m at
// tick 30 (31 if the float steps land a hair short): the item's knowledge says found by a1,
// a1 scored once, and the item's behaviour hid it the same tick.
TEST(ObjectEnsembles, AStationTellsItsTeamAndAnItemIsCollectedOnce) {
  const auto dir = testing::fresh_test_dir("object_ensembles");
  for (const auto& [name, text] : kFiles) std::ofstream(dir / name) << text;
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = parse(reg, experiment(50), d, dir / "collect.xml");
  ASSERT_TRUE(ex) << d.str();
  Simulation sim(std::move(*ex), reg);
  sim.start();
  const WorldState& s = sim.state();
  int found_at = -1;
  while (!sim.done()) {
    sim.step();
    if (found_at < 0 && s.object_size()[0] == 0) found_at = static_cast<int>(s.tick) - 1;
  }
  const double* station = column(s, false, "knowledge.station");
  EXPECT_EQ(station[0], 0);  // a1: team 0
  EXPECT_EQ(station[1], 0);
  EXPECT_EQ(station[2], 3);  // a2: team 2, the station's
  EXPECT_EQ(station[3], 4);
  EXPECT_EQ(station[4], 0);  // b1: team 1
  EXPECT_EQ(station[5], 0);
  EXPECT_TRUE(found_at == 30 || found_at == 31) << found_at;
  EXPECT_EQ(s.tags.str(s.object_tag()[0]), "found");
  EXPECT_EQ(column(s, true, "knowledge.found")[0], 1);
  EXPECT_EQ(column(s, true, "knowledge.by")[0], static_cast<double>(s.robot_id()[0]));
  EXPECT_EQ(column(s, false, "knowledge.score")[0], 1);  // found once, scored once
  EXPECT_EQ(column(s, false, "knowledge.score")[1], 0);
  EXPECT_EQ(column(s, true, "knowledge.found")[2], 0);  // the rock: never in reach
  sim.finish();
}

// The same bits on 1 and 2 threads.
TEST(ObjectEnsembles, SameBitsOnOneAndTwoThreads) {
  const auto dir = testing::fresh_test_dir("object_ensembles");
  for (const auto& [name, text] : kFiles) std::ofstream(dir / name) << text;
  auto run = [&](int threads) {
    PluginRegistry reg;
    register_builtins(reg);
    Diagnostics d;
    auto ex = parse(reg, experiment(40), d, dir / "collect.xml", threads);
    EXPECT_TRUE(ex) << d.str();
    Simulation sim(std::move(*ex), reg);
    sim.start();
    while (!sim.done()) sim.step();
    sim.finish();
    return sim.state().hash();
  };
  EXPECT_EQ(run(1), run(2));
}

// A class no object has, and a selector that is not one: at their lines, with what there is.
TEST(ObjectEnsembles, AnUnknownClassIsReportedAtItsLine) {
  const auto dir = testing::fresh_test_dir("object_ensembles");
  for (const auto& [name, text] : kFiles) std::ofstream(dir / name) << text;
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  auto ex = parse(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="1"/>
  <knowledge><field name="team"/></knowledge>
  <arena size="10,10"><object id="ps" class="Station" position="3,4"/></arena>
  <ensembles>
    <ensemble type="lua" script="station.lua" coordinators="class:Statoin"/>
    <ensemble type="lua" script="station.lua" members="object"/>
  </ensembles>
</fleetsim>)",
                  d, dir / "bad.xml");
  EXPECT_FALSE(ex);
  const std::string all = d.str();
  EXPECT_NE(all.find("bad.xml:6: error: coordinators=\"class:Statoin\": no object of class "
                     "'Statoin' in the arena (its classes: Station) (did you mean 'Station'?)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("bad.xml:7: error: members=\"object\" is not a selector (expected all, "
                     "kind:NAME, tag:TAG, objects or class:NAME)"),
            std::string::npos)
      << all;
}

}  // namespace
}  // namespace fleetsim
