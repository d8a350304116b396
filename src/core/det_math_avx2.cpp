#include "core/det_math.hpp"

#include <immintrin.h>

namespace fleetsim {

namespace {

// Four-lane double arithmetic, spelled out so the formulas below read like det_sincos's.
[[gnu::target("avx2")]] inline __m256d vmul(__m256d a, __m256d b) {
  return _mm256_mul_pd(a, b);
}
[[gnu::target("avx2")]] inline __m256d vadd(__m256d a, __m256d b) {
  return _mm256_add_pd(a, b);
}
[[gnu::target("avx2")]] inline __m256d vsub(__m256d a, __m256d b) {
  return _mm256_sub_pd(a, b);
}
[[gnu::target("avx2")]] inline __m256d vnum(double a) {
  return _mm256_set1_pd(a);
}
[[gnu::target("avx2")]] inline __m256d lanes64(__m128i bits) {  // 32-bit masks -> 64-bit
  return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(bits));
}

// det_sincos on four arguments: the same operations in the same order (no FMA), so the same
// bits. Arguments beyond 1e5 radians (or NaN) take the scalar function.
[[gnu::target("avx2")]] void det_sincos4(const double* x, double* s, double* c) {
  using namespace det_sincos_detail;
  const __m256d v = _mm256_loadu_pd(x);
  const __m256d abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
  // Not (|x| <= 1e5): NaN compares false, as in the scalar test.
  if (_mm256_movemask_pd(_mm256_cmp_pd(abs, _mm256_set1_pd(1e5), _CMP_LE_OQ)) != 0xf) {
    for (int k = 0; k < 4; ++k) det_sincos(x[k], s[k], c[k]);
    return;
  }
  const __m256d shift = vnum(kShift);
  const __m256d k = vsub(vadd(vmul(v, vnum(kTwoOverPi)), shift), shift);
  const __m256d r = vsub(vsub(v, vmul(k, vnum(kPio2Hi))), vmul(k, vnum(kPio2Lo)));
  const __m256d z = vmul(r, r), z2 = vmul(z, z), z4 = vmul(z2, z2);
  const __m256d s01 = vadd(vnum(kS0), vmul(z, vnum(kS1)));
  const __m256d s23 = vadd(vnum(kS2), vmul(z, vnum(kS3)));
  const __m256d s45 = vadd(vnum(kS4), vmul(z, vnum(kS5)));
  const __m256d s67 = vadd(vnum(kS6), vmul(z, vnum(kS7)));
  const __m256d sp = vadd(vadd(s01, vmul(z2, s23)), vmul(z4, vadd(s45, vmul(z2, s67))));
  const __m256d sr = vadd(r, vmul(vmul(r, z), sp));
  const __m256d c01 = vadd(vnum(kC0), vmul(z, vnum(kC1)));
  const __m256d c23 = vadd(vnum(kC2), vmul(z, vnum(kC3)));
  const __m256d c45 = vadd(vnum(kC4), vmul(z, vnum(kC5)));
  const __m256d c67 = vadd(vnum(kC6), vmul(z, vnum(kC7)));
  const __m256d cp = vadd(vadd(c01, vmul(z2, c23)), vmul(z4, vadd(c45, vmul(z2, c67))));
  const __m256d cr = vadd(vsub(vnum(1.0), vmul(vnum(0.5), z)), vmul(z2, cp));
  // The quadrant q = k mod 4 (k is an integer of at most ~6.4e4 here: exact in 32 bits).
  const __m128i q = _mm256_cvtpd_epi32(k);
  const __m128i zero = _mm_setzero_si128();
  const __m256d odd = lanes64(_mm_cmpgt_epi32(_mm_and_si128(q, _mm_set1_epi32(1)), zero));
  const __m256d neg_s = lanes64(_mm_cmpgt_epi32(_mm_and_si128(q, _mm_set1_epi32(2)), zero));
  const __m256d neg_c = lanes64(
      _mm_cmpgt_epi32(_mm_and_si128(_mm_add_epi32(q, _mm_set1_epi32(1)), _mm_set1_epi32(2)), zero));
  const __m256d a = _mm256_blendv_pd(sr, cr, odd);
  const __m256d b = _mm256_blendv_pd(cr, sr, odd);
  const __m256d sign = vnum(-0.0);
  _mm256_storeu_pd(s, _mm256_xor_pd(a, _mm256_and_pd(neg_s, sign)));
  _mm256_storeu_pd(c, _mm256_xor_pd(b, _mm256_and_pd(neg_c, sign)));
}

}  // namespace

[[gnu::target("avx2")]] void det_sincos_avx2(const double* x, double* s, double* c, std::size_t n) {
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) det_sincos4(x + k, s + k, c + k);
  for (; k < n; ++k) det_sincos(x[k], s[k], c[k]);
}

}  // namespace fleetsim
