#include "core/xml_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "core/xml_well_formed.hpp"

namespace fleetsim {

namespace {

bool looks_binary(const std::string& text) {
  std::size_t n = std::min<std::size_t>(text.size(), 4096);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0) return true;
    if (c < 0x09 || (c > 0x0d && c < 0x20 && c != 0x1b)) return true;
  }
  return false;
}

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::optional<double> parse_real(const std::string& raw) {
  std::string s = trim(raw);
  if (s.empty()) return std::nullopt;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  double v = 0;
  auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::unique_ptr<XmlFile> XmlFile::load(const std::string& path, Diagnostics& diags) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    diags.error({path, 0}, "file not found (expected a path to an existing XML file)");
    return nullptr;
  }
  if (std::filesystem::is_directory(path, ec)) {
    diags.error({path, 0}, "is a directory (expected an XML file)");
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.error({path, 0}, std::string("cannot read file: ") + std::strerror(errno));
    return nullptr;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, diags);
}

std::unique_ptr<XmlFile> XmlFile::parse(std::string text, const std::string& name,
                                        Diagnostics& diags) {
  auto f = std::unique_ptr<XmlFile>(new XmlFile());
  f->path_ = name;
  f->text_ = std::move(text);
  if (trim(f->text_).empty()) {
    diags.error({name, 1}, "file is empty (expected an XML document)");
    return nullptr;
  }
  if (looks_binary(f->text_)) {
    diags.error({name, 1}, "file looks binary (expected an XML text file)");
    return nullptr;
  }
  f->line_starts_.push_back(0);
  for (std::size_t i = 0; i < f->text_.size(); ++i)
    if (f->text_[i] == '\n') f->line_starts_.push_back(i + 1);
  // pugixml builds the tree and finds broken structure (unclosed or mismatched tags, broken
  // attribute syntax); the scan finds what XML 1.0 forbids and pugixml lets through ("--" in
  // a comment, duplicate attributes, text outside the root, ...). Both are reported, in the
  // order of the file, so a user sees every problem at once; of the scan's, only those
  // before the place where pugixml stopped, as the text after it may be read out of step.
  auto res = f->doc_.load_buffer(f->text_.data(), f->text_.size(),
                                 pugi::parse_default | pugi::parse_ws_pcdata_single);
  std::size_t stop =
      res ? std::string::npos : static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, res.offset));
  bool well_formed = true;
  for (const XmlProblem& p : find_xml_problems(f->text_)) {
    if (p.offset >= stop) break;
    diags.error({name, p.line}, p.message);
    well_formed = false;
  }
  if (!res) {
    int line = 1;
    if (res.offset >= 0) {
      auto it = std::upper_bound(f->line_starts_.begin(), f->line_starts_.end(),
                                 static_cast<std::size_t>(res.offset));
      line = static_cast<int>(it - f->line_starts_.begin());
    }
    std::string what = res.description();
    std::size_t last = f->text_.find_last_not_of(" \t\r\n");
    if (res.status == pugi::status_end_element_mismatch ||
        static_cast<std::size_t>(res.offset) >= last || f->text_[last] != '>')
      what += "; the file may be truncated";
    diags.error({name, line}, "malformed XML: " + what + " (expected well-formed XML)");
    return nullptr;
  }
  if (!well_formed) return nullptr;
  if (!f->doc_.document_element()) {
    diags.error({name, 1}, "no root element (expected an XML document)");
    return nullptr;
  }
  return f;
}

std::string XmlFile::directory() const {
  return std::filesystem::path(path_).parent_path().string();
}

std::string XmlFile::resolve(const std::string& p) const {
  std::filesystem::path fp(p);
  if (fp.is_absolute()) return p;
  std::string dir = directory();
  if (dir.empty()) return p;
  return (std::filesystem::path(dir) / fp).lexically_normal().string();
}

std::unique_ptr<XmlFile> XmlFile::derived(const std::string& path) {
  auto f = std::unique_ptr<XmlFile>(new XmlFile());
  f->path_ = path;
  f->derived_ = true;
  return f;
}

int XmlFile::line_of(pugi::xml_node n) const {
  if (derived_) {
    auto it = node_lines_.find(n.internal_object());
    return it == node_lines_.end() ? 0 : it->second;
  }
  std::ptrdiff_t off = n.offset_debug();
  if (off < 0) return 0;
  auto it =
      std::upper_bound(line_starts_.begin(), line_starts_.end(), static_cast<std::size_t>(off));
  return static_cast<int>(it - line_starts_.begin());
}

int XmlFile::line_of(pugi::xml_node n, const char* attr) const {
  if (derived_) {
    auto it = attribute_lines_.find(n.attribute(attr).internal_object());
    return it == attribute_lines_.end() || n.attribute(attr).empty() ? line_of(n) : it->second;
  }
  std::ptrdiff_t off = n.offset_debug();
  if (off < 0 || n.type() != pugi::node_element || n.attribute(attr).empty()) return line_of(n);
  // The file is well-formed here (parse refused it otherwise): from the element's name, walk
  // its start tag's attributes, name="value" or name='value', to the one asked for.
  const std::string_view t(text_);
  const std::string_view name(attr);
  auto space = [&](std::size_t i) {
    return i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n');
  };
  std::size_t i = static_cast<std::size_t>(off);
  while (i < t.size() && !space(i) && t[i] != '>' && t[i] != '/') ++i;  // the element's name
  while (true) {
    while (space(i)) ++i;
    if (i >= t.size() || t[i] == '>' || t[i] == '/') return line_of(n);
    std::size_t eq = t.find('=', i);
    if (eq == std::string_view::npos) return line_of(n);
    std::size_t end = eq;
    while (end > i && space(end - 1)) --end;
    if (t.substr(i, end - i) == name) {
      auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), i);
      return static_cast<int>(it - line_starts_.begin());
    }
    std::size_t open = t.find_first_of("\"'", eq);
    if (open == std::string_view::npos) return line_of(n);
    std::size_t close = t.find(t[open], open + 1);
    if (close == std::string_view::npos) return line_of(n);
    i = close + 1;
  }
}

std::optional<std::string> XmlElement::raw(const char* attr, bool required, const char* expected) {
  asked_.emplace_back(attr);
  pugi::xml_attribute a = node_.attribute(attr);
  if (a.empty()) {
    if (required)
      error(std::string("<") + name() + "> is missing attribute '" + attr + "' (expected " +
            expected + ")");
    return std::nullopt;
  }
  return std::string(a.value());
}

std::string XmlElement::text(const char* attr, const std::string& fallback, bool required) {
  auto v = raw(attr, required, "a string");
  return v ? *v : fallback;
}

double XmlElement::real(const char* attr, double fallback, double lo, double hi, bool required) {
  auto v = raw(attr, required, "a number");
  if (!v) return fallback;
  auto d = parse_real(*v);
  if (!d) {
    error(std::string("attribute '") + attr + "' of <" + name() + "> is '" + *v +
          "' (expected a finite number)");
    return fallback;
  }
  if (*d < lo || *d > hi) {
    std::ostringstream range;
    range << "expected a number";
    if (lo > -1e300 && hi < 1e300)
      range << " between " << lo << " and " << hi;
    else if (lo > -1e300)
      range << " >= " << lo;
    else
      range << " <= " << hi;
    error(std::string("attribute '") + attr + "' of <" + name() + "> is " + *v + " (" +
          range.str() + ")");
    return fallback;
  }
  return *d;
}

std::int64_t XmlElement::integer(const char* attr, std::int64_t fallback, std::int64_t lo,
                                 std::int64_t hi, bool required) {
  auto v = raw(attr, required, "an integer");
  if (!v) return fallback;
  std::string s = trim(*v);
  std::int64_t x = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  auto r = std::from_chars(b, e, x);
  if (s.empty() || r.ec != std::errc() || r.ptr != e) {
    error(std::string("attribute '") + attr + "' of <" + name() + "> is '" + *v +
          "' (expected an integer)");
    return fallback;
  }
  if (x < lo || x > hi) {
    std::string range = "expected an integer";
    if (lo != INT64_MIN && hi != INT64_MAX)
      range += " between " + std::to_string(lo) + " and " + std::to_string(hi);
    else if (lo != INT64_MIN)
      range += " >= " + std::to_string(lo);
    else
      range += " <= " + std::to_string(hi);
    error(std::string("attribute '") + attr + "' of <" + name() + "> is " + s + " (" + range + ")");
    return fallback;
  }
  return x;
}

bool XmlElement::boolean(const char* attr, bool fallback) {
  auto v = raw(attr, false, "true or false");
  if (!v) return fallback;
  std::string s = trim(*v);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  error(std::string("attribute '") + attr + "' of <" + name() + "> is '" + *v +
        "' (expected true or false)");
  return fallback;
}

std::vector<double> XmlElement::reals(const char* attr, std::size_t count, bool required) {
  auto v = raw(attr, required, count ? "a list of numbers" : "numbers");
  if (!v) return {};
  std::vector<double> out;
  std::string s = *v;
  std::size_t start = 0;
  bool bad = false;
  while (true) {
    std::size_t comma = s.find(',', start);
    std::string part =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto d = parse_real(part);
    if (!d) {
      bad = true;
      break;
    }
    out.push_back(*d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (bad || (count != 0 && out.size() != count)) {
    std::string expected = count ? std::to_string(count) + " finite numbers separated by commas"
                                 : "finite numbers separated by commas";
    error(std::string("attribute '") + attr + "' of <" + name() + "> is '" + *v + "' (expected " +
          expected + ")");
    return {};
  }
  return out;
}

Vec2 XmlElement::vec2(const char* attr, Vec2 fallback, bool required) {
  auto v = reals(attr, 2, required);
  if (v.size() != 2) return fallback;
  return {v[0], v[1]};
}

std::string XmlElement::choice(const char* attr, const std::vector<std::string>& options,
                               const std::string& fallback, bool required) {
  auto v = raw(attr, required, "one of the listed values");
  if (!v) return fallback;
  if (std::find(options.begin(), options.end(), *v) != options.end()) return *v;
  std::string list;
  for (const auto& o : options) list += (list.empty() ? "" : ", ") + o;
  error(std::string("attribute '") + attr + "' of <" + name() + "> is '" + *v +
        "' (expected one of: " + list + ")" + did_you_mean(*v, options));
  return fallback;
}

std::vector<XmlElement> XmlElement::children() const {
  std::vector<XmlElement> out;
  for (pugi::xml_node c = node_.first_child(); c; c = c.next_sibling())
    if (c.type() == pugi::node_element) out.emplace_back(*file_, c, *diags_);
  return out;
}

std::vector<XmlElement> XmlElement::children(const char* child_name) const {
  std::vector<XmlElement> out;
  for (pugi::xml_node c = node_.child(child_name); c; c = c.next_sibling(child_name))
    out.emplace_back(*file_, c, *diags_);
  return out;
}

std::optional<XmlElement> XmlElement::first_child(const char* child_name) const {
  pugi::xml_node c = node_.child(child_name);
  if (!c) return std::nullopt;
  return XmlElement(*file_, c, *diags_);
}

void XmlElement::check_at_most_one(const std::vector<std::string>& names) const {
  for (const std::string& n : names) {
    auto v = children(n.c_str());
    if (v.size() > 1) v[1].error("<" + n + "> appears more than once (expected at most one)");
  }
}

void XmlElement::check_children(const std::vector<std::string>& allowed) const {
  for (pugi::xml_node c = node_.first_child(); c; c = c.next_sibling()) {
    if (c.type() != pugi::node_element) continue;
    std::string n = c.name();
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
      std::string list;
      for (const auto& o : allowed) list += (list.empty() ? "" : ", ") + o;
      diags_->error(file_->where(c),
                    "unknown element <" + n + "> in <" + name() + "> (expected " +
                        (allowed.empty() ? std::string("no children") : "one of: " + list) + ")" +
                        did_you_mean(n, allowed));
    }
  }
}

void XmlElement::finish() {
  for (pugi::xml_attribute a = node_.first_attribute(); a; a = a.next_attribute()) {
    std::string n = a.name();
    if (std::find(asked_.begin(), asked_.end(), n) == asked_.end()) {
      std::string list;
      for (const auto& o : asked_) list += (list.empty() ? "" : ", ") + o;
      error("unknown attribute '" + n + "' on <" + name() + "> (expected " +
            (asked_.empty() ? std::string("no attributes") : "one of: " + list) + ")" +
            did_you_mean(n, asked_));
    }
  }
}

}  // namespace fleetsim
