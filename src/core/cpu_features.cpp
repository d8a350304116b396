#include "core/cpu_features.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace fleetsim {
namespace {

SimdPath detect() {
  const char* env = std::getenv("FLEETSIM_SIMD");
  if (env && std::strcmp(env, "baseline") == 0) return SimdPath::kBaseline;
  return cpu_has_avx2() ? SimdPath::kAvx2 : SimdPath::kBaseline;
}

std::atomic<SimdPath>& path() {
  static std::atomic<SimdPath> p{detect()};
  return p;
}

}  // namespace

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

SimdPath simd_path() {
  return path().load(std::memory_order_relaxed);
}

SimdPath set_simd_path(SimdPath p) {
  if (p == SimdPath::kAvx2 && !cpu_has_avx2()) p = SimdPath::kBaseline;
  path().store(p, std::memory_order_relaxed);
  return p;
}

}  // namespace fleetsim
