// Tokens of the DEECo playground text log (report section 3, issue 2): escaping, number
// formatting, splitting on unescaped separators, and the field-unit transform.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_types.hpp"

namespace fleetsim::log::deeco {

/// Appends `s` with `&`, `;`, `,` and `\` prefixed by a backslash, and line breaks written
/// as `\n` / `\r` (so that one cycle stays on one line).
void append_escaped(std::string& out, std::string_view s);

/// Removes the escapes of append_escaped: `\n` and `\r` become line breaks, `\X` becomes X.
std::string unescape(std::string_view s);

/// Appends the shortest text that reads back as exactly `v` (std::to_chars).
void append_number(std::string& out, double v);

/// Parses a whole token as a double (surrounding spaces allowed); false if it is not one.
bool parse_number(std::string_view token, double& v);

/// Splits `s` on every occurrence of `separator` that is not escaped by a backslash. The
/// pieces keep their escapes.
std::vector<std::string_view> split_unescaped(std::string_view s, std::string_view separator);

/// True if `s` contains `separator` outside escapes.
bool contains_unescaped(std::string_view s, std::string_view separator);

/// Most decimal places of an arena side that the field units keep (micrometres); finer sides
/// are rounded to the micrometre.
inline constexpr int kMaxArenaDecimals = 6;

/// Decimal places of the shortest text that reads back as `v` ("12" 0, "12.5" 1, "1e-05" 5).
int decimal_places(double v);

/// The affine map between world metres (y up) and DEECo field units (origin at the field's
/// top-left corner, y down): field = (world - corner) / metres_per_unit, with y mirrored.
///
/// The grammar wants the field's width and height as integers. With a bitmap the unit is the
/// pixel (the bitmap's resolution). Without one, the unit is 10^-k metres, k the most decimal
/// places of the arena's two sides (0 for 40 x 30 m: one unit per metre, as the DEECo tools
/// wrote; 1 for 12.5 x 3 m: decimetres, a 125 x 30 field). docs/log-format.md, section 2.1.
struct FieldTransform {
  double left_m = 0;           ///< world x of the field's left edge
  double top_m = 0;            ///< world y of the field's top edge
  double metres_per_unit = 1;  ///< the bitmap's resolution, or 10^-k for an arena
  /// 10^k for an arena (exact, so that metres are scaled by a multiplication that rounds once);
  /// 0 with a bitmap (metres are divided by its resolution).
  double units_per_metre = 1;
  std::int64_t width_units = 0, height_units = 0;  ///< the field's size in units (integers)

  /// Field of a header: the bitmap if there is one, else the arena.
  static FieldTransform of(const LogHeader& header);

  double field_x(double world_x) const { return field_length(world_x - left_m); }
  double field_y(double world_y) const { return field_length(top_m - world_y); }
  double field_length(double metres) const {
    return units_per_metre > 0 ? metres * units_per_metre : metres / metres_per_unit;
  }
  /// Heading in the field frame: y points down, so the angle changes sign.
  static double field_angle(double world_theta) { return 0.0 - world_theta; }
};

}  // namespace fleetsim::log::deeco
