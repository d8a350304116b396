#include "core/xml_reader.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

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

// The well-formedness rules of XML 1.0 that pugixml does not check (core/xml_well_formed.hpp):
// each is refused at its line, with the same "file:line: error: ... (expected ...)" shape.
struct Refused {
  const char* what;
  std::string text;
  int line;
  const char* message;  ///< a piece of the expected message
};

void PrintTo(const Refused& r, std::ostream* os) {
  *os << r.what;
}

class XmlReaderRefuses : public testing::TestWithParam<Refused> {};

TEST_P(XmlReaderRefuses, AtItsLine) {
  const Refused& r = GetParam();
  Diagnostics d;
  EXPECT_FALSE(XmlFile::parse(r.text, "t.xml", d)) << r.what;
  ASSERT_EQ(d.error_count(), 1) << r.what << "\n" << d.str();
  EXPECT_EQ(d.items()[0].where.line, r.line) << r.what << "\n" << d.str();
  EXPECT_NE(d.items()[0].message.find(r.message), std::string::npos) << r.what << "\n" << d.str();
  EXPECT_NE(d.items()[0].message.find("(expected "), std::string::npos) << d.str();
}

INSTANTIATE_TEST_SUITE_P(
    WellFormedness, XmlReaderRefuses,
    testing::Values(
        Refused{"-- in a comment", "<a>\n<!-- run it\n  with --processes 2 -->\n</a>\n", 3,
                "'--' inside a comment"},
        Refused{"comment ending in --->", "<a>\n\n<!-- x --->\n</a>\n", 3, "'--->'"},
        Refused{"-- in a comment before the root", "<!-- a -- b -->\n<a/>\n", 1,
                "'--' inside a comment"},
        Refused{"duplicate attribute", "<a>\n  <b x=\"1\"\n     x=\"2\"/>\n</a>\n", 3,
                "attribute 'x' given twice in <b>"},
        Refused{"< in an attribute value", "<a>\n  <b x=\"1 < 2\"/>\n</a>\n", 2,
                "'<' in the value of attribute 'x'"},
        Refused{"attribute name not an XML name", "<a>\n  <b \xC3\x97=\"1\"/>\n</a>\n", 2,
                "attribute name '\xC3\x97' is not an XML name"},
        Refused{"element name not an XML name", "<a>\n\n  <b\xC3\x97/>\n</a>\n", 3,
                "element name 'b\xC3\x97' is not an XML name"},
        Refused{"control character", "<a>\n  <b/>\x0c\n</a>\n", 2, "character U+000C"},
        Refused{"control character after 4 KiB",
                "<a>\n" + std::string(5000, ' ') + "\n<b x=\"\x01\"/>\n</a>\n", 3,
                "character U+0001"},
        Refused{"bytes that are not UTF-8", "<a>\n\n  <b x=\"caf\xE9\"/>\n</a>\n", 3,
                "byte 0xE9 is not valid UTF-8"},
        Refused{"]]> in text", "<a>\n  x ]]> y\n</a>\n", 2, "']]>' in text"},
        Refused{"a second root element", "<a/>\n<b/>\n", 2, "element <b> after the root element"},
        Refused{"text after the root", "<a/>\n\ntrailing words\n", 3,
                "text 'trailing words' after the root element"},
        Refused{"text before the root", "<!-- c -->\nstray\n<a/>\n", 2,
                "text 'stray' before the root element"},
        Refused{"XML declaration not first", "\n<?xml version=\"1.0\"?>\n<a/>\n", 2,
                "XML declaration <?xml ...?> not at the start"},
        Refused{"XML declaration inside the root", "<a>\n<?xml version=\"1.0\"?>\n</a>\n", 2,
                "not at the start"},
        Refused{"XML declaration without a version", "<?xml encoding=\"UTF-8\"?>\n<a/>\n", 1,
                "malformed XML declaration"},
        Refused{"encoding other than UTF-8", "<?xml version=\"1.0\" encoding=\"latin1\"?>\n<a/>\n",
                1, "encoding 'latin1' is not read by fleetsim"},
        Refused{"undeclared entity in text", "<a>\n  &foo;\n</a>\n", 2,
                "undeclared entity '&foo;'"},
        Refused{"undeclared entity in an attribute", "<a>\n  <b x=\"&nbsp;\"/>\n</a>\n", 2,
                "undeclared entity '&nbsp;'"},
        Refused{"bare &", "<a>\n  salt & pepper\n</a>\n", 2, "'&' does not start a reference"},
        Refused{"reference to a control character", "<a>\n  &#1;\n</a>\n", 2,
                "character reference '&#1;'"},
        Refused{"reserved processing instruction", "<a>\n  <?XmL x?>\n</a>\n", 2,
                "target 'XmL' is reserved"},
        Refused{"document type declaration", "<!DOCTYPE a [\n<!ENTITY e \"x\">\n]>\n<a/>\n", 1,
                "document type declaration"},
        Refused{"CDATA section after the root", "<a/>\n<![CDATA[x]]>\n", 2,
                "CDATA section outside the root element"}),
    [](const testing::TestParamInfo<Refused>& param) {
      std::string n;
      for (const char* c = param.param.what; *c; ++c)
        n += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return n;
    });

TEST(XmlReader, AcceptsWhatXmlAllows) {
  Diagnostics d;
  auto f = XmlFile::parse(
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<!-- a comment - with single hyphens, -> arrows and <tags> -->\n"
      "<a x=\"1 &lt; 2 &amp;&#65;&#x42;\" y='\"q\" >' z=\"]]>\" caf\xC3\xA9=\"\xE2\x82\xAC\">\n"
      "  <![CDATA[ <x> & ]] ]]> text ]] > &quot; &apos; <?pi data?>\n"
      "  <b _c.d-e=\"1\"/>\n"
      "</a>\n"
      "<!-- after the root -->\n",
      "ok.xml", d);
  ASSERT_TRUE(f) << d.str();
  EXPECT_EQ(d.error_count(), 0) << d.str();
  EXPECT_STREQ(f->root().attribute("x").value(), "1 < 2 &AB");
}

TEST(XmlReader, ReportsEveryWellFormednessProblemAtOnce) {
  Diagnostics d;
  EXPECT_FALSE(
      XmlFile::parse("<a>\n"
                     "  <!-- one -- two -->\n"
                     "  <b x=\"1\" x=\"2\"/>\n"
                     "  <c y=\"&bogus;\"/>\n"
                     "</a>\n"
                     "<d/>\n",
                     "all.xml", d));
  ASSERT_EQ(d.error_count(), 4) << d.str();
  std::string s = d.str();
  EXPECT_NE(s.find("all.xml:2: error: '--' inside a comment"), std::string::npos) << s;
  EXPECT_NE(s.find("all.xml:3: error: attribute 'x' given twice"), std::string::npos) << s;
  EXPECT_NE(s.find("all.xml:4: error: undeclared entity '&bogus;'"), std::string::npos) << s;
  EXPECT_NE(s.find("all.xml:6: error: element <d> after the root element"), std::string::npos) << s;
}

TEST(XmlReader, ReportsWellFormednessProblemsBeforeAStructuralError) {
  // pugixml stops at the unclosed <b>; the "--" before it is reported too, first.
  Diagnostics d;
  EXPECT_FALSE(XmlFile::parse("<a>\n<!-- -- -->\n<b>\n</a>\n", "both.xml", d));
  ASSERT_EQ(d.error_count(), 2) << d.str();
  EXPECT_EQ(d.items()[0].where.line, 2);
  EXPECT_NE(d.items()[0].message.find("'--' inside a comment"), std::string::npos);
  EXPECT_NE(d.items()[1].message.find("malformed XML"), std::string::npos) << d.str();
}

TEST(XmlReader, ReportsOneProblemPerLineAndRuleAndAtMostFifty) {
  Diagnostics d;
  std::string text = "<a>\n<!-- -- -- -- -->\n";
  for (int i = 0; i < 80; ++i) text += "<b x=\"1\" x=\"2\" x=\"3\"/>\n";
  text += "</a>\n";
  EXPECT_FALSE(XmlFile::parse(text, "many.xml", d));
  ASSERT_EQ(d.error_count(), 51) << d.str();
  EXPECT_EQ(d.items()[0].where.line, 2);
  EXPECT_EQ(d.items()[1].where.line, 3);
  EXPECT_EQ(d.items()[2].where.line, 4);
  EXPECT_NE(d.items()[50].message.find("more problems"), std::string::npos) << d.str();
}

}  // namespace
}  // namespace fleetsim
