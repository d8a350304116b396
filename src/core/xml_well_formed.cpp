#include "core/xml_well_formed.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <utility>

namespace fleetsim {

namespace {

// One kind of problem per rule: a line gets at most one report of each, so a comment full of
// "--" or a line of control characters reads as one error, not twenty.
enum class Rule {
  kCharacter,
  kEncoding,
  kComment,
  kDeclaration,
  kProcessingInstruction,
  kDoctype,
  kName,
  kDuplicateAttribute,
  kAttributeValue,
  kReference,
  kCdataEnd,
  kOutsideRoot,
  kSecondRoot,
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// The XML 1.0 Char production: what a document may contain at all.
bool is_xml_char(std::uint32_t c) {
  if (c < 0x20) return c == 0x9 || c == 0xA || c == 0xD;
  if (c <= 0xD7FF) return true;
  if (c < 0xE000) return false;  // surrogates
  if (c <= 0xFFFD) return true;
  return c >= 0x10000 && c <= 0x10FFFF;
}

bool is_name_start(std::uint32_t c) {
  return c == ':' || c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= 0xC0 && c <= 0xD6) || (c >= 0xD8 && c <= 0xF6) || (c >= 0xF8 && c <= 0x2FF) ||
         (c >= 0x370 && c <= 0x37D) || (c >= 0x37F && c <= 0x1FFF) ||
         (c >= 0x200C && c <= 0x200D) || (c >= 0x2070 && c <= 0x218F) ||
         (c >= 0x2C00 && c <= 0x2FEF) || (c >= 0x3001 && c <= 0xD7FF) ||
         (c >= 0xF900 && c <= 0xFDCF) || (c >= 0xFDF0 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0xEFFFF);
}

bool is_name_char(std::uint32_t c) {
  return is_name_start(c) || c == '-' || c == '.' || (c >= '0' && c <= '9') || c == 0xB7 ||
         (c >= 0x300 && c <= 0x36F) || (c >= 0x203F && c <= 0x2040);
}

/// Decodes one UTF-8 sequence at `s[i]`. Returns its length (0 when invalid: a stray or
/// missing continuation byte, an overlong form, a surrogate, beyond U+10FFFF).
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n = 0;
  std::uint32_t min = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string hex(std::uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*X", digits, static_cast<unsigned>(v));
  return buf;
}

/// Shows a piece of the file in a message: at most 40 bytes, control characters and bytes
/// that are not UTF-8 as '?', so that the message itself is clean UTF-8 text.
std::string quote(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && i < 40) {
    std::uint32_t cp = 0;
    std::size_t n = decode_utf8(s, i, cp);
    if (n == 0 || cp < 0x20) {
      out += '?';
      i += 1;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (i < s.size()) out += "...";
  return "'" + out + "'";
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < t_.size(); ++i)
      if (t_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<XmlProblem> run() {
    check_characters();
    check_markup();
    std::stable_sort(found_.begin(), found_.end(),
                     [](const XmlProblem& a, const XmlProblem& b) { return a.offset < b.offset; });
    if (found_.size() > kMaxXmlProblems) {
      std::size_t more = found_.size() - kMaxXmlProblems;
      found_.resize(kMaxXmlProblems);
      found_.push_back({found_.back().offset, found_.back().line,
                        std::to_string(more) +
                            " more problems of XML well-formedness not reported (expected "
                            "well-formed XML 1.0)"});
    }
    return std::move(found_);
  }

 private:
  int line_at(std::size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return static_cast<int>(it - line_starts_.begin());
  }

  void report(Rule rule, std::size_t offset, std::string message) {
    int line = line_at(offset);
    if (!reported_.insert({static_cast<int>(rule), line}).second) return;
    found_.push_back({offset, line, std::move(message)});
  }

  bool at(std::size_t i, std::string_view s) const { return t_.substr(i, s.size()) == s; }

  // Every character of the file: valid UTF-8 (the only encoding fleetsim reads), and one
  // that XML allows (no control characters but tab, newline and carriage return).
  void check_characters() {
    std::size_t i = at(0, "\xEF\xBB\xBF") ? 3 : 0;
    while (i < t_.size()) {
      std::uint32_t cp = 0;
      std::size_t n = decode_utf8(t_, i, cp);
      if (n == 0) {
        report(Rule::kCharacter, i,
               "byte 0x" + hex(static_cast<unsigned char>(t_[i]), 2) +
                   " is not valid UTF-8 (expected UTF-8 text)");
        ++i;
        continue;
      }
      if (!is_xml_char(cp))
        report(Rule::kCharacter, i,
               "character U+" + hex(cp, 4) +
                   " is not allowed in XML (expected text without control characters other "
                   "than tab, newline and carriage return)");
      i += n;
    }
  }

  // Reads an XML Name at i_; returns its length in bytes (0 when no name starts there).
  // Stops at the first character that cannot continue a name.
  std::size_t name_length(std::size_t i) const {
    std::size_t start = i;
    while (i < t_.size()) {
      std::uint32_t cp = 0;
      std::size_t n = decode_utf8(t_, i, cp);
      if (n == 0) break;
      if (i == start ? !is_name_start(cp) : !is_name_char(cp)) break;
      i += n;
    }
    return i - start;
  }

  /// The token from i up to whitespace or one of `stops` (what the author meant as a name).
  std::string_view token(std::size_t i, std::string_view stops) const {
    std::size_t e = i;
    while (e < t_.size() && !is_space(t_[e]) && stops.find(t_[e]) == std::string_view::npos) ++e;
    return t_.substr(i, e - i);
  }

  /// Checks that `tok` (at offset i) is an XML Name; `what` says whose name it is.
  void check_name(std::size_t i, std::string_view tok, const std::string& what) {
    if (!tok.empty() && name_length(i) == tok.size()) return;
    report(Rule::kName, i,
           what + " " + quote(tok) +
               " is not an XML name (expected a letter, '_' or ':' first, then letters, "
               "digits, '-', '_', '.' or ':')");
  }

  // A reference at t_[i] == '&': &lt; &gt; &amp; &quot; &apos; or a character reference to a
  // character XML allows. Returns the offset after it.
  std::size_t check_reference(std::size_t i) {
    // Looks for the ';' within 64 bytes only: no name or number in a reference is longer,
    // and a file of '&' without ';' then takes linear time.
    std::size_t semi = t_.substr(i, 64).find(';');
    if (semi != std::string_view::npos) semi += i;
    std::string_view body =
        semi != std::string_view::npos ? t_.substr(i + 1, semi - i - 1) : std::string_view();
    if (semi == std::string_view::npos || body.empty() ||
        body.find_first_of(" \t\r\n<&\"'") != std::string_view::npos) {
      report(Rule::kReference, i,
             "'&' does not start a reference (expected &amp; for a literal '&')");
      return i + 1;
    }
    if (body[0] == '#') {
      bool is_hex = body.size() > 1 && body[1] == 'x';
      std::string_view digits = body.substr(is_hex ? 2 : 1);
      std::uint64_t v = 0;
      bool ok = !digits.empty();
      for (char c : digits) {
        int d = c >= '0' && c <= '9'             ? c - '0'
                : is_hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                : is_hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (d < 0) {
          ok = false;
          break;
        }
        v = v * (is_hex ? 16 : 10) + static_cast<std::uint64_t>(d);
        if (v > 0x10FFFF) v = 0x110000;  // stays out of range, never overflows
      }
      if (!ok || !is_xml_char(static_cast<std::uint32_t>(v)))
        report(Rule::kReference, i,
               "character reference " + quote(t_.substr(i, semi - i + 1)) +
                   " names no character XML allows (expected &#N; or &#xH; of a character "
                   "other than a control character)");
      return semi + 1;
    }
    if (body != "lt" && body != "gt" && body != "amp" && body != "quot" && body != "apos")
      report(Rule::kReference, i,
             "undeclared entity " + quote(t_.substr(i, semi - i + 1)) +
                 " (expected one of &lt; &gt; &amp; &quot; &apos;, or &amp; for a literal '&')");
    return semi + 1;
  }

  // The XML declaration: <?xml version="1.x" encoding="UTF-8" standalone="yes|no"?>, in that
  // order, the last two optional. `end` is the offset of its "?>".
  void check_declaration(std::size_t i, std::size_t end) {
    std::size_t p = i + 5;
    const char* expected =
        " (expected <?xml version=\"1.0\"?>, optionally with encoding=\"UTF-8\" and "
        "standalone=\"yes\" or \"no\")";
    std::string_view names[] = {"version", "encoding", "standalone"};
    std::size_t next_name = 0;
    bool first = true;
    while (true) {
      std::size_t ws = p;
      while (p < end && is_space(t_[p])) ++p;
      if (p >= end) break;
      std::string_view nm = token(p, "=?");
      std::size_t k = next_name;
      while (k < 3 && names[k] != nm) ++k;
      if (p == ws || k == 3 || (first && k != 0)) {
        report(Rule::kDeclaration, p,
               "malformed XML declaration at " + quote(t_.substr(p, end - p)) + expected);
        return;
      }
      p += nm.size();
      while (p < end && is_space(t_[p])) ++p;
      if (p >= end || t_[p] != '=') {
        report(Rule::kDeclaration, p, "malformed XML declaration" + std::string(expected));
        return;
      }
      ++p;
      while (p < end && is_space(t_[p])) ++p;
      char q = p < end ? t_[p] : '\0';
      std::size_t close = q == '"' || q == '\'' ? t_.find(q, p + 1) : std::string_view::npos;
      if (close == std::string_view::npos || close > end) {
        report(Rule::kDeclaration, p, "malformed XML declaration" + std::string(expected));
        return;
      }
      std::string_view value = t_.substr(p + 1, close - p - 1);
      std::string lower(value);
      for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      if (k == 0 && !(value.size() >= 3 && value.substr(0, 2) == "1." &&
                      value.find_first_not_of("0123456789", 2) == std::string_view::npos))
        report(Rule::kDeclaration, p, "XML version " + quote(value) + " (expected \"1.0\")");
      if (k == 1 && lower != "utf-8" && lower != "utf8" && lower != "us-ascii" && lower != "ascii")
        report(Rule::kEncoding, p,
               "encoding " + quote(value) +
                   " is not read by fleetsim (expected \"UTF-8\", or no encoding)");
      if (k == 2 && value != "yes" && value != "no")
        report(Rule::kDeclaration, p,
               "standalone " + quote(value) + " (expected \"yes\" or \"no\")");
      p = close + 1;
      next_name = k + 1;
      first = false;
    }
    if (first)
      report(Rule::kDeclaration, i, "XML declaration without a version" + std::string(expected));
  }

  /// Where the walk is: before the root element, inside it, after it.
  enum class Where { kBefore, kInside, kAfter };

  // Walks the markup, knowing where it is.
  void check_markup() {
    Where where = Where::kBefore;
    std::size_t depth = 0;
    std::size_t start = at(0, "\xEF\xBB\xBF") ? 3 : 0;
    std::size_t i = start;
    const std::size_t n = t_.size();
    while (i < n) {
      if (t_[i] != '<') {
        // Text: inside the root, references and "]]>" are checked; outside, only
        // whitespace may stand.
        std::size_t e = std::min(n, t_.find('<', i));
        if (where == Where::kInside) {
          for (std::size_t k = i; k < e; ++k) {
            if (t_[k] == '&') {
              k = check_reference(k) - 1;
            } else if (t_[k] == ']' && at(k, "]]>")) {
              report(Rule::kCdataEnd, k,
                     "']]>' in text (expected ']]&gt;': the sequence ends CDATA sections "
                     "only)");
            }
          }
        } else {
          std::size_t k = i;
          while (k < e && is_space(t_[k])) ++k;
          if (k < e) {
            std::size_t stop = k;
            while (stop < e && t_[stop] != '\n') ++stop;
            report(Rule::kOutsideRoot, k,
                   std::string("text ") + quote(t_.substr(k, stop - k)) +
                       (where == Where::kBefore ? " before the root element"
                                                : " after the root element") +
                       " (expected only comments and whitespace outside the root element)");
          }
        }
        i = e;
        continue;
      }
      if (at(i, "<!--")) {
        // A comment: no "--" inside, and not ending in "--->".
        std::size_t end = t_.find("-->", i + 4);
        if (end == std::string_view::npos) return;  // pugixml reports the unclosed comment
        int last_line = 0;
        for (std::size_t k = i + 4; k + 1 < end + 1; ++k) {
          bool dashes = k + 1 < end && t_[k] == '-' && t_[k + 1] == '-';
          bool dash_end = k + 1 == end && t_[k] == '-';
          if (!dashes && !dash_end) continue;
          if (line_at(k) != last_line) {
            last_line = line_at(k);
            report(Rule::kComment, k,
                   dash_end ? "comment ends with '--->' (expected '-->' after a character "
                              "other than '-': XML forbids '--' inside a comment)"
                            : "'--' inside a comment (expected no two hyphens in a row "
                              "between '<!--' and '-->': XML forbids them)");
          }
          ++k;
        }
        i = end + 3;
        continue;
      }
      if (at(i, "<?")) {
        // A processing instruction, or the XML declaration (only at the very start).
        std::size_t end = t_.find("?>", i + 2);
        if (end == std::string_view::npos) return;
        std::string_view target = token(i + 2, "?");
        bool is_xml = target.size() == 3 && (target[0] | 0x20) == 'x' &&
                      (target[1] | 0x20) == 'm' && (target[2] | 0x20) == 'l';
        if (target == "xml" && i == start) {
          check_declaration(i, end);
        } else if (target == "xml") {
          report(Rule::kDeclaration, i,
                 "XML declaration <?xml ...?> not at the start of the file (expected it "
                 "first, before any whitespace, or not at all)");
        } else if (is_xml) {
          report(Rule::kProcessingInstruction, i,
                 "processing instruction target " + quote(target) +
                     " is reserved (expected another name)");
        } else {
          check_name(i + 2, target, "processing instruction target");
        }
        i = end + 2;
        continue;
      }
      if (at(i, "<![CDATA[")) {
        std::size_t end = t_.find("]]>", i + 9);
        if (end == std::string_view::npos) return;
        if (where != Where::kInside)
          report(Rule::kOutsideRoot, i,
                 "CDATA section outside the root element (expected only comments and "
                 "whitespace outside the root element)");
        i = end + 3;
        continue;
      }
      if (at(i, "<!")) {
        // <!DOCTYPE ...> (with an internal subset in [...]) or something unknown.
        report(Rule::kDoctype, i,
               at(i, "<!DOCTYPE")
                   ? "document type declaration <!DOCTYPE ...> (expected none: fleetsim "
                     "does not read DTDs, so their entities and defaults would be ignored)"
                   : "markup " + quote(token(i, ">")) +
                         " (expected a comment <!-- -->, a CDATA section or an element)");
        // '[' is looked for before the first '>' only: a file of "<!x>" takes linear time.
        std::size_t close = t_.find('>', i);
        if (close == std::string_view::npos) return;
        std::size_t bracket = t_.substr(i, close - i).find('[');
        if (bracket != std::string_view::npos) {
          bracket += i;
          std::size_t end = t_.find("]", bracket);
          close = end == std::string_view::npos ? end : t_.find('>', end);
        }
        if (close == std::string_view::npos) return;
        i = close + 1;
        continue;
      }
      if (at(i, "</")) {
        std::size_t close = t_.find('>', i);
        if (close == std::string_view::npos) return;
        if (depth > 0 && --depth == 0) where = Where::kAfter;
        i = close + 1;
        continue;
      }
      i = check_start_tag(i, where, depth);
      if (i == std::string_view::npos) return;
    }
  }

  // A start tag or an empty-element tag at t_[i] == '<': its name, its attributes' names
  // (each once) and values (no '<', references well formed). Returns the offset after it, or
  // npos when the tag is broken beyond reading (pugixml reports that).
  std::size_t check_start_tag(std::size_t i, Where& where, std::size_t& depth) {
    const std::size_t n = t_.size();
    if (where == Where::kAfter)
      report(Rule::kSecondRoot, i,
             "element <" + std::string(token(i + 1, "/>").substr(0, 40)) +
                 "> after the root element (expected one root element holding all others)");
    if (where != Where::kInside) where = Where::kInside;
    std::string_view element = token(i + 1, "/>");
    check_name(i + 1, element, "element name");
    std::size_t p = i + 1 + element.size();
    std::set<std::string_view> seen;
    while (true) {
      while (p < n && is_space(t_[p])) ++p;
      if (p >= n) return std::string_view::npos;
      if (t_[p] == '>') {
        ++depth;
        return p + 1;
      }
      if (t_[p] == '/') {
        if (p + 1 >= n || t_[p + 1] != '>') return std::string_view::npos;
        if (depth == 0) where = Where::kAfter;
        return p + 2;
      }
      std::string_view attr = token(p, "=/>");
      if (attr.empty()) return std::string_view::npos;
      check_name(p, attr, "attribute name");
      if (!seen.insert(attr).second)
        report(Rule::kDuplicateAttribute, p,
               "attribute '" + std::string(attr) + "' given twice in <" + std::string(element) +
                   "> (expected each attribute once)");
      p += attr.size();
      while (p < n && is_space(t_[p])) ++p;
      if (p >= n || t_[p] != '=') return std::string_view::npos;
      ++p;
      while (p < n && is_space(t_[p])) ++p;
      if (p >= n || (t_[p] != '"' && t_[p] != '\'')) return std::string_view::npos;
      std::size_t close = t_.find(t_[p], p + 1);
      if (close == std::string_view::npos) return std::string_view::npos;
      for (std::size_t k = p + 1; k < close; ++k) {
        if (t_[k] == '<')
          report(Rule::kAttributeValue, k,
                 "'<' in the value of attribute '" + std::string(attr) +
                     "' (expected &lt; for a literal '<')");
        else if (t_[k] == '&')
          k = std::min(check_reference(k), close) - 1;
      }
      p = close + 1;
    }
  }

  std::string_view t_;
  std::vector<std::size_t> line_starts_;
  std::vector<XmlProblem> found_;
  std::set<std::pair<int, int>> reported_;
};

}  // namespace

std::vector<XmlProblem> find_xml_problems(std::string_view text) {
  return Scanner(text).run();
}

}  // namespace fleetsim
