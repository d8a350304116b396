// The centralised baseline (Gazebo's distributed stepping): a primary publishes step k, every
// secondary runs one step and acknowledges, the primary waits for every ack before step k+1.
// It runs on the same transports as DSAAM flows: the step and ack channels are flows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/port.hpp"

namespace fleetsim::time {

/// Wiring of a lockstep federation: node 0 is the primary. The primary's output j is the step
/// channel to secondary j+1 and its input j the ack channel from it; a secondary has one input
/// (steps) and one output (acks). Endpoints are left empty for the caller.
transport::FederationLayout make_lockstep_layout(const std::vector<std::string>& nodes,
                                                 SimTime until);

/// One step order, as a secondary receives it.
struct StepOrder {
  std::uint64_t iteration = 0;
  SimTime time = 0;       ///< ns, simulated time at the start of the step
  SimTime step_size = 0;  ///< ns
  bool paused = false;
  std::vector<std::uint8_t> payload;  ///< e.g. migrating performers' state
};

/// The primary. Single-threaded.
class LockstepPrimary {
 public:
  LockstepPrimary(transport::Port& port, SimTime step_size);
  /// Publishes the current step to every secondary (payloads[j] to secondary j; an empty
  /// vector sends empty payloads), waits for every ack, advances. Returns the acks' payloads.
  const std::vector<std::vector<std::uint8_t>>& step(
      const std::vector<std::vector<std::uint8_t>>& payloads, bool paused = false);
  /// step() in two halves, so the primary can work between them: publish the current step...
  void publish(const std::vector<std::vector<std::uint8_t>>& payloads, bool paused = false);
  /// ...then wait for every ack of it and advance. Returns the acks' payloads.
  const std::vector<std::vector<std::uint8_t>>& collect();
  std::uint64_t iteration() const { return iteration_; }
  SimTime time() const { return time_; }
  std::size_t secondaries() const { return port_.layout().outputs.size(); }

 private:
  transport::Port& port_;
  SimTime step_size_;
  std::uint64_t iteration_ = 0;
  SimTime time_ = 0;
  std::vector<std::vector<std::uint8_t>> acks_;
};

/// A secondary. Single-threaded.
class LockstepSecondary {
 public:
  explicit LockstepSecondary(transport::Port& port);
  /// Blocks until the primary's next step order.
  StepOrder next_step();
  /// Acknowledges the step last received, with this secondary's state.
  void ack(std::vector<std::uint8_t> payload);

 private:
  transport::Port& port_;
  StepOrder last_;
};

}  // namespace fleetsim::time
