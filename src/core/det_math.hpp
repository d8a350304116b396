// Sine, cosine and a fast atan2 in plain IEEE double arithmetic, for the engine's hot loops.
//
// Why not std::sin / std::cos: glibc picks an implementation when the program starts (with
// or without FMA instructions, depending on the processor), and the two need not round every
// argument the same way, so a run could differ in its last bits between two x86-64 machines.
// They also cost ~20 ns a call, and the swarm step takes two per robot per tick. This one is
// a fixed sequence of additions and multiplications (the build forbids contracting them into
// FMAs: -ffp-contract=off), so it gives the same bits on every machine, thread and run, and
// inlines into the loops that use it.
//
// Method: x = k pi/2 + r with |r| <= pi/4 (Cody-Waite: pi/2 split in two, the first part with
// 33 significant bits so that k times it is exact), then the Taylor series of sin and cos in
// r to degree 17 and 18 (truncation error below 1e-19 on |r| <= pi/4, far below an ulp;
// evaluated by Estrin's scheme), then the quadrant. Accurate to about 1 ulp up to 1e5 radians
// (engine angles stay within a few radians); beyond, x is first reduced by the exact std::remainder
// by 2 pi rounded to a double, which leaves an error of about 1e-17 x.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include "fleetsim/types.hpp"

namespace fleetsim {

/// The constants of det_sincos, shared with its four-wide form (det_sincos_avx2).
namespace det_sincos_detail {
inline constexpr double kTwoOverPi = 0.63661977236758134308;
inline constexpr double kPio2Hi = 1.57079632673412561417e+00;  // first 33 bits of pi/2
inline constexpr double kPio2Lo = 6.07710050650619224932e-11;  // pi/2 - kPio2Hi
// k = x 2/pi rounded to the nearest integer (ties to even) by the 1.5 * 2^52 shift, which is
// arithmetic, not a library call.
inline constexpr double kShift = 6755399441055744.0;
// The sine's and cosine's series, in pairs of terms for Estrin's scheme.
inline constexpr double kS0 = -1.66666666666666666667e-01, kS1 = 8.33333333333333333333e-03;
inline constexpr double kS2 = -1.98412698412698412698e-04, kS3 = 2.75573192239858906526e-06;
inline constexpr double kS4 = -2.50521083854417187751e-08, kS5 = 1.60590438368216145994e-10;
inline constexpr double kS6 = -7.64716373181981647590e-13, kS7 = 2.81145725434552076320e-15;
inline constexpr double kC0 = 4.16666666666666666667e-02, kC1 = -1.38888888888888888889e-03;
inline constexpr double kC2 = 2.48015873015873015873e-05, kC3 = -2.75573192239858906526e-07;
inline constexpr double kC4 = 2.08767569878680989792e-09, kC5 = -1.14707455977297247139e-11;
inline constexpr double kC6 = 4.77947733238738529744e-14, kC7 = -1.56192069685862264622e-16;
}  // namespace det_sincos_detail

/// s = sin(x), c = cos(x), the same bits everywhere (see above).
inline void det_sincos(double x, double& s, double& c) {
  using namespace det_sincos_detail;
  if (!(std::fabs(x) <= 1e5)) {
    x = std::remainder(x, 6.28318530717958647692);
    if (x != x) {  // NaN or an infinity: NaN, as the C library gives
      s = c = std::numeric_limits<double>::quiet_NaN();
      return;
    }
  }
  const double k = (x * kTwoOverPi + kShift) - kShift;
  const double r = (x - k * kPio2Hi) - k * kPio2Lo;
  // The polynomials by Estrin's scheme (pairs of terms, then pairs of pairs): a third of
  // Horner's chain of dependent operations, which is what this function's time is.
  const double z = r * r, z2 = z * z, z4 = z2 * z2;
  const double s01 = kS0 + z * kS1;
  const double s23 = kS2 + z * kS3;
  const double s45 = kS4 + z * kS5;
  const double s67 = kS6 + z * kS7;
  const double sp = (s01 + z2 * s23) + z4 * (s45 + z2 * s67);
  const double sr = r + (r * z) * sp;
  const double c01 = kC0 + z * kC1;
  const double c23 = kC2 + z * kC3;
  const double c45 = kC4 + z * kC5;
  const double c67 = kC6 + z * kC7;
  const double cp = (c01 + z2 * c23) + z4 * (c45 + z2 * c67);
  const double cr = (1.0 - 0.5 * z) + z2 * cp;
  // Quadrant q = k mod 4: (sin, cos) = (sr, cr), (cr, -sr), (-sr, -cr), (-cr, sr).
  const int q = static_cast<int>(static_cast<long long>(k) & 3);
  const double a = (q & 1) ? cr : sr;
  const double b = (q & 1) ? sr : cr;
  s = (q & 2) ? -a : a;
  c = ((q + 1) & 2) ? -b : b;
}

/// det_sincos of x[0..n) into s and c, four at a time: the same bits as det_sincos. AVX2:
/// call it only when the processor has it (simd_path() == SimdPath::kAvx2).
void det_sincos_avx2(const double* x, double* s, double* c, std::size_t n);

/// atan2(y, x) in [-pi, pi] to within 3e-10 radians, for results rounded to float (which has
/// 2e-7 steps near pi). Why not std::atan2: glibc's is correctly rounded and costs ~50 ns;
/// range-and-bearing takes one per message, tens of messages per robot per tick, and its
/// bearings are floats anyway. Plain IEEE arithmetic (no contraction, see CMakeLists), so the
/// same bits on every run and thread. Method: reduce to t = min/max in [0, 1]; above
/// tan(pi/8) use atan(t) = pi/4 + atan((t - 1) / (t + 1)); then atan(t) = t p(t^2) on
/// |t| <= tan(pi/8), p a degree-5 Chebyshev fit (coefficients computed with mpmath's chebyfit
/// of atan(sqrt(s)) / sqrt(s) on [0, tan(pi/8)^2]); finally undo the octant.
inline double bearing_atan2(double y, double x) {
  // Written with selects only, so that the loops below run it on vectors (the compiler turns
  // the selects into masks there); scalar callers get the same IEEE operations.
  const double ax = std::fabs(x), ay = std::fabs(y);
  const double num = ax < ay ? ax : ay, den = ax < ay ? ay : ax;
  constexpr double kTanPi8 = 0.41421356237309504880;
  const bool upper = num > kTanPi8 * den;
  const double n = upper ? num - den : num;
  double d = upper ? num + den : den;
  d = d == 0 ? 1.0 : d;  // atan2(0, 0) = 0
  const double t = n / d;
  const double s = t * t;
  const double p =
      ((((-0.060263052276584590988 * s + 0.10569828806414448072) * s - 0.14239532669648974578) * s +
        0.19998183041083205602) *
           s -
       0.33333306893048512837) *
          s +
      0.99999999937122815559;
  double a = (upper ? kPi / 4 : 0.0) + t * p;
  a = ay > ax ? kPi / 2 - a : a;  // steep: pi/2 - a
  a = x < 0 ? kPi - a : a;        // left half-plane: pi - a
  return y < 0 ? -a : a;
}

}  // namespace fleetsim
