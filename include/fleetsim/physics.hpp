// fleetsim public SDK: physics engines.
//
// An experiment declares its engines in <physics>, one element per engine instance, named by
// the engine's registry type and owning a region of the arena:
//
//   <physics>
//     <dynamics2d id="west" region="-20,-20,0,20" sub_steps="4"/>
//     <dynamics2d id="east" region="0,-20,20,20" sub_steps="4"/>
//   </physics>
//
// Each engine type's regions tile the arena. A robot kind names the engine type that accepts
// its body (`<kind engine="dynamics2d">`, or the only type the experiment declares); a robot
// belongs to the region of that type holding its centre, and moves to the neighbouring
// region of the same type when it crosses the border (the core does this after every
// engine has stepped: migration). Robots of different regions never collide, but sense each
// other (ARGoS's semantics).
//
// The registry makes one PhysicsEngine object per type used in a run; it steps every region
// of its type that the process simulates. In the physics phase (after the act phase turned the
// actuators' commands into each robot's commanded body velocity) every type's step() runs in
// turn, and may use the workers for its regions or robots: PhysicsWorld::parallel_for.
//
// Determinism: step() must compute the same bits for any number of workers, and depend on
// nothing but the columns and the model (no state kept between ticks outside declared
// columns: a checkpoint, or a robot changing process, carries only columns).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fleetsim/columns.hpp"
#include "fleetsim/parts.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

class Params;

/// One engine instance: an element of <physics>.
struct EngineRegionInfo {
  std::string id;      ///< the element's id
  std::uint8_t index;  ///< in the run's engine list (the robots' `engine` column)
  Vec2 min, max;       ///< the region it owns, metres
};

/// Given to an engine type once, at load, before any robot exists.
class PhysicsSetup {
 public:
  virtual ~PhysicsSetup() = default;
  /// This type's regions, in file order.
  virtual std::span<const EngineRegionInfo> regions() const = 0;
  /// Region r's XML parameters (checked against the type's ParamDocs, defaults filled in).
  virtual const Params& params(std::size_t r) const = 0;
  /// Declares a per-robot column the engine keeps between ticks (e.g. velocities), hashed,
  /// saved in checkpoints and sent along with a robot that changes process.
  virtual ColumnHandle column(const ColumnDesc& desc) = 0;
  /// A column of the body or a part, kNoColumn if none.
  virtual ColumnHandle find_column(const std::string& name) const = 0;
  /// Reports a parameter problem on region r's element (`file:line: error: ...` at load).
  virtual void error(std::size_t r, const std::string& message) = 0;
};

/// The physics phase as an engine sees it. Columns (find them in setup) hold every robot of
/// the run, in dense rows; an engine moves only the robots of the regions it simulates here.
class PhysicsWorld {
 public:
  virtual ~PhysicsWorld() = default;
  virtual std::size_t robot_count() const = 0;
  /// Start of a column's storage (row r's elements at r * width); cast to the column's type.
  virtual void* column_data(ColumnHandle column) const = 0;
  virtual const KindInfo& robot_kind(std::uint32_t row) const = 0;
  /// The region (index in the run's engine list) robot `row` belongs to this tick.
  virtual std::uint8_t robot_region(std::uint32_t row) const = 0;
  /// True when this process steps region `index` (always, on one process) and it is of the
  /// calling engine's type.
  virtual bool steps(std::uint8_t index) const = 0;
  /// The static obstacles (walls, box sides, bitmap edges, the arena's border), metres.
  virtual std::span<const Segment> obstacles() const = 0;
  /// Calls f(begin, end, worker) over [0, n) split among the workers, chunks of at most
  /// `grain`; returns when all are done.
  virtual void parallel_for(std::size_t n, std::size_t grain,
                            const std::function<void(std::size_t, std::size_t, int)>& f) = 0;
  virtual int workers() const = 0;
  Tick tick = 0;
  double dt_s = 0;  ///< the tick, seconds

  template <class T>
  T* column(ColumnHandle c) const {
    return static_cast<T*>(column_data(c));
  }
};

/// A physics engine type. Its step() reads each robot's commanded body velocity (the body's
/// columns `speed_cmd`, m/s, and `turn_cmd`, rad/s) and writes its pose (`x`, `y`, `theta`),
/// the collision sensor's columns (`realization`: the fraction of the commanded motion made;
/// `contact_angle`, `contact_count`: up to 4 contacts, radians from the heading, sorted) and
/// its own columns.
class PhysicsEngine {
 public:
  virtual ~PhysicsEngine() = default;
  /// Reads the regions' parameters and declares the engine's columns.
  virtual void setup(PhysicsSetup& setup) = 0;
  /// The physics phase: moves the robots of every region steps() names.
  virtual void step(PhysicsWorld& world) = 0;
  /// Why this engine cannot simulate bodies of `kind` (its shape, say), or "" when it can. A
  /// robot of such a kind placed in its regions is an error at load.
  virtual std::string refuses(const KindInfo& kind) const { return {}; }
};

}  // namespace fleetsim
