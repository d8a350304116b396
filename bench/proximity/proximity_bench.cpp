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
  std::vector<float> out(static_cast<std::size_t>(n) * kProximityCount);
  for (auto _ : st) {
    for (std::uint32_t s = 0; s < n; ++s)
      read_proximity_slot(*w->model, w->state, w->index, s, &out[std::size_t{s} * kProximityCount]);
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
  std::vector<float> out(n * kProximityCount);
  for (auto _ : st) {
    for (std::size_t i = 0; i < n; ++i)
      read_proximity(*w->model, w->state, w->index, i, &out[i * kProximityCount]);
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

// A controller step per robot, as Simulation::sense_and_control runs it: the built-in
// diffusion kernel inline, against `random_walk` through the plug-in API (RobotIO filled, a
// counter-based generator made, one virtual call). The difference is the price of a plug-in.
void BM_ControllerBuiltinDiffusion(benchmark::State& st) {
  auto w = make_world(100'000);
  if (!w) return st.SkipWithError("scene");
  const std::size_t n = w->state.robot_count();
  std::vector<float> prox(n * kProximityCount);
  for (std::uint32_t s = 0; s < n; ++s)
    read_proximity_slot(*w->model, w->state, w->index, s,
                        &prox[w->index.robots.order()[s] * std::size_t{kProximityCount}]);
  DiffusionParams prm;
  auto& ws = w->state;
  for (auto _ : st) {
    for (std::size_t i = 0; i < n; ++i)
      diffusion_step(prm, &prox[i * kProximityCount], ws.realization[i], ws.cmd_left[i],
                     ws.cmd_right[i]);
    benchmark::DoNotOptimize(ws.cmd_left.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(BM_ControllerBuiltinDiffusion)->Unit(benchmark::kMillisecond);

void BM_ControllerPluginRandomWalk(benchmark::State& st) {
  auto w = make_world(100'000);
  if (!w) return st.SkipWithError("scene");
  PluginRegistry registry;
  register_builtins(registry);
  const ControllerFactory* factory = registry.controller_factory("random_walk");
  if (!factory) return st.SkipWithError("no random_walk");
  const std::size_t n = w->state.robot_count();
  std::vector<std::unique_ptr<Controller>> instances(n);
  Params params;
  for (std::size_t i = 0; i < n; ++i) {
    instances[i] = (*factory)();
    instances[i]->init(params, w->state.robot_id[i]);
  }
  auto& ws = w->state;
  std::vector<std::pair<std::uint32_t, std::string>> staged;
  for (auto _ : st) {
    for (std::size_t i = 0; i < n; ++i) {
      RobotIO io;
      io.id = ws.robot_id[i];
      io.tick = ws.tick;
      io.dt_s = 0.1;
      io.proximity = {&ws.proximity[i * kProximityCount], std::size_t{kProximityCount}};
      io.contact_angles = {&ws.contact_angle[i * kMaxContacts], ws.contact_count[i]};
      io.degree_of_realization = ws.realization[i];
      io.left_wheel_m_per_s = &ws.cmd_left[i];
      io.right_wheel_m_per_s = &ws.cmd_right[i];
      io.led = &ws.led[i];
      io.tag = &ws.tags.str(ws.robot_tag[i]);
      io.set_tag = [&staged, i](const std::string& t) {
        staged.emplace_back(static_cast<std::uint32_t>(i), t);
      };
      io.rng = CounterRng(w->model->seed, io.id, ws.tick, RandomStream::kController);
      instances[i]->step(io);
    }
    ++ws.tick;
    benchmark::DoNotOptimize(ws.cmd_left.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(BM_ControllerPluginRandomWalk)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fleetsim

BENCHMARK_MAIN();
