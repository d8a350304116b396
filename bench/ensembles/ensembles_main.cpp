// bench/ensembles: the diffusion scene (bench/diffusion: N e-pucks in rooms, the diffusion
// controller) with knowledge and one spatial ensemble evaluated every tick: every robot is a
// coordinator and every robot within `--within` metres a member; the built-in knowledge_max
// spreads a field (`--ensemble knowledge_max`), or a Lua script counts neighbours
// (`--ensemble lua`), or there is none (`--ensemble none`, the baseline).
//
//   ensembles --robots N --threads P --seconds S --within D --period K --ensemble T --repeat R
//
// Prints one JSON line: the medians over R runs of the tick's wall milliseconds, the
// ensembles phase's, and its share of the tick; the pairs evaluated per tick; the state hash.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_run.hpp"
#include "core/command_line.hpp"
#include "core/hash.hpp"
#include "diffusion_scene.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace {

struct Options {
  std::int64_t robots = 100'000;
  int threads = 2;
  double seconds = 5;
  double within = 0.3;
  int period = 1;
  std::string ensemble = "knowledge_max";
  int repeat = 3;
};

Options parse_args(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Ensembles on the diffusion scene: one spatial ensemble over every robot each "
      "tick. Prints one JSON line (medians of the tick and of the ensembles phase, "
      "the phase's share); docs/benchmarks.md has the commands of its table.",
      "ensembles"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", o.robots, "Number of e-pucks N")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{10'000'000}));
  app.add_option("--threads", o.threads, "Worker threads P")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", o.seconds, "Simulated seconds (10 ticks per second)")
      ->check(CLI::Range(0.1, 1e6));
  app.add_option("--within", o.within, "The ensemble's reach, metres")
      ->check(CLI::Range(0.001, 100.0));
  app.add_option("--period", o.period, "The ensemble's period, ticks")->check(CLI::Range(1, 1000));
  app.add_option("--ensemble", o.ensemble, "knowledge_max, lua or none")
      ->check(CLI::IsMember({"knowledge_max", "lua", "none"}));
  app.add_option("--repeat", o.repeat, "Runs (the figures are their medians)")
      ->check(CLI::Range(1, 100));
  if (int status = fleetsim::parse_command_line(app, argc, argv); status >= 0) std::exit(status);
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fleetsim;
  const Options o = parse_args(argc, argv);
  char tmpl[] = "/tmp/fleetsim-ensembles-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "ensembles: cannot create a temporary directory\n";
    return kExitRuntimeError;
  }
  const std::string dir = tmpl;
  std::ofstream(dir + "/count.lua") << "function is_coordinator(r) r.knowledge.neighbours = 0 "
                                       "return true end\n"
                                       "function exchange(c, m) c.knowledge.neighbours = "
                                       "c.knowledge.neighbours + 1 end\n";
  std::vector<double> tick_ms, ensembles_ms, share;
  std::string hash;
  double pairs = 0;
  int status = kExitOk;
  try {
    for (int run = 0; run < o.repeat; ++run) {
      bench::DiffusionSceneOptions d;
      d.robots = o.robots;
      d.threads = o.threads;
      d.seconds = o.seconds;
      std::string xml = bench::diffusion_experiment_xml(d);
      std::string extra =
          "<knowledge><field name=\"news\" size=\"3\"/><field name=\"neighbours\"/></knowledge>\n";
      const std::string common = " within=\"" + std::to_string(o.within) + "\" period=\"" +
                                 std::to_string(o.period) + "\"";
      if (o.ensemble == "knowledge_max")
        extra += "<ensembles><ensemble type=\"knowledge_max\" field=\"news\" into=\"coordinator\"" +
                 common + "/></ensembles>\n";
      else if (o.ensemble == "lua")
        extra +=
            "<ensembles><ensemble type=\"lua\" script=\"count.lua\"" + common + "/></ensembles>\n";
      xml.insert(xml.rfind("</fleetsim>"), extra);
      PluginRegistry registry;
      register_builtins(registry);
      Diagnostics diags;
      // The rooms bitmap, then the text parsed as a file of the directory.
      auto probe = bench::make_diffusion_experiment(d, dir, registry, diags);
      if (!probe) {
        diags.print(std::cerr);
        return kExitUserError;
      }
      probe.reset();
      auto ex =
          parse_experiment(xml, dir + "/ensembles.xml", registry, ExperimentOverrides{}, diags);
      if (!ex) {
        diags.print(std::cerr);
        return kExitUserError;
      }
      // Robot 0 has news at first (it spreads when the ensemble is knowledge_max).
      ex->state.robots.span<double>(ex->state.robots.find("knowledge.news"))[0] = 1;
      Simulation sim(std::move(*ex), registry);
      sim.start();
      const bench::LoopTimes t = bench::run_timed_loop(sim);
      const double ticks = static_cast<double>(sim.state().tick);
      const double ens = sim.phase_seconds()[static_cast<int>(Phase::kEnsembles)];
      tick_ms.push_back(t.loop_wall_seconds * 1e3 / ticks);
      ensembles_ms.push_back(ens * 1e3 / ticks);
      share.push_back(ens / t.loop_wall_seconds);
      hash = hex64(sim.state().hash());
      pairs = static_cast<double>(sim.ensemble_pairs());
    }
    nlohmann::ordered_json j = {{"bench", "ensembles"},
                                {"robots", o.robots},
                                {"threads", o.threads},
                                {"ensemble", o.ensemble},
                                {"within_m", o.within},
                                {"period", o.period},
                                {"runs", o.repeat},
                                {"tick_ms_median", median(tick_ms)},
                                {"ensembles_ms_median", median(ensembles_ms)},
                                {"ensembles_share_median", median(share)},
                                {"pairs_last_evaluation", pairs},
                                {"state_hash", hash}};
    std::cout << j.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "ensembles: " << e.what() << "\n";
    status = kExitRuntimeError;
  }
  std::filesystem::remove_all(dir);
  return status;
}
