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

/// The simulator of built-in node `node` (not for kProgram nodes).
std::unique_ptr<time::NodeBehaviour> make_behaviour(const Federation& fed, std::size_t node);

/// Makes the simulator of a swarm node (<node experiment="...">). The swarm engine is a
/// higher layer than federations: the program that has it (the command line) installs it
/// (distributed/swarm_node.hpp); without it a swarm node cannot run. Throws on a bad experiment.
using SwarmNodeFactory =
    std::function<std::unique_ptr<time::NodeBehaviour>(const Federation&, std::size_t)>;
SwarmNodeFactory& swarm_factory();
/// Checks a swarm node's declaration against its experiment before a federation starts
/// (launch, node, check), reporting every problem to the Diagnostics; installed with the factory.
using SwarmNodeCheck = std::function<void(const Federation&, std::size_t, Diagnostics&)>;
SwarmNodeCheck& swarm_check();
/// Runs swarm_check() on every swarm node of `fed`, or only on node `only` when it is not empty
/// (nothing when no check is installed).
void check_swarm_nodes(const Federation& fed, Diagnostics& diags, const std::string& only = "");

}  // namespace fleetsim::federation
