// fleetsim public SDK: counter-based random numbers.
#pragma once

#include <cmath>
#include <cstdint>

#include "fleetsim/types.hpp"

namespace fleetsim {

__extension__ using Uint128 = unsigned __int128;

/// Random streams. A value is a pure function of (seed, entity, tick, stream, index): no shared
/// generator is consumed in thread order, so results do not depend on thread count or on the
/// order in which robots are processed. Add new streams at the end; never renumber.
enum class RandomStream : std::uint32_t {
  kPlacement = 1,   ///< initial `distribute` placement (entity = index of the distribute element)
  kController = 2,  ///< controllers' own draws
  kSensorNoise = 3,
  kActuatorNoise = 4,
  kLoopFunctions = 5,
  kDatastreamNoise = 6,    ///< federation flows' <noise> (entity = flow, sink node, modifier)
  kLightSensorNoise = 7,   ///< footbot_light's noise_level
  kGroundSensorNoise = 8,  ///< footbot_motor_ground's and footbot_base_ground's noise_level
  kProximityNoise = 9,     ///< proximity's noise_level (ARGoS's uniform noise)
  kObjectBehaviour = 10,   ///< objects' behaviours' draws (entity = object id)
  kLayer = 11,             ///< environment layers' draws (entity = the layer's index)
  kUser = 100,             ///< first stream free for plug-ins
};

/// SplitMix64 finaliser: a bijective 64-bit mixer with good avalanche.
inline constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A counter-based generator: `next()` returns mix(key, counter++). Cheap to create on the
/// stack for one robot in one tick.
class CounterRng {
 public:
  CounterRng(std::uint64_t seed, EntityId entity, Tick tick, RandomStream stream)
      : key_(mix64(mix64(mix64(seed ^ 0x9e3779b97f4a7c15ULL) ^ entity) ^
                   static_cast<std::uint64_t>(tick)) ^
             (static_cast<std::uint64_t>(stream) << 32)) {}
  /// Uniform 64 random bits.
  std::uint64_t next() { return mix64(key_ + 0x9e3779b97f4a7c15ULL * ++counter_); }
  /// Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < 2^-32 for n < 2^32).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<Uint128>(next()) * n) >> 64);
  }
  /// Standard normal (Box-Muller, one value per call).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * kPi * u2);
  }

 private:
  std::uint64_t key_;
  std::uint64_t counter_ = 0;
};

}  // namespace fleetsim
