// Shared-memory transport: nodes are processes on one machine, linked by rings in shared
// memory (docs/wire-format.md, "Shared memory").
//
// Wiring: every node creates one segment in /dev/shm holding its doorbell, its heartbeat and
// one single-producer single-consumer byte ring per node that feeds it (a *link*, as with
// ZeroMQ: messages on one link arrive in the sender's (timestamp, flow) order, so the message
// a blocked node needs is never stuck behind one it has no room for). A source writes its
// messages, in the wire format behind a 4-byte length, straight into the sink's ring; a node
// that finds nothing to do spins briefly, yields the processor for a while (the source it waits
// for may be waiting for this core), then sleeps on its doorbell (a futex) until a source
// writes into one of its rings or a sink frees room in a ring it writes.
//
// Liveness: a node holds a lock on its segment while it lives (the kernel drops it when the
// process dies, however it dies) and a helper thread bumps its heartbeat every 100 ms (a hung
// process stops bumping). A port throws PeerLost, naming the peer, its last timestamp and the
// flows left waiting, only if messages were still owed on a link with that peer, as ZeroMQ's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/port.hpp"

namespace fleetsim::transport {

/// Shared-memory-specific settings.
struct ShmOptions {
  /// Bytes of each link's ring (rounded up to a power of two). A larger message is streamed
  /// through the ring in pieces.
  std::size_t ring_bytes = 256 * 1024;
  /// How long a node polls its rings before it yields the processor between polls (0: it
  /// yields from the first poll), and how long it does that before sleeping on its doorbell.
  /// Polling without yielding only wastes the core when the node it waits for needs it.
  std::chrono::microseconds spin{0};
  std::chrono::microseconds yield{100};
  std::chrono::milliseconds heartbeat_interval{100};
  /// A peer whose heartbeat has not moved for this long is taken for hung, as dead.
  std::chrono::milliseconds hang_timeout{600};
};

/// The /dev/shm name of the segment of node `node` of run `run_id` in `layout`: it also holds
/// a hash of the node's endpoint, so that two federations started by hand without run ids
/// (run id 0) but with their own endpoints do not meet.
std::string shm_segment_name(const FederationLayout& layout, const std::string& node,
                             std::uint64_t run_id);

/// Creates the port of node `name` and its segment. Throws std::runtime_error when a live
/// node of the same name and run already holds the segment, or /dev/shm refuses it.
std::unique_ptr<Port> make_shm_port(const FederationLayout& layout, const std::string& name,
                                    PortOptions options, ShmOptions shm_options = {});

/// Removes the segments processes of run `run_id` left behind (a process that was killed
/// cannot remove its own); segments of live processes are kept. Returns how many it removed.
std::size_t remove_stale_shm_segments(std::uint64_t run_id);

/// Removes the segments of any run whose owner is dead and that were last changed at least
/// `min_age` ago (no live peer still needs to find them: peers notice a death within 1 s).
/// Every shared-memory port does this when it starts, so what killed runs left (their
/// supervisor killed too) does not pile up. Returns how many it removed.
std::size_t remove_abandoned_shm_segments(std::chrono::seconds min_age = std::chrono::seconds(60));

/// True when every node of `layout` is on this machine: its endpoint is empty, ipc://, or
/// tcp:// on a loopback address (so `auto` may choose shared memory).
bool all_nodes_local(const FederationLayout& layout);

/// Which transport links the processes of a federation: `choice` is "shm", "zmq" or "auto"
/// (shared memory when every node is on this machine and the federation is not
/// authenticated, ZeroMQ otherwise). Every process of a federation must make the same choice:
/// `auto` does, as it only looks at the layout every process reads.
bool use_shm(const FederationLayout& layout, const std::string& choice);

}  // namespace fleetsim::transport
