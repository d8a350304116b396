#include "view/view_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_files.hpp"

namespace fleetsim::view {
namespace {

std::vector<LayerType> types(const ViewConfig& c) {
  std::vector<LayerType> t;
  for (const auto& l : c.layers) t.push_back(l.type);
  return t;
}

// Parses `xml` and expects failure; returns the diagnostics text.
std::string errors_of(const std::string& xml) {
  Diagnostics d;
  auto c = parse_view_config(xml, "v.xml", d);
  EXPECT_FALSE(c) << "expected errors for:\n" << xml;
  return d.str();
}

TEST(ViewConfig, EmptyListGetsTheDefaultLayersInTheDeecoOrder) {
  Diagnostics d;
  auto c = parse_view_config("<view speed=\"20\" zoom=\"2\"/>", "v.xml", d);
  ASSERT_TRUE(c) << d.str();
  EXPECT_EQ(types(*c), (std::vector{LayerType::kMap, LayerType::kObjects, LayerType::kRobots}));
  EXPECT_EQ(c->speed_ticks_per_s, 20);
  EXPECT_EQ(c->zoom, 2);
  EXPECT_TRUE(c->layers[2].implicit);
  EXPECT_EQ(c->layers[2].coloring.color, (Rgba{1, 0, 0, 1}));  // red robots
  EXPECT_EQ(c->layers[0].coloring.color, (Rgba{0, 0, 0, 1}));  // black map
}

TEST(ViewConfig, MissingDefaultLayersAreAppendedAfterTheListedOnes) {
  Diagnostics d;
  auto c = parse_view_config(
      "<view>\n"
      "  <robots by=\"tag\"><coloring value=\"leader\" color=\"0,0,1\"/></robots>\n"
      "  <background color=\"white\"/>\n"
      "</view>\n",
      "v.xml", d);
  ASSERT_TRUE(c) << d.str();
  EXPECT_EQ(types(*c), (std::vector{LayerType::kRobots, LayerType::kBackground, LayerType::kMap,
                                    LayerType::kObjects}));
  EXPECT_FALSE(c->layers[0].implicit);
  EXPECT_EQ(c->layers[0].line, 2);
  ASSERT_EQ(c->layers[0].rules.size(), 1u);
  EXPECT_EQ(c->layers[0].rules[0].coloring.color, (Rgba{0, 0, 1, 1}));
  EXPECT_EQ(c->layers[0].by, ColoringKey::kTag);
}

TEST(ViewConfig, ColoursAreThreeOrFourFloatsOrAName) {
  EXPECT_EQ(parse_color("1,0,0"), (Rgba{1, 0, 0, 1}));
  EXPECT_EQ(parse_color(" 0, 0.5 ,1, 0.25"), (Rgba{0, 0.5f, 1, 0.25f}));
  EXPECT_EQ(parse_color("Blue"), (Rgba{0, 0, 1, 1}));
  EXPECT_FALSE(parse_color("1,0"));
  EXPECT_FALSE(parse_color("1,0,0,0,0"));
  EXPECT_FALSE(parse_color("2,0,0"));
  EXPECT_FALSE(parse_color("redd"));
}

TEST(ViewConfig, EveryErrorClassGivesFileAndLine) {
  struct Case {
    const char* xml;
    const char* expected;
  };
  const Case cases[] = {
      {"<view>\n<robot/>\n</view>", "v.xml:2: error: unknown element <robot> in <view>"},
      {"<view>\n<robots colour=\"red\"/>\n</view>", "v.xml:2: error: unknown attribute 'colour'"},
      {"<view>\n<robots colour=\"red\"/>\n</view>", "did you mean 'color'?"},
      {"<view>\n\n<map color=\"redd\"/>\n</view>", "v.xml:3: error: attribute 'color' of <map>"},
      {"<view>\n<map color=\"redd\"/>\n</view>", "did you mean 'red'?"},
      {"<view>\n<map color=\"1,0\"/>\n</view>", "expected 3 or 4 numbers between 0 and 1"},
      {"<view zoom=\"-1\"/>", "v.xml:1: error: attribute 'zoom' of <view> is -1"},
      {"<view speed=\"fast\"/>", "v.xml:1: error: attribute 'speed' of <view> is 'fast'"},
      {"<view>\n<robots by=\"kinds\"/>\n</view>", "v.xml:2: error: attribute 'by' of <robots>"},
      {"<view>\n<objects by=\"kind\"/>\n</view>", "v.xml:2: error: attribute 'by' of <objects>"},
      {"<view>\n<range_and_bearing/>\n<range_and_bearing/>\n</view>",
       "v.xml:3: error: second <range_and_bearing> layer"},
      {"<view>\n<range_and_bearing width=\"2\"/>\n</view>",
       "v.xml:2: error: unknown attribute 'width'"},
      {"<view>\n<robots/>\n<robots/>\n</view>", "v.xml:3: error: second <robots> layer"},
      {"<view>\n<robots>\n<coloring value=\"a\" color=\"red\"/>\n</robots>\n</view>",
       "v.xml:3: error: <coloring> rule in a <robots> layer coloured by none"},
      {"<view>\n<robots by=\"number\">\n<coloring value=\"x\" color=\"red\"/>\n</robots></view>",
       "v.xml:3: error: attribute 'value' of <coloring> is 'x'"},
      {"<view>\n<robots by=\"tag\">\n<coloring value=\"a\"/>\n</robots></view>",
       "v.xml:3: error: <coloring> is missing attribute 'color'"},
      {"<view>\n<robots by=\"tag\">\n<coloring color=\"red\"/>\n</robots></view>",
       "v.xml:3: error: <coloring> is missing attribute 'value'"},
      {"<view>\n<map texture=\"nothere.png\"/>\n</view>",
       "v.xml:2: error: attribute 'texture' of <map> names 'nothere.png', which does not exist"},
      {"<view>\n<custom/>\n</view>", "v.xml:2: error: <custom> is missing attribute 'script'"},
      {"<view>\n<objects shape=\"triangle\"/>\n</view>",
       "v.xml:2: error: attribute 'shape' of <objects>"},
      {"<view>\n<map color=\"red\" texture=\"a.png\"/>\n</view>",
       "v.xml:2: error: <map> has both 'color' and 'texture'"},
      {"<viewer/>", "v.xml:1: error: root element is <viewer> (expected <view>)"},
      {"<view>\n<robots>\n", "error: malformed XML"},
  };
  for (const Case& c : cases) {
    std::string s = errors_of(c.xml);
    EXPECT_NE(s.find(c.expected), std::string::npos) << "xml: " << c.xml << "\ngot: " << s;
  }
}

TEST(ViewConfig, AllErrorsAreReportedAtOnce) {
  Diagnostics d;
  auto c = parse_view_config(
      "<view zoom=\"0\">\n<robots by=\"tag\" label=\"names\"/>\n<map color=\"x\"/>\n</view>",
      "v.xml", d);
  EXPECT_FALSE(c);
  EXPECT_EQ(d.error_count(), 3) << d.str();
}

TEST(ViewConfig, MissingFileIsAnError) {
  Diagnostics d;
  EXPECT_FALSE(load_view_config("/nonexistent/view.xml", d));
  EXPECT_NE(d.str().find("/nonexistent/view.xml: error: file not found"), std::string::npos);
}

TEST(ViewConfig, TexturesAndScriptsAreCheckedAndBecomeAssets) {
  namespace fs = std::filesystem;
  fs::path dir = fleetsim::testing::fresh_test_dir("view");
  fs::create_directories(dir);
  {
    std::ofstream(dir / "robot.png", std::ios::binary).write("\x89PNG\r\n\x1a\n\0\0\0\0", 12);
    std::ofstream(dir / "not_image.png") << "hello";
    std::ofstream(dir / "trail.js") << "export function create() {}";
  }
  std::string xml =
      "<view>\n"
      "  <robots by=\"class\">\n"
      "    <default texture=\"robot.png\"/>\n"
      "    <coloring value=\"epuck\" texture=\"robot.png\"/>\n"
      "  </robots>\n"
      "  <custom script=\"trail.js\" arg=\"20\"/>\n"
      "</view>\n";
  std::ofstream(dir / "view.xml") << xml;
  Diagnostics d;
  auto c = load_view_config((dir / "view.xml").string(), d);
  ASSERT_TRUE(c) << d.str();
  ASSERT_EQ(c->assets.size(), 2u);  // the same texture twice is one asset
  EXPECT_EQ(c->assets[0].mime_type, "image/png");
  EXPECT_EQ(c->assets[1].mime_type, "text/javascript");
  EXPECT_EQ(c->layers[0].coloring.texture, 0);
  EXPECT_EQ(c->layers[1].script, 1);
  EXPECT_EQ(to_json(*c)["layers"][1]["script"], "/asset/1");

  std::ofstream(dir / "bad.xml") << "<view>\n<background image=\"not_image.png\"/>\n</view>\n";
  Diagnostics d2;
  EXPECT_FALSE(load_view_config((dir / "bad.xml").string(), d2));
  EXPECT_NE(d2.str().find("bad.xml:2: error: attribute 'image' of <background> names "
                          "'not_image.png', which is not a PNG"),
            std::string::npos)
      << d2.str();
  fs::remove_all(dir);
}

TEST(ViewConfig, UnknownKindNamesAreWarnedWithTheirLine) {
  Diagnostics d;
  auto c = parse_view_config(
      "<view>\n<robots by=\"kind\">\n<coloring value=\"epuk\" color=\"red\"/>\n</robots>\n"
      "<objects by=\"class\">\n<coloring value=\"fod\" color=\"red\"/>\n</objects>\n</view>",
      "v.xml", d);
  ASSERT_TRUE(c) << d.str();
  warn_unknown_kinds_and_classes(*c, {"epuck", "footbot"}, {"food"}, d);
  EXPECT_FALSE(d.has_errors());
  EXPECT_NE(d.str().find("v.xml:3: warning: kind 'epuk' does not appear in the log's robots "
                         "(kinds in the log: epuck, footbot) (did you mean 'epuck'?)"),
            std::string::npos)
      << d.str();
  EXPECT_NE(d.str().find("v.xml:6: warning: class 'fod'"), std::string::npos) << d.str();
}

TEST(ViewConfig, RobotsAreColouredByKindAndClassIsItsOldName) {
  for (const char* by : {"kind", "class"}) {
    Diagnostics d;
    auto c = parse_view_config(std::string("<view><robots by=\"") + by +
                                   "\"><coloring value=\"epuck\" color=\"blue\"/></robots>"
                                   "<objects by=\"class\"/></view>",
                               "v.xml", d);
    ASSERT_TRUE(c) << d.str();
    EXPECT_EQ(c->layers[0].by, ColoringKey::kKindOrClass);
    auto j = to_json(*c);
    EXPECT_EQ(j["layers"][0]["type"], "robots");
    EXPECT_EQ(j["layers"][0]["by"], "kind");
    EXPECT_EQ(j["layers"][1]["by"], "class");
  }
}

TEST(ViewConfig, RangeAndBearingIsAnOptionalLayerWithAColour) {
  Diagnostics d;
  auto c = parse_view_config(
      "<view><robots leds=\"false\"/><range_and_bearing color=\"0,1,0,0.25\"/></view>", "v.xml", d);
  ASSERT_TRUE(c) << d.str();
  EXPECT_EQ(types(*c), (std::vector{LayerType::kRobots, LayerType::kRangeAndBearing,
                                    LayerType::kMap, LayerType::kObjects}));
  EXPECT_FALSE(c->layers[0].leds);
  EXPECT_EQ(c->layers[1].coloring.color, (Rgba{0, 1, 0, 0.25f}));
  auto j = to_json(*c);
  EXPECT_EQ(j["layers"][1]["type"], "range_and_bearing");
  EXPECT_EQ(j["layers"][0]["leds"], false);
  // Not drawn unless asked for.
  Diagnostics d2;
  auto plain = parse_view_config("<view/>", "v.xml", d2);
  ASSERT_TRUE(plain);
  for (const auto& l : plain->layers) EXPECT_NE(l.type, LayerType::kRangeAndBearing);
}

TEST(ViewConfig, NumberRulesAcceptRanges) {
  Diagnostics d;
  auto c = parse_view_config(
      "<view><robots by=\"number\" label=\"id\"><coloring value=\"10-19\" color=\"blue\"/>"
      "<coloring value=\"3\" color=\"green\"/></robots></view>",
      "v.xml", d);
  ASSERT_TRUE(c) << d.str();
  const ViewLayer& r = c->layers[0];
  ASSERT_EQ(r.rules.size(), 2u);
  EXPECT_EQ(r.rules[0].lo, 10);
  EXPECT_EQ(r.rules[0].hi, 19);
  EXPECT_EQ(r.rules[1].lo, 3);
  EXPECT_EQ(r.rules[1].hi, 3);
  EXPECT_EQ(r.label, LabelKind::kId);
  EXPECT_EQ(to_json(*c)["layers"][0]["label"], "id");
}

}  // namespace
}  // namespace fleetsim::view
