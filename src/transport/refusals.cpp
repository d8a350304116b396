#include "transport/refusals.hpp"

#include <algorithm>

#include <zmq.h>

namespace fleetsim::transport {

int HandshakeWatch::events() {
  return ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
         ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
}

std::optional<HandshakeWatch::Refusal> HandshakeWatch::take(std::uint16_t event,
                                                            std::int32_t value) {
  auto refuse = [&](std::string reason) {
    Refusal r;
    r.reason = std::move(reason);
    r.log = refused_.count();
    r.count = refused_.total();
    return r;
  };
  switch (event) {
    case ZMQ_EVENT_ACCEPTED:
      handshaking_.push_back(value);
      return std::nullopt;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:  // (the ZAP handler logs it, with the address)
      if (!handshaking_.empty()) handshaking_.pop_front();
      return std::nullopt;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      if (!handshaking_.empty()) handshaking_.pop_front();
      return refuse("it did not authenticate (no CURVE key, or another protocol)");
    case ZMQ_EVENT_DISCONNECTED: {
      auto it = std::find(handshaking_.begin(), handshaking_.end(), value);
      if (it == handshaking_.end()) return std::nullopt;
      handshaking_.erase(it);
      return refuse("it did not speak ZeroMQ (garbage, or another protocol such as HTTP)");
    }
    default:
      return std::nullopt;
  }
}

}  // namespace fleetsim::transport
