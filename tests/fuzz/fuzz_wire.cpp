// The wire decoder (docs/wire-format.md), every message kind: decode never crashes, refuses
// with a reason, and what it accepts encodes back to exactly the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <variant>
#include <vector>

#include "transport/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim::transport;
  auto decoded = decode(data, size);
  if (auto* refused = std::get_if<WireError>(&decoded)) {
    if (refused->reason.empty()) {
      std::fprintf(stderr, "fuzz: message refused without a reason\n");
      std::abort();
    }
    return 0;
  }
  const std::vector<std::uint8_t> again = encode(std::get<Message>(decoded));
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) {
    std::fprintf(stderr, "fuzz: decode then encode changed the message\n");
    std::abort();
  }
  return 0;
}
