// The binary frame log reader (format in frame_log_format.hpp and docs/log-format.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "log/byte_io.hpp"
#include "log/frame_log_format.hpp"
#include "log/log_reader.hpp"

namespace fleetsim::log {

/// Reads a binary frame log without loading it: open() reads the header and the index at
/// the end (or, for a log whose writer died, scans the fixed-size record headers and skips
/// the payloads); read_frame() then reads and decompresses one record. Reads format versions
/// 1 (fixed columns), 2 (columns listed in the header) and 3 (kinds with shapes and rays).
/// One thread at a time.
class FrameLogReader final : public LogReader {
 public:
  /// Opens `path`, which must start with the frame log magic. Throws LogError.
  explicit FrameLogReader(std::string path);

  LogFormat format() const override { return LogFormat::kFrames; }
  const LogHeader& header() const override { return header_; }
  std::size_t frame_count() const override { return offsets_.size(); }
  LogFrame read_frame(std::size_t index) override;

  /// True if the log had a valid index (its writer called finish()); false if the frames
  /// were found by scanning.
  bool has_index() const { return has_index_; }
  /// Byte offset of frame `index`'s record in the file (for tools and tests).
  std::uint64_t frame_offset(std::size_t index) const { return offsets_.at(index); }
  /// The file's format version (1 to 3; see frame_log_format.hpp).
  std::uint32_t version() const { return version_; }

 private:
  bool read_index(std::uint64_t size);
  void scan_records(std::uint64_t size);

  std::string path_;
  FileHandle file_;
  LogHeader header_;
  std::uint32_t version_ = 0;
  frame_format::PayloadLayout layout_;  ///< from header_'s column lists
  std::uint64_t frames_begin_ = 0;      ///< offset of the first record
  std::vector<std::uint64_t> offsets_;  ///< record offsets, one per complete frame
  std::vector<std::string> tags_;       ///< the whole tag table
  bool has_index_ = false;
  std::vector<std::uint8_t> body_, raw_;  ///< reused buffers
};

}  // namespace fleetsim::log
