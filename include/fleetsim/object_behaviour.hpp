// fleetsim public SDK: objects with behaviour (the DEECo playground's DEECoObject processes).
//
// An object (<object> in the arena: a position, a size, a tag, a class) is not a body: robots
// do not collide with it, physics never moves it. It may run a behaviour that sets its own
// position, size and tag each tick, as the playground's objects do in their processes:
//
//   <controllers> <behaviour id="item" type="lua" script="item.lua"/> </controllers>
//   <arena ...> <object id="i1" class="Item" position="1,1" size="0.2" behaviour="item"/>
//
// A behaviour is an ObjectBehaviour plug-in (C++, PluginRegistry::add_object_behaviour) or a
// Lua script (type="lua", docs/lua-api.md, "Objects"). One instance per object.
//
// When: in the sense+control phase of every tick (of every round of it, with
// <framework processing_time>), after every robot's controller, one object after the other
// in increasing id order on the run's main thread; the tick's log frame shows the result.
// A behaviour reads the robots as they were sensed (ObjectWorld) and changes only its own
// object. The results do not depend on the number of threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetsim/controller.hpp"
#include "fleetsim/random.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// A robot as an object's behaviour sees it.
struct RobotSeen {
  EntityId id = kNoEntity;
  std::string_view name;  ///< the robot's id in the experiment
  Vec2 position;          ///< metres
  double heading = 0;     ///< radians, CCW from +x
  std::string_view tag;
  std::string_view kind;
};

/// The world as a behaviour may read it during step() (implemented by the engine).
class ObjectWorld {
 public:
  virtual ~ObjectWorld() = default;
  /// The robots whose centre lies within `reach_m` of `p`, in increasing id order, into `out`
  /// (cleared first). Cost: the robots of the spatial grid's cells within reach.
  virtual void robots_within(Vec2 p, double reach_m, std::vector<RobotSeen>& out) const = 0;
};

/// What a behaviour reads and writes for its object in one tick. Valid only during step().
struct ObjectIO {
  EntityId id = kNoEntity;
  Tick tick = 0;
  double dt_s = 0;                ///< seconds per tick
  int round = 0;                  ///< the round within the tick (0 .. processing_time - 1)
  std::string_view name;          ///< the object's id in the experiment
  std::string_view object_class;  ///< its class
  /// The object's state: the behaviour may change any of them; the engine applies them after
  /// step() returns. `size` is the full width, metres (as <object size>); at least 0.
  Vec2 position;
  double size = 0;
  std::string tag;
  /// Randomness for this object in this tick and round: the same every run.
  CounterRng rng{0, 0, 0, RandomStream::kController};
  const ObjectWorld* world = nullptr;
  /// The objects' knowledge columns (the experiment's <knowledge> fields, which objects have
  /// too; null when it declares none) and this object's row in them.
  const KnowledgeColumns* knowledge_columns = nullptr;
  std::uint32_t row = 0;
  /// This object's knowledge field `field` (the index in ObjectSetup::knowledge_fields): its
  /// numbers, readable and writable.
  std::span<double> knowledge(std::size_t field) const {
    const std::uint32_t n = knowledge_columns->size[field];
    return {knowledge_columns->data[field] + std::size_t{row} * n, n};
  }
};

/// Given to ObjectBehaviour::init: the object it will drive.
class ObjectSetup {
 public:
  virtual ~ObjectSetup() = default;
  virtual EntityId object() const = 0;
  virtual std::string_view name() const = 0;
  virtual std::string_view object_class() const = 0;
  /// Its place, size and tag in the experiment.
  virtual Vec2 position() const = 0;
  virtual double size() const = 0;
  virtual std::string_view tag() const = 0;
  /// The experiment's knowledge fields' names and sizes (ObjectIO::knowledge's handles).
  virtual std::span<const std::string> knowledge_fields() const { return {}; }
  virtual std::span<const std::uint32_t> knowledge_sizes() const { return {}; }
};

/// An object behaviour plug-in: one instance per object that names it.
class ObjectBehaviour {
 public:
  virtual ~ObjectBehaviour() = default;
  /// Once, before the run, with the <behaviour> element's parameters. Throw SetupError for a
  /// problem: reported at the script's line, or at the element, before the run.
  virtual void init(const Params& params, const ObjectSetup& setup) {}
  /// Reads and writes io's position, size and tag.
  virtual void step(ObjectIO& io) = 0;
  /// Back to the state right after init (Simulation::reset).
  virtual void reset() {}
};

}  // namespace fleetsim
