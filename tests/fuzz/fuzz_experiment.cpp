// Experiment files through the same path as `fleetsim check`: parse_experiment with every
// built-in plug-in registered. Relative paths in the input (bitmaps, Lua scripts) resolve
// against examples/, so seeds can name the examples' assets.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"

namespace {

fleetsim::PluginRegistry* registry = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  registry = new fleetsim::PluginRegistry;
  fleetsim::register_builtins(*registry);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // <library> dlopens the file it names and runs its code: by design not a parser input, and
  // a loaded library would change the registry for every later input.
  if (text.find("library") != std::string::npos) return -1;
  fleetsim::Diagnostics diags;
  // A valid file may ask for millions of robots, which take seconds to place by design (a
  // timeout CI once found): the tries are bounded, about a second's work under ASan.
  fleetsim::ExperimentOverrides bounds;
  bounds.max_placement_tries = 100'000;
  auto ex = fleetsim::parse_experiment(text, FLEETSIM_SOURCE_DIR "/examples/fuzz-input.xml",
                                       *registry, bounds, diags);
  fleetsim::fuzz::check_refusal(ex.has_value(), diags);
  return 0;
}
