// bench/footbot: foot-bots talking on range-and-bearing every tick (footbot_scene.hpp).
//
//   footbot --robots N --threads P --engines E --seconds S --density D --camera off|on --seed S
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

#include "core/hash.hpp"
#include "diffusion_scene.hpp"
#include "footbot_scene.hpp"
#include "process_usage.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace {

using fleetsim::bench::FootbotSceneOptions;

using fleetsim::bench::cpu_seconds;
using fleetsim::bench::peak_rss_bytes;

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "footbot: " << why
            << "\nusage: footbot [--robots N] [--threads P] [--engines 1|2|4|8|16] "
               "[--seconds S] [--density ROBOTS_PER_M2] [--camera off|on] [--seed S]\n";
  std::exit(fleetsim::kExitUserError);
}

FootbotSceneOptions parse_args(int argc, char** argv) {
  FootbotSceneOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage("option " + a + " needs a value");
    std::string v = argv[++i];
    char* end = nullptr;
    auto integer = [&](long long lo, long long hi) {
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (*end || v.empty() || x < lo || x > hi)
        usage(a + " " + v + " (expected an integer in [" + std::to_string(lo) + ", " +
              std::to_string(hi) + "])");
      return x;
    };
    auto positive = [&](double hi) {
      double x = std::strtod(v.c_str(), &end);
      if (*end || v.empty() || !(x > 0 && x <= hi))
        usage(a + " " + v + " (expected a number in (0, " + std::to_string(hi) + "])");
      return x;
    };
    if (a == "--robots") {
      o.robots = integer(1, 100'000'000);
    } else if (a == "--threads") {
      o.threads = static_cast<int>(integer(1, 1024));
    } else if (a == "--engines") {
      o.engines = static_cast<int>(integer(1, 16));
      int c = 0, r = 0;
      if (!fleetsim::bench::engine_grid(o.engines, c, r))
        usage("--engines " + v + " (expected 1, 2, 4, 8 or 16)");
    } else if (a == "--seconds") {
      o.seconds = positive(1e6);
    } else if (a == "--density") {
      o.density_per_m2 = positive(20);  // foot-bots cover 45 % of the floor at 20 per m²
    } else if (a == "--camera") {
      if (v != "off" && v != "on") usage("--camera " + v + " (expected off or on)");
      o.camera = v == "on";
    } else if (a == "--seed") {
      o.seed = static_cast<std::uint64_t>(integer(0, 0x7fffffffffffffffLL));
    } else {
      usage("unknown option " + a);
    }
  }
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

    const double c0 = cpu_seconds();
    auto loop0 = Clock::now();
    while (!sim.done()) sim.step();
    const double loop_wall = std::chrono::duration<double>(Clock::now() - loop0).count();
    const double cpu = cpu_seconds() - c0;
    sim.finish();

    const double sim_seconds =
        static_cast<double>(sim.state().tick * sim.model().tick_period_ns) / 1e9;
    const std::string hash = hex64(sim.state().hash());
    nlohmann::ordered_json j = {
        {"bench", "footbot"},
        {"robots", sim.state().robot_count()},
        {"threads", sim.threads()},
        {"engines", sim.model().engines.size()},
        {"arena_m", bench::footbot_arena_side_m(o)},
        {"camera", o.camera},
        {"sim_seconds", sim_seconds},
        {"setup_seconds", setup},
        {"loop_wall_seconds", loop_wall},
        {"cpu_seconds", cpu},
        {"cpu_usage", loop_wall > 0 ? cpu / loop_wall : 0.0},
        {"rtf", loop_wall > 0 ? sim_seconds / loop_wall : 0.0},
        {"robot_steps_per_second",
         loop_wall > 0 ? static_cast<double>(sim.robot_steps()) / loop_wall : 0.0},
        {"neighbours_in_range", bench::mean_neighbours_within(sim.state(), 3.0)},
        {"payload_errors", bench::rab_disperse_payload_errors()},
        {"peak_rss_mb", peak_rss_bytes() / (1024.0 * 1024.0)},
        {"state_hash", hash}};
    std::cout << j.dump() << std::endl;
    std::cerr << "phases (wall s):";
    for (int p = 0; p < kPhaseCount; ++p)
      std::cerr << " " << phase_name(static_cast<Phase>(p)) << "=" << sim.phase_seconds()[p];
    std::cerr << "\n";
  } catch (const std::exception& e) {
    std::cerr << "footbot: " << e.what() << "\n";
    status = kExitRuntimeError;
  }
  std::filesystem::remove_all(dir);
  return status;
}
