// fleetsim public SDK: per-robot state columns.
//
// Every part of a robot (its body, each sensor, each actuator, a controller with state)
// declares the per-robot columns it owns, once, as ColumnDescs. From those declarations alone
// come the WorldState storage, the state hash, the frame log's header and frames, the
// viewer's decoding, and any other whole-state pass (removal, copying a robot's row). Nothing
// downstream lists columns by hand (the idea of MuJoCo's one X-macro table).
//
// Storage: column c holds `width` elements of `type` per robot, row-major (robot r's elements
// are [r * width, (r + 1) * width)), indexed by the dense robot index. A column is shared by
// every robot; a robot whose kind lacks the part that declared it keeps zeros there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fleetsim {

/// Element type of a column. The numeric values are written in log headers: append only.
enum class ColumnType : std::uint8_t {
  kU8 = 0,
  kU16 = 1,
  kU32 = 2,
  kI32 = 3,
  kF32 = 4,
  kF64 = 5,
  kColor = 6,   ///< RGBA, 4 bytes (fleetsim::Color)
  kTag = 7,     ///< u32 index into the run's tag table (interned strings)
  kString = 8,  ///< std::string (names); never in frames, only in headers
};

/// Bytes of one element (0 for kString, which is not a fixed-size type).
constexpr std::size_t column_type_size(ColumnType t) {
  switch (t) {
    case ColumnType::kU8: return 1;
    case ColumnType::kU16: return 2;
    case ColumnType::kU32: return 4;
    case ColumnType::kI32: return 4;
    case ColumnType::kF32: return 4;
    case ColumnType::kF64: return 8;
    case ColumnType::kColor: return 4;
    case ColumnType::kTag: return 4;
    case ColumnType::kString: return 0;
  }
  return 0;
}

/// "u8", "u16", "u32", "i32", "f32", "f64", "color", "tag", "string".
const char* to_string(ColumnType t);
/// The inverse of to_string; nullopt for an unknown name (or an out-of-range code).
std::optional<ColumnType> column_type_from_string(std::string_view name);
std::optional<ColumnType> column_type_from_code(std::uint8_t code);

/// One per-robot column, declared once by the part that owns it.
struct ColumnDesc {
  std::string name;        ///< unique in a run, e.g. "x", "proximity", "rab_data"
  ColumnType type = ColumnType::kF64;
  std::uint32_t width = 1; ///< elements per robot (e.g. 8 proximity rays)
  bool hashed = true;      ///< enters WorldState::hash (false only for scratch re-made each tick)
  bool logged = false;     ///< written in every frame of the frame log
  std::string doc;         ///< meaning and unit, one line (`fleetsim list` prints it)
  std::string owner;       ///< the part that declared it ("body", "proximity", ...)
  /// Read by other robots' parts (positions, lit LEDs, messages sent): a run on several
  /// processes sends it every tick to every process. False for what only the robot's own parts
  /// and controller read (its readings, its commands): that travels only with a robot that
  /// changes process, and at the run's end. When in doubt leave it true (correct, slower).
  bool halo = true;

  std::size_t element_bytes() const { return column_type_size(type); }
  std::size_t row_bytes() const { return element_bytes() * width; }
};

}  // namespace fleetsim
