#include "cli/run_command.hpp"

#include <unistd.h>

#include <sys/resource.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/diagnostics.hpp"
#include "core/hash.hpp"
#include "distributed/mpi_run.hpp"
#include "distributed/network_run.hpp"
#include "distributed/swarm_run.hpp"
#include "plugins/builtins.hpp"
#include "ros2/ros2_inputs.hpp"
#include "sim/checkpoint.hpp"
#include "sim/interventions.hpp"
#include "sim/simulation.hpp"
#include "time/pacer.hpp"
#ifdef FLEETSIM_HAVE_ROS2
#include "ros2/ros2_bridge.hpp"
#endif
#ifdef FLEETSIM_HAVE_VIEWER
#include "view/frame_encoding.hpp"
#include "view/live_view.hpp"
#include "view/picture_files.hpp"
#endif

namespace fleetsim::cli {

using distributed::LoadedExperiment;

namespace {

#ifdef FLEETSIM_HAVE_VIEWER
/// Robot `id` as the run holds it between steps, for the live view's robot panel
/// (`/api/robot-now`): {"robot", "tick", "columns": {NAME: value or [values]} (every column but
/// names and tags; at most 64 values each, "truncated" lists the longer), "globals": {NAME:
/// VALUE} of its Lua script or null with "why"}.
std::string robot_now_json(const Simulation& sim, EntityId id) {
  const WorldState& s = sim.state();
  nlohmann::json j = {{"robot", id}, {"tick", s.tick}};
  const std::uint32_t row = s.robot_index(id);
  if (row == kNoIndex) {
    j["error"] = "there is no robot with id " + std::to_string(id);
    return j.dump();
  }
  nlohmann::json columns = nlohmann::json::object(), truncated = nlohmann::json::array();
  const auto& schema = s.robots.schema();
  for (ColumnHandle c = 0; c < schema.size(); ++c) {
    const ColumnDesc& d = schema[c];
    if (d.type == ColumnType::kString || d.type == ColumnType::kTag) continue;
    const std::size_t n = std::min<std::size_t>(d.width, 64);
    if (n < d.width) truncated.push_back(d.name);
    const auto* base = static_cast<const std::uint8_t*>(s.robots.data(c)) + row * d.row_bytes();
    nlohmann::json values = nlohmann::json::array();
    for (std::size_t k = 0; k < n; ++k)
      values.push_back(view::element_json(d, base + k * d.element_bytes(), {}));
    columns[d.name] = d.width == 1 && !values.empty() ? values[0] : values;
  }
  j["columns"] = columns;
  if (!truncated.empty()) j["truncated"] = truncated;
  if (auto* g = dynamic_cast<ScriptGlobals*>(sim.controller_between_steps(id))) {
    nlohmann::json globals = nlohmann::json::object();
    for (const auto& [name, value] : g->script_globals())
      globals[name] = nlohmann::json::parse(value.json(), nullptr, false);
    j["globals"] = globals;
  } else {
    j["globals"] = nullptr;
    const int p = sim.controller_process(id);
    j["why"] = p != sim.distribution().process
                   ? fmt::format(
                         "its controller runs on process {}, not on the one serving the "
                         "view",
                         p)
                   : "its controller is not a Lua script (it has no script globals)";
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
#endif

}  // namespace

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
}

ExperimentOverrides overrides_of(const RunArgs& a) {
  ExperimentOverrides o;
  o.threads = a.threads;
  o.seed = a.seed;
  o.length_s = a.length;
  o.log_path = a.log_path;
  if (a.log_format == "deeco") o.log_format = log::LogFormat::kDeeco;
  if (a.log_format == "frames") o.log_format = log::LogFormat::kFrames;
  // A run on several processes or ranks places its robots once each process knows its
  // domain: a process of a partitioned run then places only its part (docs/distributed.md).
  o.defer_placement = (a.processes > 1 || distributed::mpi_launched()) && a.network_role.empty();
  return o;
}

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  void update(Tick tick, Tick total, double rtf) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    double since_start = std::chrono::duration<double>(now - start_).count();
    if (since_start < 1.0 || std::chrono::duration<double>(now - last_).count() < 0.1) return;
    last_ = now;
    shown_ = true;
    const int width = 30;
    double frac = total > 0 ? static_cast<double>(tick) / static_cast<double>(total) : 0;
    int filled = static_cast<int>(frac * width);
    std::string bar(static_cast<std::size_t>(filled), '=');
    bar.resize(width, ' ');
    if (total > 0) {
      double eta = frac > 0 ? since_start * (1 - frac) / frac : 0;
      std::fprintf(stderr, "\r[%s] %3d%%  tick %lld/%lld  %.1fx real time  eta %.0fs ", bar.c_str(),
                   static_cast<int>(frac * 100), static_cast<long long>(tick),
                   static_cast<long long>(total), rtf, eta);
    } else {
      std::fprintf(stderr, "\rtick %lld  %.1fx real time ", static_cast<long long>(tick), rtf);
    }
    std::fflush(stderr);
  }
  void done() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", 78, "");
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/// `text` as one word of a POSIX shell: as it is when it holds only characters no shell
/// treats specially, else in single quotes.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_-./:=@%+,", c);
  });
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Standard error muted while it lives (the ranks of an MPI job but rank 0, loading files that
/// rank 0 loads too: their problems are printed once).
class MutedErrors {
 public:
  explicit MutedErrors(bool mute) : saved_(mute ? std::cerr.rdbuf(nullptr) : nullptr) {}
  ~MutedErrors() {
    if (saved_) {
      std::cerr.rdbuf(saved_);
      std::cerr.clear();
    }
  }
  MutedErrors(const MutedErrors&) = delete;
  MutedErrors& operator=(const MutedErrors&) = delete;

 private:
  std::streambuf* saved_;
};

/// Whether this process is a rank of an MPI job other than rank 0.
/// The first footbot_gripper of a kind in the run, or null.
const PartDecl* find_gripper(const WorldModel& model) {
  for (const RobotKind& k : model.kinds)
    if (k.in_run)
      for (const PartDecl& p : k.actuators)
        if (p.type == "footbot_gripper") return &p;
  return nullptr;
}

bool silent_rank() {
  return distributed::mpi_launched() && distributed::mpi_launched_rank() != 0;
}

/// "process P (REGION, REGION)" for process report `r`, in messages and the summary.
std::string process_and_regions(const distributed::ProcessReport& r) {
  std::string regions;
  for (const auto& n : r.regions) regions += (regions.empty() ? "" : ", ") + n;
  return "process " + std::to_string(r.process) + " (" + regions + ")";
}

/// A failed process's error, naming it and its regions.
std::string describe(const distributed::ProcessReport& r) {
  return process_and_regions(r) + ": " + r.error;
}

/// Runs one experiment file, however the options place its processes. The hooks (progress,
/// pacing, Ctrl-C, the ROS 2 bridge) run on process 0, the same on one process as on several.
/// Throws std::invalid_argument for a user error found before the run, std::runtime_error
/// when the processes cannot be started.
std::vector<distributed::ProcessReport> run_file(const RunArgs& a, const std::string& file,
                                                 std::optional<LoadedExperiment> preloaded,
                                                 const std::shared_ptr<const Checkpoint>& resume,
                                                 SimTime& tick_ns, std::vector<std::string>& logs) {
  using namespace distributed;
  SwarmRunOptions o;
  o.processes = a.processes;  // (a network run and an MPI job set their own)
  o.transport = a.transport == "inproc" ? TransportKind::kInproc
                : a.transport == "tcp"  ? TransportKind::kTcp
                : a.transport == "ipc"  ? TransportKind::kIpc
                                        : TransportKind::kShm;
  o.sync = a.sync == "lockstep" ? SyncMode::kLockstep : SyncMode::kDsaam;
  o.jitter_us = a.jitter_us;
  o.checkpoint_every_s = a.checkpoint_every;
  o.checkpoint_dir = a.checkpoint_dir;
  o.resume = resume;
  time::TimeMode mode = time::TimeMode::kAsFastAsPossible;
  time::parse_time_mode(a.time_mode, mode);
  o.pacing = time::Pacer(mode, a.speedup, [](const std::string& line) {
    std::cerr << "\nfleetsim: " << line << "\n";
  });
  ProgressBar bar(!a.quiet);
  Tick from = 0;
  auto loop0 = std::chrono::steady_clock::now();
  o.on_start = [&](Tick t) {
    from = t;
    loop0 = std::chrono::steady_clock::now();
  };
  o.on_tick = [&](Tick tick, Tick total) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - loop0).count();
    const double simsec = static_cast<double>((tick - from) * tick_ns) / 1e9;
    bar.update(tick, total, wall > 0 ? simsec / wall : 0);
    return !g_interrupted.load();
  };
  o.on_wait = [] { return !g_interrupted.load(); };
#ifdef FLEETSIM_HAVE_VIEWER
  // --view: the run's frames go to the live view as to a log of its own; it serves them from
  // its thread, and holds the run before each step while it is paused or paced.
  std::unique_ptr<view::LiveView> live;
  if (a.view && a.network_role == "secondary")
    throw std::invalid_argument(
        "--view goes to the primary of a network run (it serves the page, and tells the "
        "secondaries): drop --view here");
  // (Under mpirun rank 0 serves the view; in a network run, the primary.)
  if (a.view && !silent_rank()) {
    view::LiveView::Options vo;
    vo.host = a.view_host;
    vo.port = a.view_port;
    vo.run.paused = a.view_paused;
    if (a.view_speed != "max") {
      std::size_t used = 0;
      double speed = 0;
      try {
        speed = std::stod(a.view_speed, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != a.view_speed.size() || !(speed > 0) || !std::isfinite(speed))
        throw std::invalid_argument("--view-speed '" + a.view_speed +
                                    "': expected max or a number > 0 (1 = real time)");
      vo.run.speed = speed;
    }
    live = std::make_unique<view::LiveView>(vo, [](const std::string& message) {
      std::cerr << "\nfleetsim run: view: " << message << std::endl;
    });
    o.before_start = [&live](Simulation& sim) {
      // What a page may add: the kinds of the run and its controllers (Intervention's add).
      std::vector<std::string> kinds, controllers;
      for (const RobotKind& k : sim.model().kinds)
        if (k.in_run) kinds.push_back(k.name);
      for (const ControllerDecl& c : sim.model().controllers) controllers.push_back(c.id);
      live->run().set_addable(std::move(kinds), std::move(controllers));
      sim.observe_frames(&live->run());
    };
    o.on_start = [&, inner = o.on_start](Tick t) {
      live->serve(file, std::cout, std::cerr);
      inner(t);
    };
  }
#endif
#ifdef FLEETSIM_HAVE_VIEWER
  // --render-png, --render-video: the run's frames painted as they come, as `fleetsim render`
  // paints a log's (the simulation hands them over as to a log of its own).
  std::unique_ptr<view::FramePictures> pictures;
  if (!a.render_png.empty() || !a.render_video.empty()) {
    if (a.view || a.processes > 1 || !a.network_role.empty() || distributed::mpi_launched())
      throw std::invalid_argument(
          "--render-png and --render-video paint a run of one process without --view for now "
          "(render its log afterwards: fleetsim render LOG)");
    view::RenderOptions ro;
    ro.png = a.render_png;
    ro.video = a.render_video;
    ro.every = a.render_every;
    ro.fps = a.render_fps;
    const auto x = a.render_size.find('x');
    try {
      std::size_t used = 0;
      ro.width = std::stoi(a.render_size.substr(0, x), &used);
      if (used != x) throw std::invalid_argument("");
      ro.height = std::stoi(a.render_size.substr(x + 1), &used);
      if (used != a.render_size.size() - x - 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
      ro.width = 0;
    }
    if (x == std::string::npos || ro.width < 16 || ro.height < 16 || ro.width > 16384 ||
        ro.height > 16384 || (!ro.video.empty() && (ro.width % 2 || ro.height % 2)))
      throw std::invalid_argument("--render-size '" + a.render_size +
                                  "' (expected WIDTHxHEIGHT in pixels, 16 to 16384 each, even "
                                  "for a video)");
    if (!ro.png.empty()) {
      const auto pattern = view::parse_name_pattern(ro.png);
      if (!pattern)
        throw std::invalid_argument("--render-png '" + ro.png +
                                    "' (expected a file name with one frame-number field, such "
                                    "as frames/frame_%06d.png)");
      const auto dir = std::filesystem::path(pattern->name(0)).parent_path();
      std::error_code ec;
      if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    }
    if (!a.render_config.empty()) {
      Diagnostics diags;
      auto config = view::load_view_config(a.render_config, diags);
      diags.print(std::cerr);
      if (!config) throw std::invalid_argument("the view configuration has errors");
      ro.config = std::move(*config);
    }
    pictures = std::make_unique<view::FramePictures>(std::move(ro));
    o.before_start = [&pictures, inner = o.before_start](Simulation& sim) {
      if (inner) inner(sim);
      sim.observe_frames(pictures.get());
    };
  }
#endif
  // Several processes with --ros2: every process lands the commands process 0 announced.
  std::function<void(Simulation&, const std::string& lines)> land_ros_announced;
  std::mutex ros_drivers_mutex;
  std::map<int, std::unique_ptr<ros2::VelocityDriver>> ros_drivers;  // by process
#ifdef FLEETSIM_HAVE_ROS2
  std::unique_ptr<ros2::Bridge> ros;          // made on the first step, with the started simulation
  std::vector<ros2::RosterRobot> ros_roster;  // several processes: every robot, as loaded
  const bool ros_several = a.processes > 1 || distributed::mpi_launched();
  std::set<Tick> ros_whole_at;  // process 0: the ticks whose whole frame it asked for
  std::mutex ros_parts_mutex;
  std::map<int, std::unique_ptr<ros2::Bridge>> ros_parts;  // several processes: by process
  if (a.ros2) {
    ros2::BridgeOptions bo;
    bo.domain = a.ros2_domain;
    bo.ns = a.ros2_namespace;
    ros2::parse_distro(a.ros2_distro, bo.distro);  // (checked by the command line)
    bo.robots = a.ros2_robots;
    bo.rate_hz = a.ros2_rate;
    bo.record_inputs = a.record_inputs
                           ? *a.record_inputs
                           : std::filesystem::path(file).stem().string() + ".ros2-inputs";
    if (!ros_several) {
      o.before_step = [&, bo](Simulation& sim) {
        if (!ros) {
          ros = std::make_unique<ros2::Bridge>(sim, bo);
          if (!a.quiet) std::cerr << ros->describe() << "\n";
          ros->publish();
        }
        // A tick boundary: the commands received so far take effect from this step on.
        ros->take_commands();
      };
      o.after_step = [&](Simulation&) { ros->publish(); };
    } else {
      // Several processes: each process has a bridge of its own (a DDS participant, node /NS on
      // process 0 and /NS_pK on process K) with the writers of every robot of the run as
      // loaded, and publishes the robots whose controllers it runs after each step: no
      // process gathers the world for it. Process 0 takes the commands: they go to every
      // process with this tick's moves and land at the next tick boundary on the process
      // running each robot's controller (ros2_inputs.hpp). Only while /NS/poses has a
      // subscriber does process 0 ask for the whole world, two ticks ahead of each tick it
      // publishes at (Simulation::request_whole_frame).
      auto part = [&, bo](Simulation& sim) -> ros2::Bridge& {
        const int p = sim.distribution().process;
        std::lock_guard lock(ros_parts_mutex);
        auto& b = ros_parts[p];  // (a map's elements stay put)
        if (!b) {
          ros2::BridgeOptions po = bo;
          po.process = p;
          po.roster = ros_roster;
          if (p == 0)
            po.announce = [&sim](EntityId id, const ros2::VelocityInput& i) {
              sim.announce_interventions(ros2::format_announced_input(id, i) + "\n");
            };
          b = std::make_unique<ros2::Bridge>(sim, po);
          if (p == 0 && !a.quiet) std::cerr << b->describe() << "\n";
        }
        return *b;
      };
      o.before_step = [&, part](Simulation& sim) {
        ros2::Bridge& b = part(sim);
        b.take_commands();
        const Tick tick = sim.state().tick;
        if (b.wants_whole_frame() && b.publishes_robots_at(tick + 2)) {
          sim.request_whole_frame(/*rows=*/true);  // (/NS/poses reads process 0's world)
          ros_whole_at.insert(tick + 2);
        }
      };
      o.each_after_step = [&, part](Simulation& sim) {
        const bool whole =
            sim.distribution().process == 0 && ros_whole_at.erase(sim.state().tick) > 0;
        part(sim).publish(whole);
      };
      // Every process lands the commands announced, keeps them for robots that come to it,
      // and writes them before every step into the robots whose controllers it runs.
      land_ros_announced = [&ros_drivers, &ros_drivers_mutex](Simulation& sim,
                                                              const std::string& lines) {
        ros2::VelocityDriver* driver = nullptr;
        {
          std::lock_guard lock(ros_drivers_mutex);
          auto& d = ros_drivers[sim.distribution().process];  // (a map's elements stay put)
          if (!d) d = std::make_unique<ros2::VelocityDriver>(sim);
          driver = d.get();
        }
        std::istringstream in(lines);
        for (std::string line; std::getline(in, line);) {
          EntityId id = 0;
          ros2::VelocityInput i;
          if (!ros2::parse_announced_input(line, id, i))
            throw RunError("a ROS 2 command announced by process 0 does not read back: " + line);
          if (i.tick != sim.state().tick)
            throw RunError(fmt::format("a ROS 2 command announced for tick {} came at tick {}",
                                       i.tick, sim.state().tick));
          driver->take(id, i.linear_x, i.angular_z);
        }
        driver->apply();
      };
    }
  }
#endif
  // --replay-inputs: recorded ROS 2 commands, each at its tick boundary (ros2_inputs.hpp).
  std::shared_ptr<ros2::InputReplay> inputs;
  if (!a.replay_inputs.empty()) {
    Diagnostics diags;
    auto loaded = ros2::load_velocity_inputs(a.replay_inputs, diags);
    diags.print(std::cerr);
    if (!loaded) throw std::invalid_argument("the ROS 2 inputs file has errors");
    inputs = std::make_shared<ros2::InputReplay>(a.replay_inputs, std::move(*loaded));
    o.before_step = [inputs, inner = o.before_step](Simulation& sim) {
      inputs->before_step(sim);
      if (inner) inner(sim);
    };
  }
  std::function<void(Simulation&, const std::string& lines)> land_interventions_announced;
  // Several processes (--processes, mpirun): the interventions land alike on every process,
  // at the tick boundary the first process announced them for. A replayed file, and
  // --view-steer, have every process hold every robot (Distribution::every_robot_everywhere);
  // without, a run split so that each process holds its part refuses them.
  const bool several = a.processes > 1 || distributed::mpi_launched() || !a.network_role.empty();
  // (A network run's secondaries take these two from the primary's welcome.)
  o.interventions = several && (a.view || !a.interventions.empty());
  o.every_robot_everywhere = several && (a.view_steer || !a.interventions.empty());
  // --interventions: each lands at its tick boundary, before the step from that tick.
  std::vector<Intervention> replay;
  if (!a.interventions.empty()) {
    if (!a.network_role.empty())
      throw std::invalid_argument(
          "--interventions replays on this machine's processes or an MPI job's ranks only for "
          "now (not with --network-role)");
    Diagnostics diags;
    auto loaded = load_interventions(a.interventions, diags);
    if (!silent_rank()) diags.print(std::cerr);
    if (!loaded) throw std::invalid_argument("the interventions file has errors");
    replay = std::move(*loaded);
  }
  const bool replays_reset = std::any_of(replay.begin(), replay.end(), [](const Intervention& i) {
    return i.kind == Intervention::Kind::kReset;
  });
  if (replays_reset && resume)
    throw std::invalid_argument(a.interventions +
                                ": a session with a reset is replayed from its start, not from a "
                                "checkpoint (drop --resume)");
  auto land_replayed = [&replay, path = a.interventions](Simulation& sim, std::size_t& replayed) {
    for (; replayed < replay.size() && replay[replayed].tick <= sim.state().tick; ++replayed) {
      const Intervention& i = replay[replayed];
      if (i.tick < sim.state().tick) {
        // Landed before the checkpoint resumed from; but a held command is not in the
        // checkpoint: hold it again (and release it again) in order.
        if ((i.kind == Intervention::Kind::kCommand || i.kind == Intervention::Kind::kRelease) &&
            intervention_problem(sim, i).empty())
          apply_intervention(sim, i);
        continue;
      }
      if (std::string why = land_intervention(sim, i); !why.empty())
        throw RunError(path + ":" + std::to_string(i.line) + ": tick " + std::to_string(i.tick) +
                       ": cannot " + describe(i) + ": " + why);
      // (a reset takes the tick back to 0: the loop goes on)
    }
  };
  // The run keeps its start for a reset from a page or the replayed file.
  if (replays_reset || a.view)
    o.before_start = [inner = o.before_start](Simulation& sim) {
      if (inner) inner(sim);
      sim.enable_reset();
    };
  // One process lands the file's interventions before its hooks; several each land them
  // (every process reads the file), each with its own place in it.
  std::size_t replayed = 0;
  std::mutex places_mutex;
  std::map<int, std::size_t> places;  // by process
  if (!replay.empty() && !several)
    o.before_step = [land_replayed, &replayed, inner = o.before_step](Simulation& sim) {
      land_replayed(sim, replayed);
      if (inner) inner(sim);
    };
  if (!replay.empty() && several)
    o.each_before_step = [land_replayed, &places, &places_mutex](Simulation& sim) {
      std::size_t* place = nullptr;
      {
        std::lock_guard lock(places_mutex);
        place = &places[sim.distribution().process];  // (a map's elements stay put)
      }
      land_replayed(sim, *place);
    };
#ifdef FLEETSIM_HAVE_VIEWER
  // Interventions from the pages land here, at a tick boundary, and are recorded with it: on
  // one process at once (at the boundary the run stands at); on several, the first process
  // announces them with its next moves and every process lands them before the next step.
  std::unique_ptr<std::ofstream> record;
  const std::string record_path =
      !a.record_interventions.empty()
          ? a.record_interventions
          : std::filesystem::path(file).stem().string() + ".interventions";
  // What became of one: on the pages and on the run's terminal.
  auto tell = [&live](const std::string& message, bool landed) {
    std::cerr << "\nfleetsim run: " << message << std::endl;
    live->run().report_intervention(message, landed);
  };
  // `i` landed (the run's next entity id was `next` before it): recorded, and said.
  auto landed = [&record, record_path, tell](const Intervention& i, EntityId next) {
    if (!record) {
      record = std::make_unique<std::ofstream>(record_path);
      *record << "# fleetsim interventions: replay with fleetsim run EXPERIMENT "
                 "--interventions "
              << record_path << "\n";
      std::cerr << "\nfleetsim run: interventions are recorded in " << record_path << "\n";
    }
    *record << format_intervention(i) << std::endl;  // (flushed: kept if the run dies)
    std::string done;
    switch (i.kind) {
      case Intervention::Kind::kReset:
        done = fmt::format("the run was reset at tick {} (back to tick 0)", i.tick);
        break;
      case Intervention::Kind::kAdd:
        done = fmt::format("robot {} ({}) added at ({:.3f}, {:.3f}) at tick {}", next, i.robot_kind,
                           i.x, i.y, i.tick);
        break;
      case Intervention::Kind::kRemove:
        done = fmt::format("robot {} removed at tick {}", i.robot, i.tick);
        break;
      case Intervention::Kind::kLeds:
        done = fmt::format("robot {}'s LEDs set to {},{},{},{} at tick {}", i.robot, i.color.r,
                           i.color.g, i.color.b, i.color.a, i.tick);
        break;
      case Intervention::Kind::kCommand:
        done = fmt::format("robot {}'s '{}' held at {} from tick {} (until released)", i.robot,
                           i.actuator, fmt::join(i.values, ","), i.tick);
        break;
      case Intervention::Kind::kRelease:
        done = fmt::format("robot {}'s '{}' left to its controller again at tick {}", i.robot,
                           i.actuator, i.tick);
        break;
      case Intervention::Kind::kParam:
        done = fmt::format("global '{}' of robot {}'s script set to {} at tick {}", i.name, i.robot,
                           i.value.json(), i.tick);
        break;
      case Intervention::Kind::kMove:
        done =
            fmt::format("robot {} moved to ({:.3f}, {:.3f}) at tick {}", i.robot, i.x, i.y, i.tick);
        break;
    }
    if (!*record)
      tell(done + ", but it could not be recorded in " + record_path, true);
    else
      tell(done + "; recorded in " + record_path, true);
  };
  auto land_live = [&live, tell, landed](Simulation& sim) {
    using Kind = view::LiveRun::Request::Kind;
    for (const view::LiveRun::Request& m : live->run().take_requests()) {
      if (m.kind == Kind::kLook) {  // (a question from a page's robot panel)
        live->run().answer_look(m.robot, robot_now_json(sim, m.robot));
        continue;
      }
      Intervention i;
      i.kind = m.kind == Kind::kReset     ? Intervention::Kind::kReset
               : m.kind == Kind::kAdd     ? Intervention::Kind::kAdd
               : m.kind == Kind::kRemove  ? Intervention::Kind::kRemove
               : m.kind == Kind::kLeds    ? Intervention::Kind::kLeds
               : m.kind == Kind::kCommand ? Intervention::Kind::kCommand
               : m.kind == Kind::kRelease ? Intervention::Kind::kRelease
               : m.kind == Kind::kParam   ? Intervention::Kind::kParam
                                          : Intervention::Kind::kMove;
      i.tick = sim.state().tick;
      i.robot = m.robot;
      i.x = m.x;
      i.y = m.y;
      i.robot_kind = m.robot_kind;
      i.controller = m.controller;
      i.color = m.color;
      i.actuator = m.actuator;
      i.values = m.values;
      i.name = m.name;
      i.value = m.value;
      const std::uint32_t row = sim.state().robot_index(m.robot);
      i.heading = m.heading ? *m.heading
                  : i.kind == Intervention::Kind::kMove && row != kNoIndex
                      ? sim.state().theta()[row]
                      : 0.0;
      // (Checked here too on several processes, to refuse at once what cannot land now.)
      if (std::string why = intervention_problem(sim, i); !why.empty()) {
        tell("refused: cannot " + describe(i) + ": " + why, false);
        continue;
      }
      if (sim.distribution().processes > 1) {
        // Every process lands it at the next tick boundary: announced with this tick's moves.
        ++i.tick;
        sim.announce_interventions(format_intervention(i) + "\n");
        const int host = sim.controller_process(i.robot);
        tell(fmt::format("will {} at tick {} (the next tick boundary of every process{})",
                         describe(i), i.tick,
                         i.kind == Intervention::Kind::kParam && host != 0
                             ? fmt::format("; process {} runs its controller and checks it", host)
                             : ""),
             false);
        continue;
      }
      const EntityId next = sim.state().next_id;
      apply_intervention(sim, i);
      landed(i, next);
    }
  };
  // Several processes: what the first process announced lands on every process, at the tick
  // boundary it was announced for; the first process records it and says what became of it.
  // A script's global is set by the process running the robot's controller, which replies
  // with its next moves ("TICK INDEX WHY", INDEX the line's place among the tick's): the
  // first process then holds the tick's outcomes, and records them in order, after that step.
  struct Outcome {
    Intervention i;
    EntityId next = 0;
    std::string why;
    int waits_for = -1;  // the process whose reply is awaited
  };
  std::vector<Outcome> outcomes;  // first process: the tick's, while one waits for a reply
  auto report = [tell, landed](const std::vector<Outcome>& done) {
    for (const Outcome& d : done)
      if (!d.why.empty())
        tell(fmt::format("refused at tick {}: cannot {}: {}", d.i.tick, describe(d.i), d.why),
             false);
      else
        landed(d.i, d.next);
  };
  auto land_announced = [&outcomes, report](Simulation& sim, const std::string& lines) {
    if (lines.empty()) return;
    std::istringstream in(lines);
    Diagnostics diags;
    const auto due = read_interventions(in, "the interventions announced", diags);
    if (!due) throw RunError("the interventions announced by process 0 do not read back");
    const int here = sim.distribution().process;
    std::vector<Outcome> done;
    std::string replies;
    for (std::size_t n = 0; n < due->size(); ++n) {
      const Intervention& i = (*due)[n];
      if (i.tick != sim.state().tick)
        throw RunError(fmt::format("an intervention announced for tick {} came at tick {}", i.tick,
                                   sim.state().tick));
      const int host = i.kind == Intervention::Kind::kParam ? sim.controller_process(i.robot) : -1;
      Outcome got{i, sim.state().next_id, land_intervention(sim, i), -1};
      if (here != 0 && host == here) replies += fmt::format("{} {} {}\n", i.tick, n, got.why);
      if (here == 0 && host > 0) got.waits_for = host;
      done.push_back(std::move(got));
    }
    if (!replies.empty()) sim.reply_to_first_process(replies);
    if (here != 0) return;
    if (!outcomes.empty()) throw RunError("interventions landed while others wait for a reply");
    if (std::any_of(done.begin(), done.end(), [](const Outcome& d) { return d.waits_for >= 0; }))
      outcomes = std::move(done);
    else
      report(done);
  };
  // The first process, after each step: the replies to what it waits for.
  auto take_replies = [&outcomes, report](Simulation& sim) {
    std::istringstream in(sim.take_replies());
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      Tick tick = -1;
      std::size_t n = outcomes.size();
      words >> tick >> n;
      if (n >= outcomes.size() || outcomes[n].waits_for < 0 || outcomes[n].i.tick != tick)
        throw RunError("a reply to an intervention not waiting for one: " + line);
      std::getline(words >> std::ws, outcomes[n].why);
      outcomes[n].waits_for = -1;
    }
    if (outcomes.empty()) return;
    for (const Outcome& d : outcomes)
      if (d.waits_for >= 0)
        throw RunError(fmt::format("process {} did not say what became of: {} at tick {}",
                                   d.waits_for, describe(d.i), d.i.tick));
    report(std::exchange(outcomes, {}));
  };
  if (live)
    o.before_step = [&live, land_live, several, inner = o.before_step](Simulation& sim) {
      // A paused (or paced) run lands what the pages ask for at once, as it comes.
      while (!live->run().before_step(sim.state().tick, sim.model().tick_period_ns,
                                      [] { return !g_interrupted.load(); }))
        land_live(sim);
      if (inner) inner(sim);  // (replayed interventions first: they were recorded first)
      land_live(sim);
      // Several processes: a whole frame only while a page watches, at its frame rate.
      if (several && live->run().wants_whole_frame()) sim.request_whole_frame();
    };
  // (Every rank, and a network run's secondaries: only rank 0, or the primary, has the live
  // view, and announces.)
  if ((a.view || a.network_role == "secondary") && several) {
    land_interventions_announced = land_announced;
    o.after_step = [take_replies, inner = o.after_step](Simulation& sim) {
      if (inner) inner(sim);
      take_replies(sim);
    };
  }
#endif
  // Several processes: what process 0 announced (the pages' interventions, ROS 2 commands)
  // lands on every process (every rank: only rank 0 has the live view and the bridge).
  if (several && (land_interventions_announced || land_ros_announced))
    o.each_before_step = [&land_interventions_announced, &land_ros_announced,
                          inner = o.each_before_step](Simulation& sim) {
      if (inner) inner(sim);  // (replayed interventions first)
      std::string interventions, commands;
      std::istringstream in(sim.take_due_interventions());
      for (std::string line; std::getline(in, line);)
        (ros2::is_announced_input(line) ? commands : interventions) += line + "\n";
      if (!interventions.empty()) {
        if (!land_interventions_announced)
          throw RunError("interventions announced on a run that takes none");
        land_interventions_announced(sim, interventions);
      }
      if (land_ros_announced) land_ros_announced(sim, commands);
    };
  RunArgs one = a;
  one.files = {file};
  std::mutex loading;  // in-process threads load at once
  auto take = [&](LoadedExperiment l) {
#ifdef FLEETSIM_HAVE_ROS2
    // Several processes: every robot of the run, before a process keeps only its part.
    if (a.ros2 && ros_several && ros_roster.empty() && l.experiment.model) try {
        ros_roster = ros2::roster(*l.experiment.model, l.experiment.state, a.ros2_robots);
      } catch (const std::invalid_argument&) {  // (refused before the run)
      }
#endif
    tick_ns = l.experiment.model->tick_period_ns;
    logs.clear();
    for (const auto& log : l.experiment.logs) logs.push_back(log.path);
    return l;
  };
  Loader load = [&]() -> std::optional<LoadedExperiment> {
    std::lock_guard lock(loading);
    if (preloaded) {
      auto l = std::move(*preloaded);
      preloaded.reset();
      return take(std::move(l));
    }
    MutedErrors muted(silent_rank());
    auto loaded = load_all(one);
    if (!loaded) return std::nullopt;
    auto& [ex, reg] = loaded->front();
    return take(LoadedExperiment{std::move(ex), std::move(reg)});
  };
  std::vector<ProcessReport> reports;
  if (mpi_launched()) {
    reports = run_mpi(load, o);
  } else if (a.network_role.empty() && a.processes == 1) {
    auto loaded = load();
    if (!loaded) throw std::invalid_argument("the experiment has errors");
#ifdef FLEETSIM_HAVE_ROS2
    if (a.ros2)  // (a bad --ros2-robots is bad input: refused before the run starts)
      ros2::selected_robots(*loaded->experiment.model, loaded->experiment.state, a.ros2_robots);
#endif
    reports = {run_alone(*loaded, o)};
  } else if (a.network_role.empty()) {
    reports = run_swarm(load, o);
  } else {
    NetworkOptions net;
    net.primary = a.network_role == "primary";
    net.secondaries = a.network_secondaries;
    net.listen = a.listen.empty() && net.primary ? "tcp://127.0.0.1:7770" : a.listen;
    net.primary_address = a.primary;
    net.connect_timeout_s = a.connect_timeout;
    net.secret_key_file = a.secret_key;
    net.public_keys_dir = a.public_keys;
    net.primary_key_file = a.primary_key;
    reports = run_network(load, o, net);
  }
  bar.done();
#ifdef FLEETSIM_HAVE_ROS2
  ros.reset();
  ros_parts.clear();
#endif
#ifdef FLEETSIM_HAVE_VIEWER
  if (live && !reports.empty()) {
    const auto& p0 = reports.front();
    live->end(p0.ok ? "the run finished at tick " + std::to_string(p0.ticks)
                    : "the run stopped: " + p0.error);
  }
#endif
  return reports;
}

/// Runs every file of `a` (all checked first); prints each run's summary, or its error and how
/// to go on. Returns the exit status.
int run_files(const RunArgs& given, const std::shared_ptr<const Checkpoint>& resume) {
  using namespace distributed;
  // An MPI job's ranks run one experiment; rank 0 speaks for the run (the others' errors
  // reach it), the others say nothing.
  const bool mpi = mpi_launched();
  const bool silent = silent_rank();
  RunArgs a = given;
  if (silent) {
    a.quiet = true;
    a.json = false;
  }
  std::ostream out(silent ? nullptr : std::cout.rdbuf());
  std::ostream err(silent ? nullptr : std::cerr.rdbuf());
  const bool network = !a.network_role.empty();
  const bool several = network || a.processes > 1 || mpi;
  std::vector<std::optional<LoadedExperiment>> preloaded;
  {  // Every file is checked before the first one starts.
    std::optional<LoadedFiles> all;
    {
      MutedErrors muted(silent);
      all = load_all(a);
    }
    // (A rank but rank 0 whose files do not load goes on to the ranks' file check, where rank
    // 0 names it: its own errors are not printed.)
    if (!all && silent) all.emplace(a.files.size());
    if (!all) {
      err << "fleetsim: nothing was run; fix the errors above (`fleetsim check` validates "
             "without running)\n";
      return kExitUserError;
    }
    for (auto& [ex, reg] : *all) {
      // Ensembles read and write any robot's knowledge in one sequential pass: one process.
      if (several && !ex.ensembles.empty()) {
        const SourceLocation& at = ex.ensembles.front().where;
        err << at.file << ":" << at.line
            << ": error: ensembles run on one process for now: drop --processes (or "
               "--network-role, mpirun) to run this file (docs/experiment-format.md, "
               "<ensembles>)\nfleetsim: nothing was run\n";
        return kExitUserError;
      }
      // processing_time's rounds and objects' behaviours: one process for now too (a rank
      // whose files did not load holds empty experiments: no model).
      if (several && ex.model && (ex.model->processing_time > 0 || !ex.object_behaviours.empty())) {
        const bool rounds = ex.model->processing_time > 0;
        const SourceLocation& at =
            rounds ? ex.processing_time_where
                   : ex.behaviours[ex.object_behaviours.front().behaviour].where;
        err << at.file << ":" << at.line
            << ": error: " << (rounds ? "processing_time > 0" : "objects with behaviour")
            << " run on one process for now: drop --processes (or --network-role, mpirun) to "
               "run this file (docs/experiment-format.md)\nfleetsim: nothing was run\n";
        return kExitUserError;
      }
      // Environment layers read every robot and object: one process for now.
      if (several && !ex.layers.empty()) {
        const SourceLocation& at = ex.layers.front().where;
        err << at.file << ":" << at.line
            << ": error: environment layers run on one process for now (a layer reads every "
               "robot and object): drop --processes (or --network-role, mpirun) to run this "
               "file (docs/experiment-format.md, <layers>)\nfleetsim: nothing was run\n";
        return kExitUserError;
      }
      // A grip joins two bodies in one Box2D world, which the processes' parts would split.
      if (several && ex.model)
        if (const PartDecl* g = find_gripper(*ex.model)) {
          err << g->where.file << ":" << g->where.line
              << ": error: the foot-bot's gripper runs on one process for now: drop --processes "
                 "(or --network-role, mpirun) to run this file (docs/robot-parts.md, "
                 "footbot_gripper)\nfleetsim: nothing was run\n";
          return kExitUserError;
        }
      if (several && !mpi && a.network_role != "secondary") {  // (the primary says how many)
        try {
          assign(ex, network ? a.network_secondaries + 1 : a.processes,
                 network ? "--network-secondaries (plus 1)" : "--processes");
        } catch (const std::invalid_argument& e) {
          err << e.what() << "\nfleetsim: nothing was run\n";
          return kExitUserError;
        }
      }
#ifdef FLEETSIM_HAVE_ROS2
      if (several && a.ros2 && ex.model) {  // (one process checks it in run_file)
        try {
          ros2::selected_robots(*ex.model, ex.state, a.ros2_robots);
        } catch (const std::invalid_argument& e) {
          err << "fleetsim run: error: " << e.what() << "\nfleetsim: nothing was run\n";
          return kExitUserError;
        }
      }
#endif
      // One process runs what was loaded; several load in each process.
      if (several)
        preloaded.emplace_back();
      else
        preloaded.emplace_back(LoadedExperiment{std::move(ex), std::move(reg)});
    }
  }
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  nlohmann::json runs = nlohmann::json::array();
  int status = kExitOk;
  for (std::size_t f = 0; f < a.files.size(); ++f) {
    const std::string& file = a.files[f];
    SimTime tick_ns = 0;
    std::vector<std::string> logs;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    std::vector<ProcessReport> reports;
    nlohmann::json summary;
    try {
      reports = run_file(a, file, std::move(preloaded[f]), resume, tick_ns, logs);
    } catch (const std::invalid_argument& e) {
      err << file << ": error: " << e.what() << "\n";
      runs.push_back({{"experiment", file}, {"error", e.what()}});
      status = kExitUserError;
      continue;
    } catch (const std::exception& e) {
      err << file << ": error: " << e.what() << "\n";
      runs.push_back({{"experiment", file}, {"error", e.what()}});
      status = kExitRuntimeError;
      continue;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const ProcessReport& p0 = reports.front();
    // The first failure is the cause; the others' are its consequences (their peer left).
    std::string failure;
    for (bool consequence : {false, true})
      for (const auto& r : reports)
        if (!r.ok && r.stopped_by_peer == consequence && failure.empty())
          failure = several ? describe(r) : r.error;
    std::uint64_t steps = 0;
    nlohmann::json per = nlohmann::json::array();
    for (const auto& r : reports) {
      steps += r.robot_steps;
      per.push_back({{"process", r.process},
                     {"regions", r.regions},
                     {"ok", r.ok},
                     {"robot_steps", r.robot_steps},
                     {"loop_wall_seconds", r.loop_wall_seconds},
                     {"exchange_seconds", r.exchange.seconds},
                     {"wait_seconds", r.exchange.wait_seconds},
                     {"bytes_sent", r.exchange.bytes_sent},
                     {"bytes_received", r.exchange.bytes_received},
                     {"halo_robots_sent", r.exchange.halo_rows_sent},
                     {"partitioned", r.partitioned},
                     {"held_robots_max", r.exchange.held_robots_max},
                     {"placed_robots", r.exchange.placed_robots},
                     {"id_table_bytes", r.exchange.id_table_bytes},
                     {"migrations_in", r.exchange.migrations_in},
                     {"migrations_out", r.exchange.migrations_out},
                     {"rebalances", r.exchange.rebalances}});
      if (!r.domain.empty()) per.back()["domain"] = r.domain;
      if (!r.ok) per.back()["error"] = r.error;
    }
    const std::string hash = hex64(p0.state_hash);
    // Simulated in this run (a resumed run began at its checkpoint's tick).
    const Tick from = resume ? resume->tick : 0;
    const double simsec = static_cast<double>((p0.ticks - from) * tick_ns) / 1e9;
    const double loop_wall = p0.loop_wall_seconds;
    const double rtf = loop_wall > 0 ? simsec / loop_wall : 0.0;
    const double steps_per_s = loop_wall > 0 ? static_cast<double>(steps) / loop_wall : 0.0;
    // Where to go on from: the newest checkpoint of this run, else the one it resumed from.
    std::string go_on;
    if (!p0.checkpoints.empty())
      go_on = p0.checkpoints.back();
    else if (resume)
      go_on = a.resume;
    if (!failure.empty() && !several) {
      summary = {{"experiment", file}, {"error", failure}, {"checkpoints", p0.checkpoints}};
    } else {
      summary = {{"experiment", file},
                 {"ticks", p0.ticks},
                 {"sim_seconds", simsec},
                 {"wall_seconds", wall},
                 {"loop_wall_seconds", loop_wall},
                 {"rtf", rtf},
                 {"robots", p0.robots},
                 {"robot_steps_per_second", steps_per_s},
                 {"logs", logs},
                 {"status", p0.status},
                 {"state_hash", hash},
                 {"checkpoints", p0.checkpoints}};
      if (several) {
        summary["processes"] = reports.size() == 1 && a.network_role == "secondary"
                                   ? nlohmann::json(nullptr)
                                   : nlohmann::json(reports.size());
        summary["network_role"] = a.network_role;
        summary["transport"] = mpi       ? std::string("mpi")
                               : network ? std::string("tcp")
                                         : a.transport;
        summary["sync"] = mpi ? std::string("collective") : a.sync;
        summary["per_process"] = per;
      } else {
        summary["cpu_seconds"] = cpu_seconds() - c0;
        summary["threads"] = p0.threads;
        nlohmann::json phases;
        for (int p = 0; p < kPhaseCount && p < static_cast<int>(p0.phase_seconds.size()); ++p)
          phases[phase_name(static_cast<Phase>(p))] = p0.phase_seconds[static_cast<std::size_t>(p)];
        summary["phase_seconds"] = phases;
      }
      if (resume) summary["resumed_from_tick"] = resume->tick;
      if (a.time_mode != "afap") {
        summary["time_mode"] = a.time_mode;
        summary["speedup"] = a.time_mode == "linear" ? a.speedup : 1.0;
        summary["max_lag_seconds"] = p0.max_lag_seconds;
      }
    }
    if (!failure.empty()) {
      err << file << ": error: " << failure << "\n";
      for (const auto& r : reports)
        if (!r.ok && (several ? describe(r) : r.error) != failure)
          err << "  then " << describe(r) << "\n";
      for (const auto& l : logs)
        if (std::filesystem::exists(l))  // (not one that could not be created)
          err << "  the log " << l << " is complete up to the last frame written\n";
      if (!go_on.empty()) {
        err << "  go on from "
            << (p0.checkpoints.empty() ? "the checkpoint it resumed from" : "the newest checkpoint")
            << ":\n    " << (mpi ? "mpirun -n " + std::to_string(reports.size()) + " " : "")
            << resume_command(program_invocation_name, a, file, go_on) << "\n";
        if (a.network_role == "primary")
          err << "  and start each secondary again with --resume and a copy of that "
                 "checkpoint (docs/checkpoints.md)\n";
      }
      summary["error"] = failure;
      status = kExitRuntimeError;
    } else if (!a.quiet) {
      out << file << ": " << p0.ticks << " ticks"
          << (from > 0 ? " (from tick " + std::to_string(from) + ")" : "") << ", " << simsec
          << " simulated s in " << loop_wall << " wall s (" << rtf << "x real time, " << steps_per_s
          << " robot-steps/s, "
          << (!several                        ? std::to_string(p0.threads) + " threads"
              : a.network_role == "secondary" ? "process " + std::to_string(p0.process)
                                              : std::to_string(reports.size()) + " processes")
          << ")\n";
      if (several)
        for (const auto& r : reports) {
          out << "  " << process_and_regions(r) << ": ";
          if (r.domain.size() == 4)
            out << "domain x " << r.domain[0] << ".." << r.domain[2] << ", y " << r.domain[1]
                << ".." << r.domain[3] << ", ";
          out << r.robot_steps << " robot-steps, exchange " << r.exchange.seconds << " s (waiting "
              << r.exchange.wait_seconds << " s), " << r.exchange.bytes_sent << " bytes sent, "
              << r.exchange.migrations_in << " robots in, " << r.exchange.migrations_out
              << " out\n";
        }
      if (several) out << "  state " << hash << "\n";
      if (!p0.checkpoints.empty()) out << "  newest checkpoint: " << p0.checkpoints.back() << "\n";
      for (const auto& l : logs)
        out << "  log: " << l << "  (look at it: fleetsim view " << l << ")\n";
    }
    runs.push_back(summary);
    if (g_interrupted.load()) break;
  }
  if (a.json) out << (runs.size() == 1 ? runs[0] : nlohmann::json{{"runs", runs}}).dump() << "\n";
  return status;
}

/// --resume: reads the checkpoint, takes the experiment file from it when none is given, and
/// checks that it fits the experiment as loaded with these options. Null after printing why
/// not (`status` then says how to exit).
std::shared_ptr<const Checkpoint> prepare_resume(RunArgs& a, int& status) {
  status = kExitUserError;
  if (a.files.size() > 1) {
    std::cerr << "fleetsim: --resume goes on with one run; give at most one experiment file\n";
    return nullptr;
  }
  std::string chosen;
  std::shared_ptr<Checkpoint> ck;
  try {
    ck = std::make_shared<Checkpoint>(read_checkpoint(a.resume, &chosen));
  } catch (const CheckpointError& e) {
    std::cerr << "fleetsim: error: " << e.what() << "\n";
    return nullptr;
  }
  if (a.files.empty()) a.files = {ck->identity.experiment};
  auto loaded = load_all(a);
  if (!loaded) {
    std::cerr << "fleetsim: nothing was run; fix the errors above\n";
    return nullptr;
  }
  const auto& [ex, reg] = loaded->front();
  const std::string why = identity_mismatch(ck->identity, identity_of(ex, *reg));
  if (!why.empty()) {
    std::cerr << "fleetsim: error: checkpoint " << chosen << " cannot resume " << ex.path << ": "
              << why << "\n";
    return nullptr;
  }
  if (ex.model->length_ticks > 0 && ex.model->length_ticks <= ck->tick) {
    std::cerr << "fleetsim: error: " << ex.path << " ends at tick " << ex.model->length_ticks
              << ", and checkpoint " << chosen << " is at tick " << ck->tick
              << ": nothing to go on with (give a --length beyond "
              << static_cast<double>(ck->tick * ex.model->tick_period_ns) / 1e9 << " s)\n";
    return nullptr;
  }
  if (!a.quiet)
    std::cerr << "resuming " << ex.path << " from " << chosen << " (tick " << ck->tick << ")\n";
  status = kExitOk;
  return ck;
}

}  // namespace

std::optional<LoadedFiles> load_all(const RunArgs& a) {
  LoadedFiles out;
  bool ok = true;
  for (const auto& f : a.files) {
    auto reg = std::make_unique<PluginRegistry>();
    register_builtins(*reg);
    Diagnostics d;
    auto ex = load_experiment(f, *reg, overrides_of(a), d);
    d.print(std::cerr);
    if (!ex) {
      ok = false;
      continue;
    }
    out.emplace_back(std::move(*ex), std::move(reg));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::string resume_command(const std::string& program, const RunArgs& a, const std::string& file,
                           const std::string& checkpoint) {
  std::vector<std::string> w = {program, "run", file, "--resume", checkpoint};
  auto add = [&w](const std::string& flag, const std::string& value) {
    w.push_back(flag);
    w.push_back(value);
  };
  // What the world depends on (checked on resume), and the run's length.
  if (a.seed) add("--seed", std::to_string(*a.seed));
  if (a.length) add("--length", fmt::format("{}", *a.length));  // (shortest exact form)
  if (a.log_path) add("--log", *a.log_path);
  if (!a.log_format.empty()) add("--log-format", a.log_format);
  // The run's shape: its processes, their links, its pace, its checkpoints, its outputs.
  if (a.threads) add("--threads", std::to_string(*a.threads));
  if (a.network_role.empty() && a.processes > 1) add("--processes", std::to_string(a.processes));
  if (a.network_role.empty() && a.processes > 1 && a.transport != "shm")
    add("--transport", a.transport);
  if (a.processes > 1 || !a.network_role.empty()) {
    if (a.sync != "dsaam") add("--sync", a.sync);
    if (a.jitter_us > 0) add("--jitter-us", std::to_string(a.jitter_us));
  }
  if (!a.network_role.empty()) {
    add("--network-role", a.network_role);
    if (a.network_role == "primary")
      add("--network-secondaries", std::to_string(a.network_secondaries));
    if (!a.listen.empty()) add("--listen", a.listen);
    if (!a.primary.empty()) add("--primary", a.primary);
    if (!a.secret_key.empty()) add("--secret-key", a.secret_key);
    if (!a.public_keys.empty()) add("--public-keys", a.public_keys);
    if (!a.primary_key.empty()) add("--primary-key", a.primary_key);
  }
  if (a.checkpoint_every > 0) {
    add("--checkpoint-every", fmt::format("{}", a.checkpoint_every));
    if (a.checkpoint_dir != "checkpoints") add("--checkpoint-dir", a.checkpoint_dir);
  }
  if (!a.interventions.empty()) add("--interventions", a.interventions);
  if (a.time_mode != "afap") add("--time-mode", a.time_mode);
  if (a.time_mode == "linear") add("--speedup", fmt::format("{}", a.speedup));
  if (a.ros2) {
    w.push_back("--ros2");
    if (a.ros2_domain != 0) add("--ros2-domain", std::to_string(a.ros2_domain));
    if (a.ros2_namespace != "fleetsim") add("--ros2-namespace", a.ros2_namespace);
    if (a.ros2_distro != "jazzy") add("--ros2-distro", a.ros2_distro);
    if (!a.ros2_robots.empty()) {
      std::string list;
      for (const auto& r : a.ros2_robots) list += (list.empty() ? "" : ",") + r;
      add("--ros2-robots", list);
    }
    if (a.ros2_rate > 0) add("--ros2-rate", fmt::format("{}", a.ros2_rate));
  }
  if (!a.replay_inputs.empty()) add("--replay-inputs", a.replay_inputs);
  if (a.quiet) w.push_back("--quiet");
  if (a.json) w.push_back("--json");
  std::string out;
  for (const auto& word : w) out += (out.empty() ? "" : " ") + shell_word(word);
  return out;
}

int run_command(const RunArgs& given) {
  RunArgs a = given;
  std::shared_ptr<const Checkpoint> resume;
  if (distributed::mpi_launched() && (a.processes > 1 || !a.network_role.empty())) {
    if (!silent_rank())
      std::cerr << "fleetsim: under mpirun or srun the ranks are the run's processes: give "
                   "neither --processes nor --network-role\n";
    return kExitUserError;
  }
  if (!a.resume.empty()) {
    int status = kExitOk;
    if (silent_rank()) a.quiet = true;
    MutedErrors muted(silent_rank());
    resume = prepare_resume(a, status);
    if (!resume) return status;
  } else if (a.files.empty()) {
    std::cerr << "fleetsim run: give an experiment file (or --resume CHECKPOINT); see "
                 "`fleetsim run --help`\n";
    return kExitUserError;
  }
  if (a.network_role.empty() &&
      (!a.secret_key.empty() || !a.public_keys.empty() || !a.primary_key.empty())) {
    std::cerr << "fleetsim: --secret-key, --public-keys and --primary-key go with --network-role "
                 "(the processes of one machine need no keys)\n";
    return kExitUserError;
  }
  if (!a.network_role.empty()) {
    if (a.processes > 1) {
      std::cerr << "fleetsim: --processes and --network-role do not go together (a network run "
                   "has --network-secondaries + 1 processes, one per machine)\n";
      return kExitUserError;
    }
    if (a.network_role == "primary" && a.network_secondaries < 1) {
      std::cerr << "fleetsim: --network-role primary needs --network-secondaries N (N >= 1)\n";
      return kExitUserError;
    }
    if (a.network_role == "secondary" && a.primary.empty()) {
      std::cerr << "fleetsim: --network-role secondary needs --primary tcp://HOST:PORT\n";
      return kExitUserError;
    }
    if (a.files.size() != 1) {
      std::cerr << "fleetsim: a network run takes one experiment file\n";
      return kExitUserError;
    }
  }
  if (a.ros2) {
    std::string why;
#ifndef FLEETSIM_HAVE_ROS2
    why = "this fleetsim was built without the ROS 2 bridge (sanitizer builds leave it out)";
#endif
    if (!a.network_role.empty())
      why = "--ros2 runs on this machine's processes (--processes N), not with --network-role";
    if (!a.replay_inputs.empty())
      why = "--replay-inputs replays the commands a --ros2 run took, without ROS 2: drop --ros2";
    for (const auto& r : a.ros2_robots)
      if (r.empty() || r == "kind:")
        why =
            "--ros2-robots: an empty item (expected robot ids, kind:KIND or all, "
            "comma-separated)";
    const auto& ns = a.ros2_namespace;
    if (ns.empty() || std::isdigit(static_cast<unsigned char>(ns[0])) ||
        !std::all_of(ns.begin(), ns.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        }))
      why = "--ros2-namespace '" + ns +
            "' is not one ROS 2 name token (letters, digits and _, not starting with a digit)";
    if (!why.empty()) {
      std::cerr << "fleetsim run: error: " << why << "\n";
      return kExitUserError;
    }
  }
  if (!a.replay_inputs.empty() && (a.processes > 1 || !a.network_role.empty())) {
    std::cerr << "fleetsim run: error: --replay-inputs replays on one process for now (drop "
                 "--processes)\n";
    return kExitUserError;
  }
  if (!a.ros2 && (a.record_inputs || !a.ros2_robots.empty() || a.ros2_rate > 0)) {
    std::cerr << "fleetsim run: error: --record-inputs, --ros2-robots and --ros2-rate go with "
                 "--ros2\n";
    return kExitUserError;
  }
  return run_files(a, resume);
}

}  // namespace fleetsim::cli
