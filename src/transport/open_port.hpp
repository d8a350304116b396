// The one place a node's port is made: which carrier links the nodes of a layout (shared
// memory, ZeroMQ, or the taps of an optional node), with that carrier's settings. Every command
// that runs nodes (a federation's nodes, a federate, the processes of a swarm run and of a
// network run, the benchmarks) opens its port here, so a new carrier is a change in this folder
// and one more value of Carrier.
#pragma once

#include <memory>
#include <string>

#include "transport/port.hpp"
#include "transport/shm_transport.hpp"
#include "transport/zmq_transport.hpp"

namespace fleetsim::transport {

enum class Carrier {
  kShm,  ///< shared-memory rings, every node on this machine (shm_transport.hpp)
  kZmq,  ///< ZeroMQ links over the layout's endpoints, ipc:// or tcp:// (zmq_transport.hpp)
  kTap,  ///< an optional node: reads and writes its flows' taps, connects to no one (tap.hpp)
};

struct PortConfig {
  Carrier carrier = Carrier::kShm;
  PortOptions port;  ///< what every carrier takes: run id, jitter, waits, logging
  ShmOptions shm;    ///< kShm only
  ZmqOptions zmq;    ///< kZmq only
};

/// The carrier of `choice` ("shm", "zmq" or "auto": use_shm) for the nodes of `layout`.
Carrier choose_carrier(const FederationLayout& layout, const std::string& choice);

/// Opens node `name`'s port of `layout`. Throws std::runtime_error as the carrier's own
/// make_*_port does (a segment held by a live node, a bind that fails, a missing key).
std::unique_ptr<Port> open_port(const FederationLayout& layout, const std::string& name,
                                PortConfig config);

}  // namespace fleetsim::transport
