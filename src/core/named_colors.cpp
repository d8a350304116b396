#include "core/named_colors.hpp"

#include <array>
#include <charconv>

namespace fleetsim {

namespace {
// ARGoS's CColor constants keep their values so that scripts show the same colours; `gray`
// (50 %) and `off` (an unlit LED) are fleetsim's additions.
constexpr std::array<NamedColor, 23> kNamedColors = {{
    {"black", {0, 0, 0, 255}},        {"white", {255, 255, 255, 255}},
    {"red", {255, 0, 0, 255}},        {"green", {0, 255, 0, 255}},
    {"blue", {0, 0, 255, 255}},       {"magenta", {255, 0, 255, 255}},
    {"cyan", {0, 255, 255, 255}},     {"yellow", {255, 255, 0, 255}},
    {"orange", {255, 140, 0, 255}},   {"brown", {165, 42, 42, 255}},
    {"purple", {160, 32, 240, 255}},  {"gray", {128, 128, 128, 255}},
    {"gray10", {26, 26, 26, 255}},    {"gray20", {51, 51, 51, 255}},
    {"gray30", {77, 77, 77, 255}},    {"gray40", {102, 102, 102, 255}},
    {"gray50", {127, 127, 127, 255}}, {"gray60", {153, 153, 153, 255}},
    {"gray70", {179, 179, 179, 255}}, {"gray80", {204, 204, 204, 255}},
    {"gray90", {229, 229, 229, 255}}, {"off", {0, 0, 0, 255}},
    {"grey", {128, 128, 128, 255}},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}
}  // namespace

std::span<const NamedColor> named_colors() {
  return kNamedColors;
}

std::optional<Color> parse_color(std::string_view text) {
  for (const NamedColor& n : kNamedColors)
    if (n.name == text) return n.color;
  // "r,g,b" or "r,g,b,a"
  int values[4] = {0, 0, 0, 255};
  int count = 0;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view part = trim(text.substr(0, comma));
    if (count == 4 || part.empty()) return std::nullopt;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), values[count]);
    if (ec != std::errc() || end != part.data() + part.size() || values[count] < 0 ||
        values[count] > 255)
      return std::nullopt;
    ++count;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (count < 3) return std::nullopt;
  return Color{static_cast<std::uint8_t>(values[0]), static_cast<std::uint8_t>(values[1]),
               static_cast<std::uint8_t>(values[2]), static_cast<std::uint8_t>(values[3])};
}

}  // namespace fleetsim
