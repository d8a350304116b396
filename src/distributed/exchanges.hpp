// The exchanges that join the processes of a distributed swarm run (sim/distribution.hpp) on
// the time layer: DSAAM flows (the default) or the lockstep baseline through the first process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/distribution.hpp"
#include "transport/open_port.hpp"
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
/// simulated times at which the data holds. A run with affinities (robots whose controllers
/// run on another process than their region's) has three: the handoff at a third of the tick,
/// the actuation at two thirds, the moves at its end. Lockstep: make_lockstep_layout's wiring
/// with process 0 as the primary.
transport::FederationLayout make_swarm_layout(SyncMode mode, int processes, SimTime tick_ns);

/// The port of process `p` of a swarm run's `layout` (`fleetsim run --processes`, a swarm
/// node's processes, a run over the network), over `carrier`: shared-memory rings of 1 MiB, so
/// that a halo of many robots goes in a few pieces; `zmq` for ZeroMQ (keys, I/O thread).
std::unique_ptr<transport::Port> open_process_port(const transport::FederationLayout& layout, int p,
                                                   transport::Carrier carrier,
                                                   transport::PortOptions options,
                                                   transport::ZmqOptions zmq = {});

/// The rounds of the time layer in each tick of a run's simulation, in their order
/// (docs/distributed.md, "The tick"): the handoff, with affinities the actuation, and the moves.
/// The loop functions' changes, the contact rounds and a checkpoint's state are parts of these
/// rounds, not rounds of their own. A swarm node adds its inputs and results (swarm_node.cpp).
inline int simulation_rounds_per_tick(bool affinities) {
  return affinities ? 3 : 2;
}

/// The timestamp of round g (0-based) for ticks of `tick_ns` with `rounds_per_tick` rounds.
SimTime round_time(std::uint64_t g, SimTime tick_ns, int rounds_per_tick = 2);

/// An exchange on a transport port, which remembers whether a round failed because another
/// process left or failed (the run then reports that process's error as the cause).
class PortExchange : public Exchange {
 public:
  /// `port`: the transport port the rounds go over (not owned), or null.
  explicit PortExchange(transport::Port* port = nullptr) : port_(port) {}
  std::vector<std::vector<std::uint8_t>> all_gather(std::vector<std::uint8_t> mine,
                                                    bool more) final;
  RoutedReceived routed(RoutedMessage mine, int process, std::span<const int> peers,
                        bool more) final;
  bool peer_failed() const { return peer_failed_; }
  std::uint64_t wire_bytes_sent() const override { return port_ ? port_->stats().bytes_sent : 0; }
  /// After the last round: this process leaves the run in good order (closes its port).
  virtual void close() {
    if (port_) port_->close();
  }
  /// This process failed (`why`) between two rounds: an exchange whose peers cannot see a
  /// process leave (MPI's collectives) tells them here; a port's peers see it leave.
  virtual void fail(const std::string& why) { (void)why; }

 protected:
  virtual std::vector<std::vector<std::uint8_t>> round(std::vector<std::uint8_t> mine,
                                                       bool more) = 0;
  /// A routed round (Exchange::routed): by default packed into one round().
  virtual RoutedReceived routed_round(RoutedMessage mine, int process, std::span<const int> peers,
                                      bool more) {
    return Exchange::routed(std::move(mine), process, peers, more);
  }

 private:
  transport::Port* port_;
  bool peer_failed_ = false;
};

/// Makes the exchange of process `process` on `port` (which must outlive it).
std::unique_ptr<PortExchange> make_exchange(SyncMode mode, transport::Port& port, int process,
                                            int processes, SimTime tick_ns,
                                            int rounds_per_tick = 2);

}  // namespace fleetsim::distributed
