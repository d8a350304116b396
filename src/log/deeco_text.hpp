// Tokens of the DEECo playground text log (docs/log-format.md, section 2): escaping, number
// formatting, splitting on unescaped separators, and the field-unit transform.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_types.hpp"

namespace fleetsim::log::deeco {

/// The two grammars of the DEECo log: the playground program's (what its Simulation writes
/// and its Visualization reads; fleetsim writes it) and the architecture document's section 3
/// (fleetsim's DEECo logs before they followed the program; read only). docs/log-format.md 2.5.
enum class Grammar { kPlayground, kReport };

/// Appends `s` with `&`, `;` and `,` prefixed by a backslash as the playground does, and `\`
/// doubled and line breaks written as `\n` / `\r` (so that one cycle stays on one line).
void append_escaped(std::string& out, std::string_view s);

/// Removes the escapes: `\&`, `\;`, `\,` and `\\` become the character, `\n` and `\r` line
/// breaks; a backslash before anything else is kept (the playground writes it alone).
std::string unescape(std::string_view s);

/// Appends `v` as Java's Double.toString prints it (`1.0`, `-0.5`, `1.0E-5`, `NaN`,
/// `Infinity`), with the shortest digits that read back as exactly `v`.
void append_java_number(std::string& out, double v);

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
  /// The playground's heading of a world heading: a robot of heading a moves by
  /// (sin a, cos a) in the field (y down), so a = theta + pi/2, in (-pi, pi] as its
  /// Geometry.normalizeAngle leaves it.
  static double playground_angle(double world_theta);
  /// The world heading of a playground heading.
  static double world_theta(double playground_angle);
};

}  // namespace fleetsim::log::deeco
