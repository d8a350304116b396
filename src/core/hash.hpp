// A fast 64-bit hash of byte ranges, for state hashes and trace payload hashes.
// Stable across runs, platforms of the same endianness and builds: a documented algorithm
// (64-bit words mixed with SplitMix64's finaliser), never std::hash.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
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
    if (n > 0) std::memcpy(&tail, p, n);  // an empty buffer may be null (memcpy's is UB)
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

/// The 8-byte words of a stream of bytes given in pieces of any size, fed to a Hasher as they
/// complete; the bytes of the last, incomplete word wait in tail().
class WordFeeder {
 public:
  void bytes(Hasher& h, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (n > 0) {
      if (fill_ == 0 && n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h.word(w);
        p += 8;
        n -= 8;
        continue;
      }
      const std::size_t k = std::min<std::size_t>(8 - fill_, n);
      std::memcpy(carry_ + fill_, p, k);
      fill_ += k;
      p += k;
      n -= k;
      if (fill_ == 8) {
        std::uint64_t w;
        std::memcpy(&w, carry_, 8);
        h.word(w);
        fill_ = 0;
      }
    }
  }
  /// The waiting bytes as a little-endian word, and how many there are (0 to 7).
  std::uint64_t tail() const {
    std::uint64_t t = 0;
    std::memcpy(&t, carry_, fill_);
    return t;
  }
  std::size_t fill() const { return fill_; }

 private:
  unsigned char carry_[8] = {};
  std::size_t fill_ = 0;
};

/// A hash of a stream of bytes given in pieces of any size: the value depends on the bytes
/// alone, not on where the pieces were cut (a log's bytes hashed as they are written, then
/// again as they are read back in blocks).
class StreamHasher {
 public:
  void bytes(const void* data, std::size_t n) {
    total_ += n;
    words_.bytes(h_, data, n);
  }
  std::uint64_t value() const {
    Hasher h = h_;
    h.word(words_.tail());
    h.word(total_);
    return h.value();
  }
  std::uint64_t size() const { return total_; }

 private:
  Hasher h_;
  WordFeeder words_;
  std::uint64_t total_ = 0;
};

/// A hash as the logs, summaries and reports print it: 16 lowercase hex digits.
inline std::string hex64(std::uint64_t v) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(v));
  return out;
}

inline std::uint64_t hash_bytes(const void* data, std::size_t n) {
  Hasher h;
  h.bytes(data, n);
  return h.value();
}

}  // namespace fleetsim
