// Datastreams (docs/federation-format.md, "Datastreams and modifiers"): what a sink does to
// each message of a typed flow before its node sees it. It checks that the payload is a value
// of the flow's class, then applies the flow's modifiers in file order: Gaussian noise and
// bias, down-sampling, frame conversion between ENU and WGS84.
//
// Every modifier is a pure function of (federation seed, flow, sink node, message timestamp,
// the messages the sink received before on that flow), so a federation repeats bit for bit
// over any transport and any jitter. A message dropped by down-sampling becomes a null message
// at the sink: its timestamp and the next one it announces still move the sink's time on (the
// DSAAM schedule is unchanged, nothing can deadlock), it is just not delivered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "federation/federation_file.hpp"
#include "transport/port.hpp"

namespace fleetsim::federation {

/// The datastreams into one node's inputs. Used by the node's thread only.
class Datastreams {
 public:
  Datastreams(const Federation& fed, std::size_t node);

  /// Whether any input has a class (when none has, apply() never changes anything).
  bool typed() const { return typed_; }
  /// Checks and modifies message `m` received on input `input` (index in the node's
  /// declaration), in place. Returns false when down-sampling drops it. Null messages are left
  /// alone. Throws FederateError naming the node, the flow and the timestamp when the payload
  /// is not a value of the flow's class.
  bool apply(std::size_t input, transport::Message& m);
  /// The same, on a copy, for an observation flow's latest value (no down-sampling there):
  /// the same message always gets the same noise.
  transport::Message applied(std::size_t input, const transport::Message& m) const;

 private:
  struct Input {
    const FlowDecl* flow = nullptr;
    std::uint32_t flow_id = 0;
    std::vector<std::uint64_t> received;  ///< per modifier: messages a downsample has seen
  };
  /// Throws FederateError when `m`'s payload is not a value of the flow's class.
  void check(const Input& in, const transport::Message& m) const;
  /// Applies noise and frame conversions, in file order.
  void modify(const Input& in, transport::Message& m) const;

  std::uint64_t seed_;
  std::size_t node_;
  std::string node_name_;
  std::vector<Input> inputs_;
  bool typed_ = false;
};

}  // namespace fleetsim::federation
