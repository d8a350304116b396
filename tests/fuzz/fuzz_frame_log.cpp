// The binary frame log reader (docs/log-format.md, part 1) on the input as a whole file:
// header, index (or the scan of a log whose writer died), then every frame.
#include <cstddef>
#include <cstdint>

#include "frame_log_packing.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fleetsim::fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  fleetsim::fuzz::read_every_frame(path);
  return 0;
}
