// The unit of exchange between nodes: one timestamped message on one flow.
#pragma once

#include <cstdint>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim::transport {

/// Dense flow identifier, assigned by the federation file in declaration order. It is also the
/// tie-breaker between messages with equal timestamps (see docs/time-management.md).
using FlowId = std::uint32_t;

/// What a message means to the time-management layer.
enum class MessageKind : std::uint8_t {
  kData = 1,  ///< a DSAAM flow message
  kStep = 2,  ///< lockstep: the primary orders step k
  kAck = 3,   ///< lockstep: a secondary has finished step k
};

/// One message on a flow. `timestamp + period` is the exact timestamp of the next message on
/// the same flow (the DSAAM period contract). Owned by value; moved through the transports.
struct Message {
  FlowId flow = 0;
  MessageKind kind = MessageKind::kData;
  SimTime timestamp = 0;  ///< ns
  SimTime period = 0;     ///< ns to the next message on this flow, > 0
  /// Event flows only: a null message (Chandy–Misra), no payload, never delivered to the
  /// application; it only announces the next message's timestamp (docs/time-management.md).
  bool null = false;
  std::vector<std::uint8_t> payload;
  /// The run the message belongs to: the sending port stamps its PortOptions::run_id and a
  /// receiving port refuses any other (a process of an earlier run must not feed this one).
  std::uint64_t run = 0;
};

}  // namespace fleetsim::transport
