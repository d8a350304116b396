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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_types.hpp"

namespace fleetsim::log {
class ByteWriter;
}

namespace fleetsim::log::frame_format {

inline constexpr char kFileMagic[8] = {'F', 'L', 'E', 'E', 'T', 'L', 'O', 'G'};
inline constexpr char kRecordMagic[4] = {'F', 'R', 'M', '1'};
inline constexpr char kIndexMagic[4] = {'F', 'I', 'D', 'X'};
inline constexpr char kFooterMagic[8] = {'F', 'L', 'E', 'E', 'T', 'E', 'N', 'D'};

/// Version written by this build. Version 2 carries the column lists in the header; version 3
/// each kind's shape (circle or box) and ray sensors too; version 4 a frame's robots in blocks
/// of consecutive ids, each compressed on its own (RobotBlock).
inline constexpr std::uint32_t kVersion = 4;
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
/// One robot or object of the header's lists as the header stores it: u32 id, u16 kind (or
/// class), u32 name length, name.
void encode_entity(ByteWriter& w, std::uint32_t id, std::uint16_t type_index,
                   std::string_view name);
/// `count` entities encoded by encode_entity (LogHeader::encoded_robots); LogError when the
/// bytes are not exactly that.
std::vector<LogEntity> decode_entities(const std::vector<std::uint8_t>& encoded,
                                       std::uint64_t count);
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
  std::size_t robot_id_column = 0;  ///< where `id` is in the robot list

  static PayloadLayout of(const LogHeader& header);
};

/// A payload is compressed in parts of at most this many bytes, each a zstd frame of its own,
/// stored one after the other: zstd decompresses them as one, and the parts can be compressed
/// at once on several threads (or processes). The head and each robot block are cut into such
/// parts from their own start, so that the bytes depend neither on the number of threads nor on
/// who compressed which block.
inline constexpr std::size_t kPayloadPartBytes = std::size_t{256} * 1024;

/// Version 4: a frame's robots are stored in blocks of the robots whose ids lie in
/// [index * kRobotBlockIds, (index + 1) * kRobotBlockIds), in id order, each block compressed
/// on its own. The bytes of a block depend only on its robots, so a run split over processes
/// can encode each block where its robots are and still write the one-process file.
inline constexpr std::uint32_t kRobotBlockIds = 4096;

/// One robot block of a version-4 frame: its index and how many robots it holds.
struct RobotBlock {
  std::uint32_t index = 0;
  std::uint32_t rows = 0;
};

/// The blocks of a frame whose robots have ids `ids`, in that order; throws LogError when the
/// ids are not increasing.
std::vector<RobotBlock> robot_blocks(std::span<const std::uint32_t> ids);

/// Bytes before the columns: tick, time, robot count, object count, status length.
inline constexpr std::size_t kPayloadFixedBytes = 28;

/// The size of a version-4 payload's head: the fixed fields, the status, the block table and
/// the objects' columns.
std::size_t head_size(const LogFrameView& frame, std::size_t blocks, const PayloadLayout& layout);
/// Writes the head of a version-4 payload (head_size() bytes at `out`): `frame`'s tick, time,
/// robot count (every block's robots), object count and status, the block table, then every
/// object column transposed into byte planes (byte k of every element, then byte k+1, ...:
/// doubles of neighbouring entities share their high bytes, which zstd then finds).
void encode_head(const LogFrameView& frame, std::span<const RobotBlock> blocks,
                 const PayloadLayout& layout, std::uint8_t* out);
/// Writes one robot block (rows * layout.robot_row_bytes bytes at `out`): every robot column
/// of `frame`'s rows [first, first + rows), transposed into byte planes.
void encode_block(const LogFrameView& frame, const PayloadLayout& layout, std::size_t first,
                  std::size_t rows, std::uint8_t* out);
/// A robot block encoded and compressed on its own (a run split over processes makes each
/// where its robots are; FrameLogWriter::write_blocks stores them as they are).
struct EncodedBlock {
  RobotBlock block;
  std::uint64_t raw_size = 0;       ///< bytes of the block before compression
  std::vector<std::uint8_t> bytes;  ///< its parts, each a zstd frame, one after the other
};

/// Appends to `starts` where the parts of the bytes [begin, end) start (every
/// kPayloadPartBytes from `begin`).
void cut_parts(std::size_t begin, std::size_t end, std::vector<std::size_t>& starts);

/// A frame's payload, ready for zstd, into `out` (resized to fit): the head, then its robot
/// blocks; `starts` gets where each part to compress starts, and last out.size(). Read straight
/// from the frame's columns, the blocks split over `parallel`. The frame must have passed
/// check_frame(), with its robots in increasing id order (else LogError).
void shuffle_frame(const LogFrameView& frame, const PayloadLayout& layout,
                   std::vector<std::uint8_t>& out, std::vector<std::size_t>& starts,
                   const ParallelFor& parallel = {});

/// Inverse of shuffle_frame: decodes a decompressed payload of format `version` into `frame`
/// (tags excepted). Throws LogError naming `what` on malformed data.
void decode_payload(const std::uint8_t* data, std::size_t size, const PayloadLayout& layout,
                    LogFrame& frame, const std::string& what, std::uint32_t version = kVersion);

}  // namespace fleetsim::log::frame_format
