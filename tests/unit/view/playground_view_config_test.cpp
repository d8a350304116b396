// The DEECo playground's visualization configuration (root <visualization>) given to
// `fleetsim view --config`: it is read as the fleetsim configuration it stands for, textures
// found from the current directory as the playground finds them, a Java layer left out with a
// warning at its line, and its mistakes reported at their lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_files.hpp"
#include "view/view_config.hpp"

namespace fleetsim::view {
namespace {

namespace fs = std::filesystem;

/// Runs `f` with `dir` as the current directory.
template <class F>
void in_directory(const fs::path& dir, F&& f) {
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  f();
  fs::current_path(before);
}

TEST(PlaygroundViewConfig, TheFirefightersConfigurationShowsTheStatesByTag) {
  const fs::path dir = testing::fresh_test_dir("playground-view");
  fs::create_directories(dir / "images");
  for (const char* name : {"robot.png", "robot_blue.png", "station.png"})
    std::ofstream(dir / "images" / name, std::ios::binary) << "\x89PNG\r\n\x1a\n";
  fs::create_directories(dir / "configs");
  std::ofstream(dir / "configs" / "firefighters-config.xml")
      << "<?xml version=\"1.0\"?>\n"
         "<visualization zoom=\"6\" maxCPS=\"15\" fontColor=\"Green\">\n"
         "  <additional class=\"pkg.TemperatureLayer\" arg=\"logs/firemap.bin\"/>\n"
         "  <objects circularShape=\"true\">\n"
         "    <class-based><default texture=\"images/station.png\"/></class-based>\n"
         "  </objects>\n"
         "  <robots displayNumbers=\"true\" enableRotation=\"true\" fontColor=\"Blue\">\n"
         "    <tag-based>\n"
         "      <default texture=\"images/robot.png\"/>\n"
         "      <tag name=\"FIGHT\" texture=\"images/robot_blue.png\"/>\n"
         "      <tag name=\"BROKEN\" color=\"BLACK\"/>\n"
         "    </tag-based>\n"
         "  </robots>\n"
         "</visualization>\n";
  in_directory(dir, [&] {
    Diagnostics d;
    auto c = load_view_config("configs/firefighters-config.xml", d);
    ASSERT_TRUE(c) << d.str();
    EXPECT_NE(d.str().find("configs/firefighters-config.xml:3: warning: <additional "
                           "class=\"pkg.TemperatureLayer\"> is a Java layer"),
              std::string::npos)
        << d.str();
    EXPECT_EQ(c->speed_ticks_per_s, 15);
    EXPECT_EQ(c->status_color, parse_color("green"));  // the playground's names, any case
    ASSERT_EQ(c->layers.size(), 3u);                   // objects, robots, then the default map
    const ViewLayer& objects = c->layers[0];
    EXPECT_EQ(objects.type, LayerType::kObjects);
    EXPECT_TRUE(objects.circles);
    EXPECT_EQ(objects.by, ColoringKey::kKindOrClass);
    const ViewLayer& robots = c->layers[1];
    EXPECT_EQ(robots.type, LayerType::kRobots);
    EXPECT_EQ(robots.line, 7);
    EXPECT_EQ(robots.by, ColoringKey::kTag);
    EXPECT_EQ(robots.label, LabelKind::kNumber);
    EXPECT_EQ(robots.label_color, parse_color("blue"));
    EXPECT_TRUE(robots.rotation);
    ASSERT_EQ(robots.rules.size(), 2u);
    EXPECT_EQ(robots.rules[0].value, "FIGHT");
    EXPECT_GE(robots.rules[0].coloring.texture, 0);
    EXPECT_EQ(c->assets[robots.rules[0].coloring.texture].path,
              fs::absolute("images/robot_blue.png").string());
    EXPECT_EQ(robots.rules[1].value, "BROKEN");
    EXPECT_EQ(robots.rules[1].coloring.color, parse_color("black"));
    EXPECT_EQ(c->layers[2].type, LayerType::kMap);
  });
}

TEST(PlaygroundViewConfig, MistakesAreReportedAtTheirLines) {
  const fs::path dir = testing::fresh_test_dir("playground-view");
  std::ofstream(dir / "bad.xml") << "<visualization maxCPS=\"15\" colour=\"red\">\n"
                                    "  <robots displayTags=\"true\">\n"
                                    "    <kind-based/>\n"
                                    "  </robots>\n"
                                    "  <background texture=\"missing.jpg\"/>\n"
                                    "  <lights/>\n"
                                    "</visualization>\n";
  Diagnostics d;
  EXPECT_FALSE(load_view_config((dir / "bad.xml").string(), d));
  const std::string path = (dir / "bad.xml").string();
  for (const std::string& expected :
       {path + ":1: error: unknown attribute 'colour' of <visualization>",
        path + ":3: error: unknown element <kind-based> in <robots>",
        path + ":5: error: attribute 'image' of <background> names 'missing.jpg', which does not "
               "exist",
        path + ":6: error: unknown element <lights> in <visualization>"})
    EXPECT_NE(d.str().find(expected), std::string::npos) << expected << "\n" << d.str();
}

}  // namespace
}  // namespace fleetsim::view
