#include "viewer/frame_encoding.hpp"

#include <cstring>
#include <unordered_map>

namespace fleetsim::viewer {

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
  std::size_t size() const { return out_.size(); }
  void patch_u32(std::size_t at, std::uint32_t v) { std::memcpy(out_.data() + at, &v, 4); }

 private:
  std::string& out_;
};

nlohmann::json classes_json(const std::vector<log::LogClass>& classes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : classes) a.push_back({{"name", c.name}, {"radius", c.radius_m}});
  return a;
}

nlohmann::json entities_json(const std::vector<log::LogEntity>& entities) {
  nlohmann::json ids = nlohmann::json::array(), classes = nlohmann::json::array(),
                 names = nlohmann::json::array();
  for (const auto& e : entities) {
    ids.push_back(e.id);
    classes.push_back(e.class_index);
    names.push_back(e.name);
  }
  return {{"ids", ids}, {"classes", classes}, {"names", names}};
}

// Frame tags are indices into a table that only grows; a chunk carries its own table (the
// tags its frames use, in first-use order) so the page never needs earlier chunks.
class ChunkTags {
 public:
  std::uint32_t local(const std::vector<std::string>& table, std::uint32_t index) {
    const std::string& s = index < table.size() ? table[index] : empty_;
    auto [it, fresh] = ids_.emplace(s, static_cast<std::uint32_t>(tags_.size()));
    if (fresh) tags_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& tags() const { return tags_; }

 private:
  std::string empty_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<std::string> tags_;
};

}  // namespace

nlohmann::json header_json(const log::LogHeader& h, log::LogFormat format,
                           std::size_t frame_count, const std::string& log_name) {
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
  return {{"log", log_name},
          {"format", format == log::LogFormat::kDeeco ? "deeco" : "frames"},
          {"experiment", h.experiment},
          {"seed", h.seed},
          {"tickPeriodNs", h.tick_period_ns},
          {"every", h.every},
          {"frameCount", frame_count},
          {"arena", {{"width", h.arena_width_m}, {"height", h.arena_height_m},
                     {"center", {c.x, c.y}}}},
          {"bitmap", bitmap},
          {"segments", segments},
          {"robotClasses", classes_json(h.robot_classes)},
          {"objectClasses", classes_json(h.object_classes)},
          {"robots", entities_json(h.robots)},
          {"objects", entities_json(h.objects)},
          {"chunkVersion", kChunkVersion}};
}

std::string bitmap_bytes(const log::LogHeader& h) {
  return std::string(h.bitmap.begin(), h.bitmap.end());
}

// Layout (all little-endian, every column 4-byte aligned):
//   u32 magic, u32 version, u32 frame_count, u32 first_frame
//   u32 tag_count, then per tag: u32 length, UTF-8 bytes, padding
//   per frame: u32 frame_bytes, f64 tick, f64 time_ns, u32 robots, u32 objects, status string,
//     robots:  f32 x[], f32 y[], f32 theta[], u32 id[], u32 tag[], u32 led_rgba[], u16 class[]
//     objects: f32 x[], f32 y[], f32 size[], u32 id[], u32 tag[], u16 class[]
std::string encode_chunk(log::LogReader& reader, std::size_t first, std::size_t count,
                         std::size_t max_bytes) {
  const Vec2 c = reader.header().arena_center;
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
    std::size_t n = f.robot_x.size(), m = f.object_x.size();
    w.put<std::uint32_t>(static_cast<std::uint32_t>(n));
    w.put<std::uint32_t>(static_cast<std::uint32_t>(m));
    w.put_string(f.status);
    auto at = [](const auto& v, std::size_t k, auto fallback) {
      return k < v.size() ? v[k] : fallback;
    };
    w.put_column<float>(n, [&](std::size_t k) { return static_cast<float>(f.robot_x[k] - c.x); });
    w.put_column<float>(n, [&](std::size_t k) {
      return static_cast<float>(at(f.robot_y, k, 0.0) - c.y);
    });
    w.put_column<float>(n, [&](std::size_t k) {
      return static_cast<float>(at(f.robot_theta, k, 0.0));
    });
    w.put_column<std::uint32_t>(n, [&](std::size_t k) { return at(f.robot_id, k, kNoEntity); });
    w.put_column<std::uint32_t>(n, [&](std::size_t k) {
      return tags.local(f.tags, at(f.robot_tag, k, std::uint32_t{0}));
    });
    w.put_column<std::uint32_t>(n, [&](std::size_t k) {
      Color l = at(f.robot_led, k, Color{0, 0, 0, 0});
      return static_cast<std::uint32_t>(l.r) | static_cast<std::uint32_t>(l.g) << 8 |
             static_cast<std::uint32_t>(l.b) << 16 | static_cast<std::uint32_t>(l.a) << 24;
    });
    w.put_column<std::uint16_t>(n, [&](std::size_t k) {
      return at(f.robot_class, k, std::uint16_t{0});
    });
    w.put_column<float>(m, [&](std::size_t k) { return static_cast<float>(f.object_x[k] - c.x); });
    w.put_column<float>(m, [&](std::size_t k) {
      return static_cast<float>(at(f.object_y, k, 0.0) - c.y);
    });
    w.put_column<float>(m, [&](std::size_t k) {
      return static_cast<float>(at(f.object_size, k, 0.0));
    });
    w.put_column<std::uint32_t>(m, [&](std::size_t k) { return at(f.object_id, k, kNoEntity); });
    w.put_column<std::uint32_t>(m, [&](std::size_t k) {
      return tags.local(f.tags, at(f.object_tag, k, std::uint32_t{0}));
    });
    w.put_column<std::uint16_t>(m, [&](std::size_t k) {
      return at(f.object_class, k, std::uint16_t{0});
    });
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

nlohmann::json robot_json(log::LogReader& reader, std::size_t frame, std::size_t index) {
  if (frame >= reader.frame_count()) return nullptr;
  log::LogFrame f = reader.read_frame(frame);
  if (index >= f.robot_x.size()) return nullptr;
  const log::LogHeader& h = reader.header();
  auto get = [&](const auto& v, auto fallback) { return index < v.size() ? v[index] : fallback; };
  EntityId id = get(f.robot_id, kNoEntity);
  std::uint16_t cls = get(f.robot_class, std::uint16_t{0});
  std::uint32_t tag = get(f.robot_tag, std::uint32_t{0});
  std::string name;
  for (const auto& e : h.robots)
    if (e.id == id) name = e.name;
  return {{"frame", frame},
          {"tick", f.tick},
          {"index", index},
          {"id", id},
          {"name", name},
          {"class", cls < h.robot_classes.size() ? h.robot_classes[cls].name : ""},
          {"tag", tag < f.tags.size() ? f.tags[tag] : ""},
          {"x", f.robot_x[index]},
          {"y", get(f.robot_y, 0.0)},
          {"theta", get(f.robot_theta, 0.0)}};
}

}  // namespace fleetsim::viewer
