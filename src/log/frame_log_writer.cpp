#include "log/frame_log_writer.hpp"

#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>

#include "log/frame_log_format.hpp"

namespace fleetsim::log {

namespace ff = frame_format;

namespace {

constexpr int kWriterNice = 10;  ///< the writer thread's nice value (see run_writer_thread)

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

// Compresses `n` bytes into `out` starting at `at`; returns the compressed size. `out` grows
// to hold the worst case and never shrinks: the writer reuses one buffer for every record,
// and a vector that shrank then grew again would clear the whole bound each record.
std::size_t compress_into(ZSTD_CCtx* ctx, const std::uint8_t* data, std::size_t n,
                          std::vector<std::uint8_t>& out, std::size_t at) {
  if (out.size() < at + ZSTD_compressBound(n)) out.resize(at + ZSTD_compressBound(n));
  std::size_t k = ZSTD_compress2(ctx, out.data() + at, out.size() - at, data, n);
  if (ZSTD_isError(k))
    throw LogError(std::string("zstd compression failed: ") + ZSTD_getErrorName(k));
  return k;
}

std::unique_ptr<ZSTD_CCtx, CCtxDeleter> make_cctx(int level) {
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> ctx(ZSTD_createCCtx());
  if (!ctx) throw LogError("zstd: out of memory");
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel,
                         std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel()));
  // Sizes are in the record header already; keep zstd frames minimal and identical.
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, 0);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_contentSizeFlag, 1);
  return ctx;
}

/// This thread's context at `level`, kept from call to call: for the head of write_blocks()
/// and the blocks of encode_block(), a few hundred a frame on a process of a split run, where a
/// context made per call would allocate its tables each time. (A context used again gives the
/// bytes a new one gives.)
ZSTD_CCtx* thread_cctx(int level) {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> ctx;
  thread_local int ctx_level = 0;
  if (!ctx || ctx_level != level) {
    ctx = make_cctx(level);
    ctx_level = level;
  }
  return ctx.get();
}

}  // namespace

FrameLogWriter::FrameLogWriter(std::string path, FrameLogOptions options, LogOpen open)
    : path_(std::move(path)),
      options_(std::move(options)),
      file_(open == LogOpen::kContinue ? open_for_continuing(path_) : open_for_writing(path_)) {}

FrameLogWriter::~FrameLogWriter() {
  try {
    finish();
  } catch (...) {
    // A destructor must not throw; the error was already reported or the run is unwinding.
  }
  for (ZSTD_CCtx* c : cctx_pool_) ZSTD_freeCCtx(c);
}

void FrameLogWriter::compress_parts(const std::vector<std::uint8_t>& raw, Job& job, std::size_t b,
                                    std::size_t e, ZSTD_CCtx* ctx, const std::uint32_t* order,
                                    double* ms) {
  for (std::size_t q = b; q < e; ++q) {
    const std::size_t k = order ? order[q] : q;
    const std::size_t at = job.starts[k];
    const std::size_t n = job.starts[k + 1] - at;
    const auto start = Clock::now();
    job.part_sizes[k] = compress_into(ctx, raw.data() + at, n, job.parts[k], 0);
    if (ms) ms[k] = ms_since(start);
  }
}

void FrameLogWriter::set_columns(const LogHeader& header) {
  if (begun_) throw LogError("log '" + path_ + "': begin() called twice");
  if (finished_) throw LogError("log '" + path_ + "': begin() after finish()");
  try {
    check_columns(header);
  } catch (const LogError& e) {
    throw LogError("log '" + path_ + "': " + e.what());
  }
  header_columns_.robot_columns = header.robot_columns;
  header_columns_.object_columns = header.object_columns;
  layout_ = ff::PayloadLayout::of(header);
}

void FrameLogWriter::begin(const LogHeader& header) {
  set_columns(header);
  begun_ = true;

  // File header: magic, version, flags, sizes, checksum, then the compressed body.
  std::vector<std::uint8_t> body = ff::encode_header_body(header);
  std::vector<std::uint8_t> out(ff::kFileHeaderSize);
  auto ctx = make_cctx(options_.zstd_level);
  std::size_t stored = compress_into(ctx.get(), body.data(), body.size(), out, ff::kFileHeaderSize);
  out.resize(ff::kFileHeaderSize + stored);
  std::vector<std::uint8_t> fixed;
  ByteWriter w(fixed);
  w.raw(ff::kFileMagic, 8);
  w.u32(ff::kVersion);
  w.u32(0);
  w.u64(body.size());
  w.u64(stored);
  std::memcpy(out.data(), fixed.data(), fixed.size());
  std::uint64_t sum = ff::checksum(out.data(), 32, out.data() + ff::kFileHeaderSize, stored);
  std::memcpy(out.data() + 32, &sum, 8);
  write_all(file_.get(), out.data(), out.size(), path_);
  position_ = out.size();
  written_.bytes(out.data(), out.size());
  hashed_to_ = position_;

  thread_ = std::thread([this] { run_writer_thread(); });
}

void FrameLogWriter::resume(const LogHeader& header, const LogMark& mark) {
  set_columns(header);
  // The writer's state: the record offsets and the tags written so far (the index's content).
  try {
    ByteReader r(mark.state.data(), mark.state.size(), "the checkpoint's frame log state");
    offsets_.resize(r.count(r.u64(), 8));
    for (auto& o : offsets_) {
      o = r.u64();
      if (o >= mark.bytes) throw LogError("the checkpoint's frame log state is corrupt");
    }
    tags_.resize(r.count(r.u64(), 4));
    for (auto& t : tags_) t = r.str();
    if (r.remaining() != 0) throw LogError("the checkpoint's frame log state is corrupt");
  } catch (const LogError& e) {
    throw LogError("log '" + path_ + "': " + e.what());
  }
  written_ = cut_to_mark(file_.get(), mark, path_);
  position_ = mark.bytes;
  hashed_to_ = mark.bytes;
  begun_ = true;
  thread_ = std::thread([this] { run_writer_thread(); });
}

LogMark FrameLogWriter::mark() {
  if (!begun_ || finished_) throw LogError("log '" + path_ + "': mark() outside a run");
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return in_flight_ == 0 || !error_.empty(); });
  }
  raise_pending_error();
  // The writer thread is idle (the wait above synchronises with its last write). The bytes
  // written since the last mark are hashed now, read back from the file (the page cache):
  // a run that takes no checkpoint never hashes its log, and the hash is the same.
  if (!hash_file_range(file_.get(), hashed_to_, position_, written_, path_))
    throw LogError("log '" + path_ + "' ended while it was being read back");
  hashed_to_ = position_;
  LogMark m;
  m.bytes = position_;
  m.hash = written_.value();
  ByteWriter w(m.state);
  w.u64(offsets_.size());
  for (std::uint64_t o : offsets_) w.u64(o);
  w.u64(tags_.size());
  for (const std::string& t : tags_) w.str(t);
  return m;
}

FrameLogWriter::Job FrameLogWriter::start_job(const LogFrameView& f, bool robots) {
  if (!begun_) throw LogError("log '" + path_ + "': write() before begin()");
  if (finished_) throw LogError("log '" + path_ + "': write() after finish()");
  raise_pending_error();

  // The contract's invariants, checked before anything reaches the file. An empty tag table
  // means the table {""}.
  if (f.robot_count > 0xffffffffu || f.object_count > 0xffffffffu ||
      f.status.size() > 0xffffffffu) {
    throw LogError("log '" + path_ + "': frame too large");
  }
  const std::size_t table = std::max<std::size_t>(f.tags.size(), 1);
  if (table < tags_.size()) {
    throw LogError("log '" + path_ + "': the tag table shrank at tick " + std::to_string(f.tick) +
                   " (it may only grow)");
  }
  try {
    if (robots) {
      check_frame(header_columns_, f, table);
    } else {  // (the objects only: the robots come as blocks)
      LogFrameView objects = f;
      objects.robot_count = 0;
      objects.robot_columns.assign(header_columns_.robot_columns.size(), {});
      check_frame(header_columns_, objects, table);
    }
  } catch (const LogError& e) {
    throw LogError("log '" + path_ + "': " + e.what());
  }

  // Take a recycled job once there is room in the queue.
  const auto waited = Clock::now();
  Job job;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.size() < kQueueCapacity || !error_.empty(); });
    if (!free_jobs_.empty()) {
      job = std::move(free_jobs_.back());
      free_jobs_.pop_back();
    }
  }
  raise_pending_error();
  stats_.wait_ms += ms_since(waited);
  return job;
}

void FrameLogWriter::queue_job(const LogFrameView& f, Job job) {
  job.tick = f.tick;
  job.tag_base = static_cast<std::uint32_t>(tags_.size());
  job.tag_block.clear();
  job.new_tags = 0;
  ByteWriter tw(job.tag_block);
  auto add_tag = [&](const std::string& t) {
    tw.str(t);
    tags_.push_back(t);
    ++job.new_tags;
  };
  if (f.tags.empty()) {
    if (tags_.empty()) add_tag("");
  } else {
    for (std::size_t i = tags_.size(); i < f.tags.size(); ++i) add_tag(f.tags[i]);
  }
  ++stats_.frames;
  std::lock_guard lock(mutex_);
  queue_.push_back(std::move(job));
  ++in_flight_;
  changed_.notify_all();
}

void FrameLogWriter::write(const LogFrameView& f) {
  Job job = start_job(f, /*robots=*/true);
  const auto copy_start = Clock::now();

  // Everything the caller will overwrite, transposed for zstd by the run's workers, who then
  // compress it if there are workers (see the class comment).
  const bool workers = static_cast<bool>(options_.parallel_for);
  std::vector<std::uint8_t>& raw = workers ? raw_ : job.payload;
  try {
    ff::shuffle_frame(f, layout_, raw, job.starts, options_.parallel_for);
  } catch (const LogError& e) {
    throw LogError("log '" + path_ + "': " + e.what());
  }
  const std::size_t parts = job.starts.size() - 1;
  job.parts.resize(parts);
  job.part_sizes.assign(parts, 0);
  job.compressed = workers;
  job.raw_size = raw.size();
  if (workers) {
    if (part_order_.size() != parts) {
      part_order_.resize(parts);
      std::iota(part_order_.begin(), part_order_.end(), 0u);
      part_ms_.assign(parts, 0.0);
    } else {
      std::stable_sort(part_order_.begin(), part_order_.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return part_ms_[a] > part_ms_[b]; });
    }
    options_.parallel_for(parts, 1, [&](std::size_t b, std::size_t e) {
      // A context per worker at a time, from the pool.
      std::unique_ptr<ZSTD_CCtx, CCtxDeleter> ctx;
      {
        std::lock_guard lock(cctx_mutex_);
        if (!cctx_pool_.empty()) {
          ctx.reset(cctx_pool_.back());
          cctx_pool_.pop_back();
        }
      }
      if (!ctx) ctx = make_cctx(options_.zstd_level);
      compress_parts(raw, job, b, e, ctx.get(), part_order_.data(), part_ms_.data());
      std::lock_guard lock(cctx_mutex_);
      cctx_pool_.push_back(ctx.release());
    });
  }
  stats_.copy_ms += ms_since(copy_start);
  queue_job(f, std::move(job));
}

void FrameLogWriter::write_blocks(const LogFrameView& f, std::vector<ff::EncodedBlock> blocks) {
  Job job = start_job(f, /*robots=*/false);
  const auto copy_start = Clock::now();
  std::vector<ff::RobotBlock> table;
  std::uint64_t robots = 0;
  for (const ff::EncodedBlock& b : blocks) {
    if (!table.empty() && b.block.index <= table.back().index)
      throw LogError("log '" + path_ + "': robot blocks out of order at tick " +
                     std::to_string(f.tick));
    if (b.block.rows == 0 || b.raw_size != b.block.rows * layout_.robot_row_bytes)
      throw LogError("log '" + path_ + "': a robot block of the wrong size at tick " +
                     std::to_string(f.tick));
    table.push_back(b.block);
    robots += b.block.rows;
  }
  if (robots != f.robot_count)
    throw LogError("log '" + path_ + "': the robot blocks hold " + std::to_string(robots) +
                   " robots at tick " + std::to_string(f.tick) + ", not " +
                   std::to_string(f.robot_count));
  // The head, compressed here in its parts; then each block's bytes as they came.
  std::vector<std::uint8_t> head(ff::head_size(f, table.size(), layout_));
  ff::encode_head(f, table, layout_, head.data());
  job.starts.clear();
  ff::cut_parts(0, head.size(), job.starts);
  job.starts.push_back(head.size());
  const std::size_t head_parts = job.starts.size() - 1;
  job.parts.resize(head_parts + blocks.size());
  job.part_sizes.assign(head_parts + blocks.size(), 0);
  compress_parts(head, job, 0, head_parts, thread_cctx(options_.zstd_level));
  job.raw_size = head.size();
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    job.raw_size += blocks[k].raw_size;
    job.part_sizes[head_parts + k] = blocks[k].bytes.size();
    job.parts[head_parts + k] = std::move(blocks[k].bytes);
  }
  job.compressed = true;
  stats_.copy_ms += ms_since(copy_start);
  queue_job(f, std::move(job));
}

ff::EncodedBlock FrameLogWriter::encode_block(const LogFrameView& f,
                                              const ff::PayloadLayout& layout, std::uint32_t index,
                                              std::size_t first, std::size_t rows, int level) {
  ff::EncodedBlock out;
  out.block = {index, static_cast<std::uint32_t>(rows)};
  std::vector<std::uint8_t> raw(rows * layout.robot_row_bytes);
  ff::encode_block(f, layout, first, rows, raw.data());
  out.raw_size = raw.size();
  ZSTD_CCtx* ctx = thread_cctx(level);
  std::vector<std::size_t> starts;
  ff::cut_parts(0, raw.size(), starts);
  starts.push_back(raw.size());
  std::vector<std::uint8_t> part;
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const std::size_t n =
        compress_into(ctx, raw.data() + starts[k], starts[k + 1] - starts[k], part, 0);
    out.bytes.insert(out.bytes.end(), part.begin(), part.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return out;
}

void FrameLogWriter::run_writer_thread() {
  // This thread gives way to the simulation: at nice 10 it gets about a tenth of a core that
  // a worker also wants. On a machine the workers fill, a thread of equal priority takes a
  // worker's core for whole time slices while the other workers wait for it at the end of the
  // phase; at a lower priority it runs mostly when a worker waits anyway. It never starves:
  // the simulation waits for it when its queue is full. (Failure to lower it changes nothing.)
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWriterNice);
  auto ctx = make_cctx(options_.zstd_level);
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    bool failed;
    {
      std::lock_guard lock(mutex_);
      failed = !error_.empty();
    }
    if (!failed) {
      const auto encode_start = Clock::now();
      try {
        if (!job.compressed) compress_parts(job.payload, job, 0, job.parts.size(), ctx.get());
        // Record = header, tag block, the payload's parts; written with one writev().
        ff::RecordHeader h;
        h.new_tag_count = job.new_tags;
        h.tag_block_size = static_cast<std::uint32_t>(job.tag_block.size());
        h.tag_base = job.tag_base;
        h.raw_size = job.raw_size;
        h.tick = job.tick;
        ff::LanesHash body;
        body.update(job.tag_block.data(), job.tag_block.size());
        std::vector<iovec> pieces(2 + job.parts.size());
        for (std::size_t k = 0; k < job.parts.size(); ++k) {
          body.update(job.parts[k].data(), job.part_sizes[k]);
          h.payload_size += job.part_sizes[k];
          pieces[2 + k] = {job.parts[k].data(), job.part_sizes[k]};
        }
        h.body_checksum = body.value();
        std::uint8_t record[ff::kRecordHeaderSize];
        ff::encode_record_header(h, record);
        pieces[0] = {record, sizeof record};
        pieces[1] = {job.tag_block.data(), job.tag_block.size()};
        write_all(file_.get(), std::move(pieces), path_);
        const std::size_t size = h.record_size();
        offsets_.push_back(position_);
        position_ += size;
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        error_ = e.what();
      }
      encode_ms_ += ms_since(encode_start);
    }
    std::lock_guard lock(mutex_);
    free_jobs_.push_back(std::move(job));
    --in_flight_;
    changed_.notify_all();
  }
}

void FrameLogWriter::raise_pending_error() {
  std::lock_guard lock(mutex_);
  if (!error_.empty() && !error_reported_) {
    error_reported_ = true;
    throw LogError(error_);
  }
  if (!error_.empty()) throw LogError("log '" + path_ + "' stopped after an earlier error");
}

void FrameLogWriter::stop_writer_thread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

void FrameLogWriter::finish() {
  if (finished_) return;
  finished_ = true;
  stop_writer_thread();
  std::string error;
  bool failed_before;
  {
    std::lock_guard lock(mutex_);
    failed_before = !error_.empty();
    if (failed_before && !error_reported_) error = error_;
    error_reported_ = true;
  }
  // Index and footer, only when every frame reached the file (else readers scan).
  if (begun_ && !failed_before && file_.is_open()) {
    try {
      std::vector<std::uint8_t> index;
      ByteWriter w(index);
      w.raw(ff::kIndexMagic, 4);
      w.u32(0);
      w.u64(offsets_.size());
      w.u64(tags_.size());
      for (std::uint64_t o : offsets_) w.u64(o);
      for (const std::string& t : tags_) w.str(t);
      std::uint64_t index_offset = position_;
      std::uint64_t index_size = index.size();
      std::uint64_t sum = ff::checksum(index.data(), index.size());
      w.u64(index_offset);
      w.u64(index_size);
      w.u64(sum);
      w.raw(ff::kFooterMagic, 8);
      write_all(file_.get(), index.data(), index.size(), path_);
      position_ += index.size();
    } catch (const LogError& e) {
      error = e.what();
    }
  }
  stats_.encode_ms = encode_ms_;
  stats_.bytes = position_;
  if (!file_.close() && error.empty()) error = "cannot close log '" + path_ + "'";
  if (!error.empty()) throw LogError(error);
}

std::unique_ptr<LogWriter> make_frame_log_writer(const std::string& path,
                                                 const FrameLogOptions& options, LogOpen open) {
  return std::make_unique<FrameLogWriter>(path, options, open);
}

}  // namespace fleetsim::log
