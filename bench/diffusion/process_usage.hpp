// What the benchmark programs report about their own process (bench/diffusion, bench/footbot).
#pragma once

#include <sys/resource.h>

namespace fleetsim::bench {

/// User + system CPU seconds of this process so far (all threads).
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/// Peak resident set size of this process, bytes.
inline double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

}  // namespace fleetsim::bench
