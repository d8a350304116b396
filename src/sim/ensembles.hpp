// The ensembles phase (docs/experiment-format.md, <ensembles>; include/fleetsim/ensemble.hpp):
// at the start of tick t (after the loop functions' pre_step, before the robots sense), each
// <ensemble> whose period divides t evaluates its pairs on the world the robots then sense.
//
// Order, the same on any number of threads (everything runs on the calling thread):
// ensembles in file order; for one ensemble, first is_coordinator and is_member for every
// robot its selectors accept, in increasing id order (the flags hold for the whole
// evaluation); then each coordinator in increasing id order, and for it each member candidate
// in increasing id order: membership, then, when true, exchange. A later pair sees an earlier
// pair's writes. A coordinator's candidates go to Ensemble::evaluate in one call, as columns
// (MemberBatch: slots of the grid's order and the snapshot for a concurrent ensemble, rows of
// the live columns otherwise), unsorted for an order_free type.
//
// Cost: a spatial ensemble (`within` > 0) reads, per coordinator, the robots of the spatial
// grid's cells within `within` of it: O(N) for a bounded density. A global one (no `within`)
// pairs every coordinator with every member: O(C x M). A concurrent ensemble
// (Ensemble::concurrent) spreads its coordinators over the workers. An ensemble that selects
// objects (`objects`, `class:NAME`) runs on the calling thread whatever its type says: robot
// candidates of an object through the grid, object candidates by reading every selected
// object (O(C x objects)).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "physics/kinematics2d.hpp"
#include "scenario/experiment.hpp"
#include "world/world.hpp"

namespace fleetsim {

class EnsembleRunner {
 public:
  /// The run's status and end signal (Simulation's, as loop functions set them).
  struct Hooks {
    std::function<void(const std::string&)> set_status;
    std::function<void()> end_run;
  };
  EnsembleRunner(const WorldModel& model, WorldState& state, std::vector<EnsembleDecl>& ensembles,
                 Hooks hooks);
  bool empty() const { return ensembles_.empty(); }
  /// Whether an ensemble is due at the start of tick `tick`.
  bool due(Tick tick) const;
  /// Evaluates the ensembles due at the start of tick `tick`. `index`: the spatial grid built
  /// on the current positions (the one this tick's sensing reads).
  /// Throws RunError-like std::runtime_error with the ensemble's context on a plug-in's error.
  void run(Tick tick, const SpatialIndex& index, ThreadPool& pool);
  /// Pairs whose membership was evaluated, and exchanges made, in the last run (tests, bench).
  std::uint64_t last_pairs() const { return pairs_; }
  std::uint64_t last_exchanges() const { return exchanges_; }

 private:
  const WorldModel& model_;
  WorldState& state_;
  std::vector<EnsembleDecl>& ensembles_;
  Hooks hooks_;
  std::vector<ColumnHandle> knowledge_;  ///< per field
  // Scratch: rows in id order; per row, the flags of the ensemble being evaluated; a
  // coordinator's candidates.
  std::vector<std::uint32_t> by_id_;
  std::vector<std::uint8_t> coordinator_, member_;
  // The same in the grid's slot order (contiguous for the spatial queries), with the ids.
  std::vector<std::uint8_t> member_slot_;
  std::vector<EntityId> id_slot_;
  std::vector<std::uint32_t> slot_of_;              ///< per row, its slot
  std::vector<std::uint32_t> rows_;                 ///< 0, 1, ... (a row-order batch's rows)
  std::vector<double*> live_data_, snapshot_data_;  ///< per field, the knowledge's columns
  // Concurrent ensembles: the knowledge as it was before the evaluation (per field), and per
  // worker its candidates and pair count.
  std::vector<std::vector<double>> snapshot_;
  struct WorkerScratch {
    std::vector<std::uint32_t> at;    ///< a coordinator's members (MemberBatch::at)
    std::vector<std::uint64_t> near;  ///< id << 32 | slot, to sort them by id
    std::vector<double> copy;         ///< a member's knowledge, copied for the exchange
    std::uint64_t pairs = 0, exchanges = 0;
    std::string error;
  };
  std::vector<WorkerScratch> workers_;
  WorkerScratch main_;  ///< a sequential ensemble's, on the calling thread
  std::uint64_t pairs_ = 0, exchanges_ = 0;
  std::vector<ColumnHandle> object_knowledge_;  ///< per field, the objects' columns
  /// An ensemble one of whose selectors selects objects: on this thread, in id order (objects
  /// are few: an object member's candidates are every selected object, by distance).
  void run_with_objects(EnsembleDecl& e, Tick tick, const SpatialIndex& index);
};

}  // namespace fleetsim
