#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "part_scene.hpp"
#include "physics/spatial_grid.hpp"
#include "robots/range_and_bearing.hpp"

namespace fleetsim::testing {
namespace {

constexpr float kEps = 1e-5f;

/// A kind with a range-and-bearing receiver (`rx_bytes`, 0 = none) and emitter (`tx_bytes`,
/// 0 = none), of body height `height`.
RobotKind rab_kind(const std::string& name, double height, std::int64_t rx_bytes,
                   std::int64_t tx_bytes, double range = 3, bool blocked = false,
                   bool bodies = false) {
  RobotKind k;
  k.name = name;
  k.radius_m = 0.085;
  k.height_m = height;
  k.max_speed_m_per_s = 0.3;
  k.engine = "kinematics2d";
  if (rx_bytes > 0)
    k.sensors.push_back(
        make_part("range_and_bearing", {{"range", std::to_string(range)},
                                        {"data_size", std::to_string(rx_bytes)},
                                        {"blocked_by_obstacles", blocked ? "true" : "false"},
                                        {"blocked_by_bodies", bodies ? "true" : "false"}}));
  if (tx_bytes > 0)
    k.actuators.push_back(
        make_part("range_and_bearing", {{"data_size", std::to_string(tx_bytes)}}));
  return k;
}

constexpr std::uint16_t kEpuck = 0, kFootbot = 1;

std::vector<EntityId> senders(const SensorView& v) {
  std::vector<EntityId> out;
  for (const auto& m : v.messages) out.push_back(m.sender);
  return out;
}

TEST(RangeAndBearing, BearingIsCounterClockwiseFromTheHeadingAndRangeIsCentreToCentre) {
  PartScene s;
  EntityId rx = s.add(kFootbot, 0, 0, 0);
  EntityId ahead = s.add(kFootbot, 1, 0);
  EntityId left = s.add(kFootbot, 0, 2);
  EntityId right = s.add(kFootbot, 0, -1.5);
  EntityId behind = s.add(kFootbot, -2.5, 0);
  EntityId diag = s.add(kFootbot, 1, 1);
  SensorView v = s.sense(rx, "range_and_bearing");
  ASSERT_EQ(senders(v), (std::vector<EntityId>{ahead, left, right, behind, diag}));
  const auto& m = v.messages;
  EXPECT_NEAR(m[0].range_m, 1.0f, kEps);
  EXPECT_NEAR(m[0].horizontal_bearing, 0.0f, kEps);
  EXPECT_NEAR(m[1].range_m, 2.0f, kEps);
  EXPECT_NEAR(m[1].horizontal_bearing, kPi / 2, kEps);  // to the left: positive
  EXPECT_NEAR(m[2].range_m, 1.5f, kEps);
  EXPECT_NEAR(m[2].horizontal_bearing, -kPi / 2, kEps);  // to the right: negative
  EXPECT_NEAR(m[3].horizontal_bearing, kPi, kEps);       // behind: +pi, never -pi
  EXPECT_NEAR(m[4].range_m, std::sqrt(2.0), kEps);
  EXPECT_NEAR(m[4].horizontal_bearing, kPi / 4, kEps);
  for (const auto& msg : m) EXPECT_EQ(msg.vertical_bearing, 0.0f);  // same kind, same height
  EXPECT_FLOAT_EQ(v.scalar, 3.0f);
}

TEST(RangeAndBearing, BearingFollowsTheReceiversHeading) {
  PartScene s;
  EntityId rx = s.add(kFootbot, 0, 0, 90);  // facing +y
  s.add(kFootbot, 1, 0);                    // then on its right
  s.add(kFootbot, 0, 1);                    // straight ahead
  s.add(kFootbot, -1, -1);                  // behind, to the left
  SensorView v = s.sense(rx, "range_and_bearing");
  ASSERT_EQ(v.messages.size(), 3u);
  EXPECT_NEAR(v.messages[0].horizontal_bearing, -kPi / 2, kEps);
  EXPECT_NEAR(v.messages[1].horizontal_bearing, 0.0f, kEps);
  EXPECT_NEAR(v.messages[2].horizontal_bearing, 3 * kPi / 4, kEps);
}

TEST(RangeAndBearing, OnlyRobotsWithinRangeAreHeardAndNeverOneself) {
  PartScene s(20, {rab_kind("bot", 0.1, 10, 10, 2.0)});
  EntityId rx = s.add(0, 0, 0);
  EntityId in = s.add(0, 1.999, 0);
  s.add(0, 0, -2.001);
  EntityId edge = s.add(0, -2, 0);  // exactly 2 m: within
  s.add(0, 5, 5);
  EXPECT_EQ(senders(s.sense(rx, "range_and_bearing")), (std::vector<EntityId>{in, edge}));
}

// The grid visits cells row by row from the bottom; ids here grow from the top down (a half
// circle on the right), so grid order and id order disagree. The documented order is by id.
TEST(RangeAndBearing, MessagesComeSortedBySenderIdWhateverTheirPlace) {
  PartScene s;
  std::vector<EntityId> ids;
  for (int k = 0; k < 12; ++k) {
    double a = kPi / 2 - k * kPi / 11;
    ids.push_back(s.add(kFootbot, 2 * std::cos(a), 2 * std::sin(a)));
  }
  EntityId rx = s.add(kFootbot, 0, 0);
  EXPECT_EQ(senders(s.sense(rx, "range_and_bearing")), ids);
}

TEST(RangeAndBearing, APayloadIsHeardInTheNextTickAndPersistsUntilOverwritten) {
  PartScene s;
  EntityId a = s.add(kFootbot, 0, 0);
  EntityId b = s.add(kFootbot, 1, 0);
  // Tick 0: nothing was sent yet, but every emitter is heard (zeros), as in ARGoS.
  SensorView v = s.sense(b, "range_and_bearing");
  ASSERT_EQ(v.messages.size(), 1u);
  EXPECT_EQ(v.messages[0].sender, a);
  EXPECT_EQ(std::vector<std::uint8_t>(v.messages[0].data.begin(), v.messages[0].data.end()),
            std::vector<std::uint8_t>(10, 0));
  // A's controller writes its payload in tick 0; B does not hear it in the same tick.
  ActuatorView out = s.bind(a, "range_and_bearing");
  ASSERT_EQ(out.data.size(), 10u);
  ASSERT_EQ(out.constants.size(), 1u);
  EXPECT_EQ(out.constants[0], 10.0);
  for (std::size_t i = 0; i < 10; ++i) out.data[i] = static_cast<std::uint8_t>(i + 1);
  EXPECT_EQ(s.sense(b, "range_and_bearing").messages[0].data[0], 0);
  s.act();
  // Tick 1: heard; tick 2 (A wrote nothing new): heard again.
  for (int t = 0; t < 2; ++t) {
    v = s.sense(b, "range_and_bearing");
    ASSERT_EQ(v.messages.size(), 1u);
    EXPECT_EQ(v.messages[0].data[0], 1);
    EXPECT_EQ(v.messages[0].data[9], 10);
    s.act();
  }
}

TEST(RangeAndBearing, OnlyKindsWithTheEmitterAreHeard) {
  PartScene s(20, {rab_kind("listener", 0.1, 10, 0), rab_kind("talker", 0.1, 10, 10)});
  EntityId l1 = s.add(0, 0, 0);
  EntityId l2 = s.add(0, 1, 0);
  EntityId t = s.add(1, 0, 1);
  EXPECT_EQ(senders(s.sense(l1, "range_and_bearing")), (std::vector<EntityId>{t}));
  EXPECT_EQ(senders(s.sense(t, "range_and_bearing")), (std::vector<EntityId>{}));
  (void)l2;
}

TEST(RangeAndBearing, VerticalBearingAndRangeUseTheKindsHeights) {
  // The e-puck's device is at 0.05 m, the foot-bot's at 0.146 m.
  PartScene s(20, {rab_kind("low", 0.05, 10, 10), rab_kind("high", 0.146, 10, 10)});
  EntityId low = s.add(0, 0, 0);
  EntityId high = s.add(1, 1, 0);
  const double dz = 0.146 - 0.05;
  SensorView v = s.sense(low, "range_and_bearing");
  ASSERT_EQ(v.messages.size(), 1u);
  EXPECT_NEAR(v.messages[0].vertical_bearing, std::atan2(dz, 1.0), kEps);  // looks up
  EXPECT_NEAR(v.messages[0].range_m, std::sqrt(1 + dz * dz), kEps);
  v = s.sense(high, "range_and_bearing");
  ASSERT_EQ(v.messages.size(), 1u);
  EXPECT_NEAR(v.messages[0].vertical_bearing, -std::atan2(dz, 1.0), kEps);  // looks down
  EXPECT_NEAR(v.messages[0].horizontal_bearing, kPi, kEps);
}

TEST(RangeAndBearing, PayloadsOfAnotherSizeArePaddedWithZerosOrCut) {
  PartScene s(20, {rab_kind("small", 0.1, 4, 4), rab_kind("big", 0.1, 12, 12)});
  EntityId small = s.add(0, 0, 0);
  EntityId big = s.add(1, 1, 0);
  ActuatorView so = s.bind(small, "range_and_bearing");
  ASSERT_EQ(so.data.size(), 4u);
  for (auto& b : so.data) b = 0xAA;
  ActuatorView bo = s.bind(big, "range_and_bearing");
  ASSERT_EQ(bo.data.size(), 12u);
  for (auto& b : bo.data) b = 0xBB;
  s.act();
  SensorView v = s.sense(big, "range_and_bearing");
  ASSERT_EQ(v.messages.size(), 1u);
  std::vector<std::uint8_t> padded(12, 0);
  std::fill(padded.begin(), padded.begin() + 4, 0xAA);
  EXPECT_EQ(std::vector<std::uint8_t>(v.messages[0].data.begin(), v.messages[0].data.end()),
            padded);
  v = s.sense(small, "range_and_bearing");
  ASSERT_EQ(v.messages.size(), 1u);
  EXPECT_EQ(std::vector<std::uint8_t>(v.messages[0].data.begin(), v.messages[0].data.end()),
            std::vector<std::uint8_t>(4, 0xBB));
}

TEST(RangeAndBearing, WallsBlockMessagesOnlyWhenAsked) {
  for (bool blocked : {false, true}) {
    PartScene s(20, {rab_kind("bot", 0.1, 10, 10, 3, blocked)});
    s.model->segments.push_back({{0.5, -0.5}, {0.5, 0.5}});  // a short wall between a and b
    EntityId a = s.add(0, 0, 0);
    EntityId b = s.add(0, 1, 0);
    EntityId c = s.add(0, 1, 1.5);  // past the wall's end
    std::vector<EntityId> expected =
        blocked ? std::vector<EntityId>{c} : std::vector<EntityId>{b, c};
    EXPECT_EQ(senders(s.sense(a, "range_and_bearing")), expected) << "blocked=" << blocked;
  }
}

// ARGoS's medium checks occlusions by default: a message is lost when the line between the
// two robots' centres crosses a third robot's body. Off, everyone in range is heard.
TEST(RangeAndBearing, ARobotBehindAnotherIsNotHeardUnlessOcclusionIsOff) {
  for (bool bodies : {true, false}) {
    SCOPED_TRACE(bodies);
    PartScene s(20, {rab_kind("bot", 0.1, 10, 10, 3, false, bodies), rab_kind("mute", 0.1, 0, 0)});
    EntityId rx = s.add(0, 0, 0);
    EntityId front = s.add(0, 1, 0);
    EntityId behind = s.add(0, 2, 0);       // straight behind `front`
    EntityId aside = s.add(0, 2, 0.3);      // the line passes 0.148 m from front's centre
    EntityId past_mute = s.add(0, 0, 2);    // behind a body without a device
    s.add(1, 0, 1.05);                      // (the mute body, radius 0.085 m)
    EntityId grazing = s.add(0, -2, 0.18);  // the line passes 0.09 m from `left`
    EntityId left = s.add(0, -1, 0.0);
    const auto heard = senders(s.sense(rx, "range_and_bearing"));
    const std::vector<EntityId> expected =
        bodies ? std::vector<EntityId>{front, aside, grazing, left}
               : std::vector<EntityId>{front, behind, aside, past_mute, grazing, left};
    EXPECT_EQ(heard, expected);
    // Both ways: the hidden robot does not hear the receiver either.
    const auto back = senders(s.sense(behind, "range_and_bearing"));
    EXPECT_EQ(std::count(back.begin(), back.end(), rx), bodies ? 0 : 1);
  }
}

// The sensor lists the bodies by sectors of direction to test fewer of them; what it hears
// must be exactly what a scan of every body gives: a message from s is lost when some third
// robot's centre is closer than its radius to the segment from the receiver's centre to the
// point where that segment enters s's body. Random crowds, two radii.
TEST(RangeAndBearing, OcclusionByBodiesHearsWhatAScanOfEveryBodyHears) {
  RobotKind small = rab_kind("small", 0.1, 10, 10, 2, false, true);
  RobotKind big = rab_kind("big", 0.1, 10, 10, 2, false, true);
  big.radius_m = 0.2;
  std::uint64_t state = 12345;
  auto uniform = [&](double lo, double hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  int heard = 0, lost = 0;
  for (int scene = 0; scene < 4; ++scene) {
    PartScene s(20, {small, big});
    std::vector<EntityId> ids;
    for (int i = 0; i < 150; ++i)
      ids.push_back(s.add(uniform(0, 1) < 0.2 ? 1 : 0, uniform(-3, 3), uniform(-3, 3)));
    for (EntityId rx : ids) {
      const Vec2 p{s.state.x()[s.row(rx)], s.state.y()[s.row(rx)]};
      std::vector<EntityId> expected;
      for (EntityId tx : ids) {
        if (tx == rx) continue;
        const Vec2 q{s.state.x()[s.row(tx)], s.state.y()[s.row(tx)]};
        const double d = std::hypot(q.x - p.x, q.y - p.y);
        if (d > 2) continue;
        const double rs = s.model->kinds[s.state.robot_kind()[s.row(tx)]].radius_m;
        const Vec2 entry = p + (q - p) * ((d - rs) / d);
        bool blocked = false;
        for (EntityId o : ids) {
          if (o == rx || o == tx) continue;
          const Vec2 c{s.state.x()[s.row(o)], s.state.y()[s.row(o)]};
          const double ro = s.model->kinds[s.state.robot_kind()[s.row(o)]].radius_m;
          if (d > rs && distance_to_segment(c, {p, entry}) < ro) blocked = true;
        }
        if (!blocked) expected.push_back(tx);
        blocked ? ++lost : ++heard;
      }
      ASSERT_EQ(senders(s.sense(rx, "range_and_bearing")), expected) << "scene " << scene;
    }
  }
  EXPECT_GT(lost, 1000) << "the crowds should hide many robots";
  EXPECT_GT(heard, 1000);
}

TEST(RangeAndBearing, TheFootBotChecksOcclusionsByDefault) {
  PartScene s;
  EntityId rx = s.add(kFootbot, 0, 0);
  EntityId front = s.add(kFootbot, 1, 0);
  s.add(kFootbot, 2, 0);
  EXPECT_EQ(senders(s.sense(rx, "range_and_bearing")), (std::vector<EntityId>{front}));
}

TEST(RangeAndBearing, BadParametersAreReportedAtLoad) {
  RobotKind k = rab_kind("bot", 0.1, 10, 10);
  k.sensors[0] =
      make_part("range_and_bearing",
                {{"range", "-1"}, {"data_size", "10"}, {"blocked_by_obstacles", "false"}});
  k.actuators[0] = make_part("range_and_bearing", {{"data_size", "0"}});
  WorldModel model;
  model.kinds = {k};
  PluginRegistry reg;
  register_builtins(reg);
  resolve_interfaces(model, reg);
  WorldState state;
  Diagnostics d;
  assemble_kinds(model, state, reg, 1, d);
  EXPECT_NE(d.str().find("range must be > 0"), std::string::npos) << d.str();
  EXPECT_NE(d.str().find("data_size=0 is out of range (expected 1 to 4096 bytes)"),
            std::string::npos)
      << d.str();
}

TEST(RangeAndBearing, TheLogHeaderReadsTheRangeFromTheKind) {
  EXPECT_EQ(rab_range_m(footbot_kind()), 3.0);
  EXPECT_EQ(rab_range_m(epuck_kind()), 0.0);
  EXPECT_EQ(rab_range_m(rab_kind("x", 0.1, 10, 0, 1.25)), 1.25);
}

}  // namespace
}  // namespace fleetsim::testing
