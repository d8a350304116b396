#include "sim/distribution.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "log/byte_io.hpp"

namespace fleetsim {

RoutedReceived Exchange::routed(RoutedMessage mine, int process, std::span<const int> peers,
                                bool more) {
  return decode_routed(all_gather(encode_routed(mine, peers), more), process, peers);
}

std::vector<std::uint8_t> encode_routed(const RoutedMessage& mine, std::span<const int> parts) {
  // u32 length and the common bytes, then u32 k and k x (u32 process, u32 length, bytes)
  // (docs/distributed.md, "Routed rounds").
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u32(static_cast<std::uint32_t>(mine.common.size()));
  w.raw(mine.common.data(), mine.common.size());
  w.u32(static_cast<std::uint32_t>(parts.size()));
  static const std::vector<std::uint8_t> kNone;
  for (int q : parts) {
    const auto& part = q >= 0 && static_cast<std::size_t>(q) < mine.to.size()
                           ? mine.to[static_cast<std::size_t>(q)]
                           : kNone;
    w.u32(static_cast<std::uint32_t>(q));
    w.u32(static_cast<std::uint32_t>(part.size()));
    w.raw(part.data(), part.size());
  }
  return out;
}

RoutedReceived decode_routed(const std::vector<std::vector<std::uint8_t>>& all, int process,
                             std::span<const int> peers) {
  RoutedReceived got;
  got.common.resize(all.size());
  got.from.resize(all.size());
  for (std::size_t p = 0; p < all.size(); ++p) {
    try {
      log::ByteReader r(all[p].data(), all[p].size(), "a routed message");
      const std::uint32_t n = r.u32();
      const std::uint8_t* common = r.take(n);
      got.common[p].assign(common, common + n);
      std::int64_t last = -1;
      bool to_me = false;
      for (std::uint32_t k = r.u32(); k > 0; --k) {
        const std::uint32_t q = r.u32();
        const std::uint32_t len = r.u32();
        const std::uint8_t* part = r.take(len);
        if (q >= all.size() || static_cast<std::int64_t>(q) <= last || q == p)
          throw log::LogError("parts for no process, or out of order");
        last = q;
        if (static_cast<int>(q) != process) continue;
        got.from[p].assign(part, part + len);
        to_me = true;
      }
      if (r.remaining() != 0) throw log::LogError("trailing bytes");
      const bool peer = std::binary_search(peers.begin(), peers.end(), static_cast<int>(p));
      if (static_cast<int>(p) != process && peer != to_me)
        throw log::LogError(peer ? "no part for a peer" : "a part for a process not its peer");
    } catch (const log::LogError& e) {
      throw std::runtime_error("process " + std::to_string(p) + " sent a malformed message (" +
                               e.what() + "); the processes no longer agree on the world");
    }
  }
  return got;
}

}  // namespace fleetsim
