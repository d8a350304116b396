#include "core/xml_reader.hpp"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(XmlReader, ReportsEveryProblemWithItsLine) {
  Diagnostics d;
  auto f = XmlFile::parse("<a>\n  <b x=\"nan\" y=\"3\" colour=\"red\"/>\n  <c/>\n</a>\n", "t.xml", d);
  ASSERT_TRUE(f);
  XmlElement a(*f, f->root(), d);
  a.check_children({"b"});
  XmlElement b = a.children("b")[0];
  b.real("x", 0);
  b.integer("y", 0, 0, 2);
  b.text("color");
  b.finish();
  ASSERT_EQ(d.error_count(), 4) << d.str();
  std::string s = d.str();
  EXPECT_NE(s.find("t.xml:3: error: unknown element <c>"), std::string::npos) << s;
  EXPECT_NE(s.find("t.xml:2: error: attribute 'x' of <b> is 'nan' (expected a finite number)"),
            std::string::npos) << s;
  EXPECT_NE(s.find("between 0 and 2"), std::string::npos) << s;
  EXPECT_NE(s.find("did you mean 'color'?"), std::string::npos) << s;
}

TEST(XmlReader, RejectsEmptyBinaryAndTruncatedFiles) {
  Diagnostics d;
  EXPECT_FALSE(XmlFile::parse("", "e.xml", d));
  EXPECT_FALSE(XmlFile::parse(std::string("\x7f" "ELF\0\0\x01", 7), "b.xml", d));
  EXPECT_FALSE(XmlFile::parse("<a>\n<b>\n", "t.xml", d));
  ASSERT_EQ(d.error_count(), 3);
  EXPECT_NE(d.items()[0].message.find("empty"), std::string::npos);
  EXPECT_NE(d.items()[1].message.find("binary"), std::string::npos);
  EXPECT_NE(d.items()[2].message.find("truncated"), std::string::npos) << d.str();
}

TEST(XmlReader, MissingFileIsAnError) {
  Diagnostics d;
  EXPECT_FALSE(XmlFile::load("/nonexistent/x.xml", d));
  EXPECT_NE(d.str().find("/nonexistent/x.xml: error: file not found"), std::string::npos);
}

TEST(XmlReader, ParsesVectorsAndChoices) {
  Diagnostics d;
  auto f = XmlFile::parse("<a v=\"1.5, -2\" m=\"fast\" k=\"quick\"/>", "t.xml", d);
  XmlElement a(*f, f->root(), d);
  Vec2 v = a.vec2("v", {});
  EXPECT_EQ(v.x, 1.5);
  EXPECT_EQ(v.y, -2);
  EXPECT_EQ(a.choice("m", {"fast", "slow"}, "slow"), "fast");
  EXPECT_EQ(a.choice("k", {"fast", "slow"}, "slow"), "slow");
  a.finish();
  EXPECT_EQ(d.error_count(), 1);
}

}  // namespace
}  // namespace fleetsim
