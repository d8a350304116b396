// The binary frame log's on-disk layout, shared by FrameLogWriter and FrameLogReader.
// docs/log-format.md describes the same thing for humans; keep the two in step.
//
//   file    = file_header  frame_record*  [index_record  footer]
//   file_header  (40 bytes + body): "FLEETLOG", u32 version, u32 flags, u64 body_raw_size,
//                u64 body_stored_size, u64 checksum, zstd(LogHeader body, with both column lists)
//   frame_record (56 bytes + tag block + payload), see RecordHeader; the payload holds every
//                column of the header's lists, in order, each byte-shuffled
//   index_record: "FIDX", u32 0, u64 frames, u64 tags, u64 offset[frames], str tag[tags]
//   footer (32 bytes, last in the file): u64 index_offset, u64 index_size, u64 checksum,
//                "FLEETEND"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "log/log_types.hpp"

namespace fleetsim::log::frame_format {

inline constexpr char kFileMagic[8] = {'F', 'L', 'E', 'E', 'T', 'L', 'O', 'G'};
inline constexpr char kRecordMagic[4] = {'F', 'R', 'M', '1'};
inline constexpr char kIndexMagic[4] = {'F', 'I', 'D', 'X'};
inline constexpr char kFooterMagic[8] = {'F', 'L', 'E', 'E', 'T', 'E', 'N', 'D'};

/// Version written by this build. Version 2 carries the column lists in the header; version 3
/// each kind's shape (circle or box) and ray sensors too.
inline constexpr std::uint32_t kVersion = 3;
/// Oldest version this build reads. Version 1 had a fixed column list (see
/// version1_robot_columns()); its records are laid out like version 2's with that list.
inline constexpr std::uint32_t kOldestReadableVersion = 1;

inline constexpr std::size_t kFileHeaderSize = 40;
inline constexpr std::size_t kRecordHeaderSize = 56;
inline constexpr std::size_t kFooterSize = 32;

/// Caps a reader trusts before allocating (a checksum guards them already; this is for
/// hand-made files that collide).
inline constexpr std::uint64_t kMaxRecordBytes = std::uint64_t{1} << 40;

/// The fixed part of one frame record, in file order.
struct RecordHeader {
  std::uint32_t new_tag_count = 0;   ///< tags appended by this frame
  std::uint32_t tag_block_size = 0;  ///< bytes of the tag block after this header
  std::uint32_t tag_base = 0;        ///< tag table size before this frame
  std::uint64_t payload_size = 0;    ///< bytes of the zstd payload after the tag block
  std::uint64_t raw_size = 0;        ///< bytes of the payload once decompressed
  std::int64_t tick = 0;
  std::uint64_t body_checksum = 0;  ///< over the tag block and the payload

  std::uint64_t record_size() const { return kRecordHeaderSize + tag_block_size + payload_size; }
};

/// Encodes `h` into exactly kRecordHeaderSize bytes (the last 8 are its own checksum).
void encode_record_header(const RecordHeader& h, std::uint8_t* out);
/// Decodes a record header; returns false if the magic or its checksum is wrong.
bool decode_record_header(const std::uint8_t* in, RecordHeader& h);

/// The four-lane hash of checksum(), over bytes given in pieces: update(a) then update(b)
/// gives checksum(a followed by b).
class LanesHash {
 public:
  LanesHash();
  void update(const std::uint8_t* data, std::size_t n);
  std::uint64_t value() const;

 private:
  void blocks(const std::uint8_t* p, std::size_t count);
  std::uint64_t lane_[4];
  std::uint8_t held_bytes_[32] = {};  ///< the start of a 32-byte block not yet complete
  std::size_t held_ = 0;
  std::uint64_t total_ = 0;
};

/// The checksum used everywhere in the file (four-lane hash, docs/log-format.md 1.4).
std::uint64_t checksum(const std::uint8_t* data, std::size_t n, const std::uint8_t* data2 = nullptr,
                       std::size_t n2 = 0);

/// Serialises a LogHeader into its (uncompressed) body, format kVersion.
std::vector<std::uint8_t> encode_header_body(const LogHeader& header);
/// Parses a header body written in format `version` (kOldestReadableVersion..kVersion). The
/// result passed check_columns(). Throws LogError on malformed data.
LogHeader decode_header_body(const std::uint8_t* data, std::size_t size, std::uint32_t version);

/// The fixed robot columns of a version-1 log: id u32, kind u16, x, y, theta f64, tag,
/// led color x 1.
std::vector<ColumnDesc> version1_robot_columns();
/// The fixed object columns of a version-1 log: id u32, class u16, x, y, size f64, tag.
std::vector<ColumnDesc> version1_object_columns();

/// What the payload encoding needs of a header's column lists: each column's element size
/// (the byte-plane width) and elements per entity. Built once per log.
struct PayloadLayout {
  struct Column {
    std::size_t element_bytes = 0;  ///< 1, 2, 4 or 8
    std::size_t width = 0;          ///< elements per entity
  };
  std::vector<Column> robots, objects;
  std::size_t robot_row_bytes = 0, object_row_bytes = 0;

  static PayloadLayout of(const LogHeader& header);
};

/// A payload is compressed in parts of this many bytes (the last part may be shorter), each
/// a zstd frame of its own, stored one after the other: zstd decompresses them as one, and
/// the parts can be compressed at once on several threads. A fixed size, so that the bytes
/// do not depend on the number of threads.
inline constexpr std::size_t kPayloadPartBytes = std::size_t{256} * 1024;

/// Bytes before the columns: tick, time, robot count, object count, status length.
inline constexpr std::size_t kPayloadFixedBytes = 28;

/// A frame's payload, ready for zstd, into `out` (resized to fit): the fixed fields and the
/// status, then every column transposed into byte planes (byte k of every element, then byte
/// k+1, ...): doubles of neighbouring robots share their high bytes, which zstd then finds.
/// Read straight from the frame's columns, the robots split by `parallel`. The frame must have
/// passed check_frame().
void shuffle_frame(const LogFrameView& frame, const PayloadLayout& layout,
                   std::vector<std::uint8_t>& out, const ParallelFor& parallel = {});

/// Inverse of shuffle_frame: decodes a decompressed payload into `frame`
/// (tags excepted). Throws LogError naming `what` on malformed data.
void decode_payload(const std::uint8_t* data, std::size_t size, const PayloadLayout& layout,
                    LogFrame& frame, const std::string& what);

}  // namespace fleetsim::log::frame_format
