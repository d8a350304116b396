#include "distributed/swarm_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "federation/example_nodes.hpp"
#include "fleetsim/controller.hpp"
#include "log/byte_io.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::distributed {

// ---------------------------------------------------------------------------------------
// The three messages (layouts in swarm_node.hpp and docs/federation-format.md).

namespace {

void put_f32(log::ByteWriter& w, float v) {
  w.raw(&v, 4);
}

/// Runs `decode` over `payload`; a short or inconsistent message becomes one runtime_error.
template <class Decode>
auto decoded(const std::vector<std::uint8_t>& payload, const char* what, Decode decode) {
  try {
    log::ByteReader r(payload.data(), payload.size(), what);
    auto result = decode(r);
    if (r.remaining() != 0) throw std::runtime_error("trailing bytes after its entries");
    return result;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("a malformed ") + what + ": " + e.what());
  }
}

}  // namespace

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
  return decoded(payload, "pose message", [](log::ByteReader& r) {
    std::vector<RobotPose> poses(r.count(r.u32(), 36));
    for (RobotPose& p : poses) {
      p.name = r.str();
      p.x = r.f64();
      p.y = r.f64();
      p.z = r.f64();
      p.theta = r.f64();
    }
    return poses;
  });
}

std::vector<std::uint8_t> command_values(const std::vector<double>& values) {
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  for (double v : values) w.f64(v);
  return out;
}

std::vector<std::uint8_t> encode_commands(const std::vector<ActuatorCommand>& commands) {
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.u32(static_cast<std::uint32_t>(commands.size()));
  for (const auto& c : commands) {
    w.str(c.actuator);
    w.u32(static_cast<std::uint32_t>(c.bytes.size()));
    w.raw(c.bytes.data(), c.bytes.size());
  }
  return out;
}

std::vector<ActuatorCommand> decode_commands(const std::vector<std::uint8_t>& payload) {
  return decoded(payload, "command message", [](log::ByteReader& r) {
    std::vector<ActuatorCommand> commands(r.count(r.u32(), 8));
    for (ActuatorCommand& c : commands) {
      c.actuator = r.str();
      const std::size_t n = r.count(r.u32(), 1);
      const std::uint8_t* p = r.take(n);
      c.bytes.assign(p, p + n);
    }
    return commands;
  });
}

std::vector<std::uint8_t> encode_readings(const RobotReadings& readings) {
  std::vector<std::uint8_t> out;
  log::ByteWriter w(out);
  w.i64(readings.tick);
  w.u32(static_cast<std::uint32_t>(readings.sensors.size()));
  for (const SensorReadings& s : readings.sensors) {
    w.str(s.name);
    w.str(s.type);
    w.u8(s.enabled ? 1 : 0);
    put_f32(w, s.scalar);
    for (const auto* floats : {&s.values, &s.angles}) {
      w.u32(static_cast<std::uint32_t>(floats->size()));
      for (float v : *floats) put_f32(w, v);
    }
    w.u32(static_cast<std::uint32_t>(s.reals.size()));
    for (double v : s.reals) w.f64(v);
    w.u32(static_cast<std::uint32_t>(s.messages.size()));
    for (const auto& m : s.messages) {
      w.str(m.sender);
      put_f32(w, m.range_m);
      put_f32(w, m.horizontal_bearing);
      put_f32(w, m.vertical_bearing);
      w.u32(static_cast<std::uint32_t>(m.data.size()));
      w.raw(m.data.data(), m.data.size());
    }
    w.u32(static_cast<std::uint32_t>(s.blobs.size()));
    for (const Blob& b : s.blobs) {
      for (std::uint8_t c : {b.color.r, b.color.g, b.color.b, b.color.a}) w.u8(c);
      put_f32(w, b.distance_m);
      put_f32(w, b.angle);
    }
  }
  return out;
}

RobotReadings decode_readings(const std::vector<std::uint8_t>& payload) {
  return decoded(payload, "readings message", [](log::ByteReader& r) {
    RobotReadings readings;
    readings.tick = r.i64();
    readings.sensors.resize(r.count(r.u32(), 33));
    for (SensorReadings& s : readings.sensors) {
      s.name = r.str();
      s.type = r.str();
      s.enabled = r.u8() != 0;
      s.scalar = r.get<float>();
      for (auto* floats : {&s.values, &s.angles}) {
        floats->resize(r.count(r.u32(), 4));
        for (float& v : *floats) v = r.get<float>();
      }
      s.reals.resize(r.count(r.u32(), 8));
      for (double& v : s.reals) v = r.f64();
      s.messages.resize(r.count(r.u32(), 20));
      for (auto& m : s.messages) {
        m.sender = r.str();
        m.range_m = r.get<float>();
        m.horizontal_bearing = r.get<float>();
        m.vertical_bearing = r.get<float>();
        const std::size_t n = r.count(r.u32(), 1);
        const std::uint8_t* p = r.take(n);
        m.data.assign(p, p + n);
      }
      s.blobs.resize(r.count(r.u32(), 12));
      for (Blob& b : s.blobs) {
        b.color = {r.u8(), r.u8(), r.u8(), r.u8()};
        b.distance_m = r.get<float>();
        b.angle = r.get<float>();
      }
    }
    return readings;
  });
}

// ---------------------------------------------------------------------------------------
// The node.

namespace {

/// Checks swarm node `node` against its loaded experiment (check_swarm_node()).
void check_declaration(const federation::Federation& fed, std::size_t node, const Experiment& ex,
                       Diagnostics& d) {
  const federation::NodeDecl& decl = fed.nodes[node];
  const SimTime tick = ex.model->tick_period_ns;
  // Outputs on a schedule, at whole ticks: the world is only defined between ticks.
  for (std::size_t o = 0; o < decl.outputs.size(); ++o) {
    const auto& f = fed.flow_from(node, o);
    if (f.kind == transport::FlowKind::kEvent) {
      d.error(f.where, "flow '" + f.name + "' leaves swarm node '" + decl.name +
                           "' as an event flow (expected a periodic or observation flow: a "
                           "swarm node sends poses and readings on a schedule)");
      continue;
    }
    bool whole = f.initial % tick == 0;
    for (SimTime p : f.periods) whole = whole && p % tick == 0;
    if (!whole)
      d.error(f.where, "flow '" + f.name + "' leaves swarm node '" + decl.name +
                           "' at times that are not whole ticks of " + decl.experiment + " (" +
                           std::to_string(tick) +
                           " ns; expected an initial time and periods that are multiples of it)");
  }
  for (std::size_t i = 0; i < decl.inputs.size(); ++i) {
    const auto& f = fed.flow_into(node, i);
    if (f.kind == transport::FlowKind::kObservation)
      d.error(f.where, "flow '" + f.name + "' enters swarm node '" + decl.name +
                           "' as an observation flow (expected a periodic or event flow: every "
                           "pose and command an external robot is sent is applied)");
  }
  // The robots the ports name: external robots of the experiment.
  std::vector<std::string> external;  // for "did you mean"
  std::map<std::string, std::size_t> row_of;
  const WorldState& s = ex.state;
  const auto& names = s.robot_name();
  for (std::size_t r = 0; r < s.robot_count(); ++r) {
    const std::string name = names[r];
    row_of[name] = r;
    if (ex.model->controllers[s.robot_controller()[r]].type == "external") external.push_back(name);
  }
  auto check_port = [&](const federation::PortDecl& p, const char* what) {
    if (p.robot.empty()) return;
    const std::string port = "swarm node '" + decl.name + "', " + what + " '" + p.name + "': ";
    auto it = row_of.find(p.robot);
    if (it == row_of.end()) {
      d.error(p.where, port + "no robot '" + p.robot + "' in " + decl.experiment +
                           did_you_mean(p.robot, external) +
                           " (expected the id of one of its external robots)");
      return;
    }
    const ControllerDecl& c = ex.model->controllers[s.robot_controller()[it->second]];
    if (c.type != "external")
      d.error(p.where, port + "robot '" + p.robot + "' of " + decl.experiment +
                           " is not external: its controller '" + c.id + "' is of type '" + c.type +
                           "' (expected a robot whose controller is of type 'external', so "
                           "that only the federation drives it)");
  };
  for (const auto& p : decl.outputs) check_port(p, "output");
  for (const auto& p : decl.inputs) check_port(p, "input");
}

/// An external robot that a port names, as the node and the robot's controller share it.
/// Written between steps by the node (commands), and during the sense+control phase by the
/// robot's own controller step only (readings, error): one worker touches it at a time.
struct ExternalRobot {
  EntityId id = kNoEntity;
  std::string name;
  std::vector<std::string> actuators;  ///< its kind's actuator names, in order
  bool wants_readings = false;         ///< an output sends its readings
  /// The readings of the last tick simulated (senders left empty: see sender_ids).
  RobotReadings readings;
  std::vector<std::vector<EntityId>> sender_ids;  ///< per sensor, per message
  /// The latest command per actuator, applied at every tick.
  struct Command {
    bool given = false;  ///< false: none yet (or one that did not fit)
    std::vector<std::uint8_t> bytes;
    std::string origin;  ///< "swarm node 'n', input 'i' (flow 'f') at T ns: "
  };
  std::vector<Command> commands;
  std::string error;  ///< a command that does not fit its actuator (set by the step)
};

/// The `external` controller of a swarm node's run: like the built-in one it leaves the
/// robot's commands to someone outside the run (here the federation), and for the robots the
/// node's ports name it copies the readings out and the commands in.
class FederatedController final : public Controller {
 public:
  FederatedController(std::vector<ExternalRobot>* robots, const std::vector<int>* slot_of_id)
      : robots_(robots), slot_of_id_(slot_of_id) {}
  bool save(std::vector<std::uint8_t>&) const override { return true; }  // no state
  void step(RobotIO& io) override {
    if (io.id >= slot_of_id_->size() || (*slot_of_id_)[io.id] < 0) return;
    ExternalRobot& r = (*robots_)[static_cast<std::size_t>((*slot_of_id_)[io.id])];
    if (r.wants_readings) copy_readings(io, r);
    for (std::size_t k = 0; k < r.commands.size() && k < io.actuators.size(); ++k)
      if (r.commands[k].given) apply(io.actuators[k], r, r.commands[k]);
  }

 private:
  static void copy_readings(const RobotIO& io, ExternalRobot& r) {
    r.readings.tick = static_cast<std::int64_t>(io.tick);
    r.readings.sensors.resize(io.sensors.size());
    r.sender_ids.resize(io.sensors.size());
    for (std::size_t k = 0; k < io.sensors.size(); ++k) {
      const SensorView& v = io.sensors[k];
      SensorReadings& s = r.readings.sensors[k];
      s.name = v.name;
      s.type = v.type;
      s.enabled = v.enabled == nullptr || *v.enabled;
      s.scalar = v.scalar;
      s.values.assign(v.values.begin(), v.values.end());
      s.angles.assign(v.angles.begin(), v.angles.end());
      s.reals.assign(v.reals.begin(), v.reals.end());
      s.messages.resize(v.messages.size());
      r.sender_ids[k].resize(v.messages.size());
      for (std::size_t m = 0; m < v.messages.size(); ++m) {
        const RabMessage& in = v.messages[m];
        s.messages[m] = {{},
                         in.range_m,
                         in.horizontal_bearing,
                         in.vertical_bearing,
                         std::vector<std::uint8_t>(in.data.begin(), in.data.end())};
        r.sender_ids[k][m] = in.sender;
      }
      s.blobs.assign(v.blobs.begin(), v.blobs.end());
    }
  }
  static void apply(ActuatorView& a, ExternalRobot& r, ExternalRobot::Command& c) {
    const std::size_t want = a.values.size() * 8 + a.colors.size() * 4 + a.data.size();
    if (c.bytes.size() != want) {
      r.error = c.origin + "actuator '" + std::string(a.name) + "' of robot '" + r.name +
                "' takes " + std::to_string(want) + " bytes (" + std::to_string(a.values.size()) +
                " f64 values, " + std::to_string(a.colors.size()) + " colours of 4 bytes, " +
                std::to_string(a.data.size()) + " data bytes), the command gives " +
                std::to_string(c.bytes.size());
      c.given = false;
      return;
    }
    const std::uint8_t* p = c.bytes.data();
    if (!a.values.empty()) std::memcpy(a.values.data(), p, a.values.size() * 8);
    p += a.values.size() * 8;
    for (Color& col : a.colors) {
      col = {p[0], p[1], p[2], p[3]};
      p += 4;
    }
    if (!a.data.empty()) std::memcpy(a.data.data(), p, a.data.size());
  }
  std::vector<ExternalRobot>* robots_;
  const std::vector<int>* slot_of_id_;
};

class SwarmNode final : public time::NodeBehaviour {
 public:
  SwarmNode(const federation::Federation& fed, std::size_t node) : decl_(fed.nodes[node]) {
    // `external` robots exchange their readings and commands with the federation.
    registry_ = std::make_unique<PluginRegistry>();
    registry_->add_controller(
        {PluginKind::kController,
         "external",
         "leaves the actuators' commands to the federation (a swarm node's external robots)",
         {}},
        [this] { return std::make_unique<FederatedController>(&external_, &slot_of_id_); },
        ControllerScope::kShared);
    register_builtins(*registry_);
    Diagnostics d;
    auto ex = load_experiment(decl_.experiment, *registry_, {}, d);
    if (ex) check_declaration(fed, node, *ex, d);
    if (d.has_errors())
      throw std::runtime_error("node '" + decl_.name +
                               "': its experiment or its ports have errors:\n" + d.str());
    for (std::size_t o = 0; o < decl_.outputs.size(); ++o) {
      periods_.push_back(fed.flow_from(node, o).periods);
      sent_.push_back(0);
      output_robot_.push_back(
          decl_.outputs[o].robot.empty() ? -1 : external_slot(*ex, decl_.outputs[o].robot));
      if (output_robot_.back() >= 0) external_[output_robot_.back()].wants_readings = true;
    }
    for (std::size_t i = 0; i < decl_.inputs.size(); ++i) {
      input_flows_.push_back(fed.flow_into(node, i).name);
      input_robot_.push_back(
          decl_.inputs[i].robot.empty() ? -1 : external_slot(*ex, decl_.inputs[i].robot));
    }
    const auto& names = ex->state.robot_name();
    for (std::size_t i = 0; i < ex->state.robot_count(); ++i)
      by_name_[names[i]] = ex->state.robot_id()[i];
    sim_ = std::make_unique<Simulation>(std::move(*ex), *registry_);
    tick_ = sim_->model().tick_period_ns;
    sim_->start();
  }
  ~SwarmNode() override {
    try {
      sim_->finish();
    } catch (...) {
    }
  }

  void consume(std::size_t input, const time::Message& m) override {
    if (input_robot_[input] >= 0) return take_commands(input, m);
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
      pending_.push_back({m.timestamp, input, std::move(p), {}});
    }
  }

  time::Emission emit(std::size_t output, SimTime t) override {
    // Steps to t, applying the poses and commands received before the first tick that starts
    // at or after each one's timestamp (every message stamped before t has been consumed).
    while (sim_->state().tick * tick_ < t && !sim_->done()) {
      apply_due(sim_->state().tick * tick_);
      sim_->step();
      for (auto& r : external_)
        if (!r.error.empty()) throw std::runtime_error(r.error);
    }
    apply_due(sim_->state().tick * tick_);  // the world at t shows the poses placed at t
    const auto& p = periods_[output];
    const SimTime period = p[sent_[output]++ % p.size()];
    if (output_robot_[output] >= 0) return {t, period, readings(external_[output_robot_[output]])};
    std::vector<RobotPose> poses;
    const WorldState& s = sim_->state();
    const ColumnHandle zc = s.robots.find("z");
    const double* z = zc == kNoColumn ? nullptr : static_cast<const double*>(s.robots.data(zc));
    const auto& names = s.robot_name();
    for (std::size_t i = 0; i < s.robot_count(); ++i)
      poses.push_back({names[i], s.x()[i], s.y()[i], z ? z[i] : 0.0, s.theta()[i]});
    return {t, period, encode_poses(poses)};
  }

  std::uint64_t state_hash() const override { return sim_->state().hash(); }

 private:
  /// A pose (command.empty()) or an actuator command (pose.name empty) waiting for its tick.
  struct Pending {
    SimTime at;
    std::size_t input;
    RobotPose pose;
    ActuatorCommand command;
    std::size_t actuator = 0;
  };
  std::string where(std::size_t input, SimTime t) const {
    return "swarm node '" + decl_.name + "', input '" + decl_.inputs[input].name + "' (flow '" +
           input_flows_[input] + "') at " + std::to_string(t) + " ns: ";
  }
  /// The slot of external robot `name` (a checked declaration names only those).
  int external_slot(const Experiment& ex, const std::string& name) {
    for (std::size_t k = 0; k < external_.size(); ++k)
      if (external_[k].name == name) return static_cast<int>(k);
    const WorldState& s = ex.state;
    const auto& names = s.robot_name();
    for (std::size_t r = 0; r < s.robot_count(); ++r) {
      if (names[r] != name) continue;
      ExternalRobot robot;
      robot.id = s.robot_id()[r];
      robot.name = name;
      for (const PartDecl& a : ex.model->kinds[s.robot_kind()[r]].actuators)
        robot.actuators.push_back(a.name);
      robot.commands.resize(robot.actuators.size());
      if (slot_of_id_.size() <= robot.id) slot_of_id_.resize(robot.id + 1, -1);
      slot_of_id_[robot.id] = static_cast<int>(external_.size());
      external_.push_back(std::move(robot));
      return static_cast<int>(external_.size()) - 1;
    }
    throw std::logic_error("swarm node: robot '" + name + "' was checked but is not there");
  }
  void take_commands(std::size_t input, const time::Message& m) {
    ExternalRobot& r = external_[static_cast<std::size_t>(input_robot_[input])];
    std::vector<ActuatorCommand> commands;
    try {
      commands = decode_commands(m.payload);
    } catch (const std::exception& e) {
      throw std::runtime_error(where(input, m.timestamp) + e.what());
    }
    for (auto& c : commands) {
      const auto it = std::find(r.actuators.begin(), r.actuators.end(), c.actuator);
      if (it == r.actuators.end()) {
        std::string list;
        for (const auto& a : r.actuators) list += (list.empty() ? "'" : ", '") + a + "'";
        throw std::runtime_error(where(input, m.timestamp) + "robot '" + r.name +
                                 "' has no actuator '" + c.actuator + "'" +
                                 did_you_mean(c.actuator, r.actuators) +
                                 " (its actuators: " + (list.empty() ? "none" : list) + ")");
      }
      const auto k = static_cast<std::size_t>(it - r.actuators.begin());
      pending_.push_back({m.timestamp, input, {}, std::move(c), k});
    }
  }
  void apply_due(SimTime tick_start) {
    if (pending_.empty()) return;  // nothing received for an external robot: most ticks
    std::vector<Pending> later;
    for (auto& p : pending_) {
      if (p.at > tick_start) {
        later.push_back(std::move(p));
        continue;
      }
      if (input_robot_[p.input] >= 0) {  // a command: from this tick on
        auto& c = external_[static_cast<std::size_t>(input_robot_[p.input])].commands[p.actuator];
        c.given = true;
        c.bytes = std::move(p.command.bytes);
        c.origin = where(p.input, p.at);
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
  /// Robot `r`'s readings message, with the senders of its messages named.
  std::vector<std::uint8_t> readings(const ExternalRobot& r) const {
    RobotReadings out = r.readings;
    bool any = false;
    for (const auto& ids : r.sender_ids) any = any || !ids.empty();
    if (any) {
      std::map<EntityId, std::string> names;
      const WorldState& s = sim_->state();
      const auto& n = s.robot_name();
      for (std::size_t i = 0; i < s.robot_count(); ++i) names[s.robot_id()[i]] = n[i];
      for (std::size_t k = 0; k < out.sensors.size() && k < r.sender_ids.size(); ++k)
        for (std::size_t m = 0; m < out.sensors[k].messages.size(); ++m) {
          auto it = names.find(r.sender_ids[k][m]);
          if (it != names.end()) out.sensors[k].messages[m].sender = it->second;
        }
    }
    return encode_readings(out);
  }

  federation::NodeDecl decl_;
  /// The robots the ports name, and each robot id's slot among them (-1: none). Made before
  /// the run starts, never resized during it (the controllers read them from the workers).
  std::vector<ExternalRobot> external_;
  std::vector<int> slot_of_id_;
  std::unique_ptr<PluginRegistry> registry_;
  std::unique_ptr<Simulation> sim_;
  SimTime tick_ = 1;
  std::vector<std::vector<SimTime>> periods_;
  std::vector<std::uint64_t> sent_;
  std::vector<int> output_robot_, input_robot_;  ///< slot in external_, or -1 (poses)
  std::vector<std::string> input_flows_;
  std::map<std::string, EntityId> by_name_;
  std::vector<Pending> pending_;
};

}  // namespace

void check_swarm_node(const federation::Federation& fed, std::size_t node, Diagnostics& diags) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics d;
  auto ex = load_experiment(fed.nodes[node].experiment, registry, {}, d);
  if (ex) check_declaration(fed, node, *ex, d);
  for (const Diagnostic& item : d.items()) {
    if (item.severity == Diagnostic::Severity::kError)
      diags.error(item.where, item.message);
    else
      diags.warning(item.where, item.message);
  }
}

void install_swarm_nodes() {
  federation::swarm_factory() = [](const federation::Federation& fed, std::size_t node) {
    return std::make_unique<SwarmNode>(fed, node);
  };
  federation::swarm_check() = check_swarm_node;
}

}  // namespace fleetsim::distributed
