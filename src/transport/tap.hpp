// Taps: how optional nodes (docs/federate-api.md, "Optional federates") get their messages
// without anyone waiting for them. A flow that feeds an optional node is also written, message
// by message, to an append-only file in shared memory, its tap; the optional node reads the
// file at its own pace, from the first message, whenever it joins. Its source appends and
// never waits (no buffer of the sink can fill, no connection is made), so what the other nodes
// compute is what they compute without it. An optional node's own outputs feed only optional
// nodes, through taps too.
//
// A tap is the run's wire frames (wire.hpp), each after a u32 length, little-endian; a length
// of 0 marks that the source left before the end. Files live in /dev/shm, named by the run
// and the flow: `fleetsim-tap-RUNID-FLOW`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/port.hpp"

namespace fleetsim::transport {

/// The file of flow `flow`'s tap in run `run_id`.
std::string tap_path(std::uint64_t run_id, const std::string& flow);

/// Removes the taps of run `run_id` (the run is over: no optional node reads them any more).
/// Returns how many it removed.
std::size_t remove_taps(std::uint64_t run_id);

/// The writing side of one tap: appends every message of the flow. Created (emptied) when the
/// source starts. Single-threaded.
class TapWriter {
 public:
  TapWriter(std::uint64_t run_id, const std::string& flow);
  ~TapWriter();
  TapWriter(const TapWriter&) = delete;
  TapWriter& operator=(const TapWriter&) = delete;
  /// Appends `m` (never waits for a reader).
  void append(const Message& m);
  /// Marks that the source leaves before the end time (readers past here stop, naming it).
  void leave_early();

 private:
  void write_all(const std::uint8_t* data, std::size_t n);
  std::string path_;
  std::uint64_t run_id_;
  int fd_ = -1;
  std::vector<std::uint8_t> wire_, frame_;  ///< reused for every message
};

/// The port of an optional node: its inputs read their flows' taps (waiting, as any input
/// does, until the next message is there), its outputs write taps. It connects to no one.
std::unique_ptr<Port> make_tap_port(const FederationLayout& layout, const std::string& name,
                                    std::uint64_t run_id, PortOptions options);

}  // namespace fleetsim::transport
