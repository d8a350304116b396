// What the scene benchmarks (bench/diffusion, bench/footbot) share: the check of their
// --engines option, and the timed main loop that every figure of their JSON line comes from.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <ostream>
#include <string>

#include "diffusion_scene.hpp"
#include "process_usage.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::bench {

/// CLI11's check that a number is an engine count `engine_grid` knows.
inline CLI::Validator engine_count_check() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        int columns = 0, rows = 0, engines = 0;
        if (CLI::detail::lexical_cast(value, engines) && engine_grid(engines, columns, rows))
          return {};
        return value + " is not 1, 2, 4, 8 or 16";
      },
      "ENGINES");
}

/// What the main loop took.
struct LoopTimes {
  double loop_wall_seconds = 0;  ///< wall time of the loop
  double cpu_seconds = 0;        ///< the process's CPU time (every thread) during the loop
  double sim_seconds = 0;        ///< simulated time at the end

  double rtf() const { return loop_wall_seconds > 0 ? sim_seconds / loop_wall_seconds : 0.0; }
  double cpu_usage() const { return loop_wall_seconds > 0 ? cpu_seconds / loop_wall_seconds : 0.0; }
};

/// Runs a started simulation's main loop to its end, timed, then calls `finish()` (not timed).
inline LoopTimes run_timed_loop(Simulation& sim) {
  LoopTimes t;
  const double c0 = fleetsim::bench::cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  while (!sim.done()) sim.step();
  t.loop_wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  t.cpu_seconds = fleetsim::bench::cpu_seconds() - c0;
  sim.finish();
  t.sim_seconds = static_cast<double>(sim.state().tick * sim.model().tick_period_ns) / 1e9;
  return t;
}

/// CPU nanoseconds per robot-step of a loop.
inline double cpu_ns_per_robot_step(const LoopTimes& t, const Simulation& sim) {
  return sim.robot_steps() > 0 ? t.cpu_seconds * 1e9 / static_cast<double>(sim.robot_steps()) : 0.0;
}

/// Robot-steps per wall second of a loop.
inline double robot_steps_per_second(const LoopTimes& t, const Simulation& sim) {
  return t.loop_wall_seconds > 0 ? static_cast<double>(sim.robot_steps()) / t.loop_wall_seconds
                                 : 0.0;
}

/// The stderr line with the wall seconds of each phase of the step.
inline void print_phases(std::ostream& out, const Simulation& sim) {
  out << "phases (wall s):";
  for (int p = 0; p < kPhaseCount; ++p)
    out << " " << phase_name(static_cast<Phase>(p)) << "=" << sim.phase_seconds()[p];
  out << "\n";
}

}  // namespace fleetsim::bench
