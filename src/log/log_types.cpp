#include "log/log_types.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace fleetsim::log {

namespace {

ColumnDesc column(const char* name, ColumnType type, const char* doc) {
  ColumnDesc c;
  c.name = name;
  c.type = type;
  c.width = 1;
  c.logged = true;
  c.doc = doc;
  c.owner = "log";
  return c;
}

// The columns of `list` that must be in `header`'s list `actual`, with their type and width 1.
void check_required(const std::vector<ColumnDesc>& actual, const std::vector<ColumnDesc>& list,
                    const char* entity) {
  for (const ColumnDesc& r : list) {
    const int c = column_index(actual, r.name);
    if (c < 0) {
      throw LogError(std::string("the ") + entity + " columns lack the required column '" + r.name +
                     "' (" + to_string(r.type) + ")");
    }
    const ColumnDesc& got = actual[static_cast<std::size_t>(c)];
    if (got.type != r.type || got.width != 1) {
      throw LogError(std::string(entity) + " column '" + r.name + "' is " + to_string(got.type) +
                     " x " + std::to_string(got.width) + " (expected " + to_string(r.type) +
                     " x 1)");
    }
  }
}

void check_list(const std::vector<ColumnDesc>& columns, const char* entity) {
  if (columns.size() > kMaxColumns) {
    throw LogError(std::string("more than ") + std::to_string(kMaxColumns) + " " + entity +
                   " columns");
  }
  std::set<std::string_view> names;
  for (const ColumnDesc& c : columns) {
    if (c.name.empty()) throw LogError(std::string("a ") + entity + " column has no name");
    if (!names.insert(c.name).second) {
      throw LogError(std::string(entity) + " column '" + c.name + "' is declared twice");
    }
    if (column_type_size(c.type) == 0) {
      throw LogError(std::string(entity) + " column '" + c.name + "' has type " +
                     to_string(c.type) + " (strings are never in frames)");
    }
    if (c.width == 0 || c.width > kMaxColumnWidth) {
      throw LogError(std::string(entity) + " column '" + c.name + "' has width " +
                     std::to_string(c.width) + " (expected 1 to " +
                     std::to_string(kMaxColumnWidth) + ")");
    }
  }
}

}  // namespace

int column_index(const std::vector<ColumnDesc>& columns, std::string_view name) {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return static_cast<int>(i);
  return -1;
}

LogFrameView LogFrame::view() const {
  LogFrameView v;
  v.tick = tick;
  v.time_ns = time_ns;
  v.status = status;
  v.tags = tags;
  v.robot_count = robot_count;
  v.object_count = object_count;
  v.robot_columns.assign(robot_columns.begin(), robot_columns.end());
  v.object_columns.assign(object_columns.begin(), object_columns.end());
  return v;
}

LogFrame LogFrame::copy_of(const LogFrameView& v) {
  LogFrame f;
  f.tick = v.tick;
  f.time_ns = v.time_ns;
  f.status = v.status;
  f.tags.assign(v.tags.begin(), v.tags.end());
  f.robot_count = v.robot_count;
  f.object_count = v.object_count;
  for (auto c : v.robot_columns) f.robot_columns.emplace_back(c.begin(), c.end());
  for (auto c : v.object_columns) f.object_columns.emplace_back(c.begin(), c.end());
  return f;
}

std::size_t LogFrame::set(const std::vector<ColumnDesc>& schema,
                          std::vector<std::vector<std::uint8_t>>& data, std::string_view name,
                          std::span<const std::uint8_t> bytes, std::size_t element_bytes,
                          const char* entity) {
  const int c = column_index(schema, name);
  if (c < 0) {
    throw LogError(std::string("the header has no ") + entity + " column '" + std::string(name) +
                   "'");
  }
  const ColumnDesc& d = schema[static_cast<std::size_t>(c)];
  if (d.element_bytes() != element_bytes || bytes.size() % d.row_bytes() != 0) {
    throw LogError(std::string(entity) + " column '" + d.name + "' is " + to_string(d.type) +
                   " x " + std::to_string(d.width) + "; the values given do not fit it");
  }
  if (data.size() < schema.size()) data.resize(schema.size());
  data[static_cast<std::size_t>(c)].assign(bytes.begin(), bytes.end());
  return bytes.size() / d.row_bytes();
}

void fill_columns(LogFrameView& frame, const LogHeader& header,
                  const std::vector<NamedColumn>& robots, const std::vector<NamedColumn>& objects) {
  auto fill = [](const std::vector<ColumnDesc>& schema, const std::vector<NamedColumn>& given,
                 std::vector<std::span<const std::uint8_t>>& out, std::size_t& count,
                 const char* entity) {
    out.assign(schema.size(), {});
    std::vector<bool> seen(schema.size(), false);
    bool counted = false;
    for (const NamedColumn& g : given) {
      const int c = column_index(schema, g.name);
      if (c < 0) {
        throw LogError(std::string("the header has no ") + entity + " column '" +
                       std::string(g.name) + "'");
      }
      const auto k = static_cast<std::size_t>(c);
      const ColumnDesc& d = schema[k];
      if (seen[k]) throw LogError(std::string(entity) + " column '" + d.name + "' given twice");
      if (d.element_bytes() != g.element_bytes || g.bytes.size() % d.row_bytes() != 0) {
        throw LogError(std::string(entity) + " column '" + d.name + "' is " + to_string(d.type) +
                       " x " + std::to_string(d.width) + "; the values given do not fit it");
      }
      const std::size_t rows = g.bytes.size() / d.row_bytes();
      if (counted && rows != count) {
        throw LogError(std::string(entity) + " column '" + d.name + "' has " +
                       std::to_string(rows) + " rows where others have " + std::to_string(count));
      }
      count = rows;
      counted = true;
      seen[k] = true;
      out[k] = g.bytes;
    }
    for (std::size_t k = 0; k < schema.size(); ++k) {
      if (!seen[k]) {
        throw LogError(std::string(entity) + " column '" + schema[k].name + "' not given");
      }
    }
    if (!counted) count = 0;
  };
  fill(header.robot_columns, robots, frame.robot_columns, frame.robot_count, "robot");
  fill(header.object_columns, objects, frame.object_columns, frame.object_count, "object");
}

const std::vector<ColumnDesc>& required_robot_columns() {
  static const std::vector<ColumnDesc> columns{
      column("id", ColumnType::kU32, "entity id"),
      column("kind", ColumnType::kU16, "index into the header's robot kinds"),
      column("x", ColumnType::kF64, "position x, metres (world frame)"),
      column("y", ColumnType::kF64, "position y, metres (world frame)"),
      column("theta", ColumnType::kF64, "heading, radians counter-clockwise from +x"),
      column("tag", ColumnType::kTag, "tag (index into the tag table)"),
  };
  return columns;
}

const std::vector<ColumnDesc>& required_object_columns() {
  static const std::vector<ColumnDesc> columns{
      column("id", ColumnType::kU32, "entity id"),
      column("class", ColumnType::kU16, "index into the header's object classes"),
      column("x", ColumnType::kF64, "position x, metres (world frame)"),
      column("y", ColumnType::kF64, "position y, metres (world frame)"),
      column("size", ColumnType::kF64, "full width, metres"),
      column("tag", ColumnType::kTag, "tag (index into the tag table)"),
  };
  return columns;
}

ColumnDesc led_column(std::uint32_t width) {
  ColumnDesc c = column("leds", ColumnType::kColor, "LED colours (RGBA), the kind's led_count");
  c.width = width;
  return c;
}

void check_columns(const LogHeader& h) {
  check_list(h.robot_columns, "robot");
  check_list(h.object_columns, "object");
  check_required(h.robot_columns, required_robot_columns(), "robot");
  check_required(h.object_columns, required_object_columns(), "object");
  const int led = column_index(h.robot_columns, "leds");
  std::uint32_t led_width = 0;
  if (led >= 0) {
    const ColumnDesc& d = h.robot_columns[static_cast<std::size_t>(led)];
    if (d.type != ColumnType::kColor) {
      throw LogError(std::string("robot column 'leds' is ") + to_string(d.type) +
                     " (expected color)");
    }
    led_width = d.width;
  }
  for (const LogKind& k : h.kinds) {
    if (k.led_count > led_width) {
      throw LogError("robot kind '" + k.name + "' has " + std::to_string(k.led_count) +
                     " LEDs but the 'leds' column holds " + std::to_string(led_width) +
                     " per robot");
    }
    const auto length = [](double v) { return std::isfinite(v) && v > 0 && v <= 1e6; };
    if (k.shape == LogShape::kBox && !(length(k.half_length_m) && length(k.half_width_m))) {
      throw LogError("robot kind '" + k.name +
                     "' is a box whose half extents are not two lengths in (0, 1e6] metres");
    }
    if (k.shape != LogShape::kBox && k.shape != LogShape::kCircle) {
      throw LogError("robot kind '" + k.name + "' has an unknown shape");
    }
    for (const LogRays& rays : k.rays) {
      if (!(std::isfinite(rays.range_m) && rays.range_m >= 0) || rays.angles.size() > 65536 ||
          !std::all_of(rays.angles.begin(), rays.angles.end(),
                       [](double a) { return std::isfinite(a); })) {
        throw LogError("robot kind '" + k.name + "': rays '" + rays.column +
                       "' need a range >= 0 and at most 65,536 finite angles");
      }
    }
  }
}

void check_frame(const LogHeader& h, const LogFrameView& f, std::size_t tag_table_size) {
  auto check = [&](const std::vector<ColumnDesc>& schema,
                   const std::vector<std::span<const std::uint8_t>>& columns, std::size_t rows,
                   const char* entity) {
    const std::string at = " at tick " + std::to_string(f.tick);
    if (columns.size() != schema.size()) {
      throw LogError(std::string("the frame") + at + " has " + std::to_string(columns.size()) +
                     " " + entity + " columns where the header lists " +
                     std::to_string(schema.size()));
    }
    for (std::size_t c = 0; c < schema.size(); ++c) {
      const ColumnDesc& d = schema[c];
      if (columns[c].size() != rows * d.row_bytes()) {
        throw LogError(std::string(entity) + " column '" + d.name + "'" + at + " holds " +
                       std::to_string(columns[c].size()) + " bytes (expected " +
                       std::to_string(rows) + " " + entity + "s x " +
                       std::to_string(d.row_bytes()) + ")");
      }
      if (d.type != ColumnType::kTag) continue;
      std::uint32_t max_tag = 0;
      for (std::uint32_t t : column_as<std::uint32_t>(columns[c])) max_tag = std::max(max_tag, t);
      if (!columns[c].empty() && max_tag >= tag_table_size) {
        throw LogError("tag index " + std::to_string(max_tag) + " in " + entity + " column '" +
                       d.name + "'" + at + " is outside the tag table");
      }
    }
  };
  check(h.robot_columns, f.robot_columns, f.robot_count, "robot");
  check(h.object_columns, f.object_columns, f.object_count, "object");
}

}  // namespace fleetsim::log
