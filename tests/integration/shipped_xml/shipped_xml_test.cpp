// Every XML file the project ships is well-formed XML 1.0, as an independent parser (libxml2's
// xmllint) and fleetsim's own reader (core/xml_reader.hpp) both judge, and both refuse the
// same malformed samples. pugixml alone once accepted 14 examples that every other XML tool
// refused ("--" inside their comments).
//
// What is shipped:
// - every *.xml and *.argos file under the source tree, but for the fuzz corpus and its
//   regressions (tests/fuzz/: deliberately malformed inputs), build directories (build*/)
//   and node_modules/;
// - the whole files shown in the documentation (docs/*.md and README.md): a fenced block
//   opened by ```xml whose first element, after an optional <?xml ...?> declaration and
//   comments, is a document root fleetsim reads, <fleetsim>, <federation> or <view>. Such a
//   block must be a complete file (elide with a comment, not "..."). Other xml blocks are
//   fragments of a file (<kinds>, <node>, <flow>, ...) and are not checked.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/xml_reader.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;

const fs::path kSrc = FLEETSIM_SOURCE_DIR;

/// One XML document: what to call it in a message, and where its text is on disk.
struct Document {
  std::string name;  ///< "examples/x.xml" or "docs/page.md:14" (the block's first line)
  fs::path file;
};

struct Outcome {
  int status = -1;
  std::string output;
};

/// Runs `command` (stderr joined to stdout) and returns its exit status and output.
Outcome run(const std::string& command) {
  Outcome o;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return o;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.output.append(buf, n);
  int raw = pclose(p);
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return o;
}

std::string quoted(const fs::path& p) {
  std::string q = "'";  // built in steps: GCC 12 warns falsely (-Wrestrict) on "'" + s + "'"
  q += p.string();
  q += '\'';
  return q;
}

/// xmllint's verdict on a file: status 0 and nothing said (a namespace warning is said, with
/// status 0, and counts as a refusal).
Outcome xmllint(const fs::path& file) {
  return run(std::string(FLEETSIM_XMLLINT) + " --noout --nonet " + quoted(file));
}

/// Fails the test, once, when xmllint cannot be run.
bool have_xmllint() {
  Outcome v = run(std::string(FLEETSIM_XMLLINT) + " --version");
  if (v.status == 0) return true;
  ADD_FAILURE() << "xmllint (" << FLEETSIM_XMLLINT << ") cannot be run: " << v.output
                << "install libxml2-utils (scripts/install-deps.sh lists it)";
  return false;
}

bool shipped(const fs::path& relative) {
  auto it = relative.begin();
  if (it == relative.end()) return false;
  std::string top = it->string();
  if (top.rfind("build", 0) == 0 || top == ".git") return false;
  if (top == "tests" && std::next(it) != relative.end() && std::next(it)->string() == "fuzz")
    return false;
  for (const auto& part : relative)
    if (part == "node_modules") return false;
  return true;
}

/// The XML files of the source tree that the project ships (see the top of this file).
std::vector<Document> shipped_files() {
  std::vector<Document> out;
  for (auto it = fs::recursive_directory_iterator(kSrc); it != fs::recursive_directory_iterator();
       ++it) {
    fs::path rel = it->path().lexically_relative(kSrc);
    if (it->is_directory()) {
      if (!shipped(rel)) it.disable_recursion_pending();
      continue;
    }
    std::string ext = it->path().extension().string();
    if ((ext == ".xml" || ext == ".argos") && shipped(rel))
      out.push_back({rel.string(), it->path()});
  }
  std::sort(out.begin(), out.end(),
            [](const Document& a, const Document& b) { return a.name < b.name; });
  return out;
}

/// Whether a fenced xml block is a whole file: its first element is a document root.
bool is_whole_file(const std::string& block) {
  std::size_t i = 0;
  while (true) {
    i = block.find_first_not_of(" \t\r\n", i);
    if (i == std::string::npos) return false;
    if (block.compare(i, 4, "<!--") == 0) {
      i = block.find("-->", i);
      if (i == std::string::npos) return false;
      i += 3;
    } else if (block.compare(i, 5, "<?xml") == 0) {
      i = block.find("?>", i);
      if (i == std::string::npos) return false;
      i += 2;
    } else {
      break;
    }
  }
  for (const char* root : {"<fleetsim", "<federation", "<view"}) {
    std::size_t n = std::char_traits<char>::length(root);
    if (block.compare(i, n, root) == 0 && n < block.size() - i &&
        std::string(" \t\r\n/>").find(block[i + n]) != std::string::npos)
      return true;
  }
  return false;
}

/// The whole-file blocks of docs/*.md and README.md, each written to `dir`.
std::vector<Document> doc_snippets(const fs::path& dir) {
  std::vector<fs::path> pages{kSrc / "README.md"};
  for (const auto& e : fs::directory_iterator(kSrc / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  std::sort(pages.begin(), pages.end());
  std::vector<Document> out;
  for (const fs::path& page : pages) {
    std::ifstream in(page);
    std::string line, block;
    int number = 0, first = 0;
    bool inside = false;
    while (std::getline(in, line)) {
      ++number;
      std::string t = line.substr(std::min(line.size(), line.find_first_not_of(" \t")));
      bool opens_xml =
          t.rfind("```xml", 0) == 0 && t.find_first_not_of(" \t", 6) == std::string::npos;
      if (!inside && opens_xml) {
        inside = true;
        first = number + 1;
        block.clear();
      } else if (inside && t.rfind("```", 0) == 0) {
        inside = false;
        if (!is_whole_file(block)) continue;
        std::string name = page.lexically_relative(kSrc).string() + ":" + std::to_string(first);
        fs::path file = dir / (page.stem().string() + "-" + std::to_string(first) + ".xml");
        std::ofstream(file) << block;
        out.push_back({name, file});
      } else if (inside) {
        block += line + "\n";
      }
    }
  }
  return out;
}

TEST(ShippedXml, EveryFileIsWellFormedForXmllintAndForFleetsim) {
  if (!have_xmllint()) return;
  std::vector<Document> files = shipped_files();
  // Far fewer would mean the walk went wrong, and the test would pass on nothing.
  EXPECT_GE(files.size(), 20u);
  bool has_example = false;
  for (const Document& d : files) {
    has_example |= d.name == "examples/diffusion/diffusion.xml";
    Outcome lint = xmllint(d.file);
    EXPECT_TRUE(lint.status == 0 && lint.output.empty())
        << d.name << ": xmllint refuses it (status " << lint.status << "):\n"
        << lint.output;
    Diagnostics diags;
    EXPECT_TRUE(XmlFile::load(d.file.string(), diags) && !diags.has_errors())
        << d.name << ": fleetsim's reader refuses it:\n"
        << diags.str();
  }
  EXPECT_TRUE(has_example);
}

TEST(ShippedXml, EveryWholeFileInTheDocsIsWellFormedForXmllintAndForFleetsim) {
  if (!have_xmllint()) return;
  fs::path dir = fleetsim::testing::fresh_test_dir("shipped_xml");
  std::vector<Document> snippets = doc_snippets(dir);
  // docs/experiment-format.md's example, federation-format.md's, view-format.md's at least.
  EXPECT_GE(snippets.size(), 3u);
  for (const Document& d : snippets) {
    Outcome lint = xmllint(d.file);
    EXPECT_TRUE(lint.status == 0 && lint.output.empty())
        << d.name << ": xmllint refuses this block (status " << lint.status << "):\n"
        << lint.output;
    Diagnostics diags;
    EXPECT_TRUE(XmlFile::parse(slurp(d.file), d.name, diags) && !diags.has_errors())
        << d.name << ": fleetsim's reader refuses this block:\n"
        << diags.str();
  }
}

TEST(ShippedXml, TheRuleForDocBlocksKnowsWholeFilesFromFragments) {
  EXPECT_TRUE(is_whole_file("<fleetsim>\n</fleetsim>\n"));
  EXPECT_TRUE(is_whole_file("<?xml version=\"1.0\"?>\n<!-- c -->\n<view zoom=\"1\"/>\n"));
  EXPECT_TRUE(is_whole_file("<federation until=\"2s\">\n"));
  EXPECT_FALSE(is_whole_file("<kinds>\n</kinds>\n"));
  EXPECT_FALSE(is_whole_file("<viewer/>\n"));
  EXPECT_FALSE(is_whole_file("<node name=\"a\"/>\n"));
}

// Samples that break XML 1.0 where pugixml alone does not notice: xmllint and fleetsim's
// reader refuse each. (fleetsim also refuses <!DOCTYPE> and encodings other than UTF-8, on
// purpose; xmllint accepts those, so they are not here.)
TEST(ShippedXml, MalformedSamplesAreRefusedByXmllintAndByFleetsim) {
  if (!have_xmllint()) return;
  fs::path dir = fleetsim::testing::fresh_test_dir("shipped_xml");
  const std::vector<std::string> samples = {
      "<fleetsim>\n  <!-- run it with --processes 2 -->\n</fleetsim>\n",
      "<fleetsim>\n  <!-- x --->\n</fleetsim>\n",
      "<fleetsim a=\"1\" a=\"2\"/>\n",
      "<fleetsim a=\"1 < 2\"/>\n",
      "<fleetsim>\n  <b \xC3\x97=\"1\"/>\n</fleetsim>\n",
      "<fleetsim>\x0c</fleetsim>\n",
      "<fleetsim>caf\xE9</fleetsim>\n",
      "<fleetsim>]]></fleetsim>\n",
      "<fleetsim/>\n<fleetsim/>\n",
      "<fleetsim/>\ntrailing\n",
      "stray\n<fleetsim/>\n",
      "\n<?xml version=\"1.0\"?>\n<fleetsim/>\n",
      "<fleetsim>\n<?xml version=\"1.0\"?>\n</fleetsim>\n",
      "<fleetsim>&foo;</fleetsim>\n",
      "<fleetsim>salt & pepper</fleetsim>\n",
      "<fleetsim>&#1;</fleetsim>\n",
      "<fleetsim><?XmL x?></fleetsim>\n",
      "<fleetsim/>\n<![CDATA[x]]>\n",
  };
  int i = 0;
  for (const std::string& text : samples) {
    fs::path file = dir / ("sample-" + std::to_string(i++) + ".xml");
    std::ofstream(file, std::ios::binary) << text;
    EXPECT_NE(xmllint(file).status, 0) << "xmllint accepts:\n" << text;
    Diagnostics diags;
    EXPECT_FALSE(XmlFile::load(file.string(), diags)) << "fleetsim accepts:\n" << text;
    EXPECT_TRUE(diags.has_errors());
  }
}

}  // namespace
}  // namespace fleetsim
