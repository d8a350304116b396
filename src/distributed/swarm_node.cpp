#include "distributed/swarm_node.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "distributed/exchanges.hpp"
#include "distributed/swarm_processes.hpp"
#include "distributed/swarm_run.hpp"
#include "distributed/tick_rounds.hpp"
#include "federation/example_nodes.hpp"
#include "fleetsim/controller.hpp"
#include "log/byte_io.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"
#include "transport/shm_transport.hpp"

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
//
// With processes="N" the experiment runs on N processes, as `fleetsim run --processes N`
// spreads it (docs/distributed.md: the same region assignment, the same exchange rounds); the
// node itself is process 0, which alone talks to the federation. Each tick gets two more
// rounds of the processes' own exchange:
//   inputs   before the tick: process 0 sends the poses and commands it applied since the
//            previous tick (the others send none), and every process applies them in the same
//            order before the tick, as the node does on one process. Its last one, after the
//            last tick, has the stop flag: every process then gathers the world and ends.
//   results  after the tick, when a port names a robot: each process sends the readings of
//            the named robots whose controllers it ran in the tick, and the error of a
//            command that did not fit their actuators; process 0 sends them to the federation.
// Messages (little-endian):
//   inputs   'I' i64 tick, u8 stop, u32 n, n x (u32 input, i64 timestamp, then for a pose
//            input: string robot, f64 x, y, z, theta; for a command input: u32 actuator,
//            u32 length, bytes)
//   results  'R' i64 tick, u32 n, n x (u32 slot of the robot among the ports' robots, string
//            error ("" when none), u32 length, a readings message, then per sensor of it u32 k,
//            k x u32 sender robot ids)

namespace {

constexpr char kInputs = 'I', kResults = 'R';

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
  // Its processes: as `fleetsim run --processes`.
  if (decl.processes > 1) {
    const std::string node_name =
        "swarm node '" + decl.name + "': processes=\"" + std::to_string(decl.processes) + "\" ";
    if (!ex.distribution.empty() &&
        ex.distribution.size() != static_cast<std::size_t>(decl.processes)) {
      d.error(decl.where, node_name + "but the <distribution> of " + decl.experiment + " (line " +
                              std::to_string(ex.distribution_where.line) + ") lists " +
                              std::to_string(ex.distribution.size()) +
                              " processes (expected processes=\"" +
                              std::to_string(ex.distribution.size()) +
                              "\", or no <distribution> for the automatic assignment)");
    } else {
      try {
        (void)assign(ex, decl.processes, "processes=");
      } catch (const std::invalid_argument& e) {
        d.error(decl.where, node_name + "cannot run: " + e.what());
      }
    }
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
/// Written between steps by the node (commands, results), and during the sense+control phase
/// by the robot's own controller step only (readings, error, stepped): one worker touches it
/// at a time. Every process of the node has one per named robot, with the same commands.
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
  std::string error;     ///< a command that does not fit its actuator (set by the step)
  bool stepped = false;  ///< its controller ran here in the last tick (set by the step)
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
    r.stepped = true;
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

/// A pose (command.empty() and pose.name set) or an actuator command (pose.name empty) for an
/// external robot, due at the first tick that starts at or after `at`.
struct ExternalInput {
  SimTime at = 0;
  std::size_t input = 0;
  RobotPose pose;
  std::vector<std::uint8_t> command;
  std::size_t actuator = 0;
};

/// One process's share of a swarm node's run (the node itself is process 0; the others are
/// its threads or child processes): the experiment with its external robots, and what every
/// process does alike with the inputs a tick is given.
class SwarmShare {
 public:
  SwarmShare(const federation::Federation& fed, std::size_t node, int process)
      : decl_(fed.nodes[node]), process_(process) {
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
    tick_ = ex->model->tick_period_ns;
    if (decl_.processes > 1) owner_ = assign(*ex, decl_.processes, "processes=");
    Distribution pins;  // (only to ask whether the experiment pins robots to processes)
    pins.kind_process = ex->kind_affinity;
    pins.robot_process = ex->robot_affinity;
    affinities_ = pins.has_affinities();
    experiment_ = std::make_unique<Experiment>(std::move(*ex));
  }

  /// The rounds of the processes' exchange in each tick: the simulation's (handoff, moves,
  /// and with affinities the actuation), then the inputs and, when a port names a robot, the
  /// results.
  int rounds_per_tick() const {
    return simulation_rounds_per_tick(affinities_) + 1 + (external_.empty() ? 0 : 1);
  }

  /// Makes the run and starts it; `exchange` joins the processes when there are several.
  void start(Exchange* exchange) {
    Distribution d;
    if (decl_.processes > 1) {
      d.process = process_;
      d.processes = decl_.processes;
      d.engine_process = owner_.region_process;
      d.domains = owner_.domains;
      d.kind_process = experiment_->kind_affinity;
      d.robot_process = experiment_->robot_affinity;
      d.exchange = exchange;
      d.make_rounds = make_tick_rounds;
    }
    sim_ = std::make_unique<Simulation>(std::move(*experiment_), *registry_, d);
    experiment_.reset();
    sim_->start();
  }
  Simulation& sim() { return *sim_; }
  const Simulation& sim() const { return *sim_; }
  bool started() const { return sim_ != nullptr; }
  SimTime tick_ns() const { return tick_; }
  int processes() const { return decl_.processes; }
  const federation::NodeDecl& decl() const { return decl_; }
  /// The names of the regions process `p` simulates.
  std::string regions_of(int p) const {
    std::string out;
    if (!sim_) return out;
    for (const auto& name : region_names(sim_->model(), owner_, p))
      out += (out.empty() ? "" : ", ") + name;
    return out;
  }

  std::string where(std::size_t input, SimTime t) const {
    return "swarm node '" + decl_.name + "', input '" + decl_.inputs[input].name + "' (flow '" +
           input_flows_[input] + "') at " + std::to_string(t) + " ns: ";
  }

  /// Process 0: the inputs in a message the node consumed, checked, in their order.
  std::vector<ExternalInput> decode_message(std::size_t input, const time::Message& m) const {
    std::vector<ExternalInput> out;
    if (input_robot_[input] >= 0) {
      const ExternalRobot& r = external_[static_cast<std::size_t>(input_robot_[input])];
      for (auto& c : decoded(input, m, decode_commands)) {
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
        out.push_back({m.timestamp, input, {}, std::move(c.bytes), k});
      }
      return out;
    }
    for (auto& p : decoded(input, m, decode_poses)) {
      if (!by_name_.count(p.name))
        throw std::runtime_error(where(input, m.timestamp) + "no robot '" + p.name + "' in " +
                                 decl_.experiment);
      out.push_back({m.timestamp, input, std::move(p), {}, 0});
    }
    return out;
  }

  /// Places the robot or sets the command, between two ticks: the same on every process.
  void apply(const ExternalInput& in) {
    if (input_robot_[in.input] >= 0) {  // a command: from this tick on
      auto& c = external_[static_cast<std::size_t>(input_robot_[in.input])].commands[in.actuator];
      c.given = true;
      c.bytes = in.command;
      c.origin = where(in.input, in.at);
      return;
    }
    const RobotPose& p = in.pose;
    const Vec2 lo = sim_->model().arena_min(), hi = sim_->model().arena_max();
    if (!(p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y))
      throw std::runtime_error(where(in.input, in.at) + "robot '" + p.name + "' at (" +
                               std::to_string(p.x) + ", " + std::to_string(p.y) +
                               ") is outside the arena (robots stay inside it)");
    sim_->place_robot(by_name_.at(p.name), {p.x, p.y}, p.theta, p.z);
  }

  /// The inputs round, before a tick (or, with `stop`, after the last): process 0 sends
  /// `inputs`, which every other process applies. Returns the stop flag process 0 sent.
  bool inputs_round(const std::vector<ExternalInput>& inputs, bool stop) {
    std::vector<std::uint8_t> out;
    log::ByteWriter w(out);
    w.u8(kInputs);
    w.i64(sim_->state().tick);
    w.u8(process_ == 0 && stop ? 1 : 0);
    w.u32(process_ == 0 ? static_cast<std::uint32_t>(inputs.size()) : 0);
    if (process_ == 0)
      for (const ExternalInput& in : inputs) {
        w.u32(static_cast<std::uint32_t>(in.input));
        w.i64(in.at);
        if (input_robot_[in.input] >= 0) {
          w.u32(static_cast<std::uint32_t>(in.actuator));
          w.u32(static_cast<std::uint32_t>(in.command.size()));
          w.raw(in.command.data(), in.command.size());
        } else {
          w.str(in.pose.name);
          for (double v : {in.pose.x, in.pose.y, in.pose.z, in.pose.theta}) w.f64(v);
        }
      }
    auto all = gather(std::move(out));
    bool stopped = false;
    for (int p = 0; p < processes(); ++p) {
      if (p == process_) continue;
      try {
        log::ByteReader r(all[p].data(), all[p].size(), "an inputs message");
        if (r.u8() != kInputs || r.i64() != sim_->state().tick)
          throw log::LogError("a message of another kind or tick");
        const std::uint8_t flag = r.u8();
        if (flag > 1 || (flag != 0 && p != 0)) throw log::LogError("unknown flags");
        if (p == 0) stopped = flag != 0;
        const std::uint32_t n = r.u32();
        if (n != 0 && p != 0) throw log::LogError("inputs from another process than 0");
        for (std::uint32_t k = 0; k < n; ++k) apply(read_input(r));
        if (r.remaining() != 0) throw log::LogError("trailing bytes");
      } catch (const log::LogError& e) {
        throw RunError(process_text(process_) + "process " + std::to_string(p) +
                       " sent a malformed inputs message (" + e.what() + ")");
      }
    }
    return process_ == 0 ? stop : stopped;
  }

  /// The results round after a tick (when a port names a robot): process 0 takes the readings
  /// of the named robots other processes stepped; then throws the first robot's command
  /// error, in the ports' order, as on one process.
  void results_round() {
    if (external_.empty()) return;
    if (processes() > 1) {
      std::vector<std::uint8_t> out;
      log::ByteWriter w(out);
      w.u8(kResults);
      w.i64(sim_->state().tick);
      std::vector<std::size_t> mine;
      for (std::size_t k = 0; k < external_.size(); ++k)
        if (external_[k].stepped && (external_[k].wants_readings || !external_[k].error.empty()))
          mine.push_back(k);
      w.u32(static_cast<std::uint32_t>(process_ == 0 ? 0 : mine.size()));
      if (process_ != 0)
        for (std::size_t k : mine) {
          const ExternalRobot& r = external_[k];
          w.u32(static_cast<std::uint32_t>(k));
          w.str(r.error);
          const auto bytes = encode_readings(r.readings);
          w.u32(static_cast<std::uint32_t>(bytes.size()));
          w.raw(bytes.data(), bytes.size());
          for (std::size_t s = 0; s < r.readings.sensors.size(); ++s) {
            const auto& ids = s < r.sender_ids.size() ? r.sender_ids[s] : std::vector<EntityId>{};
            w.u32(static_cast<std::uint32_t>(ids.size()));
            for (EntityId id : ids) w.u32(id);
          }
        }
      auto all = gather(std::move(out));
      std::vector<int> from(external_.size(), -1);
      for (std::size_t k = 0; k < external_.size(); ++k)
        if (external_[k].stepped) from[k] = 0;
      for (int p = 1; p < processes() && process_ == 0; ++p) {
        try {
          take_results(all[p], p, from);
        } catch (const std::exception& e) {
          throw RunError(process_text(0) + "process " + std::to_string(p) +
                         " sent a malformed results message (" + e.what() + ")");
        }
      }
    }
    for (auto& r : external_) r.stepped = false;
    if (process_ != 0) return;  // (process 0 stops the run: the others then see it leave)
    for (auto& r : external_)
      if (!r.error.empty()) throw std::runtime_error(r.error);
  }

  /// The pose message of every robot, or output `output`'s robot's readings.
  std::vector<std::uint8_t> output_message(std::size_t output) const {
    if (output_robot_[output] >= 0)
      return readings(external_[static_cast<std::size_t>(output_robot_[output])]);
    std::vector<RobotPose> poses;
    const WorldState& s = sim_->state();
    const ColumnHandle zc = s.robots.find("z");
    const double* z = zc == kNoColumn ? nullptr : static_cast<const double*>(s.robots.data(zc));
    const auto& names = s.robot_name();
    for (std::size_t i = 0; i < s.robot_count(); ++i)
      poses.push_back({names[i], s.x()[i], s.y()[i], z ? z[i] : 0.0, s.theta()[i]});
    return encode_poses(poses);
  }

 private:
  /// `decode`(m's payload); what does not fit names the input, its flow and the time.
  template <class Decode>
  auto decoded(std::size_t input, const time::Message& m, Decode decode) const
      -> decltype(decode(m.payload)) {
    try {
      return decode(m.payload);
    } catch (const std::exception& e) {
      throw std::runtime_error(where(input, m.timestamp) + e.what());
    }
  }
  std::string process_text(int p) const {
    return "swarm node '" + decl_.name + "', process " + std::to_string(p) + ": ";
  }
  std::vector<std::vector<std::uint8_t>> gather(std::vector<std::uint8_t> mine) {
    auto all = sim_->distribution().exchange->all_gather(std::move(mine));
    if (all.size() != static_cast<std::size_t>(processes()))
      throw RunError("the exchange returned " + std::to_string(all.size()) + " messages for " +
                     std::to_string(processes()) + " processes");
    return all;
  }
  /// One input of an inputs message, checked against this node's ports and robots.
  ExternalInput read_input(log::ByteReader& r) const {
    ExternalInput in;
    in.input = r.u32();
    in.at = r.i64();
    if (in.input >= input_robot_.size()) throw log::LogError("an unknown input");
    if (const int slot = input_robot_[in.input]; slot >= 0) {
      in.actuator = r.u32();
      if (in.actuator >= external_[static_cast<std::size_t>(slot)].actuators.size())
        throw log::LogError("an unknown actuator");
      const std::size_t n = r.count(r.u32(), 1);
      const std::uint8_t* bytes = r.take(n);
      in.command.assign(bytes, bytes + n);
    } else {
      in.pose.name = r.str();
      if (!by_name_.count(in.pose.name)) throw log::LogError("an unknown robot");
      in.pose.x = r.f64();
      in.pose.y = r.f64();
      in.pose.z = r.f64();
      in.pose.theta = r.f64();
    }
    return in;
  }
  /// Process 0: process p's results; `from`: per slot, the process whose results it has.
  void take_results(const std::vector<std::uint8_t>& bytes, int p, std::vector<int>& from) {
    log::ByteReader r(bytes.data(), bytes.size(), "a results message");
    if (r.u8() != kResults || r.i64() != sim_->state().tick)
      throw log::LogError("a message of another kind or tick");
    for (std::uint32_t n = r.u32(); n > 0; --n) {
      const std::uint32_t k = r.u32();
      if (k >= external_.size() || from[k] >= 0)
        throw log::LogError("a robot it did not step, or one another process stepped");
      from[k] = p;
      ExternalRobot& robot = external_[k];
      robot.error = r.str();
      const std::size_t len = r.count(r.u32(), 1);
      const std::uint8_t* payload = r.take(len);
      robot.readings = decode_readings({payload, payload + len});
      robot.sender_ids.assign(robot.readings.sensors.size(), {});
      for (std::size_t s = 0; s < robot.readings.sensors.size(); ++s) {
        const std::size_t m = r.count(r.u32(), 4);
        if (m != robot.readings.sensors[s].messages.size())
          throw log::LogError("another number of senders than messages");
        robot.sender_ids[s].resize(m);
        for (EntityId& id : robot.sender_ids[s]) id = r.u32();
      }
    }
    if (r.remaining() != 0) throw log::LogError("trailing bytes");
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
  int process_ = 0;
  /// The robots the ports name, and each robot id's slot among them (-1: none). Made before
  /// the run starts, never resized during it (the controllers read them from the workers).
  std::vector<ExternalRobot> external_;
  std::vector<int> slot_of_id_;
  std::unique_ptr<PluginRegistry> registry_;
  std::unique_ptr<Experiment> experiment_;  ///< until start()
  std::unique_ptr<Simulation> sim_;
  SimTime tick_ = 1;
  Assignment owner_;                             ///< which process simulates what (processes > 1)
  bool affinities_ = false;                      ///< robots pinned to processes: one more round
  std::vector<int> output_robot_, input_robot_;  ///< slot in external_, or -1 (poses)
  std::vector<std::string> input_flows_;
  std::map<std::string, EntityId> by_name_;
};

/// Process p (>= 1) of a swarm node, on `port`, to the end: each tick as process 0 announces
/// it, to the stop. Returns "" when it ended well, else "error: WHY" (it failed by itself) or
/// "stopped: WHY" (another process failed or left).
std::string run_share_on(SwarmShare& share, transport::Port& port, int p) {
  std::unique_ptr<PortExchange> exchange;
  try {
    exchange = make_exchange(SyncMode::kDsaam, port, p, share.processes(), share.tick_ns(),
                             share.rounds_per_tick());
    share.start(exchange.get());
    while (!share.inputs_round({}, false)) {
      share.sim().step();
      share.results_round();
    }
    share.sim().gather_state();
    share.sim().finish();
    port.close();
    return "";
  } catch (const transport::PeerLost& e) {
    return std::string("stopped: ") + e.what();
  } catch (const transport::FederationStopped& e) {
    return std::string("stopped: ") + e.what();
  } catch (const std::exception& e) {
    // (A peer's loss may arrive wrapped in the phase's error: the exchange remembers it.)
    return (exchange && exchange->peer_failed() ? "stopped: " : "error: ") + std::string(e.what());
  }
}

class SwarmNode final : public time::NodeBehaviour {
 public:
  SwarmNode(const federation::Federation& fed, std::size_t node,
            const federation::SwarmNodeRuntime& runtime)
      : fed_(fed) {
    share_ = std::make_unique<SwarmShare>(fed_, node, 0);
    for (std::size_t o = 0; o < fed_.nodes[node].outputs.size(); ++o) {
      periods_.push_back(fed_.flow_from(node, o).periods);
      sent_.push_back(0);
    }
    if (share_->processes() > 1) {
      processes_ = std::make_unique<SwarmProcesses>(fed_, node, runtime, share_->tick_ns(),
                                                    [this, node](int p, transport::Port& port) {
                                                      SwarmShare share(fed_, node, p);
                                                      return run_share_on(share, port, p);
                                                    });
      exchange_ = make_exchange(SyncMode::kDsaam, processes_->port(), 0, share_->processes(),
                                share_->tick_ns(), share_->rounds_per_tick());
    }
    guarded([&] { share_->start(exchange_.get()); });
  }
  ~SwarmNode() override {
    try {
      if (share_->started()) share_->sim().finish();
    } catch (...) {
    }
  }

  void consume(std::size_t input, const time::Message& m) override {
    for (auto& in : share_->decode_message(input, m)) pending_.push_back(std::move(in));
  }

  time::Emission emit(std::size_t output, SimTime t) override {
    // Steps to t, applying the poses and commands received before the first tick that starts
    // at or after each one's timestamp (every message stamped before t has been consumed).
    Simulation& sim = share_->sim();
    const SimTime tick = share_->tick_ns();
    if (processes_) processes_->check([this](int p) { return share_->regions_of(p); });
    guarded([&] {
      while (sim.state().tick * tick < t && !sim.done()) {
        apply_due(sim.state().tick * tick);
        if (exchange_) share_->inputs_round(forward_, false);
        forward_.clear();
        sim.step();
        share_->results_round();
      }
    });
    apply_due(sim.state().tick * tick);  // the world at t shows the poses placed at t
    const auto& p = periods_[output];
    const SimTime period = p[sent_[output]++ % p.size()];
    return {t, period, share_->output_message(output)};
  }

  void finish() override {
    if (!exchange_) return;
    // The last inputs reach every process, which then brings the whole world to each.
    guarded([&] {
      share_->inputs_round(forward_, true);
      forward_.clear();
      share_->sim().gather_state();
    });
    processes_->end();
  }

  std::uint64_t state_hash() const override { return share_->sim().state().hash(); }

 private:
  /// Runs `f`; a failure caused by another of the node's processes names that process and
  /// its own error.
  template <class F>
  void guarded(F f) {
    try {
      f();
    } catch (const std::exception&) {
      if (!exchange_ || !exchange_->peer_failed()) throw;
      const std::string why = processes_->failure([this](int p) { return share_->regions_of(p); });
      if (why.empty()) throw;
      throw std::runtime_error(why);
    }
  }
  void apply_due(SimTime tick_start) {
    if (pending_.empty()) return;  // nothing received for an external robot: most ticks
    std::vector<ExternalInput> later;
    for (auto& p : pending_) {
      if (p.at > tick_start) {
        later.push_back(std::move(p));
        continue;
      }
      share_->apply(p);
      if (exchange_) forward_.push_back(std::move(p));
    }
    pending_ = std::move(later);
  }

  /// A copy: the node's processes read it while they run.
  federation::Federation fed_;
  std::unique_ptr<SwarmProcesses> processes_;  ///< processes 1..N-1 (processes > 1)
  std::unique_ptr<PortExchange> exchange_;     ///< process 0's, among them
  std::unique_ptr<SwarmShare> share_;
  std::vector<std::vector<SimTime>> periods_;
  std::vector<std::uint64_t> sent_;
  std::vector<ExternalInput> pending_;  ///< received, not yet due
  /// Applied here since the last inputs round: the other processes apply them at the next.
  std::vector<ExternalInput> forward_;
};

/// Process `process` of swarm node `node`, a child process of the node (SwarmProcesses): its
/// failure goes to stdout as one line for the node ("error: ..." when it failed by itself).
int run_swarm_process(const federation::Federation& fed, std::size_t node, int process,
                      std::uint64_t run_id, std::uint32_t jitter_us) {
  std::string line;
  try {
    SwarmShare share(fed, node, process);
    transport::PortOptions po;
    po.jitter_us = jitter_us;
    po.run_id = run_id;
    po.log = log_refusal;
    auto port =
        open_process_port(make_swarm_layout(SyncMode::kDsaam, share.processes(), share.tick_ns()),
                          process, transport::Carrier::kShm, std::move(po));
    line = run_share_on(share, *port, process);
  } catch (const std::exception& e) {
    line = std::string("error: ") + e.what();
  }
  if (line.empty()) return kExitOk;
  for (char& c : line)
    if (c == '\n') c = ' ';
  line += "\n";
  (void)!write(1, line.data(), line.size());
  return kExitRuntimeError;
}

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
  federation::swarm_factory() = [](const federation::Federation& fed, std::size_t node,
                                   const federation::SwarmNodeRuntime& runtime) {
    return std::make_unique<SwarmNode>(fed, node, runtime);
  };
  federation::swarm_check() = check_swarm_node;
  federation::swarm_process_main() = run_swarm_process;
}

}  // namespace fleetsim::distributed
