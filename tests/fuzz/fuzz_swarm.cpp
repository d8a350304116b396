// The distributed swarm's messages (docs/distributed.md, "Messages") as process 0 of a
// two-process run receives them from process 1: handoff, actuation, moves and state rounds with any bytes
// never crash or hang the process; they apply or stop the run with an error naming process 1.
// Input: process 1's messages from round 1 on, each u32 length then bytes (swarm_scene.hpp);
// round 0 (the start) is process 0's own message, so the fuzzer works on the tick's rounds.
#include "swarm_scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fleetsim::fuzz::run_process_0(fleetsim::fuzz::Scene::kSwarm, data, size);
}
