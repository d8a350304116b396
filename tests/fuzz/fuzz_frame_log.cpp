// The binary frame log reader (docs/log-format.md, part 1) on the input as a whole file:
// header, index (or the scan of a log whose writer died), then every frame.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "log/frame_log_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fleetsim::fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  try {
    fleetsim::log::FrameLogReader reader(path);
    for (std::size_t i = 0; i < reader.frame_count(); ++i) {
      try {
        reader.read_frame(i);
      } catch (const fleetsim::log::LogError&) {
        // One corrupt frame; the viewer goes on with the others.
      }
    }
  } catch (const fleetsim::log::LogError&) {
  }
  return 0;
}
