// bench/footbot: foot-bots talking on range-and-bearing every tick (footbot_scene.hpp).
//
//   footbot --robots N --threads P --engines E --seconds S --density D --camera off|on --light
//   off|on --scanner off|on --occlusion on|off --seed S
//
// Prints one JSON line on stdout and the wall seconds of each phase on stderr. Times cover the
// main loop only (as bench/diffusion). `neighbours_in_range` is the mean number of robots
// within the foot-bot's 3 m range of a robot at the end of the run (how many messages each
// robot receives per tick); `payload_errors` counts messages that did not carry the previous
// tick's payload (0 unless delivery is broken).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_run.hpp"
#include "core/command_line.hpp"
#include "core/hash.hpp"
#include "diffusion_scene.hpp"
#include "footbot_scene.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace {

using fleetsim::bench::FootbotSceneOptions;

using fleetsim::bench::peak_rss_bytes;

/// The options; exits after `--help` (0) and after a bad option (2, the error printed).
FootbotSceneOptions parse_args(int argc, char** argv) {
  FootbotSceneOptions o;
  std::string camera = "off", light = "off", occlusion = "on", scanner = "off";
  CLI::App app{
      "Foot-bots dispersing on range-and-bearing messages every tick (optionally with the "
      "omnidirectional camera and LEDs). Prints one JSON line (rtf, cpu_usage, "
      "neighbours_in_range, payload_errors, state_hash, ...) on stdout and each phase's wall "
      "seconds on stderr; docs/benchmarks.md has the fields and the commands of its tables.",
      "footbot"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", o.robots, "Number of foot-bots N")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000'000}));
  app.add_option("--threads", o.threads, "Worker threads P")->check(CLI::Range(1, 1024));
  app.add_option("--engines", o.engines, "Physics regions E: 1, 2, 4, 8 or 16")
      ->check(fleetsim::bench::engine_count_check());
  app.add_option("--seconds", o.seconds, "Simulated seconds (10 ticks per second)")
      ->check(CLI::Range(0.001, 1e6));
  // (foot-bots cover 45 % of the floor at 20 per m²)
  app.add_option("--density", o.density_per_m2, "Robots per square metre of arena, up to 20")
      ->check(CLI::Range(0.001, 20.0));
  app.add_option("--camera", camera, "on: the controller enables the camera and lights LEDs")
      ->check(CLI::IsMember({"off", "on"}));
  app.add_option("--light", light,
                 "on: the foot-bots also carry the light and ground sensors, under lights on a "
                 "grey floor")
      ->check(CLI::IsMember({"off", "on"}));
  app.add_option("--scanner", scanner,
                 "on: the foot-bots also carry the distance scanner, turning at 30 rpm (not with "
                 "--light on)")
      ->check(CLI::IsMember({"off", "on"}));
  app.add_option("--occlusion", occlusion,
                 "on: range-and-bearing messages are blocked by walls and bodies (the built-in "
                 "foot-bot's default, ARGoS's); off: every robot in range is heard")
      ->check(CLI::IsMember({"off", "on"}));
  app.add_option("--seed", o.seed, "Random seed of the placement and the controllers")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{0x7fffffffffffffff}));
  if (int status = fleetsim::parse_command_line(app, argc, argv); status >= 0) std::exit(status);
  o.camera = camera == "on";
  o.light = light == "on";
  o.scanner = scanner == "on";
  if (o.light && o.scanner) {
    std::cerr << "footbot: --light on and --scanner on measure one part each: give one\n";
    std::exit(2);
  }
  o.occlusion = occlusion == "on";
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fleetsim;
  using Clock = std::chrono::steady_clock;
  FootbotSceneOptions o = parse_args(argc, argv);
  auto t0 = Clock::now();

  char tmpl[] = "/tmp/fleetsim-footbot-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "footbot: cannot create a temporary directory\n";
    return kExitRuntimeError;
  }
  const std::string dir = tmpl;
  int status = kExitOk;
  try {
    PluginRegistry registry;
    register_builtins(registry);
    bench::register_rab_disperse(registry);
    Diagnostics diags;
    auto ex = bench::make_footbot_experiment(o, dir, registry, diags);
    if (!ex) {
      diags.print(std::cerr);
      std::filesystem::remove_all(dir);
      return kExitUserError;
    }
    Simulation sim(std::move(*ex), registry);
    sim.start();
    const double setup = std::chrono::duration<double>(Clock::now() - t0).count();

    const bench::LoopTimes t = bench::run_timed_loop(sim);

    const std::string hash = hex64(sim.state().hash());
    nlohmann::ordered_json j = {
        {"bench", "footbot"},
        {"robots", sim.state().robot_count()},
        {"threads", sim.threads()},
        {"engines", sim.model().engines.size()},
        {"arena_m", bench::footbot_arena_side_m(o)},
        {"camera", o.camera},
        {"light", o.light},
        {"scanner", o.scanner},
        {"occlusion", o.occlusion},
        {"sim_seconds", t.sim_seconds},
        {"setup_seconds", setup},
        {"loop_wall_seconds", t.loop_wall_seconds},
        {"cpu_seconds", t.cpu_seconds},
        {"cpu_usage", t.cpu_usage()},
        {"rtf", t.rtf()},
        {"robot_steps_per_second", bench::robot_steps_per_second(t, sim)},
        {"neighbours_in_range", bench::mean_neighbours_within(sim.state(), 3.0)},
        {"payload_errors", bench::rab_disperse_payload_errors()},
        {"peak_rss_mb", peak_rss_bytes() / (1024.0 * 1024.0)},
        {"state_hash", hash}};
    std::cout << j.dump() << std::endl;
    bench::print_phases(std::cerr, sim);
  } catch (const std::exception& e) {
    std::cerr << "footbot: " << e.what() << "\n";
    status = kExitRuntimeError;
  }
  std::filesystem::remove_all(dir);
  return status;
}
