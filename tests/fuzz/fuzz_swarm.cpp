// The distributed swarm's messages (docs/distributed.md, "Messages") as process 0 of a
// two-process run receives them from process 1: handoff, actuation, moves and state rounds with any bytes
// never crash or hang the process; they apply or stop the run with an error naming process 1.
// Input: process 1's messages from round 1 on, each u32 length then bytes (swarm_scene.hpp);
// round 0 (the start) is process 0's own message, so the fuzzer works on the tick's rounds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "swarm_scene.hpp"

namespace {

using namespace fleetsim;

class FedExchange final : public Exchange {
 public:
  FedExchange(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::vector<std::vector<std::uint8_t>> all_gather(std::vector<std::uint8_t> mine, bool) override {
    std::vector<std::vector<std::uint8_t>> all(2);
    if (round_++ == 0) {
      all[1] = mine;  // the start: the same world
    } else {
      if (end_ - p_ < 4) throw std::runtime_error("process 1 left");
      std::uint32_t n;
      std::memcpy(&n, p_, 4);
      p_ += 4;
      n = static_cast<std::uint32_t>(std::min<std::size_t>(n, static_cast<std::size_t>(end_ - p_)));
      all[1].assign(p_, p_ + n);
      p_ += n;
    }
    all[0] = std::move(mine);
    return all;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  int round_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static PluginRegistry* registry = [] {
    auto* r = new PluginRegistry;
    register_builtins(*r);
    return r;
  }();
  Diagnostics d;
  auto ex = parse_experiment(fleetsim::fuzz::kSwarmScene, "swarm.xml", *registry, {}, d);
  if (!ex) {
    std::fprintf(stderr, "fuzz: the swarm scene does not load:\n%s", d.str().c_str());
    std::abort();
  }
  FedExchange exchange(data, size);
  Distribution dist;
  dist.process = 0;
  dist.processes = 2;
  dist.engine_process = {0, 1};
  dist.kind_process = ex->kind_affinity;
  dist.robot_process = ex->robot_affinity;
  dist.exchange = &exchange;
  dist.part_bytes = 256;  // rounds in parts too
  try {
    Simulation sim(std::move(*ex), *registry, dist);
    sim.start();
    while (!sim.done()) sim.step();
    sim.gather_state();
    sim.finish();
  } catch (const RunError& e) {
    const std::string what = e.what();
    if (what.find("process 1") == std::string::npos && what.find("tick") == std::string::npos) {
      std::fprintf(stderr, "fuzz: an error that names neither the process nor the tick: %s\n",
                   what.c_str());
      std::abort();
    }
  } catch (const std::runtime_error&) {  // the input ran out: "process 1 left"
  }
  return 0;
}
