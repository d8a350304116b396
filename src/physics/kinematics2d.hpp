// `kinematics2d`: the DEECo playground's 2D kinematic engine.
//
// Circular bodies move by their differential-drive commands (speed clamped to the kind's
// limits). A move that would cross an obstacle segment or touch another robot stops at the
// moment of first contact, robot-robot contacts being computed from both robots' motions
// during the tick. Bodies therefore never overlap; they stop `kStopGap` (1 nm,
// physics/contact_gap.hpp) apart, where the DEECo playground stops them at contact.
//
// Order independence: every robot's allowed fraction of motion f is found by a Jacobi
// fixed point. Each round, every robot lowers its own f to the first contact time against
// each neighbour given both robots' f of the previous round; pair times are computed
// symmetrically (bit for bit the same for i-j and j-i), f only decreases, and rounds repeat
// until nothing changes. The result is a function of the state alone, not of thread count or
// processing order. Robots in different engines (regions) never collide; they may overlap,
// and a robot moving into an engine where it would overlap one of that engine's robots waits
// in its engine until it no longer does (so within one engine robots never overlap).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/routed_message.hpp"
#include "core/thread_pool.hpp"
#include "physics/spatial_grid.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// How near beyond contact two bodies, or a body and a wall, count as touching, metres: the
/// collision sensor reports what is within 4 kSkin; the contact lists and the placement keep
/// this margin. (Bodies that stop on contact stop kStopGap apart: physics/contact_gap.hpp.)
inline constexpr double kSkin = 1e-6;

/// The spatial index shared by sensing and physics: rebuilt once per tick, before sensing.
struct SpatialIndex {
  RobotGrid robots;
  SegmentGrid segments;
  /// Sets the grids up for `model`. The robot grid's cells are as large as the longest
  /// contact distance (two robots closing on each other within one tick), so the physics'
  /// pair loops read the 3x3 block (RobotGrid::for_each_near); sensors that reach further
  /// (proximity rays) read the block their reach needs (RobotGrid::runs_within).
  /// `robots_hint`: robots expected (sizes the grid cells for sparse swarms; 0 = unknown).
  /// `sensing_m`: the longest sensor reach beyond a body's surface.
  /// `robots_min`/`robots_max`: the part of the arena the robot grid covers (default: all of
  /// it); robots beyond it go to its edge cells, where every query still finds them.
  void init(const WorldModel& model, std::size_t robots_hint = 0, double sensing_m = 0,
            std::optional<std::pair<Vec2, Vec2>> robots_area = std::nullopt);
  void rebuild(const WorldModel& model, const WorldState& state, ThreadPool& pool);
  double interaction_m = 0;  ///< the longest distance any query reaches (contact or sensing)
  double contact_m = 0;      ///< the longest contact distance; the 3x3 block holds it
  double max_radius_m = 0;   ///< the largest body radius of the run's kinds
  /// The farthest a kinematics2d contact candidate can be (two bodies' radii and motions):
  /// a robot nearer than this to another process's domain takes part in the contact rounds.
  double border_m = 0;
  bool uniform_radius = true;  ///< every kind of the run has the radius max_radius_m
};

/// A kinematics2d step's link to the other processes of a run whose domains split its regions
/// (sim/domains.hpp, docs/distributed.md "Domains"). Each process moves the robots of its
/// domain; the contact fixed point's rounds then carry, between processes, the robots within
/// SpatialIndex::border_m of another domain: their motion before round 0, then every change
/// of their fraction, so each process computes the fractions one process would. Every process
/// makes the same rounds (their number is agreed in each).
struct ContactBorders {
  const std::int16_t* mover = nullptr;         ///< per row: the process that moves the robot
  const std::uint8_t* shared = nullptr;        ///< per row: 1 for a robot another process reads
  std::span<const std::uint32_t> shared_rows;  ///< the same robots' rows, increasing
  /// Per row: the robot's id (robots travel by id: processes may hold different robots), and
  /// the row of an id (kNoIndex when this process does not hold it).
  const EntityId* ids = nullptr;
  std::function<std::uint32_t(EntityId)> row_of;
  /// This process holds only the robots near its domain: robots it does not hold are near
  /// other domains only, and their motions and fractions are skipped.
  bool partial = false;
  int process = 0;  ///< this process
  /// One round: this process's bytes to every other; returns every process's, by index.
  std::function<std::vector<std::vector<std::uint8_t>>(std::vector<std::uint8_t>)> round;
  /// A partitioned run routes the rounds (`routed`): each robot's motion and fractions go only
  /// to the processes whose domains are within border_m of it (`destinations` lists them,
  /// increasing, for a row), over `routed_round` (the common bytes to every process, the parts
  /// to their processes; returns what each process sent to all and to this one). `round` is
  /// then unused.
  bool routed = false;
  std::function<void(std::uint32_t row, std::vector<int>& to)> destinations;
  std::function<RoutedReceived(RoutedMessage)> routed_round;
};

/// Whether kinematics2d keeps the motion and its fractions in double for this run (unrounded,
/// as the DEECo playground does): when a kind of the run has a `deeco_wheels` actuator. Every
/// other run keeps them in float (the same bits as before; KinematicsEngine's scratch).
bool kinematics_in_double(const WorldModel& model);

/// Motion: the wheel-speed model is a differential drive (v = (l + r) / 2, w = (r - l) / axle),
/// computed by the differential_drive actuator in the act phase; the engine clamps v to the
/// kind's max_speed and integrates at the mid-tick heading.
class KinematicsEngine {
 public:
  /// The physics phase: moves every robot and fills the collision sensor (contacts, degree of
  /// realization). `owned` (one flag per engine; null = all): only robots of those engines
  /// move, the others keep every column (a process of a distributed run moves its regions').
  /// `borders`: a run split over domains (null otherwise): only the robots its `mover` gives
  /// this process move, and the rounds meet the other processes' robots.
  void step(const WorldModel& model, WorldState& state, const SpatialIndex& index, ThreadPool& pool,
            const std::vector<std::uint8_t>* owned = nullptr,
            const ContactBorders* borders = nullptr);
  /// Rounds of the fixed point in the last step (diagnostics).
  int last_rounds() const { return last_rounds_; }
  /// The rounds turn sparse once at most `changed` robots changed in a round (by default
  /// 1/32 of the robots; 0: never). For tests: the results are the same for any value.
  static constexpr std::size_t kSparseAuto = ~std::size_t{0};
  void set_sparse_below(std::size_t changed) { sparse_below_ = changed; }

 private:
  // Scratch in slot order (see RobotGrid), reused every tick: written and read only inside
  // step(), each worker writing its own slot range. The motion and its allowed fraction are
  // floats (8 bytes a robot less): the commanded motion is rounded to float toward zero before
  // anything uses it (the robot moves exactly the motion its contacts were computed for, never
  // faster than commanded, and within 1e-7 of it relatively), and a fraction is rounded down
  // (a robot stops at most a float's rounding short of its first contact, never past it), so
  // bodies still never overlap. Positions and headings stay double. A DEECo run
  // (kinematics_in_double) keeps them in double instead (a fraction a contact limits lowered
  // by 2^-40: kinematics2d.cpp, as_motion): the step is compiled for both (step_as<M>) and the
  // run uses one.
  template <class M>
  struct Motion {
    std::vector<M> dx, dy;  ///< commanded motion this tick, metres
    /// The fraction of the motion allowed, and its next iterate; the sign bit marks a fraction
    /// that changed in the last round of the fixed point (the value is the magnitude).
    std::vector<M> f, f_next;
    std::vector<std::pair<std::uint32_t, M>> updates;  ///< a sparse round's new fractions
  };
  Motion<float> motion32_;
  Motion<double> motion64_;
  /// `Here`: a type of the source file's own (anonymous namespace), so that both instantiations
  /// are that file's alone and the compiler inlines the step's lambdas as in one function.
  template <class M, class Here>
  void step_as(Motion<M>& mv, const WorldModel& model, WorldState& state, const SpatialIndex& index,
               ThreadPool& pool, const std::vector<std::uint8_t>* owned,
               const ContactBorders* split);
  std::vector<std::uint8_t> engine_;
  /// Round 0's candidates of each slot (offsets to their slots, in slot order): at most
  /// kCandidates, or kOverflow when there were more or one was too far in slot order (then the
  /// rounds scan the cells again). Stored per chunk of 2^kChunkBits slots, packed in slot
  /// order (a slot's list follows its predecessors' in the chunk's list): ~1.2 candidates, 5
  /// bytes per robot with the count. The later rounds and the contacts touch them instead of a
  /// 3x3 block of ~8 robots.
  static constexpr unsigned kCandidates = 8;
  static constexpr std::uint8_t kOverflow = 0xff;
  static constexpr unsigned kChunkBits = 10;     ///< 1,024 slots: 8,192 candidates at most
  std::vector<std::vector<std::int16_t>> cand_;  ///< per chunk
  std::vector<std::uint8_t> cand_count_;
  /// Sparse rounds (see step 2 in the source): where each group of kGroup slots' lists start
  /// in their chunk's list, the robots that changed (per worker of a dense round, then all),
  /// the robots to visit (and a bit each: queued), and their new fractions.
  static constexpr std::size_t kGroup = 32;
  static constexpr int kMaxRounds = 200;
  std::vector<std::uint16_t> group_at_;
  std::vector<std::vector<std::uint32_t>> changed_by_worker_;
  std::vector<std::uint32_t> sparse_changed_, work_;
  std::vector<std::uint64_t> queued_;
  std::size_t sparse_below_ = kSparseAuto;
  int last_rounds_ = 0;
  // A run split over domains: per slot, 1 for another process's robot whose motion and
  // fractions arrived (a ghost); the slot of each row; the ghosts changed in the last round.
  std::vector<std::uint8_t> ghost_;
  std::vector<std::uint32_t> slot_of_, ghost_changed_;
  /// One round with the other processes: sends the fractions of this process's shared robots
  /// at `slots` (with their motion when `motion`: then the ghosts' motions and fractions are
  /// written, unmarked), writes the ghosts' new fractions into `f` (marked changed) and lists
  /// them in ghost_changed_; returns every process's `changes`, summed. Refuses what does not
  /// fit (a robot the sender does not move, a motion beyond `reach`).
  template <class M>
  std::uint64_t border_round(Motion<M>& mv, const ContactBorders& b,
                             const std::vector<std::uint32_t>& slots, std::vector<M>& f,
                             bool motion, std::uint64_t changes, double reach,
                             const std::uint32_t* order, std::size_t n, int round);
};

/// The end of the physics phase, for every engine type: assigns every robot to the region of
/// its kind's engine type owning its new position (migration; deferred while the robot
/// overlaps a robot of that region, see the source). Reads the positions the engines left in
/// the columns and the grid built before they moved (call it on the index of this tick's
/// sensing): a distributed run calls it on every process once the moves are exchanged.
class RegionMigration {
 public:
  void migrate(const WorldModel& model, WorldState& state, const SpatialIndex& index,
               ThreadPool& pool);

 private:
  std::vector<std::uint8_t> engine_, target_;  ///< scratch in slot order
};

/// First time t in [0, limit] at which a circle of radius `r` moving from p by t*d comes
/// within r + kStopGap of segment s while approaching it; `limit` if never.
double segment_contact_time(Vec2 p, Vec2 d, double r, const Segment& s, double limit);

/// First time of contact of two circles moving p_i + min(t, f_i) d_i, p_j + min(t, f_j) d_j,
/// t in [0, max(f_i, f_j)]; returns 2 when they never come within r_sum + kStopGap approaching.
/// Symmetric: pair_contact_time(i, j) == pair_contact_time(j, i) bit for bit.
double pair_contact_time(Vec2 pi, Vec2 di, double fi, Vec2 pj, Vec2 dj, double fj, double r_sum);

}  // namespace fleetsim
