// The foot-bot communication benchmark, built in memory: N foot-bots placed uniformly at random
// in an open square arena of a given density, every one broadcasting on range-and-bearing
// every tick and steering by what it hears (`rab_disperse`, below). Shared by bench/footbot and
// the bench_smoke integration test.
//
// rab_disperse (a shared controller, no per-robot state): every tick it broadcasts its id
// (bytes 0-3, little-endian) and the tick (bytes 4-7), checks that every message it hears
// carries the previous tick (a message sent in tick t is heard in tick t + 1; counted in
// rab_disperse_payload_errors()), and steers: away from obstacles its proximity rays see in
// front (as `diffusion`), else away from the nearest robot it hears if nearer than `spacing`,
// else straight. Dispersion keeps the density, hence the messages per robot, about uniform
// over the run. With camera="true" it also enables its camera, lights its beacon (red on even
// ids, blue on odd ones) and turns its ring LEDs green when it sees more red than blue blobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "core/diagnostics.hpp"
#include "fleetsim/plugin.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim::bench {

struct FootbotSceneOptions {
  std::int64_t robots = 10'000;
  int threads = 2;
  int engines = 1;              ///< 1, 2, 4, 8 or 16 (see engine_grid)
  double seconds = 60;          ///< simulated seconds (10 ticks per second)
  double density_per_m2 = 1.0;  ///< robots per square metre of arena
  bool camera = false;          ///< the controller enables the camera and lights LEDs
  /// The foot-bots also carry footbot_light, footbot_motor_ground and footbot_base_ground,
  /// under a light every 10 m (0.5 m high, intensity 2) on a grey floor (their cost: the
  /// controller does not read them).
  bool light = false;
  /// The foot-bots also carry the distance scanner (sensor and actuator), turning at 30 rpm
  /// (six readings per ray a tick; the controller does not read them). Not with `light`.
  bool scanner = false;
  /// Range-and-bearing messages blocked by walls and bodies (the built-in foot-bot's default);
  /// false: a kind based on it whose receiver hears every robot in range.
  bool occlusion = true;
  std::uint64_t seed = 1;
};

/// Side of the square arena, metres: sqrt(robots / density).
double footbot_arena_side_m(const FootbotSceneOptions& options);

/// The experiment file's text.
std::string footbot_experiment_xml(const FootbotSceneOptions& options);

/// Messages whose payload did not carry the previous tick, over every rab_disperse controller of
/// the process (0 unless delivery is broken).
std::uint64_t rab_disperse_payload_errors();

/// Adds the `rab_disperse` controller to `registry`.
void register_rab_disperse(PluginRegistry& registry);

/// Parses the experiment (as a file in `directory`) with the built-ins and rab_disperse.
std::optional<Experiment> make_footbot_experiment(const FootbotSceneOptions& options,
                                                  const std::string& directory,
                                                  PluginRegistry& registry, Diagnostics& diags);

/// Mean number of other robots within `range_m` of a robot (centre to centre), by a sweep over
/// the robots sorted by x: what each robot hears per tick in the scene's final state.
double mean_neighbours_within(const WorldState& state, double range_m);

}  // namespace fleetsim::bench
