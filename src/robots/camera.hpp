// `colored_blob_omnidirectional_camera` (sensor): the lit LEDs of the other robots around,
// as coloured blobs (ARGoS's omnidirectional camera, rot_z_only implementation).
//
// LEDs are those of the `leds` actuators (every actuator whose interface is `leds`), in their
// visible column, i.e. as the act phase of the previous tick left them. Where a robot's LEDs
// are: with L > 1 LEDs, LEDs 0 .. L-2 form a ring at the body's radius, LED i at
// (i + 1/2) * 360 / (L - 1) degrees counter-clockwise from the robot's heading (the foot-bot's
// 12, 15 degrees apart from +15), and LED L-1 (the beacon) is at the centre; a single LED is
// at the centre. An LED is unlit when its red, green and blue are all 0 (black, whatever its
// alpha): unlit LEDs make no blob. A robot never sees its own LEDs.
//
// A blob is reported for every lit LED within `range` (horizontal distance from the robot's
// centre to the LED):
//   color      = the LED's colour (alpha as the controller set it);
//   distance_m = that horizontal distance, metres (LED heights are ignored, as in ARGoS);
//   angle      = its bearing in the robot's frame, radians in (-pi, pi], 0 ahead, positive
//                to the left (counter-clockwise seen from above), as range-and-bearing.
// Order: by the LED owner's id (ascending), then LED index (ring, then beacon).
// blocked_by_obstacles (default false): when true, an LED is hidden when the segment from the
// robot's centre to it crosses a static obstacle (wall, box side, bitmap edge); robots never
// hide LEDs. False by default for speed; ARGoS checks occlusions (by walls and robots) always.
//
// Enabling: the camera is disabled by default, as in ARGoS: a disabled camera reports no blobs.
// The controller switches it with `*view.enabled = true / false`; the change applies from the
// next tick's sense phase on (the flag is state: a column, hashed).
//   XML: range (real, 3, metres, >= 0), blocked_by_obstacles (bool, false).
//   SensorView: blobs, enabled, scalar = range (metres). Blobs valid until the step returns.
//   Column: `<name>_enabled` (u8, 1 = enabled, hashed, not logged).
#pragma once

#include <memory>

#include "fleetsim/parts.hpp"

namespace fleetsim {

/// The registry name (and interface).
inline constexpr const char* kColoredBlobOmnidirectionalCamera =
    "colored_blob_omnidirectional_camera";
inline constexpr double kCameraDefaultRangeM = 3.0;

/// Angle of ring LED `i` of a robot with `count` LEDs (count > 1; i < count - 1), radians
/// counter-clockwise from its heading. (The viewer and the camera must agree.)
double led_ring_angle(int i, int count);

std::unique_ptr<Sensor> make_colored_blob_omnidirectional_camera();

}  // namespace fleetsim
