// Log writers: the engine hands each logged frame to every writer of the experiment.
#pragma once

#include <memory>
#include <string>

#include "log/log_types.hpp"

namespace fleetsim::log {

/// A log writer. Called from the simulation's main thread only, between steps.
/// Guarantee: after any call returns (or throws), and after the process dies between calls,
/// the file on disk is readable up to the last complete frame.
class LogWriter {
 public:
  virtual ~LogWriter() = default;
  /// Writes the header. Called once, first. Throws LogError if its column lists break
  /// check_columns() (a required column missing, a string column, ...).
  virtual void begin(const LogHeader& header) = 0;
  /// Appends one frame, whose columns follow the header's lists. Throws LogError (and writes
  /// nothing) if a column has the wrong size or a tag is outside the tag table.
  virtual void write(const LogFrameView& frame) = 0;
  /// Flushes and completes the file (e.g. the seek index). Idempotent; also called after an
  /// error stopped the run.
  virtual void finish() = 0;
};

enum class LogFormat { kFrames, kDeeco };

/// Options of the binary frame log.
struct FrameLogOptions {
  int zstd_level = 1;  ///< 1 (fast) .. 19 (small)
};

std::unique_ptr<LogWriter> make_frame_log_writer(const std::string& path,
                                                 const FrameLogOptions& options = {});
std::unique_ptr<LogWriter> make_deeco_log_writer(const std::string& path);

}  // namespace fleetsim::log
