// Federation files (docs/federation-format.md): parse_federation, then the wiring a launcher
// derives from an accepted federation, and its datastreams on payloads cut from the input
// (the right size for each class and one byte short: refused, never a crash).
#include <cstddef>
#include <cstdint>
#include <string>

#include "federation/datastream.hpp"
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
      fleetsim::federation::Datastreams streams(*fed, n);
      for (std::size_t i = 0; i < fed->nodes[n].inputs.size(); ++i) {
        const auto& cls = fed->flow_into(n, i).data_class;
        const std::size_t bytes = cls ? cls->size : 8;
        for (std::size_t k = 0; k < 4; ++k) {
          fleetsim::transport::Message m;
          m.timestamp = static_cast<fleetsim::SimTime>(k) * 1000;
          m.period = 1000;
          m.payload.assign(bytes - (k == 3 && bytes > 0 ? 1 : 0), 0);
          for (std::size_t b = 0; b < m.payload.size() && b < size; ++b)
            m.payload[b] = data[(b + k) % size] & (k == 2 ? 1 : 0xff);
          try {
            streams.apply(i, m);
          } catch (const fleetsim::FederateError&) {
          }
        }
      }
    }
  }
  return 0;
}
