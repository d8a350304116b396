#include "view/live_run.hpp"

#include <cmath>
#include <cstring>
#include <utility>

#include <zstd.h>

namespace fleetsim::view {

LiveRun::LiveRun(Options options) : options_(options) {
  paused_ = options.paused;
  speed_ = options.speed > 0 ? options.speed : 0;
  update_paced();
}

void LiveRun::begin(const log::LogHeader& header) {
  std::lock_guard lock(mutex_);
  tag_tables_.emplace_back();
  if (begun_) {  // a reset: the world's start again, shown at once, and paced from there
    held_any_ = false;
    skipped_ = false;
    anchored_ = false;
    return;
  }
  begun_ = true;
  header_ = header;
  header_.every = 1;
  layout_ = log::frame_format::PayloadLayout::of(header_);
}

void LiveRun::resume(const log::LogHeader&, const log::LogMark&) {
  throw log::LogError("a live view is not continued from a checkpoint");
}

void LiveRun::write(const log::LogFrameView& v) {
  latest_tick_.store(v.tick, std::memory_order_relaxed);
  if (held_any_ && v.tick == last_held_tick_) return;  // (finish()'s frame, held already)
  // At full speed, at most held_fps frames a wall second while a page watches (what it can
  // show), idle_held_fps while none does: a cost bounded by wall time whatever the ticks per
  // second, and small when nobody looks. Paused, stepped or paced: every frame.
  const auto now = std::chrono::steady_clock::now();
  if (held_too_recently(now)) {
    last_view_ = v;  // held if the run pauses or ends right after it (vectors reused)
    skipped_ = true;
    return;
  }
  hold(v, now);
}

bool LiveRun::held_too_recently(std::chrono::steady_clock::time_point now) {
  if (!held_any_ || paced_.load(std::memory_order_relaxed)) return false;
  const bool watched = now - last_poll() < kWatchedFor;
  const double fps = watched ? options_.held_fps : options_.idle_held_fps;
  return fps > 0 && now - last_held_at_ < std::chrono::duration<double>(1.0 / fps);
}

LiveRun::Frame LiveRun::begin_frame(const log::LogFrameView& v,
                                    std::chrono::steady_clock::time_point now) {
  held_any_ = true;
  last_held_tick_ = v.tick;
  last_held_at_ = now;
  Frame f;
  f.tick = v.tick;
  f.time_ns = v.time_ns;
  f.status = std::string(v.status);
  f.tag_count = v.tags.size();
  f.robot_count = v.robot_count;
  f.object_count = v.object_count;
  return f;
}

bool LiveRun::wants_whole_frame() {
  const auto now = std::chrono::steady_clock::now();
  // The frame comes two ticks after it is asked for: about two ticks as long as the last.
  const auto coming = now + 2 * (now - std::exchange(last_called_, now));
  if (now - last_poll() >= kWatchedFor) return false;  // no page: no whole frame
  const std::chrono::duration<double> period(options_.held_fps > 0 ? 1.0 / options_.held_fps : 0.0);
  if ((asked_any_ && now - last_asked_ < period) || (held_any_ && coming - last_held_at_ < period))
    return false;
  asked_any_ = true;
  last_asked_ = now;
  return true;
}

void LiveRun::finish() {
  if (skipped_) hold(last_view_, std::chrono::steady_clock::now());
}

void LiveRun::hold(const log::LogFrameView& v, std::chrono::steady_clock::time_point now) {
  Frame f = begin_frame(v, now);
  std::size_t total = 0;
  for (auto c : v.robot_columns) total += c.size();
  for (auto c : v.object_columns) total += c.size();
  {
    // A dropped frame's buffer, when there is one: memory already touched, no page faults.
    std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      f.data = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  f.data.resize(total);
  std::size_t at = 0;
  auto copy = [&](std::span<const std::uint8_t> c, std::vector<std::size_t>& ends) {
    if (!c.empty()) std::memcpy(f.data.data() + at, c.data(), c.size());
    at += c.size();
    ends.push_back(at);
  };
  for (auto c : v.robot_columns) copy(c, f.robot_ends);
  for (auto c : v.object_columns) copy(c, f.object_ends);
  keep(std::move(f), v.tags);
}

void LiveRun::write_blocks(const log::LogFrameView& head,
                           std::vector<log::frame_format::EncodedBlock> blocks) {
  namespace ff = log::frame_format;
  latest_tick_.store(head.tick, std::memory_order_relaxed);
  const auto now = std::chrono::steady_clock::now();
  if (held_too_recently(now)) return;  // (as write())
  Frame f = begin_frame(head, now);
  skipped_ = false;
  // The frame log's record payload: the head, compressed here, then the blocks as they came.
  std::vector<ff::RobotBlock> table;
  for (const ff::EncodedBlock& b : blocks) table.push_back(b.block);
  std::vector<std::uint8_t> raw(ff::head_size(head, table.size(), layout_));
  ff::encode_head(head, table, layout_, raw.data());
  f.packed = true;
  f.raw_size = raw.size();
  f.data.resize(ZSTD_compressBound(raw.size()));
  const std::size_t n = ZSTD_compress(f.data.data(), f.data.size(), raw.data(), raw.size(), 1);
  if (ZSTD_isError(n))
    throw log::LogError(std::string("compressing a frame: ") + ZSTD_getErrorName(n));
  f.data.resize(n);
  for (const ff::EncodedBlock& b : blocks) {
    f.raw_size += b.raw_size;
    f.data.insert(f.data.end(), b.bytes.begin(), b.bytes.end());
  }
  keep(std::move(f), head.tags);
}

void LiveRun::keep(Frame f, std::span<const std::string> frame_tags) {
  {
    std::lock_guard lock(mutex_);
    if (tag_tables_.empty()) tag_tables_.emplace_back();
    f.tag_table = tag_tables_.size() - 1;
    auto& tags = tag_tables_.back();
    for (std::size_t t = tags.size(); t < frame_tags.size(); ++t) tags.push_back(frame_tags[t]);
    held_bytes_ += f.data.size();
    frames_.push_back(std::move(f));
    // Keep the newest frame whatever its size; drop the oldest beyond the budget.
    while (frames_.size() > 1 && held_bytes_ > options_.memory_bytes) {
      held_bytes_ -= frames_.front().data.size();
      if (spare_.size() < 2) spare_.push_back(std::move(frames_.front().data));
      frames_.pop_front();
      ++first_frame_;
    }
  }
  skipped_ = false;
  changed_.notify_all();
}

std::size_t LiveRun::frame_count() const {
  std::lock_guard lock(mutex_);
  return first_frame_ + frames_.size();
}

log::LogFrame LiveRun::read_frame(std::size_t index) {
  std::unique_lock lock(mutex_);
  if (index < first_frame_)
    throw log::LogError("frame " + std::to_string(index) +
                        " is no longer held by the live view (it keeps the newest frames, from "
                        "frame " +
                        std::to_string(first_frame_) + "; the run's log has them all)");
  if (index >= first_frame_ + frames_.size())
    throw log::LogError("frame " + std::to_string(index) + " is not computed yet");
  const Frame& s = frames_[index - first_frame_];
  if (s.packed) {
    // Decoded as the frame log's reader decodes a record (log::frame_format::decode_payload),
    // outside the lock: the run goes on meanwhile.
    const std::vector<std::uint8_t> packed = s.data;
    const std::size_t raw_size = s.raw_size;
    const auto& table = tag_tables_[s.tag_table];
    std::vector<std::string> tags(table.begin(),
                                  table.begin() + static_cast<std::ptrdiff_t>(s.tag_count));
    lock.unlock();
    const std::string what = "live frame " + std::to_string(index);
    std::vector<std::uint8_t> raw(raw_size);
    const std::size_t n = ZSTD_decompress(raw.data(), raw.size(), packed.data(), packed.size());
    if (ZSTD_isError(n) || n != raw_size) throw log::LogError(what + " does not decompress");
    log::LogFrame f;
    log::frame_format::decode_payload(raw.data(), raw.size(), layout_, f, what);
    f.tags = std::move(tags);
    return f;
  }
  log::LogFrame f;
  f.tick = s.tick;
  f.time_ns = s.time_ns;
  f.status = s.status;
  const auto& tags = tag_tables_[s.tag_table];
  f.tags.assign(tags.begin(), tags.begin() + static_cast<std::ptrdiff_t>(s.tag_count));
  f.robot_count = s.robot_count;
  f.object_count = s.object_count;
  std::size_t at = 0;
  for (std::size_t end : s.robot_ends) {
    f.robot_columns.emplace_back(s.data.begin() + static_cast<std::ptrdiff_t>(at),
                                 s.data.begin() + static_cast<std::ptrdiff_t>(end));
    at = end;
  }
  for (std::size_t end : s.object_ends) {
    f.object_columns.emplace_back(s.data.begin() + static_cast<std::ptrdiff_t>(at),
                                  s.data.begin() + static_cast<std::ptrdiff_t>(end));
    at = end;
  }
  return f;
}

std::string LiveRun::control(const std::string& command, std::optional<double> value) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return "the run has ended (" + end_message_ + ")";
    if (command == "pause") {
      paused_ = true;
      steps_ = 0;
    } else if (command == "play") {
      paused_ = false;
      steps_ = 0;
    } else if (command == "step") {
      paused_ = true;
      ++steps_;
    } else if (command == "speed") {
      if (value && !(std::isfinite(*value) && *value > 0))
        return "speed expects simulated seconds per wall second, a number > 0 (1 = real time), "
               "or \"max\" (as fast as possible)";
      speed_ = value ? *value : 0;
    } else {
      return "unknown command '" + command +
             "' (expected pause, play, step, speed, reset, move, add, remove, leds, command, "
             "release or param)";
    }
    anchored_ = false;  // the pace starts again from here
    ++version_;
    update_paced();
  }
  changed_.notify_all();
  return "";
}

std::string LiveRun::request(const Request& r) {
  std::lock_guard lock(mutex_);
  if (ended_) return "the run has ended (" + end_message_ + ")";
  requests_.push_back(r);
  has_requests_.store(true);
  changed_.notify_all();  // (a paused run takes it at once)
  return "";
}

std::string LiveRun::look(std::uint32_t robot, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (ended_) return "";
  Request r;
  r.kind = Request::Kind::kLook;
  r.robot = robot;
  requests_.push_back(r);
  has_requests_.store(true);
  changed_.notify_all();  // (a paused run answers at once)
  changed_.wait_for(lock, timeout, [&] { return ended_ || looks_.count(robot); });
  auto it = looks_.find(robot);
  if (it == looks_.end()) return "";
  std::string answer = std::move(it->second);
  looks_.erase(it);
  return answer;
}

void LiveRun::answer_look(std::uint32_t robot, std::string json) {
  {
    std::lock_guard lock(mutex_);
    looks_[robot] = std::move(json);
  }
  changed_.notify_all();
}

std::vector<LiveRun::Request> LiveRun::take_requests() {
  if (!has_requests_.load(std::memory_order_relaxed)) return {};
  std::lock_guard lock(mutex_);
  has_requests_.store(false);
  return std::exchange(requests_, {});
}

void LiveRun::report_intervention(const std::string& message, bool landed) {
  {
    std::lock_guard lock(mutex_);
    intervention_ = message;
    if (landed) ++interventions_;
    ++version_;
  }
  changed_.notify_all();
}

void LiveRun::update_paced() {
  paced_.store(paused_ || steps_ > 0 || speed_ > 0);
}

LiveRun::Status LiveRun::status_locked() const {
  Status s;
  s.frames = first_frame_ + frames_.size();
  s.first_frame = first_frame_;
  s.tick = latest_tick_.load(std::memory_order_relaxed);
  s.state = ended_ ? "ended" : paused_ ? "paused" : "running";
  s.speed = speed_;
  s.end_message = end_message_;
  s.version = version_;
  s.intervention = intervention_;
  s.interventions = interventions_;
  return s;
}

LiveRun::Status LiveRun::status() const {
  last_poll_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  std::lock_guard lock(mutex_);
  return status_locked();
}

LiveRun::Status LiveRun::wait(std::uint64_t frames, std::uint64_t version,
                              std::chrono::milliseconds timeout) {
  last_poll_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return ended_ || version_ != version || first_frame_ + frames_.size() > frames;
  });
  return status_locked();
}

std::chrono::steady_clock::time_point LiveRun::last_poll() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_poll_ns_.load()));
}

bool LiveRun::before_step(Tick tick, SimTime tick_period_ns,
                          const std::function<bool()>& keep_going) {
  // A skipped frame's spans are valid until the step begins: held now or never.
  if (!paced_.load(std::memory_order_relaxed)) {
    skipped_ = false;
    return true;
  }
  // Paused or paced: the page shows the tick the run stands at.
  if (skipped_) hold(last_view_, std::chrono::steady_clock::now());
  constexpr auto kSlice = std::chrono::milliseconds(200);
  std::unique_lock lock(mutex_);
  for (;;) {
    if (ended_) return true;
    if (paused_ && steps_ > 0) {  // "step": this one tick, at once
      --steps_;
      update_paced();
      anchored_ = false;
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    auto until = now + kSlice;
    if (!paused_) {
      if (speed_ <= 0) return true;
      // Paced: tick T starts at anchor + (T - anchor tick) periods / speed.
      if (!anchored_) {
        anchored_ = true;
        anchor_tick_ = tick;
        anchor_ = now;
        return true;
      }
      const double wall_ns = static_cast<double>((tick - anchor_tick_) * tick_period_ns) / speed_;
      const auto due = anchor_ + std::chrono::nanoseconds(static_cast<std::int64_t>(wall_ns));
      if (now >= due) return true;
      until = std::min(due, until);
    }
    // Paused, or early: wait for the time, a control, a request or the end, then look again.
    if (!requests_.empty()) return false;
    const std::uint64_t v = version_;
    changed_.wait_until(lock, until, [&] { return version_ != v || ended_ || !requests_.empty(); });
    if (keep_going && !keep_going()) return true;
  }
}

void LiveRun::end(const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    ended_ = true;
    end_message_ = message;
    ++version_;
  }
  changed_.notify_all();
}

}  // namespace fleetsim::view
