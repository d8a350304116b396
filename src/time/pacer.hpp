// Pacing simulated time against the wall clock: as fast as possible, real time, or linear
// time with a speed-up factor. Pacing only ever delays a node; it never changes what the node
// computes, so every mode gives the same traces.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "fleetsim/types.hpp"

namespace fleetsim::time {

/// How simulated time relates to wall-clock time.
enum class TimeMode {
  kAsFastAsPossible,  ///< "afap": no pacing, as the dependencies allow
  kRealTime,          ///< simulated time t is reached at wall time start + t
  kLinear,            ///< simulated time t is reached at wall time start + t / speedup
};

/// Parses "afap", "realtime" or "linear".
bool parse_time_mode(const std::string& text, TimeMode& mode);
const char* to_string(TimeMode mode);

/// Holds a node back until the wall clock reaches a simulated time, and measures how far
/// behind it falls when it cannot keep up. One per node, used by the node's thread.
class Pacer {
 public:
  /// `speedup` > 0, used by kLinear (kRealTime is speedup 1). `log` receives lag warnings.
  Pacer(TimeMode mode, double speedup, std::function<void(const std::string&)> log = {});

  /// Starts the wall clock (the first call of wait_until does it too).
  void start();
  /// Sleeps until wall time start + t / speedup; if that time is already past, records the lag
  /// and, at most once a second, logs "behind by N ms at t".
  void wait_until(SimTime t, const std::string& who);
  /// Largest lag seen, ns of wall-clock time (0 in afap mode).
  std::int64_t max_lag_ns() const { return max_lag_ns_; }
  TimeMode mode() const { return mode_; }

 private:
  TimeMode mode_;
  double speedup_;
  std::function<void(const std::string&)> log_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_warning_;
  std::int64_t max_lag_ns_ = 0;
};

}  // namespace fleetsim::time
