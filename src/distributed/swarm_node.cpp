#include "distributed/swarm_node.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "core/diagnostics.hpp"
#include "federation/example_nodes.hpp"
#include "log/byte_io.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::distributed {

std::vector<std::uint8_t> encode_poses(const std::vector<RobotPose>& poses) {
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u32(static_cast<std::uint32_t>(poses.size()));
  for (const auto& p : poses) {
    w.str(p.name);
    w.f64(p.x);
    w.f64(p.y);
    w.f64(p.z);
    w.f64(p.theta);
  }
  return out;
}

std::vector<RobotPose> decode_poses(const std::vector<std::uint8_t>& payload) {
  std::vector<RobotPose> poses;
  try {
    log::ByteReader r(payload.data(), payload.size(), "a pose message");
    const std::uint32_t n = r.u32();
    if (n > payload.size() / 36) throw std::runtime_error("more poses than its bytes hold");
    for (std::uint32_t k = 0; k < n; ++k) {
      RobotPose p;
      p.name = r.str();
      p.x = r.f64();
      p.y = r.f64();
      p.z = r.f64();
      p.theta = r.f64();
      poses.push_back(std::move(p));
    }
    if (r.remaining() != 0) throw std::runtime_error("trailing bytes after its poses");
  } catch (const log::LogError& e) {
    throw std::runtime_error(std::string("a malformed pose message: ") + e.what());
  }
  return poses;
}

namespace {

class SwarmNode final : public time::NodeBehaviour {
 public:
  SwarmNode(const federation::Federation& fed, std::size_t node) : decl_(fed.nodes[node]) {
    registry_ = std::make_unique<PluginRegistry>();
    register_builtins(*registry_);
    Diagnostics d;
    auto ex = load_experiment(decl_.experiment, *registry_, {}, d);
    if (!ex)
      throw std::runtime_error("node '" + decl_.name + "': its experiment has errors:\n" + d.str());
    sim_ = std::make_unique<Simulation>(std::move(*ex), *registry_);
    tick_ = sim_->model().tick_period_ns;
    // Outputs at whole ticks: the world is only defined between ticks.
    for (std::size_t o = 0; o < decl_.outputs.size(); ++o) {
      const auto& f = fed.flow_from(node, o);
      if (f.kind == transport::FlowKind::kEvent)
        throw std::runtime_error(f.where.file + ":" + std::to_string(f.where.line) +
                                 ": error: flow '" + f.name + "' leaves swarm node '" +
                                 decl_.name +
                                 "' as an event flow (expected a periodic or observation flow: a "
                                 "swarm node sends every robot's pose on a schedule)");
      periods_.push_back(f.periods);
      sent_.push_back(0);
      bool whole = f.initial % tick_ == 0;
      for (SimTime p : f.periods) whole = whole && p % tick_ == 0;
      if (!whole)
        throw std::runtime_error(
            f.where.file + ":" + std::to_string(f.where.line) + ": error: flow '" + f.name +
            "' leaves swarm node '" + decl_.name + "' at times that are not whole ticks of " +
            decl_.experiment + " (" + std::to_string(tick_) +
            " ns; expected an initial time and periods that are multiples of it)");
    }
    for (std::size_t i = 0; i < decl_.inputs.size(); ++i) {
      const auto& f = fed.flow_into(node, i);
      if (f.kind == transport::FlowKind::kObservation)
        throw std::runtime_error(
            f.where.file + ":" + std::to_string(f.where.line) + ": error: flow '" + f.name +
            "' enters swarm node '" + decl_.name +
            "' as an observation flow (expected a periodic or event flow: every pose an "
            "external robot sends is placed)");
      input_flows_.push_back(f.name);
    }
    const auto names = sim_->state().robot_name();
    const auto ids = sim_->state().robot_id();
    for (std::size_t i = 0; i < sim_->state().robot_count(); ++i) by_name_[names[i]] = ids[i];
    sim_->start();
  }
  ~SwarmNode() override {
    try {
      sim_->finish();
    } catch (...) {
    }
  }

  void consume(std::size_t input, const time::Message& m) override {
    std::vector<RobotPose> poses;
    try {
      poses = decode_poses(m.payload);
    } catch (const std::exception& e) {
      throw std::runtime_error(where(input, m.timestamp) + e.what());
    }
    for (auto& p : poses) {
      if (!by_name_.count(p.name))
        throw std::runtime_error(where(input, m.timestamp) + "no robot '" + p.name + "' in " +
                                 decl_.experiment);
      pending_.push_back({m.timestamp, input, std::move(p)});
    }
  }

  time::Emission emit(std::size_t output, SimTime t) override {
    // Steps to t, placing the external robots before the first tick that starts at or after
    // each pose's timestamp (every pose stamped before t has been consumed by now).
    while (sim_->state().tick * tick_ < t && !sim_->done()) {
      place_due(sim_->state().tick * tick_);
      sim_->step();
    }
    place_due(sim_->state().tick * tick_);  // the world at t shows the poses placed at t
    std::vector<RobotPose> poses;
    const WorldState& s = sim_->state();
    const ColumnHandle zc = s.robots.find("z");
    const double* z = zc == kNoColumn ? nullptr : static_cast<const double*>(s.robots.data(zc));
    for (std::size_t i = 0; i < s.robot_count(); ++i)
      poses.push_back({s.robot_name()[i], s.x()[i], s.y()[i], z ? z[i] : 0.0, s.theta()[i]});
    const auto& p = periods_[output];
    return {t, p[sent_[output]++ % p.size()], encode_poses(poses)};
  }

  std::uint64_t state_hash() const override { return sim_->state().hash(); }

 private:
  struct Pending {
    SimTime at;
    std::size_t input;
    RobotPose pose;
  };
  std::string where(std::size_t input, SimTime t) const {
    return "swarm node '" + decl_.name + "', input '" + decl_.inputs[input].name + "' (flow '" +
           input_flows_[input] + "') at " + std::to_string(t) + " ns: ";
  }
  void place_due(SimTime tick_start) {
    if (pending_.empty()) return;  // no external robot moved: most ticks
    std::vector<Pending> later;
    for (auto& p : pending_) {
      if (p.at > tick_start) {
        later.push_back(std::move(p));
        continue;
      }
      const Vec2 lo = sim_->model().arena_min(), hi = sim_->model().arena_max();
      if (!(p.pose.x >= lo.x && p.pose.x <= hi.x && p.pose.y >= lo.y && p.pose.y <= hi.y))
        throw std::runtime_error(where(p.input, p.at) + "robot '" + p.pose.name + "' at (" +
                                 std::to_string(p.pose.x) + ", " + std::to_string(p.pose.y) +
                                 ") is outside the arena (robots stay inside it)");
      sim_->place_robot(by_name_.at(p.pose.name), {p.pose.x, p.pose.y}, p.pose.theta, p.pose.z);
    }
    pending_ = std::move(later);
  }

  federation::NodeDecl decl_;
  std::unique_ptr<PluginRegistry> registry_;
  std::unique_ptr<Simulation> sim_;
  SimTime tick_ = 1;
  std::vector<std::vector<SimTime>> periods_;
  std::vector<std::uint64_t> sent_;
  std::vector<std::string> input_flows_;
  std::map<std::string, EntityId> by_name_;
  std::vector<Pending> pending_;
};

}  // namespace

void install_swarm_nodes() {
  federation::swarm_factory() = [](const federation::Federation& fed, std::size_t node) {
    return std::make_unique<SwarmNode>(fed, node);
  };
}

}  // namespace fleetsim::distributed
