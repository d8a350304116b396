// Checkpoints (docs/checkpoints.md): the file reader, and a run resumed from a saved state.
// The input's first byte says which:
//   0: the rest is a checkpoint file (decode_checkpoint: header, checksum, zstd, identity);
//   1: the rest is a saved state (Checkpoint::state, whose file checksum the fuzzer could not
//      forge), resumed in the swarm scene on one process and stepped for a few ticks.
// A bad state must be refused with RunError; nothing may crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "plugins/builtins.hpp"
#include "sim/checkpoint.hpp"
#include "sim/simulation.hpp"
#include "swarm_scene.hpp"

using namespace fleetsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  if (data[0] == 0) {
    try {
      decode_checkpoint(rest, "fuzz.ckpt");
    } catch (const CheckpointError&) {
    }
    return 0;
  }
  static PluginRegistry registry = [] {
    PluginRegistry r;
    register_builtins(r);
    return r;
  }();
  Diagnostics d;
  auto ex = parse_experiment(fuzz::kSwarmScene, "swarm.xml", registry, {}, d);
  if (!ex) std::abort();
  const std::vector<std::uint8_t> state(rest.begin(), rest.end());
  try {
    Simulation sim(std::move(*ex), registry, {}, &state);
    sim.start();
    for (int t = 0; t < 3 && !sim.done(); ++t) sim.step();
    sim.finish();
  } catch (const RunError&) {
  }
  return 0;
}
