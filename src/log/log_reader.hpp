// Reading logs back, in either format, without loading the whole file: the viewer streams a
// 1 GB log through this, and the tests check round trips with it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "log/log_types.hpp"
#include "log/log_writer.hpp"

namespace fleetsim::log {

class LogReader {
 public:
  virtual ~LogReader() = default;
  /// Opens `path`, detecting the format from its first bytes. Throws LogError with a message
  /// a user can act on ("not a fleetsim log", "truncated after frame 12", ...). A log whose
  /// writer died mid-run opens fine and shows its complete frames.
  static std::unique_ptr<LogReader> open(const std::string& path);

  virtual LogFormat format() const = 0;
  virtual const LogHeader& header() const = 0;
  /// Number of complete frames.
  virtual std::size_t frame_count() const = 0;
  /// Reads frame `index` (< frame_count()), any order (seeking). Throws LogError on corruption.
  virtual LogFrame read_frame(std::size_t index) = 0;
};

}  // namespace fleetsim::log
