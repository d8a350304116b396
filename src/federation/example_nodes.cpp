#include "federation/example_nodes.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "core/hash.hpp"
#include "fleetsim/random.hpp"

namespace fleetsim::federation {

namespace {

// Payloads are little arrays of doubles (examples run on one architecture per federation).
std::vector<std::uint8_t> pack(std::initializer_list<double> values) {
  std::vector<std::uint8_t> out(values.size() * 8);
  std::size_t i = 0;
  for (double v : values) std::memcpy(out.data() + 8 * i++, &v, 8);
  return out;
}

double unpack(const std::vector<std::uint8_t>& p, std::size_t index) {
  if (p.size() < 8 * (index + 1)) return 0.0;
  double v;
  std::memcpy(&v, p.data() + 8 * index, 8);
  return v;
}

/// Common part: the period schedule of every output.
class ExampleNode : public time::NodeBehaviour {
 public:
  ExampleNode(const Federation& fed, std::size_t node) : name_(fed.nodes[node].name) {
    seed_ = fed.seed;
    for (std::size_t o = 0; o < fed.nodes[node].outputs.size(); ++o) {
      const FlowDecl& f = fed.flow_from(node, o);
      periods_.push_back(f.periods);
      lookahead_.push_back(f.kind == transport::FlowKind::kEvent ? std::optional(f.lookahead)
                                                                 : std::nullopt);
      emitted_.push_back(0);
    }
    for (std::size_t i = 0; i < fed.nodes[node].inputs.size(); ++i) {
      const FlowDecl& f = fed.flow_into(node, i);
      input_kind_.push_back(fed.nodes[f.source_node].kind);
    }
  }

 protected:
  /// The period after the k-th message of output `o`: the flow's periods used in turn; on an
  /// event flow, its lookahead (at least 1 ms) plus 0 to 3 ms drawn from (seed, node, k), so
  /// the timestamps are irregular and, with lookahead 0, often those of the inputs.
  SimTime next_period(std::size_t o) {
    const std::uint64_t k = emitted_[o]++;
    if (lookahead_[o]) {
      constexpr SimTime kMs = 1'000'000;
      const auto extra = static_cast<SimTime>(mix64(seed_ ^ node_key() ^ (k << 8) ^ o) % 4);
      return std::max(*lookahead_[o], kMs) + extra * kMs;
    }
    const auto& p = periods_[o];
    return p[k % p.size()];
  }
  bool event_output(std::size_t o) const { return lookahead_[o].has_value(); }
  std::uint64_t node_key() const { return hash_bytes(name_.data(), name_.size()); }

  std::string name_;
  std::uint64_t seed_ = 1;
  std::vector<std::vector<SimTime>> periods_;
  std::vector<std::optional<SimTime>> lookahead_;  ///< event outputs only
  std::vector<std::uint64_t> emitted_;
  std::vector<NodeKind> input_kind_;
};

class MixerNode final : public ExampleNode {
 public:
  MixerNode(const Federation& fed, std::size_t node) : ExampleNode(fed, node) {
    state_ = mix64(seed_ ^ node_key());
  }
  void consume(std::size_t, const time::Message& m) override {
    // A non-commutative fold: any change of order changes the state.
    state_ = mix64(state_ ^ m.flow);
    state_ = mix64(state_ + static_cast<std::uint64_t>(m.timestamp));
    state_ = mix64(state_ ^ hash_bytes(m.payload.data(), m.payload.size()));
  }
  time::Emission emit(std::size_t output, SimTime t) override {
    time::Emission e;
    e.timestamp = t;
    e.period = next_period(output);
    // On an event flow, one message in three is a null: nothing to say, time moves on.
    if (event_output(output) && state_ % 3 == 0) {
      e.null = true;
      return e;
    }
    std::uint64_t words[2] = {state_, mix64(state_ ^ static_cast<std::uint64_t>(t) ^ output)};
    e.payload.resize(16);
    std::memcpy(e.payload.data(), words, 16);
    return e;
  }
  void observe(std::size_t input, const time::Message* latest, SimTime at) override {
    // What it sees of an observation input at each emission: the latest value's timestamp
    // and payload (or nothing yet), folded like a consumed message.
    state_ = mix64(state_ ^ (input + 1) ^ static_cast<std::uint64_t>(at));
    if (latest) consume(input, *latest);
  }
  std::uint64_t state_hash() const override { return state_; }

 private:
  std::uint64_t state_ = 0;
};

class DynamicsNode final : public ExampleNode {
 public:
  using ExampleNode::ExampleNode;
  void consume(std::size_t, const time::Message& m) override { force_ = unpack(m.payload, 0); }
  time::Emission emit(std::size_t output, SimTime t) override {
    // Semi-implicit Euler over the exact time since the last emission.
    if (t > last_t_) {
      double dt = static_cast<double>(t - last_t_) * 1e-9;
      double a = force_ - kStiffness * x_ - kDamping * v_;
      v_ += a * dt;
      x_ += v_ * dt;
      last_t_ = t;
    }
    return {t, next_period(output), pack({x_, v_})};
  }
  std::uint64_t state_hash() const override {
    double s[3] = {x_, v_, force_};
    return hash_bytes(s, sizeof s);
  }

 private:
  static constexpr double kStiffness = 4.0;  ///< 1/s^2
  static constexpr double kDamping = 0.5;    ///< 1/s
  double x_ = 0.0, v_ = 0.0, force_ = 0.0;
  SimTime last_t_ = 0;
};

class ControllerNode final : public ExampleNode {
 public:
  using ExampleNode::ExampleNode;
  void consume(std::size_t input, const time::Message& m) override {
    if (input_kind_[input] == NodeKind::kCamera) {
      // Blend the (noisy, slower) camera measurement into the estimate.
      estimate_ = 0.8 * estimate_ + 0.2 * unpack(m.payload, 0);
    } else {
      estimate_ = 0.5 * estimate_ + 0.5 * unpack(m.payload, 0);
      velocity_ = unpack(m.payload, 1);
    }
  }
  time::Emission emit(std::size_t output, SimTime t) override {
    // Square-wave target: +1 then -1, one second each.
    double target = (t / kNanosPerSecond) % 2 == 0 ? 1.0 : -1.0;
    double force = kGain * (target - estimate_) - kDerivative * velocity_;
    sum_ += force;
    return {t, next_period(output), pack({force})};
  }
  std::uint64_t state_hash() const override {
    double s[3] = {estimate_, velocity_, sum_};
    return hash_bytes(s, sizeof s);
  }

 private:
  static constexpr double kGain = 12.0;
  static constexpr double kDerivative = 3.0;
  double estimate_ = 0.0, velocity_ = 0.0, sum_ = 0.0;
};

class CameraNode final : public ExampleNode {
 public:
  using ExampleNode::ExampleNode;
  void consume(std::size_t, const time::Message& m) override { seen_ = unpack(m.payload, 0); }
  time::Emission emit(std::size_t output, SimTime t) override {
    CounterRng rng(seed_, static_cast<EntityId>(node_key()), t, RandomStream::kSensorNoise);
    double z = seen_ + 0.01 * rng.normal();
    frames_ += z;
    return {t, next_period(output), pack({z})};
  }
  std::uint64_t state_hash() const override {
    double s[2] = {seen_, frames_};
    return hash_bytes(s, sizeof s);
  }

 private:
  double seen_ = 0.0, frames_ = 0.0;
};

}  // namespace

SwarmNodeFactory& swarm_factory() {
  static SwarmNodeFactory factory;
  return factory;
}

SwarmProcessMain& swarm_process_main() {
  static SwarmProcessMain main;
  return main;
}

SwarmNodeCheck& swarm_check() {
  static SwarmNodeCheck check;
  return check;
}

void check_swarm_nodes(const Federation& fed, Diagnostics& diags, const std::string& only) {
  for (std::size_t n = 0; n < fed.nodes.size(); ++n)
    if (fed.nodes[n].kind == NodeKind::kSwarm && swarm_check() &&
        (only.empty() || fed.nodes[n].name == only))
      swarm_check()(fed, n, diags);
}

std::unique_ptr<time::NodeBehaviour> make_behaviour(const Federation& fed, std::size_t node,
                                                    const SwarmNodeRuntime& runtime) {
  switch (fed.nodes.at(node).kind) {
    case NodeKind::kMixer:
      return std::make_unique<MixerNode>(fed, node);
    case NodeKind::kDynamics:
      return std::make_unique<DynamicsNode>(fed, node);
    case NodeKind::kController:
      return std::make_unique<ControllerNode>(fed, node);
    case NodeKind::kCamera:
      return std::make_unique<CameraNode>(fed, node);
    case NodeKind::kSwarm:
      if (swarm_factory()) return swarm_factory()(fed, node, runtime);
      throw std::logic_error("node '" + fed.nodes[node].name +
                             "' runs a swarm experiment, which this program cannot");
    case NodeKind::kProgram:
      break;
  }
  throw std::logic_error("node '" + fed.nodes[node].name + "' runs an external program");
}

}  // namespace fleetsim::federation
