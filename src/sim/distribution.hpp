// One process's share of a distributed run (docs/distributed.md): the engine regions it
// simulates and the exchange that joins it to the other processes.
//
// Every process holds the whole world state. Each tick it senses, controls, acts and moves
// only the robots of its regions; then the processes exchange those robots' halo columns
// (the columns other robots' parts read: positions, LEDs, messages sent) and, on frames the
// log keeps, the logged columns, so every process starts the next phase with the world a
// single process would have. What every process computes from the same inputs (engine
// migration, tags, loop functions) is computed on every process, identically. A robot whose
// region passes to another process goes there with its whole row and its controller's saved
// state at the start of the next tick (the handoff).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/routed_message.hpp"
#include "sim/domains.hpp"
#include "sim/process_rounds.hpp"

namespace fleetsim {

/// Joins the processes of a run. Each call is one round in which every process takes part,
/// in the same order on every process.
class Exchange {
 public:
  virtual ~Exchange() = default;
  /// Sends `mine` to every other process; returns every process's bytes by process index
  /// (`mine` at this process's own index). Throws std::runtime_error when a process is lost.
  /// `more`: another part of the same round follows (a round too large for one message is
  /// sent in parts; every process calls with the same flags).
  virtual std::vector<std::vector<std::uint8_t>> all_gather(std::vector<std::uint8_t> mine,
                                                            bool more = false) = 0;
  /// A round whose bulk goes to some processes only: `mine.common` to every process, and
  /// `mine.to[q]` to each process q of `peers` (this process's peers in this round, increasing;
  /// every process calls with the same `more` and with peers that name each other: q is in
  /// p's peers exactly when p is in q's). This default packs everything into one all_gather
  /// message (every process receives every part and keeps its own); an exchange that can send
  /// to one process (MPI) sends the parts to their peers only. Throws std::runtime_error on a
  /// message whose parts do not add up, naming the process that sent it.
  /// `process`: this process's index.
  virtual RoutedReceived routed(RoutedMessage mine, int process, std::span<const int> peers,
                                bool more = false);
  /// The payload bytes this process has put on the transport: each message once for every
  /// process it went to (a routed round's parts to their peers only). 0 where not counted.
  virtual std::uint64_t wire_bytes_sent() const { return 0; }
};

/// A routed message as one payload (what Exchange::routed sends by default; docs/distributed.md,
/// "Routed rounds"): `mine.common`, then the part `mine.to[q]` for each process q of `parts`
/// (increasing; an empty part where `mine.to` has none).
std::vector<std::uint8_t> encode_routed(const RoutedMessage& mine, std::span<const int> parts);
/// What process `process` keeps of the routed messages it received, `all` by sender (its own
/// at its index): every common part, and the part each peer made for it. Throws
/// std::runtime_error naming the sender of a message whose parts do not add up, that has no
/// part for this process from one of its `peers`, or one from a process not its peer.
RoutedReceived decode_routed(const std::vector<std::vector<std::uint8_t>>& all, int process,
                             std::span<const int> peers);

/// Which engines (regions) each process simulates, and this process's place.
struct Distribution {
  int process = 0;  ///< this process's index
  int processes = 1;
  /// Per engine (region) of the model: the process simulating it whole, or -1 for a region
  /// split over the domains (each process moves the region's robots in its domain).
  std::vector<int> engine_process;
  /// The arena's domains, one per process (empty: every region is simulated whole).
  Domains domains;
  /// Affinities: per robot kind (by index), the process running its robots' sensors,
  /// controllers and actuators wherever they are, or -1 (the process of their region); and the
  /// same per robot id (which wins over its kind's). Physics stays with the region's process.
  std::vector<int> kind_process, robot_process;
  bool has_affinities() const {
    for (int p : kind_process)
      if (p >= 0) return true;
    for (int p : robot_process)
      if (p >= 0) return true;
    return false;
  }
  /// Each process holds only the robots it moves and the others within reach of its domain,
  /// when the run allows it (Simulation::partitioned(), docs/distributed.md "What a process
  /// holds"); otherwise, or when false, every process holds the whole world.
  bool partition_storage = false;
  /// The first process holds every robot from the start (it shows the run, docs/view-format.md),
  /// as when it writes a log.
  bool first_holds_all = false;
  /// Interventions may land (the live view, a replayed interventions file: sim/interventions.hpp):
  /// every process applies each alike, and keeps the world of tick 0 for a reset.
  bool interventions = false;
  /// Every process holds every robot with its halo columns up to date, as with loop functions
  /// in the whole-world form (no run split so that each process holds its part, no moves of
  /// the robots near a border only): what interventions need, on any run.
  bool every_robot_everywhere = false;
  Exchange* exchange = nullptr;  ///< not owned; required when processes > 1
  /// Makes the rounds that go over `exchange` (distributed::make_tick_rounds); required when
  /// processes > 1.
  MakeProcessRounds make_rounds = nullptr;
  /// Largest message of a moves or state round; larger rounds go in parts. Under the
  /// transport's 64 MiB limit (docs/wire-format.md); tests make it small.
  std::size_t part_bytes = std::size_t{32} << 20;
};

/// Per-process counters of a distributed run.
struct ExchangeStats {
  std::uint64_t rounds = 0;
  std::uint64_t bytes_sent = 0;  ///< this process's payloads (once per round)
  /// The other processes' payloads this process received (of a routed round, their common
  /// bytes and the parts for it: Exchange::routed)
  std::uint64_t bytes_received = 0;
  /// What the transport carried of bytes_sent: each payload once per process it reached
  /// (Exchange::wire_bytes_sent), the end's state gather included.
  std::uint64_t wire_bytes_sent = 0;
  std::uint64_t halo_rows_sent = 0;  ///< robots whose halo columns this process sent
  std::uint64_t migrations_in = 0;   ///< robots (with controllers) received in handoffs
  std::uint64_t migrations_out = 0;
  double seconds = 0;       ///< packing, the rounds themselves and unpacking
  double wait_seconds = 0;  ///< inside all_gather (includes waiting for peers)
  /// The part of bytes_sent and seconds that the end's state gather took (every robot's whole
  /// row, once per run: not a cost of the ticks).
  std::uint64_t gather_bytes = 0, gather_bytes_received = 0;
  double gather_seconds = 0;
  std::uint64_t rebalances = 0;  ///< times the domains were made again (Simulation::rebalance)
  /// The robots this process held, summed over the ticks (its own and the ghosts: the whole
  /// world when it holds all), and the most it held at once.
  std::uint64_t held_robot_ticks = 0;
  std::uint64_t held_robots_max = 0;
  /// The robots this process placed at the start, when the load left the placement to it
  /// (all of them, or on a partitioned run those near its domain); 0 when the load placed them.
  std::uint64_t placed_robots = 0;
  /// The most bytes its tables by robot id took at the end of a tick (the row of each id,
  /// who runs and who moves each robot, the per-robot controllers): on a process holding its
  /// part, pages for the ids it holds; otherwise a slot per id of the swarm.
  std::uint64_t id_table_bytes = 0;
};

}  // namespace fleetsim
