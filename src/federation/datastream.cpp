#include "federation/datastream.hpp"

#include <fmt/format.h>

#include "fleetsim/random.hpp"

namespace fleetsim::federation {

Datastreams::Datastreams(const Federation& fed, std::size_t node)
    : seed_(fed.seed), node_(node), node_name_(fed.nodes[node].name) {
  for (std::size_t i = 0; i < fed.nodes[node].inputs.size(); ++i) {
    const FlowDecl& f = fed.flow_into(node, i);
    inputs_.push_back({&f, static_cast<std::uint32_t>(&f - fed.flows.data()),
                       std::vector<std::uint64_t>(f.modifiers.size(), 0)});
    typed_ = typed_ || f.data_class != nullptr;
  }
}

bool Datastreams::apply(std::size_t input, transport::Message& m) {
  Input& in = inputs_.at(input);
  if (m.null || !in.flow->data_class) return true;
  check(in, m);
  // Down-sampling first decides whether the message goes on at all: each <downsample> counts
  // the messages that reach it.
  for (std::size_t k = 0; k < in.flow->modifiers.size(); ++k) {
    const ModifierDecl& mod = in.flow->modifiers[k];
    if (mod.kind != ModifierDecl::Kind::kDownsample) continue;
    if (in.received[k]++ % mod.every != 0) {
      m.null = true;
      m.payload.clear();
      return false;
    }
  }
  modify(in, m);
  return true;
}

transport::Message Datastreams::applied(std::size_t input, const transport::Message& m) const {
  transport::Message copy = m;
  const Input& in = inputs_.at(input);
  if (copy.null || !in.flow->data_class) return copy;
  check(in, copy);
  modify(in, copy);
  return copy;
}

void Datastreams::check(const Input& in, const transport::Message& m) const {
  const std::string problem = in.flow->data_class->layout_problem(m.payload);
  if (!problem.empty())
    throw FederateError(fmt::format("node '{}', flow '{}' at {} ns: {}", node_name_, in.flow->name,
                                    m.timestamp, problem));
}

void Datastreams::modify(const Input& in, transport::Message& m) const {
  const ClassLayout& cls = *in.flow->data_class;
  for (std::size_t k = 0; k < in.flow->modifiers.size(); ++k) {
    const ModifierDecl& mod = in.flow->modifiers[k];
    switch (mod.kind) {
      case ModifierDecl::Kind::kDownsample:
        break;
      case ModifierDecl::Kind::kNoise: {
        // Keyed by (seed, flow, sink node, modifier) and the message's timestamp: the same
        // message at the same sink always gets the same draw.
        const auto& a = cls.attributes[mod.attributes[0]];
        const auto entity = static_cast<EntityId>(
            mix64(mix64(in.flow_id) ^ (static_cast<std::uint64_t>(node_) << 20) ^ k));
        CounterRng rng(seed_, entity, m.timestamp, RandomStream::kDatastreamNoise);
        const double noise = mod.sigma > 0 ? mod.sigma * rng.normal() : 0.0;
        cls.write(m.payload, a, cls.read(m.payload, a) + mod.bias + noise);
        break;
      }
      case ModifierDecl::Kind::kFrame: {
        const auto& a0 = cls.attributes[mod.attributes[0]];
        const auto& a1 = cls.attributes[mod.attributes[1]];
        const auto& a2 = cls.attributes[mod.attributes[2]];
        const double v0 = cls.read(m.payload, a0), v1 = cls.read(m.payload, a1),
                     v2 = cls.read(m.payload, a2);
        if (mod.to_wgs84) {
          const Geodetic g = enu_to_geodetic({v0, v1, v2}, mod.reference);
          cls.write(m.payload, a0, g.latitude_deg);
          cls.write(m.payload, a1, g.longitude_deg);
          cls.write(m.payload, a2, g.altitude_m);
        } else {
          const Point3 p = geodetic_to_enu({v0, v1, v2}, mod.reference);
          cls.write(m.payload, a0, p.x);
          cls.write(m.payload, a1, p.y);
          cls.write(m.payload, a2, p.z);
        }
        break;
      }
    }
  }
}

}  // namespace fleetsim::federation
