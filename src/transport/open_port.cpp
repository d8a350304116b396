#include "transport/open_port.hpp"

#include <utility>

#include "transport/tap.hpp"

namespace fleetsim::transport {

Carrier choose_carrier(const FederationLayout& layout, const std::string& choice) {
  return use_shm(layout, choice) ? Carrier::kShm : Carrier::kZmq;
}

std::unique_ptr<Port> open_port(const FederationLayout& layout, const std::string& name,
                                PortConfig config) {
  switch (config.carrier) {
    case Carrier::kShm:
      return make_shm_port(layout, name, std::move(config.port), std::move(config.shm));
    case Carrier::kZmq:
      return make_zmq_port(layout, name, std::move(config.port), std::move(config.zmq));
    case Carrier::kTap:
      return make_tap_port(layout, name, config.port.run_id, std::move(config.port));
  }
  return nullptr;  // (every carrier is above)
}

}  // namespace fleetsim::transport
