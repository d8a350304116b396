// The frame log reader on well-formed files built from the input's decompressed parts
// (frame_log_packing.hpp): reaches the header body and payload decoders past the checksums.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frame_log_packing.hpp"
#include "fuzz_support.hpp"
#include "log/frame_log_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fleetsim::fuzz::MemoryFile file;
  const auto bytes = fleetsim::fuzz::seal_frame_log({reinterpret_cast<const char*>(data), size});
  const std::string& path = file.write(bytes.data(), bytes.size());
  try {
    fleetsim::log::FrameLogReader reader(path);
    for (std::size_t i = 0; i < reader.frame_count(); ++i) {
      try {
        reader.read_frame(i);
      } catch (const fleetsim::log::LogError&) {
      }
    }
  } catch (const fleetsim::log::LogError&) {
  }
  return 0;
}
