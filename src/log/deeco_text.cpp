#include "log/deeco_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "fleetsim/types.hpp"

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
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (s[i] != '\\' || !std::strchr("&;,\\nr", next) || next == '\0') {
      out.push_back(s[i]);
      continue;
    }
    ++i;
    out.push_back(next == 'n' ? '\n' : next == 'r' ? '\r' : next);
  }
  return out;
}

void append_java_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-Infinity" : "Infinity";
    return;
  }
  if (v == 0) {
    out += std::signbit(v) ? "-0.0" : "0.0";
    return;
  }
  // The shortest digits d1.d2d3... and the exponent e of v = d1.d2d3... x 10^e.
  char buf[40];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  const std::string_view text(buf, static_cast<std::size_t>(end - buf));
  const std::size_t e_at = text.find('e');
  std::string digits(1, text[0]);
  if (text.size() > 1 && text[1] == '.') digits.append(text.substr(2, e_at - 2));
  int exponent = 0;
  std::string_view e_text = text.substr(e_at + 1);
  if (!e_text.empty() && e_text.front() == '+') e_text.remove_prefix(1);
  std::from_chars(e_text.data(), e_text.data() + e_text.size(), exponent);
  if (v < 0) out.push_back('-');
  if (exponent >= -3 && exponent < 7) {  // Java: plain from 10^-3 up to below 10^7
    if (exponent >= 0) {
      const auto whole = static_cast<std::size_t>(exponent) + 1;
      for (std::size_t i = 0; i < whole; ++i) out.push_back(i < digits.size() ? digits[i] : '0');
      out.push_back('.');
      out += digits.size() > whole ? digits.substr(whole) : std::string("0");
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    }
    return;
  }
  out.push_back(digits[0]);
  out.push_back('.');
  out += digits.size() > 1 ? digits.substr(1) : std::string("0");
  out.push_back('E');
  out += std::to_string(exponent);
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

int decimal_places(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  int exponent = 0;
  if (auto e = text.find('e'); e != std::string_view::npos) {
    std::string_view digits = text.substr(e + 1);
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
    text = text.substr(0, e);
  }
  const auto dot = text.find('.');
  const int fraction = dot == std::string_view::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  return std::max(0, fraction - exponent);
}

double FieldTransform::playground_angle(double world_theta) {
  return wrap_angle(world_theta + kPi / 2);
}

double FieldTransform::world_theta(double playground_angle) {
  return wrap_angle(playground_angle - kPi / 2);
}

FieldTransform FieldTransform::of(const LogHeader& h) {
  FieldTransform t;
  if (h.bitmap_width > 0) {
    t.left_m = h.bitmap_top_left.x;
    t.top_m = h.bitmap_top_left.y;
    t.metres_per_unit = h.bitmap_resolution_m;
    t.units_per_metre = 0;
    t.width_units = h.bitmap_width;
    t.height_units = h.bitmap_height;
    return t;
  }
  t.left_m = h.arena_center.x - h.arena_width_m / 2;
  t.top_m = h.arena_center.y + h.arena_height_m / 2;
  const double w = std::isfinite(h.arena_width_m) ? std::max(0.0, h.arena_width_m) : 0;
  const double ht = std::isfinite(h.arena_height_m) ? std::max(0.0, h.arena_height_m) : 0;
  int k = std::min(kMaxArenaDecimals, std::max(decimal_places(w), decimal_places(ht)));
  // Keep the sizes exact integers in a double (and in an int64).
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  double scale = 1;
  for (int i = 0; i < k; ++i) scale *= 10;
  while (k > 0 && std::max(w, ht) * scale >= kExactIntegers) {
    --k;
    scale /= 10;
  }
  t.units_per_metre = scale;
  t.metres_per_unit = 1 / scale;
  t.width_units = static_cast<std::int64_t>(std::min(std::round(w * scale), kExactIntegers));
  t.height_units = static_cast<std::int64_t>(std::min(std::round(ht * scale), kExactIntegers));
  return t;
}

}  // namespace fleetsim::log::deeco
