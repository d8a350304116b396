#include "scenario/experiment.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim {
namespace {

const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/";

struct Parsed {
  std::optional<Experiment> ex;
  Diagnostics diags;
  std::string text() const { return diags.str(); }
};

Parsed parse(const std::string& xml) {
  Parsed p;
  PluginRegistry reg;
  register_builtins(reg);
  p.ex = parse_experiment(xml, "exp.xml", reg, {}, p.diags);
  return p;
}

// A valid experiment; the tests below break one thing at a time.
std::string valid(const std::string& arena_extra = "", const std::string& top_extra = "") {
  return "<fleetsim>\n"                                                         // 1
         "  <framework ticks_per_second=\"10\" length=\"2\" seed=\"3\"/>\n"     // 2
         "  <controllers>\n"                                                    // 3
         "    <controller id=\"d\" type=\"diffusion\"/>\n"                       // 4
         "  </controllers>\n"                                                   // 5
         "  <arena size=\"4,4\">\n"                                             // 6
         "    <robot id=\"a\" controller=\"d\" position=\"0,0\"/>\n"            // 7
         + arena_extra +                                                        // 8..
         "  </arena>\n" + top_extra + "</fleetsim>\n";
}

TEST(Experiment, ValidFileLoads) {
  auto p = parse(valid());
  ASSERT_TRUE(p.ex) << p.text();
  EXPECT_EQ(p.ex->state.robot_count(), 1u);
  EXPECT_EQ(p.ex->model->length_ticks, 20);
  EXPECT_EQ(p.ex->model->seed, 3u);
  EXPECT_EQ(p.ex->model->segments.size(), 4u);  // the closed arena's border
}

// A length that rounds to no tick would mean "run until the loop functions end it": a run
// asked to last 10 ms at 10 ticks per second would never stop.
TEST(Experiment, ALengthShorterThanHalfATickIsRefusedRatherThanRunningForever) {
  std::string xml = valid();
  const std::string two = "length=\"2\"";
  xml.replace(xml.find(two), two.size(), "length=\"0.01\"");
  auto p = parse(xml);
  EXPECT_FALSE(p.ex);
  EXPECT_NE(p.text().find("exp.xml:2: error: length=0.01 is shorter than half a tick (0.1 s"),
            std::string::npos)
      << p.text();
  // The same from the command line's --length, and 0 (until the loop functions end it) and
  // one tick still load.
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics d;
  ExperimentOverrides ov;
  ov.length_s = 0.04;
  EXPECT_FALSE(parse_experiment(valid(), "exp.xml", reg, ov, d));
  EXPECT_NE(d.str().find("--length 0.04 is shorter than half a tick"), std::string::npos)
      << d.str();
  for (double ok : {0.0, 0.1}) {
    Diagnostics fine;
    ov.length_s = ok;
    auto ex = parse_experiment(valid(), "exp.xml", reg, ov, fine);
    ASSERT_TRUE(ex) << fine.str();
    EXPECT_EQ(ex->model->length_ticks, ok > 0 ? 1 : 0);
  }
}

// Found by the experiment fuzzer (tests/fuzz/regressions/experiment/slow-no-robots.xml): with
// no robot in the run, placement used 1 mm cells, 600 MB and seconds for a 40 m arena.
TEST(Experiment, ArenaWithoutRobotsIsCheap) {
  auto peak_kb = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
  };
  const long before = peak_kb();
  auto p = parse(
      "<fleetsim>\n"
      "  <framework/>\n"
      "  <arena size=\"40,40\">\n"
      "    <object id=\"o\" class=\"Box\" position=\"1,1\" size=\"0.3\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n");
  ASSERT_TRUE(p.ex) << p.text();
  EXPECT_EQ(p.ex->state.robot_count(), 0u);
  EXPECT_LT(peak_kb() - before, 64 * 1024) << "KB of peak memory for an empty arena";
}

// Found by the experiment fuzzer in CI (tests/fuzz/regressions/experiment/slow-million.xml): a
// valid file asking for a million robots takes seconds to place, beyond the fuzzer's timeout.
// The harness bounds the placement tries; a file over the bound is refused, naming the
// element, and one under it places every robot as without the bound.
TEST(Experiment, PlacementTriesCanBeBounded) {
  const std::string arena = "    <distribute count=\"200\" controller=\"d\"/>\n";
  auto run = [&](std::optional<std::int64_t> bound) {
    Parsed p;
    PluginRegistry reg;
    register_builtins(reg);
    ExperimentOverrides ov;
    ov.max_placement_tries = bound;
    p.ex = parse_experiment(valid(arena), "exp.xml", reg, ov, p.diags);
    return p;
  };
  auto free = run(std::nullopt), roomy = run(100'000), tight = run(150);
  ASSERT_TRUE(free.ex) << free.text();
  ASSERT_TRUE(roomy.ex) << roomy.text();
  EXPECT_EQ(roomy.ex->state.robot_count(), 201u);
  EXPECT_EQ(roomy.ex->state.hash(), free.ex->state.hash());
  EXPECT_FALSE(tight.ex);
  EXPECT_NE(tight.text().find("exp.xml:8: error: placing the robots takes more than 150 random "
                              "tries in all"),
            std::string::npos)
      << tight.text();
}

TEST(Experiment, MalformedTruncatedEmptyAndBinaryFiles) {
  EXPECT_NE(parse("<fleetsim><framework></fleetsim>").text().find("exp.xml:1: error: malformed XML"),
            std::string::npos);
  std::string v = valid();
  auto truncated = parse(v.substr(0, v.size() / 2));
  EXPECT_FALSE(truncated.ex);
  EXPECT_NE(truncated.text().find("truncated"), std::string::npos) << truncated.text();
  EXPECT_NE(parse("  \n").text().find("exp.xml:1: error: file is empty"), std::string::npos);
  EXPECT_NE(parse(std::string("\x89PNG\r\n\x1a\n\0\0", 10)).text().find("binary"), std::string::npos);
}

TEST(Experiment, UnknownElementAndAttributeSuggestTheRightName) {
  auto p = parse(valid("    <robott id=\"b\"/>\n", "  <log path=\"x\" evry=\"2\"/>\n"));
  EXPECT_FALSE(p.ex);
  EXPECT_NE(p.text().find("exp.xml:8: error: unknown element <robott> in <arena>"), std::string::npos)
      << p.text();
  EXPECT_NE(p.text().find("did you mean 'robot'?"), std::string::npos);
  EXPECT_NE(p.text().find("exp.xml:10: error: unknown attribute 'evry' on <log>"), std::string::npos)
      << p.text();
  EXPECT_NE(p.text().find("did you mean 'every'?"), std::string::npos);
}

TEST(Experiment, WrongTypesRangesAndNonFiniteNumbers) {
  auto p = parse(valid("    <robot id=\"b\" controller=\"d\" position=\"1,nan\"/>\n"
                       "    <robot id=\"c\" controller=\"d\" position=\"1,inf\"/>\n"
                       "    <distribute count=\"many\" controller=\"d\"/>\n"
                       "    <distribute count=\"-3\" controller=\"d\"/>\n"));
  EXPECT_FALSE(p.ex);
  const std::string t = p.text();
  EXPECT_NE(t.find("exp.xml:8: error: attribute 'position' of <robot> is '1,nan'"), std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:9: error: attribute 'position' of <robot> is '1,inf'"), std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:10: error: attribute 'count' of <distribute> is 'many' (expected an integer)"),
            std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:11: error: attribute 'count' of <distribute> is -3 (expected an integer between 1"),
            std::string::npos) << t;
}

TEST(Experiment, BitmapMissingOrNotPng) {
  auto missing = parse(valid("    <bitmap file=\"" + kData + "nope.png\" resolution=\"0.1\"/>\n"));
  EXPECT_NE(missing.text().find("exp.xml:8: error: cannot open bitmap"), std::string::npos)
      << missing.text();
  auto notpng = parse(valid("    <bitmap file=\"" + kData + "not-a-png.png\" resolution=\"0.1\"/>\n"));
  EXPECT_NE(notpng.text().find("is not a PNG file"), std::string::npos) << notpng.text();
}

TEST(Experiment, RobotsOutsideOrOverlapping) {
  auto p = parse(valid("    <robot id=\"out\" controller=\"d\" position=\"1.99,0\"/>\n"
                       "    <robot id=\"over\" controller=\"d\" position=\"0.05,0\"/>\n"
                       "    <wall from=\"1,-1\" to=\"1,1\"/>\n"
                       "    <robot id=\"wall\" controller=\"d\" position=\"1.02,0.5\"/>\n"
                       "    <box center=\"-1,-1\" size=\"0.5,0.5\"/>\n"
                       "    <robot id=\"inbox\" controller=\"d\" position=\"-1,-1\"/>\n"));
  EXPECT_FALSE(p.ex);
  const std::string t = p.text();
  EXPECT_NE(t.find("exp.xml:8: error: robot 'out' at (1.99, 0) lies outside the arena"), std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:9: error: robot 'over' at (0.05, 0) overlaps robot 'a'"), std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:11: error: robot 'wall' at (1.02, 0.5) overlaps an obstacle"), std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:13: error: robot 'inbox' at (-1, -1) lies inside an obstacle"), std::string::npos) << t;
}

TEST(Experiment, UnknownPluginNamesAndLibrariesThatDoNotLoad) {
  std::string xml = valid("", "  <loop_functions type=\"tag_on_contakt\"/>\n");
  xml.replace(xml.find("type=\"diffusion\""), 16, "type=\"difusion\"");
  auto p = parse(xml);
  const std::string t = p.text();
  EXPECT_NE(t.find("exp.xml:4: error: unknown controller type 'difusion'"), std::string::npos) << t;
  EXPECT_NE(t.find("did you mean 'diffusion'?"), std::string::npos) << t;
  EXPECT_NE(t.find("exp.xml:9: error: unknown loop functions 'tag_on_contakt'"), std::string::npos) << t;
  EXPECT_NE(t.find("did you mean 'tag_on_contact'?"), std::string::npos) << t;

  std::string lib = valid();
  lib.insert(lib.find("  <controllers>"),
             "  <plugins><library path=\"" + kData + "not-a-library.so\"/></plugins>\n");
  auto q = parse(lib);
  EXPECT_NE(q.text().find("exp.xml:3: error: plug-in library"), std::string::npos) << q.text();
  EXPECT_NE(q.text().find("does not load"), std::string::npos) << q.text();
}

TEST(Experiment, DistributeThatCannotFitSaysSo) {
  auto p = parse(valid("    <distribute count=\"5000\" controller=\"d\" max_tries=\"50\"/>\n"));
  EXPECT_FALSE(p.ex);
  EXPECT_NE(p.text().find("exp.xml:8: error: could not place robot"), std::string::npos) << p.text();
  EXPECT_NE(p.text().find("after 50 random tries"), std::string::npos);
}

TEST(Experiment, EngineRegionsMustTileTheArena) {
  auto overlap = parse(valid("", "  <physics>\n    <kinematics2d id=\"a\" region=\"-2,-2,0.5,2\"/>\n"
                                 "    <kinematics2d id=\"b\" region=\"0,-2,2,2\"/>\n  </physics>\n"));
  EXPECT_NE(overlap.text().find("exp.xml:11: error: engine 'b' region overlaps engine 'a'"),
            std::string::npos) << overlap.text();
  auto gap = parse(valid("", "  <physics>\n    <kinematics2d id=\"a\" region=\"-2,-2,0,2\"/>\n  </physics>\n"));
  EXPECT_NE(gap.text().find("expected regions of each engine type that tile the whole arena"), std::string::npos)
      << gap.text();
  auto ok = parse(valid("", "  <physics>\n    <kinematics2d id=\"a\" region=\"-2,-2,0,2\"/>\n"
                            "    <kinematics2d id=\"b\" region=\"0,-2,2,2\"/>\n  </physics>\n"));
  EXPECT_TRUE(ok.ex) << ok.text();
}

TEST(Experiment, EngineTypesAndTheKindsTheyAccept) {
  // Regions of different types are views of the same space: they may overlap.
  const std::string kinds =
      "  <kinds>\n    <kind name=\"rigid\" base=\"epuck\" engine=\"dynamics2d\"/>\n  </kinds>\n";
  auto both = parse(valid("    <robot id=\"r\" kind=\"rigid\" controller=\"d\" position=\"1,1\"/>\n",
                          kinds + "  <physics>\n    <kinematics2d/>\n    <dynamics2d/>\n  </physics>\n"));
  // The epuck of valid() does not say which of the two types accepts it.
  EXPECT_NE(both.text().find("robot kind 'epuck' does not say which physics engine type accepts "
                             "it, and the experiment declares kinematics2d, dynamics2d"),
            std::string::npos)
      << both.text();
  // A kind whose engine type the experiment does not declare, at the kind's line.
  auto missing = parse(valid("    <robot id=\"r\" kind=\"rigid\" controller=\"d\" position=\"1,1\"/>\n",
                             kinds));
  EXPECT_NE(missing.text().find("robot kind 'rigid' needs a dynamics2d engine, and the experiment "
                                "declares none"),
            std::string::npos)
      << missing.text();
  // One type declared: every kind goes to it, and the robots' engines are of that type.
  auto only = parse(valid("", "  <physics><dynamics2d id=\"dyn\"/></physics>\n"));
  ASSERT_TRUE(only.ex) << only.text();
  EXPECT_EQ(only.ex->model->engines.at(0).type, "dynamics2d");
  EXPECT_EQ(only.ex->model->kinds.at(0).engine, "dynamics2d");
  EXPECT_NE(only.ex->state.robots.find("body_omega"), kNoColumn);
  // An unknown engine element names the known ones.
  auto unknown = parse(valid("", "  <physics><bullet3d/></physics>\n"));
  EXPECT_NE(unknown.text().find("bullet3d"), std::string::npos) << unknown.text();
  EXPECT_NE(unknown.text().find("dynamics2d"), std::string::npos) << unknown.text();
}

// A Lua script that does not exist is reported where its path is written: the <controller>
// element's script attribute (on its own line here), once, however the controller is
// referenced: by a robot of a given kind, by a <distribute>, by both, or by none.
TEST(Experiment, AMissingScriptIsReportedAtTheScriptAttributeOfItsController) {
  const std::string head =
      "<fleetsim>\n"                                           // 1
      "  <framework ticks_per_second=\"10\" length=\"1\"/>\n"  // 2
      "  <controllers>\n"                                      // 3
      "    <controller id=\"walk\" type=\"lua\"\n"             // 4
      "                script=\"no/such/walk.lua\"/>\n"        // 5
      "  </controllers>\n"                                     // 6
      "  <arena size=\"4,4\">\n";                              // 7
  const std::string tail = "  </arena>\n</fleetsim>\n";
  const std::vector<std::string> uses = {
      "    <robot id=\"a\" kind=\"footbot\" controller=\"walk\" position=\"0,0\"/>\n",
      "    <distribute count=\"3\" controller=\"walk\" id_prefix=\"r\"/>\n",
      "    <robot id=\"a\" kind=\"footbot\" controller=\"walk\" position=\"0,0\"/>\n"
      "    <distribute count=\"3\" kind=\"epuck\" controller=\"walk\" id_prefix=\"r\"/>\n",
      ""};
  for (const std::string& use : uses) {
    auto p = parse(head + use + tail);
    EXPECT_FALSE(p.ex) << use;
    ASSERT_EQ(p.diags.error_count(), 1) << use << p.text();
    EXPECT_EQ(p.diags.items()[0].where.line, 5) << use << p.text();
    EXPECT_NE(p.text().find("exp.xml:5: error: parameter 'script' of <controller type=\"lua\"> "
                            "names 'no/such/walk.lua', which is not a file"),
              std::string::npos)
        << use << p.text();
  }
}

// A script that loads but defines no step() is the controller's fault, not the robot's: the
// error is at the <controller> element, for a robot as for a <distribute>.
TEST(Experiment, AScriptWithoutStepIsReportedAtItsController) {
  const auto dir = std::filesystem::path(FLEETSIM_BINARY_DIR) / "test-output" / "no_step";
  std::filesystem::create_directories(dir);
  const std::string script = (dir / "no_step.lua").string();
  std::ofstream(script) << "function init() end\n";
  for (const std::string use :
       {"    <robot id=\"a\" kind=\"footbot\" controller=\"idle\" position=\"0,0\"/>\n",
        "    <distribute count=\"3\" controller=\"idle\" id_prefix=\"r\"/>\n"}) {
    auto p = parse(
        "<fleetsim>\n"
        "  <framework ticks_per_second=\"10\" length=\"1\"/>\n"
        "  <controllers>\n"
        "    <controller id=\"idle\" type=\"lua\" script=\"" +
        script +
        "\"/>\n"
        "  </controllers>\n"
        "  <arena size=\"4,4\">\n" +
        use + "  </arena>\n</fleetsim>\n");
    EXPECT_FALSE(p.ex);
    ASSERT_EQ(p.diags.error_count(), 1) << p.text();
    EXPECT_EQ(p.diags.items()[0].where.line, 4) << use << p.text();
    EXPECT_NE(p.text().find("defines no global function step()"), std::string::npos) << p.text();
  }
}

TEST(Experiment, PassiveBodiesNeedNoControllerAndBoxesNeedARigidBodyEngine) {
  // A cylinder (no parts) needs no controller; an e-puck still does.
  auto p = parse(valid("    <robot id=\"c\" kind=\"cylinder\" position=\"1,1\"/>\n"
                       "    <robot id=\"e\" position=\"-1,-1\"/>\n"));
  EXPECT_NE(p.text().find("exp.xml:9: error: <robot> is missing attribute 'controller'"),
            std::string::npos)
      << p.text();
  EXPECT_EQ(p.text().find("exp.xml:8:"), std::string::npos) << p.text();
  auto ok = parse(valid("    <robot id=\"c\" kind=\"cylinder\" position=\"1,1\"/>\n"));
  ASSERT_TRUE(ok.ex) << ok.text();
  EXPECT_TRUE(ok.ex->model->kinds.at(ok.ex->state.robot_kind()[1]).passive);
  // kinematics2d bodies are circles: a box is refused where it is placed.
  auto box = parse(valid("    <robot id=\"b\" kind=\"box\" position=\"1,1\"/>\n"));
  EXPECT_NE(box.text().find("exp.xml:8: error: robot kind 'box' cannot be simulated by "
                            "kinematics2d: kinematics2d bodies are circles"),
            std::string::npos)
      << box.text();
  auto rigid = parse(valid("    <robot id=\"b\" kind=\"box\" position=\"1,1\"/>\n",
                           "  <physics><dynamics2d/></physics>\n"));
  EXPECT_TRUE(rigid.ex) << rigid.text();
  // Masses and box sizes are checked.
  auto bad = parse(valid("", "  <kinds>\n    <kind name=\"k\" base=\"box\" mass=\"0\" size=\"1,-2\"/>\n"
                             "    <kind name=\"r\" base=\"cylinder\" size=\"1,1\"/>\n  </kinds>\n"));
  for (const char* want : {"mass of kind 'k' is not positive", "size of kind 'k' is not two lengths",
                           "attribute 'size' is for box-shaped kinds"})
    EXPECT_NE(bad.text().find(want), std::string::npos) << want << "\n" << bad.text();
}

// Found by the experiment fuzzer (regressions/experiment/part-error-without-file.xml): with
// the arena broken there is no engine, and a built-in flyer's actuator, whose part has no line
// of its own, reported an error without a file. Every error names the file now, and an
// engine's parameters are read (not called unknown) even when the arena is broken.
TEST(Experiment, EveryErrorNamesTheFileEvenForBuiltInKindsParts) {
  auto p = parse("<fleetsim>\n  <framework/>\n"
                 "  <controllers><controller id=\"w\" type=\"idle\"/></controllers>\n"
                 "  <arena sise=\"4,4\">\n"
                 "    <robot id=\"y\" kind=\"eyebot\" controller=\"w\" position=\"0,0\"/>\n"
                 "  </arena>\n"
                 "  <physics><pointmass3d ceiling=\"5\"/></physics>\n"
                 "</fleetsim>\n");
  EXPECT_FALSE(p.ex);
  ASSERT_TRUE(p.diags.has_errors());
  for (const auto& d : p.diags.items()) EXPECT_EQ(d.where.file, "exp.xml") << d.message;
  EXPECT_EQ(p.text().find("unknown attribute 'ceiling'"), std::string::npos) << p.text();
}

// Found by the experiment fuzzer (regressions/experiment/huge-arena.xml): a 2.4e24 m arena
// overflowed placement's cell count (an int) before its cap applied. Arenas are bounded at
// 1,000 km now, and the count is taken in doubles.
TEST(Experiment, ArenasBeyondAThousandKilometresAreRefused) {
  auto huge = parse("<fleetsim>\n  <framework/>\n  <arena size=\"2444444444444444444444446,40\"/>\n"
                    "</fleetsim>\n");
  EXPECT_NE(huge.text().find("exp.xml:3: error: arena size or center beyond 1,000 km"),
            std::string::npos)
      << huge.text();
  auto far = parse("<fleetsim>\n  <framework/>\n  <arena size=\"4,4\" center=\"0,5e6\"/>\n</fleetsim>\n");
  EXPECT_FALSE(far.ex);
  auto big = parse("<fleetsim>\n  <framework/>\n  <arena size=\"1000000,1000000\"/>\n</fleetsim>\n");
  EXPECT_TRUE(big.ex) << big.text();
}

TEST(Experiment, Dynamics2dParametersAreChecked) {
  auto bad = parse(valid("", "  <physics>\n    <dynamics2d sub_steps=\"0\" robot_mass=\"-1\"\n"
                             "      max_force=\"nan\" velocity_iterations=\"1000\"/>\n  </physics>\n"));
  EXPECT_FALSE(bad.ex);
  for (const char* want :
       {"exp.xml:10: error: engine 'dynamics2d': sub_steps=0 is out of range (expected 1 to 100)",
        "velocity_iterations=1000 is out of range", "robot_mass=-1 is not a positive finite number",
        "attribute 'max_force' of <dynamics2d> is 'nan' (expected a finite number)"})
    EXPECT_NE(bad.text().find(want), std::string::npos) << want << "\n" << bad.text();
}

TEST(Experiment, AllErrorsAreReportedAtOnce) {
  auto p = parse(valid("    <robot id=\"b\" controller=\"nobody\" position=\"0.5,0\"/>\n"
                       "    <wall from=\"0,0\" to=\"0,0\"/>\n"
                       "    <object id=\"o\" size=\"-1\" position=\"9,9\"/>\n",
                       "  <log path=\"x\" format=\"json\"/>\n"));
  EXPECT_GE(p.diags.error_count(), 4) << p.text();
}

TEST(Experiment, DistributeIsAPureFunctionOfTheSeed) {
  auto a = parse(valid("    <distribute count=\"50\" controller=\"d\"/>\n"));
  auto b = parse(valid("    <distribute count=\"50\" controller=\"d\"/>\n"));
  ASSERT_TRUE(a.ex && b.ex);
  auto xs = [](const Experiment& e) {
    return std::vector<double>(e.state.x().begin(), e.state.x().end());
  };
  EXPECT_EQ(xs(*a.ex), xs(*b.ex));
  std::string other = valid("    <distribute count=\"50\" controller=\"d\"/>\n");
  other.replace(other.find("seed=\"3\""), 8, "seed=\"4\"");
  auto c = parse(other);
  ASSERT_TRUE(c.ex);
  EXPECT_NE(xs(*a.ex), xs(*c.ex));
}

}  // namespace
// <learning> (docs/experiment-format.md): what Python's fleetsim.Env observes, commands and
// rewards, checked at load like the rest of the file.
std::string learning(const std::string& body) {
  return "<fleetsim>\n"                                                             // 1
         "  <framework ticks_per_second=\"10\" length=\"2\" seed=\"3\"/>\n"         // 2
         "  <controllers><controller id=\"e\" type=\"external\"/></controllers>\n"  // 3
         "  <arena size=\"4,4\">\n"                                                 // 4
         "    <robot id=\"a\" controller=\"e\" position=\"0,0\"/>\n"                // 5
         "  </arena>\n"                                                             // 6
         "  <learning>\n" +                                                         // 7
         body +                                                                     // 8..
         "  </learning>\n"
         "</fleetsim>\n";
}

TEST(Experiment, LearningDeclaresObservationsActionsAndRewards) {
  auto p =
      parse(learning("    <observations columns=\"proximity, x y\"/>\n"
                     "    <actions columns=\"differential_drive\"/>\n"
                     "    <reward type=\"target\" weight=\"2\" at=\"1,-1\"/>\n"
                     "    <reward type=\"neighbours\"/>\n"));
  ASSERT_TRUE(p.ex) << p.text();
  const LearningSpec& l = p.ex->learning;
  EXPECT_EQ(*l.observations, (std::vector<std::string>{"proximity", "x", "y"}));
  EXPECT_EQ(*l.actions, (std::vector<std::string>{"differential_drive"}));
  ASSERT_EQ(l.rewards->size(), 2u);
  EXPECT_EQ((*l.rewards)[0].type, "target");
  EXPECT_EQ((*l.rewards)[0].weight, 2.0);
  EXPECT_EQ((*l.rewards)[0].params.text("at"), "1,-1");
  EXPECT_EQ((*l.rewards)[1].params.text("radius"), "0.3");  // its documented default
  // Without <learning> nothing is declared: Python's arguments (or its defaults) decide.
  auto none = parse(valid());
  ASSERT_TRUE(none.ex);
  EXPECT_FALSE(none.ex->learning.observations || none.ex->learning.actions ||
               none.ex->learning.rewards);
}

TEST(Experiment, LearningsUnknownColumnsAndTermsAreReportedAllAtOnce) {
  auto p =
      parse(learning("    <observations columns=\"proximty x name\"/>\n"            // 8
                     "    <actions columns=\"x differential_drive\"/>\n"            // 9
                     "    <reward type=\"centriod\"/>\n"                            // 10
                     "    <reward type=\"target\" at=\"here\" weight=\"1\"/>\n"     // 11
                     "    <reward type=\"neighbours\" radius=\"-1\" far=\"2\"/>\n"  // 12
                     "    <penalty/>\n"));                                          // 13
  EXPECT_FALSE(p.ex);
  const std::string text = p.text();
  for (const char* want :
       {"exp.xml:8: error: <observations>: no robot column 'proximty'", "did you mean 'proximity'",
        "exp.xml:8: error: <observations>: observation column 'name' holds strings",
        "exp.xml:9: error: <actions>: action column 'x' is not a command column",
        "exp.xml:10: error: unknown reward term 'centriod' (expected one of: target, centroid, "
        "collision, neighbours",
        "exp.xml:11: error: reward 'target': at=\"here\" is not a point",
        "exp.xml:12: error: reward 'neighbours': radius must be", "exp.xml:12", "far",
        "exp.xml:13"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

TEST(Experiment, LearningNeedsAgents) {
  std::string xml = learning("    <reward type=\"centroid\"/>\n");
  xml.replace(xml.find("type=\"external\""), 15, "type=\"diffusion\"");
  auto p = parse(xml);
  EXPECT_FALSE(p.ex);
  EXPECT_NE(p.text().find("exp.xml:7: error: <learning>, but no robot has the `external` "
                          "controller"),
            std::string::npos)
      << p.text();
}

}  // namespace fleetsim
