// The versioned wire format of a Message (docs/wire-format.md). Decoding never trusts its
// input: a short, oversized, wrongly versioned or malformed buffer is refused with a reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "transport/message.hpp"

namespace fleetsim::transport {

/// "FSTM" read as a little-endian 32-bit word.
inline constexpr std::uint32_t kWireMagic = 0x4d545346u;
/// Bumped on any incompatible change of the layout below.
inline constexpr std::uint16_t kWireVersion = 2;
/// magic u32, version u16, kind u8, flags u8, flow u32, payload length u32, timestamp i64,
/// period i64, run u64; all little-endian; then the payload bytes.
inline constexpr std::size_t kWireHeaderBytes = 40;
/// Bit 0 of the flags byte: a null message of an event flow (data kind, empty payload).
inline constexpr std::uint8_t kWireFlagNull = 0x01;
/// Larger payloads are refused (a corrupted length must not make a node allocate gigabytes).
inline constexpr std::uint32_t kWireMaxPayload = 64u << 20;

/// Appends the encoding of `m` to `out` (cleared first), stamped with run `run`.
void encode(const Message& m, std::vector<std::uint8_t>& out, std::uint64_t run);
/// The same, stamped with `m.run`.
inline void encode(const Message& m, std::vector<std::uint8_t>& out) {
  encode(m, out, m.run);
}
/// Convenience: the encoding of `m`.
std::vector<std::uint8_t> encode(const Message& m);

/// Why a buffer was refused.
struct WireError {
  std::string reason;
  /// The version a well-formed header announced when it is not kWireVersion, else 0: a peer
  /// of another release, which no later message of it will fix.
  std::uint16_t other_version = 0;
};

/// Decodes one message from `n` bytes; either a Message or the reason it was refused.
std::variant<Message, WireError> decode(const void* data, std::size_t n);

}  // namespace fleetsim::transport
