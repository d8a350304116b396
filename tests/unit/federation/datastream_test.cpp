// Typed flows and datastreams (docs/federation-format.md, "Classes" and "Datastreams and
// modifiers"): the file's classes and modifiers, their errors with their lines, the class
// checks and the modifiers at a sink (noise repeatable and with the declared statistics,
// down-sampling as null messages, WGS84 frame conversion), and AttributeSet.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "federation/datastream.hpp"
#include "federation/federation_file.hpp"
#include "federation/geodesy.hpp"
#include "fleetsim/attributes.hpp"

namespace fleetsim::federation {
namespace {

// Two nodes in a ring; the Pose flow has noise and down-sampling. Line numbers matter below.
const char* kTyped = R"(<federation until="1s" seed="5">
  <class name="Pose">
    <attribute name="x" type="f64"/>
    <attribute name="y" type="f64"/>
    <attribute name="z" type="f64"/>
    <attribute name="id" type="u32"/>
    <attribute name="valid" type="bool"/>
  </class>
  <interaction name="Bump"><attribute name="force" type="f32"/></interaction>
  <node name="a"><input name="in" class="Bump"/><output name="pose" class="Pose"/></node>
  <node name="b"><input name="pose" class="Pose"/><output name="out"/></node>
  <flow name="pose" from="a.pose" to="b.pose" period="10ms">
    <noise attribute="x" sigma="0.5" bias="2"/>
    <downsample every="3"/>
  </flow>
  <flow name="bump" from="b.out" to="a.in" period="10ms"/>
</federation>
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string errors_of(const std::string& text) {
  Diagnostics d;
  auto fed = parse_federation(text, "fed.xml", d);
  EXPECT_FALSE(fed.has_value()) << "expected errors in:\n" << text;
  return d.str();
}

Federation parsed(const std::string& text) {
  Diagnostics d;
  auto fed = parse_federation(text, "fed.xml", d);
  EXPECT_TRUE(fed) << d.str();
  return fed ? *fed : Federation{};
}

std::vector<std::uint8_t> pose(double x, double y, double z, std::uint32_t id, bool valid) {
  std::vector<std::uint8_t> p(29);
  std::memcpy(p.data(), &x, 8);
  std::memcpy(p.data() + 8, &y, 8);
  std::memcpy(p.data() + 16, &z, 8);
  std::memcpy(p.data() + 24, &id, 4);
  p[28] = valid ? 1 : 0;
  return p;
}

double f64_at(const std::vector<std::uint8_t>& p, std::size_t offset) {
  double v = 0;
  std::memcpy(&v, p.data() + offset, 8);
  return v;
}

transport::Message message(SimTime t, std::vector<std::uint8_t> payload) {
  transport::Message m;
  m.flow = 0;
  m.timestamp = t;
  m.period = 10'000'000;
  m.payload = std::move(payload);
  return m;
}

TEST(TypedFlows, ClassesHaveAFixedLittleEndianLayoutInDeclarationOrder) {
  const Federation fed = parsed(kTyped);
  ASSERT_EQ(fed.classes.size(), 2u);
  const ClassLayout& p = *fed.classes[0];
  EXPECT_EQ(p.name, "Pose");
  EXPECT_FALSE(p.interaction);
  EXPECT_EQ(p.size, 29u);
  ASSERT_EQ(p.attributes.size(), 5u);
  EXPECT_EQ(p.attributes[3].name, "id");
  EXPECT_EQ(p.attributes[3].offset, 24u);
  EXPECT_EQ(p.attributes[4].offset, 28u);
  EXPECT_TRUE(fed.classes[1]->interaction);
  EXPECT_EQ(fed.flows[0].data_class, fed.classes[0]);
  EXPECT_EQ(fed.flows[1].data_class, fed.classes[1]);  // from the subscriber's class
  ASSERT_EQ(fed.flows[0].modifiers.size(), 2u);
  EXPECT_EQ(fed.flows[0].modifiers[0].kind, ModifierDecl::Kind::kNoise);
  EXPECT_EQ(fed.flows[0].modifiers[0].sigma, 0.5);
  EXPECT_EQ(fed.flows[0].modifiers[1].every, 3u);
  // An untyped federation keeps untyped flows.
  EXPECT_EQ(fed.flows.size(), 2u);
}

TEST(TypedFlows, EveryErrorOfClassesAndModifiersAtOnceWithItsLine) {
  std::string text = kTyped;
  text =
      replace(text, R"(<attribute name="z" type="f64"/>)", R"(<attribute name="z" type="f63"/>)");
  text = replace(text, R"(<attribute name="valid" type="bool"/>)",
                 R"(<attribute name="x" type="bool"/>)");
  text = replace(text, R"(<input name="in" class="Bump"/>)", R"(<input name="in" class="Bumq"/>)");
  text = replace(text, R"(<noise attribute="x" sigma="0.5" bias="2"/>)",
                 R"(<noise attribute="yy" sigma="-1"/>)");
  text = replace(text, R"(<downsample every="3"/>)",
                 R"(<downsample every="0"/><noise attribute="id" bias="1"/>)"
                 R"(<frame to="wgs84" attributes="x y" latitude="91" longitude="2"/>)");
  text = replace(
      text, R"(<flow name="bump" from="b.out" to="a.in" period="10ms"/>)",
      R"(<flow name="bump" from="b.out" to="a.in" period="10ms"><noise attribute="f" sigma="1"/></flow>)");
  const std::string e = errors_of(text);
  for (const char* expected : {
           "fed.xml:5: error: attribute 'type' of <attribute> is 'f63'",
           "(did you mean 'f64'?)",
           "fed.xml:7: error: class 'Pose' already has an attribute 'x'",
           "fed.xml:10: error: unknown class 'Bumq' on input 'a.in' (expected a <class> or "
           "<interaction> of the file) (did you mean 'Bump'?)",
           "fed.xml:13: error: attribute 'sigma' of <noise> is -1 (expected a number >= 0)",
           "fed.xml:13: error: class 'Pose' of flow 'pose' has no attribute 'yy' (did you mean "
           "'y'?)",
           "fed.xml:14: error: attribute 'every' of <downsample> is 0 (expected an integer between "
           "1",
           "fed.xml:14: error: attribute 'latitude' of <frame> is 91 (expected a number between "
           "-90 "
           "and 90)",
           "fed.xml:14: error: attribute 'attributes' of <frame> names 2 attributes (expected "
           "three: east north up, in metres)",
           "fed.xml:16: error: <noise> on untyped flow 'bump'",
       })
    EXPECT_NE(e.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n" << e;
}

TEST(TypedFlows, ModifiersRefuseAttributesOfTheWrongType) {
  // bool is not numeric; a frame needs f64 coordinates; observation flows are not down-sampled.
  std::string text = replace(kTyped, R"(<downsample every="3"/>)",
                             R"(<noise attribute="valid" sigma="1"/>
    <frame to="enu" attributes="x y id" latitude="1" longitude="2"/>)");
  std::string e = errors_of(text);
  EXPECT_NE(e.find("fed.xml:14: error: <noise> on attribute 'valid' of class 'Pose', which is "
                   "bool (expected a numeric attribute"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fed.xml:15: error: <frame> on attribute 'id' of class 'Pose', which is u32 "
                   "(expected f64"),
            std::string::npos)
      << e;
  e = errors_of(replace(kTyped, R"(period="10ms">)", R"(period="10ms" kind="observation">)"));
  EXPECT_NE(e.find("fed.xml:14: error: <downsample> on observation flow 'pose'"), std::string::npos)
      << e;
  e = errors_of(replace(kTyped, R"(<downsample every="3"/>)",
                        R"(<frame to="wgs84" attributes="x x y" latitude="0" longitude="0"/>)"));
  EXPECT_NE(e.find("fed.xml:14: error: attribute 'attributes' of <frame> is 'x x y' (expected "
                   "three different attributes)"),
            std::string::npos)
      << e;
  e = errors_of(replace(kTyped, R"(<downsample every="3"/>)", R"(<downsampel every="3"/>)"));
  EXPECT_NE(e.find("fed.xml:14: error:"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'downsample'"), std::string::npos) << e;
}

TEST(TypedFlows, PublisherAndSubscriberMustAgreeOnTheClass) {
  // Another class altogether.
  std::string e = errors_of(replace(kTyped, R"(<input name="pose" class="Pose"/>)",
                                    R"(<input name="pose" class="Bump"/>)"));
  EXPECT_NE(e.find("fed.xml:12: error: flow 'pose': node 'a' publishes class 'Pose' on output "
                   "'pose' but node 'b' subscribes to class 'Bump' on input 'pose' (attribute 1 "
                   "is 'x' in 'Pose' and 'force' in 'Bump'"),
            std::string::npos)
      << e;
  // The same names, another type.
  std::string text =
      replace(kTyped, R"(<interaction name="Bump">)",
              R"(<class name="Pose2"><attribute name="x" type="f64"/>)"
              R"(<attribute name="y" type="f32"/></class><interaction name="Bump">)");
  text = replace(text, R"(<input name="pose" class="Pose"/>)",
                 R"(<input name="pose" class="Pose2"/>)");
  e = errors_of(text);
  EXPECT_NE(e.find("fed.xml:12: error: flow 'pose': node 'a' publishes class 'Pose' on output "
                   "'pose' but node 'b' subscribes to class 'Pose2' on input 'pose' (attribute "
                   "'y' is f64 in 'Pose' and f32 in 'Pose2'"),
            std::string::npos)
      << e;
}

TEST(TypedFlows, ASinkRefusesAPayloadThatIsNotItsClassNamingNodeFlowAndTime) {
  const Federation fed = parsed(kTyped);
  Datastreams b(fed, 1);
  auto m = message(20'000'000, std::vector<std::uint8_t>(7, 0));
  try {
    b.apply(0, m);
    FAIL() << "a 7-byte Pose was accepted";
  } catch (const FederateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'b', flow 'pose' at 20000000 ns: a payload of 7 bytes is not a value of class "
              "'Pose' (29 bytes: 5 attributes)");
  }
  auto bad_bool = message(30'000'000, pose(1, 2, 3, 4, true));
  bad_bool.payload[28] = 2;
  EXPECT_THROW(b.apply(0, bad_bool), FederateError);
  // Null messages (event flows) carry nothing to check.
  auto null = message(40'000'000, {});
  null.null = true;
  EXPECT_TRUE(b.apply(0, null));
}

TEST(TypedFlows, NoiseRepeatsAndHasTheDeclaredMeanAndDeviation) {
  const Federation fed = parsed(replace(kTyped, R"(<downsample every="3"/>)", ""));
  Datastreams first(fed, 1), second(fed, 1);
  const int n = 20000;
  double sum = 0, sum2 = 0;
  for (int k = 0; k < n; ++k) {
    auto m1 = message(SimTime{k} * 10'000'000, pose(10.0, 5.0, 1.0, 7, true));
    auto m2 = m1;
    ASSERT_TRUE(first.apply(0, m1));
    ASSERT_TRUE(second.apply(0, m2));
    ASSERT_EQ(m1.payload, m2.payload) << "message " << k;  // the same draw, bit for bit
    const double d = f64_at(m1.payload, 0) - 10.0;
    sum += d;
    sum2 += d * d;
    // Only x is modified.
    const auto sent = pose(10.0, 5.0, 1.0, 7, true);
    ASSERT_TRUE(std::equal(sent.begin() + 8, sent.end(), m1.payload.begin() + 8));
  }
  const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  // bias 2, sigma 0.5: the standard error of the mean is 0.0035, of the deviation 0.0025.
  EXPECT_NEAR(mean, 2.0, 0.02);
  EXPECT_NEAR(sd, 0.5, 0.015);

  // Another seed, another draw; the same seed and message, the same draw.
  std::string other = replace(kTyped, R"(seed="5")", R"(seed="6")");
  const Federation fed6 = parsed(replace(other, R"(<downsample every="3"/>)", ""));
  Datastreams seeded(fed6, 1), again(fed, 1);
  auto a = message(50'000'000, pose(10, 5, 1, 7, true));
  auto b = a;
  const auto c = a;
  seeded.apply(0, a);
  again.apply(0, b);
  EXPECT_NE(f64_at(a.payload, 0), f64_at(b.payload, 0));
  EXPECT_EQ(first.applied(0, c).payload, b.payload);  // observation reads: the same message
}

TEST(TypedFlows, NoiseOnIntegersRoundsAndSaturates) {
  std::string text =
      replace(kTyped, R"(<downsample every="3"/>)", R"(<noise attribute="id" bias="-10.6"/>)");
  text = replace(text, R"(<noise attribute="x" sigma="0.5" bias="2"/>)", "");
  const Federation fed = parsed(text);
  Datastreams b(fed, 1);
  auto m = message(0, pose(0, 0, 0, 20, false));
  b.apply(0, m);
  AttributeSet v(fed.classes[0], m.payload, "");
  EXPECT_EQ(v.get_unsigned("id"), 9u);  // 20 - 10.6 = 9.4
  auto low = message(10'000'000, pose(0, 0, 0, 3, false));
  b.apply(0, low);
  EXPECT_EQ(AttributeSet(fed.classes[0], low.payload, "").get_unsigned("id"), 0u);  // saturated
}

TEST(TypedFlows, DownSamplingKeepsEveryKthMessageAndNullsTheRest) {
  const Federation fed = parsed(kTyped);
  Datastreams b(fed, 1);
  std::vector<int> kept;
  for (int k = 0; k < 10; ++k) {
    auto m = message(SimTime{k} * 10'000'000, pose(k, 0, 0, 0, true));
    const bool on = b.apply(0, m);
    EXPECT_EQ(on, !m.null);
    if (on)
      kept.push_back(k);
    else
      EXPECT_TRUE(m.payload.empty());
    EXPECT_EQ(m.timestamp, SimTime{k} * 10'000'000);  // the time still moves on
    EXPECT_EQ(m.period, 10'000'000);
  }
  EXPECT_EQ(kept, (std::vector<int>{0, 3, 6, 9}));
}

TEST(Wgs84, KnownPointsOfTheEllipsoid) {
  const Point3 equator = geodetic_to_ecef({0, 0, 0});
  EXPECT_DOUBLE_EQ(equator.x, 6378137.0);
  EXPECT_NEAR(equator.y, 0, 1e-9);
  EXPECT_NEAR(equator.z, 0, 1e-9);
  // The pole is at the semi-minor axis, b = a (1 - f) = 6356752.314245179 m.
  const Point3 pole = geodetic_to_ecef({90, 0, 0});
  EXPECT_NEAR(pole.z, 6356752.314245179, 1e-6);
  EXPECT_NEAR(pole.x, 0, 1e-6);
  const Geodetic back = ecef_to_geodetic({0, 0, 6356752.314245179 + 100});
  EXPECT_NEAR(back.latitude_deg, 90, 1e-12);
  EXPECT_NEAR(back.altitude_m, 100, 1e-6);
  // 45 degrees north at 1000 m, lon 90: x = 0, y = (N + h) cos(lat), z = (N (1 - e2) + h) sin(lat).
  const double n45 = kWgs84A / std::sqrt(1 - kWgs84E2 * 0.5);
  const Point3 p = geodetic_to_ecef({45, 90, 1000});
  EXPECT_NEAR(p.y, (n45 + 1000) * std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(p.z, (n45 * (1 - kWgs84E2) + 1000) * std::sqrt(0.5), 1e-6);
  // The same, to 40 digits (mpmath): 4518297.98563011757..., 4488055.51564710636...
  EXPECT_NEAR(p.y, 4518297.985630118, 1e-6);
  EXPECT_NEAR(p.z, 4488055.515647106, 1e-6);
  // Straight up from the reference: the same latitude and longitude, 100 m higher. One km
  // east at the equator: longitude 1000 / a rad, and the ellipsoid falls away under it by
  // about 1000^2 / (2 a) = 0.0784 m.
  const Geodetic ref{43.6, 1.44, 150};
  const Geodetic up = enu_to_geodetic({0, 0, 100}, ref);
  EXPECT_NEAR(up.latitude_deg, 43.6, 1e-12);
  EXPECT_NEAR(up.longitude_deg, 1.44, 1e-12);
  EXPECT_NEAR(up.altitude_m, 250, 1e-6);
  const Geodetic east = enu_to_geodetic({1000, 0, 0}, {0, 0, 0});
  EXPECT_NEAR(east.longitude_deg, std::atan(1000 / kWgs84A) * 180 / M_PI, 1e-12);
  EXPECT_NEAR(east.altitude_m, std::hypot(kWgs84A, 1000.0) - kWgs84A, 1e-6);
}

TEST(Wgs84, EnuToGeodeticAndBackWithinAMicrometre) {
  double worst = 0;
  for (const Geodetic ref : {Geodetic{43.6, 1.44, 150}, Geodetic{-33.9, 151.2, 0},
                             Geodetic{89.9, -120, 3000}, Geodetic{0, 180, -50}})
    for (const Point3 enu : {Point3{0, 0, 0}, Point3{12.5, -7.25, 3}, Point3{5000, 8000, 1200},
                             Point3{-150000, 90000, 10000}, Point3{1e6, -2e6, 5e4}}) {
      const Point3 back = geodetic_to_enu(enu_to_geodetic(enu, ref), ref);
      worst = std::max(
          {worst, std::fabs(back.x - enu.x), std::fabs(back.y - enu.y), std::fabs(back.z - enu.z)});
    }
  EXPECT_LT(worst, 1e-6);
}

TEST(TypedFlows, AFrameModifierConvertsEnuToWgs84AtTheReference) {
  const std::string text = replace(kTyped, R"(<downsample every="3"/>)",
                                   R"(<frame to="wgs84" attributes="x y z" latitude="43.6" )"
                                   R"(longitude="1.44" altitude="150"/>)");
  const Federation fed =
      parsed(replace(text, R"(<noise attribute="x" sigma="0.5" bias="2"/>)", ""));
  Datastreams b(fed, 1);
  auto m = message(0, pose(30, 40, 5, 1, true));
  b.apply(0, m);
  const Geodetic g = enu_to_geodetic({30, 40, 5}, {43.6, 1.44, 150});
  EXPECT_EQ(f64_at(m.payload, 0), g.latitude_deg);
  EXPECT_EQ(f64_at(m.payload, 8), g.longitude_deg);
  EXPECT_EQ(f64_at(m.payload, 16), g.altitude_m);
  EXPECT_NEAR(g.altitude_m, 155, 0.01);
  EXPECT_GT(g.latitude_deg, 43.6);
  EXPECT_GT(g.longitude_deg, 1.44);
}

TEST(AttributeSets, BuildAndReadByNameAndRefuseUnknownNames) {
  const Federation fed = parsed(kTyped);
  AttributeSet s(fed.classes[0], "node 'a', flow 'pose' at 0 ns");
  s.set("x", 1.5).set("y", -2.0).set("id", 4000000000u).set("valid", true);
  EXPECT_EQ(s.bytes().size(), 29u);
  EXPECT_EQ(s.get("x"), 1.5);
  EXPECT_EQ(s.get_unsigned("id"), 4000000000u);
  EXPECT_TRUE(s.get_bool("valid"));
  EXPECT_EQ(s.bytes(), pose(1.5, -2.0, 0, 4000000000u, true));
  try {
    s.set("vaild", true);
    FAIL();
  } catch (const FederateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'a', flow 'pose' at 0 ns: class 'Pose' has no attribute 'vaild' (its "
              "attributes: x, y, z, id, valid) (did you mean 'valid'?)");
  }
  EXPECT_THROW(s.set("id", -1), FederateError);      // u32
  EXPECT_THROW(s.set("id", 5e9), FederateError);     // beyond u32
  EXPECT_THROW(s.set("valid", 1.0), FederateError);  // bool takes true or false
  EXPECT_THROW(s.get_bool("x"), FederateError);
  EXPECT_THROW(AttributeSet(fed.classes[0], std::vector<std::uint8_t>(28), ""), FederateError);
  AttributeSet big(fed.classes[1], "");
  big.set("force", 0.1);
  EXPECT_EQ(big.get("force"), static_cast<double>(0.1f));
}

TEST(TypedFlows, TheDocsListEveryAttributeTypeAndModifier) {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/docs/federation-format.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  // The table of types: one row `| `NAME` | BYTES | ...` per entry of kAttributeTypes.
  std::set<std::string> rows;
  std::regex row(R"(\n\| `([a-z0-9]+)` \| (\d+) \| (yes|no) \|)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    rows.insert(m[1].str());
    bool found = false;
    for (const auto& t : kAttributeTypes)
      if (m[1].str() == t.name) {
        found = true;
        EXPECT_EQ(std::stoul(m[2].str()), t.size) << t.name;
        EXPECT_EQ(m[3].str() == "yes", t.numeric) << t.name;
      }
    EXPECT_TRUE(found) << "the docs list a type the code does not have: " << m[1].str();
  }
  for (const auto& t : kAttributeTypes)
    EXPECT_TRUE(rows.count(t.name)) << "docs/federation-format.md has no row for " << t.name;
  for (const char* element : {"### `<noise>`", "### `<downsample>`", "### `<frame>`"})
    EXPECT_NE(doc.find(element), std::string::npos) << element;
}

}  // namespace
}  // namespace fleetsim::federation
