#include "log/deeco_text.hpp"

#include <charconv>

namespace fleetsim::log::deeco {

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&':
      case ';':
      case ',':
      case '\\':
        out.push_back('\\');
        out.push_back(c);
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out.push_back(c);
    }
  }
}

std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out.push_back(c == 'n' ? '\n' : c == 'r' ? '\r' : c);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

void append_number(std::string& out, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

bool parse_number(std::string_view token, double& v) {
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return false;
  if (token.front() == '+') token.remove_prefix(1);
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  return ec == std::errc() && end == token.data() + token.size();
}

std::vector<std::string_view> split_unescaped(std::string_view s, std::string_view separator) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '\\') {
      i += 2;
    } else if (s.compare(i, separator.size(), separator) == 0) {
      pieces.push_back(s.substr(start, i - start));
      i += separator.size();
      start = i;
    } else {
      ++i;
    }
  }
  pieces.push_back(s.substr(std::min(start, s.size())));
  return pieces;
}

bool contains_unescaped(std::string_view s, std::string_view separator) {
  return split_unescaped(s, separator).size() > 1;
}

FieldTransform FieldTransform::of(const LogHeader& h) {
  FieldTransform t;
  if (h.bitmap_width > 0) {
    t.left_m = h.bitmap_top_left.x;
    t.top_m = h.bitmap_top_left.y;
    t.metres_per_unit = h.bitmap_resolution_m;
  } else {
    t.left_m = h.arena_center.x - h.arena_width_m / 2;
    t.top_m = h.arena_center.y + h.arena_height_m / 2;
    t.metres_per_unit = 1;
  }
  return t;
}

}  // namespace fleetsim::log::deeco
