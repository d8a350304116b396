// The colour names a controller may use (ARGoS's CColor names, plus `gray` and `off`), and the
// "r,g,b" / "r,g,b,a" text form. One table: the Lua API's set_all_colors/set_single_color
// read it, and any other place that takes a colour by name should too.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "fleetsim/types.hpp"

namespace fleetsim {

/// A named colour: `name` as a user writes it, its RGBA value.
struct NamedColor {
  std::string_view name;
  Color color;
};

/// Every known colour name, in the order `docs/lua-api.md` lists them.
std::span<const NamedColor> named_colors();

/// The colour called `text` ("red", "gray50", ...) or written as "r,g,b" or "r,g,b,a" (each
/// 0 to 255, spaces allowed around the numbers); nullopt when it is neither.
std::optional<Color> parse_color(std::string_view text);

}  // namespace fleetsim
