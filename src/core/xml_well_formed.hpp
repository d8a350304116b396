// The XML 1.0 well-formedness rules that pugixml does not check.
//
// pugixml is a fast, forgiving parser: it accepts "--" inside comments, duplicate attributes,
// '<' in attribute values, several root elements, text outside the root, undeclared entity
// references such as "&foo;" (it keeps them as text), characters XML forbids, and more. A
// file it accepts may then be refused by every other XML tool, or mean something else to
// them. XmlFile runs this scan over every file it reads, so fleetsim accepts only what an
// XML 1.0 parser (libxml2's xmllint, for instance) accepts, apart from the document type
// declarations that fleetsim refuses on purpose (docs/experiment-format.md, "Well-formed XML").
//
// This is not a parser: it walks the text once, knowing only enough of the markup (comments,
// processing instructions, CDATA sections, tags and their attributes, text, references) to
// apply each rule where it holds. pugixml still builds the tree and reports what it finds
// itself (unclosed or mismatched tags, broken attribute syntax). The scan reads any bytes
// without reading past the end, whatever they are (the fuzz harnesses run it).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

/// One break of the XML 1.0 rules: where it starts (a byte offset into the text, and its line) and
/// "what is wrong (what was expected)".
struct XmlProblem {
  std::size_t offset = 0;
  int line = 1;  ///< 1-based line of `offset`
  std::string message;
};

/// Scans `text` (the bytes of a whole file) for what XML 1.0 forbids and pugixml lets
/// through. Returns the problems in the order of their offsets, at most one per rule and
/// line, and at most `kMaxXmlProblems` of them (then one more saying that the rest were not
/// reported). An empty result does not mean the text is well-formed: pugixml checks the rest.
std::vector<XmlProblem> find_xml_problems(std::string_view text);

/// The most problems find_xml_problems reports, so that a file of garbage gives a screenful.
inline constexpr std::size_t kMaxXmlProblems = 50;

}  // namespace fleetsim
