// The data every log format carries: a header (the world model as far as a viewer needs it,
// the entity table, and the two column lists) and frames (the logged columns at one tick).
//
// The column lists are the engine's own declarations (fleetsim::ColumnDesc, the logged ones,
// in frame order): a frame is one byte block per declared column, and nothing in the log
// module, the viewer or the page names a column except the few every log must carry (see
// required_robot_columns()). A column added by a sensor or a plug-in is written, read back
// and sent to the page without a change here.
//
// Coordinates are metres in the world frame (origin at the arena centre, y up), headings in
// radians counter-clockwise from +x. Format-specific units (the DEECo log's field units) are
// converted by the writers and readers, never by their callers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fleetsim/columns.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim::log {

/// Thrown by writers and readers on I/O failures, malformed logs and frames that break the
/// header's column lists.
class LogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The outline of a kind's body in the log.
enum class LogShape : std::uint8_t {
  kCircle = 0,  ///< a disc of LogKind::radius_m
  kBox = 1,     ///< a rectangle of half extents LogKind::half_length_m x half_width_m
};

/// A ray sensor of a kind (proximity): its readings are the robot column `column`, one per
/// ray, in the order of `angles`. Each ray starts on the body's bounding circle (radius_m)
/// and reaches `range_m` beyond it.
struct LogRays {
  std::string column;          ///< the robot column of the readings, e.g. "proximity"
  double range_m = 0;          ///< metres from the body's bounding circle
  std::vector<double> angles;  ///< radians counter-clockwise from the robot's heading

  bool operator==(const LogRays&) const = default;
};

/// A robot kind as it appears in the log (what a viewer needs to draw its robots).
struct LogKind {
  std::string name;             ///< e.g. "epuck", "footbot"
  double radius_m = 0;          ///< body radius, metres (a box's half-diagonal)
  std::uint32_t led_count = 0;  ///< LEDs of this kind: the first led_count of the `leds` column
  double rab_range_m = 0;       ///< range-and-bearing range, metres; 0 = no such device
  LogShape shape = LogShape::kCircle;
  /// kBox: half the length along the robot's heading (the `theta` column) and half the
  /// width across it, metres. 0 for a circle.
  double half_length_m = 0, half_width_m = 0;
  std::vector<LogRays> rays;  ///< its ray sensors (none before format version 3)
};

/// An object class as it appears in the log.
struct LogClass {
  std::string name;  ///< e.g. "food"
};

/// One entity present when the log starts.
struct LogEntity {
  EntityId id = kNoEntity;
  std::uint16_t type_index = 0;  ///< into LogHeader::kinds (robots) or ::object_classes
  std::string name;              ///< the id string the user gave ("ep12")
};

/// Written once, before the first frame.
struct LogHeader {
  std::string experiment;  ///< experiment file name, informative
  std::uint64_t seed = 0;
  SimTime tick_period_ns = 0;  ///< simulated time of one tick
  std::int64_t every = 1;      ///< a frame is logged every `every` ticks

  double arena_width_m = 0, arena_height_m = 0;
  Vec2 arena_center;  ///< world coordinates of the arena centre (usually 0,0)

  /// Bitmap field (width 0 = none): one byte per pixel, 1 = obstacle, row-major from the top
  /// row; pixel (i, j) covers [left + i*res, left + (i+1)*res) x (top - (j+1)*res, top - j*res].
  int bitmap_width = 0, bitmap_height = 0;
  double bitmap_resolution_m = 0;  ///< metres per pixel
  Vec2 bitmap_top_left;            ///< world coordinates of the bitmap's top-left corner
  std::vector<std::uint8_t> bitmap;

  std::vector<Segment> segments;  ///< static obstacles other than the bitmap (walls, boxes)

  std::vector<LogKind> kinds;
  std::vector<LogClass> object_classes;
  std::vector<LogEntity> robots;  ///< robots at the start, in frame order
  /// Or the robots at the start as the frame log's header stores them, `encoded_robot_count`
  /// entries of u32 id, u16 kind, u32 name length and name, in frame order (then `robots` is
  /// empty): what a run split over processes gathers on its first process, with no LogEntity
  /// a robot (docs/distributed.md, "The log on several processes"). decode_entities() reads it.
  std::vector<std::uint8_t> encoded_robots;
  std::uint64_t encoded_robot_count = 0;
  std::vector<LogEntity> objects;  ///< objects at the start, in frame order

  /// The logged robot columns, in frame order (required_robot_columns() among them).
  std::vector<ColumnDesc> robot_columns;
  /// The logged object columns, in frame order (required_object_columns() among them).
  std::vector<ColumnDesc> object_columns;
};

/// Runs body(b, e) over parts of [0, n) that together cover it, of at least `grain` items
/// each (but the last), possibly at once on several threads (the simulation's workers).
/// Empty: the caller runs body(0, n) itself.
using ParallelFor = std::function<void(std::size_t n, std::size_t grain,
                                       const std::function<void(std::size_t, std::size_t)>& body)>;

/// A frame to write: views on the engine's columns (no copy), valid until write() returns.
/// robot_columns[c] holds robot_count rows of header.robot_columns[c] (row_bytes() each,
/// row-major: robot r's elements are [r * width, (r + 1) * width)); objects likewise. Tag
/// columns hold indices into `tags`, which only ever grows during a run (index 0 is the empty
/// tag). fill_columns() builds the spans from typed vectors by name.
struct LogFrameView {
  Tick tick = 0;
  SimTime time_ns = 0;
  std::string_view status;
  std::span<const std::string> tags;

  std::size_t robot_count = 0, object_count = 0;
  std::vector<std::span<const std::uint8_t>> robot_columns;   ///< parallel to the header's
  std::vector<std::span<const std::uint8_t>> object_columns;  ///< parallel to the header's
};

/// The elements of a column's bytes as T (empty if the sizes do not divide). The bytes must
/// come from a T array or a heap buffer (suitably aligned), as every frame's do.
template <class T>
std::span<const T> column_as(std::span<const std::uint8_t> bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (bytes.size() % sizeof(T) != 0) return {};
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

/// Index of the column called `name` in `columns`, or -1.
int column_index(const std::vector<ColumnDesc>& columns, std::string_view name);

/// A frame read back (owning). robot_columns / object_columns are parallel to the header's
/// lists; robot<T>("x", header) and friends give typed access by name.
struct LogFrame {
  Tick tick = 0;
  SimTime time_ns = 0;
  std::string status;
  std::vector<std::string> tags;

  std::size_t robot_count = 0, object_count = 0;
  std::vector<std::vector<std::uint8_t>> robot_columns;   ///< parallel to header.robot_columns
  std::vector<std::vector<std::uint8_t>> object_columns;  ///< parallel to header.object_columns

  /// A view on this frame's columns (valid while the frame lives and is not changed).
  LogFrameView view() const;
  /// A deep copy of a view (tests, tools).
  static LogFrame copy_of(const LogFrameView& view);

  /// Robot column `name` as T: empty if the header has no such column, or its elements are
  /// not sizeof(T) bytes. Robot r's elements are [r * width, (r + 1) * width).
  template <class T>
  std::span<const T> robot(std::string_view name, const LogHeader& header) const {
    return typed<T>(header.robot_columns, robot_columns, name);
  }
  /// Object column `name` as T (see robot()).
  template <class T>
  std::span<const T> object(std::string_view name, const LogHeader& header) const {
    return typed<T>(header.object_columns, object_columns, name);
  }

  /// Sets robot column `name` to `values` and robot_count to its number of rows. Throws
  /// LogError if the header has no such column, its elements are not sizeof(T) bytes, or the
  /// values are not whole rows. For readers, tools and tests that build frames.
  template <class T>
  void set_robot(std::string_view name, const LogHeader& header, std::span<const T> values) {
    robot_count =
        set(header.robot_columns, robot_columns, name, as_bytes(values), sizeof(T), "robot");
  }
  template <class T>
  void set_robot(std::string_view name, const LogHeader& header, const std::vector<T>& values) {
    set_robot(name, header, std::span<const T>(values));
  }
  /// Sets object column `name` (see set_robot()).
  template <class T>
  void set_object(std::string_view name, const LogHeader& header, std::span<const T> values) {
    object_count =
        set(header.object_columns, object_columns, name, as_bytes(values), sizeof(T), "object");
  }
  template <class T>
  void set_object(std::string_view name, const LogHeader& header, const std::vector<T>& values) {
    set_object(name, header, std::span<const T>(values));
  }

 private:
  template <class T>
  static std::span<const std::uint8_t> as_bytes(std::span<const T> v) {
    static_assert(std::is_trivially_copyable_v<T>);
    return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size_bytes()};
  }
  template <class T>
  static std::span<const T> typed(const std::vector<ColumnDesc>& schema,
                                  const std::vector<std::vector<std::uint8_t>>& data,
                                  std::string_view name) {
    const int c = column_index(schema, name);
    if (c < 0 || static_cast<std::size_t>(c) >= data.size() ||
        schema[static_cast<std::size_t>(c)].element_bytes() != sizeof(T)) {
      return {};
    }
    return column_as<T>(data[static_cast<std::size_t>(c)]);
  }
  static std::size_t set(const std::vector<ColumnDesc>& schema,
                         std::vector<std::vector<std::uint8_t>>& data, std::string_view name,
                         std::span<const std::uint8_t> bytes, std::size_t element_bytes,
                         const char* entity);
};

/// One of the caller's typed columns, named as in the header, seen as bytes (fill_columns()).
struct NamedColumn {
  std::string_view name;
  std::span<const std::uint8_t> bytes;
  std::size_t element_bytes = 0;

  template <class T>
  NamedColumn(std::string_view column_name, std::span<const T> values)
      : name(column_name),
        bytes(reinterpret_cast<const std::uint8_t*>(values.data()), values.size_bytes()),
        element_bytes(sizeof(T)) {
    static_assert(std::is_trivially_copyable_v<T>);
  }
  template <class T>
  NamedColumn(std::string_view column_name, const std::vector<T>& values)
      : NamedColumn(column_name, std::span<const T>(values)) {}
};

/// Points `frame`'s column spans at the caller's columns, in the order `header` lists them,
/// and sets robot_count / object_count from their lengths. Every header column must be given
/// exactly once, with elements of its size and whole rows, and all robot columns (all object
/// columns) must have the same number of rows; otherwise throws LogError naming the column.
/// The spans point into the caller's vectors: keep them alive until the frame is written.
void fill_columns(LogFrameView& frame, const LogHeader& header,
                  const std::vector<NamedColumn>& robots, const std::vector<NamedColumn>& objects);

/// The robot columns every log carries: id (u32), kind (u16, into LogHeader::kinds), x, y
/// (f64, metres), theta (f64, radians), tag (tag). Width 1 each.
const std::vector<ColumnDesc>& required_robot_columns();
/// The object columns every log carries: id (u32), class (u16, into
/// LogHeader::object_classes), x, y (f64, metres), size (f64, full width in metres), tag (tag).
const std::vector<ColumnDesc>& required_object_columns();
/// The optional robot LED column: `width` colours per robot; a robot whose kind has
/// led_count L uses the first L.
ColumnDesc led_column(std::uint32_t width);

/// Most columns in one list, and most elements per entity in one column, that a log may
/// declare (guards readers against hostile headers).
inline constexpr std::size_t kMaxColumns = 1024;
inline constexpr std::uint32_t kMaxColumnWidth = 1u << 16;

/// Checks the header's column lists: required columns present with their types and width 1;
/// names non-empty and unique; no string column; widths 1..kMaxColumnWidth; `leds`, if present,
/// a colour column at least as wide as every kind's led_count. Throws LogError saying what is
/// wrong (writers call it in begin(), readers on every header they decode).
void check_columns(const LogHeader& header);

/// Checks that `frame` follows `header`'s column lists (one span per column, each holding
/// exactly robot_count / object_count rows) and that every tag index in it is below
/// `tag_table_size`. Throws LogError naming the tick and the column. Writers call it before
/// anything reaches the file.
void check_frame(const LogHeader& header, const LogFrameView& frame, std::size_t tag_table_size);

}  // namespace fleetsim::log
