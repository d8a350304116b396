// The exchanges that join the processes of a distributed swarm run (sim/distribution.hpp) on
// the time layer: DSAAM flows (the default) or the lockstep baseline through the first process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/distribution.hpp"
#include "transport/port.hpp"

namespace fleetsim::distributed {

/// How the processes synchronise.
enum class SyncMode { kDsaam, kLockstep };

/// The name of process `p` in layouts, traces and messages: "process-P".
std::string process_name(int p);

/// The wiring of an N-process run. DSAAM: process p has one output flow (flow id p) feeding
/// every other process, and one input per other process. Round g of the exchange is the
/// message at timestamp round_time(g, tick): round 0 at time 0 is the start (every process
/// is there and has the same world); then each tick has two rounds, the handoff in the middle
/// of the tick before it is simulated and the moves at its end, so the timestamps are the
/// simulated times at which the data holds. Lockstep: make_lockstep_layout's wiring
/// with process 0 as the primary.
transport::FederationLayout make_swarm_layout(SyncMode mode, int processes, SimTime tick_ns);

/// The timestamp of round g (0-based) for ticks of `tick_ns`.
SimTime round_time(std::uint64_t g, SimTime tick_ns);

/// Makes the exchange of process `process` on `port` (which must outlive it).
std::unique_ptr<Exchange> make_exchange(SyncMode mode, transport::Port& port, int process,
                                        int processes, SimTime tick_ns);

}  // namespace fleetsim::distributed
