#include "log/frame_log_format.hpp"

#include <cstring>
#include <limits>

#include "core/hash.hpp"
#include "log/byte_io.hpp"

namespace fleetsim::log::frame_format {

namespace {

// Byte-plane transpose of `n` elements of `width` bytes (to planes when shuffling for zstd,
// back when reading). The width is a compile-time constant so the inner loop unrolls: the
// writer's thread spends its time here and in zstd.
template <bool kToPlanes, std::size_t W>
void transpose_fixed(const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < W; ++k) {
      if constexpr (kToPlanes)
        out[k * n + i] = in[i * W + k];
      else
        out[i * W + k] = in[k * n + i];
    }
}

constexpr bool widths_supported() {
  for (std::size_t w : kRobotColumnWidths)
    if (w != 2 && w != 4 && w != 8) return false;
  for (std::size_t w : kObjectColumnWidths)
    if (w != 2 && w != 4 && w != 8) return false;
  return true;
}
static_assert(widths_supported(), "every column is 2, 4 or 8 bytes wide");

template <bool kToPlanes>
void transpose(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t width) {
  switch (width) {
    case 2: return transpose_fixed<kToPlanes, 2>(in, out, n);
    case 4: return transpose_fixed<kToPlanes, 4>(in, out, n);
    case 8: return transpose_fixed<kToPlanes, 8>(in, out, n);
    default: throw LogError("internal: unsupported column width " + std::to_string(width));
  }
}

void shuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t width) {
  transpose<true>(in, out, n, width);
}

void unshuffle(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t width) {
  transpose<false>(in, out, n, width);
}

template <class T>
void copy_column(std::span<const T> column, std::uint8_t*& at) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (column.empty()) return;
  std::memcpy(at, column.data(), column.size_bytes());
  at += column.size_bytes();
}

// Colours are copied channel by channel: Color has no padding today, but the file must not
// depend on that.
void copy_colors(std::span<const Color> column, std::uint8_t*& at) {
  if constexpr (sizeof(Color) == 4) {
    copy_column(column, at);
  } else {
    for (const Color& c : column) {
      *at++ = c.r;
      *at++ = c.g;
      *at++ = c.b;
      *at++ = c.a;
    }
  }
}

template <class T>
void read_column(const std::uint8_t* plain, std::size_t n, std::vector<T>& out) {
  out.resize(n);
  if (n > 0) std::memcpy(out.data(), plain, n * sizeof(T));
}

}  // namespace

namespace {

inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Four independent lanes of 8-byte words (multiply, rotate, multiply), so the CPU works on
// four words at once: the writer checksums every record's body, and a single dependent chain
// cost more than zstd itself.
std::uint64_t lanes_hash(const std::uint8_t* p, std::size_t n) {
  constexpr std::uint64_t kP1 = 0x9e3779b185ebca87ULL, kP2 = 0xc2b2ae3d27d4eb4fULL;
  std::uint64_t lane[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  std::size_t blocks = n / 32;
  for (std::size_t b = 0; b < blocks; ++b, p += 32) {
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + 8 * k, 8);
      lane[k] = rotl(lane[k] + w * kP2, 31) * kP1;
    }
  }
  std::uint64_t h = mix64(lane[0]) ^ rotl(mix64(lane[1]), 17) ^ rotl(mix64(lane[2]), 34) ^
                    rotl(mix64(lane[3]), 51);
  Hasher tail;  // the last n % 32 bytes and the length
  tail.word(h);
  tail.word(n);
  tail.bytes(p, n % 32);
  return tail.value();
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
  for (const auto* classes : {&h.robot_classes, &h.object_classes}) {
    w.u32(static_cast<std::uint32_t>(classes->size()));
    for (const LogClass& c : *classes) {
      w.str(c.name);
      w.f64(c.radius_m);
    }
  }
  for (const auto* entities : {&h.robots, &h.objects}) {
    w.u64(entities->size());
    for (const LogEntity& e : *entities) {
      w.u32(e.id);
      w.u16(e.class_index);
      w.str(e.name);
    }
  }
  return out;
}

LogHeader decode_header_body(const std::uint8_t* data, std::size_t size) {
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
  for (auto* classes : {&h.robot_classes, &h.object_classes}) {
    classes->resize(r.count(r.u32(), 12));
    for (LogClass& c : *classes) {
      c.name = r.str();
      c.radius_m = r.f64();
    }
  }
  for (auto* entities : {&h.robots, &h.objects}) {
    entities->resize(r.count(r.u64(), 10));
    for (LogEntity& e : *entities) {
      e.id = r.u32();
      e.class_index = r.u16();
      e.name = r.str();
    }
  }
  if (r.remaining() != 0) throw LogError("the log header is corrupt (trailing bytes)");
  return h;
}

void copy_payload(const LogFrameView& f, std::vector<std::uint8_t>& out) {
  const std::size_t n = f.robot_id.size();
  const std::size_t m = f.object_id.size();
  out.resize(payload_size(n, m, f.status.size()));
  std::uint8_t* at = out.data();
  auto put = [&at](const void* v, std::size_t k) {
    std::memcpy(at, v, k);
    at += k;
  };
  const auto robots32 = static_cast<std::uint32_t>(n);
  const auto objects32 = static_cast<std::uint32_t>(m);
  const auto status32 = static_cast<std::uint32_t>(f.status.size());
  put(&f.tick, 8);
  put(&f.time_ns, 8);
  put(&robots32, 4);
  put(&objects32, 4);
  put(&status32, 4);
  if (!f.status.empty()) put(f.status.data(), f.status.size());
  copy_column(f.robot_id, at);
  copy_column(f.robot_class, at);
  copy_column(f.robot_x, at);
  copy_column(f.robot_y, at);
  copy_column(f.robot_theta, at);
  copy_column(f.robot_tag, at);
  copy_colors(f.robot_led, at);
  copy_column(f.object_id, at);
  copy_column(f.object_class, at);
  copy_column(f.object_x, at);
  copy_column(f.object_y, at);
  copy_column(f.object_size, at);
  copy_column(f.object_tag, at);
}

void shuffle_payload(const std::vector<std::uint8_t>& plain, std::vector<std::uint8_t>& out) {
  out.resize(plain.size());
  std::uint32_t n = 0, m = 0, status = 0;
  std::memcpy(&n, plain.data() + 16, 4);
  std::memcpy(&m, plain.data() + 20, 4);
  std::memcpy(&status, plain.data() + 24, 4);
  std::size_t at = kPayloadFixedBytes + status;
  std::memcpy(out.data(), plain.data(), at);
  for (std::size_t w : kRobotColumnWidths) {
    shuffle(plain.data() + at, out.data() + at, n, w);
    at += n * w;
  }
  for (std::size_t w : kObjectColumnWidths) {
    shuffle(plain.data() + at, out.data() + at, m, w);
    at += m * w;
  }
}

void decode_payload(const std::uint8_t* data, std::size_t size, LogFrame& f,
                    const std::string& what) {
  ByteReader r(data, size, what);
  f.tick = r.i64();
  f.time_ns = r.i64();
  std::uint64_t n = r.u32();
  std::uint64_t m = r.u32();
  std::uint32_t status = r.u32();
  const std::uint8_t* s = r.take(status);
  f.status.assign(reinterpret_cast<const char*>(s), status);
  if (r.remaining() != n * kRobotBytes + m * kObjectBytes) {
    throw LogError(what + " is corrupt (its columns do not match its entity counts)");
  }
  std::vector<std::uint8_t> plain(r.remaining());
  const std::uint8_t* in = r.take(r.remaining());
  std::size_t at = 0;
  for (std::size_t w : kRobotColumnWidths) {
    unshuffle(in + at, plain.data() + at, n, w);
    at += n * w;
  }
  for (std::size_t w : kObjectColumnWidths) {
    unshuffle(in + at, plain.data() + at, m, w);
    at += m * w;
  }
  const std::uint8_t* p = plain.data();
  read_column(p, n, f.robot_id), p += n * 4;
  read_column(p, n, f.robot_class), p += n * 2;
  read_column(p, n, f.robot_x), p += n * 8;
  read_column(p, n, f.robot_y), p += n * 8;
  read_column(p, n, f.robot_theta), p += n * 8;
  read_column(p, n, f.robot_tag), p += n * 4;
  f.robot_led.resize(n);
  for (std::size_t i = 0; i < n; ++i, p += 4) f.robot_led[i] = Color{p[0], p[1], p[2], p[3]};
  read_column(p, m, f.object_id), p += m * 4;
  read_column(p, m, f.object_class), p += m * 2;
  read_column(p, m, f.object_x), p += m * 8;
  read_column(p, m, f.object_y), p += m * 8;
  read_column(p, m, f.object_size), p += m * 8;
  read_column(p, m, f.object_tag), p += m * 4;
}

}  // namespace fleetsim::log::frame_format
