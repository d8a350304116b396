// A fast 64-bit hash of byte ranges, for state hashes and trace payload hashes.
// Stable across runs, platforms of the same endianness and builds: a documented algorithm
// (64-bit words mixed with SplitMix64's finaliser), never std::hash.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "fleetsim/random.hpp"

namespace fleetsim {

class Hasher {
 public:
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (n >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      word(w);
      p += 8;
      n -= 8;
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    word(tail ^ (static_cast<std::uint64_t>(n) << 56));
  }
  void word(std::uint64_t w) { h_ = mix64(h_ ^ (w + 0x9e3779b97f4a7c15ULL + (h_ << 6))); }
  void real(double d) {
    std::uint64_t w;
    std::memcpy(&w, &d, 8);
    word(w);
  }
  void text(std::string_view s) { bytes(s.data(), s.size()); }
  std::uint64_t value() const { return mix64(h_); }

 private:
  std::uint64_t h_ = 0x6a09e667f3bcc908ULL;
};

inline std::uint64_t hash_bytes(const void* data, std::size_t n) {
  Hasher h;
  h.bytes(data, n);
  return h.value();
}

}  // namespace fleetsim
