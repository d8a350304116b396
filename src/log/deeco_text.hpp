// Tokens of the DEECo playground text log (report section 3, issue 2): escaping, number
// formatting, splitting on unescaped separators, and the field-unit transform.
#pragma once

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

/// The affine map between world metres (y up) and DEECo field units (origin at the field's
/// top-left corner, y down): field = (world - corner) / scale, with y mirrored.
struct FieldTransform {
  double left_m = 0;          ///< world x of the field's left edge
  double top_m = 0;           ///< world y of the field's top edge
  double metres_per_unit = 1;

  /// Field of a header: the bitmap if there is one, else the arena in metres.
  static FieldTransform of(const LogHeader& header);

  double field_x(double world_x) const { return scale(world_x - left_m); }
  double field_y(double world_y) const { return scale(top_m - world_y); }
  double field_length(double metres) const { return scale(metres); }
  /// Heading in the field frame: y points down, so the angle changes sign.
  static double field_angle(double world_theta) { return 0.0 - world_theta; }

 private:
  double scale(double metres) const {
    return metres_per_unit == 1 ? metres : metres / metres_per_unit;
  }
};

}  // namespace fleetsim::log::deeco
