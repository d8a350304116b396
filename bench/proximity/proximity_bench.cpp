// The sensing hot path, measured alone (Google Benchmark): proximity readings per second at
// the diffusion benchmark's densities, the grid rebuild, and the cost of one controller step
// through the plug-in API (a virtual object per robot) against the built-in kernel.
//
//   build/bench/proximity [--benchmark_filter=...]
//
// Scenes are those of bench/diffusion: the rooms arena, robots placed uniformly at random.
// Arguments: robots in a 40 m x 40 m arena (10,000 = the ARGoS report's largest real-time
// density, 100,000 = the benchmark's density).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>

#include "control/diffusion.hpp"
#include "diffusion_scene.hpp"
#include "robots/proximity_sensor.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

struct World {
  std::shared_ptr<WorldModel> model;
  WorldState state;
  SpatialIndex index;
  ThreadPool pool{1};
};

std::unique_ptr<World> make_world(std::int64_t robots) {
  bench::DiffusionSceneOptions o;
  o.robots = robots;
  char tmpl[] = "/tmp/fleetsim-proximity-XXXXXX";
  if (!mkdtemp(tmpl)) return nullptr;
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  auto ex = bench::make_diffusion_experiment(o, tmpl, registry, diags);
  std::filesystem::remove_all(tmpl);
  if (!ex) return nullptr;
  auto w = std::make_unique<World>();
  w->model = ex->model;
  w->state = std::move(ex->state);
  w->index.init(*w->model);
  w->index.rebuild(*w->model, w->state, w->pool);
  return w;
}

// One reading of 8 rays for every robot, in the hot path's slot order.
void BM_ProximitySlotOrder(benchmark::State& st) {
  auto w = make_world(st.range(0));
  if (!w) return st.SkipWithError("scene");
  const auto n = static_cast<std::uint32_t>(w->state.robot_count());
  std::vector<float> out(static_cast<std::size_t>(n) * kEpuckRays);
  for (auto _ : st) {
    for (std::uint32_t s = 0; s < n; ++s)
      read_proximity_slot(w->state, w->index, s, 0.035, 0.1, epuck_rays(), &out[std::size_t{s} * kEpuckRays]);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * n);
  st.SetLabel("items = robot readings (8 rays each)");
}
BENCHMARK(BM_ProximitySlotOrder)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// The same through the robot-index entry point (finds the robot's slot first).
void BM_ProximityRobotOrder(benchmark::State& st) {
  auto w = make_world(st.range(0));
  if (!w) return st.SkipWithError("scene");
  const std::size_t n = w->state.robot_count();
  std::vector<float> out(n * kEpuckRays);
  for (auto _ : st) {
    for (std::size_t i = 0; i < n; ++i)
      read_proximity(w->state, w->index, i, 0.035, 0.1, epuck_rays(), &out[i * kEpuckRays]);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(BM_ProximityRobotOrder)->Arg(100'000)->Unit(benchmark::kMillisecond);

// The grid rebuild (counting sort) every tick starts with, on one thread.
void BM_GridRebuild(benchmark::State& st) {
  auto w = make_world(st.range(0));
  if (!w) return st.SkipWithError("scene");
  for (auto _ : st) w->index.rebuild(*w->model, w->state, w->pool);
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * w->state.robot_count()));
}
BENCHMARK(BM_GridRebuild)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fleetsim

BENCHMARK_MAIN();
