// bench/diffusion: the ARGoS report's diffusion experiment at any size (issue 3).
//
//   diffusion --robots N --threads P --engines E --seconds S --log off|frames|compare --seed S
//             --repeat R
//             --controller diffusion|lua|random_walk|idle --script FILE.lua
//             --processes K --transport shm|ipc|tcp|inproc --sync dsaam|lockstep
//             --engine kinematics2d|dynamics2d --sub-steps N --rule fleetsim|argos
//
// `--engine` is the physics engine type of every region (the line's `engine`; `--sub-steps`
// sets dynamics2d's sub_steps, the line's `sub_steps`, 0 = the engine's default); `--rule` the
// diffusion controller's rule (`argos`: ARGoS's own, for like-for-like runs; the line's `rule`).
//
// Prints one JSON line on stdout (fields below) and the wall seconds of each phase of the
// step on stderr. Times and CPU usage are those of the main loop only, as the report measured
// them; `setup_seconds` covers building the arena, placing the robots and the first log frame.
// `bytes_per_robot` is the growth of the peak resident set over the process's size before
// setup, divided by N (everything a robot costs: state, index, engine scratch, placement).
// `cpu_ns_per_robot_step` is the main loop's CPU time over the robot-steps it made.
//
// `--log compare` measures what the frame log costs: the scene runs 2R times in this process,
// without a log and with a frame log every tick, alternated (off first), and the line has the
// medians over the R pairs: `log_overhead` (loop wall time with the log over that without, less
// one, pair by pair: the figure), `log_cpu_overhead` (the same of the process's CPU
// time), `loop_wall_seconds_off` and `_frames`, `cpu_seconds_off` and `_frames`, and
// `log_bytes_per_robot_frame` (the file over robots and frames), `state_hash` and
// `same_hash` (every run ended on the same state: the log changes nothing).
//
// `--controller lua` runs bench/diffusion/diffusion.lua (or --script), the same rule written as
// an ARGoS Lua script, after a run of the built-in diffusion controller on the same scene; the
// line then also has `builtin_cpu_ns_per_robot_step` and `lua_extra_cpu_ns_per_robot_step`,
// what Lua adds to each robot-step.
//
// `--processes K` (K > 1; the arena split into K domains, whatever E) first runs the scene on one
// process with P threads, then on K processes with P threads each (docs/distributed.md), and prints
// one line for the K-process run with `processes`, `speedup_vs_one_process`, `one_process_rtf`,
// `same_hash_as_one_process`, and the exchange's figures per tick over all processes:
// `halo_robots_per_tick` (robots whose halo columns were sent), `migrations_per_tick`,
// `bytes_per_tick` (payloads sent), `wire_bytes_per_tick` (what the transport carried: each payload
// once per process it reached, the end's few hundred bytes included), `exchange_us_per_tick` (the
// slowest process's packing, rounds and unpacking, including waiting for the others) and
// `exchange_work_us_per_tick` (the same without the waiting), all without the end's state gather
// (`state_gather_bytes`: once per run; `rtf` and `tick_us` include it); and `per_process`, each
// process's own `peak_rss_bytes`, `rss_end_bytes` (resident after the last tick: what it needs
// while it runs, the load behind it), `partitioned` (it held only its part of the world),
// `owned_robots` (robots it senses, controls and moves, on average over the ticks), `ghost_robots`
// (the others whose state it holds, on average), `held_robots_max`, `id_table_bytes`,
// `bytes_sent_per_tick`, `wire_bytes_sent_per_tick` (what the transport carried: each payload once
// per process it reached), `bytes_received_per_tick`, `exchange_us_per_tick`, `rounds_per_tick` and
// `state_hash`. `mpirun -n K diffusion ...` runs the scene on the K ranks of the MPI job instead
// (rank 0 prints the line, without the one-process run and its three figures).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_run.hpp"
#include "core/command_line.hpp"
#include "core/hash.hpp"
#include "diffusion_scene.hpp"
#include "distributed/mpi_run.hpp"
#include "distributed/swarm_run.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace {

using fleetsim::bench::DiffusionSceneOptions;

using fleetsim::bench::peak_rss_bytes;

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "diffusion: " << why << "\nRun with --help for more information.\n";
  std::exit(fleetsim::kExitUserError);
}

struct SwarmArgs {
  int processes = 1;
  std::string transport = "shm", sync = "dsaam";
  double checkpoint_every = 0;  ///< --checkpoint-every
};
SwarmArgs g_swarm;
bool g_compare_log = false;  ///< --log compare
int g_repeat = 5;            ///< --repeat

/// The options; exits after `--help` (0) and after a bad option (2, the error printed).
DiffusionSceneOptions parse_args(int argc, char** argv) {
  DiffusionSceneOptions o;
  o.seconds = 60;
  std::string log = "off", script;
  CLI::App app{
      "The ARGoS report's diffusion experiment at any size: e-pucks avoiding each other in a "
      "walled arena of rooms. Prints one JSON line (rtf, cpu_usage, cpu_ns_per_robot_step, "
      "bytes_per_robot, state_hash, ...) on stdout and each phase's wall seconds on stderr; "
      "docs/benchmarks.md has the fields and the commands of its tables.",
      "diffusion"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", o.robots, "Number of e-pucks N")->check(CLI::Range(1, 100'000'000));
  app.add_option("--threads", o.threads, "Worker threads P per process")
      ->check(CLI::Range(1, 1024));
  app.add_option("--engines", o.engines,
                 "Physics regions E: 1, 2, 4, 8 or 16 (the report's F_E partitions)")
      ->check(fleetsim::bench::engine_count_check());
  app.add_option("--seconds", o.seconds, "Simulated seconds")->check(CLI::Range(0.001, 1e6));
  app.add_option("--log", log,
                 "off, frames: a frame log every tick (into a temporary directory), or compare: "
                 "--repeat runs of each, alternated, and the log's cost (log_overhead)")
      ->check(CLI::IsMember({"off", "frames", "compare"}));
  app.add_option("--repeat", g_repeat, "With --log compare: runs of each (medians reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--loop-functions", o.loop_functions,
                 "Loop functions of the scene, by type (e.g. tag_on_contact: in the per-process "
                 "form, docs/loop-functions.md); none by default");
  app.add_option("--seed", o.seed, "Random seed of the placement and the controllers")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{0x7fffffffffffffff}));
  app.add_option("--controller", o.controller,
                 "Controller type: diffusion, random_walk, idle, lua (a Lua script, after a run "
                 "of the built-in diffusion as its baseline) or another registered one");
  app.add_option("--script", script,
                 "With --controller lua: the script (default: bench/diffusion/diffusion.lua)")
      ->check(CLI::ExistingFile);
  app.add_option("--engine", o.engine, "Physics engine type of every region")
      ->check(CLI::IsMember({"kinematics2d", "dynamics2d"}));
  app.add_option("--sub-steps", o.sub_steps, "dynamics2d's sub_steps (0: the engine's default)")
      ->check(CLI::Range(0, 100));
  app.add_option("--rule", o.rule,
                 "The diffusion controller's rule: fleetsim (its default), or argos (ARGoS's "
                 "own, for like-for-like runs)")
      ->check(CLI::IsMember({"fleetsim", "argos"}));
  app.add_option("--processes", g_swarm.processes,
                 "K > 1: run on one process first, then on K processes (the arena split into K "
                 "domains, whatever E) and compare (docs/distributed.md)")
      ->check(CLI::Range(1, 16));
  app.add_option("--transport", g_swarm.transport, "With --processes: the processes' transport")
      ->check(CLI::IsMember({"shm", "ipc", "tcp", "inproc"}));
  app.add_option("--sync", g_swarm.sync, "With --processes: the time management")
      ->check(CLI::IsMember({"dsaam", "lockstep"}));
  app.add_option("--checkpoint-every", g_swarm.checkpoint_every,
                 "With --processes or under mpirun: a checkpoint every SECONDS of wall time "
                 "(into the temporary directory; docs/checkpoints.md); 0: none")
      ->check(CLI::Range(0.0, 1e9));
  if (int status = fleetsim::parse_command_line(app, argc, argv); status >= 0) std::exit(status);
  o.log_frames = log == "frames";
  g_compare_log = log == "compare";
  if (g_compare_log && (o.controller == "lua" || g_swarm.processes > 1))
    usage("--log compare runs the built-in controllers on one process");
  if (!script.empty()) o.script = std::filesystem::absolute(script).string();
  if (g_swarm.processes > 1 && o.engine == "dynamics2d" && g_swarm.processes > o.engines)
    usage("--processes " + std::to_string(g_swarm.processes) +
          " with dynamics2d needs at least as many engines (--engines): its regions are "
          "simulated whole");
  if (g_swarm.checkpoint_every > 0 && g_swarm.processes <= 1 &&
      !fleetsim::distributed::mpi_launched())
    usage("--checkpoint-every is measured on several processes (--processes K, or mpirun)");
  if (g_swarm.processes > 1 && o.controller == "lua")
    usage("--processes with --controller lua is not measured here");
  if (o.controller == "lua" && o.script.empty())
    o.script = std::string(FLEETSIM_SOURCE_DIR) + "/bench/diffusion/diffusion.lua";
  return o;
}

/// One run of `o` on one process with the built-in plug-ins: the reference of the Lua and the
/// several-process runs.
struct OneRun {
  double rtf = 0;
  double cpu_ns_per_robot_step = 0;
  std::uint64_t state_hash = 0;
  fleetsim::bench::LoopTimes times;
  std::size_t robots = 0;
  fleetsim::Tick ticks = 0;
};
OneRun run_one_process(const fleetsim::bench::DiffusionSceneOptions& o, const std::string& dir) {
  using namespace fleetsim;
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  auto ex = bench::make_diffusion_experiment(o, dir, registry, diags);
  if (!ex) {
    diags.print(std::cerr);
    std::exit(kExitUserError);
  }
  Simulation sim(std::move(*ex), registry);
  sim.start();
  const bench::LoopTimes t = bench::run_timed_loop(sim);
  OneRun r;
  r.rtf = t.rtf();
  r.cpu_ns_per_robot_step = bench::cpu_ns_per_robot_step(t, sim);
  r.state_hash = sim.state().hash();
  r.times = t;
  r.robots = sim.state().robot_count();
  r.ticks = sim.state().tick;
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

/// --log compare: the scene without a log and with frames, alternated, g_repeat times each;
/// one JSON line with the medians (see the top of this file).
int compare_log(fleetsim::bench::DiffusionSceneOptions o, const std::string& dir) {
  std::vector<double> wall_off, wall_frames, cpu_off, cpu_frames, wall_ratio, cpu_ratio, bytes;
  std::uint64_t hash = 0;
  bool same = true;
  std::size_t robots = 0;
  for (int i = 0; i < g_repeat; ++i) {
    o.log_frames = false;
    const OneRun off = run_one_process(o, dir);
    o.log_frames = true;
    const OneRun on = run_one_process(o, dir);
    const std::string log = dir + "/diffusion.flog";
    bytes.push_back(static_cast<double>(std::filesystem::file_size(log)) /
                    static_cast<double>(std::max<std::size_t>(1, on.robots)) /
                    static_cast<double>(on.ticks + 1));  // (tick 0's frame too)
    std::filesystem::remove(log);
    wall_off.push_back(off.times.loop_wall_seconds);
    wall_frames.push_back(on.times.loop_wall_seconds);
    cpu_off.push_back(off.times.cpu_seconds);
    cpu_frames.push_back(on.times.cpu_seconds);
    wall_ratio.push_back(on.times.loop_wall_seconds / off.times.loop_wall_seconds - 1);
    cpu_ratio.push_back(on.times.cpu_seconds / off.times.cpu_seconds - 1);
    if (i == 0) hash = off.state_hash;
    same = same && off.state_hash == hash && on.state_hash == hash;
    robots = off.robots;
  }
  nlohmann::ordered_json j = {{"bench", "diffusion"},
                              {"log", "compare"},
                              {"robots", robots},
                              {"threads", o.threads},
                              {"engines", o.engines},
                              {"engine", o.engine},
                              {"repeat", g_repeat},
                              {"sim_seconds", o.seconds},
                              {"log_overhead", median(wall_ratio)},
                              {"log_cpu_overhead", median(cpu_ratio)},
                              {"loop_wall_seconds_off", median(wall_off)},
                              {"loop_wall_seconds_frames", median(wall_frames)},
                              {"cpu_seconds_off", median(cpu_off)},
                              {"cpu_seconds_frames", median(cpu_frames)},
                              {"log_bytes_per_robot_frame", median(bytes)},
                              {"state_hash", fleetsim::hex64(hash)},
                              {"same_hash", same}};
  std::cout << j.dump() << std::endl;
  return same ? fleetsim::kExitOk : fleetsim::kExitRuntimeError;
}

/// The scene on g_swarm.processes processes, after a one-process run of it, or on the ranks of
/// the MPI job this is (then without the one-process run); one JSON line (rank 0).
int run_processes(const fleetsim::bench::DiffusionSceneOptions& o, const std::string& dir) {
  using namespace fleetsim;
  const bool mpi = distributed::mpi_launched();
  // One process, the same threads per process: the reference for speed and bits.
  const OneRun one = mpi ? OneRun{} : run_one_process(o, dir);
  const double one_rtf = one.rtf;
  const std::uint64_t one_hash = one.state_hash;
  distributed::SwarmRunOptions so;
  so.processes = g_swarm.processes;
  so.transport = g_swarm.transport == "inproc" ? distributed::TransportKind::kInproc
                 : g_swarm.transport == "tcp"  ? distributed::TransportKind::kTcp
                 : g_swarm.transport == "ipc"  ? distributed::TransportKind::kIpc
                                               : distributed::TransportKind::kShm;
  so.sync =
      g_swarm.sync == "lockstep" ? distributed::SyncMode::kLockstep : distributed::SyncMode::kDsaam;
  so.checkpoint_every_s = g_swarm.checkpoint_every;
  so.checkpoint_dir = dir + "/checkpoints";  // (all kept, to count them; removed at the end)
  so.checkpoint_keep = 1'000'000;
  SimTime tick_ns = 0;
  auto run = mpi ? distributed::run_mpi : distributed::run_swarm;
  auto reports = run(
      [&]() -> std::optional<distributed::LoadedExperiment> {
        auto reg = std::make_unique<PluginRegistry>();
        register_builtins(*reg);
        Diagnostics diags;
        auto ex = bench::make_diffusion_experiment(o, dir, *reg, diags, /*defer_placement=*/true);
        if (!ex) {
          diags.print(std::cerr);
          return std::nullopt;
        }
        tick_ns = ex->model->tick_period_ns;
        return distributed::LoadedExperiment{std::move(*ex), std::move(reg)};
      },
      so);
  for (const auto& r : reports)
    if (!r.ok) {
      std::cerr << "diffusion: process " << r.process << ": " << r.error << "\n";
      return kExitRuntimeError;
    }
  if (mpi && reports.size() == 1 && reports.front().process != 0) return kExitOk;  // (rank 0 says)
  const auto& p0 = reports.front();
  const double ticks = static_cast<double>(std::max<Tick>(1, p0.ticks));
  const double sim_seconds = static_cast<double>(p0.ticks * tick_ns) / 1e9;
  double steps = 0, halo = 0, migrations = 0, bytes = 0, exchange = 0, work = 0, loop = 0,
         gather_bytes = 0, wire = 0;
  for (const auto& r : reports) {
    wire += static_cast<double>(r.exchange.wire_bytes_sent);
    steps += static_cast<double>(r.robot_steps);
    halo += static_cast<double>(r.exchange.halo_rows_sent);
    migrations += static_cast<double>(r.exchange.migrations_in);
    // The ticks' exchange: without the end's state gather (once per run, not per tick).
    bytes += static_cast<double>(r.exchange.bytes_sent - r.exchange.gather_bytes);
    exchange = std::max(exchange, r.exchange.seconds - r.exchange.gather_seconds);
    work = std::max(work, r.exchange.seconds - r.exchange.gather_seconds - r.exchange.wait_seconds);
    gather_bytes += static_cast<double>(r.exchange.gather_bytes);
    loop = std::max(loop, r.loop_wall_seconds);
  }
  const double rtf = loop > 0 ? sim_seconds / loop : 0;
  const std::string hash = hex64(p0.state_hash);
  // Each process's own figures (docs/scaling.md): what it holds, owns and sends.
  nlohmann::ordered_json per = nlohmann::ordered_json::array();
  for (const auto& r : reports) {
    const double owned = static_cast<double>(r.robot_steps) / ticks;  // (on average)
    const double held = static_cast<double>(r.exchange.held_robot_ticks) / ticks;
    per.push_back(
        {{"process", r.process},
         {"peak_rss_bytes", r.peak_rss_bytes},
         {"rss_end_bytes", r.rss_end_bytes},
         {"partitioned", r.partitioned},
         {"owned_robots", owned},
         {"ghost_robots", held - owned},
         {"held_robots_max", r.exchange.held_robots_max},
         {"id_table_bytes", r.exchange.id_table_bytes},
         {"bytes_sent_per_tick",
          static_cast<double>(r.exchange.bytes_sent - r.exchange.gather_bytes) / ticks},
         {"wire_bytes_sent_per_tick", static_cast<double>(r.exchange.wire_bytes_sent) / ticks},
         {"bytes_received_per_tick",
          static_cast<double>(r.exchange.bytes_received - r.exchange.gather_bytes_received) /
              ticks},
         {"exchange_us_per_tick", (r.exchange.seconds - r.exchange.gather_seconds) * 1e6 / ticks},
         {"rounds_per_tick", static_cast<double>(r.exchange.rounds) / ticks},
         {"state_hash", hex64(r.state_hash)}});
  }
  nlohmann::ordered_json j = {{"bench", "diffusion"},
                              {"robots", p0.robots},
                              {"loop_functions", o.loop_functions},
                              {"threads", o.threads},
                              {"engines", o.engines},
                              {"engine", o.engine},
                              {"processes", reports.size()},
                              {"transport", mpi ? std::string("mpi") : g_swarm.transport},
                              {"sync", mpi ? std::string("collective") : g_swarm.sync},
                              {"sim_seconds", sim_seconds},
                              {"loop_wall_seconds", loop},
                              {"rtf", rtf},
                              {"robot_steps_per_second", loop > 0 ? steps / loop : 0.0},

                              {"halo_robots_per_tick", halo / ticks},
                              {"migrations_per_tick", migrations / ticks},
                              {"bytes_per_tick", bytes / ticks},
                              {"wire_bytes_per_tick", wire / ticks},
                              {"state_gather_bytes", gather_bytes},
                              {"exchange_us_per_tick", exchange * 1e6 / ticks},
                              {"exchange_work_us_per_tick", work * 1e6 / ticks},
                              {"tick_us", loop * 1e6 / ticks},
                              {"checkpoints", p0.checkpoints.size()},
                              {"state_hash", hash}};
  if (!mpi) {
    j["one_process_rtf"] = one_rtf;
    j["speedup_vs_one_process"] = one_rtf > 0 ? rtf / one_rtf : 0.0;
    j["same_hash_as_one_process"] = p0.state_hash == one_hash;
  }
  j["per_process"] = per;
  std::cout << j.dump() << std::endl;
  for (const auto& r : reports) {
    std::cerr << "process " << r.process << " phases (wall s):";
    for (int p = 0; p < kPhaseCount && p < static_cast<int>(r.phase_seconds.size()); ++p)
      std::cerr << " " << phase_name(static_cast<Phase>(p)) << "=" << r.phase_seconds[p];
    std::cerr << " exchange=" << r.exchange.seconds << " (waiting " << r.exchange.wait_seconds
              << ")\n";
  }
  return mpi || p0.state_hash == one_hash ? kExitOk : kExitRuntimeError;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fleetsim;
  using Clock = std::chrono::steady_clock;
  DiffusionSceneOptions o = parse_args(argc, argv);
  const double rss0 = peak_rss_bytes();
  auto t0 = Clock::now();

  char tmpl[] = "/tmp/fleetsim-diffusion-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "diffusion: cannot create a temporary directory\n";
    return kExitRuntimeError;
  }
  const std::string dir = tmpl;
  int status = kExitOk;
  if (g_swarm.processes > 1 || distributed::mpi_launched()) {
    try {
      status = run_processes(o, dir);
    } catch (const std::exception& e) {
      std::cerr << "diffusion: " << e.what() << "\n";
      status = kExitRuntimeError;
    }
    std::filesystem::remove_all(dir);
    return status;
  }
  if (g_compare_log) {
    try {
      status = compare_log(o, dir);
    } catch (const std::exception& e) {
      std::cerr << "diffusion: " << e.what() << "\n";
      status = kExitRuntimeError;
    }
    std::filesystem::remove_all(dir);
    return status;
  }
  try {
    // The baseline for a Lua run: the built-in controller on the same scene, first.
    double builtin_ns = 0;
    if (o.controller == "lua") {
      DiffusionSceneOptions b = o;
      b.controller = "diffusion";
      b.log_frames = false;
      builtin_ns = run_one_process(b, dir).cpu_ns_per_robot_step;
      t0 = Clock::now();
    }
    PluginRegistry registry;
    register_builtins(registry);
    Diagnostics diags;
    auto ex = bench::make_diffusion_experiment(o, dir, registry, diags);
    if (!ex) {
      diags.print(std::cerr);
      std::filesystem::remove_all(dir);
      return kExitUserError;
    }
    Simulation sim(std::move(*ex), registry);
    sim.start();
    const double setup = std::chrono::duration<double>(Clock::now() - t0).count();

    const bench::LoopTimes t = bench::run_timed_loop(sim);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

    const double peak = peak_rss_bytes();
    const auto n = static_cast<double>(sim.state().robot_count());
    const std::string hash = hex64(sim.state().hash());
    nlohmann::ordered_json j = {{"bench", "diffusion"},
                                {"robots", sim.state().robot_count()},
                                {"threads", sim.threads()},
                                {"engines", sim.model().engines.size()},
                                {"engine", o.engine},
                                {"rule", o.rule.empty() ? "fleetsim" : o.rule},
                                {"sub_steps", o.sub_steps},
                                {"loop_functions", o.loop_functions},
                                {"sim_seconds", t.sim_seconds},
                                {"setup_seconds", setup},
                                {"loop_wall_seconds", t.loop_wall_seconds},
                                {"wall_seconds", wall},
                                {"cpu_seconds", t.cpu_seconds},
                                {"cpu_usage", t.cpu_usage()},
                                {"rtf", t.rtf()},
                                {"robot_steps_per_second", bench::robot_steps_per_second(t, sim)},
                                {"controller", o.controller},
                                {"cpu_ns_per_robot_step", bench::cpu_ns_per_robot_step(t, sim)},
                                {"peak_rss_mb", peak / (1024.0 * 1024.0)},
                                {"bytes_per_robot", n > 0 ? (peak - rss0) / n : 0.0},
                                {"state_hash", hash}};
    if (o.controller == "lua") {
      j["builtin_cpu_ns_per_robot_step"] = builtin_ns;
      j["lua_extra_cpu_ns_per_robot_step"] = j["cpu_ns_per_robot_step"].get<double>() - builtin_ns;
    }
    std::cout << j.dump() << std::endl;
    bench::print_phases(std::cerr, sim);
  } catch (const std::exception& e) {
    std::cerr << "diffusion: " << e.what() << "\n";
    status = kExitRuntimeError;
  }
  std::filesystem::remove_all(dir);
  return status;
}
