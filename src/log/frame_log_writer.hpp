// The binary frame log writer (format in frame_log_format.hpp and docs/log-format.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "log/byte_io.hpp"
#include "log/frame_log_format.hpp"
#include "log/log_writer.hpp"

struct ZSTD_CCtx_s;  // zstd.h's ZSTD_CCtx

namespace fleetsim::log {

/// Writes the binary frame log.
///
/// Threads: begin(), write() and finish() are called from one thread (the simulation's main
/// thread). write() transposes the frame's columns into a recycled buffer and queues it; one
/// background thread checksums and write()s each record, in queue order. The payload is
/// compressed in parts (its head and each robot block cut every frame_format::kPayloadPartBytes
/// from their start), each a zstd frame of its own: by
/// the run's workers inside write() when FrameLogOptions::parallel_for is given (work shared
/// evenly, where a thread of its own would take whole time slices from one worker while the
/// others wait for it), else by the background thread. Either way the bytes are the same, and
/// do not depend on timing. The queue holds at most kQueueCapacity frames: a caller faster
/// than the disk waits instead of growing memory.
///
/// Errors: an I/O error on the background thread is kept and thrown (as LogError) by the next
/// write() or by finish(); frames already on disk stay readable.
class FrameLogWriter final : public LogWriter {
 public:
  /// Frames queued but not yet encoded, at most.
  static constexpr std::size_t kQueueCapacity = 2;

  /// Creates (truncates) `path`, or with LogOpen::kContinue opens it to resume(); throws
  /// LogError if it cannot.
  FrameLogWriter(std::string path, FrameLogOptions options, LogOpen open = LogOpen::kCreate);
  ~FrameLogWriter() override;
  FrameLogWriter(const FrameLogWriter&) = delete;
  FrameLogWriter& operator=(const FrameLogWriter&) = delete;

  /// Where the time goes, for benchmarks and progress displays. Read after finish().
  struct Stats {
    std::uint64_t frames = 0;
    /// Caller thread (and the workers): transposing columns in write(), and compressing
    /// them when there are workers.
    double copy_ms = 0;
    double wait_ms = 0;       ///< caller thread: waiting for room in the queue
    double encode_ms = 0;     ///< writer thread: compress (without workers), checksum, write()
    std::uint64_t bytes = 0;  ///< file size
  };
  /// Totals since begin(); complete once finish() has returned.
  Stats stats() const { return stats_; }

  void begin(const LogHeader& header) override;
  void write(const LogFrameView& frame) override;
  /// Writes a frame whose robot blocks were encoded elsewhere (encode_block()): `head` gives
  /// the tick, time, status, tags, objects and the robot count (its robot columns are not
  /// read); `blocks` every block with a robot, in increasing index order. The record is the
  /// bytes write() would make of the same frame.
  void write_blocks(const LogFrameView& head,
                    std::vector<frame_format::EncodedBlock> blocks) override;
  /// Encodes and compresses rows [first, first + rows) of `frame`'s robot columns (laid out as
  /// `layout` says), the robots of block `index` (all of them, in id order), as write() does
  /// at compression `level` (FrameLogOptions::zstd_level).
  static frame_format::EncodedBlock encode_block(const LogFrameView& frame,
                                                 const frame_format::PayloadLayout& layout,
                                                 std::uint32_t index, std::size_t first,
                                                 std::size_t rows, int level);
  void finish() override;
  LogMark mark() override;
  void resume(const LogHeader& header, const LogMark& mark) override;

 private:
  /// One frame on its way to the disk. Owned by the queue, then by the writer thread, then
  /// recycled through free_jobs_ so its buffers keep their capacity.
  struct Job {
    std::vector<std::uint8_t> payload;  ///< shuffle_frame() output, when not compressed yet
    std::vector<std::size_t> starts;    ///< where each part starts in it, then its size
    /// The payload's compressed parts (buffers kept at their largest) and their sizes.
    std::vector<std::vector<std::uint8_t>> parts;
    std::vector<std::size_t> part_sizes;
    bool compressed = false;              ///< parts are filled (else the writer thread fills them)
    std::size_t raw_size = 0;             ///< bytes of the payload before compression
    std::vector<std::uint8_t> tag_block;  ///< the new tags, u32 length + bytes each
    std::uint32_t new_tags = 0;
    std::uint32_t tag_base = 0;
    std::int64_t tick = 0;
  };

  /// What begin() and resume() share: the checked column lists and the payload layout.
  void set_columns(const LogHeader& header);
  /// What write() and write_blocks() share: the checks before anything reaches the file (with
  /// `robots` false, of the frame's objects and tags only), then a recycled job.
  Job start_job(const LogFrameView& frame, bool robots);
  /// The frame's new tags into `job`, then the job onto the queue.
  void queue_job(const LogFrameView& frame, Job job);
  void run_writer_thread();
  /// Compresses parts order[b], ..., order[e - 1] of `raw` (parts b to e - 1 when `order` is
  /// null) into `job` with `ctx`; with `ms`, records each part's time in ms[part].
  static void compress_parts(const std::vector<std::uint8_t>& raw, Job& job, std::size_t b,
                             std::size_t e, ZSTD_CCtx_s* ctx, const std::uint32_t* order = nullptr,
                             double* ms = nullptr);
  void raise_pending_error();
  void stop_writer_thread();

  std::string path_;
  FrameLogOptions options_;
  FileHandle file_;

  // Set by begin(), then read-only (the writer thread reads layout_).
  LogHeader header_columns_;  ///< only the column lists, for check_frame()
  frame_format::PayloadLayout layout_;

  // Caller thread only.
  bool begun_ = false;
  bool finished_ = false;
  std::vector<std::string> tags_;  ///< every tag written so far, for the index
  Stats stats_;                    ///< caller's fields; encode_ms merged in at finish()

  // Shared, guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  std::vector<Job> free_jobs_;
  bool stopping_ = false;
  std::string error_;
  bool error_reported_ = false;
  std::size_t in_flight_ = 0;  ///< frames queued or being written

  // Compression contexts not in use, guarded by cctx_mutex_ (the workers take one each).
  std::mutex cctx_mutex_;
  std::vector<ZSTD_CCtx_s*> cctx_pool_;  ///< freed by the destructor
  std::vector<std::uint8_t> raw_;        ///< caller thread: the payload the workers compress
  /// Caller thread: the order in which the workers take the parts, costliest first by their
  /// times in the frame before (part_ms_): a frame's parts differ up to 20-fold in cost (a
  /// plane of noise is stored as it is, a plane of slowly changing bytes is searched), and a
  /// costly part taken last keeps the other workers waiting. The order changes no byte.
  std::vector<std::uint32_t> part_order_;
  std::vector<double> part_ms_;

  // Writer thread only (read by the caller after join()).
  std::uint64_t position_ = 0;
  StreamHasher written_;         ///< the file's first hashed_to_ bytes (for checkpoints' marks)
  std::uint64_t hashed_to_ = 0;  ///< the rest is hashed when mark() is called
  double encode_ms_ = 0;
  std::vector<std::uint64_t> offsets_;
  std::thread thread_;
};

}  // namespace fleetsim::log
