// The seam between a run's step and the other processes of a run on several (docs/distributed.md,
// "The tick"). Simulation calls a ProcessRounds at fixed points of its start, step and end; a
// run on one process has none, and its step does nothing extra. The rounds themselves, their
// messages and the transports they go over are src/distributed/'s (tick_rounds.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/routed_message.hpp"
#include "log/frame_log_format.hpp"

#include "fleetsim/parts.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

class Simulation;

/// Per-robot controllers' saved state, by robot id.
using SavedControllers = std::vector<std::pair<EntityId, std::vector<std::uint8_t>>>;

/// A checkpoint's robots (docs/checkpoints.md, "Saved state"): parts of the rows of the robots
/// a process holds the newest rows of and of the states of the controllers it runs, each part
/// compressed alone and at most kCheckpointPartRobots of each, laid out as in the file (u64
/// size, the part); how many parts and robots they hold, and the digest sums of those robots'
/// rows (WorldState::robot_digests). The parts are the first `chunk_bytes[k]` bytes of each
/// chunk: one chunk as a process writes them; one per process on the first process after the
/// round (its own first), each received as it came, so that none is copied.
struct CheckpointParts {
  std::vector<std::vector<std::uint8_t>> chunks;
  std::vector<std::size_t> chunk_bytes;
  std::uint64_t parts = 0, robots = 0;
  std::vector<std::uint64_t> digests;
};
inline constexpr std::size_t kCheckpointPartRobots = 4096;

/// What per-process loop functions changed in one of their hooks (staged, then exchanged, then
/// applied alike on every process: Simulation::apply_loop_changes).
struct LoopChanges {
  bool end = false, has_status = false;
  std::string status;
  std::vector<std::pair<EntityId, std::string>> tags;
  struct Move {
    EntityId id;
    double x, y, heading;
  };
  std::vector<Move> moves;
  std::vector<EntityId> removes;
  struct Add {
    std::string kind, controller;
    double x, y, heading;
    std::string tag;
  };
  std::vector<Add> adds;
};

/// The rounds of a run on several processes, in the order a run calls them.
class ProcessRounds {
 public:
  virtual ~ProcessRounds() = default;
  /// After the loop functions' init, before tick 0: every process starts from the same world;
  /// then a partitioned process drops the robots it neither moves nor may read.
  virtual void start() = 0;
  /// Before the sensors: robots whose region or domain another process has now go there, with
  /// their rows and their controllers' state; then this tick's per-row flags.
  virtual void handoff() = 0;
  /// After the actuators (runs with affinities only): the rows of the robots this process ran
  /// but another simulates, to it.
  virtual void actuation() = 0;
  /// After the physics: the robots' moves (as much of them as others read), the tags set this
  /// tick, and a checkpoint's announcement.
  virtual void moves() = 0;
  /// After the last step: the whole world's hash and robot count (Simulation::world_hash).
  virtual void end() = 0;
  /// A partitioned run whose frame logs are written in blocks, after start(): whether the
  /// first process placed its part only (`deferred`, its value counts), so that the log's header
  /// and first frame come now; then, there, every robot present (id, kind, name), by id,
  /// encoded as the header stores them (log::frame_format::encode_entity), into `robots`, and
  /// their number into `count`. Returns the first process's `deferred`.
  virtual bool log_start(bool deferred, std::vector<std::uint8_t>& robots,
                         std::uint64_t& count) = 0;
  /// A partitioned run's frame, on a tick a log keeps (docs/distributed.md, "The log on several
  /// processes"): the robot blocks of the frame's logged `columns` (laid out as `layout`), each
  /// encoded and compressed at zstd `level` by the process that moves most of its robots; the
  /// first process gets every block, by increasing index, the others none.
  virtual std::vector<log::frame_format::EncodedBlock> frame_blocks(
      const std::vector<ColumnHandle>& columns, const log::frame_format::PayloadLayout& layout,
      int level) = 0;
  /// A checkpoint, on every process: this process's parts (`mine`) to the first process, which
  /// gets every process's in process order, its own first, with the robots and digest sums
  /// added up; the others get nothing back. No process gathers the others' rows.
  virtual CheckpointParts checkpoint(CheckpointParts mine) = 0;
  /// Loop functions in the per-process form: one reduction (`op` and this process's 8 bytes);
  /// every process's, by process.
  virtual std::vector<std::array<std::uint8_t, 8>> reduce(char op,
                                                          std::array<std::uint8_t, 8> mine) = 0;
  /// Loop functions in the per-process form: adds every other process's changes to this
  /// process's (`merged`); the status is the first process's. `partial`: this process holds
  /// some robots only.
  virtual void loop_changes(LoopChanges& merged, bool partial) = 0;
  /// After the loop functions' moves: `mine` (this process's robots moved, increasing ids) to
  /// the processes that may read them and do not hold them.
  virtual void loop_moves(std::vector<EntityId> mine) = 0;
  /// One part of the current round for the physics' contact rounds (every process's bytes).
  virtual std::vector<std::vector<std::uint8_t>> contact_round(std::vector<std::uint8_t> mine) = 0;
  /// The same in a partitioned run, routed (Exchange::routed): each robot's part goes to the
  /// processes near_processes names for it.
  virtual RoutedReceived routed_contact_round(RoutedMessage mine) = 0;
  /// A partitioned run: the other processes whose domains lie within `reach` of `p`
  /// (increasing; `reach` at most the halo reach), into `to`.
  virtual void near_processes(Vec2 p, double reach, std::vector<int>& to) const = 0;
};

/// Makes the rounds of `sim`'s run (distributed::make_tick_rounds).
using MakeProcessRounds = std::unique_ptr<ProcessRounds> (*)(Simulation& sim);

}  // namespace fleetsim
