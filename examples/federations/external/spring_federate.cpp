// An external simulator joining a fleetsim federation through the federate API
// (include/fleetsim/federate.hpp, docs/federate-api.md): a damped mass on a spring, pushed by
// the force another node sends, publishing its position and velocity at every tick of its
// output flow. It replaces the built-in `dynamics` node of heterogeneous_rates.xml, computes
// the same numbers, and so gives the same traces (tests/integration/federate).
//
// Run it the way `fleetsim launch` does (from the repository, after `make build`):
//   build/fleetsim launch examples/federations/external/spring.xml --transport zmq
// `launch` starts this program as: spring_federate FEDERATION --name dynamics [options].
#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include "fleetsim/federate.hpp"

namespace {

// Payloads: little arrays of doubles, as the built-in nodes send them.
std::vector<std::uint8_t> pack(double a, double b) {
  std::vector<std::uint8_t> out(16);
  std::memcpy(out.data(), &a, 8);
  std::memcpy(out.data() + 8, &b, 8);
  return out;
}

double first_double(const std::vector<std::uint8_t>& p) {
  double v = 0;
  if (p.size() >= 8) std::memcpy(&v, p.data(), 8);
  return v;
}

/// The model: semi-implicit Euler over the exact time since the last step.
struct Spring {
  static constexpr double kStiffness = 4.0;  ///< 1/s^2
  static constexpr double kDamping = 0.5;    ///< 1/s
  double x = 0, v = 0, force = 0;
  fleetsim::SimTime t = 0;

  void advance_to(fleetsim::SimTime to) {
    if (to <= t) return;
    const double dt = static_cast<double>(to - t) * 1e-9;
    const double a = force - kStiffness * x - kDamping * v;
    v += a * dt;
    x += v * dt;
    t = to;
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    auto fed = fleetsim::Federate::from_command_line(argc, argv);
    Spring spring;
    // Every force message, as it arrives in time-stamp order (HLA's reflect callback).
    fed.set_message_handler([&](const fleetsim::Delivered& m) {
      if (m.input == "force") spring.force = first_double(m.payload);
    });
    // Each state message, computed when due: every message stamped earlier has arrived.
    fed.set_emitter("state", [&](fleetsim::SimTime t) {
      spring.advance_to(t);
      return pack(spring.x, spring.v);
    });
    // Time-stepped main loop (HLA's time advance request and grant), here in steps of
    // 100 ms; any step gives the same messages, only the grants are coarser or finer.
    const fleetsim::SimTime step = 100'000'000;
    for (fleetsim::SimTime t = 0;; t += step) {
      const fleetsim::Grant g = fed.time_advance_request(t);
      if (g.time % 1'000'000'000 == 0)
        std::cerr << "spring: t = " << g.time / 1'000'000'000 << " s, x = " << spring.x << " m\n";
      if (g.done) break;
    }
    fed.resign();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "spring_federate: error: " << e.what() << "\n";
    return 1;
  }
}
