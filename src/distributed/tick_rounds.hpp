// The rounds that join the processes of a run split over several (docs/distributed.md, "The
// tick" and "Messages"): the start, the handoff, the actuation, the moves, the contact rounds'
// parts, the loop functions' reductions and changes, a checkpoint's state and the end's hash.
// Simulation calls them through sim/process_rounds.hpp at fixed points of its step; they go
// over an Exchange (sim/distribution.hpp), whichever transport carries it (exchanges.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/process_rounds.hpp"
#include "sim/simulation.hpp"

namespace fleetsim::log {
class ByteReader;
}  // namespace fleetsim::log

namespace fleetsim::distributed {

/// The kinds of the messages of a run's rounds: the first byte of each (docs/distributed.md,
/// "Messages", gives each one's layout; the contact rounds' 'B' are kinematics2d's, and a swarm
/// node adds its inputs 'I' and results 'R', swarm_node.cpp).
namespace message {
inline constexpr char kHello = 'E', kHandoff = 'H', kActuation = 'A', kMoves = 'M',
                      kBorderMoves = 'N', kState = 'S', kControllers = 'C', kReduction = 'R',
                      kLoopChanges = 'L', kBlockCounts = 'Q', kBlockRows = 'W', kFrameBlocks = 'F',
                      kLogStart = 'G';
}  // namespace message

/// The rounds of one process of a run (Simulation's distribution() says which and of how many).
/// Reads and writes the run's world and its per-process bookkeeping (Simulation's host and
/// owner of each robot, its per-row flags); every received message is checked before any of
/// it is used, and one that does not fit stops the run naming the process that sent it.
class TickRounds final : public ProcessRounds {
 public:
  explicit TickRounds(Simulation& sim);

  void start() override;
  void handoff() override;
  void actuation() override;
  void moves() override;
  void end() override;
  bool log_start(bool deferred, std::vector<std::uint8_t>& robots, std::uint64_t& count) override;
  std::vector<log::frame_format::EncodedBlock> frame_blocks(
      const std::vector<ColumnHandle>& columns, const log::frame_format::PayloadLayout& layout,
      int level) override;
  CheckpointParts checkpoint(CheckpointParts mine) override;
  std::vector<std::array<std::uint8_t, 8>> reduce(char op,
                                                  std::array<std::uint8_t, 8> mine) override;
  void loop_changes(LoopChanges& merged, bool partial) override;
  void loop_moves(std::vector<EntityId> mine) override;
  std::vector<std::vector<std::uint8_t>> contact_round(std::vector<std::uint8_t> mine) override {
    // Parts of the moves round: the contact rounds come before its last part.
    return gather(std::move(mine), /*more=*/true);
  }
  RoutedReceived routed_contact_round(RoutedMessage mine) override {
    return route(std::move(mine), peers_, /*more=*/true);
  }
  void near_processes(Vec2 p, double reach, std::vector<int>& to) const override;

 private:
  /// One part of a round: every process's bytes, by process (the exchange's all_gather, timed
  /// and counted).
  std::vector<std::vector<std::uint8_t>> gather(std::vector<std::uint8_t> mine, bool more = false);
  /// One part of a routed round (Exchange::routed), timed and counted.
  RoutedReceived route(RoutedMessage mine, const std::vector<int>& peers, bool more);
  void hello();
  /// A partitioned run, at the start: drops the robots this process neither moves nor may read.
  void partition();
  /// At the start of a handoff: makes the domains again from where the robots are when their
  /// robot counts have drifted apart, if every process holds every robot's position (the last
  /// moves carried every robot). Changes which process moves what, never a result.
  void rebalance();
  void exchange_actuation();
  /// The robots' whole-world hash from every process's sums of its robots' digests (a
  /// partitioned run's end).
  void hash_partitioned_world();
  /// The columns a moves round carries: the halo columns, the logged ones when `logged` (a
  /// frame follows), and in a partitioned run who each robot is.
  std::vector<ColumnHandle> moves_columns(bool logged) const;
  /// A moves round of the listed robots only (border moves 'N'): `listed` this process's,
  /// increasing ids. A partitioned process takes in the robots it does not hold, and at the
  /// end of a tick (`end_of_tick`) drops those it was not sent and those beyond its reach.
  /// A partitioned run routes the robots: each goes to the processes whose domains it is
  /// within reach of (on a `frame`'s tick every robot also to the first process); robots
  /// loop functions moved (not `end_of_tick`) to every process.
  void exchange_listed(const std::vector<ColumnHandle>& columns, std::vector<EntityId> listed,
                       bool end_of_tick, bool frame);
  /// One moves ('M') or state ('S') round: `columns` of every robot, each sent by the process
  /// that simulates it (by_host false) or holds it (holder, by_host true).
  /// `more_after`: the round goes on after this exchange (a checkpoint's rounds come before
  /// the handoff of the same round).
  void exchange_rows(char kind, const std::vector<ColumnHandle>& columns,
                     const IdMap<std::int16_t>& holder, bool by_host, bool more_after = false);
  std::size_t rows_per_part(const std::vector<ColumnHandle>& columns) const;
  /// The last part of a moves round, after the columns: every process's tags, the flags, and
  /// with affinities the whole rows of robots simulated for another process.
  void put_moves_tail(std::vector<std::uint8_t>& out) const;
  void take_moves_tail(log::ByteReader& r, int from);
  /// A robot's whole row in a message: u32 row, then its bytes column by column.
  void put_row(std::vector<std::uint8_t>& out, std::uint32_t row) const;
  /// Reads the bytes put_row wrote for `row` (after its u32); writes them when `write`.
  void take_row(log::ByteReader& r, std::uint32_t row, bool write);
  [[noreturn]] void desync(int from, const std::string& what) const;
  /// Whether process `p` may send the moves or changes of the robot at `row`, held here.
  bool may_move(std::uint32_t row, int p) const;
  /// Refuses received rows whose real numbers are not finite or whose position is far outside
  /// the arena (Simulation::bad_value): `from` sent them.
  void check_received(int from, std::span<const std::uint32_t> rows,
                      const std::vector<ColumnHandle>& columns) const;
  bool known_identity(std::uint16_t kind, std::uint16_t controller, std::uint8_t engine,
                      std::uint32_t tag) const;
  /// Refuses received robots of no kind, controller, region or tag of this run.
  void check_identity(int from, std::span<const std::uint32_t> rows) const;

  // The run's, kept by Simulation (simulation.hpp says what each is).
  Simulation& sim_;
  WorldState& state_;
  const WorldModel& model_;
  Distribution& dist_;
  IdMap<std::int16_t>& host_;   ///< per robot id: the process running its controller
  IdMap<std::int16_t>& owner_;  ///< per robot id: the process moving it this tick
  ExchangeStats& xstats_;
  /// Columns a robot's process sends: every tick (halo) and with the robot (whole row). The
  /// body's identity, engine and tag columns are the same on every process and never sent.
  std::vector<ColumnHandle> halo_columns_, row_columns_;
  /// Every process's tags of the tick (by robot id), interned after the moves.
  std::vector<std::pair<EntityId, std::string>> incoming_tags_;
  bool last_moves_full_ = true;  ///< the last moves round carried every robot (or none ran)
  /// A partitioned run's peers of this process (increasing): the processes whose domains lie
  /// within the halo reach of its own, which may read its robots and whose robots it may
  /// read; on a frame's tick also the first process (which writes the frame) or, for the
  /// first, every process; and every other process.
  std::vector<int> peers_, frame_peers_, others_;
};

/// Makes process `sim.distribution().process`'s rounds (Distribution::make_rounds).
std::unique_ptr<ProcessRounds> make_tick_rounds(Simulation& sim);

}  // namespace fleetsim::distributed
