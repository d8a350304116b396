// `dynamics2d`: 2D rigid-body dynamics on Box2D 2.4 (Debian's libbox2d).
//
// Every robot is a dynamic circle with the robot's mass; the static obstacles (walls, box
// sides, bitmap edges, the arena's border) are two-sided edges of one static body.
//
// Two models (the region's `model`). "argos", the default, is ARGoS's dynamics2d
// (`dynamics2d_velocity_control.cpp`, `dynamics2d_footbot_model.cpp`, `dynamics2d_epuck_model.cpp`
// in ARGoS): each robot is tied to a kinematic control body, which moves at the wheels' velocity
// (speed along the robot's heading, the commanded turn rate), by a Box2D motor joint without
// position correction: a velocity constraint of at most max_force (linear) and max_torque
// (angular), solved together with the contacts. A contact's friction therefore cannot turn the
// robot (the foot-bot's 150 N m holds its heading): a robot meeting a wall at an angle slides
// along it. Masses and limits are the kind's ARGoS values (RobotKind::argos_*), contact friction
// the product of the two shapes' coefficients (robots and movable bodies 0.7, static obstacles
// 0.1: Chipmunk's rule, which ARGoS uses), done in Box2D, whose rule is the geometric mean, by
// giving each fixture the square of its coefficient. "fleetsim", the former default: before
// each sub-step every robot gets the impulse that would bring its velocity to the commanded one,
// bounded by max_force x h and max_torque x h, outside the solver, so a contact's friction
// turns the robot; one mass and limit for every kind; Box2D's friction rule. Either way
// contacts share the motion between bodies: a robot pushing another slows down, one driving
// into a wall stops against it. Bodies may overlap by up to Box2D's linear slop (0.5 mm at the
// scale below) while pushing, as in any rigid-body engine; kinematics2d is the engine whose bodies
// never overlap. Passive bodies (kinds without parts: cylinders, boxes) are held by the floor's
// Coulomb friction as ARGoS holds its movable boxes: a friction joint to the ground inside the
// solver (mu m g, and (2/3) mu m g r against turning), so a push weaker than that moves nothing.
//
// Which robots Box2D steps. Robots that cannot touch anything this tick move by the drive
// alone (find_free_robots). The others form groups that cannot touch each other during the
// tick (make_groups). In a group, a robot enters Box2D at the first sub-step at which an
// obstacle is near or another's free path meets its own (plan_group), on its free path until
// then; after the group's Box2D world, a robot whose free path met another's path in Box2D
// enters at that sub-step and the group goes again (check_group), until none does. So a robot
// on its free path has touched nothing, as Box2D would have found.
//
// Determinism. Box2D is deterministic for the same sequence of calls in one thread. The robots
// that go to Box2D are stepped in worlds built anew every tick from the columns alone: groups,
// in the order of their lowest row (robot id), fill worlds of at least kBatchBodies robots of
// one region, the bodies created in row order, each at its first sub-step; each world is stepped by
// one worker, worlds in parallel. A group that goes again does so in the next round's worlds,
// filled the same way from the groups that go again; which groups these are depends on the
// columns alone. The state kept between ticks is in columns (pose, and the
// velocities this engine declares), and what a world holds depends on them alone, so the result
// depends on nothing else: not on the thread count, a checkpoint and resume, or which process held
// the robot last tick. Building anew also means no warm start across ticks (Box2D warm-starts
// contacts between the sub-steps of a tick).
//
// Gripping (ARGoS's `dynamics2d_gripping.cpp`), in a run whose kinds have the `footbot_gripper`
// actuator (src/physics/gripping.hpp; without it nothing below runs and the bits are the same).
// At the start of each tick, a robot whose gripper is locked and holds nothing grips the body
// (a robot or a passive body, not a flyer) its gripper touches: a 1 cm circle on its edge in
// the turret's direction. The anchor is the middle of the overlap of the two outlines (where
// Chipmunk puts the contact point ARGoS takes), kept in the held body's frame, and the rest
// length is its distance from the gripping robot's centre: as ARGoS, a joint that keeps that
// distance (ARGoS: a stiff damped spring, 10000 N/m; here a rigid distance joint, rebuilt every
// tick from the columns), with the two bodies still colliding. An unlocked gripper, or a held
// body in another region, releases. Both bodies go to Box2D from the tick's first sub-step, in
// one world.
//
// Scale: Box2D is tuned for bodies of 0.1 to 10 units; an e-puck is 7 cm across, so lengths
// are multiplied by 10 (1 unit = 10 cm) and coordinates are relative to the region's centre
// (single-precision floats keep about a micrometre there).
#include <box2d/box2d.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/det_math.hpp"
#include "physics/gripping.hpp"
#include "physics/physics_world.hpp"
#include "physics/spatial_grid.hpp"

namespace fleetsim {
namespace {

constexpr double kScale = 10.0;  ///< Box2D units per metre

struct RegionSettings {
  bool argos = true;  ///< model="argos": velocity control in the solver, the kinds' ARGoS values
  int sub_steps = 4;
  int velocity_iterations = 8;
  int position_iterations = 3;
  double robot_mass = 0.4;
  double max_force = -1;                    ///< N; < 0: the kind's (model "argos") or 1.5
  double max_torque = -1;                   ///< N m; < 0: the kind's (model "argos") or 1.5
  float robot_fixture_friction = 0.49f;     ///< Box2D fixture friction of bodies
  float obstacle_fixture_friction = 0.01f;  ///< of the static obstacles' edges
  double ground_friction = 0.5;
};

/// The former defaults (model="fleetsim"): one mass and limit for every kind.
constexpr double kDefaultLimit = 1.5;

/// A body's mass properties and the limits of what holds it to the floor (SI units).
struct BodyDrive {
  double mass, inertia;          ///< kg, kg m^2 about the centre
  double max_force, max_torque;  ///< N, N m
};

/// Robots drive through their wheels (the region's max_force, max_torque, else with model
/// "argos" the kind's ARGoS values, else 1.5); a passive body (no parts) is held by the floor's
/// Coulomb friction: mu m g, and (2/3) mu m g r for the torque (a disc's; a box uses its
/// bounding circle).
BodyDrive body_drive(const RegionSettings& s, const RobotKind& k) {
  constexpr double kGravity = 9.81;
  BodyDrive d{};
  const bool argos = s.argos && k.argos_mass_kg > 0;
  d.mass = k.mass_kg > 0 ? k.mass_kg : argos ? k.argos_mass_kg : s.robot_mass;
  d.inertia = k.shape == BodyShape::kBox
                  ? d.mass * (k.length_m * k.length_m + k.width_m * k.width_m) / 12
                  : 0.5 * d.mass * k.radius_m * k.radius_m;
  if (k.passive) {
    d.max_force = s.ground_friction * d.mass * kGravity;
    d.max_torque = 2.0 / 3.0 * s.ground_friction * d.mass * kGravity * k.radius_m;
  } else {
    d.max_force = s.max_force >= 0 ? s.max_force : argos ? k.argos_max_force_n : kDefaultLimit;
    d.max_torque = s.max_torque >= 0 ? s.max_torque
                   : argos           ? k.argos_max_torque_n_m
                                     : kDefaultLimit;
  }
  return d;
}

/// The columns a step reads and writes, fetched once a tick.
struct Columns {
  double *x, *y, *theta, *vx, *vy, *omega;
  const double *speed, *turn;
  float *realization, *contact_angle;
  std::uint8_t* contact_count;
};

/// The drive's impulse for one sub-step: what brings a body of mass m, moving at (ux, uy), to
/// speed v along its heading (cosine c, sine s), at most `max` long. The same arithmetic for a
/// body in Box2D (Box2D units) and a free one (SI units).
inline void drive_impulse(double m, double v, double c, double s, double ux, double uy, double max,
                          double& jx, double& jy) {
  jx = m * (v * c - ux);
  jy = m * (v * s - uy);
  const double j = std::sqrt(jx * jx + jy * jy);
  if (j > max) {
    jx *= max / j;
    jy *= max / j;
  }
}

/// Four robots' free sub-steps (Dynamics2d::free_motions): the state of each lane, in SI units.
struct FreeLanes {
  double v[4], turn[4], m[4], inertia[4], max_impulse[4], max_angular[4];
  double px[4], py[4], a[4], ux[4], uy[4], wz[4];
};

/// `subs` free sub-steps of four lanes at once for AVX2 (simd_path() == SimdPath::kAvx2): the
/// operations of free_motions' scalar loop, in the same order and without FMA (std::clamp as
/// two selects, the impulse's bound as a select), so each lane gets the scalar loop's bits.
/// `path`, if not null: lane l's centre at each sub-step's start goes to path[l][2 sub], [2 sub +
/// 1].
[[gnu::target("avx2")]] void free_sub_steps_avx2(FreeLanes& f, int subs, double h,
                                                 double* const* path) {
  const __m256d v = _mm256_loadu_pd(f.v), turn = _mm256_loadu_pd(f.turn);
  const __m256d m = _mm256_loadu_pd(f.m), inertia = _mm256_loadu_pd(f.inertia);
  const __m256d max_impulse = _mm256_loadu_pd(f.max_impulse);
  const __m256d hi = _mm256_loadu_pd(f.max_angular);
  const __m256d lo = _mm256_xor_pd(hi, _mm256_set1_pd(-0.0));
  const __m256d vh = _mm256_set1_pd(h);
  __m256d px = _mm256_loadu_pd(f.px), py = _mm256_loadu_pd(f.py), a = _mm256_loadu_pd(f.a);
  __m256d ux = _mm256_loadu_pd(f.ux), uy = _mm256_loadu_pd(f.uy), wz = _mm256_loadu_pd(f.wz);
  alignas(32) double angle[4], sa[4], ca[4], x[4], y[4];
  for (int sub = 0; sub < subs; ++sub) {
    if (path) {
      _mm256_store_pd(x, px);
      _mm256_store_pd(y, py);
      for (int l = 0; l < 4; ++l)
        if (path[l]) {
          path[l][2 * sub] = x[l];
          path[l][2 * sub + 1] = y[l];
        }
    }
    _mm256_store_pd(angle, a);
    det_sincos_avx2(angle, sa, ca, 4);
    const __m256d s = _mm256_load_pd(sa), c = _mm256_load_pd(ca);
    // drive_impulse
    __m256d jx = _mm256_mul_pd(m, _mm256_sub_pd(_mm256_mul_pd(v, c), ux));
    __m256d jy = _mm256_mul_pd(m, _mm256_sub_pd(_mm256_mul_pd(v, s), uy));
    const __m256d j = _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(jx, jx), _mm256_mul_pd(jy, jy)));
    const __m256d over = _mm256_cmp_pd(j, max_impulse, _CMP_GT_OQ);
    const __m256d q = _mm256_div_pd(max_impulse, j);
    jx = _mm256_blendv_pd(jx, _mm256_mul_pd(jx, q), over);
    jy = _mm256_blendv_pd(jy, _mm256_mul_pd(jy, q), over);
    ux = _mm256_add_pd(ux, _mm256_div_pd(jx, m));
    uy = _mm256_add_pd(uy, _mm256_div_pd(jy, m));
    // std::clamp(t, lo, hi) = min(max(t, lo), hi), NaN passing through
    const __m256d t = _mm256_mul_pd(inertia, _mm256_sub_pd(turn, wz));
    const __m256d t1 = _mm256_blendv_pd(t, lo, _mm256_cmp_pd(t, lo, _CMP_LT_OQ));
    const __m256d t2 = _mm256_blendv_pd(t1, hi, _mm256_cmp_pd(hi, t1, _CMP_LT_OQ));
    wz = _mm256_add_pd(wz, _mm256_div_pd(t2, inertia));
    px = _mm256_add_pd(px, _mm256_mul_pd(vh, ux));
    py = _mm256_add_pd(py, _mm256_mul_pd(vh, uy));
    a = _mm256_add_pd(a, _mm256_mul_pd(vh, wz));
  }
  _mm256_storeu_pd(f.px, px);
  _mm256_storeu_pd(f.py, py);
  _mm256_storeu_pd(f.a, a);
  _mm256_storeu_pd(f.ux, ux);
  _mm256_storeu_pd(f.uy, uy);
  _mm256_storeu_pd(f.wz, wz);
}

/// Robots stepped in one Box2D world (Dynamics2d::fill_batches).
struct Batch {
  std::size_t region = 0;
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> at;  ///< per robot: its slot in this round (Dynamics2d::slot_)
};

class Dynamics2d final : public PhysicsEngine {
 public:
  void setup(PhysicsSetup& setup) override {
    for (std::size_t r = 0; r < setup.regions().size(); ++r) {
      RegionSettings s;
      auto integer = [&](const char* name, int fallback) {
        return engine_integer(setup, r, name, fallback, 1, 100);
      };
      auto real = [&](const char* name, double fallback, bool positive) {
        return engine_real(setup, r, name, fallback, positive);
      };
      // A parameter whose default depends on the model: not a number (the documented "model"
      // default) when the file does not give it.
      auto given = [&](const char* name, double fallback) {
        return std::isnan(setup.params(r).real(name, std::nan(""))) ? fallback
                                                                    : real(name, fallback, false);
      };
      const std::string model = setup.params(r).text("model", "argos");
      if (model != "argos" && model != "fleetsim")
        setup.error(r, "model=\"" + model + "\" is not a dynamics2d model (expected argos or " +
                           "fleetsim)");
      s.argos = model != "fleetsim";
      // ARGoS steps its Chipmunk space `iterations` (10) times a tick, each with 10 solver
      // iterations: fewer leave the velocity control short of holding a robot's heading
      // against a contact's friction (a stuck robot then turns by degrees).
      s.sub_steps = integer("sub_steps", s.argos ? 10 : 4);
      s.velocity_iterations = integer("velocity_iterations", s.argos ? 10 : 8);
      s.position_iterations = integer("position_iterations", 3);
      s.robot_mass = real("robot_mass", 0.4, true);
      s.max_force = given("max_force", -1);
      s.max_torque = given("max_torque", -1);
      const double robot_friction = given("robot_friction", s.argos ? 0.7 : 0.3);
      const double obstacle_friction = given("obstacle_friction", s.argos ? 0.1 : 0.2);
      // Box2D mixes two fixtures' frictions as sqrt(a b); ARGoS (Chipmunk) as the product of
      // the shapes' coefficients, which squared fixtures give.
      s.robot_fixture_friction =
          static_cast<float>(s.argos ? robot_friction * robot_friction : robot_friction);
      s.obstacle_fixture_friction =
          static_cast<float>(s.argos ? obstacle_friction * obstacle_friction : obstacle_friction);
      s.ground_friction = real("ground_friction", 0.5, false);
      settings_.push_back(s);
      regions_.push_back(setup.regions()[r]);
    }
    auto velocity = [&](const char* name, const char* doc) {
      ColumnDesc d;
      d.name = name;
      d.type = ColumnType::kF64;
      d.doc = doc;
      d.owner = "dynamics2d";
      d.halo = false;  // only this robot's engine reads it
      return setup.column(d);
    };
    vx_ = velocity("body_vx", "linear velocity along x at the end of the tick, m/s (dynamics2d)");
    vy_ = velocity("body_vy", "linear velocity along y at the end of the tick, m/s (dynamics2d)");
    omega_ = velocity("body_omega", "turn rate at the end of the tick, rad/s (dynamics2d)");
    x_ = setup.find_column("x");
    y_ = setup.find_column("y");
    theta_ = setup.find_column("theta");
    speed_ = setup.find_column("speed_cmd");
    turn_ = setup.find_column("turn_cmd");
    realization_ = setup.find_column("realization");
    contact_angle_ = setup.find_column("contact_angle");
    contact_count_ = setup.find_column("contact_count");
    region_of_.assign(256, -1);
    for (std::size_t r = 0; r < regions_.size(); ++r)
      region_of_[regions_[r].index] = static_cast<int>(r);
    segments_.resize(regions_.size());
    segment_margin_.assign(regions_.size(), -1);
  }

  std::string refuses(const KindInfo& kind) const override {
    return kind.flies ? "it flies (expected a 3D engine such as pointmass3d)" : "";
  }

  void step(PhysicsWorld& world) override {
    auto& w = dynamic_cast<CorePhysicsWorld&>(world);
    const std::size_t n = w.robot_count();
    const std::uint8_t* engine = w.state.robot_engine().data();
    const std::uint8_t* steps = w.steps_mask().data();
    // The farthest a body's own drive takes it in a tick, and the largest body, over the kinds
    // of the run this engine type accepts: a property of the model.
    const std::uint8_t type = w.model.engines[regions_.front().index].type_index;
    double move = 0, rmax = 0;
    for (const RobotKind& k : w.model.kinds) {
      if (!k.in_run || k.engine_type != type) continue;
      move = std::max(move, k.max_speed_m_per_s * w.dt_s);
      rmax = std::max(rmax, k.radius_m);
    }
    const Columns c = columns(w);
    update_grips(w, c);
    // Per region, the farthest any of its bodies goes this tick: the drive's reach, or more for
    // a body moving faster (pushed last tick). A maximum, so the same in any order.
    reach_.assign(regions_.size(), move);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!steps[engine[i]] || region_of_[engine[i]] < 0) continue;
      double& m = reach_[static_cast<std::size_t>(region_of_[engine[i]])];
      m = std::max(m, std::sqrt(c.vx[i] * c.vx[i] + c.vy[i] * c.vy[i]) * w.dt_s);
    }
    double reach = move;
    for (double m : reach_) reach = std::max(reach, m);
    const double margin = 2 * rmax + 2 * reach + 0.1;
    for (std::size_t r = 0; r < regions_.size(); ++r) segments_near(w, r, margin);
    find_free_robots(w, c, move, rmax, reach);
    make_groups(w, c);
    // Rounds: the groups whose robots' paths are not yet checked go to Box2D; a group whose
    // free robots meet none of its Box2D robots' paths is written to the columns, the others
    // go again with the robots that meet one entering earlier (check_group).
    while (!pending_.empty()) {
      fill_batches(w);
      w.parallel_for(batches_.size(), 1, [&](std::size_t b, std::size_t e, int) {
        for (std::size_t k = b; k < e; ++k) step_batch(w, c, batches_[k], margin);
      });
      passed_.assign(pending_.size(), 0);
      w.parallel_for(pending_.size(), 16, [&](std::size_t b, std::size_t e, int worker) {
        Scratch& scratch = scratch_[static_cast<std::size_t>(worker)];
        for (std::size_t k = b; k < e; ++k)
          if ((passed_[k] = check_group(w, pending_[k], scratch))) commit_group(w, c, pending_[k]);
      });
      std::size_t kept = 0;
      for (std::size_t k = 0; k < pending_.size(); ++k)
        if (!passed_[k]) pending_[kept++] = pending_[k];
      pending_.resize(kept);
      ++rounds_;
    }
  }

 private:
  /// The grips at the start of the tick (see the file's comment): releases, new grips, and the
  /// pairs of a gripper and what it holds, which share a Box2D world. Reads poses and the
  /// gripper's columns only; a robot's decision writes its own row. Without the gripper in the
  /// run (no `gripped` column) it does nothing.
  void update_grips(CorePhysicsWorld& w, const Columns& c) {
    grip_pairs_.clear();
    in_grip_.clear();
    const ColumnHandle held_column = w.state.robots.find(kGrippedColumn);
    if (held_column == kNoColumn) return;
    held_ = w.column<std::uint32_t>(held_column);
    state_ids_ = w.state.robot_id().data();
    anchor_ = w.column<double>(w.state.robots.find(kGripAnchorColumn));
    const double* aperture = w.column<double>(w.state.robots.find(kGripperColumn));
    const ColumnHandle turret_column = w.state.robots.find(kTurretColumn);
    const double* turret = turret_column == kNoColumn ? nullptr : w.column<double>(turret_column);
    const std::size_t n = w.robot_count();
    in_grip_.assign(n, 0);
    const std::uint8_t* engine = w.state.robot_engine().data();
    const std::uint8_t* steps = w.steps_mask().data();
    double rmax = 0;
    for (const RobotKind& k : w.model.kinds)
      if (k.in_run) rmax = std::max(rmax, k.radius_m);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!steps[engine[i]] || region_of_[engine[i]] < 0) continue;
      // ARGoS's lock state: |aperture| / (pi/2), locked above the threshold.
      const bool locked = std::abs(aperture[i]) / (kPi / 2) > kGripperLockThreshold;
      std::uint32_t& held = held_[i];
      double* anchor = &anchor_[3 * std::size_t{i}];
      if (held != 0) {
        const std::uint32_t j = w.state.robot_index(held - 1);
        if (!locked || j == kNoIndex || engine[j] != engine[i]) {
          held = 0;
          anchor[0] = anchor[1] = anchor[2] = 0;
        }
      } else if (locked) {
        grip(w, c, i, turret ? turret[2 * std::size_t{i}] : 0.0, rmax);
      }
      if (held != 0) {
        const std::uint32_t j = w.state.robot_index(held - 1);
        grip_pairs_.emplace_back(i, j);
        in_grip_[i] = in_grip_[j] = 1;
      }
    }
  }

  /// Robot i's locked, empty gripper grips the body its gripper circle overlaps most (the
  /// lowest id among equals), if any: writes the held body and the anchor to i's row.
  void grip(const CorePhysicsWorld& w, const Columns& c, std::uint32_t i, double turret,
            double rmax) {
    const std::uint8_t* engine = w.state.robot_engine().data();
    const RobotGrid& grid = w.index.robots;
    const std::uint32_t* order = grid.order().data();
    const KindInfo& kind = w.robot_kind(i);
    double sa, ca;
    det_sincos(c.theta[i] + turret, sa, ca);
    const double gx = c.x[i] + kind.radius_m * ca, gy = c.y[i] + kind.radius_m * sa;
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::uint32_t best = kNone;
    double best_d = 0, best_nx = 0, best_ny = 0;
    grid.for_each_within({gx, gy}, rmax + kGripperRadiusM, [&](std::uint32_t t) {
      const std::uint32_t j = order[t];
      if (j == i || engine[j] != engine[i]) return;
      // Signed distance from the gripper's centre to j's outline (< 0 inside), and the
      // direction from the gripper's centre into j.
      const KindInfo& other = w.robot_kind(j);
      double d, nx, ny;
      if (other.shape == BodyShape::kBox) {
        double sb, cb;
        det_sincos(c.theta[j], sb, cb);
        const double rx = gx - c.x[j], ry = gy - c.y[j];
        const double lx = cb * rx + sb * ry, ly = -sb * rx + cb * ry;
        const double hx = other.length_m / 2, hy = other.width_m / 2;
        const double qx = std::clamp(lx, -hx, hx), qy = std::clamp(ly, -hy, hy);
        double ux, uy;
        if (qx != lx || qy != ly) {
          d = std::sqrt((qx - lx) * (qx - lx) + (qy - ly) * (qy - ly));
          ux = (qx - lx) / d;
          uy = (qy - ly) / d;
        } else if (hx - std::abs(lx) <= hy - std::abs(ly)) {
          d = -(hx - std::abs(lx));
          ux = lx > 0 ? -1 : 1;
          uy = 0;
        } else {
          d = -(hy - std::abs(ly));
          ux = 0;
          uy = ly > 0 ? -1 : 1;
        }
        nx = cb * ux - sb * uy;
        ny = sb * ux + cb * uy;
      } else {
        const double dx = c.x[j] - gx, dy = c.y[j] - gy;
        const double dist = std::sqrt(dx * dx + dy * dy);
        d = dist - other.radius_m;
        nx = dist > 0 ? dx / dist : ca;
        ny = dist > 0 ? dy / dist : sa;
      }
      if (d >= kGripperRadiusM) return;
      if (best == kNone || d < best_d || (d == best_d && j < best)) {
        best = j;
        best_d = d;
        best_nx = nx;
        best_ny = ny;
      }
    });
    if (best == kNone) return;
    // The anchor: the middle of the overlap, between the gripper's deepest point in the body
    // and the body's outline; in the held body's frame.
    const double half = (kGripperRadiusM + best_d) / 2;
    const double mx = gx + best_nx * half, my = gy + best_ny * half;
    double sb, cb;
    det_sincos(c.theta[best], sb, cb);
    const double rx = mx - c.x[best], ry = my - c.y[best];
    double* anchor = &anchor_[3 * std::size_t{i}];
    anchor[0] = cb * rx + sb * ry;
    anchor[1] = -sb * rx + cb * ry;
    anchor[2] = std::sqrt((mx - c.x[i]) * (mx - c.x[i]) + (my - c.y[i]) * (my - c.y[i]));
    held_[i] = w.state.robot_id()[best] + 1;
  }

  /// Marks the robots that cannot touch anything this tick, and moves them; lists the pairs of
  /// the others that may meet. Most robots of a sparse swarm are alone most of the time: each
  /// would be an island of one body in Box2D, whose solver costs far more than the drive's
  /// integration. A robot is free when it goes no faster than the fastest kind's drive (so it
  /// moves at most `move`), no obstacle segment lies within its radius + `move`, and no robot
  /// of its region lies within the two radii + 2 `reach` + 1 cm (`reach`: the farthest any
  /// body of the region goes this tick; the other may be pushed, and Box2D's position
  /// correction moves overlapping bodies apart). A free robot's sub-steps are what Box2D
  /// computes for a body without contacts: the drive's impulses, then position += h velocity.
  /// The same distance links two robots that are not free into one group (make_groups). The
  /// test reads only this tick's columns, so it is the same for any thread count.
  void find_free_robots(CorePhysicsWorld& w, const Columns& c, double move, double rmax,
                        double reach) {
    const std::size_t n = w.robot_count();
    free_.assign(n, 0);
    walled_.assign(n, 0);
    first_sub_.resize(n);
    pairs_.resize(static_cast<std::size_t>(w.workers()));
    for (auto& p : pairs_) p.clear();
    const RobotGrid& grid = w.index.robots;
    const std::uint32_t* order = grid.order().data();
    const double* gx = grid.sorted_x().data();
    const double* gy = grid.sorted_y().data();
    const SlotRadius gr = grid.sorted_r();
    const std::uint8_t* engine = w.state.robot_engine().data();
    const std::uint8_t* steps = w.steps_mask().data();
    const auto& segs = w.index.segments.segments();
    const double* vx = c.vx;
    const double* vy = c.vy;
    const double robot_reach = 2 * rmax + 2 * reach + 0.01;
    w.parallel_for(n, 1024, [&](std::size_t b, std::size_t e, int worker) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs =
          pairs_[static_cast<std::size_t>(worker)];
      // The free robots move four at a time (free_motions), those of one region together.
      std::uint32_t ready[4];
      std::size_t count = 0;
      auto move_ready = [&] {
        FreeMotion f[4];
        free_motions(w, c, ready, count, f, nullptr, 0);
        for (std::size_t k = 0; k < count; ++k) commit_free(w, c, ready[k], f[k]);
        count = 0;
      };
      for (std::size_t s = b; s < e; ++s) {
        const std::uint32_t i = order[s];
        if (!steps[engine[i]] || region_of_[engine[i]] < 0) continue;
        const Vec2 p{gx[s], gy[s]};
        const double r = gr[s];
        const double link = 2 * reach_[static_cast<std::size_t>(region_of_[engine[i]])] + 0.01;
        bool near = false;
        for (std::uint32_t si : w.index.segments.near(p))
          if (distance_to_segment(p, segs[si]) < r + move + 4 * kSkin) {
            near = true;
            walled_[i] = 1;
            break;
          }
        near = near || (vx[i] * vx[i] + vy[i] * vy[i]) * w.dt_s * w.dt_s > move * move;
        near = near || (!in_grip_.empty() && in_grip_[i]);
        grid.for_each_within(p, robot_reach, [&](std::uint32_t t) {
          const std::uint32_t j = order[t];
          if (t == s || engine[j] != engine[i]) return;
          const double dx = gx[t] - p.x, dy = gy[t] - p.y;
          const double within = r + gr[t] + link;
          if (dx * dx + dy * dy >= within * within) return;
          near = true;
          if (j > i) pairs.emplace_back(i, j);
        });
        if (near) continue;
        free_[i] = 1;
        if (count > 0 && engine[ready[0]] != engine[i]) move_ready();
        ready[count++] = i;
        if (count == 4) move_ready();
      }
      if (count > 0) move_ready();
    });
  }

  /// Groups the robots that go to Box2D: two robots that may meet this tick (find_free_robots)
  /// are in one group, and so are the groups they link, so no two groups touch during the
  /// tick. Plans each group (plan_group); the groups with robots for Box2D are pending, the
  /// others are written to the columns. What a group holds depends on the columns alone, not
  /// on the thread count, the process, or a checkpoint.
  void make_groups(CorePhysicsWorld& w, const Columns& c) {
    const std::size_t n = w.robot_count();
    const std::uint8_t* engine = w.state.robot_engine().data();
    const std::uint8_t* steps = w.steps_mask().data();
    // Union-find whose root is the lowest row of its set, whatever the order of the unions.
    parent_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) parent_[i] = i;
    auto find = [&](std::uint32_t i) {
      while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
      return i;
    };
    auto unite = [&](std::uint32_t a, std::uint32_t b) {
      const std::uint32_t ra = find(a), rb = find(b);
      if (ra < rb)
        parent_[rb] = ra;
      else if (rb < ra)
        parent_[ra] = rb;
    };
    for (const auto& list : pairs_)
      for (const auto& [a, b] : list) unite(a, b);
    for (const auto& [a, b] : grip_pairs_) unite(a, b);  // a gripper and what it holds
    // Each group's rows, in row order, the groups in the order of their roots.
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    group_.assign(n, kNone);
    group_start_.clear();
    std::uint32_t groups = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!steps[engine[i]] || region_of_[engine[i]] < 0 || free_[i]) continue;
      const std::uint32_t root = find(i);
      if (root == i) {
        group_[i] = groups++;
        group_start_.push_back(0);
      }
      ++group_start_[group_[i] = group_[root]];
    }
    std::uint32_t sum = 0;
    for (std::uint32_t& g : group_start_) sum += std::exchange(g, sum);
    group_start_.push_back(sum);
    group_rows_.resize(sum);
    fill_.assign(group_start_.begin(), group_start_.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i)
      if (group_[i] != kNone) group_rows_[fill_[group_[i]]++] = i;
    // Each group's free paths and first sub-steps; the groups that need no Box2D are done.
    scratch_.resize(pairs_.size());
    group_boxed_.assign(groups, 0);
    std::size_t subs = 1;
    for (const RegionSettings& s : settings_) subs = std::max(subs, std::size_t(s.sub_steps));
    stride_ = 2 * subs;
    paths_.resize(sum * stride_);
    slot_.resize(sum);
    motions_.resize(sum);
    w.parallel_for(groups, 16, [&](std::size_t b, std::size_t e, int worker) {
      for (std::size_t g = b; g < e; ++g) {
        const auto gg = static_cast<std::uint32_t>(g);
        group_boxed_[g] = plan_group(w, c, gg, scratch_[static_cast<std::size_t>(worker)]);
        if (group_boxed_[g] == 0) commit_group(w, c, gg);
      }
    });
    pending_.clear();
    for (std::uint32_t g = 0; g < groups; ++g)
      if (group_boxed_[g] > 0) pending_.push_back(g);
    rounds_ = 0;
  }

  /// The pending groups, in the order of their lowest row (robot id), fill batches of at least
  /// kBatchBodies robots of one region, one Box2D world each, each group's robots that go to
  /// Box2D in row order. What a batch holds depends on the columns alone; the batches are
  /// stepped in parallel.
  void fill_batches(const CorePhysicsWorld& w) {
    const std::uint8_t* engine = w.state.robot_engine().data();
    std::size_t used = 0;
    std::uint32_t slots = 0;
    open_.assign(regions_.size(), -1);
    for (std::uint32_t g : pending_) {
      const std::uint32_t start = group_start_[g], end = group_start_[g + 1];
      const std::size_t r = static_cast<std::size_t>(region_of_[engine[group_rows_[start]]]);
      const int subs = settings_[r].sub_steps;
      if (open_[r] < 0) {
        if (batches_.size() <= used) batches_.emplace_back();
        batches_[used].region = r;
        batches_[used].rows.clear();
        batches_[used].at.clear();
        open_[r] = static_cast<int>(used++);
      }
      Batch& batch = batches_[static_cast<std::size_t>(open_[r])];
      for (std::uint32_t p = start; p < end; ++p)
        if (first_sub_[group_rows_[p]] < subs) {
          batch.rows.push_back(group_rows_[p]);
          batch.at.push_back(slot_[p] = slots++);
        }
      if (batch.rows.size() >= kBatchBodies) open_[r] = -1;
    }
    batches_.resize(used);
    actual_.resize(std::size_t{slots} * stride_ / 2);
    results_.resize(slots);
  }

  Columns columns(const PhysicsWorld& w) const {
    return {w.column<double>(x_),
            w.column<double>(y_),
            w.column<double>(theta_),
            w.column<double>(vx_),
            w.column<double>(vy_),
            w.column<double>(omega_),
            w.column<double>(speed_),
            w.column<double>(turn_),
            w.column<float>(realization_),
            w.column<float>(contact_angle_),
            w.column<std::uint8_t>(contact_count_)};
  }

  /// The end of a tick without contacts.
  struct FreeMotion {
    double x, y, theta, vx, vy, omega;
  };

  /// A robot's tick in Box2D (step_batch), until its group is written (commit_group).
  struct BoxResult {
    FreeMotion end;
    float realization;
    std::uint8_t contacts;
    float angles[kMaxContacts];
  };

  /// Robot i's tick as Box2D computes it for a body that nothing touches, in SI units: the
  /// drive's impulses, then position += h velocity, each sub-step; `stop` >= 0: only the first
  /// `stop` sub-steps. `path`, if not null, receives the centre (x, y) at the start of each
  /// sub-step.
  FreeMotion free_motion(const CorePhysicsWorld& w, const Columns& c, std::uint32_t i, double* path,
                         int stop = -1) const {
    FreeMotion f;
    free_motions(w, c, &i, 1, &f, path, 0, stop);
    return f;
  }

  /// free_motion of the n robots rows[0..n) of one region, with their paths (if `path` is not
  /// null: path + k stride for rows[k]), four at a time: four chains of dependent operations
  /// in flight instead of one, each robot's the same arithmetic whatever its lane.
  void free_motions(const CorePhysicsWorld& w, const Columns& c, const std::uint32_t* rows,
                    std::size_t n, FreeMotion* out, double* path, std::size_t stride,
                    int stop = -1) const {
    constexpr std::size_t kLanes = 4;
    if (n == 0) return;
    const RegionSettings& s =
        settings_[static_cast<std::size_t>(region_of_[w.state.robot_engine()[rows[0]]])];
    const double h = w.dt_s / s.sub_steps;
    const int subs = stop >= 0 ? std::min(stop, s.sub_steps) : s.sub_steps;
    const bool avx2 = simd_path() == SimdPath::kAvx2;
    for (std::size_t base = 0; base < n; base += kLanes) {
      const std::size_t lanes = std::min(kLanes, n - base);
      FreeLanes f;
      for (std::size_t l = 0; l < kLanes; ++l) {
        // Missing lanes repeat the first robot (AVX2 computes four; their results are dropped).
        const std::uint32_t i = rows[base + (l < lanes ? l : 0)];
        const RobotKind& kind = w.model.kinds[w.state.robot_kind()[i]];
        f.v[l] = std::clamp(c.speed[i], -kind.max_speed_m_per_s, kind.max_speed_m_per_s);
        f.turn[l] = c.turn[i];
        const BodyDrive drive = body_drive(s, kind);
        f.m[l] = drive.mass;
        f.inertia[l] = drive.inertia;
        f.max_impulse[l] = drive.max_force * h;
        f.max_angular[l] = drive.max_torque * h;
        f.px[l] = c.x[i];
        f.py[l] = c.y[i];
        f.a[l] = c.theta[i];
        f.ux[l] = c.vx[i];
        f.uy[l] = c.vy[i];
        f.wz[l] = c.omega[i];
      }
      if (avx2) {
        double* lane_path[kLanes] = {};
        if (path)
          for (std::size_t l = 0; l < lanes; ++l) lane_path[l] = &path[(base + l) * stride];
        free_sub_steps_avx2(f, subs, h, path ? lane_path : nullptr);
      } else {
        for (int sub = 0; sub < subs; ++sub)
          for (std::size_t l = 0; l < lanes; ++l) {
            if (path) {
              double* p = &path[(base + l) * stride + 2 * static_cast<std::size_t>(sub)];
              p[0] = f.px[l];
              p[1] = f.py[l];
            }
            double jx, jy, sa, ca;
            det_sincos(f.a[l], sa, ca);
            drive_impulse(f.m[l], f.v[l], ca, sa, f.ux[l], f.uy[l], f.max_impulse[l], jx, jy);
            f.ux[l] += jx / f.m[l];
            f.uy[l] += jy / f.m[l];
            f.wz[l] += std::clamp(f.inertia[l] * (f.turn[l] - f.wz[l]), -f.max_angular[l],
                                  f.max_angular[l]) /
                       f.inertia[l];
            f.px[l] += h * f.ux[l];
            f.py[l] += h * f.uy[l];
            f.a[l] += h * f.wz[l];
          }
      }
      for (std::size_t l = 0; l < lanes; ++l)
        out[base + l] = {f.px[l], f.py[l], wrap_angle(f.a[l]), f.ux[l], f.uy[l], f.wz[l]};
    }
  }

  /// Writes robot i's free tick to the columns: pose, velocities, no contact.
  void commit_free(const CorePhysicsWorld& w, const Columns& c, std::uint32_t i,
                   const FreeMotion& f) const {
    const RobotKind& kind = w.model.kinds[w.state.robot_kind()[i]];
    const double v = std::clamp(c.speed[i], -kind.max_speed_m_per_s, kind.max_speed_m_per_s);
    const double commanded = std::abs(v) * w.dt_s;
    const double moved =
        std::sqrt((f.x - c.x[i]) * (f.x - c.x[i]) + (f.y - c.y[i]) * (f.y - c.y[i]));
    c.realization[i] = commanded > 0 ? static_cast<float>(std::min(1.0, moved / commanded)) : 1.0f;
    c.x[i] = f.x;
    c.y[i] = f.y;
    c.theta[i] = f.theta;
    c.vx[i] = f.vx;
    c.vy[i] = f.vy;
    c.omega[i] = f.omega;
    c.contact_count[i] = 0;
    float* angles = &c.contact_angle[static_cast<std::size_t>(i) * kMaxContacts];
    for (int q = 0; q < kMaxContacts; ++q) angles[q] = 0;
  }

  /// A worker's buffers for plan_group and check_group.
  struct Scratch {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> near;  ///< pairs that may meet
    std::vector<std::pair<std::uint32_t, int>> lower;           ///< robots entering earlier
  };

  /// How far from robot i's centre Box2D finds its contacts: its radius (a box's bounding
  /// circle), and a box's polygon skin (Box2D's b2_polygonRadius, 1 mm at this scale).
  double radius_of(const CorePhysicsWorld& w, std::uint32_t i) const {
    const RobotKind& k = w.model.kinds[w.state.robot_kind()[i]];
    return k.shape == BodyShape::kBox ? k.radius_m + kBoxSkin : k.radius_m;
  }

  /// The pairs of group g's robots (places in group_rows_, the lower first) whose centres start
  /// near enough to meet during the tick: farther apart than their radii + kMissMargin + 4 reach
  /// they never do (each moves at most `reach`, and a robot in Box2D strays from its free path
  /// by at most 2 reach).
  void near_pairs(const CorePhysicsWorld& w, std::uint32_t g, std::size_t r,
                  std::vector<std::pair<std::uint32_t, std::uint32_t>>& near) const {
    near.clear();
    const std::uint32_t start = group_start_[g], end = group_start_[g + 1];
    for (std::uint32_t a = start; a < end; ++a) {
      const double ax = paths_[a * stride_], ay = paths_[a * stride_ + 1];
      const double ar = radius_of(w, group_rows_[a]) + kMissMargin + 4 * reach_[r];
      for (std::uint32_t b = a + 1; b < end; ++b) {
        const double dx = ax - paths_[b * stride_], dy = ay - paths_[b * stride_ + 1];
        const double limit = ar + radius_of(w, group_rows_[b]);
        if (dx * dx + dy * dy < limit * limit) near.emplace_back(a, b);
      }
    }
  }

  /// Plans group g: each robot's free path (free_motion, with the centre at the start of each
  /// sub-step, where Box2D finds its contacts), and the first sub-step at which it enters
  /// Box2D (first_sub_; the region's sub_steps: never, it moves on its free path). Returns how
  /// many robots enter Box2D. A robot enters at once when an obstacle is near or it grips or
  /// is held; else at the first sub-step at which another's free path comes within their radii
  /// + kMissMargin of its own. Whether the free path of a robot that enters later or never is
  /// right, the others' paths in Box2D tell (check_group). The result does not depend on the
  /// order of the robots.
  std::uint32_t plan_group(const CorePhysicsWorld& w, const Columns& c, std::uint32_t g,
                           Scratch& scratch) {
    const std::uint32_t start = group_start_[g], end = group_start_[g + 1];
    const std::size_t r =
        static_cast<std::size_t>(region_of_[w.state.robot_engine()[group_rows_[start]]]);
    const int subs = settings_[r].sub_steps;
    free_motions(w, c, &group_rows_[start], end - start, &motions_[start], &paths_[start * stride_],
                 stride_);
    for (std::uint32_t a = start; a < end; ++a) {
      const std::uint32_t i = group_rows_[a];
      first_sub_[i] = walled_[i] || (!in_grip_.empty() && in_grip_[i]) ? 0 : subs;
    }
    near_pairs(w, g, r, scratch.near);
    for (const auto& [a, b] : scratch.near) {
      std::uint8_t& fa = first_sub_[group_rows_[a]];
      std::uint8_t& fb = first_sub_[group_rows_[b]];
      const double gap = radius_of(w, group_rows_[a]) + radius_of(w, group_rows_[b]) + kMissMargin;
      const double* pa = &paths_[a * stride_];
      const double* pb = &paths_[b * stride_];
      for (int q = 0; q < std::max(fa, fb); ++q) {
        const double dx = pa[2 * q] - pb[2 * q], dy = pa[2 * q + 1] - pb[2 * q + 1];
        if (dx * dx + dy * dy < gap * gap) {
          fa = static_cast<std::uint8_t>(std::min<int>(fa, q));
          fb = static_cast<std::uint8_t>(std::min<int>(fb, q));
          break;
        }
      }
    }
    std::uint32_t boxed = 0;
    for (std::uint32_t a = start; a < end; ++a) boxed += first_sub_[group_rows_[a]] < subs;
    return boxed;
  }

  /// After group g's robots went through Box2D (step_batch): whether every robot moved on its
  /// free path until the sub-step it entered Box2D kept clear of the others' paths in Box2D,
  /// by their radii + kMissMargin at the start of each sub-step. A robot whose path did not
  /// enters Box2D at that sub-step, and the group goes again (false). Compares only this
  /// tick's paths: the same for any order of the robots and any thread count.
  bool check_group(const CorePhysicsWorld& w, std::uint32_t g, Scratch& scratch) {
    const std::uint32_t start = group_start_[g];
    const std::size_t r =
        static_cast<std::size_t>(region_of_[w.state.robot_engine()[group_rows_[start]]]);
    const int subs = settings_[r].sub_steps;
    const double ox = (regions_[r].min.x + regions_[r].max.x) / 2;  // as step_batch's
    const double oy = (regions_[r].min.y + regions_[r].max.y) / 2;
    std::vector<std::pair<std::uint32_t, std::uint32_t>>& near = scratch.near;
    near_pairs(w, g, r, near);
    // The sub-steps the robots entered at (those of this round's worlds) are read; the new
    // ones written after.
    std::vector<std::pair<std::uint32_t, int>>& lower = scratch.lower;
    lower.clear();
    for (const auto& [u, v] : near)
      for (const auto& [a, b] : {std::pair{u, v}, std::pair{v, u}}) {
        const int fa = first_sub_[group_rows_[a]], fb = first_sub_[group_rows_[b]];
        if (fb >= fa) continue;  // b in Box2D before a: a's free path against b's in Box2D
        const double gap =
            radius_of(w, group_rows_[a]) + radius_of(w, group_rows_[b]) + kMissMargin;
        const double* pa = &paths_[a * stride_];
        const b2Vec2* pb = &actual_[slot_[b] * stride_ / 2];
        for (int q = fb; q < fa && q < subs; ++q) {
          const double dx = pa[2 * q] - (ox + pb[q].x / kScale);
          const double dy = pa[2 * q + 1] - (oy + pb[q].y / kScale);
          if (dx * dx + dy * dy < gap * gap) {
            lower.emplace_back(a, q);
            break;
          }
        }
      }
    for (const auto& [a, q] : lower) {
      std::uint8_t& f = first_sub_[group_rows_[a]];
      f = static_cast<std::uint8_t>(std::min<int>(f, q));
    }
    // A group that went kMaxRounds - 1 times goes whole into Box2D from the first sub-step
    // (nothing is then left to check): a chain of robots pushed one into the next adds one
    // robot a round, which would make the rounds as many as its robots.
    if (!lower.empty() && rounds_ + 2 >= kMaxRounds)
      for (std::uint32_t p = start; p < group_start_[g + 1]; ++p) first_sub_[group_rows_[p]] = 0;
    return lower.empty();
  }

  /// Writes group g's tick to the columns: free paths, and what Box2D computed for the others.
  void commit_group(const CorePhysicsWorld& w, const Columns& c, std::uint32_t g) const {
    const std::uint32_t start = group_start_[g], end = group_start_[g + 1];
    const int subs =
        settings_[static_cast<std::size_t>(region_of_[w.state.robot_engine()[group_rows_[start]]])]
            .sub_steps;
    for (std::uint32_t p = start; p < end; ++p) {
      const std::uint32_t i = group_rows_[p];
      if (first_sub_[i] >= subs) {
        commit_free(w, c, i, motions_[p]);
        continue;
      }
      const BoxResult& b = results_[slot_[p]];
      c.realization[i] = b.realization;
      c.x[i] = b.end.x;
      c.y[i] = b.end.y;
      c.theta[i] = b.end.theta;
      c.vx[i] = b.end.vx;
      c.vy[i] = b.end.vy;
      c.omega[i] = b.end.omega;
      c.contact_count[i] = b.contacts;
      std::copy(b.angles, b.angles + kMaxContacts,
                &c.contact_angle[static_cast<std::size_t>(i) * kMaxContacts]);
    }
  }

  /// The obstacle segments that can touch region r's bodies (those within `margin` of it).
  const std::vector<std::uint32_t>& segments_near(const PhysicsWorld& w, std::size_t r,
                                                  double margin) {
    if (segment_margin_[r] >= margin) return segments_[r];
    const auto segs = w.obstacles();
    const EngineRegionInfo& g = regions_[r];
    segments_[r].clear();
    for (std::uint32_t s = 0; s < segs.size(); ++s) {
      const Segment& q = segs[s];
      if (std::max(q.a.x, q.b.x) < g.min.x - margin || std::min(q.a.x, q.b.x) > g.max.x + margin ||
          std::max(q.a.y, q.b.y) < g.min.y - margin || std::min(q.a.y, q.b.y) > g.max.y + margin)
        continue;
      segments_[r].push_back(s);
    }
    segment_margin_[r] = margin;
    return segments_[r];
  }

  /// Steps one batch of robots (fill_batches) in a Box2D world of its own: its robots and the
  /// obstacle segments near them. Records each robot's centre at the start of each sub-step it
  /// is in the world (for check_group) and its tick's end (for commit_group); writes no column.
  void step_batch(const CorePhysicsWorld& w, const Columns& c, const Batch& batch, double margin) {
    const std::size_t r = batch.region;
    const RegionSettings& s = settings_[r];
    const EngineRegionInfo& g = regions_[r];
    const double ox = (g.min.x + g.max.x) / 2, oy = (g.min.y + g.max.y) / 2;
    auto to_box = [&](double x, double y) {
      return b2Vec2(static_cast<float>((x - ox) * kScale), static_cast<float>((y - oy) * kScale));
    };
    const double *x = c.x, *y = c.y, *theta = c.theta, *vx = c.vx, *vy = c.vy, *omega = c.omega;
    const double *speed = c.speed, *turn = c.turn;

    b2World world(b2Vec2(0, 0));
    world.SetAllowSleeping(false);
    // No time-of-impact sub-stepping: a robot moves a fraction of its radius per sub-step (an
    // e-puck at full speed: 3 mm of its 35 mm at 4 sub-steps), so nothing tunnels.
    world.SetContinuousPhysics(false);
    // The static obstacles near the batch's robots, on the ground body.
    const std::vector<std::uint32_t>& rows = batch.rows;
    b2Body* ground = nullptr;
    {
      double lx = x[rows[0]], hx = lx, ly = y[rows[0]], hy = ly;
      for (std::uint32_t i : rows) {
        lx = std::min(lx, x[i]);
        hx = std::max(hx, x[i]);
        ly = std::min(ly, y[i]);
        hy = std::max(hy, y[i]);
      }
      b2BodyDef def;
      ground = world.CreateBody(&def);
      const auto segs = w.obstacles();
      for (std::uint32_t si : segments_[r]) {
        const Segment& q = segs[si];
        if (std::max(q.a.x, q.b.x) < lx - margin || std::min(q.a.x, q.b.x) > hx + margin ||
            std::max(q.a.y, q.b.y) < ly - margin || std::min(q.a.y, q.b.y) > hy + margin)
          continue;
        b2EdgeShape edge;
        edge.SetTwoSided(to_box(segs[si].a.x, segs[si].a.y), to_box(segs[si].b.x, segs[si].b.y));
        b2FixtureDef fd;
        fd.shape = &edge;
        fd.friction = s.obstacle_fixture_friction;
        ground->CreateFixture(&fd);
      }
    }
    // The robots, group by group, each in id order, each from the first sub-step at which
    // something may touch it (plan_group, check_group), before which it moves on its free path.
    std::vector<b2Body*> bodies(rows.size(), nullptr);
    std::vector<b2Body*> controls(rows.size(), nullptr);  ///< model "argos": the control bodies
    std::vector<double> commanded(rows.size());
    std::vector<BodyDrive> drives(rows.size());
    auto create = [&](std::size_t k, int sub) {
      const std::uint32_t i = rows[k];
      const FreeMotion f = sub == 0 ? FreeMotion{x[i], y[i], theta[i], vx[i], vy[i], omega[i]}
                                    : free_motion(w, c, i, nullptr, sub);
      const RobotKind& kind = w.model.kinds[w.state.robot_kind()[i]];
      drives[k] = body_drive(s, kind);
      b2BodyDef def;
      def.type = b2_dynamicBody;
      def.position = to_box(f.x, f.y);
      def.angle = static_cast<float>(f.theta);
      def.linearVelocity =
          b2Vec2(static_cast<float>(f.vx * kScale), static_cast<float>(f.vy * kScale));
      def.angularVelocity = static_cast<float>(f.omega);
      b2Body* body = world.CreateBody(&def);
      const double mass = drives[k].mass;
      b2CircleShape circle;
      b2PolygonShape box;
      b2FixtureDef fd;
      if (kind.shape == BodyShape::kBox) {
        const double hl = kind.length_m * kScale / 2, hw = kind.width_m * kScale / 2;
        box.SetAsBox(static_cast<float>(hl), static_cast<float>(hw));
        fd.shape = &box;
        fd.density = static_cast<float>(mass / (4 * hl * hw));
      } else {
        circle.m_radius = static_cast<float>(kind.radius_m * kScale);
        fd.shape = &circle;
        fd.density = static_cast<float>(mass / (kPi * circle.m_radius * circle.m_radius));
      }
      fd.friction = s.robot_fixture_friction;
      fd.restitution = 0;
      body->CreateFixture(&fd);
      bodies[k] = body;
      if (s.argos && !kind.passive) {
        // The velocity control: a kinematic body moving as the wheels say, and a motor joint
        // that drags the robot toward its velocity with at most max_force and max_torque. No
        // position correction: only velocities are constrained, as ARGoS's pivot and gear
        // joints with their correction disabled.
        b2BodyDef cdef;
        cdef.type = b2_kinematicBody;
        cdef.position = def.position;
        cdef.angle = def.angle;
        b2Body* control = world.CreateBody(&cdef);
        b2MotorJointDef joint;
        joint.bodyA = control;
        joint.bodyB = body;
        joint.linearOffset.SetZero();
        joint.angularOffset = 0;
        joint.correctionFactor = 0;
        joint.maxForce = static_cast<float>(drives[k].max_force * kScale);
        joint.maxTorque = static_cast<float>(drives[k].max_torque * kScale * kScale);
        world.CreateJoint(&joint);
        controls[k] = control;
      }
      if (kind.passive) {
        // The floor's friction, inside the solver: a push weaker than it moves nothing.
        b2FrictionJointDef joint;
        joint.Initialize(ground, body, body->GetWorldCenter());
        joint.maxForce = static_cast<float>(drives[k].max_force * kScale);
        joint.maxTorque = static_cast<float>(drives[k].max_torque * kScale * kScale);
        world.CreateJoint(&joint);
      }
      const double v = std::clamp(speed[i], -kind.max_speed_m_per_s, kind.max_speed_m_per_s);
      commanded[k] = std::abs(v) * w.dt_s;
    };
    // Sub-steps: the control bodies' velocities (model "argos") or the wheels' impulses (model
    // "fleetsim"), then Box2D's step.
    const double h = w.dt_s / s.sub_steps;
    for (int sub = 0; sub < s.sub_steps; ++sub) {
      for (std::size_t k = 0; k < rows.size(); ++k)
        if (first_sub_[rows[k]] == sub) create(k, sub);
      if (sub == 0 && !grip_pairs_.empty()) add_grip_joints(world, rows, bodies);
      for (std::size_t k = 0; k < rows.size(); ++k)  // the paths in Box2D, for check_group
        if (const b2Body* body = bodies[k])
          actual_[batch.at[k] * stride_ / 2 + static_cast<std::size_t>(sub)] = body->GetPosition();
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const std::uint32_t i = rows[k];
        b2Body* body = bodies[k];
        const KindInfo& kind = w.model.kinds[w.state.robot_kind()[i]];
        if (!body || kind.passive) continue;  // not yet in the world; held by its friction joint
        if (b2Body* control = controls[k]) {
          const double v =
              std::clamp(speed[i], -kind.max_speed_m_per_s, kind.max_speed_m_per_s) * kScale;
          const b2Rot& q = body->GetTransform().q;  // the heading's cosine and sine
          control->SetLinearVelocity(
              b2Vec2(static_cast<float>(v * q.c), static_cast<float>(v * q.s)));
          control->SetAngularVelocity(static_cast<float>(turn[i]));
          continue;
        }
        const double max_impulse = drives[k].max_force * kScale * h;
        const double max_angular = drives[k].max_torque * kScale * kScale * h;
        const double v =
            std::clamp(speed[i], -kind.max_speed_m_per_s, kind.max_speed_m_per_s) * kScale;
        const b2Rot& q = body->GetTransform().q;  // the heading's cosine and sine
        const b2Vec2 cur = body->GetLinearVelocity();
        double jx, jy;
        drive_impulse(body->GetMass(), v, q.c, q.s, cur.x, cur.y, max_impulse, jx, jy);
        body->ApplyLinearImpulseToCenter(b2Vec2(static_cast<float>(jx), static_cast<float>(jy)),
                                         true);
        double l = body->GetInertia() * (turn[i] - body->GetAngularVelocity());
        l = std::clamp(l, -max_angular, max_angular);
        body->ApplyAngularImpulse(static_cast<float>(l), true);
      }
      world.Step(static_cast<float>(h), s.velocity_iterations, s.position_iterations);
    }
    // The results, written to the columns once the group's paths are checked (commit_group):
    // pose, velocities, the collision sensor.
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t i = rows[k];
      const b2Body* body = bodies[k];
      BoxResult& out = results_[batch.at[k]];
      const b2Vec2 p = body->GetPosition();
      const double nx = ox + p.x / kScale, ny = oy + p.y / kScale;
      const double moved = std::sqrt((nx - x[i]) * (nx - x[i]) + (ny - y[i]) * (ny - y[i]));
      out.realization =
          commanded[k] > 0 ? static_cast<float>(std::min(1.0, moved / commanded[k])) : 1.0f;
      out.end.x = nx;
      out.end.y = ny;
      const double th = wrap_angle(body->GetAngle());
      out.end.theta = th;
      const b2Vec2 v = body->GetLinearVelocity();
      out.end.vx = v.x / kScale;
      out.end.vy = v.y / kScale;
      out.end.omega = body->GetAngularVelocity();
      constexpr int kCollect = 32;
      float found[kCollect];
      int count = 0;
      for (const b2ContactEdge* ce = body->GetContactList(); ce; ce = ce->next) {
        b2Contact* contact = ce->contact;
        if (!contact->IsTouching()) continue;
        b2WorldManifold wm;
        contact->GetWorldManifold(&wm);
        for (int q = 0; q < contact->GetManifold()->pointCount && count < kCollect; ++q)
          found[count++] = static_cast<float>(
              wrap_angle(bearing_atan2(wm.points[q].y - p.y, wm.points[q].x - p.x) - th));
      }
      std::sort(found, found + count);
      count = std::min(count, kMaxContacts);
      for (int q = 0; q < kMaxContacts; ++q) out.angles[q] = q < count ? found[q] : 0.0f;
      out.contacts = static_cast<std::uint8_t>(count);
    }
  }

  /// The joints of the grips among a batch's bodies (all made at the first sub-step): from the
  /// gripping robot's centre to the anchor on the held body, at the rest length, the two
  /// bodies still colliding (a Chipmunk constraint does not stop its bodies' contacts).
  void add_grip_joints(b2World& world, const std::vector<std::uint32_t>& rows,
                       const std::vector<b2Body*>& bodies) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t i = rows[k];
      if (!in_grip_[i] || held_[i] == 0) continue;
      const EntityId held = held_[i] - 1;
      std::size_t other = rows.size();
      for (std::size_t q = 0; q < rows.size(); ++q)
        if (state_ids_[rows[q]] == held) other = q;
      if (other == rows.size() || !bodies[k] || !bodies[other]) continue;
      const double* anchor = &anchor_[3 * std::size_t{i}];
      b2DistanceJointDef joint;
      joint.bodyA = bodies[k];
      joint.bodyB = bodies[other];
      joint.localAnchorA.SetZero();
      joint.localAnchorB =
          b2Vec2(static_cast<float>(anchor[0] * kScale), static_cast<float>(anchor[1] * kScale));
      joint.length = joint.minLength = joint.maxLength = static_cast<float>(anchor[2] * kScale);
      joint.collideConnected = true;
      world.CreateJoint(&joint);
    }
  }

  std::vector<EngineRegionInfo> regions_;
  std::vector<RegionSettings> settings_;
  std::vector<int> region_of_;  ///< engine index -> index in regions_, -1 if not this type's
  /// The fewest robots of a batch (but its last of a region): enough that a world's own cost
  /// (its allocators, the ground body) is small beside its bodies', few enough that its bodies
  /// stay in cache over the sub-steps. Changing it changes the bits.
  static constexpr std::size_t kBatchBodies = 64;
  /// How near (m) two robots' paths may come, beyond their radii (radius_of), before they may
  /// meet (plan_group, check_group): more than the difference between this double-precision
  /// integration and Box2D's single-precision one (micrometres over a tick). Changing it
  /// changes the bits.
  static constexpr double kMissMargin = 0.0005;
  static constexpr double kBoxSkin = 2 * b2_linearSlop / kScale;  ///< b2_polygonRadius, in m
  std::vector<double> reach_;  ///< per region: the farthest a body goes this tick
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> pairs_;  ///< per worker
  std::vector<std::uint32_t> parent_, group_, group_start_, group_rows_, fill_;
  std::vector<std::uint8_t> walled_;        ///< per robot row: near an obstacle segment
  std::vector<std::uint8_t> first_sub_;     ///< per robot row going to Box2D: its first sub-step
  std::vector<std::uint32_t> group_boxed_;  ///< per group: how many of its robots go to Box2D
  std::vector<Scratch> scratch_;            ///< per worker
  // Per place in group_rows_ (the robots of the groups, group by group):
  std::size_t stride_ = 0;           ///< 2 x the most sub-steps of a region
  std::vector<double> paths_;        ///< free path: centre (x, y) at each sub-step's start
  std::vector<FreeMotion> motions_;  ///< the free path's end
  std::vector<std::uint32_t> slot_;  ///< in Box2D: its place among this round's robots
  // Per robot in this round's Box2D worlds (slot_):
  /// centre at each sub-step's start from its first (Box2D's units and origin)
  std::vector<b2Vec2> actual_;
  std::vector<BoxResult> results_;      ///< the tick in Box2D
  std::vector<std::uint32_t> pending_;  ///< groups whose Box2D paths are not yet checked
  std::vector<std::uint8_t> passed_;    ///< per pending group: its check passed
  int rounds_ = 0;                      ///< rounds of Box2D worlds this tick, before this one
  /// The most rounds a tick's groups go through (check_group). Changing it changes the bits.
  static constexpr int kMaxRounds = 4;
  std::vector<int> open_;  ///< per region: its batch being filled, -1 if none
  std::vector<Batch> batches_;
  std::vector<std::uint8_t> free_;  ///< per robot row: moved without Box2D this tick
  // The grips of this tick (update_grips): none without the gripper in the run.
  /// Per robot row: gripping or held.
  std::vector<std::uint8_t> in_grip_;
  /// (gripper, held) rows.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> grip_pairs_;
  /// The `gripped` and `grip_anchor` columns, and the robots' ids.
  std::uint32_t* held_ = nullptr;
  double* anchor_ = nullptr;
  const EntityId* state_ids_ = nullptr;
  std::vector<std::vector<std::uint32_t>> segments_;
  std::vector<double> segment_margin_;
  ColumnHandle vx_ = kNoColumn, vy_ = kNoColumn, omega_ = kNoColumn;
  ColumnHandle x_ = kNoColumn, y_ = kNoColumn, theta_ = kNoColumn, speed_ = kNoColumn,
               turn_ = kNoColumn, realization_ = kNoColumn, contact_angle_ = kNoColumn,
               contact_count_ = kNoColumn;
};

}  // namespace

std::unique_ptr<PhysicsEngine> make_dynamics2d_engine() {
  return std::make_unique<Dynamics2d>();
}

}  // namespace fleetsim

// Box2D's profile timers, which fleetsim never reads (b2World::GetProfile), defined here as
// timers that read no clock. Box2D 2.4 times each step's phases and each island's solve with
// b2Timer, whose every construction, Reset and GetMilliseconds calls gettimeofday: six calls an
// island, and a robot touching nothing in its world is an island of its own (about a tenth of
// the CPU of `dynamics2d` at 100,000 robots, docs/benchmarks.md). libbox2d calls these through
// its procedure linkage table, so the program's definitions replace the library's (they are
// not reached from a program that links Box2D statically, where the linker would refuse two
// definitions: Debian ships the shared library only). Nothing the simulation computes reads a
// timer: the results are the same bits.
b2Timer::b2Timer() : m_start_sec(0), m_start_usec(0) {}
void b2Timer::Reset() {}
float b2Timer::GetMilliseconds() const {
  return 0.0f;
}
