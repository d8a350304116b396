#include "log/frame_log_reader.hpp"

#include <zstd.h>

#include <cstring>
#include <new>

#include "log/frame_log_format.hpp"

namespace fleetsim::log {

namespace ff = frame_format;

namespace {

// Decompresses exactly `raw_size` bytes; throws LogError naming `what` otherwise.
void decompress(const std::uint8_t* data, std::size_t n, std::size_t raw_size,
                std::vector<std::uint8_t>& out, const std::string& what) {
  try {
    out.resize(raw_size);
  } catch (const std::bad_alloc&) {
    throw LogError(what + " is corrupt (an impossible size)");
  }
  std::size_t k = ZSTD_decompress(out.data(), out.size(), data, n);
  if (ZSTD_isError(k) || k != raw_size) {
    throw LogError(what + " is corrupt (its compressed data does not decompress)");
  }
}

}  // namespace

FrameLogReader::FrameLogReader(std::string path)
    : path_(std::move(path)), file_(open_for_reading(path_)) {
  const std::uint64_t size = file_size(file_.get(), path_);
  const std::string where = "log '" + path_ + "'";

  // File header.
  std::uint8_t fixed[ff::kFileHeaderSize];
  const bool complete = read_exact_at(file_.get(), fixed, sizeof fixed, 0, path_);
  if (size < 8 || std::memcmp(fixed, ff::kFileMagic, 8) != 0) {
    throw LogError(where + " is not a fleetsim frame log (bad magic)");
  }
  if (!complete) throw LogError(where + " is truncated (its header is incomplete)");
  ByteReader r(fixed + 8, sizeof fixed - 8, where + " header");
  std::uint32_t version = r.u32();
  r.u32();  // flags, none defined in versions 1 to 4
  std::uint64_t raw_size = r.u64();
  std::uint64_t stored = r.u64();
  std::uint64_t sum = r.u64();
  if (version < ff::kOldestReadableVersion || version > ff::kVersion) {
    throw LogError(where + " has format version " + std::to_string(version) +
                   "; this fleetsim reads versions " + std::to_string(ff::kOldestReadableVersion) +
                   " to " + std::to_string(ff::kVersion) +
                   (version > ff::kVersion ? " (a newer fleetsim wrote it)" : ""));
  }
  version_ = version;
  if (stored > size - ff::kFileHeaderSize || raw_size > ff::kMaxRecordBytes) {
    throw LogError(where + " is truncated or corrupt (its header is incomplete)");
  }
  std::vector<std::uint8_t> compressed(stored);
  if (!read_exact_at(file_.get(), compressed.data(), stored, ff::kFileHeaderSize, path_) ||
      ff::checksum(fixed, 32, compressed.data(), stored) != sum) {
    throw LogError(where + " is corrupt (header checksum mismatch)");
  }
  std::vector<std::uint8_t> body;
  decompress(compressed.data(), stored, raw_size, body, where + " header");
  try {
    header_ = ff::decode_header_body(body.data(), body.size(), version);
  } catch (const LogError& e) {
    throw LogError(where + ": " + e.what());
  }
  frames_begin_ = ff::kFileHeaderSize + stored;
  layout_ = ff::PayloadLayout::of(header_);

  // Index, else scan.
  has_index_ = read_index(size);
  if (!has_index_) scan_records(size);
}

bool FrameLogReader::read_index(std::uint64_t size) {
  if (size < frames_begin_ + ff::kFooterSize) return false;
  std::uint8_t footer[ff::kFooterSize];
  if (!read_exact_at(file_.get(), footer, sizeof footer, size - ff::kFooterSize, path_)) {
    return false;
  }
  if (std::memcmp(footer + 24, ff::kFooterMagic, 8) != 0) return false;
  ByteReader fr(footer, 24, "index footer");
  std::uint64_t index_offset = fr.u64();
  std::uint64_t index_size = fr.u64();
  std::uint64_t sum = fr.u64();
  if (index_offset < frames_begin_ || index_size > size ||
      index_offset + index_size + ff::kFooterSize != size) {
    return false;
  }
  std::vector<std::uint8_t> index(index_size);
  if (!read_exact_at(file_.get(), index.data(), index_size, index_offset, path_) ||
      ff::checksum(index.data(), index.size()) != sum || index_size < 24 ||
      std::memcmp(index.data(), ff::kIndexMagic, 4) != 0) {
    return false;
  }
  try {
    ByteReader r(index.data() + 8, index.size() - 8, "index");
    std::size_t frames = r.count(r.u64(), 8);
    std::uint64_t tags = r.u64();
    std::vector<std::uint64_t> offsets(frames);
    for (std::uint64_t& o : offsets) o = r.u64();
    std::vector<std::string> table(r.count(tags, 4));
    for (std::string& t : table) t = r.str();
    if (r.remaining() != 0) return false;
    std::uint64_t prev = frames_begin_;
    for (std::size_t i = 0; i < frames; ++i) {
      if (offsets[i] < prev || offsets[i] + ff::kRecordHeaderSize > index_offset) return false;
      prev = offsets[i] + ff::kRecordHeaderSize;
    }
    offsets_ = std::move(offsets);
    tags_ = std::move(table);
  } catch (const LogError&) {
    return false;
  }
  return true;
}

void FrameLogReader::scan_records(std::uint64_t size) {
  // Walk the record headers; stop at the first one that is incomplete or invalid (a writer
  // killed mid-record leaves a short tail; an unfinished index starts with "FIDX").
  std::uint64_t at = frames_begin_;
  std::vector<std::uint8_t> tag_block;
  std::uint64_t last_offset = 0;
  ff::RecordHeader last{};
  while (size - at >= ff::kRecordHeaderSize) {
    std::uint8_t fixed[ff::kRecordHeaderSize];
    if (!read_exact_at(file_.get(), fixed, sizeof fixed, at, path_)) break;
    ff::RecordHeader h;
    if (!ff::decode_record_header(fixed, h)) break;
    if (h.record_size() > size - at || h.tag_base != tags_.size()) break;
    tag_block.resize(h.tag_block_size);
    if (!read_exact_at(file_.get(), tag_block.data(), tag_block.size(), at + ff::kRecordHeaderSize,
                       path_)) {
      break;
    }
    std::vector<std::string> added;
    try {
      ByteReader r(tag_block.data(), tag_block.size(), "tag block");
      for (std::uint32_t i = 0; i < h.new_tag_count; ++i) added.push_back(r.str());
      if (r.remaining() != 0) break;
    } catch (const LogError&) {
      break;
    }
    tags_.insert(tags_.end(), added.begin(), added.end());
    offsets_.push_back(at);
    last_offset = at;
    last = h;
    at += h.record_size();
  }
  // The last record is the one a crash can have left half-written (e.g. zero-filled by the
  // file system): verify its body checksum too.
  if (!offsets_.empty()) {
    std::vector<std::uint8_t> body(last.record_size() - ff::kRecordHeaderSize);
    bool ok = read_exact_at(file_.get(), body.data(), body.size(),
                            last_offset + ff::kRecordHeaderSize, path_) &&
              ff::checksum(body.data(), body.size()) == last.body_checksum;
    if (!ok) {
      offsets_.pop_back();
      tags_.resize(last.tag_base);
    }
  }
}

LogFrame FrameLogReader::read_frame(std::size_t index) {
  const std::string what = "log '" + path_ + "', frame " + std::to_string(index);
  if (index >= offsets_.size()) {
    throw LogError(what + ": no such frame (the log has " + std::to_string(offsets_.size()) +
                   " frames)");
  }
  std::uint64_t at = offsets_[index];
  std::uint8_t fixed[ff::kRecordHeaderSize];
  ff::RecordHeader h;
  if (!read_exact_at(file_.get(), fixed, sizeof fixed, at, path_) ||
      !ff::decode_record_header(fixed, h)) {
    throw LogError(what + " is corrupt (bad record header)");
  }
  if (static_cast<std::uint64_t>(h.tag_base) + h.new_tag_count > tags_.size()) {
    throw LogError(what + " is corrupt (its tag table does not match the index)");
  }
  try {
    body_.resize(h.tag_block_size + h.payload_size);
  } catch (const std::bad_alloc&) {
    throw LogError(what + " is corrupt (an impossible size)");
  }
  if (!read_exact_at(file_.get(), body_.data(), body_.size(), at + ff::kRecordHeaderSize, path_)) {
    throw LogError(what + " is truncated");
  }
  if (ff::checksum(body_.data(), body_.size()) != h.body_checksum) {
    throw LogError(what + " is corrupt (checksum mismatch)");
  }
  decompress(body_.data() + h.tag_block_size, h.payload_size, h.raw_size, raw_, what);
  LogFrame frame;
  ff::decode_payload(raw_.data(), raw_.size(), layout_, frame, what, version_);
  if (frame.tick != h.tick) throw LogError(what + " is corrupt (tick mismatch)");
  std::size_t table = h.tag_base + h.new_tag_count;
  frame.tags.assign(tags_.begin(), tags_.begin() + static_cast<std::ptrdiff_t>(table));
  try {
    check_frame(header_, frame.view(), table);
  } catch (const LogError& e) {
    throw LogError(what + " is corrupt (" + e.what() + ")");
  }
  return frame;
}

}  // namespace fleetsim::log
