// The frame_log_packed harness's input format, shared with the seed generator.
//
// Mutating a frame log's bytes mostly breaks a checksum or the zstd stream, so the reader
// refuses it early. This harness instead takes the *decompressed* parts and seals them into a
// well-formed file (compressed, checksummed, indexed), which reaches the header body decoder,
// the payload decoder and the frame checks:
//
//   input = flags u8, header body, { kFrameSeparator, new tag count u8, raw payload }*
//   flags: bit 0 set = format version 1 (else 2); bit 1 set = no index (the reader scans).
// A frame's tick (in its record header) is taken from the first 8 bytes of its payload.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "log/byte_io.hpp"
#include "log/frame_log_format.hpp"
#include "log/frame_log_reader.hpp"

namespace fleetsim::fuzz {

/// Opens the frame log at `path` and reads every frame, as the viewer does: a corrupt frame is
/// skipped, a corrupt header or index ends the read (both as LogError, never a crash).
inline void read_every_frame(const std::string& path) {
  try {
    log::FrameLogReader reader(path);
    for (std::size_t i = 0; i < reader.frame_count(); ++i) {
      try {
        reader.read_frame(i);
      } catch (const log::LogError&) {
        // One corrupt frame; the viewer goes on with the others.
      }
    }
  } catch (const log::LogError&) {
  }
}

inline constexpr std::string_view kFrameSeparator = "\n@FRAME@";

/// Builds a frame log file from a harness input (see above).
inline std::vector<std::uint8_t> seal_frame_log(std::string_view input) {
  namespace ff = log::frame_format;
  std::vector<std::uint8_t> out;
  if (input.empty()) return out;
  const std::uint8_t flags = static_cast<std::uint8_t>(input[0]);
  input.remove_prefix(1);
  std::vector<std::string_view> parts;
  for (;;) {
    std::size_t at = input.find(kFrameSeparator);
    parts.push_back(input.substr(0, at));
    if (at == std::string_view::npos) break;
    input.remove_prefix(at + kFrameSeparator.size());
  }
  auto compress = [](std::string_view raw) {
    std::vector<std::uint8_t> z(ZSTD_compressBound(raw.size()));
    std::size_t k = ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 1);
    z.resize(ZSTD_isError(k) ? 0 : k);
    return z;
  };
  log::ByteWriter w(out);

  // File header.
  std::vector<std::uint8_t> body = compress(parts[0]);
  w.raw(ff::kFileMagic, 8);
  w.u32((flags & 1) ? 1 : 2);
  w.u32(0);
  w.u64(parts[0].size());
  w.u64(body.size());
  w.u64(ff::checksum(out.data(), 32, body.data(), body.size()));
  w.raw(body.data(), body.size());

  // One record per frame; tags are named after their index in the table.
  std::vector<std::uint64_t> offsets;
  std::vector<std::string> tags;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    std::uint32_t new_tags = part.empty() ? 0 : static_cast<std::uint8_t>(part[0]) % 4;
    if (!part.empty()) part.remove_prefix(1);
    std::vector<std::uint8_t> rest;
    log::ByteWriter rw(rest);
    ff::RecordHeader h;
    h.tag_base = static_cast<std::uint32_t>(tags.size());
    h.new_tag_count = new_tags;
    for (std::uint32_t t = 0; t < new_tags; ++t) {
      tags.push_back("tag" + std::to_string(tags.size()));
      rw.str(tags.back());
    }
    h.tag_block_size = static_cast<std::uint32_t>(rest.size());
    std::vector<std::uint8_t> payload = compress(part);
    rw.raw(payload.data(), payload.size());
    h.payload_size = payload.size();
    h.raw_size = part.size();
    if (part.size() >= 8) std::memcpy(&h.tick, part.data(), 8);
    h.body_checksum = ff::checksum(rest.data(), rest.size());
    std::uint8_t fixed[ff::kRecordHeaderSize];
    ff::encode_record_header(h, fixed);
    offsets.push_back(out.size());
    w.raw(fixed, sizeof fixed);
    w.raw(rest.data(), rest.size());
  }

  // Index and footer.
  if ((flags & 2) == 0) {
    std::vector<std::uint8_t> index;
    log::ByteWriter iw(index);
    iw.raw(ff::kIndexMagic, 4);
    iw.u32(0);
    iw.u64(offsets.size());
    iw.u64(tags.size());
    for (std::uint64_t o : offsets) iw.u64(o);
    for (const std::string& t : tags) iw.str(t);
    const std::uint64_t index_offset = out.size();
    w.raw(index.data(), index.size());
    w.u64(index_offset);
    w.u64(index.size());
    w.u64(ff::checksum(index.data(), index.size()));
    w.raw(ff::kFooterMagic, 8);
  }
  return out;
}

}  // namespace fleetsim::fuzz
