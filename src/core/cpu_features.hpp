// Which vector instructions the hot kernels use. A kernel compiled for a wider instruction set
// (AVX2) runs the same IEEE operations in the same order as the baseline one (SSE2), so both
// give the same bits; the choice only changes the speed. Tests run both and compare.
#pragma once

namespace fleetsim {

enum class SimdPath { kBaseline, kAvx2 };

/// True when this processor has AVX2.
bool cpu_has_avx2();

/// The path the kernels take: AVX2 when the processor has it, unless the environment says
/// FLEETSIM_SIMD=baseline (or set_simd_path chose).
SimdPath simd_path();

/// Forces a path (tests, benchmarks). kAvx2 on a processor without it falls back to kBaseline;
/// returns the path now in force.
SimdPath set_simd_path(SimdPath path);

}  // namespace fleetsim
