// Whether this test binary runs under AddressSanitizer or ThreadSanitizer: such a build runs
// the random property tests on fewer cases (docs/testing.md, "Sanitizers"). A sanitizer finds a
// race or a bad access on the paths a case takes, and a few cases take them all; the many
// cases that look for a rare geometry run in the plain build, which `make test` runs in full.
#pragma once

namespace fleetsim::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)  // gcc
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)  // clang
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

/// `n` cases in a plain build, about a third of them (at least one) under a sanitizer.
constexpr int property_cases(int n) {
  return kUnderSanitizer ? (n + 2) / 3 : n;
}

}  // namespace fleetsim::testing
