// The federation file (docs/federation-format.md): nodes, their inputs and outputs, the flows
// between them, periods, initial timestamps, buffer sizes and the end time. Everything is
// checked before anything starts; every problem is reported as FILE:LINE: error: ...
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"
#include "federation/geodesy.hpp"
#include "fleetsim/attributes.hpp"
#include "transport/port.hpp"

namespace fleetsim::federation {

/// Built-in simulators a node can run (example_nodes.hpp), or an external program.
enum class NodeKind { kMixer, kDynamics, kController, kCamera, kProgram, kSwarm };

/// One <input> or <output> of a node.
struct PortDecl {
  std::string name;
  std::size_t buffer = 16;  ///< inputs only: messages
  /// Swarm nodes only: the external robot whose sensor readings this output sends, or whose
  /// actuator commands this input takes (docs/federation-format.md, "Swarm nodes"); empty:
  /// every robot's pose.
  std::string robot;
  std::string class_name;  ///< class="..." ("" = untyped: opaque bytes)
  SourceLocation where;
};

/// One <node>.
struct NodeDecl {
  std::string name;
  NodeKind kind = NodeKind::kMixer;
  std::string kind_name;   ///< as written
  std::string program;     ///< kProgram: the executable (resolved against the file's directory)
  std::string experiment;  ///< kSwarm: the experiment file (resolved likewise)
  std::string endpoint;    ///< zmq: "tcp://host:port" or "ipc://path"; may be empty
  std::string public_key;  ///< CURVE (Z85), from <authentication public_keys>; may be empty
  /// kSwarm: how many processes run the experiment (processes="N", 1..255), as `fleetsim run
  /// --processes N` spreads it (docs/federation-format.md, "Swarm nodes").
  int processes = 1;
  std::vector<PortDecl> inputs;
  std::vector<PortDecl> outputs;
  /// optional="true": the node may join late and resign early without changing what the
  /// others compute (its inputs are observation flows, its outputs feed only optional nodes).
  bool optional = false;
  SourceLocation where;
};

/// A datastream modifier of a typed flow (<noise>, <downsample>, <frame>), applied at each
/// sink to every message it receives, in file order (datastream.hpp).
struct ModifierDecl {
  enum class Kind { kNoise, kDownsample, kFrame };
  Kind kind = Kind::kNoise;
  /// Indices into the flow's class: noise one, frame three (east, north, up or latitude,
  /// longitude, altitude).
  std::vector<std::size_t> attributes;
  double sigma = 0;         ///< noise: standard deviation, in the attribute's unit
  double bias = 0;          ///< noise: added to every value
  std::uint64_t every = 1;  ///< downsample: keep messages 0, k, 2k, ... of the flow
  bool to_wgs84 = true;     ///< frame: ENU -> geodetic WGS84 (else geodetic -> ENU)
  Geodetic reference;       ///< frame: the ENU frame's origin
  SourceLocation where;
};

/// One <dimension>: an axis of the regions of data distribution management (a coordinate of
/// the arena, or anything else), with the range its regions must lie in.
struct DimensionDecl {
  std::string name;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  SourceLocation where;
};

/// One <flow>: a source output, its sink inputs, its periods.
struct FlowDecl {
  std::string name;
  /// Its source named a node's output (else source_node means nothing: the file has errors,
  /// and checks over the flow graph skip the flow).
  bool source_known = false;
  std::size_t source_node = 0;                             ///< index into Federation::nodes
  std::size_t source_output = 0;                           ///< index into that node's outputs
  std::vector<std::pair<std::size_t, std::size_t>> sinks;  ///< (node, input) indices
  std::vector<SimTime> periods;  ///< ns, > 0, used in turn (one value: a constant period)
  SimTime initial = 0;           ///< ns, timestamp of the first message
  /// periodic (the periods fix every timestamp), event (the source picks them, `lookahead`
  /// apart at least; no periods) or observation (periodic; the sinks read the latest value)
  transport::FlowKind kind = transport::FlowKind::kPeriodic;
  SimTime lookahead = 0;  ///< ns, event flows only, >= 0
  /// The class its ports name (nullptr: untyped, opaque bytes).
  std::shared_ptr<const ClassLayout> data_class;
  std::vector<ModifierDecl> modifiers;  ///< in file order
  /// dimensions="...": the dimensions of the region each message carries (indices into
  /// Federation::dimensions, in the attribute's order); empty: no regions.
  std::vector<std::size_t> dimensions;
  SourceLocation where;
};

/// A checked federation.
struct Federation {
  std::string path;
  SimTime until = 0;  ///< ns
  std::uint64_t seed = 1;
  std::vector<NodeDecl> nodes;
  std::vector<FlowDecl> flows;                              ///< flow id = index
  std::vector<std::shared_ptr<const ClassLayout>> classes;  ///< <class> and <interaction>
  std::vector<DimensionDecl> dimensions;                    ///< <dimension>, in file order

  /// The node called `name`, or nullptr.
  const NodeDecl* find(const std::string& name) const;
  /// Index of node `name` (must exist).
  std::size_t index_of(const std::string& name) const;
  /// The wiring the transports and the time layer need.
  transport::FederationLayout layout() const;
  /// The flow feeding input `input` of node `node`.
  const FlowDecl& flow_into(std::size_t node, std::size_t input) const;
  /// The flow leaving output `output` of node `node`.
  const FlowDecl& flow_from(std::size_t node, std::size_t output) const;
};

/// Parses "10ms", "1.5s", "250us", "40ns" or "0" into ns (exact; no floating point).
std::optional<SimTime> parse_duration(const std::string& text);

/// The buffer of an observation input, in messages: its source is never blocked by it unless
/// the sink falls this far behind (docs/time-management.md, "Observation flows").
inline constexpr std::size_t kObservationBuffer = 1 << 20;

/// The most processes a swarm node's run may have (as `fleetsim run --processes`).
inline constexpr int kMaxSwarmProcesses = 255;

/// Loads and checks a federation file. Returns nothing if `diags` got errors.
std::optional<Federation> load_federation(const std::string& path, Diagnostics& diags);
/// Same, from text (tests, generated federations).
std::optional<Federation> parse_federation(const std::string& text, const std::string& name,
                                           Diagnostics& diags);

}  // namespace fleetsim::federation
