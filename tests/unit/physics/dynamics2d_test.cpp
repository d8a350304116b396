// The dynamics2d engine (Box2D) through whole experiments: robots stop against walls and push
// each other, the collision sensor reports the contacts, results are the same bits for any
// thread count, and a mixed run keeps each kind in its engine type.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_features.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "support/robot_rows.hpp"

namespace fleetsim::testing {
namespace {

struct D2Run {
  PluginRegistry registry;
  std::unique_ptr<Simulation> sim;
  Diagnostics diags;
  explicit D2Run(const std::string& xml, int threads = 1) {
    register_builtins(registry);
    ExperimentOverrides ov;
    ov.threads = threads;
    auto ex = parse_experiment(xml, "d2.xml", registry, ov, diags);
    if (!ex) throw std::runtime_error(diags.str());
    sim = std::make_unique<Simulation>(std::move(*ex), registry);
  }
  void steps(int n) {
    for (int i = 0; i < n; ++i) sim->step();
  }
  std::uint32_t row(const std::string& name) const {
    return testing::robot_row(sim->state(), name);
  }
  Vec2 pos(const std::string& name) const { return testing::robot_position(sim->state(), name); }
};

// A 4 m arena; `straight` drives ahead at 0.1 m/s whatever it sees (delta is never reached).
std::string arena(const std::string& bodies,
                  const std::string& physics = "  <physics><dynamics2d/></physics>\n") {
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"0\" seed=\"5\"/>\n"
         "  <controllers>\n"
         "    <controller id=\"straight\" type=\"diffusion\" delta=\"1000\" speed=\"0.1\"/>\n"
         "    <controller id=\"still\" type=\"idle\"/>\n"
         "    <controller id=\"diffuse\" type=\"diffusion\"/>\n"
         "  </controllers>\n"
         "  <arena size=\"4,4\">\n" +
         bodies + "  </arena>\n" + physics + "</fleetsim>\n";
}

TEST(Dynamics2d, ARobotDrivingIntoAWallStopsAgainstItAndFeelsIt) {
  D2Run run(
      arena("    <wall from=\"1,-1\" to=\"1,1\"/>\n"
            "    <robot id=\"a\" controller=\"straight\" position=\"0,0\"/>\n"));
  run.steps(150);  // 1.5 m of commanded motion, the wall 1 m ahead
  const double r = 0.035;
  const Vec2 p = run.pos("a");
  EXPECT_LT(p.x, 1 - r + 0.001) << "the robot went through the wall";
  EXPECT_GT(p.x, 1 - r - 0.005) << "the robot stopped short of the wall";
  EXPECT_NEAR(p.y, 0, 1e-3);
  const auto i = run.row("a");
  ASSERT_EQ(run.sim->state().contact_count()[i], 1);
  EXPECT_NEAR(run.sim->state().contact_angle()[i * kMaxContacts], 0, 0.05) << "contact ahead";
  EXPECT_LT(run.sim->state().realization()[i], 0.1f);
}

TEST(Dynamics2d, ARobotPushesAnotherWhereKinematicsStopsAtContact) {
  const std::string bodies =
      "    <robot id=\"pusher\" controller=\"straight\" position=\"-1,0\"/>\n"
      "    <robot id=\"pushed\" controller=\"still\" position=\"-0.5,0\"/>\n";
  D2Run dyn(arena(bodies));
  D2Run kin(arena(bodies, "  <physics><kinematics2d/></physics>\n"));
  dyn.steps(100);
  kin.steps(100);
  // 1 m of commanded motion: kinematics stops at contact, dynamics pushes the idle robot along.
  EXPECT_NEAR(kin.pos("pushed").x, -0.5, 1e-9);
  EXPECT_GT(dyn.pos("pushed").x, -0.3);
  EXPECT_GT(dyn.pos("pusher").x, -0.6);
  // Pushing costs: the pair is slower than the commanded 0.1 m/s, and both feel the contact.
  EXPECT_LT(dyn.pos("pusher").x, 0.0);
  EXPECT_EQ(dyn.sim->state().contact_count()[dyn.row("pushed")], 1);
  EXPECT_EQ(dyn.sim->state().contact_count()[dyn.row("pusher")], 1);
}

std::string swarm(const std::string& physics) {
  return arena(
      "    <wall from=\"0,-1\" to=\"0,1\"/>\n"
      "    <distribute count=\"150\" controller=\"diffuse\"/>\n",
      physics);
}

TEST(Dynamics2d, SameBitsForOneAndTwoThreadsWithRegionsStepedInParallel) {
  const std::string xml = swarm(
      "  <physics>\n"
      "    <dynamics2d id=\"w\" region=\"-2,-2,0,2\" sub_steps=\"3\"/>\n"
      "    <dynamics2d id=\"e\" region=\"0,-2,2,2\" sub_steps=\"3\"/>\n"
      "  </physics>\n");
  D2Run one(xml, 1), two(xml, 2);
  for (int k = 0; k < 4; ++k) {
    one.steps(50);
    two.steps(50);
    ASSERT_EQ(one.sim->state().hash(), two.sim->state().hash())
        << "after " << (k + 1) * 50 << " ticks";
  }
  // And the robots moved, and the velocity columns are part of the state.
  const auto& st = one.sim->state();
  EXPECT_NE(st.robots.find("body_vx"), kNoColumn);
  double moved = 0;
  D2Run start(xml, 1);
  for (std::size_t i = 0; i < st.robot_count(); ++i)
    moved += std::abs(st.x()[i] - start.sim->state().x()[i]);
  EXPECT_GT(moved / static_cast<double>(st.robot_count()), 0.2);
}

// A crowd in one region (40 robots/m², a quarter of the floor covered): robots that meet
// nothing move without Box2D, the others in Box2D worlds of a few groups each, stepped in
// parallel. Whatever the thread count the bits are the same, and no two robots end a tick
// overlapping by more than Box2D lets bodies pushed from several sides overlap (its slop is
// 0.5 mm; all of the crowd in one Box2D world overlaps by up to 1.7 mm here). A contact
// missed for a tick would let two robots overlap by up to their approach in a tick, 2.6 cm.
TEST(Dynamics2d, ACrowdInOneRegionGivesTheSameBitsOnOneToThreeThreadsAndNoOverlap) {
  const std::string xml = arena(
      "    <wall from=\"-1,-1\" to=\"1,-1\"/>\n"
      "    <distribute count=\"640\" controller=\"diffuse\"/>\n");
  D2Run one(xml, 1), two(xml, 2), three(xml, 3);
  const double r = 0.035;
  double deepest = 0;
  int touching = 0;
  for (int k = 0; k < 10; ++k) {
    for (D2Run* run : {&one, &two, &three}) run->steps(10);
    ASSERT_EQ(one.sim->state().hash(), two.sim->state().hash()) << "after " << (k + 1) * 10;
    ASSERT_EQ(one.sim->state().hash(), three.sim->state().hash()) << "after " << (k + 1) * 10;
    const auto& st = one.sim->state();
    for (std::size_t i = 0; i < st.robot_count(); ++i) {
      touching += st.contact_count()[i] > 0;
      for (std::size_t j = i + 1; j < st.robot_count(); ++j) {
        const double d = std::hypot(st.x()[i] - st.x()[j], st.y()[i] - st.y()[j]);
        deepest = std::max(deepest, 2 * r - d);
      }
    }
  }
  EXPECT_LT(deepest, 0.0025) << "two robots overlap";
  EXPECT_GT(touching, 100) << "the crowd's robots push each other";
}

// The free paths (the robots that touch nothing, and each grouped robot's path until it enters
// Box2D) are computed four lanes wide on AVX2 and one at a time on the baseline path: the same
// operations, so the same states after a crowd's 60 ticks (free robots, groups, robots pushed).
TEST(Dynamics2d, BothSimdPathsGiveTheSameStates) {
  const SimdPath before = simd_path();
  if (set_simd_path(SimdPath::kAvx2) != SimdPath::kAvx2) GTEST_SKIP() << "no AVX2 here";
  const std::string xml = arena(
      "    <wall from=\"-1,-1\" to=\"1,-1\"/>\n"
      "    <distribute count=\"400\" controller=\"diffuse\"/>\n");
  auto hashes = [&] {
    D2Run run(xml, 2);
    std::vector<std::uint64_t> out;
    for (int k = 0; k < 6; ++k) {
      run.steps(10);
      out.push_back(run.sim->state().hash());
    }
    return out;
  };
  const auto wide = hashes();
  set_simd_path(SimdPath::kBaseline);
  const auto baseline = hashes();
  set_simd_path(before);
  EXPECT_EQ(wide, baseline);
  // Not a run that stands still: the robots moved between the hashes.
  EXPECT_NE(wide.front(), wide.back());
}

// A robot that touches nothing moves without Box2D, on its free path (the drive's impulses
// integrated in double precision); one near an obstacle goes through Box2D (single precision,
// the motor joint) whether or not it touches it. Two robots with the same commands, one in the
// open and one driving along the arena's border 5 mm from it, never touching it: both start
// at rest, accelerate (the drive's force bound holds for the first sub-steps) and cruise, and
// go the same way to well within the margin the engine keeps for the difference between the
// two (0.5 mm a tick): here 20 micrometres over 2 s.
TEST(Dynamics2d, ALoneRobotMovesAsBox2DWouldMoveIt) {
  const double r = 0.035;
  const std::string y_border = std::to_string(-2 + r + 0.005);
  D2Run run(
      arena("    <robot id=\"open\" controller=\"straight\" position=\"-1,0\"/>\n"
            "    <robot id=\"border\" controller=\"straight\" position=\"-1," +
            y_border + "\"/>\n"));
  const auto& st = run.sim->state();
  const auto a = run.row("open"), b = run.row("border");
  const Vec2 a0 = run.pos("open"), b0 = run.pos("border");
  double worst = 0;
  for (int t = 0; t < 20; ++t) {
    run.steps(1);
    const Vec2 pa = run.pos("open"), pb = run.pos("border");
    worst =
        std::max(worst, std::hypot((pa.x - a0.x) - (pb.x - b0.x), (pa.y - a0.y) - (pb.y - b0.y)));
    EXPECT_NEAR(st.theta()[a], st.theta()[b], 1e-5) << "tick " << t;
    EXPECT_EQ(st.contact_count()[b], 0) << "the border robot touched the border at tick " << t;
  }
  EXPECT_LT(worst, 20e-6);
  EXPECT_GT(run.pos("open").x - a0.x, 0.15) << "the robots drove";
}

// A robot on its free path still meets one pushed into it: an idle e-puck 4 mm beyond another
// idle one, which a foot-bot pushes (its 15 N drive beats the two e-pucks' 1.5 N brakes).
// Neither idle robot's own path comes near the other's, so only the pushed robot's path in
// Box2D says they meet; a contact missed for a tick would let them overlap by most of a tick's
// push (about a centimetre).
TEST(Dynamics2d, ARobotPushedIntoAnIdleOneMovesIt) {
  const double r = 0.035, rf = 0.085;
  D2Run run(
      arena("    <robot id=\"pusher\" kind=\"footbot\" controller=\"straight\" "
            "position=\"-0.6,0\"/>\n"
            "    <robot id=\"pushed\" controller=\"still\" position=\"-0.3,0\"/>\n"
            "    <robot id=\"next\" controller=\"still\" position=\"" +
            std::to_string(-0.3 + 2 * r + 0.004) + ",0\"/>\n"));
  const auto& st = run.sim->state();
  const double next0 = run.pos("next").x;
  double deepest = 0, jump = 0;
  bool felt = false;
  Vec2 before = run.pos("next");
  for (int t = 0; t < 60; ++t) {
    run.steps(1);
    const Vec2 p = run.pos("pushed"), q = run.pos("next"), s = run.pos("pusher");
    jump = std::max(jump, std::hypot(q.x - before.x, q.y - before.y));
    before = q;
    deepest = std::max({deepest, 2 * r - std::hypot(q.x - p.x, q.y - p.y),
                        r + rf - std::hypot(s.x - p.x, s.y - p.y)});
    felt = felt || st.contact_count()[run.row("next")] > 0;
  }
  EXPECT_LT(deepest, 0.001) << "two robots overlap";
  EXPECT_LT(jump, 0.015) << "the idle robot was thrown (pushed at 0.1 m/s: 1 cm a tick)";
  EXPECT_GT(run.pos("next").x - next0, 0.02) << "the idle robot was not pushed along";
  EXPECT_TRUE(felt) << "the idle robot's collision sensor never felt the push";
}

// A foot-bot pushes a row of six idle e-pucks 2 mm apart: in the tick it meets the first, each
// pushed e-puck's path in Box2D meets the next one's free path, one more a round, until the
// row goes into Box2D whole (the rounds' limit). No two robots overlap by more than Box2D lets
// a pushed row overlap (1.3 mm here, as in a crowd: worlds built every tick are not
// warm-started), against 8 mm for a contact missed for a tick; none is thrown, all of the row
// is pushed along, and the bits are the same on one and two threads.
TEST(Dynamics2d, ARowOfIdleRobotsPushedOneIntoTheNextMovesAsOne) {
  const double r = 0.035, rf = 0.085, gap = 0.002;
  constexpr int kRow = 6;
  auto name = [](int k) {
    std::string n = "e";
    n += std::to_string(k);
    return n;
  };
  std::string bodies =
      "    <robot id=\"pusher\" kind=\"footbot\" controller=\"straight\" "
      "position=\"-0.6,0\"/>\n";
  for (int k = 0; k < kRow; ++k) {
    bodies += "    <robot id=\"";
    bodies += name(k);
    bodies += "\" controller=\"still\" position=\"";
    bodies += std::to_string(-0.3 + k * (2 * r + gap));
    bodies += ",0\"/>\n";
  }
  D2Run one(arena(bodies), 1), two(arena(bodies), 2);
  std::vector<double> start;
  for (int k = 0; k < kRow; ++k) start.push_back(one.pos(name(k)).x);
  double deepest = 0, jump = 0;
  std::vector<Vec2> before(kRow);
  for (int k = 0; k < kRow; ++k) before[k] = one.pos(name(k));
  for (int t = 0; t < 60; ++t) {
    one.steps(1);
    two.steps(1);
    ASSERT_EQ(one.sim->state().hash(), two.sim->state().hash()) << "tick " << t;
    Vec2 prev = one.pos("pusher");
    double reach = r + rf;
    for (int k = 0; k < kRow; ++k) {
      const Vec2 q = one.pos(name(k));
      deepest = std::max(deepest, reach - std::hypot(q.x - prev.x, q.y - prev.y));
      jump = std::max(jump, std::hypot(q.x - before[k].x, q.y - before[k].y));
      before[k] = prev = q;
      reach = 2 * r;
    }
  }
  EXPECT_LT(deepest, 0.0025) << "two robots overlap";
  EXPECT_LT(jump, 0.015) << "a robot was thrown (pushed at 0.1 m/s: 1 cm a tick)";
  for (int k = 0; k < kRow; ++k)
    EXPECT_GT(one.pos(name(k)).x - start[k], 0.02) << "e" << k << " not pushed";
}

TEST(Dynamics2d, EachKindStaysInItsEngineTypeInAMixedRun) {
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"0\" seed=\"5\"/>\n"
      "  <kinds>\n"
      "    <kind name=\"rigid\" base=\"epuck\" engine=\"dynamics2d\"/>\n"
      "    <kind name=\"ghostly\" base=\"epuck\" engine=\"kinematics2d\"/>\n"
      "  </kinds>\n"
      "  <controllers><controller id=\"d\" type=\"diffusion\"/></controllers>\n"
      "  <arena size=\"4,4\">\n"
      "    <distribute count=\"60\" kind=\"rigid\" controller=\"d\" id_prefix=\"r\"/>\n"
      "    <distribute count=\"60\" kind=\"ghostly\" controller=\"d\" id_prefix=\"g\"/>\n"
      "  </arena>\n"
      "  <physics>\n"
      "    <dynamics2d id=\"dw\" region=\"-2,-2,0,2\"/>\n"
      "    <dynamics2d id=\"de\" region=\"0,-2,2,2\"/>\n"
      "    <kinematics2d id=\"k\"/>\n"
      "  </physics>\n"
      "</fleetsim>\n";
  D2Run a(xml, 1), b(xml, 2);
  const auto& model = a.sim->model();
  for (int t = 0; t < 100; ++t) {
    a.steps(1);
    b.steps(1);
    const auto& st = a.sim->state();
    for (std::size_t i = 0; i < st.robot_count(); ++i) {
      const auto& kind = model.kinds[st.robot_kind()[i]];
      ASSERT_EQ(model.engines[st.robot_engine()[i]].type, kind.engine)
          << "robot " << st.robot_name()[i] << " at tick " << t;
    }
  }
  EXPECT_EQ(a.sim->state().hash(), b.sim->state().hash());
}

}  // namespace
}  // namespace fleetsim::testing

namespace fleetsim::testing {
namespace {

// Passive bodies (kinds without parts: the built-in cylinder and box) need no controller;
// robots push them against the floor's friction; one heavier than the push can move stays.
TEST(Dynamics2d, RobotsPushLightCylindersAndBoxesButNotHeavyOnes) {
  auto scene = [](const std::string& body) {
    return arena("    <robot id=\"pusher\" controller=\"straight\" position=\"-1,0\"/>\n" + body,
                 "  <physics><dynamics2d/></physics>\n  <kinds>\n"
                 "    <kind name=\"light\" base=\"cylinder\" radius=\"0.08\" mass=\"0.2\"/>\n"
                 "    <kind name=\"heavy\" base=\"cylinder\" radius=\"0.08\" mass=\"5\"/>\n"
                 "    <kind name=\"crate\" base=\"box\" size=\"0.3,0.2\" mass=\"0.2\"/>\n"
                 "  </kinds>\n");
  };
  D2Run light(scene("    <robot id=\"b\" kind=\"light\" position=\"-0.6,0\"/>\n"));
  D2Run heavy(scene("    <robot id=\"b\" kind=\"heavy\" position=\"-0.6,0\"/>\n"));
  D2Run crate(scene("    <robot id=\"b\" kind=\"crate\" position=\"-0.6,0\" heading=\"0\"/>\n"));
  for (D2Run* r : {&light, &heavy, &crate}) r->steps(100);
  // 0.2 kg: the floor holds it with 0.98 N, the e-puck's wheels push with up to 1.5 N.
  EXPECT_GT(light.pos("b").x, -0.45) << "a light cylinder is pushed along";
  EXPECT_GT(crate.pos("b").x, -0.45) << "a light box is pushed along";
  // The e-puck's velocity control pulls with up to 1.5 N, more than the 0.98 N that hold the
  // cylinder: as in ARGoS, the pusher keeps its commanded speed (0.1 m/s for 10 s).
  EXPECT_NEAR(light.pos("pusher").x, 0.0, 0.01) << "a push within the drive's force costs no speed";
  // 5 kg: 24.5 N of friction; the push moves nothing, the pusher stalls against it.
  EXPECT_NEAR(heavy.pos("b").x, -0.6, 1e-3) << "a heavy cylinder stays put";
  EXPECT_NEAR(heavy.pos("pusher").x, -0.6 - 0.08 - 0.035, 2e-3);
  // The box is 0.3 long: the pusher stops at its back face, not at its bounding circle.
  EXPECT_NEAR(crate.pos("b").x - crate.pos("pusher").x, 0.15 + 0.035, 0.01);
}

}  // namespace
}  // namespace fleetsim::testing
