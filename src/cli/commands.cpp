#include "cli/commands.hpp"

#include <unistd.h>

#include <sys/resource.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/diagnostics.hpp"
#include "core/hash.hpp"
#include "core/plugin_loader.hpp"
#include "distributed/network_run.hpp"
#include "distributed/swarm_run.hpp"
#include "plugins/builtins.hpp"
#include "sim/checkpoint.hpp"
#include "sim/simulation.hpp"
#include "time/pacer.hpp"
#ifdef FLEETSIM_HAVE_ROS2
#include "ros2/ros2_bridge.hpp"
#endif
#ifdef FLEETSIM_HAVE_FEDERATION
#include <fstream>
#include <sstream>

#include "federation/example_nodes.hpp"
#include "federation/federation_file.hpp"
#endif

namespace fleetsim::cli {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
}

struct RunArgs {
  std::vector<std::string> files;
  std::optional<int> threads;
  std::optional<std::uint64_t> seed;
  std::optional<double> length;
  std::optional<std::string> log_path;
  std::string log_format;
  bool quiet = false;
  bool json = false;
  // Several processes (docs/distributed.md).
  int processes = 1;
  std::string transport = "shm";
  std::string sync = "dsaam";
  std::uint32_t jitter_us = 0;
  // Several machines (Gazebo's flags).
  std::string network_role;
  int network_secondaries = 0;
  std::string listen, primary;
  double connect_timeout = 10;
  std::string secret_key, public_keys, primary_key;
  // Checkpoints (docs/checkpoints.md).
  double checkpoint_every = 0;
  std::string checkpoint_dir = "checkpoints";
  std::string resume;
  // Pacing against the wall clock (ROS 2 nodes and people watching a live run).
  std::string time_mode = "afap";
  double speedup = 1.0;
  // ROS 2 (docs/ros2.md).
  bool ros2 = false;
  int ros2_domain = 0;
  std::string ros2_namespace = "fleetsim";
};

/// The pacing `a` asks for; lag warnings go to stderr.
time::Pacer make_pacer(const RunArgs& a) {
  time::TimeMode mode = time::TimeMode::kAsFastAsPossible;
  time::parse_time_mode(a.time_mode, mode);
  return time::Pacer(mode, a.speedup,
                     [](const std::string& line) { std::cerr << "\nfleetsim: " << line << "\n"; });
}

/// The wall-clock figures of a paced run for its summary.
void add_pacing(nlohmann::json& summary, const RunArgs& a, const time::Pacer& pacer) {
  if (pacer.mode() == time::TimeMode::kAsFastAsPossible) return;
  summary["time_mode"] = a.time_mode;
  summary["speedup"] = pacer.mode() == time::TimeMode::kLinear ? a.speedup : 1.0;
  summary["max_lag_seconds"] = static_cast<double>(pacer.max_lag_ns()) / 1e9;
}

ExperimentOverrides overrides_of(const RunArgs& a) {
  ExperimentOverrides o;
  o.threads = a.threads;
  o.seed = a.seed;
  o.length_s = a.length;
  o.log_path = a.log_path;
  if (a.log_format == "deeco") o.log_format = log::LogFormat::kDeeco;
  if (a.log_format == "frames") o.log_format = log::LogFormat::kFrames;
  return o;
}

/// Loads every experiment; prints all problems of all files. nullopt if any had errors.
std::optional<std::vector<std::pair<Experiment, std::unique_ptr<PluginRegistry>>>> load_all(
    const RunArgs& a) {
  std::vector<std::pair<Experiment, std::unique_ptr<PluginRegistry>>> out;
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

/// `run --processes N`: each file on N processes; process 0 shows progress and writes the log.
int run_distributed(const RunArgs& a, const std::shared_ptr<const Checkpoint>& resume) {
  using namespace distributed;
  {  // Every file is checked before the first one starts.
    auto all = load_all(a);
    if (!all) {
      std::cerr << "fleetsim: nothing was run; fix the errors above (`fleetsim check` validates "
                   "without running)\n";
      return kExitUserError;
    }
    const int processes = a.network_role == "primary" ? a.network_secondaries + 1 : a.processes;
    for (auto& [ex, reg] : *all) {
      if (a.network_role == "secondary") break;  // the primary says how many
      try {
        assign_regions(ex, processes);
      } catch (const std::invalid_argument& e) {
        std::cerr << e.what() << "\nfleetsim: nothing was run\n";
        return kExitUserError;
      }
    }
  }
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  nlohmann::json runs = nlohmann::json::array();
  int status = kExitOk;
  for (const auto& file : a.files) {
    SwarmRunOptions o;
    o.processes = a.processes;
    o.transport = a.transport == "inproc" ? TransportKind::kInproc
                  : a.transport == "tcp"  ? TransportKind::kTcp
                  : a.transport == "ipc"  ? TransportKind::kIpc
                                          : TransportKind::kShm;
    o.sync = a.sync == "lockstep" ? SyncMode::kLockstep : SyncMode::kDsaam;
    o.jitter_us = a.jitter_us;
    o.checkpoint_every_s = a.checkpoint_every;
    o.checkpoint_dir = a.checkpoint_dir;
    o.resume = resume;
    auto bar = std::make_shared<ProgressBar>(!a.quiet);
    auto loop0 = std::make_shared<std::chrono::steady_clock::time_point>();
    std::int64_t tick_ns = 0;
    std::vector<std::string> logs;
    auto pacer = std::make_shared<time::Pacer>(make_pacer(a));
    o.on_tick = [bar, loop0, pacer, &tick_ns](Tick tick, Tick total) {
      if (*loop0 == std::chrono::steady_clock::time_point{})
        *loop0 = std::chrono::steady_clock::now();
      // Process 0 waits for the wall clock; the others wait for process 0.
      if (pacer->mode() != time::TimeMode::kAsFastAsPossible)
        pacer->wait_until(tick * tick_ns, "the run");
      double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - *loop0).count();
      bar->update(tick, total, wall > 0 ? static_cast<double>(tick * tick_ns) / 1e9 / wall : 0);
      return !g_interrupted.load();
    };
    RunArgs one = a;
    one.files = {file};
    std::mutex loading;  // in-process threads load at once
    Loader load = [&]() -> std::optional<LoadedExperiment> {
      std::lock_guard lock(loading);
      auto loaded = load_all(one);
      if (!loaded) return std::nullopt;
      auto& [ex, reg] = loaded->front();
      tick_ns = ex.model->tick_period_ns;
      logs.clear();
      for (const auto& l : ex.logs) logs.push_back(l.path);
      return LoadedExperiment{std::move(ex), std::move(reg)};
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<ProcessReport> reports;
    nlohmann::json summary;
    try {
      if (a.network_role.empty()) {
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
    } catch (const std::invalid_argument& e) {
      std::cerr << file << ": error: " << e.what() << "\n";
      runs.push_back({{"experiment", file}, {"error", e.what()}});
      status = kExitUserError;
      continue;
    } catch (const std::exception& e) {
      summary = {{"experiment", file}, {"error", e.what()}};
      std::cerr << file << ": error: " << e.what() << "\n";
      runs.push_back(summary);
      status = kExitRuntimeError;
      continue;
    }
    bar->done();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The first failure is the cause; the others' are its consequences (their peer left).
    std::string failure;
    auto describe = [](const ProcessReport& r) {
      std::string regions;
      for (const auto& n : r.regions) regions += (regions.empty() ? "" : ", ") + n;
      return "process " + std::to_string(r.process) + " (" + regions + "): " + r.error;
    };
    for (bool consequence : {false, true})
      for (const auto& r : reports)
        if (!r.ok && r.stopped_by_peer == consequence && failure.empty()) failure = describe(r);
    const ProcessReport& p0 = reports.front();
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
                     {"halo_robots_sent", r.exchange.halo_rows_sent},
                     {"migrations_in", r.exchange.migrations_in},
                     {"migrations_out", r.exchange.migrations_out}});
      if (!r.ok) per.back()["error"] = r.error;
    }
    const std::string hash = hex64(p0.state_hash);
    // Simulated in this run (a resumed run began at its checkpoint's tick).
    const Tick from = resume ? resume->tick : 0;
    const double simsec = static_cast<double>((p0.ticks - from) * tick_ns) / 1e9;
    const double loop_wall = p0.loop_wall_seconds;
    summary = {
        {"experiment", file},
        {"processes", reports.size() == 1 && a.network_role == "secondary"
                          ? nlohmann::json(nullptr)
                          : nlohmann::json(reports.size())},
        {"network_role", a.network_role.empty() ? "" : a.network_role},
        {"transport", a.network_role.empty() ? a.transport : std::string("tcp")},
        {"sync", a.sync},
        {"ticks", p0.ticks},
        {"sim_seconds", simsec},
        {"wall_seconds", wall},
        {"loop_wall_seconds", loop_wall},
        {"rtf", loop_wall > 0 ? simsec / loop_wall : 0.0},
        {"robots", p0.robots},
        {"robot_steps_per_second", loop_wall > 0 ? static_cast<double>(steps) / loop_wall : 0.0},
        {"logs", logs},
        {"status", p0.status},
        {"state_hash", hash},
        {"checkpoints", p0.checkpoints},
        {"per_process", per}};
    if (resume) summary["resumed_from_tick"] = resume->tick;
    add_pacing(summary, a, *pacer);
    if (!failure.empty()) {
      std::cerr << file << ": error: " << failure << "\n";
      for (const auto& r : reports)
        if (!r.ok && describe(r) != failure) std::cerr << "  then " << describe(r) << "\n";
      for (const auto& l : logs)
        if (std::filesystem::exists(l))  // (not one that could not be created)
          std::cerr << "  the log " << l << " is complete up to the last frame written\n";
      if (!p0.checkpoints.empty())
        std::cerr << "  go on from the newest checkpoint: fleetsim run --resume "
                  << p0.checkpoints.back() << "\n";
      summary["error"] = failure;
      status = kExitRuntimeError;
    } else if (!a.quiet) {
      std::cout << file << ": " << p0.ticks << " ticks"
                << (from > 0 ? " (from tick " + std::to_string(from) + ")" : "") << ", " << simsec
                << " simulated s in " << loop_wall << " wall s (" << summary["rtf"].get<double>()
                << "x real time, " << summary["robot_steps_per_second"].get<double>()
                << " robot-steps/s, "
                << (a.network_role == "secondary" ? "process " + std::to_string(p0.process)
                                                  : std::to_string(reports.size()) + " processes")
                << ")\n";
      for (const auto& r : reports) {
        std::string regions;
        for (const auto& n : r.regions) regions += (regions.empty() ? "" : ", ") + n;
        std::cout << "  process " << r.process << " (" << regions << "): " << r.robot_steps
                  << " robot-steps, exchange " << r.exchange.seconds << " s (waiting "
                  << r.exchange.wait_seconds << " s), " << r.exchange.bytes_sent << " bytes sent, "
                  << r.exchange.migrations_in << " robots in, " << r.exchange.migrations_out
                  << " out\n";
      }
      std::cout << "  state " << hash << "\n";
      if (!p0.checkpoints.empty())
        std::cout << "  newest checkpoint: " << p0.checkpoints.back() << "\n";
      for (const auto& l : logs)
        std::cout << "  log: " << l << "  (look at it: fleetsim view " << l << ")\n";
    }
    runs.push_back(summary);
    if (g_interrupted.load()) break;
  }
  if (a.json)
    std::cout << (runs.size() == 1 ? runs[0] : nlohmann::json{{"runs", runs}}).dump() << "\n";
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

int run_command(const RunArgs& given) {
  RunArgs a = given;
  std::shared_ptr<const Checkpoint> resume;
  if (!a.resume.empty()) {
    int status = kExitOk;
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
    return run_distributed(a, resume);
  }
  if (a.ros2) {
    std::string why;
#ifndef FLEETSIM_HAVE_ROS2
    why = "this fleetsim was built without the ROS 2 bridge (sanitizer builds leave it out)";
#endif
    if (a.processes > 1 || !a.network_role.empty())
      why = "--ros2 runs on one process (give --processes 1)";
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
  if (a.processes > 1) return run_distributed(a, resume);
  auto loaded = load_all(a);
  if (!loaded) {
    std::cerr << "fleetsim: nothing was run; fix the errors above (`fleetsim check` validates "
                 "without running)\n";
    return kExitUserError;
  }
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  nlohmann::json runs = nlohmann::json::array();
  int status = kExitOk;
  for (auto& [ex, reg] : *loaded) {
    std::string path = ex.path;
    std::vector<std::string> logs;
    for (const auto& l : ex.logs) logs.push_back(l.path);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    nlohmann::json summary;
    std::string failure;
    std::shared_ptr<CheckpointFiles> checkpoints;
    try {
      CheckpointSink sink;
      if (a.checkpoint_every > 0) {
        checkpoints = std::make_shared<CheckpointFiles>(
            a.checkpoint_dir, std::filesystem::path(path).stem().string());
        sink = checkpoint_sink(identity_of(ex, *reg), checkpoints);
      }
      Simulation sim(std::move(ex), *reg, {}, resume ? &resume->state : nullptr);
      if (sink) sim.enable_checkpoints(sink);
      const Tick total = sim.model().length_ticks;
      ProgressBar bar(!a.quiet);
      sim.start();
      const Tick from = sim.state().tick;  // a resumed run begins at its checkpoint
      auto loop0 = std::chrono::steady_clock::now();
      CheckpointTimer timer(a.checkpoint_every);
      time::Pacer pacer = make_pacer(a);
#ifdef FLEETSIM_HAVE_ROS2
      std::unique_ptr<ros2::Bridge> ros;
      if (a.ros2) {
        ros = std::make_unique<ros2::Bridge>(sim,
                                             ros2::BridgeOptions{a.ros2_domain, a.ros2_namespace});
        if (!a.quiet) std::cerr << ros->describe() << "\n";
        ros->publish();
      }
#endif
      while (!sim.done() && !g_interrupted.load()) {
#ifdef FLEETSIM_HAVE_ROS2
        if (ros) ros->take_commands();
#endif
        sim.step();
#ifdef FLEETSIM_HAVE_ROS2
        if (ros) ros->publish();
#endif
        if (pacer.mode() != time::TimeMode::kAsFastAsPossible)
          pacer.wait_until((sim.state().tick - from) * sim.model().tick_period_ns, "the run");
        timer.after_step(sim);
        double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - loop0).count();
        double simsec =
            static_cast<double>((sim.state().tick - from) * sim.model().tick_period_ns) / 1e9;
        bar.update(sim.state().tick, total, wall > 0 ? simsec / wall : 0);
      }
      bar.done();
      double loop_wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - loop0).count();
      if (g_interrupted.load()) failure = "interrupted at tick " + std::to_string(sim.state().tick);
      sim.finish();
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double simsec =
          static_cast<double>((sim.state().tick - from) * sim.model().tick_period_ns) / 1e9;
      const std::string hash = hex64(sim.state().hash());
      summary = {
          {"experiment", path},
          {"ticks", sim.state().tick},
          {"sim_seconds", simsec},
          {"wall_seconds", wall},
          {"loop_wall_seconds", loop_wall},
          {"cpu_seconds", cpu_seconds() - c0},
          {"rtf", loop_wall > 0 ? simsec / loop_wall : 0.0},
          {"robots", sim.state().robot_count()},
          {"threads", sim.threads()},
          {"robot_steps_per_second",
           loop_wall > 0 ? static_cast<double>(sim.robot_steps()) / loop_wall : 0.0},
          {"logs", logs},
          {"status", sim.state().status},
          {"state_hash", hash},
          {"checkpoints", checkpoints ? checkpoints->written() : std::vector<std::string>{}}};
      if (resume) summary["resumed_from_tick"] = resume->tick;
      add_pacing(summary, a, pacer);
      nlohmann::json phases;
      for (int p = 0; p < kPhaseCount; ++p)
        phases[phase_name(static_cast<Phase>(p))] = sim.phase_seconds()[p];
      summary["phase_seconds"] = phases;
      if (!a.quiet) {
        std::cout << path << ": " << sim.state().tick << " ticks"
                  << (from > 0 ? " (from tick " + std::to_string(from) + ")" : "") << ", " << simsec
                  << " simulated s in " << loop_wall << " wall s (" << summary["rtf"].get<double>()
                  << "x real time, " << summary["robot_steps_per_second"].get<double>()
                  << " robot-steps/s, " << sim.threads() << " threads)\n";
        if (checkpoints && !checkpoints->written().empty())
          std::cout << "  newest checkpoint: " << checkpoints->written().back() << "\n";
        for (const auto& l : logs)
          std::cout << "  log: " << l << "  (look at it: fleetsim view " << l << ")\n";
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty()) {
      std::cerr << path << ": error: " << failure << "\n";
      for (const auto& l : logs)
        if (std::filesystem::exists(l))  // (not one that could not be created)
          std::cerr << "  the log " << l << " is complete up to the last frame written\n";
      if (checkpoints && !checkpoints->written().empty())
        std::cerr << "  go on from the newest checkpoint: fleetsim run --resume "
                  << checkpoints->written().back() << "\n";
      summary["experiment"] = path;
      if (checkpoints) summary["checkpoints"] = checkpoints->written();
      summary["error"] = failure;
      status = kExitRuntimeError;
    }
    runs.push_back(summary);
    if (g_interrupted.load()) break;
  }
  if (a.json)
    std::cout << (runs.size() == 1 ? runs[0] : nlohmann::json{{"runs", runs}}).dump() << "\n";
  return status;
}

int check_command(const RunArgs& args) {
  RunArgs a = args;
#ifdef FLEETSIM_HAVE_FEDERATION
  // Federation files (root <federation>) are checked as `fleetsim launch` reads them.
  bool federation_errors = false;
  std::erase_if(a.files, [&](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string head = text.str().substr(0, 4096);
    const auto root = head.find("<federation");
    if (root == std::string::npos || head.find("<fleetsim") < root) return false;
    Diagnostics diags;
    const auto fed = federation::load_federation(path, diags);
    if (fed) federation::check_swarm_nodes(*fed, diags);  // swarm nodes against their experiments
    diags.print(std::cerr);
    if (!fed || diags.has_errors()) {
      federation_errors = true;
    } else {
      std::size_t typed = 0;
      for (const auto& f : fed->flows) typed += f.data_class != nullptr;
      std::cout << path << ": ok (" << fed->nodes.size() << " nodes, " << fed->flows.size()
                << " flows, " << typed << " typed, " << fed->classes.size() << " classes)\n";
    }
    return true;
  });
  if (a.files.empty()) return federation_errors ? kExitUserError : kExitOk;
  auto loaded = load_all(a);
  if (!loaded || federation_errors) return kExitUserError;
#else
  auto loaded = load_all(a);
  if (!loaded) return kExitUserError;
#endif
  for (const auto& [ex, reg] : *loaded)
    std::cout << ex.path << ": ok (" << ex.state.robot_count() << " robots, "
              << ex.state.object_count() << " objects, " << ex.model->segments.size()
              << " obstacle segments, " << ex.model->length_ticks << " ticks)\n";
  return kExitOk;
}

int list_command(bool json, const std::vector<std::string>& libraries) {
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics diags;
  for (const auto& lib : libraries) load_plugin_library(lib, reg, diags, {lib, 0});
  diags.print(std::cerr);
  if (diags.has_errors()) return kExitUserError;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& i : reg.all()) {
      nlohmann::json params = nlohmann::json::array();
      for (const auto& p : i.params)
        params.push_back(
            {{"name", p.name}, {"type", p.type}, {"default", p.default_value}, {"doc", p.doc}});
      nlohmann::json columns = nlohmann::json::array();
      if (i.kind == PluginKind::kSensor || i.kind == PluginKind::kActuator)
        for (const auto& c : part_columns(reg, i.kind, i.name))
          columns.push_back({{"name", c.name},
                             {"type", to_string(c.type)},
                             {"width", c.width},
                             {"hashed", c.hashed},
                             {"logged", c.logged},
                             {"doc", c.doc}});
      out.push_back({{"kind", to_string(i.kind)},
                     {"name", i.name},
                     {"interface", i.interface.empty() ? i.name : i.interface},
                     {"description", i.description},
                     {"params", params},
                     {"columns", columns}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<PluginInfo> infos = reg.all();
  std::stable_sort(infos.begin(), infos.end(),
                   [](const PluginInfo& a, const PluginInfo& b) { return a.kind < b.kind; });
  PluginKind last = PluginKind::kLogWriter;
  bool first = true;
  for (const auto& i : infos) {
    if (first || i.kind != last) {
      std::string heading = to_string(i.kind);
      if (heading.back() != 's') heading += 's';
      std::cout << (first ? "" : "\n") << heading << ":\n";
      last = i.kind;
      first = false;
    }
    std::cout << "  " << i.name << " — " << i.description
              << (i.origin == "built-in" ? "" : "  [" + i.origin + "]") << "\n";
    for (const auto& p : i.params)
      std::cout << "      " << p.name << " (" << p.type << ", default "
                << (p.default_value.empty() ? (p.type == "string" ? "none" : "required")
                                            : p.default_value)
                << "): " << p.doc << "\n";
    if (i.kind == PluginKind::kSensor || i.kind == PluginKind::kActuator) {
      if (!i.interface.empty() && i.interface != i.name)
        std::cout << "      provides: " << i.interface << "\n";
      for (const auto& c : part_columns(reg, i.kind, i.name))
        std::cout << "      column " << c.name << ": " << to_string(c.type) << " x " << c.width
                  << (c.logged ? ", logged" : "") << (c.hashed ? "" : ", not hashed") << " — "
                  << c.doc << "\n";
    }
  }
  std::cout << "\nPlug-in libraries named in an experiment's <plugins> add their own entries.\n";
  return kExitOk;
}

}  // namespace

void add_engine_commands(CLI::App& app, int& status) {
  auto args = std::make_shared<RunArgs>();
  if (const char* d = std::getenv("ROS_DOMAIN_ID")) {
    int domain = -1;
    if (std::from_chars(d, d + std::strlen(d), domain).ec == std::errc() && domain >= 0 &&
        domain <= 232)
      args->ros2_domain = domain;
  }
  auto* run = app.add_subcommand(
      "run",
      "Run experiment files one after another, writing their logs.\n"
      "All files are checked before the first one starts. Exit status: 0 ok, 1 a run failed "
      "(its log is complete up to the last frame), 2 bad input.");
  run->add_option("EXPERIMENT", args->files,
                  "experiment files (XML, docs/experiment-format.md); with --resume, the "
                  "checkpointed run's file by default");
  run->add_option("--threads", args->threads, "worker threads (overrides <framework threads>)")
      ->check(CLI::Range(1, 1024));
  run->add_option("--seed", args->seed, "random seed (overrides <framework seed>)");
  run->add_option("--length", args->length, "simulated seconds (overrides <framework length>)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--log", args->log_path,
                  "write one log here, replacing the file's <log> elements ('' writes none)");
  run->add_option("--log-format", args->log_format, "frames (binary, default) or deeco (text)")
      ->check(CLI::IsMember({"frames", "deeco"}));
  run->add_flag("--quiet", args->quiet, "no progress bar and no summary text");
  run->add_option("--processes", args->processes,
                  "run on N processes, each simulating whole physics-engine regions (the "
                  "experiment's <distribution>, else balanced by robot count); the log and the "
                  "state are the same as on one process (docs/distributed.md)")
      ->check(CLI::Range(1, 255));
  run->add_option("--transport", args->transport,
                  "with --processes: inproc (threads of this process), shm (processes on this "
                  "machine linked by shared-memory rings, default), ipc or tcp (processes linked "
                  "by ZeroMQ over ipc:// or tcp://127.0.0.1)")
      ->check(CLI::IsMember({"inproc", "shm", "ipc", "tcp"}));
  run->add_option("--sync", args->sync,
                  "with --processes: dsaam (decentralised flows, default) or lockstep (every "
                  "exchange through process 0)")
      ->check(CLI::IsMember({"dsaam", "lockstep"}));
  run->add_option("--jitter-us", args->jitter_us,
                  "with --processes: delay every message by a random 0..U microseconds (results "
                  "do not change; a test of that)")
      ->check(CLI::Range(0, 1000000));
  run->add_option("--network-role", args->network_role,
                  "run one process of a run over several machines: primary (listens, waits for "
                  "its secondaries, writes the log) or secondary (joins a primary)")
      ->check(CLI::IsMember({"primary", "secondary"}));
  run->add_option("--network-secondaries", args->network_secondaries,
                  "primary: how many secondaries to wait for (the run has N + 1 processes)")
      ->check(CLI::Range(1, 254));
  run->add_option("--listen", args->listen,
                  "primary: tcp://ADDR:PORT to listen on (default tcp://127.0.0.1:7770; its links "
                  "use the next ports); secondary: tcp://ADDR:PORT for its links (default: free "
                  "ports on 127.0.0.1; give this machine's address when the others are elsewhere)");
  run->add_option("--primary", args->primary, "secondary: the primary's tcp://HOST:PORT");
  run->add_option("--connect-timeout", args->connect_timeout,
                  "secondary: seconds to wait for the primary's answer (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  run->add_option("--secret-key", args->secret_key,
                  "network roles, authenticated: this machine's secret key file (`fleetsim "
                  "keygen`); the primary then admits only the secondaries in --public-keys, a "
                  "secondary checks the primary's --primary-key, and every link is encrypted");
  run->add_option("--public-keys", args->public_keys,
                  "primary: the directory of the public keys (NAME.pub) of the machines that "
                  "may join");
  run->add_option("--primary-key", args->primary_key,
                  "secondary: the primary's public key file (NAME.pub)");
  run->add_option("--checkpoint-every", args->checkpoint_every,
                  "write a checkpoint of the whole run every SECONDS of wall time into "
                  "--checkpoint-dir, keeping the newest two; works on one process or several "
                  "(docs/checkpoints.md)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--checkpoint-dir", args->checkpoint_dir,
                  "where --checkpoint-every writes (default: checkpoints)");
  run->add_option("--resume", args->resume,
                  "go on from a checkpoint file, or the newest in a directory, on any number "
                  "of processes: the final state and the log are those of a run never stopped. "
                  "Give the options the checkpointed run had (--seed, --log, ...)");
  run->add_option("--time-mode", args->time_mode,
                  "afap: as fast as possible (default); realtime: a simulated second takes a "
                  "wall second, for ROS 2 nodes or people watching a live run; linear: "
                  "--speedup simulated seconds per wall second. A run that cannot keep up says "
                  "how far behind it is, and --json reports max_lag_seconds; results never "
                  "change")
      ->check(CLI::IsMember({"afap", "realtime", "linear"}));
  run->add_option("--speedup", args->speedup,
                  "with --time-mode linear: simulated seconds per wall second (> 0)")
      ->check(CLI::PositiveNumber);
  run->add_flag("--json", args->json,
                "print a JSON summary on the last line of stdout (one object; {\"runs\": [...]} "
                "for several files)");
  run->add_flag("--ros2", args->ros2,
                "publish the run to ROS 2 over DDS (/clock, /NS/poses, and /NS/ROBOT/pose for "
                "robots whose controller is external) and take /NS/ROBOT/cmd_vel velocity "
                "commands for those robots (docs/ros2.md); with --time-mode realtime ROS nodes "
                "see a live simulation");
  run->add_option("--ros2-domain", args->ros2_domain,
                  "with --ros2: the DDS domain, as ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID, else 0)")
      ->check(CLI::Range(0, 232));
  run->add_option("--ros2-namespace", args->ros2_namespace,
                  "with --ros2: the topics' namespace NS (default: fleetsim)");
  run->callback([args, &status] { status = run_command(*args); });

  auto check_args = std::make_shared<RunArgs>();
  auto* check = app.add_subcommand(
      "check",
      "Check experiment files (or federation files) without running them: every problem, as "
      "file:line.");
  check->add_option("EXPERIMENT", check_args->files, "experiment or federation files")->required();
  check->callback([check_args, &status] { status = check_command(*check_args); });

  auto json = std::make_shared<bool>(false);
  auto libs = std::make_shared<std::vector<std::string>>();
  auto* list = app.add_subcommand(
      "list",
      "List every plug-in (sensors, actuators, controllers, physics engines, loop "
      "functions, log writers) with its documented parameters.");
  list->add_flag("--json", *json, "as JSON");
  list->add_option("--plugins", *libs, "also load these plug-in libraries and list their entries");
  list->callback([json, libs, &status] { status = list_command(*json, *libs); });
}

}  // namespace fleetsim::cli
