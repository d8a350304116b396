#include "view/frame_encoding.hpp"

#include <cstring>
#include <unordered_map>

namespace fleetsim::view {

namespace {

// Appends plain values to a byte string, little-endian (the only byte order the page and
// every machine fleetsim targets use), keeping every array 4-byte aligned.
class ChunkWriter {
 public:
  explicit ChunkWriter(std::string& out) : out_(out) {}
  template <typename T>
  void put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.append(b, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
    pad();
  }
  void pad() {
    while (out_.size() % 4 != 0) out_.push_back('\0');
  }
  /// n values of T, value_of(i) each, then padding.
  template <typename T, typename F>
  void put_column(std::size_t n, F&& value_of) {
    std::size_t at = out_.size();
    out_.resize(at + n * sizeof(T));
    char* p = out_.data() + at;
    for (std::size_t i = 0; i < n; ++i) {
      T v = value_of(i);
      std::memcpy(p + i * sizeof(T), &v, sizeof(T));
    }
    pad();
  }
  /// `n` bytes copied as they are (zeros past the end of `bytes`), then padding.
  void put_bytes(std::span<const std::uint8_t> bytes, std::size_t n) {
    std::size_t at = out_.size();
    out_.resize(at + n, '\0');
    const std::size_t copied = std::min(n, bytes.size());
    if (copied > 0)
      std::memcpy(out_.data() + at, bytes.data(), copied);  // (empty: data() may be null)
    pad();
  }
  std::size_t size() const { return out_.size(); }
  void patch_u32(std::size_t at, std::uint32_t v) { std::memcpy(out_.data() + at, &v, 4); }

 private:
  std::string& out_;
};

nlohmann::json kinds_json(const std::vector<log::LogKind>& kinds) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& k : kinds) {
    nlohmann::json rays = nlohmann::json::array();
    for (const auto& r : k.rays)
      rays.push_back({{"column", r.column}, {"range", r.range_m}, {"angles", r.angles}});
    nlohmann::json j = {{"name", k.name},
                        {"radius", k.radius_m},
                        {"ledCount", k.led_count},
                        {"rabRange", k.rab_range_m},
                        {"shape", k.shape == log::LogShape::kBox ? "box" : "circle"},
                        {"rays", std::move(rays)}};
    if (k.shape == log::LogShape::kBox) {
      j["halfLength"] = k.half_length_m;
      j["halfWidth"] = k.half_width_m;
    }
    a.push_back(std::move(j));
  }
  return a;
}

nlohmann::json classes_json(const std::vector<log::LogClass>& classes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : classes) a.push_back({{"name", c.name}});
  return a;
}

// The entity table; `type_key` names the type index ("kinds" for robots, "classes" for
// objects), as the page's columns do.
nlohmann::json entities_json(const std::vector<log::LogEntity>& entities, const char* type_key) {
  nlohmann::json ids = nlohmann::json::array(), types = nlohmann::json::array(),
                 names = nlohmann::json::array();
  for (const auto& e : entities) {
    ids.push_back(e.id);
    types.push_back(e.type_index);
    names.push_back(e.name);
  }
  return {{"ids", ids}, {type_key, types}, {"names", names}};
}

nlohmann::json columns_json(const std::vector<ColumnDesc>& columns) {
  nlohmann::json a = nlohmann::json::array();
  for (const ColumnDesc& c : columns)
    a.push_back(
        {{"name", c.name}, {"type", to_string(c.type)}, {"width", c.width}, {"doc", c.doc}});
  return a;
}

// Frame tags are indices into a table that only grows; a chunk carries its own table (the
// tags its frames use, in first-use order) so the page never needs earlier chunks.
class ChunkTags {
 public:
  /// Starts a frame whose tag table is `table`.
  void begin_frame(const std::vector<std::string>& table) {
    table_ = &table;
    remap_.assign(table.size() + 1, kUnset);
  }
  /// The chunk's index of the frame's tag `index` (out-of-range indices read as "").
  std::uint32_t local(std::uint32_t index) {
    const std::size_t slot = index < table_->size() ? index : table_->size();
    if (remap_[slot] != kUnset) return remap_[slot];
    const std::string& s = slot < table_->size() ? (*table_)[slot] : empty_;
    auto [it, fresh] = ids_.emplace(s, static_cast<std::uint32_t>(tags_.size()));
    if (fresh) tags_.push_back(s);
    return remap_[slot] = it->second;
  }
  const std::vector<std::string>& tags() const { return tags_; }

 private:
  static constexpr std::uint32_t kUnset = 0xffffffffu;
  const std::vector<std::string>* table_ = nullptr;
  std::vector<std::uint32_t> remap_;  ///< frame tag index -> chunk tag index
  std::string empty_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<std::string> tags_;
};

// Appends every column of `schema` for `rows` entities: f64 as f32 (x and y minus the arena
// centre), tags as indices into the chunk's table, anything else as its bytes.
void put_columns(ChunkWriter& w, ChunkTags& tags, const std::vector<ColumnDesc>& schema,
                 const std::vector<std::vector<std::uint8_t>>& data, std::size_t rows,
                 Vec2 centre) {
  static const std::vector<std::uint8_t> kMissing;
  for (std::size_t c = 0; c < schema.size(); ++c) {
    const ColumnDesc& d = schema[c];
    const std::vector<std::uint8_t>& bytes = c < data.size() ? data[c] : kMissing;
    const std::size_t n = rows * d.width;
    switch (d.type) {
      case ColumnType::kF64: {
        const auto v = log::column_as<double>(bytes);
        const double offset = d.name == "x" ? centre.x : d.name == "y" ? centre.y : 0.0;
        w.put_column<float>(n, [&](std::size_t k) {
          return k < v.size() ? static_cast<float>(v[k] - offset) : 0.0f;
        });
        break;
      }
      case ColumnType::kTag: {
        const auto v = log::column_as<std::uint32_t>(bytes);
        w.put_column<std::uint32_t>(
            n, [&](std::size_t k) { return tags.local(k < v.size() ? v[k] : 0); });
        break;
      }
      default:
        w.put_bytes(bytes, n * d.element_bytes());
    }
  }
}

}  // namespace

nlohmann::json header_json(const log::LogHeader& h, log::LogFormat format, std::size_t frame_count,
                           const std::string& log_name) {
  Vec2 c = h.arena_center;
  nlohmann::json segments = nlohmann::json::array();
  for (const Segment& s : h.segments)
    segments.push_back({s.a.x - c.x, s.a.y - c.y, s.b.x - c.x, s.b.y - c.y});
  nlohmann::json bitmap = nullptr;
  if (h.bitmap_width > 0 && h.bitmap_height > 0 &&
      h.bitmap.size() == static_cast<std::size_t>(h.bitmap_width) * h.bitmap_height) {
    bitmap = {{"width", h.bitmap_width},
              {"height", h.bitmap_height},
              {"resolution", h.bitmap_resolution_m},
              {"topLeft", {h.bitmap_top_left.x - c.x, h.bitmap_top_left.y - c.y}}};
  }
  return {
      {"log", log_name},
      {"format", format == log::LogFormat::kDeeco ? "deeco" : "frames"},
      {"experiment", h.experiment},
      {"seed", h.seed},
      {"tickPeriodNs", h.tick_period_ns},
      {"every", h.every},
      {"frameCount", frame_count},
      {"arena", {{"width", h.arena_width_m}, {"height", h.arena_height_m}, {"center", {c.x, c.y}}}},
      {"bitmap", bitmap},
      {"segments", segments},
      {"kinds", kinds_json(h.kinds)},
      {"objectClasses", classes_json(h.object_classes)},
      {"robots", entities_json(h.robots, "kinds")},
      {"objects", entities_json(h.objects, "classes")},
      {"robotColumns", columns_json(h.robot_columns)},
      {"objectColumns", columns_json(h.object_columns)},
      {"chunkVersion", kChunkVersion}};
}

std::string bitmap_bytes(const log::LogHeader& h) {
  return std::string(h.bitmap.begin(), h.bitmap.end());
}

// Layout (all little-endian, every column 4-byte aligned):
//   u32 magic, u32 version, u32 frame_count, u32 first_frame
//   u32 tag_count, then per tag: u32 length, UTF-8 bytes, padding
//   per frame: u32 frame_bytes, f64 tick, f64 time_ns, u32 robots, u32 objects, status string,
//     robots:  each column of header.robot_columns, robots x width elements
//     objects: each column of header.object_columns, objects x width elements
//   where f64 columns are sent as f32, tag columns as u32 indices into the chunk's tags.
std::string encode_chunk(log::LogReader& reader, std::size_t first, std::size_t count,
                         std::size_t max_bytes) {
  const log::LogHeader& header = reader.header();
  const Vec2 c = header.arena_center;
  std::string frames;
  ChunkWriter w(frames);
  ChunkTags tags;
  std::uint32_t written = 0;
  std::size_t end = std::min(first + count, reader.frame_count());
  for (std::size_t i = first; i < end; ++i) {
    if (written > 0 && frames.size() >= max_bytes) break;
    log::LogFrame f;
    try {
      f = reader.read_frame(i);
    } catch (const log::LogError&) {
      // Send the good frames before a damaged one; the next request (starting at the damaged
      // frame) reports the error. The page then shows all it can.
      if (written > 0) break;
      throw;
    }
    std::size_t start = w.size();
    w.put<std::uint32_t>(0);  // frame_bytes, patched below
    w.put<double>(static_cast<double>(f.tick));
    w.put<double>(static_cast<double>(f.time_ns));
    w.put<std::uint32_t>(static_cast<std::uint32_t>(f.robot_count));
    w.put<std::uint32_t>(static_cast<std::uint32_t>(f.object_count));
    w.put_string(f.status);
    tags.begin_frame(f.tags);
    put_columns(w, tags, header.robot_columns, f.robot_columns, f.robot_count, c);
    put_columns(w, tags, header.object_columns, f.object_columns, f.object_count, c);
    w.patch_u32(start, static_cast<std::uint32_t>(w.size() - start));
    ++written;
  }

  std::string out;
  ChunkWriter h(out);
  h.put<std::uint32_t>(kChunkMagic);
  h.put<std::uint32_t>(kChunkVersion);
  h.put<std::uint32_t>(written);
  h.put<std::uint32_t>(static_cast<std::uint32_t>(first));
  h.put<std::uint32_t>(static_cast<std::uint32_t>(tags.tags().size()));
  for (const auto& t : tags.tags()) h.put_string(t);
  out += frames;
  return out;
}

nlohmann::json element_json(const ColumnDesc& d, const std::uint8_t* p,
                            const std::vector<std::string>& tags) {
  auto get = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (d.type) {
    case ColumnType::kU8:
      return get(std::uint8_t{});
    case ColumnType::kU16:
      return get(std::uint16_t{});
    case ColumnType::kU32:
      return get(std::uint32_t{});
    case ColumnType::kI32:
      return get(std::int32_t{});
    case ColumnType::kF32:
      return get(float{});
    case ColumnType::kF64:
      return get(double{});
    case ColumnType::kColor:
      return {p[0], p[1], p[2], p[3]};
    case ColumnType::kTag: {
      const auto t = get(std::uint32_t{});
      return t < tags.size() ? tags[t] : "";
    }
    case ColumnType::kString:
      break;
  }
  return nullptr;
}

nlohmann::json robot_json(log::LogReader& reader, std::size_t frame, std::size_t index) {
  if (frame >= reader.frame_count()) return nullptr;
  log::LogFrame f = reader.read_frame(frame);
  if (index >= f.robot_count) return nullptr;
  const log::LogHeader& h = reader.header();
  auto get = [&]<class T>(const char* name, T fallback) {
    auto v = f.robot<T>(name, h);
    return index < v.size() ? v[index] : fallback;
  };
  const EntityId id = get("id", kNoEntity);
  const std::uint16_t kind = get("kind", std::uint16_t{0});
  const std::uint32_t tag = get("tag", std::uint32_t{0});
  std::string name;
  for (const auto& e : h.robots)
    if (e.id == id) name = e.name;
  // Every other column of this robot: one value, or a list of `width` values.
  nlohmann::json columns = nlohmann::json::object();
  for (std::size_t c = 0; c < h.robot_columns.size() && c < f.robot_columns.size(); ++c) {
    const ColumnDesc& d = h.robot_columns[c];
    if (log::column_index(log::required_robot_columns(), d.name) >= 0) continue;
    const std::size_t at = index * d.row_bytes();
    if (at + d.row_bytes() > f.robot_columns[c].size()) continue;
    const std::uint8_t* row = f.robot_columns[c].data() + at;
    if (d.width == 1) {
      columns[d.name] = element_json(d, row, f.tags);
    } else {
      nlohmann::json values = nlohmann::json::array();
      for (std::uint32_t k = 0; k < d.width; ++k)
        values.push_back(element_json(d, row + k * d.element_bytes(), f.tags));
      columns[d.name] = values;
    }
  }
  return {{"frame", frame},
          {"tick", f.tick},
          {"index", index},
          {"id", id},
          {"name", name},
          {"kind", kind < h.kinds.size() ? h.kinds[kind].name : ""},
          {"tag", tag < f.tags.size() ? f.tags[tag] : ""},
          {"x", get("x", 0.0)},
          {"y", get("y", 0.0)},
          {"theta", get("theta", 0.0)},
          {"columns", columns}};
}

}  // namespace fleetsim::view
