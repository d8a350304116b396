// Checked reading of user-written XML files (experiments, federations, view configurations).
//
// Every value remembers the line it came from, so every problem reads
// "file:line: error: what is wrong (what was expected)". Problems are collected in a
// Diagnostics and reading continues with a default, so a user sees all errors at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include "core/diagnostics.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// A parsed XML file with a line table. Owns the pugixml document.
class XmlFile {
 public:
  /// Reads and parses `path`. On failure (missing, unreadable, empty, binary, malformed or
  /// truncated), reports to `diags` and returns nullptr.
  static std::unique_ptr<XmlFile> load(const std::string& path, Diagnostics& diags);
  /// Parses `text` as if read from a file called `name` (tests, inline experiments).
  static std::unique_ptr<XmlFile> parse(std::string text, const std::string& name,
                                        Diagnostics& diags);
  /// An empty document that another file's reader fills in (an ARGoS .argos file read into
  /// fleetsim's format): it has no text, and the line of each node or attribute is the one
  /// set_line gives it (0 when none), so that errors point into the file the user wrote.
  static std::unique_ptr<XmlFile> derived(const std::string& path);
  /// The document, to fill in (derived files).
  pugi::xml_document& document() { return doc_; }
  /// The line in path() a derived file's node or attribute comes from.
  void set_line(pugi::xml_node n, int line) { node_lines_[n.internal_object()] = line; }
  void set_line(pugi::xml_attribute a, int line) { attribute_lines_[a.internal_object()] = line; }
  /// A derived file's new element under `parent`, and a new attribute of `n`, both from `line`.
  pugi::xml_node add_element(pugi::xml_node parent, const char* name, int line) {
    pugi::xml_node n = parent.append_child(name);
    set_line(n, line);
    return n;
  }
  void add_attribute(pugi::xml_node n, const char* name, const std::string& value, int line) {
    pugi::xml_attribute a = n.append_attribute(name);
    a.set_value(value.c_str());
    set_line(a, line);
  }

  pugi::xml_node root() const { return doc_.document_element(); }
  const std::string& path() const { return path_; }
  /// Directory of the file, for resolving relative paths it names ("" = current directory).
  std::string directory() const;
  /// 1-based line of a node.
  int line_of(pugi::xml_node n) const;
  /// 1-based line of the attribute `attr` of element `n` (an element's attributes may span
  /// several lines); the element's line when it has no such attribute.
  int line_of(pugi::xml_node n, const char* attr) const;
  SourceLocation where(pugi::xml_node n) const { return {path_, line_of(n)}; }
  /// Resolves `p` relative to this file's directory (absolute paths unchanged).
  std::string resolve(const std::string& p) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<std::size_t> line_starts_;
  pugi::xml_document doc_;
  bool derived_ = false;
  std::map<const void*, int> node_lines_, attribute_lines_;  ///< derived files' lines
};

/// Reads the attributes of one element with type and range checks. Call `finish()` after
/// the last read: any attribute that was not asked for is reported as unknown, with a
/// "did you mean" among the names that were asked for.
class XmlElement {
 public:
  XmlElement(const XmlFile& file, pugi::xml_node node, Diagnostics& diags)
      : file_(&file), node_(node), diags_(&diags) {}

  const char* name() const { return node_.name(); }
  pugi::xml_node node() const { return node_; }
  const XmlFile& file() const { return *file_; }
  Diagnostics& diagnostics() const { return *diags_; }
  SourceLocation where() const { return file_->where(node_); }
  /// Where the attribute `attr` is written (this element's line when it is absent).
  SourceLocation where(const char* attr) const {
    return {file_->path(), file_->line_of(node_, attr)};
  }
  bool has(const char* attr) const { return !node_.attribute(attr).empty(); }
  /// Reports an error at this element.
  void error(const std::string& message) const { diags_->error(where(), message); }
  void warning(const std::string& message) const { diags_->warning(where(), message); }

  /// A string attribute; `required` reports its absence.
  std::string text(const char* attr, const std::string& fallback = "", bool required = false);
  /// A finite real in [lo, hi].
  double real(const char* attr, double fallback, double lo = -1e300, double hi = 1e300,
              bool required = false);
  /// An integer in [lo, hi].
  std::int64_t integer(const char* attr, std::int64_t fallback, std::int64_t lo = INT64_MIN,
                       std::int64_t hi = INT64_MAX, bool required = false);
  /// true/false (also 1/0, yes/no, on/off).
  bool boolean(const char* attr, bool fallback);
  /// "x,y" (finite reals).
  Vec2 vec2(const char* attr, Vec2 fallback, bool required = false);
  /// A comma-separated list of exactly `count` finite reals (count 0 = any number >= 1).
  std::vector<double> reals(const char* attr, std::size_t count, bool required = false);
  /// One of `options`; otherwise an error listing them (with "did you mean").
  std::string choice(const char* attr, const std::vector<std::string>& options,
                     const std::string& fallback, bool required = false);
  /// Marks an attribute as known without reading it.
  void accept(const char* attr) { asked_.emplace_back(attr); }

  /// Element children, in document order.
  std::vector<XmlElement> children() const;
  /// Children named `name`.
  std::vector<XmlElement> children(const char* name) const;
  /// The first child named `name`, if any.
  std::optional<XmlElement> first_child(const char* name) const;
  /// Reports the second child of each of `names` ("appears more than once").
  void check_at_most_one(const std::vector<std::string>& names) const;
  /// Reports every child element whose name is not in `allowed`.
  void check_children(const std::vector<std::string>& allowed) const;
  /// Reports unknown attributes (those never asked for). Call once, after reading.
  void finish();

 private:
  std::optional<std::string> raw(const char* attr, bool required, const char* expected);
  const XmlFile* file_;
  pugi::xml_node node_;
  Diagnostics* diags_;
  std::vector<std::string> asked_;
};

/// Parses a real number the way the XML reader does (whole string, finite). For plug-ins.
std::optional<double> parse_real(const std::string& s);

}  // namespace fleetsim
