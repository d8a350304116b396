// Viewer configuration files (docs/view-format.md): parse_view_config, then the JSON the page
// reads. Textures and scripts resolve against examples/views/, so seeds can name grid.js.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "view/view_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fleetsim::Diagnostics diags;
  auto config = fleetsim::view::parse_view_config(
      text, FLEETSIM_SOURCE_DIR "/examples/views/fuzz-input.xml", diags);
  fleetsim::fuzz::check_refusal(config.has_value(), diags);
  if (config) {
    fleetsim::view::warn_unknown_kinds_and_classes(*config, {"epuck", "footbot"}, {"Base"}, diags);
    // As the server serialises it (bytes that are not UTF-8 are replaced).
    (void)fleetsim::view::to_json(*config).dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
  }
  return 0;
}
