// Node traces: every message a node consumed and emitted, in order, with nothing that could
// differ between two correct runs (no wall-clock time, no address, no process id). Two runs
// of one federation are repeatable iff their traces are byte-identical.
//
// File DIR/NODE.trace, text, one event per line:
//   # fleetsim trace 1 node NAME
//   emit FLOW TIMESTAMP PERIOD PAYLOAD_HASH [null]
//   consume FLOW TIMESTAMP PERIOD PAYLOAD_HASH [null]
// FLOW is the flow's name, times are integer ns, PAYLOAD_HASH is 16 hex digits (hash_bytes);
// `null` ends the line of a null message of an event flow.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "transport/message.hpp"
#include "transport/port.hpp"

namespace fleetsim::time {

/// One line of a trace.
struct TraceEvent {
  bool emit = false;  ///< false: consumed
  std::string flow;
  SimTime timestamp = 0;
  SimTime period = 0;
  std::uint64_t payload_hash = 0;
  bool null = false;  ///< a null message of an event flow
  int line = 0;  ///< 1-based line in the trace file (for reports)
};

/// Writes one node's trace. Not thread-safe: the node's thread only.
class TraceWriter {
 public:
  /// Creates (truncates) `path`; throws std::runtime_error if it cannot.
  TraceWriter(const std::string& path, const std::string& node);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void record(bool emit, const std::string& flow, const transport::Message& m);
  /// Flushes and closes (also done by the destructor).
  void close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

/// Reads a trace file; on a malformed line returns false and describes it in `error`.
bool read_trace(const std::string& path, std::vector<TraceEvent>& events, std::string& error);

/// Checks the four DSAAM rules and the period contract over the traces of every node of
/// `layout` (traces keyed by node name). Returns one line per violation (empty: conformant):
///  1. each node consumes in increasing (timestamp, flow id) order (observation inputs, which
///     a node reads rather than consumes in that order, are left out of rules 1 to 3);
///  2. after emitting T a node never consumes T' < T;
///  3. after consuming T a node never emits T' <= T (T' < T on a zero-lookahead event flow),
///     and emits in (timestamp, phase, flow id) order (flow_node.hpp's tie order);
///  4. every message emitted on a flow (first at its initial timestamp, each next one at
///     timestamp + period, up to `layout.until`) is consumed by every sink, once, in order,
///     with the same period, payload hash and null flag; on an event flow every period is at
///     least the lookahead.
std::vector<std::string> check_traces(const transport::FederationLayout& layout,
                                      const std::map<std::string, std::vector<TraceEvent>>& traces);

}  // namespace fleetsim::time
