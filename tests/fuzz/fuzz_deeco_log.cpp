// The DEECo playground text log reader (docs/log-format.md, part 2): the header sections,
// then every cycle line.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "log/deeco_log_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fleetsim::fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  try {
    fleetsim::log::DeecoLogReader reader(path, 1.0);
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
