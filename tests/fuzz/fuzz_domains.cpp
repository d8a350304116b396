// The messages of a run split over domains (docs/distributed.md, "Messages"), as process 0 of
// two receives them from process 1: handoffs of robots crossing the cut, kinematics2d's contact
// rounds ('B'), moves, the loop functions' reductions ('R') and changes ('L') with any bytes never crash or hang the process; they apply or stop
// the run with an error naming process 1. Input: as fuzz_swarm's (swarm_scene.hpp).
#include "swarm_scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fleetsim::fuzz::run_process_0(fleetsim::fuzz::Scene::kDomains, data, size);
}
