// Built-in simulators for federation nodes: small but order-sensitive, so that consuming
// messages in another order (or losing one) changes their results and their traces.
//
//  mixer       folds every consumed message (flow, timestamp, payload) into a 64-bit state;
//              emits that state. Any topology; used by the paper's example and random tests.
//              On an event flow it sends a null one time in three and picks irregular
//              timestamps; it folds what it observes on observation inputs at each emission.
//  dynamics    a damped mass on a spring pushed by the latest command; emits (position,
//              velocity). Integrates over the exact time since its previous emission.
//  controller  PD control of the dynamics' position towards a square-wave target, blending
//              the camera's measurement into its estimate; emits a force.
//  camera      emits the latest position plus counter-based noise (seed, node, timestamp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "federation/federation_file.hpp"
#include "time/flow_node.hpp"

namespace fleetsim::federation {

/// Where a swarm node (<node experiment="..." processes="N">) runs its processes 1..N-1
/// (process 0 is the node itself).
struct SwarmNodeRuntime {
  /// Threads of this process, joined by in-process queues (`launch --transport inproc`);
  /// else child processes joined by shared-memory rings.
  bool threads = false;
  std::uint32_t jitter_us = 0;  ///< every message between its processes waits 0..N µs
  /// The executable started as `PROGRAM node FED --name NODE --swarm-process P ...` for each
  /// child process; empty: the running one (/proc/self/exe).
  std::string program;
};

/// The simulator of built-in node `node` (not for kProgram nodes).
std::unique_ptr<time::NodeBehaviour> make_behaviour(const Federation& fed, std::size_t node,
                                                    const SwarmNodeRuntime& runtime = {});

/// Makes the simulator of a swarm node (<node experiment="...">). The swarm engine is a
/// higher layer than federations: the program that has it (the command line) installs it
/// (distributed/swarm_node.hpp); without it a swarm node cannot run. Throws on a bad experiment.
using SwarmNodeFactory = std::function<std::unique_ptr<time::NodeBehaviour>(
    const Federation&, std::size_t, const SwarmNodeRuntime&)>;
SwarmNodeFactory& swarm_factory();
/// Runs process `process` (>= 1) of swarm node `node` to its end, as a child process started
/// by the node (SwarmNodeRuntime): `run_id` names the shared memory of the node's processes.
/// Returns an exit status. Installed with the factory.
using SwarmProcessMain = std::function<int(const Federation&, std::size_t node, int process,
                                           std::uint64_t run_id, std::uint32_t jitter_us)>;
SwarmProcessMain& swarm_process_main();
/// Checks a swarm node's declaration against its experiment before a federation starts
/// (launch, node, check), reporting every problem to the Diagnostics; installed with the factory.
using SwarmNodeCheck = std::function<void(const Federation&, std::size_t, Diagnostics&)>;
SwarmNodeCheck& swarm_check();
/// Runs swarm_check() on every swarm node of `fed`, or only on node `only` when it is not empty
/// (nothing when no check is installed).
void check_swarm_nodes(const Federation& fed, Diagnostics& diags, const std::string& only = "");

}  // namespace fleetsim::federation
