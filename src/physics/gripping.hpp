// The foot-bot's gripper and turret as the physics sees them (ARGoS's
// `dynamics2d_gripping.cpp` and the gripper parts of `dynamics2d_footbot_model.cpp`).
//
// The `footbot_gripper` actuator (src/robots/gripper.cpp) declares the columns below; the
// `dynamics2d` engine reads the aperture the controller set and keeps the grip in them: which
// body is held and where. A run without the gripper has none of these columns, and dynamics2d
// then does exactly what it did before (the same bits).
#pragma once

#include <cstdint>

namespace fleetsim {

/// Aperture command, radians in [-pi/2, pi/2] (f64 x 1): ARGoS's lock_positive() is pi/2,
/// lock_negative() -pi/2, unlock() 0. Written by the controller.
inline constexpr const char* kGripperColumn = "footbot_gripper";
/// The body held: its entity id + 1, 0 for none (u32 x 1). Written by dynamics2d.
inline constexpr const char* kGrippedColumn = "gripped";
/// Where it is held (f64 x 3): the anchor point in the held body's frame (x, y, metres) and the
/// rest length from the gripping robot's centre to it (metres). Written by dynamics2d.
inline constexpr const char* kGripAnchorColumn = "grip_anchor";
/// The turret's rotation relative to the robot's heading, radians in (-pi, pi], and the
/// position controller's last error (f64 x 2). Written by the `footbot_turret` actuator.
inline constexpr const char* kTurretColumn = "footbot_turret_rotation";

/// ARGoS's gripper: a 1 cm circle on the body's edge in the turret's direction; it locks
/// when |aperture| / (pi/2) reaches the lock threshold, 0.5.
inline constexpr double kGripperRadiusM = 0.01;
inline constexpr double kGripperLockThreshold = 0.5;

}  // namespace fleetsim
