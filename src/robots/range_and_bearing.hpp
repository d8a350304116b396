// `range_and_bearing`, a sensor and an actuator of the same name: situated communication, as
// ARGoS's range-and-bearing device. Every tick each robot broadcasts a small payload; every
// robot hears, one tick later, the payloads of the robots around it, each with where it came
// from (range and bearings). The foot-bot has both parts.
//
// Actuator (the emitter). The controller writes the payload into ActuatorView::data
// (data_size bytes). The bytes persist from tick to tick until the controller overwrites them
// (zeros at first), as in ARGoS: a robot that never writes still broadcasts zeros. The act
// phase publishes them: they become the bytes other robots receive in the next tick.
//   XML: data_size (integer, 10): payload bytes, 1 to 4096.
//   ActuatorView: data (the payload to send), constants = {data_size}.
//   Columns: `range_and_bearing` (u8 x data_size, hashed, not logged): the payload published
//   in the last act phase, which receivers read; `range_and_bearing_cmd` (u8 x data_size,
//   hashed): the payload the controller writes. The names do not follow the part's name: a
//   kind has at most one emitter.
//
// Sensor (the receiver). In the sense phase of tick t, one message from every other robot whose
// kind has the emitter and whose device lies within `range` of this robot's device, carrying
// what that robot published in the act phase of tick t - 1 (zeros in the first tick). A robot
// never hears itself. A device sits on the robot's axis at the kind's height (height_m, above
// a floor at z = 0), so
//   range_m            = the 3D distance between the two devices (centre to centre), metres;
//   horizontal_bearing = the direction of the sender in the receiver's frame, radians in
//                        (-pi, pi], 0 straight ahead, positive to the left (counter-clockwise
//                        seen from above);
//   vertical_bearing   = the sender's elevation, radians in [-pi/2, pi/2], positive when the
//                        sender's device is higher (0 between robots of equal height).
// Messages are sorted by sender id (ascending): never grid, thread or arrival order.
// Payload sizes: a message always carries the receiver's data_size bytes; a shorter payload is
// padded with zeros and a longer one cut. (ARGoS instead drops messages between devices of
// different sizes; here a heterogeneous swarm still hears each other.)
// Range: the receiver's (ARGoS uses the sender's; the two agree when every kind has the same).
// blocked_by_obstacles: when true, a message is lost when the segment between the two robots'
// centres crosses a static obstacle (wall, box side, bitmap edge). blocked_by_bodies: when
// true, also when that segment crosses a third robot's body (a ground robot of any kind,
// passive bodies too) before it reaches the sender's body: ARGoS's medium's check_occlusions
// (in the plane; flyers neither block nor are blocked). Both are false by default for a kind of
// one's own and true on the built-in foot-bot, as ARGoS checks occlusions by default.
//   XML: range (real, 3, metres, > 0), data_size (integer, 10, 1 to 4096),
//   blocked_by_obstacles (bool, false), blocked_by_bodies (bool, false).
//   SensorView: messages (sender id, data, range_m, horizontal_bearing, vertical_bearing),
//   scalar = range (metres). The message spans are valid until the controller's step returns.
//   Columns: declares `range_and_bearing` too (same as the emitter's; widths merge), so its
//   rows are at least data_size bytes wide even when no kind emits.
#pragma once

#include <cstdint>
#include <memory>

#include "fleetsim/parts.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// The registry name (and the interface) of both parts.
inline constexpr const char* kRangeAndBearing = "range_and_bearing";
/// The column receivers read (the payload published in the last act phase).
inline constexpr const char* kRangeAndBearingDataColumn = "range_and_bearing";
/// The column the controller writes.
inline constexpr const char* kRangeAndBearingCommandColumn = "range_and_bearing_cmd";
/// Defaults (ARGoS's foot-bot: 10 bytes, 3 m).
inline constexpr double kRangeAndBearingDefaultRangeM = 3.0;
inline constexpr std::int64_t kRangeAndBearingDefaultDataSize = 10;
inline constexpr std::int64_t kRangeAndBearingMaxDataSize = 4096;

/// The reception range of `kind`'s range-and-bearing sensor, metres; 0 when it has none. (For
/// the log header's per-kind `rab_range_m`.)
double rab_range_m(const RobotKind& kind);

std::unique_ptr<Sensor> make_range_and_bearing_sensor();
std::unique_ptr<Actuator> make_range_and_bearing_actuator();

}  // namespace fleetsim
