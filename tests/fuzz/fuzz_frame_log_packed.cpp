// The frame log reader on well-formed files built from the input's decompressed parts
// (frame_log_packing.hpp): reaches the header body and payload decoders past the checksums.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frame_log_packing.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fleetsim::fuzz::MemoryFile file;
  const auto bytes = fleetsim::fuzz::seal_frame_log({reinterpret_cast<const char*>(data), size});
  const std::string& path = file.write(bytes.data(), bytes.size());
  fleetsim::fuzz::read_every_frame(path);
  return 0;
}
