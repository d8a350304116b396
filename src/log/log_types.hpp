// The data every log format carries: a header (the world model as far as a viewer needs it,
// and the entity table) and frames (the changing columns at one logged tick).
//
// Coordinates are metres in the world frame (origin at the arena centre, y up), headings in
// radians counter-clockwise from +x. Format-specific units (the DEECo log's field units) are
// converted by the writers and readers, never by their callers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim::log {

/// A robot kind or object class as it appears in the log.
struct LogClass {
  std::string name;      ///< e.g. "epuck"
  double radius_m = 0;   ///< body radius for robots; 0 for object classes
};

/// One entity present when the log starts.
struct LogEntity {
  EntityId id = kNoEntity;
  std::uint16_t class_index = 0;  ///< into LogHeader::robot_classes or ::object_classes
  std::string name;               ///< the id string the user gave ("ep12")
};

/// Written once, before the first frame.
struct LogHeader {
  std::string experiment;          ///< experiment file name, informative
  std::uint64_t seed = 0;
  SimTime tick_period_ns = 0;      ///< simulated time of one tick
  std::int64_t every = 1;          ///< a frame is logged every `every` ticks

  double arena_width_m = 0, arena_height_m = 0;
  Vec2 arena_center;               ///< world coordinates of the arena centre (usually 0,0)

  /// Bitmap field (width 0 = none): one byte per pixel, 1 = obstacle, row-major from the top
  /// row; pixel (i, j) covers [left + i*res, left + (i+1)*res) x (top - (j+1)*res, top - j*res].
  int bitmap_width = 0, bitmap_height = 0;
  double bitmap_resolution_m = 0;  ///< metres per pixel
  Vec2 bitmap_top_left;            ///< world coordinates of the bitmap's top-left corner
  std::vector<std::uint8_t> bitmap;

  std::vector<Segment> segments;   ///< static obstacles other than the bitmap (walls, boxes)

  std::vector<LogClass> robot_classes;
  std::vector<LogClass> object_classes;
  std::vector<LogEntity> robots;   ///< robots at the start, in frame order
  std::vector<LogEntity> objects;  ///< objects at the start, in frame order
};

/// A frame to write: views on the engine's columns (no copy). All robot spans have the same
/// length, all object spans too. Tags are indices into `tags`, which only ever grows during a
/// run (index 0 is the empty tag).
struct LogFrameView {
  Tick tick = 0;
  SimTime time_ns = 0;
  std::string_view status;
  std::span<const std::string> tags;

  std::span<const EntityId> robot_id;
  std::span<const std::uint16_t> robot_class;
  std::span<const double> robot_x, robot_y, robot_theta;
  std::span<const std::uint32_t> robot_tag;
  std::span<const Color> robot_led;

  std::span<const EntityId> object_id;
  std::span<const std::uint16_t> object_class;
  std::span<const double> object_x, object_y, object_size;
  std::span<const std::uint32_t> object_tag;
};

/// A frame read back (owning).
struct LogFrame {
  Tick tick = 0;
  SimTime time_ns = 0;
  std::string status;
  std::vector<std::string> tags;

  std::vector<EntityId> robot_id;
  std::vector<std::uint16_t> robot_class;
  std::vector<double> robot_x, robot_y, robot_theta;
  std::vector<std::uint32_t> robot_tag;
  std::vector<Color> robot_led;

  std::vector<EntityId> object_id;
  std::vector<std::uint16_t> object_class;
  std::vector<double> object_x, object_y, object_size;
  std::vector<std::uint32_t> object_tag;

  LogFrameView view() const {
    return {tick,      time_ns,     status,       tags,        robot_id,   robot_class,
            robot_x,   robot_y,     robot_theta,  robot_tag,   robot_led,  object_id,
            object_class, object_x, object_y,     object_size, object_tag};
  }
};

}  // namespace fleetsim::log
