// fleetsim public SDK: robot controllers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "fleetsim/random.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// Parameters of a controller or loop functions: the XML attributes of the element that names
/// it, already checked against the plug-in's documented ParamDoc list. Values are strings;
/// the getters convert (the registry checked the types before the run).
class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string text(const std::string& name, const std::string& fallback = "") const;
  double real(const std::string& name, double fallback) const;
  std::int64_t integer(const std::string& name, std::int64_t fallback) const;
  bool boolean(const std::string& name, bool fallback) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// Number of proximity sensors of the e-puck-like robot, and their angles (radians,
/// counter-clockwise from the heading).
inline constexpr int kProximityCount = 8;
inline constexpr double kProximityAngles[kProximityCount] = {
    0.3054326, 0.8552113, 1.5707963, 2.6179939, -2.6179939, -1.5707963, -0.8552113, -0.3054326};

/// The proximity sensors' unit vectors in the robot's frame: cos and sin of kProximityAngles,
/// computed once. Sensors and controllers share this table so they cannot drift apart.
struct ProximityDirections {
  double cos[kProximityCount];
  double sin[kProximityCount];
};
const ProximityDirections& proximity_directions();

/// Maximum number of contacts the collision sensor reports per tick.
inline constexpr int kMaxContacts = 4;

/// What a controller reads and writes for one robot in one tick. Valid only during step().
/// Reading: sensor values of this tick. Writing: actuator commands applied in this tick.
struct RobotIO {
  EntityId id = kNoEntity;
  Tick tick = 0;
  double dt_s = 0;  ///< seconds per tick

  /// Proximity readings in [0, 1]: 0 = nothing in range, 1 = touching (see docs).
  std::span<const float> proximity;
  /// Collision sensor: contact angles (radians, relative to the heading, CCW) at the end of the
  /// previous tick, and the fraction of last tick's commanded motion actually done.
  std::span<const float> contact_angles;
  float degree_of_realization = 1.0f;

  /// Wheel speed commands, metres per second (clamped to the kind's maximum).
  double* left_wheel_m_per_s = nullptr;
  double* right_wheel_m_per_s = nullptr;
  /// LED colour.
  Color* led = nullptr;
  /// The robot's tag. Reading is free; set_tag interns the string.
  const std::string* tag = nullptr;
  std::function<void(const std::string&)> set_tag;

  /// Randomness for this robot in this tick (stream kController): the same every run.
  CounterRng rng{0, 0, 0, RandomStream::kController};
};

/// A controller plug-in: one instance per robot, created before the run. step() is called once
/// per tick, concurrently for different robots: it must only touch its own members and io.
class Controller {
 public:
  virtual ~Controller() = default;
  /// Called once with the controller's XML parameters and the robot's id.
  virtual void init(const Params& params, EntityId robot) {}
  /// Sense + control: read io's sensors, write io's actuators.
  virtual void step(RobotIO& io) = 0;
  /// Back to the state right after init.
  virtual void reset() {}
};

}  // namespace fleetsim
