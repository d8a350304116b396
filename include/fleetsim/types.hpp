// fleetsim public SDK: basic value types shared by every layer.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace fleetsim {

/// Simulated time in integer nanoseconds. There is no floating-point clock anywhere: ticks,
/// periods and timestamps are integers so that every process agrees on them exactly.
using SimTime = std::int64_t;
inline constexpr SimTime kNanosPerSecond = 1'000'000'000;

/// A stable entity identifier, assigned once at creation and never reused in a run. User code
/// (controllers, loop functions, logs) only ever sees ids, never dense body indices.
using EntityId = std::uint32_t;
inline constexpr EntityId kNoEntity = 0xffffffffu;

/// A tick counter (tick 0 is the initial state; tick k is after k steps).
using Tick = std::int64_t;

/// 2D vector in metres (or metres per second), world frame: origin at the arena centre, y up.
struct Vec2 {
  double x = 0;
  double y = 0;
  constexpr Vec2 operator+(Vec2 o) const { return {x + o.x, y + o.y}; }
  constexpr Vec2 operator-(Vec2 o) const { return {x - o.x, y - o.y}; }
  constexpr Vec2 operator*(double s) const { return {x * s, y * s}; }
  constexpr bool operator==(const Vec2&) const = default;
};
inline constexpr double dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
inline constexpr double cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }
inline double length(Vec2 a) { return std::sqrt(dot(a, a)); }

/// A line segment obstacle (walls, box sides, bitmap edges), metres.
struct Segment {
  Vec2 a;
  Vec2 b;
};

/// RGBA colour, 8 bits per channel.
struct Color {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  constexpr bool operator==(const Color&) const = default;
};

inline constexpr double kPi = 3.14159265358979323846;

/// Wraps an angle to (-pi, pi].
inline double wrap_angle(double a) {
  // Angles already in range (the common case: a heading after one tick's turn) are returned
  // as they are, which is also what remainder returns for them.
  if (a > -kPi && a <= kPi) return a;
  a = std::remainder(a, 2 * kPi);
  if (a <= -kPi) a += 2 * kPi;
  return a;
}

}  // namespace fleetsim
