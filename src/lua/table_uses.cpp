#include "lua/table_uses.hpp"

#include <cctype>

namespace fleetsim::lua {

namespace {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// Reads Lua's tokens far enough to tell code from comments and strings.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::vector<TableUse> uses() {
    std::vector<TableUse> out;
    char before = 0;  // the last code character before the current token
    while (true) {
      const char c = next_code();
      if (i_ >= s_.size()) break;
      if (c == '"' || c == '\'') {
        skip_quoted(c);
        before = c;
      } else if (c == '[' && (at(1) == '[' || at(1) == '=') && skip_long_bracket()) {
        before = '"';
      } else if (ident_start(c)) {
        const std::size_t start = i_;
        while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
        const std::string_view word = s_.substr(start, i_ - start);
        if (word == "robot" && before != '.' && before != ':') read_field(out, before);
        before = 'a';
      } else if (c == '.' && at(1) == '.') {  // `..` or `...`: no field follows
        while (i_ < s_.size() && s_[i_] == '.') ++i_;
        before = '+';
      } else {
        before = c;
        ++i_;
      }
    }
    return out;
  }

 private:
  char at(std::size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }

  /// Skips spaces, newlines and comments; returns the next code character (not consumed).
  char next_code() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '-' && at(1) == '-') {
        i_ += 2;
        if (!skip_long_bracket()) skip_to_line_end();
      } else {
        return c;
      }
    }
    return '\0';
  }

  /// After `robot`: a `.name` makes a use.
  void read_field(std::vector<TableUse>& out, char before) {
    if (next_code() != '.' || at(1) == '.') return;  // not a field (`robot ..` concatenates)
    ++i_;
    if (!ident_start(next_code())) return;
    TableUse use;
    use.line = line_;
    const std::size_t start = i_;
    while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
    use.name = std::string(s_.substr(start, i_ - start));
    const char after = next_code();
    use.reaches_in = before == '#' || after == '[' || after == ':' || after == '(' ||
                     after == '{' || after == '"' || after == '\'' ||
                     (after == '.' && at(1) != '.');
    out.push_back(std::move(use));
  }

  void skip_to_line_end() {
    while (i_ < s_.size() && s_[i_] != '\n') ++i_;
  }

  void skip_quoted(char quote) {
    ++i_;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\n') ++line_;  // (an unfinished string: Lua reports it)
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        ++i_;
        if (s_[i_] == '\n') ++line_;
      }
      ++i_;
    }
    ++i_;
  }

  /// At `[`: skips a long bracket `[==[ ... ]==]` and returns true, or returns false (nothing
  /// consumed) when there is none.
  bool skip_long_bracket() {
    if (at(0) != '[') return false;
    std::size_t level = 0;
    while (at(1 + level) == '=') ++level;
    if (at(1 + level) != '[') return false;
    std::string close(level + 2, '=');
    close.front() = close.back() = ']';
    const std::size_t end = s_.find(close, i_ + level + 2);
    const std::size_t stop = end == std::string_view::npos ? s_.size() : end + close.size();
    for (std::size_t k = i_; k < stop; ++k)
      if (s_[k] == '\n') ++line_;
    i_ = stop;
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<TableUse> robot_table_uses(std::string_view source) {
  return Scanner(source).uses();
}

}  // namespace fleetsim::lua
