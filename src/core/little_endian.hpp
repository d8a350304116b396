// Explicit little-endian stores and loads of integers and doubles into byte buffers, for the
// layouts that must not depend on the host (the wire format, taps, the federate API's headers
// and regions). The log formats have their own reader and writer (log/byte_io.hpp), which
// checks bounds and reports a corrupt log.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fleetsim {

/// Stores `v` at `p` (sizeof(T) bytes), least significant byte first.
template <typename T>
void put_le(std::uint8_t* p, T v) {
  using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, double>, std::uint64_t, T>>;
  U u;
  if constexpr (std::is_same_v<T, double>)
    u = std::bit_cast<U>(v);
  else
    u = static_cast<U>(v);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(u >> (8 * i));
}

/// Loads a T stored by put_le at `p`.
template <typename T>
T get_le(const std::uint8_t* p) {
  using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, double>, std::uint64_t, T>>;
  U u = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) u |= static_cast<U>(U{p[i]} << (8 * i));
  if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<double>(u);
  else
    return static_cast<T>(u);
}

/// Appends `v` to `out`, little-endian.
template <typename T>
void append_le(std::vector<std::uint8_t>& out, T v) {
  out.resize(out.size() + sizeof(T));
  put_le(out.data() + out.size() - sizeof(T), v);
}

}  // namespace fleetsim
