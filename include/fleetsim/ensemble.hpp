// fleetsim public SDK: components' knowledge and ensembles (the DEECo playground's user model).
//
// Knowledge is declared once in the experiment (<knowledge><field name="energy" size="1"/>
// </knowledge>): every robot has each field, a small array of numbers (zeros at first), which
// its controller reads and writes (ControllerSetup::knowledge, RobotIO::knowledge) and which
// ensembles exchange. An ensemble is declared in the experiment (<ensembles><ensemble type=...
// period=... coordinators=... members=... within=.../></ensembles>) and implemented by an
// Ensemble plug-in (C++, PluginRegistry::add_ensemble) or a Lua script (type="lua").
//
// At the start of every tick t with t % period == 0 (after the loop functions' pre_step, before
// the robots sense), the run evaluates each ensemble in file order: for
// each coordinator (robots the `coordinators` selector and is_coordinator accept), in
// increasing id order, for each member candidate (the `members` selector and is_member; within
// `within` metres of the coordinator when given, found through the spatial grid), in
// increasing id order: membership(coordinator, member), and when true exchange(coordinator,
// member), which writes knowledge of either. Calls are sequential, on one thread, in that
// order, so a later pair sees an earlier pair's writes and a run gives the same bits on any
// number of threads. An ensemble whose exchange writes only the coordinator may say so
// (Ensemble::concurrent) and have its coordinators evaluated on every worker. Objects of the
// arena are components too (selectors `objects`, `class:NAME`; Component::object), with the
// same knowledge fields; an ensemble that selects them runs on one thread.
// The engine hands a coordinator's member candidates to Ensemble::evaluate in one call, as
// columns (MemberBatch); its default makes the membership and exchange calls pair by pair, and
// a type may override it to work on the columns instead (knowledge_max does), with the same
// results.
// docs/experiment-format.md, `<ensembles>`, has the element and the model.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fleetsim/controller.hpp"
#include "fleetsim/parts.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// A component (a robot, or an object of the arena) as an ensemble sees it: its id, whether it
/// is an object, and its row (engine-internal; pass it back to EnsembleWorld only, and only
/// during the call that gave it).
struct Component {
  EntityId id = kNoEntity;
  std::uint32_t row = 0;
  bool object = false;  ///< an <object> (selected by `objects` or `class:NAME`), not a robot
};

/// The world during an ensemble's calls (implemented by the engine). Single-threaded.
class EnsembleWorld {
 public:
  virtual ~EnsembleWorld() = default;
  /// A knowledge field of the component (handle from EnsembleSetup::knowledge), its `size`
  /// numbers; writable.
  virtual std::span<double> knowledge(const Component& c, std::size_t field) = 0;
  virtual Vec2 position(const Component& c) const = 0;   ///< metres
  virtual double heading(const Component& c) const = 0;  ///< radians, CCW from +x
  virtual const std::string& tag(const Component& c) const = 0;
  /// A robot's kind (an object has none: throws).
  virtual const KindInfo& kind(const Component& c) const = 0;
  /// An object's class ("" for a robot).
  virtual std::string_view object_class(const Component& c) const = 0;
  /// An object's size, its full width in metres (a robot's radius times 2).
  virtual double size(const Component& c) const = 0;
  /// The tick about to be simulated (ensembles run before its robots sense).
  virtual Tick tick() const = 0;
  /// The run's status line and end signal (the playground's coordinator; as loop functions').
  virtual void set_status(const std::string& status) = 0;
  virtual void end_run() = 0;
};

/// Given to Ensemble::init: the experiment's knowledge fields.
class EnsembleSetup {
 public:
  virtual ~EnsembleSetup() = default;
  /// Handle of a knowledge field; throws SetupError naming the fields when absent.
  virtual std::size_t knowledge(std::string_view field) const = 0;
  /// The fields' names, in declaration order (handle i is field i).
  virtual std::span<const std::string> knowledge_fields() const = 0;
  /// The fields' sizes (numbers per field).
  virtual std::span<const std::uint32_t> knowledge_sizes() const = 0;
};

/// A coordinator's member candidates (Ensemble::evaluate), as columns. Member i is at place
/// at[i] of every column below: its id id[at[i]], its row row[at[i]] (for EnsembleWorld), its
/// knowledge field f, as this evaluation reads it, the sizes[f] numbers at knowledge[f] +
/// at[i] * sizes[f], its position (x[at[i]], y[at[i]]). The members come by increasing id,
/// unless the type is Ensemble::order_free. For a concurrent ensemble the members' knowledge is
/// the snapshot taken before the evaluation: `writable` is false and write() throws.
struct MemberBatch {
  std::span<const std::uint32_t> at;
  const EntityId* id = nullptr;
  const std::uint32_t* row = nullptr;
  std::span<double* const> knowledge;    ///< per field
  std::span<const std::uint32_t> sizes;  ///< per field
  const double* x = nullptr;             ///< metres
  const double* y = nullptr;
  bool writable = true;

  std::size_t size() const { return at.size(); }
  Component member(std::size_t i) const { return {id[at[i]], row[at[i]], false}; }
  /// Member i's knowledge field f (a handle from EnsembleSetup::knowledge).
  std::span<const double> read(std::size_t i, std::size_t f) const {
    return {knowledge[f] + std::size_t{at[i]} * sizes[f], sizes[f]};
  }
  std::span<double> write(std::size_t i, std::size_t f) const {
    if (!writable)
      throw std::runtime_error("a concurrent ensemble writes only its coordinator's knowledge");
    return {knowledge[f] + std::size_t{at[i]} * sizes[f], sizes[f]};
  }
  Vec2 position(std::size_t i) const { return {x[at[i]], y[at[i]]}; }
};

/// An ensemble plug-in: one instance per <ensemble> element.
class Ensemble {
 public:
  virtual ~Ensemble() = default;
  /// Once, before the run, with the element's other attributes (checked against the plug-in's
  /// ParamDocs). Throw SetupError for a problem: reported at the element, before the run.
  virtual void init(const Params& params, const EnsembleSetup& setup) {}
  /// Further selection over knowledge, after the element's `coordinators` / `members`.
  virtual bool is_coordinator(EnsembleWorld& world, const Component& c) { return true; }
  virtual bool is_member(EnsembleWorld& world, const Component& m) { return true; }
  /// Whether `member` belongs to `coordinator`'s ensemble now (never called with c == m).
  virtual bool membership(EnsembleWorld& world, const Component& coordinator,
                          const Component& member) {
    return true;
  }
  /// The knowledge exchange of a member pair: writes knowledge of the member, or of the
  /// coordinator.
  virtual void exchange(EnsembleWorld& world, const Component& coordinator,
                        const Component& member) = 0;

  /// One coordinator's whole candidate list in one call (robots only; an ensemble with objects
  /// is evaluated pair by pair): for each member i in order, membership, then when true the
  /// exchange, exactly as the calls below would make them; returns the number of exchanges.
  /// The default is that: membership(world, coordinator, members.member(i)) and
  /// exchange(...) pair by pair. A type may override it to work on the columns (no call per
  /// pair); it must give the same results as its pair-by-pair calls.
  virtual std::size_t evaluate(EnsembleWorld& world, const Component& coordinator,
                               const MemberBatch& members) {
    std::size_t made = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const Component m = members.member(i);
      if (membership(world, coordinator, m)) {
        ++made;
        exchange(world, coordinator, m);
      }
    }
    return made;
  }

  /// True when this type's evaluate gives, for one coordinator, a result that does not
  /// depend on the order of its members (a reduction whose ties go to the smallest id, or
  /// writes to each member from the coordinator's knowledge alone): the run then passes a
  /// spatial ensemble's members in the grid's order, unsorted. Default false (members by
  /// increasing id); a type with only pair-by-pair calls must leave it false.
  virtual bool order_free() const { return false; }

  /// True when exchange writes only the coordinator's knowledge, is_coordinator and is_member
  /// only their robot's, and all four may run concurrently for different robots (they change
  /// no member of the plug-in). The run then calls them on every worker: each coordinator
  /// reads and writes its own knowledge, and reads its members' knowledge as it was before the
  /// evaluation (a member's span is a copy: writing it changes nothing); set_status and
  /// end_run throw. The result does not depend on the number of threads either. Default
  /// false: one thread, in order, every write allowed.
  virtual bool concurrent() const { return false; }
};

}  // namespace fleetsim
