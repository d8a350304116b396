#include "transport/wire.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/little_endian.hpp"

namespace fleetsim::transport {

void encode(const Message& m, std::vector<std::uint8_t>& out, std::uint64_t run) {
  out.resize(kWireHeaderBytes + m.payload.size());
  std::uint8_t* p = out.data();
  put_le<std::uint32_t>(p + 0, kWireMagic);
  put_le<std::uint16_t>(p + 4, kWireVersion);
  p[6] = static_cast<std::uint8_t>(m.kind);
  p[7] = m.null ? kWireFlagNull : 0;
  put_le<std::uint32_t>(p + 8, m.flow);
  put_le<std::uint32_t>(p + 12, static_cast<std::uint32_t>(m.payload.size()));
  put_le<std::int64_t>(p + 16, m.timestamp);
  put_le<std::int64_t>(p + 24, m.period);
  put_le<std::uint64_t>(p + 32, run);
  if (!m.payload.empty()) std::memcpy(p + kWireHeaderBytes, m.payload.data(), m.payload.size());
}

std::vector<std::uint8_t> encode(const Message& m) {
  std::vector<std::uint8_t> out;
  encode(m, out);
  return out;
}

std::variant<Message, WireError> decode(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (n < kWireHeaderBytes)
    return WireError{
        fmt::format("truncated header ({} bytes, expected at least {})", n, kWireHeaderBytes)};
  auto magic = get_le<std::uint32_t>(p);
  if (magic != kWireMagic) return WireError{fmt::format("bad magic 0x{:08x}", magic)};
  auto version = get_le<std::uint16_t>(p + 4);
  if (version != kWireVersion)
    return WireError{
        fmt::format("wire version {} (this node speaks version {})", version, kWireVersion),
        version};
  std::uint8_t kind = p[6];
  if (kind < 1 || kind > 3) return WireError{fmt::format("unknown message kind {}", kind)};
  if ((p[7] & ~kWireFlagNull) != 0)
    return WireError{fmt::format("unknown flags 0x{:02x}", p[7])};
  auto length = get_le<std::uint32_t>(p + 12);
  const bool null = (p[7] & kWireFlagNull) != 0;
  if (null && (kind != static_cast<std::uint8_t>(MessageKind::kData) || length != 0))
    return WireError{fmt::format(
        "a null message (flag 0x01) of kind {} with {} payload bytes (expected a data message "
        "without payload)",
        kind, length)};
  if (length > kWireMaxPayload)
    return WireError{
        fmt::format("payload of {} bytes exceeds the limit of {}", length, kWireMaxPayload)};
  if (n != kWireHeaderBytes + length)
    return WireError{
        fmt::format("length mismatch: header announces {} payload bytes, message "
                    "carries {}",
                    length, n - kWireHeaderBytes)};
  Message m;
  m.kind = static_cast<MessageKind>(kind);
  m.flow = get_le<std::uint32_t>(p + 8);
  m.timestamp = get_le<std::int64_t>(p + 16);
  m.period = get_le<std::int64_t>(p + 24);
  m.run = get_le<std::uint64_t>(p + 32);
  m.null = null;
  if (m.timestamp < 0) return WireError{fmt::format("negative timestamp {}", m.timestamp)};
  if (m.period <= 0) return WireError{fmt::format("non-positive period {}", m.period)};
  m.payload.assign(p + kWireHeaderBytes, p + n);
  return m;
}

}  // namespace fleetsim::transport
