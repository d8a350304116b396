// The DEECo playground text log reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "log/byte_io.hpp"
#include "log/log_reader.hpp"

namespace fleetsim::log {

/// Reads a DEECo text log in either grammar (deeco::Grammar: the playground program's, or the
/// architecture document's that fleetsim wrote before; told apart by the `---` line after the
/// bitmap section). open() streams the file once, parsing the header sections and
/// recording where each cycle line starts (the file is never held in memory); read_frame()
/// then reads one line. Coordinates come back in world metres with the field centred on the
/// origin; the file does not say how long a field unit is, so the caller does
/// (`metres_per_unit`: 1 by default, the bitmap's resolution, or the 10^-k of an arena written
/// with decimals, docs/log-format.md 2.1). What the format cannot carry (ids, names, LEDs,
/// time) is made up as docs/log-format.md describes. Frames have the required columns only.
/// One thread at a time.
class DeecoLogReader final : public LogReader {
 public:
  /// Opens `path`; throws LogError naming the first line that does not fit the grammar, or if
  /// `metres_per_unit` is not a positive number.
  explicit DeecoLogReader(std::string path, double metres_per_unit = 1);

  LogFormat format() const override { return LogFormat::kDeeco; }
  const LogHeader& header() const override { return header_; }
  std::size_t frame_count() const override {
    return line_starts_.empty() ? 0 : line_starts_.size() - 1;
  }
  LogFrame read_frame(std::size_t index) override;

 private:
  void parse_header_line(const std::string& line, std::size_t line_number);
  std::size_t bitmap_pixels() const {
    return static_cast<std::size_t>(header_.bitmap_width) *
           static_cast<std::size_t>(header_.bitmap_height);
  }

  std::string path_;
  FileHandle file_;
  LogHeader header_;
  std::size_t header_lines_ = 0;  ///< lines before the first cycle
  /// Offset of each cycle line, plus one past the newline of the last complete one.
  std::vector<std::uint64_t> line_starts_;
  double metres_per_unit_ = 1;
  std::vector<std::uint16_t> robot_kind_;    ///< kind index of each robot
  std::vector<std::uint16_t> object_class_;  ///< class index of each object
  std::vector<double> field_sizes_;          ///< robot sizes (field units) of each kind
  std::string line_;                         ///< reused buffer

  // Header parsing state.
  int section_line_ = 0;
  bool has_bitmap_ = false;
  bool in_objects_ = false;
  bool playground_ = false;  ///< the playground's grammar (a `---` after the bitmap section)
  int separators_ = 0;       ///< its `---` lines so far (3 end the header)

 public:
  /// The grammar the file is in (known once it is open).
  bool playground_grammar() const { return playground_; }
};

}  // namespace fleetsim::log
