// Log writers: the engine hands each logged frame to every writer of the experiment.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "log/log_types.hpp"

namespace fleetsim::log {

/// Thrown by writers and readers on I/O failures and malformed logs.
class LogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A log writer. Called from the simulation's main thread only, between steps.
/// Guarantee: after any call returns (or throws), and after the process dies between calls,
/// the file on disk is readable up to the last complete frame.
class LogWriter {
 public:
  virtual ~LogWriter() = default;
  /// Writes the header. Called once, first.
  virtual void begin(const LogHeader& header) = 0;
  /// Appends one frame.
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
