#include "log/log_reader.hpp"

#include <cstring>

#include "log/byte_io.hpp"
#include "log/deeco_log_reader.hpp"
#include "log/frame_log_format.hpp"
#include "log/frame_log_reader.hpp"

namespace fleetsim::log {

std::unique_ptr<LogReader> LogReader::open(const std::string& path) {
  // The frame log starts with its 8-byte magic; anything else must parse as DEECo text.
  char magic[8] = {};
  {
    FileHandle file(open_for_reading(path));
    if (file_size(file.get(), path) == 0) throw LogError("log '" + path + "' is empty");
    if (read_exact_at(file.get(), magic, sizeof magic, 0, path) &&
        std::memcmp(magic, frame_format::kFileMagic, sizeof magic) == 0) {
      return std::make_unique<FrameLogReader>(path);
    }
  }
  // A DEECo log starts with "null" or the bitmap width; report its own errors from there on.
  const bool deeco_start = std::memcmp(magic, "null", 4) == 0 ||
                           (magic[0] >= '0' && magic[0] <= '9');
  if (!deeco_start) {
    throw LogError("'" + path + "' is not a fleetsim log (it starts neither with the frame " +
                   "log's magic 'FLEETLOG' nor with a DEECo log's 'null' or bitmap width)");
  }
  return std::make_unique<DeecoLogReader>(path);
}

}  // namespace fleetsim::log
