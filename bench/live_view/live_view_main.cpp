// bench/live_view: what `fleetsim run --view` costs a run that no page watches (issue 30:
// at most 2 %). The diffusion scene of bench/diffusion, run `--pairs` times without a view and
// with one, alternated (so that the machine's load falls on both alike); with the view, the
// simulation hands every tick's frame to the live view (LiveRun copies it, for pages that
// attach later and scroll back) and asks it before every step whether the run is paused or
// paced, as `fleetsim run --view` does; its server listens on a free port of 127.0.0.1.
//
//   live_view --robots N --threads P --seconds S --pairs K --log off|frames --seed S
//             --view-memory-mb M
//
// Prints one JSON line: the loop's wall seconds of each run (`off_seconds`, `view_seconds`),
// their medians, `overhead` = median(view) / median(off) - 1, `pair_overhead_median` (the
// median of each pair's own ratio, less sensitive to the load drifting), the same for the
// process's CPU seconds in the loop (`off_cpu_seconds`, `view_cpu_seconds`, `cpu_overhead`,
// `pair_cpu_overhead_median`: on a machine others load, CPU time varies less than wall time),
// `same_hash` (every run's final state hash is the same) and the frames the view held at the
// end.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_run.hpp"
#include "core/command_line.hpp"
#include "core/hash.hpp"
#include "diffusion_scene.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "view/live_view.hpp"

namespace {

using namespace fleetsim;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Run {
  double loop_seconds = 0;
  double cpu_seconds = 0;  ///< the process's CPU time (every thread) during the loop
  std::uint64_t hash = 0;
  std::size_t frames_held = 0;
};

std::size_t g_memory_bytes = 0;

Run run_once(const bench::DiffusionSceneOptions& o, const std::string& dir, bool view) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  auto ex = bench::make_diffusion_experiment(o, dir, registry, diags);
  if (!ex) {
    diags.print(std::cerr);
    std::exit(kExitUserError);
  }
  std::unique_ptr<view::LiveView> live;
  if (view) {
    view::LiveView::Options vo;
    vo.port = 0;
    vo.run.memory_bytes = g_memory_bytes;
    live = std::make_unique<view::LiveView>(
        vo, [](const std::string& m) { std::cerr << "live_view: " << m << "\n"; });
  }
  Simulation sim(std::move(*ex), registry);
  if (live) sim.observe_frames(&live->run());
  sim.start();
  if (live) {
    std::ostringstream out, err;
    live->serve("bench", out, err);
  }
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = bench::cpu_seconds();
  while (!sim.done()) {
    if (live)  // (nobody controls the run here: requests, if any, are dropped)
      while (!live->run().before_step(sim.state().tick, sim.model().tick_period_ns, {}))
        live->run().take_requests();
    sim.step();
  }
  Run r;
  r.loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  r.cpu_seconds = bench::cpu_seconds() - c0;
  sim.finish();
  r.hash = sim.state().hash();
  if (live) {
    r.frames_held = live->run().frame_count() - live->run().status().first_frame;
    live->end("done");
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bench::DiffusionSceneOptions o;
  o.robots = 10000;
  o.seconds = 20;
  int pairs = 5;
  std::string log = "off";
  std::size_t memory_mb = view::LiveRun::Options{}.memory_bytes >> 20;
  CLI::App app{
      "What `fleetsim run --view` costs a run no page watches: the diffusion scene without and "
      "with a live view, alternated; prints one JSON line (docs/benchmarks.md, \"Live view\").",
      "live_view"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", o.robots, "Number of e-pucks N")->check(CLI::Range(1, 100'000'000));
  app.add_option("--threads", o.threads, "Worker threads P")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", o.seconds, "Simulated seconds per run")->check(CLI::Range(0.1, 1e6));
  app.add_option("--pairs", pairs, "Runs without and with the view, alternated")
      ->check(CLI::Range(1, 100));
  app.add_option("--log", log, "off, or frames: the runs also write a frame log every tick")
      ->check(CLI::IsMember({"off", "frames"}));
  app.add_option("--seed", o.seed, "Random seed of the placement and the controllers")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{0x7fffffffffffffff}));
  app.add_option("--view-memory-mb", memory_mb,
                 "Frames the view holds for scrolling back, MiB of their columns (fleetsim run "
                 "--view's default)")
      ->check(CLI::Range(1, 1 << 20));
  if (int status = parse_command_line(app, argc, argv); status >= 0) return status;
  g_memory_bytes = memory_mb << 20;
  o.log_frames = log == "frames";

  const auto dir = std::filesystem::temp_directory_path() /
                   ("fleetsim_bench_live_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<double> off, on, ratio, off_cpu, on_cpu, cpu_ratio;
  std::uint64_t hash = 0;
  bool same = true;
  std::size_t held = 0;
  for (int k = 0; k < pairs; ++k) {
    // Alternate which goes first, so that neither always follows the other.
    Run a, b;
    if (k % 2 == 0) {
      a = run_once(o, dir.string(), false);
      b = run_once(o, dir.string(), true);
    } else {
      b = run_once(o, dir.string(), true);
      a = run_once(o, dir.string(), false);
    }
    off.push_back(a.loop_seconds);
    on.push_back(b.loop_seconds);
    ratio.push_back(b.loop_seconds / a.loop_seconds - 1);
    off_cpu.push_back(a.cpu_seconds);
    on_cpu.push_back(b.cpu_seconds);
    cpu_ratio.push_back(b.cpu_seconds / a.cpu_seconds - 1);
    if (k == 0) hash = a.hash;
    same = same && a.hash == hash && b.hash == hash;
    held = b.frames_held;
  }
  std::filesystem::remove_all(dir);
  const double m_off = median(off), m_on = median(on);
  nlohmann::json j = {{"bench", "live_view"},
                      {"robots", o.robots},
                      {"threads", o.threads},
                      {"seconds", o.seconds},
                      {"log", log},
                      {"pairs", pairs},
                      {"view_memory_mb", memory_mb},
                      {"off_seconds", off},
                      {"view_seconds", on},
                      {"off_median", m_off},
                      {"view_median", m_on},
                      {"overhead", m_off > 0 ? m_on / m_off - 1 : 0},
                      {"pair_overhead_median", median(ratio)},
                      {"off_cpu_seconds", off_cpu},
                      {"view_cpu_seconds", on_cpu},
                      {"cpu_overhead", median(on_cpu) / median(off_cpu) - 1},
                      {"pair_cpu_overhead_median", median(cpu_ratio)},
                      {"frames_held", held},
                      {"same_hash", same},
                      {"state_hash", hex64(hash)}};
  std::cout << j.dump() << std::endl;
  return same ? 0 : 1;
}
