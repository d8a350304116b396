// fleetsim public SDK: loop functions — user code that hooks the step (ARGoS lineage) with a
// status string and an end signal (DEECo coordinator lineage).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fleetsim/controller.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// The world as loop functions see it: read everything, add, move or remove entities, set the
/// status. Implemented by the engine. Called from the main thread only, between phases.
///
/// Loop functions in the per-process form (LoopFunctions::per_process) see, on each process of
/// a distributed run, only the robots that process moves: robots() lists them, and reading
/// another robot is an error. Their changes (tags, moves, robots added or removed, the status,
/// the end) take effect after the hook, on every process at once: tags and moves in robot id
/// order, removals, then additions in order of position (x, then y, then heading, kind,
/// controller and tag), which is also when added robots get their ids (add_robot returns
/// kNoEntity). Global quantities come from the reductions, which every process must call alike.
/// The same holds on one process, so the results are the same bits on any number.
class WorldAccess {
 public:
  virtual ~WorldAccess() = default;
  virtual Tick tick() const = 0;
  virtual SimTime time_ns() const = 0;
  virtual std::uint64_t seed() const = 0;

  /// Robots, by id, in increasing id order.
  virtual std::vector<EntityId> robots() const = 0;
  virtual Vec2 robot_position(EntityId id) const = 0;
  virtual double robot_heading(EntityId id) const = 0;
  virtual std::string robot_tag(EntityId id) const = 0;
  virtual void set_robot_tag(EntityId id, const std::string& tag) = 0;
  virtual Color robot_led(EntityId id) const = 0;
  /// Contacts the collision sensor reported at the end of the last tick.
  virtual int robot_contact_count(EntityId id) const = 0;
  /// Teleports a robot (no collision check: the caller must keep bodies apart).
  virtual void move_robot(EntityId id, Vec2 position, double heading) = 0;
  /// Adds a robot of a declared kind with a declared controller; returns its new id.
  virtual EntityId add_robot(const std::string& kind, const std::string& controller,
                             Vec2 position, double heading, const std::string& tag) = 0;
  virtual void remove_robot(EntityId id) = 0;

  /// Objects (DEECo style: no body; may be anywhere, even outside the field).
  virtual std::vector<EntityId> objects() const = 0;
  virtual Vec2 object_position(EntityId id) const = 0;
  virtual void set_object(EntityId id, Vec2 position, double size, const std::string& tag) = 0;
  virtual EntityId add_object(const std::string& object_class, Vec2 position, double size,
                              const std::string& tag) = 0;
  virtual void remove_object(EntityId id) = 0;

  /// The status string logged with every frame and shown by the viewer.
  virtual void set_status(const std::string& status) = 0;
  /// Asks the run to end after this tick (the DEECo coordinator's end signal).
  virtual void end_run() = 0;

  /// Reductions over every process of a run (on one process: the value given). Every process
  /// calls the same ones in the same order with its own value, and all get the result, which
  /// does not depend on the number of processes: an exact integer sum, a minimum, a maximum
  /// (NaN is ignored unless every value is NaN), any, all. (No floating-point sum: its
  /// rounding would depend on how the robots are spread; sum integers, e.g. millimetres.)
  virtual std::int64_t sum(std::int64_t mine) { return mine; }
  virtual double min(double mine) { return mine; }
  virtual double max(double mine) { return mine; }
  virtual bool any(bool mine) { return mine; }
  virtual bool all(bool mine) { return mine; }
};

/// Loop functions plug-in: one instance per run. All hooks run on the main thread.
class LoopFunctions {
 public:
  virtual ~LoopFunctions() = default;
  virtual void init(const Params& params, WorldAccess& world) {}
  virtual void pre_step(WorldAccess& world) {}
  virtual void post_step(WorldAccess& world) {}
  virtual void reset(WorldAccess& world) {}
  virtual void destroy(WorldAccess& world) {}
  /// Polled after post_step; true ends the run (in the per-process form, true on any process).
  virtual bool is_finished(const WorldAccess& world) const { return false; }
  /// The per-process form (WorldAccess, above): true when the hooks read only the robots of
  /// the process they run on and get global quantities from the reductions. A run split over
  /// processes then sends each process only the robots near its domain (docs/distributed.md).
  /// The default, false: every process runs the hooks on the whole world.
  virtual bool per_process() const { return false; }

  /// Checkpoints (docs/checkpoints.md). save() appends to `out` what the hooks keep between
  /// calls and returns true; a type without state returns true and writes nothing. The
  /// default returns false, "cannot": a run asked to write checkpoints is refused before it
  /// starts, naming the loop functions.
  virtual bool save(std::vector<std::uint8_t>& out) const { return false; }
  /// A run resumed from a checkpoint calls this instead of init(): the same parameters, the
  /// world as it was at the checkpoint (init() is not called: it would set the world up
  /// again) and exactly the bytes save() wrote. Throws std::runtime_error when `state` is not
  /// something save() wrote.
  virtual void restore(const Params& params, WorldAccess& world,
                       std::span<const std::uint8_t> state) {}
};

}  // namespace fleetsim
