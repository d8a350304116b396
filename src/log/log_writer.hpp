// Log writers: the engine hands each logged frame to every writer of the experiment.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "log/frame_log_format.hpp"
#include "log/log_types.hpp"

namespace fleetsim::log {

/// Where a log stands after the frames written so far: what a run resumed from a checkpoint
/// needs to go on writing the same file (docs/checkpoints.md).
struct LogMark {
  std::uint64_t bytes = 0;          ///< the file's length
  std::uint64_t hash = 0;           ///< StreamHasher of those bytes
  std::vector<std::uint8_t> state;  ///< the writer's own (the frame log: its index so far)
};

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
  /// Appends one frame whose robots come as blocks encoded elsewhere (a run split over
  /// processes: FrameLogWriter::encode_block where each block's robots are): `head` gives the
  /// tick, time, status, tags, robot count (every block's robots) and the objects; `blocks`
  /// are in increasing index. A writer that takes whole frames only throws LogError.
  virtual void write_blocks(const LogFrameView& head,
                            std::vector<frame_format::EncodedBlock> blocks) {
    (void)blocks;
    throw LogError("tick " + std::to_string(head.tick) +
                   ": this log writer takes whole frames only, not robot blocks");
  }
  /// Flushes and completes the file (e.g. the seek index). Idempotent; also called after an
  /// error stopped the run.
  virtual void finish() = 0;
  /// Waits until every frame written so far is in the file; returns where the file stands.
  /// Throws LogError after an earlier write error.
  virtual LogMark mark() = 0;
  /// Instead of begin(), for a run resumed from a checkpoint: goes on writing the file, cut
  /// back to `mark`. Throws LogError when the file's first `mark.bytes` bytes are not those
  /// the mark describes (the log was changed, replaced or cut since the checkpoint).
  virtual void resume(const LogHeader& header, const LogMark& mark) = 0;
};

enum class LogFormat { kFrames, kDeeco };

/// Options of the binary frame log.
struct FrameLogOptions {
  /// zstd's level, from its fastest (ZSTD_minCLevel(), negative) to its smallest (19, 22 with
  /// ultra). -20 by default: on the byte planes of 100,000 moving e-pucks it compresses a frame
  /// 1.85:1 in 0.80 ms of CPU, where level 1 takes 1.52 ms for 1.92:1 (docs/benchmarks.md); a
  /// simulation that logs every tick on a machine it fills wants the CPU more than the 4 %.
  int zstd_level = -20;
  /// Shares the work of write() among the run's workers: the columns' byte-plane transpose,
  /// then the compression of the payload's parts. Empty: the calling thread transposes and
  /// the writer's background thread compresses (the bytes are the same).
  ParallelFor parallel_for;
};

/// How a writer opens its file: created (or truncated), or an existing log a resumed run goes
/// on with (then resume() is called instead of begin()).
enum class LogOpen { kCreate, kContinue };

std::unique_ptr<LogWriter> make_frame_log_writer(const std::string& path,
                                                 const FrameLogOptions& options = {},
                                                 LogOpen open = LogOpen::kCreate);
std::unique_ptr<LogWriter> make_deeco_log_writer(const std::string& path,
                                                 LogOpen open = LogOpen::kCreate);

}  // namespace fleetsim::log
