#include "log/frame_log_format.hpp"

#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <limits>

#include "core/hash.hpp"
#include "log/byte_io.hpp"

namespace fleetsim::log::frame_format {

namespace {

#if defined(__SSE2__)
// The first two rounds of byte unpacks over 64 bytes at `in`, which both transposes share: of
// 4-byte elements e0..e15, u[0] holds bytes 0-3 of e0, e2, e4, e6 interleaved (e0b0 e2b0 e4b0
// e6b0 e0b1 ...), u[1] the same of e1, e3, e5, e7, u[2] and u[3] of e8..e15; of 8-byte
// elements e0..e7, u[0] holds bytes 0-3 of e0..e3 (e0b0 e1b0 e2b0 e3b0 e0b1 ...), u[1] bytes
// 4-7 of e0..e3, u[2] and u[3] the same of e4..e7.
inline void unpack_64_bytes(const std::uint8_t* in, __m128i u[4]) {
  const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
  const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 32));
  const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 48));
  const __m128i t0 = _mm_unpacklo_epi8(x0, x1), t1 = _mm_unpackhi_epi8(x0, x1);
  const __m128i t2 = _mm_unpacklo_epi8(x2, x3), t3 = _mm_unpackhi_epi8(x2, x3);
  u[0] = _mm_unpacklo_epi8(t0, t1);
  u[1] = _mm_unpackhi_epi8(t0, t1);
  u[2] = _mm_unpacklo_epi8(t2, t3);
  u[3] = _mm_unpackhi_epi8(t2, t3);
}

// 16 elements of 4 bytes (64 bytes at `in`) to 4 planes of 16 bytes, plane k at out + k * n.
inline void to_planes_16x4(const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  __m128i u[4];
  unpack_64_bytes(in, u);
  const __m128i v0 = _mm_unpacklo_epi8(u[0], u[1]), v1 = _mm_unpackhi_epi8(u[0], u[1]);
  const __m128i v2 = _mm_unpacklo_epi8(u[2], u[3]), v3 = _mm_unpackhi_epi8(u[2], u[3]);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi64(v0, v2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + n), _mm_unpackhi_epi64(v0, v2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * n), _mm_unpacklo_epi64(v1, v3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * n), _mm_unpackhi_epi64(v1, v3));
}

// 8 elements of 8 bytes (64 bytes at `in`): plane pairs (0,1) (2,3) (4,5) (6,7) of 8 bytes
// each, in the low and high halves of p[0..3].
inline void planes_8x8(const std::uint8_t* in, __m128i p[4]) {
  __m128i u[4];
  unpack_64_bytes(in, u);
  p[0] = _mm_unpacklo_epi32(u[0], u[2]);
  p[1] = _mm_unpackhi_epi32(u[0], u[2]);
  p[2] = _mm_unpacklo_epi32(u[1], u[3]);
  p[3] = _mm_unpackhi_epi32(u[1], u[3]);
}

// 16 elements of 8 bytes (128 bytes at `in`) to 8 planes of 16 bytes, plane k at out + k * n.
inline void to_planes_16x8(const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  __m128i a[4], b[4];
  planes_8x8(in, a);
  planes_8x8(in + 64, b);
  for (int k = 0; k < 4; ++k) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * k * n), _mm_unpacklo_epi64(a[k], b[k]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (2 * k + 1) * n),
                     _mm_unpackhi_epi64(a[k], b[k]));
  }
}
#endif

// Byte-plane transposes of `n` elements of `width` bytes: elements [b, e) to planes when
// writing (each worker its own range), all of them back when reading. The width is a
// compile-time constant so the inner loop unrolls. (Width 1 is a plain copy.)
template <bool kToPlanes, std::size_t W>
void transpose_fixed(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t b,
                     std::size_t e) {
#if defined(__SSE2__)
  // The same bytes as the loop below, 16 elements at a time (the writer's hot loop: x, y and
  // theta are 8-byte columns, id, tag and LEDs 4-byte ones).
  if constexpr (kToPlanes && (W == 4 || W == 8)) {
    for (; b + 16 <= e; b += 16) {
      if constexpr (W == 4)
        to_planes_16x4(in + b * 4, out + b, n);
      else
        to_planes_16x8(in + b * 8, out + b, n);
    }
  }
#endif
  for (std::size_t i = b; i < e; ++i)
    for (std::size_t k = 0; k < W; ++k) {
      if constexpr (kToPlanes)
        out[k * n + i] = in[i * W + k];
      else
        out[i * W + k] = in[k * n + i];
    }
}

template <bool kToPlanes>
void transpose(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t width,
               std::size_t b, std::size_t e) {
  if (b >= e) return;
  switch (width) {
    case 1:
      std::memcpy(out + b, in + b, e - b);
      return;
    case 2:
      return transpose_fixed<kToPlanes, 2>(in, out, n, b, e);
    case 4:
      return transpose_fixed<kToPlanes, 4>(in, out, n, b, e);
    case 8:
      return transpose_fixed<kToPlanes, 8>(in, out, n, b, e);
    default:
      throw LogError("internal: unsupported column width " + std::to_string(width));
  }
}

void to_planes(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t width,
               std::size_t b, std::size_t e) {
  transpose<true>(in, out, n, width, b, e);
}

void unshuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t width) {
  transpose<false>(in, out, n, width, 0, n);
}

}  // namespace

namespace {

inline std::uint64_t rotl(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

constexpr std::uint64_t kLaneP1 = 0x9e3779b185ebca87ULL, kLaneP2 = 0xc2b2ae3d27d4eb4fULL;

}  // namespace

// Four independent lanes of 8-byte words (multiply, rotate, multiply), so the CPU works on
// four words at once: the writer checksums every record's body, and a single dependent chain
// cost more than zstd itself.
LanesHash::LanesHash() : lane_{kLaneP1 + kLaneP2, kLaneP2, 0, 0 - kLaneP1} {}

void LanesHash::blocks(const std::uint8_t* p, std::size_t count) {
  // In locals: the bytes read could alias the members, which would then be stored and loaded
  // again for every word.
  std::uint64_t lane[4] = {lane_[0], lane_[1], lane_[2], lane_[3]};
  for (std::size_t b = 0; b < count; ++b, p += 32) {
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + 8 * k, 8);
      lane[k] = rotl(lane[k] + w * kLaneP2, 31) * kLaneP1;
    }
  }
  for (int k = 0; k < 4; ++k) lane_[k] = lane[k];
}

void LanesHash::update(const std::uint8_t* p, std::size_t n) {
  if (n == 0) return;
  total_ += n;
  if (held_ > 0) {
    const std::size_t take = std::min(n, sizeof held_bytes_ - held_);
    std::memcpy(held_bytes_ + held_, p, take);
    held_ += take;
    p += take;
    n -= take;
    if (held_ < sizeof held_bytes_) return;
    blocks(held_bytes_, 1);
    held_ = 0;
  }
  blocks(p, n / 32);
  held_ = n % 32;
  std::memcpy(held_bytes_, p + (n - held_), held_);
}

std::uint64_t LanesHash::value() const {
  std::uint64_t h = mix64(lane_[0]) ^ rotl(mix64(lane_[1]), 17) ^ rotl(mix64(lane_[2]), 34) ^
                    rotl(mix64(lane_[3]), 51);
  Hasher tail;  // the last total % 32 bytes and the length
  tail.word(h);
  tail.word(total_);
  tail.bytes(held_bytes_, held_);
  return tail.value();
}

namespace {

std::uint64_t lanes_hash(const std::uint8_t* p, std::size_t n) {
  LanesHash h;
  h.update(p, n);
  return h.value();
}

}  // namespace

std::uint64_t checksum(const std::uint8_t* data, std::size_t n, const std::uint8_t* data2,
                       std::size_t n2) {
  std::uint64_t h = lanes_hash(data, n);
  if (data2 != nullptr) h = mix64(h ^ rotl(lanes_hash(data2, n2), 1));
  return h;
}

void encode_record_header(const RecordHeader& h, std::uint8_t* out) {
  std::vector<std::uint8_t> buf;
  buf.reserve(kRecordHeaderSize);
  ByteWriter w(buf);
  w.raw(kRecordMagic, 4);
  w.u32(h.new_tag_count);
  w.u32(h.tag_block_size);
  w.u32(h.tag_base);
  w.u64(h.payload_size);
  w.u64(h.raw_size);
  w.i64(h.tick);
  w.u64(h.body_checksum);
  w.u64(checksum(buf.data(), buf.size()));
  std::memcpy(out, buf.data(), kRecordHeaderSize);
}

bool decode_record_header(const std::uint8_t* in, RecordHeader& h) {
  if (std::memcmp(in, kRecordMagic, 4) != 0) return false;
  ByteReader r(in + 4, kRecordHeaderSize - 4, "frame record header");
  h.new_tag_count = r.u32();
  h.tag_block_size = r.u32();
  h.tag_base = r.u32();
  h.payload_size = r.u64();
  h.raw_size = r.u64();
  h.tick = r.i64();
  h.body_checksum = r.u64();
  std::uint64_t own = r.u64();
  if (own != checksum(in, kRecordHeaderSize - 8)) return false;
  return h.tag_block_size <= kMaxRecordBytes && h.payload_size <= kMaxRecordBytes &&
         h.raw_size <= kMaxRecordBytes;
}

namespace {

void write_columns(ByteWriter& w, const std::vector<ColumnDesc>& columns) {
  w.u32(static_cast<std::uint32_t>(columns.size()));
  for (const ColumnDesc& c : columns) {
    w.str(c.name);
    w.u8(static_cast<std::uint8_t>(c.type));
    w.u32(c.width);
    w.str(c.doc);
  }
}

std::vector<ColumnDesc> read_columns(ByteReader& r) {
  // A column takes at least 13 bytes (two empty strings, type, width).
  std::vector<ColumnDesc> columns(r.count(r.u32(), 13));
  for (ColumnDesc& c : columns) {
    c.name = r.str();
    const std::uint8_t code = r.u8();
    const auto type = column_type_from_code(code);
    if (!type) {
      throw LogError("the log header is corrupt (column '" + c.name + "' has the unknown type " +
                     "code " + std::to_string(code) + ")");
    }
    c.type = *type;
    c.width = r.u32();
    c.doc = r.str();
    c.logged = true;
  }
  return columns;
}

ColumnDesc v1_column(const char* name, ColumnType type) {
  ColumnDesc c;
  c.name = name;
  c.type = type;
  c.logged = true;
  return c;
}

}  // namespace

std::vector<ColumnDesc> version1_robot_columns() {
  return {v1_column("id", ColumnType::kU32),    v1_column("kind", ColumnType::kU16),
          v1_column("x", ColumnType::kF64),     v1_column("y", ColumnType::kF64),
          v1_column("theta", ColumnType::kF64), v1_column("tag", ColumnType::kTag),
          v1_column("leds", ColumnType::kColor)};
}

std::vector<ColumnDesc> version1_object_columns() {
  return {v1_column("id", ColumnType::kU32),   v1_column("class", ColumnType::kU16),
          v1_column("x", ColumnType::kF64),    v1_column("y", ColumnType::kF64),
          v1_column("size", ColumnType::kF64), v1_column("tag", ColumnType::kTag)};
}

void encode_entity(ByteWriter& w, std::uint32_t id, std::uint16_t type_index,
                   std::string_view name) {
  w.u32(id);
  w.u16(type_index);
  w.str(name);
}

std::vector<LogEntity> decode_entities(const std::vector<std::uint8_t>& encoded,
                                       std::uint64_t count) {
  ByteReader r(encoded.data(), encoded.size(), "the robots at the start");
  std::vector<LogEntity> out;
  out.reserve(r.count(count, 10));
  for (std::uint64_t k = 0; k < count; ++k) {
    LogEntity e;
    e.id = r.u32();
    e.type_index = r.u16();
    e.name = r.str();
    out.push_back(std::move(e));
  }
  if (r.remaining() != 0) throw LogError("the robots at the start: trailing bytes");
  return out;
}

std::vector<std::uint8_t> encode_header_body(const LogHeader& h) {
  std::vector<std::uint8_t> out;
  ByteWriter w(out);
  w.str(h.experiment);
  w.u64(h.seed);
  w.i64(h.tick_period_ns);
  w.i64(h.every);
  w.f64(h.arena_width_m);
  w.f64(h.arena_height_m);
  w.f64(h.arena_center.x);
  w.f64(h.arena_center.y);
  w.i32(h.bitmap_width);
  w.i32(h.bitmap_height);
  w.f64(h.bitmap_resolution_m);
  w.f64(h.bitmap_top_left.x);
  w.f64(h.bitmap_top_left.y);
  w.u64(h.bitmap.size());
  w.raw(h.bitmap.data(), h.bitmap.size());
  w.u64(h.segments.size());
  for (const Segment& s : h.segments) {
    w.f64(s.a.x);
    w.f64(s.a.y);
    w.f64(s.b.x);
    w.f64(s.b.y);
  }
  w.u32(static_cast<std::uint32_t>(h.kinds.size()));
  for (const LogKind& k : h.kinds) {
    w.str(k.name);
    w.f64(k.radius_m);
    w.u32(k.led_count);
    w.f64(k.rab_range_m);
    w.u8(static_cast<std::uint8_t>(k.shape));
    w.f64(k.half_length_m);
    w.f64(k.half_width_m);
    w.u32(static_cast<std::uint32_t>(k.rays.size()));
    for (const LogRays& rays : k.rays) {
      w.str(rays.column);
      w.f64(rays.range_m);
      w.u32(static_cast<std::uint32_t>(rays.angles.size()));
      for (double a : rays.angles) w.f64(a);
    }
  }
  w.u32(static_cast<std::uint32_t>(h.object_classes.size()));
  for (const LogClass& c : h.object_classes) w.str(c.name);
  for (const auto* entities : {&h.robots, &h.objects}) {
    if (entities == &h.robots && h.encoded_robot_count > 0) {
      w.u64(h.encoded_robot_count);
      w.raw(h.encoded_robots.data(), h.encoded_robots.size());
      continue;
    }
    w.u64(entities->size());
    for (const LogEntity& e : *entities) encode_entity(w, e.id, e.type_index, e.name);
  }
  write_columns(w, h.robot_columns);
  write_columns(w, h.object_columns);
  return out;
}

LogHeader decode_header_body(const std::uint8_t* data, std::size_t size, std::uint32_t version) {
  ByteReader r(data, size, "the log header");
  LogHeader h;
  h.experiment = r.str();
  h.seed = r.u64();
  h.tick_period_ns = r.i64();
  h.every = r.i64();
  h.arena_width_m = r.f64();
  h.arena_height_m = r.f64();
  h.arena_center.x = r.f64();
  h.arena_center.y = r.f64();
  h.bitmap_width = r.i32();
  h.bitmap_height = r.i32();
  h.bitmap_resolution_m = r.f64();
  h.bitmap_top_left.x = r.f64();
  h.bitmap_top_left.y = r.f64();
  std::size_t bitmap_bytes = r.count(r.u64(), 1);
  const std::uint8_t* bits = r.take(bitmap_bytes);
  h.bitmap.assign(bits, bits + bitmap_bytes);
  if (h.bitmap_width < 0 || h.bitmap_height < 0 ||
      static_cast<std::uint64_t>(h.bitmap_width) * static_cast<std::uint64_t>(h.bitmap_height) !=
          bitmap_bytes) {
    throw LogError("the log header is corrupt (bitmap size does not match its dimensions)");
  }
  h.segments.resize(r.count(r.u64(), 32));
  for (Segment& s : h.segments) {
    s.a.x = r.f64();
    s.a.y = r.f64();
    s.b.x = r.f64();
    s.b.y = r.f64();
  }
  if (version == 1) {
    // Version 1: robot classes (name, radius) with one LED each; object classes with an
    // unused radius; the fixed column lists.
    h.kinds.resize(r.count(r.u32(), 12));
    for (LogKind& k : h.kinds) {
      k.name = r.str();
      k.radius_m = r.f64();
      k.led_count = 1;
    }
    h.object_classes.resize(r.count(r.u32(), 12));
    for (LogClass& c : h.object_classes) {
      c.name = r.str();
      r.f64();
    }
  } else {
    // Version 3 adds each kind's shape and ray sensors (45 bytes at least a kind).
    h.kinds.resize(r.count(r.u32(), version >= 3 ? 45 : 24));
    for (LogKind& k : h.kinds) {
      k.name = r.str();
      k.radius_m = r.f64();
      k.led_count = r.u32();
      k.rab_range_m = r.f64();
      if (version < 3) continue;
      const std::uint8_t shape = r.u8();
      if (shape > static_cast<std::uint8_t>(LogShape::kBox)) {
        throw LogError("the log header is corrupt (robot kind '" + k.name +
                       "' has the unknown shape code " + std::to_string(shape) + ")");
      }
      k.shape = static_cast<LogShape>(shape);
      k.half_length_m = r.f64();
      k.half_width_m = r.f64();
      k.rays.resize(r.count(r.u32(), 16));
      for (LogRays& rays : k.rays) {
        rays.column = r.str();
        rays.range_m = r.f64();
        rays.angles.resize(r.count(r.u32(), 8));
        for (double& a : rays.angles) a = r.f64();
      }
    }
    h.object_classes.resize(r.count(r.u32(), 4));
    for (LogClass& c : h.object_classes) c.name = r.str();
  }
  for (auto* entities : {&h.robots, &h.objects}) {
    entities->resize(r.count(r.u64(), 10));
    for (LogEntity& e : *entities) {
      e.id = r.u32();
      e.type_index = r.u16();
      e.name = r.str();
    }
  }
  if (version == 1) {
    h.robot_columns = version1_robot_columns();
    h.object_columns = version1_object_columns();
  } else {
    h.robot_columns = read_columns(r);
    h.object_columns = read_columns(r);
  }
  if (r.remaining() != 0) throw LogError("the log header is corrupt (trailing bytes)");
  try {
    check_columns(h);
  } catch (const LogError& e) {
    throw LogError(std::string("the log header is corrupt (") + e.what() + ")");
  }
  return h;
}

PayloadLayout PayloadLayout::of(const LogHeader& h) {
  PayloadLayout p;
  for (const ColumnDesc& c : h.robot_columns) {
    if (c.name == "id") p.robot_id_column = p.robots.size();
    p.robots.push_back({c.element_bytes(), c.width});
    p.robot_row_bytes += c.row_bytes();
  }
  for (const ColumnDesc& c : h.object_columns) {
    p.objects.push_back({c.element_bytes(), c.width});
    p.object_row_bytes += c.row_bytes();
  }
  return p;
}

std::vector<RobotBlock> robot_blocks(std::span<const std::uint32_t> ids) {
  std::vector<RobotBlock> blocks;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    if (r > 0 && ids[r] <= ids[r - 1])
      throw LogError("the frame's robots are not in increasing id order (id " +
                     std::to_string(ids[r]) + " after " + std::to_string(ids[r - 1]) + ")");
    const std::uint32_t b = ids[r] / kRobotBlockIds;
    if (blocks.empty() || blocks.back().index != b) blocks.push_back({b, 0});
    ++blocks.back().rows;
  }
  return blocks;
}

std::size_t head_size(const LogFrameView& f, std::size_t blocks, const PayloadLayout& layout) {
  return kPayloadFixedBytes + f.status.size() + 4 + blocks * 8 +
         f.object_count * layout.object_row_bytes;
}

void encode_head(const LogFrameView& f, std::span<const RobotBlock> blocks,
                 const PayloadLayout& layout, std::uint8_t* at) {
  auto put = [&at](const void* v, std::size_t k) {
    if (k == 0) return;
    std::memcpy(at, v, k);
    at += k;
  };
  const std::size_t m = f.object_count;
  const auto robots32 = static_cast<std::uint32_t>(f.robot_count);
  const auto objects32 = static_cast<std::uint32_t>(m);
  const auto status32 = static_cast<std::uint32_t>(f.status.size());
  const auto blocks32 = static_cast<std::uint32_t>(blocks.size());
  put(&f.tick, 8);
  put(&f.time_ns, 8);
  put(&robots32, 4);
  put(&objects32, 4);
  put(&status32, 4);
  put(f.status.data(), f.status.size());
  put(&blocks32, 4);
  for (const RobotBlock& b : blocks) {
    put(&b.index, 4);
    put(&b.rows, 4);
  }
  for (std::size_t c = 0; c < layout.objects.size(); ++c) {
    const std::size_t elements = m * layout.objects[c].width;
    to_planes(f.object_columns[c].data(), at, elements, layout.objects[c].element_bytes, 0,
              elements);
    at += elements * layout.objects[c].element_bytes;
  }
}

void encode_block(const LogFrameView& f, const PayloadLayout& layout, std::size_t first,
                  std::size_t rows, std::uint8_t* at) {
  for (std::size_t c = 0; c < layout.robots.size(); ++c) {
    const std::size_t w = layout.robots[c].width, e = layout.robots[c].element_bytes;
    to_planes(f.robot_columns[c].data() + first * w * e, at, rows * w, e, 0, rows * w);
    at += rows * w * e;
  }
}

void cut_parts(std::size_t begin, std::size_t end, std::vector<std::size_t>& starts) {
  for (std::size_t at = begin; at < end; at += kPayloadPartBytes) starts.push_back(at);
}

void shuffle_frame(const LogFrameView& f, const PayloadLayout& layout,
                   std::vector<std::uint8_t>& out, std::vector<std::size_t>& starts,
                   const ParallelFor& parallel) {
  const std::size_t n = f.robot_count;
  const std::vector<RobotBlock> blocks =
      n == 0 ? std::vector<RobotBlock>{}
             : robot_blocks(column_as<std::uint32_t>(f.robot_columns[layout.robot_id_column]));
  const std::size_t head = head_size(f, blocks.size(), layout);
  out.resize(head + n * layout.robot_row_bytes);
  encode_head(f, blocks, layout, out.data());
  starts.clear();
  cut_parts(0, head, starts);
  std::vector<std::size_t> first(blocks.size() + 1, 0);  // each block's first row
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    first[b + 1] = first[b] + blocks[b].rows;
    const std::size_t at = head + first[b] * layout.robot_row_bytes;
    cut_parts(at, at + blocks[b].rows * layout.robot_row_bytes, starts);
  }
  starts.push_back(out.size());
  auto encode = [&](std::size_t bb, std::size_t be) {
    for (std::size_t b = bb; b < be; ++b)
      encode_block(f, layout, first[b], blocks[b].rows,
                   out.data() + head + first[b] * layout.robot_row_bytes);
  };
  if (parallel && blocks.size() > 1)
    parallel(blocks.size(), 1, encode);
  else
    encode(0, blocks.size());
}

void decode_payload(const std::uint8_t* data, std::size_t size, const PayloadLayout& layout,
                    LogFrame& f, const std::string& what, std::uint32_t version) {
  ByteReader r(data, size, what);
  f.tick = r.i64();
  f.time_ns = r.i64();
  const std::size_t n = r.u32();
  const std::size_t m = r.u32();
  const std::uint32_t status = r.u32();
  const std::uint8_t* s = r.take(status);
  f.status.assign(reinterpret_cast<const char*>(s), status);
  std::vector<RobotBlock> blocks;
  if (version >= 4) {
    blocks.resize(r.count(r.u32(), 8));
    std::size_t rows = 0;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      blocks[b].index = r.u32();
      blocks[b].rows = r.u32();
      if (blocks[b].rows == 0 || blocks[b].rows > kRobotBlockIds ||
          (b > 0 && blocks[b].index <= blocks[b - 1].index))
        throw LogError(what + " is corrupt (a bad robot block table)");
      rows += blocks[b].rows;
    }
    if (rows != n) throw LogError(what + " is corrupt (its blocks do not hold its robots)");
  } else if (n > 0) {
    blocks.push_back({0, static_cast<std::uint32_t>(n)});  // (one block of every robot)
  }
  // Sizes are checked by division first: n * row bytes of a hostile header could overflow.
  const std::size_t left = r.remaining();
  const bool fits = (layout.robot_row_bytes == 0 || n <= left / layout.robot_row_bytes) &&
                    (layout.object_row_bytes == 0 || m <= left / layout.object_row_bytes) &&
                    n * layout.robot_row_bytes + m * layout.object_row_bytes == left;
  if (!fits) throw LogError(what + " is corrupt (its columns do not match its entity counts)");
  f.robot_count = n;
  f.object_count = m;
  auto unshuffle_rows = [&](const std::vector<PayloadLayout::Column>& columns, std::size_t first,
                            std::size_t rows, std::vector<std::vector<std::uint8_t>>& out) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::size_t w = columns[c].width, e = columns[c].element_bytes;
      unshuffle(r.take(rows * w * e), out[c].data() + first * w * e, rows * w, e);
    }
  };
  auto size_columns = [](const std::vector<PayloadLayout::Column>& columns, std::size_t rows,
                         std::vector<std::vector<std::uint8_t>>& out) {
    out.resize(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c)
      out[c].resize(rows * columns[c].width * columns[c].element_bytes);
  };
  size_columns(layout.robots, n, f.robot_columns);
  size_columns(layout.objects, m, f.object_columns);
  // (Version 4: the objects are in the head, before the robot blocks.)
  if (version >= 4) unshuffle_rows(layout.objects, 0, m, f.object_columns);
  std::size_t first = 0;
  for (const RobotBlock& b : blocks) {
    unshuffle_rows(layout.robots, first, b.rows, f.robot_columns);
    first += b.rows;
  }
  if (version < 4) unshuffle_rows(layout.objects, 0, m, f.object_columns);
  if (version >= 4 && n > 0) {
    // Every block's robots are its ids, in order.
    const auto ids = column_as<std::uint32_t>(f.robot_columns[layout.robot_id_column]);
    std::size_t row = 0;
    for (const RobotBlock& b : blocks)
      for (std::uint32_t k = 0; k < b.rows; ++k, ++row)
        if (ids[row] / kRobotBlockIds != b.index || (row > 0 && ids[row] <= ids[row - 1]))
          throw LogError(what + " is corrupt (a robot outside its block or out of order)");
  }
}

}  // namespace fleetsim::log::frame_format
