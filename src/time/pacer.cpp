#include "time/pacer.hpp"

#include <cmath>
#include <iostream>
#include <thread>

#include <fmt/format.h>

namespace fleetsim::time {

bool parse_time_mode(const std::string& text, TimeMode& mode) {
  if (text == "afap")
    mode = TimeMode::kAsFastAsPossible;
  else if (text == "realtime")
    mode = TimeMode::kRealTime;
  else if (text == "linear")
    mode = TimeMode::kLinear;
  else
    return false;
  return true;
}

const char* to_string(TimeMode mode) {
  switch (mode) {
    case TimeMode::kAsFastAsPossible:
      return "afap";
    case TimeMode::kRealTime:
      return "realtime";
    case TimeMode::kLinear:
      return "linear";
  }
  return "?";
}

Pacer::Pacer(TimeMode mode, double speedup, std::function<void(const std::string&)> log)
    : mode_(mode), speedup_(mode == TimeMode::kRealTime ? 1.0 : speedup), log_(std::move(log)) {
  if (!(speedup_ > 0)) speedup_ = 1.0;
}

void Pacer::start() {
  if (started_) return;
  started_ = true;
  start_ = std::chrono::steady_clock::now();
  last_warning_ = start_ - std::chrono::seconds(2);
}

void Pacer::wait_until(SimTime t, const std::string& who) {
  if (mode_ == TimeMode::kAsFastAsPossible) return;
  start();
  auto offset = std::chrono::nanoseconds(
      static_cast<std::int64_t>(std::llround(static_cast<double>(t) / speedup_)));
  auto target = start_ + offset;
  auto now = std::chrono::steady_clock::now();
  if (now < target) {
    std::this_thread::sleep_until(target);
    return;
  }
  auto lag = std::chrono::duration_cast<std::chrono::nanoseconds>(now - target).count();
  max_lag_ns_ = std::max<std::int64_t>(max_lag_ns_, lag);
  // A lag under a millisecond is scheduling noise, not a node that cannot keep up.
  if (lag > 1'000'000 && now - last_warning_ >= std::chrono::seconds(1)) {
    last_warning_ = now;
    std::string line = fmt::format("{}: behind {} time by {:.1f} ms at simulated time {} ns", who,
                                   to_string(mode_), static_cast<double>(lag) / 1e6, t);
    if (log_)
      log_(line);
    else
      std::cerr << line << std::endl;
  }
}

}  // namespace fleetsim::time
