#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "part_scene.hpp"
#include "robots/camera.hpp"

namespace fleetsim::testing {
namespace {

constexpr float kEps = 1e-5f;
constexpr double kFootbotR = 0.085;
constexpr const char* kCamera = "colored_blob_omnidirectional_camera";
constexpr std::uint16_t kEpuck = 0, kFootbot = 1;
const Color kRed{255, 0, 0, 255}, kGreen{0, 255, 0, 255};

/// The foot-bot with its camera's parameters changed.
RobotKind footbot_with_camera(double range, bool blocked) {
  RobotKind k = footbot_kind();
  for (auto& p : k.sensors)
    if (p.type == kCamera)
      p = make_part(kCamera, {{"range", std::to_string(range)},
                              {"blocked_by_obstacles", blocked ? "true" : "false"}});
  return k;
}

/// The kinds of most tests below: the foot-bot with fleetsim's disc camera of 3 m (field="disc",
/// the part's default); ARGoS's view, the built-in foot-bot's, is tested at the end.
std::vector<RobotKind> disc_kinds() {
  return {epuck_kind(), footbot_with_camera(3, false)};
}

/// Sets robot `id`'s LEDs as its controller would (all off but `lit`), then runs the act phase.
void light(PartScene& s, EntityId id, std::vector<std::pair<std::size_t, Color>> lit) {
  ActuatorView v = s.bind(id, "leds");
  for (auto& c : v.colors) c = Color{0, 0, 0, 255};
  for (auto [i, c] : lit) v.colors[i] = c;
}

/// The camera of `id`, enabled.
SensorView look(PartScene& s, EntityId id) {
  SensorView v = s.sense(id, kCamera);
  if (v.enabled && !*v.enabled) {
    *v.enabled = true;
    v = s.sense(id, kCamera);
  }
  return v;
}

TEST(Camera, IsDisabledUntilTheControllerEnablesIt) {
  PartScene s(20, disc_kinds());
  EntityId a = s.add(kFootbot, 0, 0);
  EntityId b = s.add(kFootbot, 1, 0);
  light(s, b, {{12, kRed}});
  s.act();
  SensorView v = s.sense(a, kCamera);
  ASSERT_NE(v.enabled, nullptr);
  EXPECT_FALSE(*v.enabled);
  EXPECT_TRUE(v.blobs.empty());
  *v.enabled = true;
  v = s.sense(a, kCamera);
  ASSERT_EQ(v.blobs.size(), 1u);
  EXPECT_TRUE(*v.enabled);
  *v.enabled = false;
  EXPECT_TRUE(s.sense(a, kCamera).blobs.empty());
}

// The ring's LED i is (i + 1/2) * 30 degrees from the owner's heading, at its body radius; the
// beacon (12) at its centre.
TEST(Camera, BlobsAreWhereTheLedsAreSeenFromTheCamerasHeading) {
  PartScene s(20, disc_kinds());
  EntityId a = s.add(kFootbot, 0, 0, 0);
  EntityId b = s.add(kFootbot, 1, 0, 90);
  light(s, b, {{0, kGreen}, {12, kRed}});
  s.act();
  SensorView v = look(s, a);
  ASSERT_EQ(v.blobs.size(), 2u);
  const double a0 = kPi / 2 + 15 * kPi / 180;
  const double lx = 1 + kFootbotR * std::cos(a0), ly = kFootbotR * std::sin(a0);
  EXPECT_EQ(v.blobs[0].color, kGreen);
  EXPECT_NEAR(v.blobs[0].distance_m, std::hypot(lx, ly), kEps);
  EXPECT_NEAR(v.blobs[0].angle, std::atan2(ly, lx), kEps);
  EXPECT_GT(v.blobs[0].angle, 0);  // to the left of the heading
  EXPECT_EQ(v.blobs[1].color, kRed);
  EXPECT_NEAR(v.blobs[1].distance_m, 1.0f, kEps);
  EXPECT_NEAR(v.blobs[1].angle, 0.0f, kEps);
  EXPECT_FLOAT_EQ(v.scalar, 3.0f);
  EXPECT_NEAR(led_ring_angle(0, 13), 15 * kPi / 180, 1e-12);
  EXPECT_NEAR(led_ring_angle(11, 13), -15 * kPi / 180, 1e-12);
}

TEST(Camera, AnglesTurnWithTheCamerasHeading) {
  PartScene s(20, disc_kinds());
  EntityId a = s.add(kFootbot, 0, 0, 90);
  EntityId b = s.add(kFootbot, 1, 0);
  EntityId c = s.add(kFootbot, -1, 0);
  light(s, b, {{12, kRed}});
  light(s, c, {{12, kGreen}});
  s.act();
  SensorView v = look(s, a);
  ASSERT_EQ(v.blobs.size(), 2u);
  EXPECT_NEAR(v.blobs[0].angle, -kPi / 2, kEps);  // b on the right
  EXPECT_NEAR(v.blobs[1].angle, kPi / 2, kEps);   // c on the left
}

TEST(Camera, BlackLedsAreUnlitWhateverTheirAlpha) {
  PartScene s(20, disc_kinds());
  EntityId a = s.add(kFootbot, 0, 0);
  EntityId b = s.add(kFootbot, 1, 0);
  light(s, b, {{0, Color{0, 0, 0, 255}}, {1, Color{0, 0, 1, 0}}});
  s.act();
  SensorView v = look(s, a);
  ASSERT_EQ(v.blobs.size(), 1u);
  EXPECT_EQ(v.blobs[0].color, (Color{0, 0, 1, 0}));
  // LEDs never set are black (the column starts at zero): a fresh robot shows nothing.
  s.add(kFootbot, 0, 1);
  s.ready();
  EXPECT_EQ(look(s, a).blobs.size(), 1u);
}

TEST(Camera, RangeIsTestedPerLed) {
  PartScene s(20, {epuck_kind(), footbot_with_camera(1.0, false)});
  EntityId a = s.add(kFootbot, 0, 0);
  EntityId b = s.add(kFootbot, 1.05, 0);
  // Ring LED 5 (165 degrees) faces a: 0.968 m away; the beacon is 1.05 m away.
  light(s, b, {{5, kGreen}, {12, kRed}});
  s.act();
  SensorView v = look(s, a);
  ASSERT_EQ(v.blobs.size(), 1u);
  EXPECT_EQ(v.blobs[0].color, kGreen);
  EXPECT_LT(v.blobs[0].distance_m, 1.0f);
}

TEST(Camera, BlobsComeByOwnerIdThenLedIndexAndNeverFromItself) {
  PartScene s(20, disc_kinds());
  std::vector<EntityId> ids;
  for (int k = 0; k < 10; ++k) {
    double a = kPi / 2 - k * kPi / 9;
    ids.push_back(s.add(kFootbot, 2 * std::cos(a), 2 * std::sin(a)));
  }
  EntityId cam = s.add(kFootbot, 0, 0);
  for (EntityId id : ids)
    light(s, id,
          {{3, Color{static_cast<std::uint8_t>(id + 1), 0, 0, 255}},
           {12, Color{static_cast<std::uint8_t>(id + 1), 1, 0, 255}}});
  light(s, cam, {{12, kRed}});
  s.act();
  SensorView v = look(s, cam);
  ASSERT_EQ(v.blobs.size(), 2 * ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(v.blobs[2 * k].color, (Color{static_cast<std::uint8_t>(ids[k] + 1), 0, 0, 255}));
    EXPECT_EQ(v.blobs[2 * k + 1].color, (Color{static_cast<std::uint8_t>(ids[k] + 1), 1, 0, 255}));
  }
}

TEST(Camera, ASingleLedIsAtTheCentre) {
  PartScene s(20, disc_kinds());
  EntityId cam = s.add(kFootbot, 0, 0);
  EntityId e = s.add(kEpuck, 0.5, 0.5, 123);
  light(s, e, {{0, kGreen}});
  s.act();
  SensorView v = look(s, cam);
  ASSERT_EQ(v.blobs.size(), 1u);
  EXPECT_NEAR(v.blobs[0].distance_m, std::sqrt(0.5), kEps);
  EXPECT_NEAR(v.blobs[0].angle, kPi / 4, kEps);
}

TEST(Camera, WallsHideLedsOnlyWhenAsked) {
  for (bool blocked : {false, true}) {
    PartScene s(20, {epuck_kind(), footbot_with_camera(3, blocked)});
    s.model->segments.push_back({{0.5, -0.5}, {0.5, 0.5}});
    EntityId cam = s.add(kFootbot, 0, 0);
    EntityId b = s.add(kFootbot, 1, 0);
    EntityId c = s.add(kFootbot, 1, 1.5);  // past the wall's end
    light(s, b, {{12, kRed}});
    light(s, c, {{12, kGreen}});
    s.act();
    SensorView v = look(s, cam);
    ASSERT_EQ(v.blobs.size(), blocked ? 1u : 2u) << "blocked=" << blocked;
    EXPECT_EQ(v.blobs.back().color, kGreen);
  }
}

}  // namespace
}  // namespace fleetsim::testing

namespace fleetsim::testing {
namespace {

// The built-in foot-bot's camera is ARGoS's (colored_blob_omnidirectional_camera_rotzonly_
// sensor.cpp): it sees the ground square |dx|, |dy| < 0.2887 m x tan 70 deg = 0.7932 m around
// it, along the world's axes, and bodies hide LEDs from the camera on its mast.
TEST(Camera, TheFootBotSeesArgosSquareNotThreeMetres) {
  for (auto [x, y, seen] :
       {std::tuple{0.7, 0.0, true}, std::tuple{0.9, 0.0, false}, std::tuple{0.7, 0.7, true},
        std::tuple{0.0, -0.78, true}, std::tuple{0.5, 0.85, false}, std::tuple{2.0, 0.0, false}}) {
    SCOPED_TRACE(::testing::Message() << x << "," << y);
    PartScene s;                      // the built-in kinds
    EntityId a = s.add(1, 0, 0, 30);  // its heading does not turn the square
    EntityId b = s.add(1, x, y);
    light(s, b, {{12, kRed}});
    s.act();
    SensorView v = look(s, a);
    EXPECT_EQ(v.blobs.size(), seen ? 1u : 0u);
    EXPECT_NEAR(v.scalar, 0.7932f, 1e-6f);
  }
}

TEST(Camera, AnotherBodyHidesTheLedsBehindItFromTheMast) {
  for (bool between : {false, true}) {
    SCOPED_TRACE(between);
    PartScene s;
    EntityId a = s.add(1, 0, 0);
    EntityId b = s.add(1, 0.7, 0);
    if (between) s.add(1, 0.45, 0);  // its LEDs unlit
    // Ring LED 5 (165 degrees) faces the camera, 8.5 cm above the floor; the beacon is at
    // 17.4 cm, above the body between (14.7 cm) where the line from the 28.9 cm mast passes.
    light(s, b, {{5, kGreen}, {12, kRed}});
    s.act();
    SensorView v = look(s, a);
    if (!between) {
      ASSERT_EQ(v.blobs.size(), 2u);
    } else {
      ASSERT_EQ(v.blobs.size(), 1u) << "the ring LED is hidden";
      EXPECT_EQ(v.blobs[0].color, kRed) << "the beacon shows over the body";
    }
  }
}

}  // namespace
}  // namespace fleetsim::testing
