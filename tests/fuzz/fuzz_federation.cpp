// Federation files (docs/federation-format.md): parse_federation, then the wiring a launcher
// derives from an accepted federation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "federation/federation_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  fleetsim::Diagnostics diags;
  auto fed = fleetsim::federation::parse_federation(
      text, FLEETSIM_SOURCE_DIR "/examples/federations/fuzz-input.xml", diags);
  fleetsim::fuzz::check_refusal(fed.has_value(), diags);
  if (fed) {
    auto layout = fed->layout();
    for (std::size_t n = 0; n < fed->nodes.size(); ++n) {
      for (std::size_t i = 0; i < fed->nodes[n].inputs.size(); ++i) fed->flow_into(n, i);
      for (std::size_t o = 0; o < fed->nodes[n].outputs.size(); ++o) fed->flow_from(n, o);
    }
  }
  return 0;
}
