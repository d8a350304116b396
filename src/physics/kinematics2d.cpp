#include "physics/kinematics2d.hpp"

#include <immintrin.h>

#include "core/cpu_features.hpp"
#include "core/det_math.hpp"
#include "core/lane_tables.hpp"
#include "physics/contact_gap.hpp"
#include "physics/physics_world.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fleetsim {

void SpatialIndex::init(const WorldModel& model, std::size_t robots_hint, double sensing_m,
                        std::optional<std::pair<Vec2, Vec2>> robots_area) {
  double rmax = model.max_radius_m();
  double dt = static_cast<double>(model.tick_period_ns) / kNanosPerSecond;
  double move = 0, range = sensing_m;
  for (const auto& k : model.kinds)
    if (k.in_run) move = std::max(move, k.max_speed_m_per_s * dt);
  // Longest interaction: two robots closing on each other within one tick, or a ray from one
  // robot's surface reaching another robot's far side.
  max_radius_m = rmax;
  uniform_radius = std::all_of(model.kinds.begin(), model.kinds.end(),
                               [&](const RobotKind& k) { return !k.in_run || k.radius_m == rmax; });
  contact_m = (2 * rmax + 2 * move + 4 * kSkin) * 1.001;
  // A candidate's reach (kinematics2d.cpp, `candidate`) adds the motions' L1 norms.
  border_m = (2 * rmax + 2 * std::sqrt(2.0) * move + 4 * kSkin) * 1.01;
  interaction_m = std::max(contact_m, (2 * rmax + range) * 1.001);
  // Cells as large as a contact, not as a sensor's reach: the contact loops then read ~3x
  // fewer robots than cells the size of the e-puck's rays would give them, and the rays read
  // the 9 to 25 smaller cells their reach touches, less area than a 3x3 block of larger ones.
  double cell = std::max(contact_m, 1e-3);
  Vec2 lo = model.arena_min(), hi = model.arena_max();
  // No kind in the run: no robot can ever exist (loop functions add robots of the run's kinds
  // only), so nothing queries the grids; one cell instead of millions of 1 mm ones.
  if (std::none_of(model.kinds.begin(), model.kinds.end(),
                   [](const RobotKind& k) { return k.in_run; }))
    cell = std::max({cell, model.arena_width_m, model.arena_height_m});
  // A sparse swarm gets larger cells (about a quarter of a robot's share of the arena): every
  // tick passes over all cells, and 1,000 robots in 40,000 interaction-sized cells spend their
  // time there. Results do not depend on the cell size (the collision sensor sorts its list).
  const Vec2 grid_lo = robots_area ? robots_area->first : lo;
  const Vec2 grid_hi = robots_area ? robots_area->second : hi;
  const double area = (grid_hi.x - grid_lo.x) * (grid_hi.y - grid_lo.y);
  double robot_cell =
      robots_hint > 0 ? 0.5 * std::sqrt(area / static_cast<double>(robots_hint)) : 0.0;
  std::vector<double> kind_radius;
  for (const auto& k : model.kinds) kind_radius.push_back(k.radius_m);
  robots.configure(grid_lo, grid_hi, std::max(cell, robot_cell), std::move(kind_radius));
  // The static obstacles keep cells as large as the longest interaction: each cell lists every
  // segment within `reach` of it, so smaller cells would list the same segments many times.
  double reach = std::max(rmax + move + 4 * kSkin, rmax + range) * 1.001;
  segments.build(model.segments, lo, hi, std::max(cell, interaction_m), reach);
}

void SpatialIndex::rebuild(const WorldModel& model, const WorldState& state, ThreadPool& pool) {
  robots.rebuild(state.x(), state.y(), state.robot_kind(), pool,
                 state.ids_in_order ? std::span<const EntityId>{} : state.robot_id());
}

namespace {

constexpr unsigned kGather = 64;  ///< round 0's candidates gathered without branches

// First t in [0, len] with |r0 + t v| < rs while approaching; -1 if none. (Always inlined:
// with the step compiled twice, the compiler otherwise calls it from the contact rounds.)
[[gnu::always_inline]] inline double first_contact_linear(Vec2 r0, Vec2 v, double rs, double len) {
  double c = dot(r0, r0) - rs * rs;
  double b = dot(r0, v);
  if (c <= 0) return b < 0 ? 0.0 : -1.0;
  if (b >= 0) return -1.0;
  double a = dot(v, v);
  double disc = b * b - a * c;
  if (disc < 0) return -1.0;
  double t = (-b - std::sqrt(disc)) / a;
  if (t < 0) t = 0;
  return t <= len ? t : -1.0;
}

// pair_contact_time's body, inlined into the contact rounds (a call per pair cost ~2 % of the
// step).
[[gnu::always_inline]] inline double contact_time(Vec2 pi, Vec2 di, double fi, Vec2 pj, Vec2 dj,
                                                  double fj, double r_sum) {
  double rs = r_sum + kStopGap;
  Vec2 r0 = pj - pi;
  double m = std::min(fi, fj);
  Vec2 v = dj - di;
  double t = first_contact_linear(r0, v, rs, m);
  if (t >= 0) return t;
  double big = std::max(fi, fj);
  if (big <= m) return 2.0;
  // Afterwards only the robot with the larger f moves.
  Vec2 rm = r0 + v * m;
  Vec2 v2 = fi > fj ? Vec2{-di.x, -di.y} : dj;
  t = first_contact_linear(rm, v2, rs, big - m);
  return t >= 0 ? m + t : 2.0;
}

}  // namespace

double pair_contact_time(Vec2 pi, Vec2 di, double fi, Vec2 pj, Vec2 dj, double fj, double r_sum) {
  return contact_time(pi, di, fi, pj, dj, fj, r_sum);
}

double segment_contact_time(Vec2 p, Vec2 d, double r, const Segment& s, double limit) {
  double rs = r + kStopGap;
  double best = limit;
  // Endpoints as circles.
  for (Vec2 c : {s.a, s.b}) {
    double t = first_contact_linear(c - p, Vec2{-d.x, -d.y}, rs, best);
    if (t >= 0 && t < best) best = t;
  }
  // The segment's interior: signed distance to its line.
  Vec2 e = s.b - s.a;
  double len = length(e);
  if (len > 0) {
    Vec2 n{-e.y / len, e.x / len};
    double s0 = dot(p - s.a, n);  // signed distance at t = 0
    double sv = dot(d, n);        // its rate
    auto along_ok = [&](double t) {
      double u = dot(p + d * t - s.a, e) / (len * len);
      return u >= 0 && u <= 1;
    };
    if (std::abs(s0) < rs) {
      // Already within reach of the line: contact now if inside the strip and approaching.
      if (along_ok(0) && s0 * sv < 0) best = 0;
    } else if (s0 * sv < 0) {
      double t = (std::abs(s0) - rs) / std::abs(sv);
      if (t >= 0 && t < best && along_ok(t)) best = t;
    }
  }
  return best;
}

namespace {

/// Round 0's candidate test (KinematicsEngine::step, `candidate`) for AVX2, four slots at a
/// time, when every robot has the same radius and one engine moves them all: the same double
/// operations in the same order, so the same list. `base` = (r + r) + 4 kSkin, `mi` = slot
/// s's |dx| + |dy|; the motions are M (float, or double in a DEECo run). Appends the candidates
/// among the runs' slots to `found` (room for `cap`) and returns their count, or `cap` when there
/// may be more than cap - 4 (the caller then scans again, as for a full list).
template <class M>
[[gnu::target("avx2")]] [[gnu::noinline]] unsigned gather_candidates_avx2(
    const double* gx, const double* gy, const M* dx, const M* dy, const std::uint32_t* rb,
    const std::uint32_t* re, int runs, std::uint32_t slots, std::uint32_t s, double base, double mi,
    std::uint32_t* found, unsigned cap) {
  const __m256d px = _mm256_set1_pd(gx[s]), py = _mm256_set1_pd(gy[s]);
  const __m256d vbase = _mm256_set1_pd(base), vmi = _mm256_set1_pd(mi);
  const __m256d margin = _mm256_set1_pd(1.000001);
  const __m256d sign = _mm256_set1_pd(-0.0);
  unsigned k = 0;
  for (int run = 0; run < runs; ++run) {
    for (std::uint32_t t = rb[run]; t < re[run]; t += 4) {
      if (k > cap - 4) return cap;
      const std::uint32_t width = std::min(4u, re[run] - t);
      __m256d x, y, mx, my;  // (the motions in double)
      if (t + 4 <= slots) {  // (lanes past the run read its neighbours: their bits are cleared)
        x = _mm256_loadu_pd(gx + t);
        y = _mm256_loadu_pd(gy + t);
        if constexpr (std::is_same_v<M, float>) {
          mx = _mm256_cvtps_pd(_mm_loadu_ps(dx + t));
          my = _mm256_cvtps_pd(_mm_loadu_ps(dy + t));
        } else {
          mx = _mm256_loadu_pd(dx + t);
          my = _mm256_loadu_pd(dy + t);
        }
      } else {  // the array's last slots: the lanes past its end are not read
        const __m256i mask =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes::kFirst64[width]));
        const __m128i mask32 =
            _mm_load_si128(reinterpret_cast<const __m128i*>(lanes::kFirst32[width]));
        x = _mm256_maskload_pd(gx + t, mask);
        y = _mm256_maskload_pd(gy + t, mask);
        if constexpr (std::is_same_v<M, float>) {
          mx = _mm256_cvtps_pd(_mm_maskload_ps(dx + t, mask32));
          my = _mm256_cvtps_pd(_mm_maskload_ps(dy + t, mask32));
        } else {
          mx = _mm256_maskload_pd(dx + t, mask);
          my = _mm256_maskload_pd(dy + t, mask);
        }
      }
      const __m256d ex = _mm256_sub_pd(x, px), ey = _mm256_sub_pd(y, py);
      const __m256d d2 = _mm256_add_pd(_mm256_mul_pd(ex, ex), _mm256_mul_pd(ey, ey));
      const __m256d mt = _mm256_add_pd(_mm256_andnot_pd(sign, mx), _mm256_andnot_pd(sign, my));
      const __m256d reach = _mm256_mul_pd(_mm256_add_pd(vbase, _mm256_add_pd(vmi, mt)), margin);
      const __m256d in = _mm256_cmp_pd(d2, _mm256_mul_pd(reach, reach), _CMP_LE_OQ);
      unsigned bits = static_cast<unsigned>(_mm256_movemask_pd(in)) & ((1u << width) - 1);
      if (s - t < width) bits &= ~(1u << (s - t));
      const __m128i lane_slots =
          _mm_add_epi32(_mm_set1_epi32(static_cast<int>(t)), _mm_setr_epi32(0, 1, 2, 3));
      const __m128i pack = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes::kPack[bits]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(found + k),
                       _mm_castps_si128(_mm_permutevar_ps(_mm_castsi128_ps(lane_slots), pack)));
      k += lanes::kCount[bits];
    }
  }
  return k;
}

/// The float next to a finite non-zero f, toward zero (std::nextafter, without its call).
inline float next_toward_zero(float f) {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) - 1u);
}

/// v rounded to a float no greater than v (v >= 0): a fraction of motion allowed.
inline float round_down(double v) {
  const float f = static_cast<float>(v);
  return static_cast<double>(f) > v ? next_toward_zero(f) : f;
}

/// v rounded to a float toward zero: a component of the commanded motion (so a robot never
/// goes faster than commanded).
inline float toward_zero(double v) {
  const float f = static_cast<float>(v);
  // Without a branch: it goes either way at random (a branch cost 5 % of the step).
  const auto away = static_cast<std::uint32_t>(std::abs(static_cast<double>(f)) > std::abs(v));
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) - away);
}

/// A motion or fraction v in the step's type M: rounded to float by `to_float` (round_down or
/// toward_zero), or in double v itself, except that a fraction below 1 is `lowered` (to no less
/// than 0): a body that stops on contact then stops short of it by more than the rounding of
/// its end position, as a float's rounding down does (else the next tick could find it a
/// rounding inside its stop distance, and moving along a wall it touches, blocked at once).
template <class M>
inline M as_motion(double v, float (*to_float)(double), double lowered = 0) {
  if constexpr (std::is_same_v<M, double>)
    return v < 1 && lowered > 0 ? std::max(v - lowered, 0.0) : v;
  else
    return to_float(v);
}

/// How much a double fraction limited by a contact is lowered (2^-40: 1e-12 of the motion).
constexpr double kFractionMargin = 0x1p-40;

}  // namespace

bool kinematics_in_double(const WorldModel& model) {
  return std::any_of(model.kinds.begin(), model.kinds.end(), [](const RobotKind& k) {
    return k.in_run && std::any_of(k.actuators.begin(), k.actuators.end(),
                                   [](const PartDecl& a) { return a.type == "deeco_wheels"; });
  });
}

namespace {
struct Here {};  ///< (KinematicsEngine::step_as: its instantiations are this file's)
}  // namespace

void KinematicsEngine::step(const WorldModel& model, WorldState& state, const SpatialIndex& index,
                            ThreadPool& pool, const std::vector<std::uint8_t>* owned,
                            const ContactBorders* split) {
  if (kinematics_in_double(model))
    step_as<double, Here>(motion64_, model, state, index, pool, owned, split);
  else
    step_as<float, Here>(motion32_, model, state, index, pool, owned, split);
}

template <class M, class Here>
void KinematicsEngine::step_as(Motion<M>& mv, const WorldModel& model, WorldState& state,
                               const SpatialIndex& index, ThreadPool& pool,
                               const std::vector<std::uint8_t>* owned,
                               const ContactBorders* split) {
  const std::size_t n = state.robot_count();
  const double dt = static_cast<double>(model.tick_period_ns) / kNanosPerSecond;
  const RobotGrid& grid = index.robots;
  const double* gx = grid.sorted_x().data();
  const double* gy = grid.sorted_y().data();
  const SlotRadius gr = grid.sorted_r();
  const std::uint32_t* order = grid.order().data();
  const auto& segs = index.segments.segments();
  const std::uint16_t* kind = state.robot_kind().data();
  const double* speed_cmd = state.speed_cmd().data();
  const double* turn_cmd = state.turn_cmd().data();
  double* theta = state.theta().data();
  double* x = state.x().data();
  double* y = state.y().data();
  float* realization = state.realization().data();
  std::uint8_t* robot_engine = state.robot_engine().data();
  float* contact_angle = state.contact_angle().data();
  std::uint8_t* contact_count = state.contact_count().data();
  const std::size_t chunks = (n + (std::size_t{1} << kChunkBits) - 1) >> kChunkBits;
  mv.dx.resize(n);
  mv.dy.resize(n);
  mv.f.resize(n);
  mv.f_next.resize(n);
  // One engine, moving every robot: no engine per slot (they are all 0), engine_[s & emask]
  // reads the one entry. Several engines: step 1 writes every slot's, and there may be no
  // slot at all (regions without robots: issue #33).
  const bool one_engine = model.engines.size() == 1 && (!owned || (*owned)[0]);
  const std::size_t emask = one_engine ? 0 : ~std::size_t{0};
  engine_.resize(one_engine ? 1 : n);
  if (one_engine) engine_[0] = 0;
  cand_count_.resize(n);
  cand_.resize(chunks);
  const std::size_t kGrain = 1024;
  // Robots of engines another process moves: skipped everywhere below (they never meet ours:
  // robots of different engines do not collide).
  const std::uint8_t* own = owned ? owned->data() : nullptr;
  auto mine = [&](std::uint8_t engine) { return !own || own[engine]; };
  // A run split over domains: this process moves the robots its domain holds (`mover`); the
  // others' robots near its border are ghosts (ghost_), whose motion and fractions arrive in
  // the rounds (border_round).
  const std::int16_t* mover = split ? split->mover : nullptr;
  const int me = split ? split->process : 0;
  auto moved = [&](std::size_t s) {
    return mine(engine_[s & emask]) && (!mover || mover[order[s]] == me);
  };
  auto ghost = [&](std::size_t s) { return split && ghost_[s]; };
  // A fraction's sign bit says that it changed in the last round (see step 2): its value is
  // its magnitude.
  auto frac = [&](std::size_t s) { return std::fabs(mv.f[s]); };
  auto changed = [&](std::size_t s) { return std::signbit(mv.f[s]); };
  // A slot's position at the end of the tick (the same expression wherever it is needed, so
  // the same bits: f * d of two floats is exact in double; of two doubles, in a DEECo run,
  // rounded, by the same expression everywhere).
  auto end_x = [&](std::size_t s) { return gx[s] + double{frac(s)} * double{mv.dx[s]}; };
  auto end_y = [&](std::size_t s) { return gy[s] + double{frac(s)} * double{mv.dy[s]}; };
  // A chunk's slots in order, each with its candidates: the lists are packed in slot order.
  auto for_each_slot = [&](std::size_t c, auto&& f) {
    const std::int16_t* base = cand_[c].data();
    const std::size_t size = cand_[c].size();
    std::size_t at = 0;
    const std::size_t e = std::min(n, (c + 1) << kChunkBits);
    for (std::size_t s = c << kChunkBits; s < e; ++s) {
      // (In round 0 the lists are being gathered, into a new list: `list` is not read.)
      f(s, base + std::min(at, size));
      const std::uint8_t count = cand_count_[s];
      at += count != kOverflow ? count : 0;
    }
  };

  // Everything below runs in slot order (the grid's cell order): a robot's neighbours sit next
  // to it in the slot arrays, so the pair loops stream through memory instead of jumping
  // through robot indices. Per-robot results are scattered back to the columns once.

  // 1. Commanded motion (clamped), the static obstacles' limit on it, and the new heading. The
  // mid-tick headings' sines and cosines are taken per block of slots, four at a time with
  // AVX2 (det_sincos_avx2: the same bits as det_sincos).
  const bool avx2 = simd_path() == SimdPath::kAvx2;
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
    constexpr std::size_t kBlock = 256;
    double mid[kBlock], sm[kBlock], cm[kBlock];
    for (std::size_t b0 = b; b0 < e; b0 += kBlock) {
      const std::size_t m = std::min(e - b0, kBlock);
      for (std::size_t j = 0; j < m; ++j) {
        const std::uint32_t i = order[b0 + j];
        mid[j] = theta[i] + turn_cmd[i] * dt / 2;
      }
      if (avx2) {
        det_sincos_avx2(mid, sm, cm, m);
      } else {
        for (std::size_t j = 0; j < m; ++j) det_sincos(mid[j], sm[j], cm[j]);
      }
      for (std::size_t j = 0; j < m; ++j) {
        const std::size_t s = b0 + j;
        const std::uint32_t i = order[s];
        if (emask) engine_[s] = robot_engine[i];
        if (!moved(s)) {
          mv.dx[s] = mv.dy[s] = 0;
          mv.f[s] = 1;
          continue;
        }
        const RobotKind& k = model.kinds[kind[i]];
        // The locomotion actuator turned its commands into a body velocity in the act phase.
        const double v = std::clamp(speed_cmd[i], -k.max_speed_m_per_s, k.max_speed_m_per_s);
        theta[i] = wrap_angle(theta[i] + turn_cmd[i] * dt);
        mv.dx[s] = as_motion<M>(v * dt * cm[j], toward_zero);
        mv.dy[s] = as_motion<M>(v * dt * sm[j], toward_zero);
        const Vec2 d{mv.dx[s], mv.dy[s]};
        double f = 1.0;
        if (d.x != 0 || d.y != 0) {
          Vec2 p{gx[s], gy[s]};
          for (std::uint32_t si : index.segments.near(p))
            f = segment_contact_time(p, d, k.radius_m, segs[si], f);
        }
        mv.f[s] = as_motion<M>(f, round_down, kFractionMargin);
      }
    }
  });
  // This process's robots that others read (in slot order), and the ghosts' motions.
  std::vector<std::uint32_t> shared_slots, sends;
  if (split) {
    ghost_.assign(n, 0);
    slot_of_.resize(n);
    pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
      for (std::size_t s = b; s < e; ++s) slot_of_[order[s]] = static_cast<std::uint32_t>(s);
    });
    for (std::uint32_t row : split->shared_rows)
      if (moved(slot_of_[row])) shared_slots.push_back(slot_of_[row]);
    border_round(mv, *split, shared_slots, mv.f, true, 0, index.border_m, order, n, 0);
  }

  // 2. Robot-robot contacts: Jacobi rounds until no f changes. Round 0 scans the 3x3 cells of
  // every robot and keeps, in slot order, its candidates: same-engine robots whose path may
  // come within touching distance of its own during the tick (up to kCandidates of them; a
  // robot with more scans its cells again when needed). A later round recomputes a pair only
  // when one of its two robots changed in the round before. While many robots change, a round
  // passes over every slot, shared by chunks of slots (each chunk keeping its slots' candidates
  // in one list); once few do (in a jam, ~27 % after round 0, 1.5 % after round 1, 0.07 %
  // after round 2), a round visits only the robots that changed and their candidates, on one
  // thread (sparse rounds). Both compute the same thing: a robot's new fraction from the last
  // round's fractions, recomputing the pairs with a changed robot.
  //
  // Whether t is a candidate of s: touching at the end (contacts, step 4) or on the way
  // (rounds) needs this reach; the margin covers rounding (a spare candidate changes nothing).
  // Symmetric bit for bit (t is a candidate of s exactly when s is one of t: each sum's terms
  // are the same either way), which the sparse rounds need to find the robots next to a
  // change. Selects only, so round 0's gather below runs it without branches. `ri`, `mi`,
  // `eng`: s's radius, motion (|dx| + |dy|) and engine.
  auto motion_l1 = [&](std::size_t s) {
    return std::abs(double{mv.dx[s]}) + std::abs(double{mv.dy[s]});
  };
  auto candidate = [&](std::size_t s, double ri, double mi, std::uint8_t eng, std::uint32_t t) {
    const double ex = gx[t] - gx[s], ey = gy[t] - gy[s];
    const double reach = ((ri + gr[t]) + 4 * kSkin + (mi + motion_l1(t))) * 1.000001;
    return (ex * ex + ey * ey <= reach * reach) & (t != s) & (engine_[t & emask] == eng);
  };
  // Calls f(t) for every candidate t of slot s, whose list (if it has one) is `list`.
  auto for_each_candidate = [&](std::size_t s, const std::int16_t* list, auto&& f)
      __attribute__((always_inline)) {
    const std::uint8_t count = cand_count_[s];
    if (count != kOverflow) {
      for (unsigned k = 0; k < count; ++k)
        f(static_cast<std::uint32_t>(static_cast<std::int64_t>(s) + list[k]));
      return;
    }
    const double ri = gr[s], mi = motion_l1(s);
    const std::uint8_t eng = engine_[s & emask];
    grid.for_each_near(Vec2{gx[s], gy[s]}, [&](std::uint32_t t) {
      if (candidate(s, ri, mi, eng, t)) f(t);
    });
  };
  // The first contact of slot s against its candidates given the last round's fractions
  // (only pairs with a robot that changed in it), or its own fraction if none comes sooner.
  auto relax = [&](std::size_t s, const std::int16_t* list) {
    const double fi = frac(s);
    double best = fi;
    if (cand_count_[s] == 0) return best;
    const Vec2 pi{gx[s], gy[s]};
    const Vec2 di{mv.dx[s], mv.dy[s]};
    const double ri = gr[s];
    const bool near_change = changed(s);
    for_each_candidate(
        s, list, [&](std::uint32_t t) __attribute__((always_inline)) {
          if (!near_change && !changed(t)) return;
          const double tc = contact_time(pi, di, fi, Vec2{gx[t], gy[t]}, Vec2{mv.dx[t], mv.dy[t]},
                                         frac(t), ri + gr[t]);
          if (tc < best) best = tc;
        });
    return best;
  };
  // Round 0's candidates four at a time (gather_candidates_avx2), when it applies.
  const bool wide = emask == 0 && index.uniform_radius && simd_path() == SimdPath::kAvx2;
  // The robots a dense round changed, per worker, kept while few enough for a sparse round.
  const std::size_t sparse_max = sparse_below_ == kSparseAuto ? n / 32 : sparse_below_;
  changed_by_worker_.resize(static_cast<std::size_t>(pool.size()));
  group_at_.resize((n + kGroup - 1) / kGroup);
  int round = 0;
  std::size_t changed_count = 0;
  while (true) {
    std::atomic<std::size_t> changes{0};
    for (auto& list : changed_by_worker_) list.clear();
    pool.parallel_for(chunks, 1, [&](std::size_t cb, std::size_t ce, int worker) {
      std::size_t local_changes = 0;
      auto& changed_here = changed_by_worker_[static_cast<std::size_t>(worker)];
      for (std::size_t c = cb; c < ce; ++c) {
        // Round 0 gathers the chunk's candidates here, then keeps them in a list of exactly
        // their size (lists that grew by doubling left a third of their room unused).
        std::int16_t gathered[kCandidates << kChunkBits];
        std::size_t used = 0;
        // (A slot of the round; always inlined, as the compiler did when the step was one
        // function.)
        auto slot_round = [&](std::size_t s, const std::int16_t* list)
            __attribute__((always_inline)) {
          const double fi = frac(s);
          mv.f_next[s] = frac(s);
          double best = fi;
          // Where a group of slots' lists starts in its chunk's (the sparse rounds' index).
          if (round == 0 && s % kGroup == 0)
            group_at_[s / kGroup] = static_cast<std::uint16_t>(used);
          if (round > 0) {
            best = relax(s, list);
          } else if (!moved(s) && !ghost(s)) {
            cand_count_[s] = 0;
          } else {
            const Vec2 pi{gx[s], gy[s]};
            const Vec2 di{mv.dx[s], mv.dy[s]};
            const double ri = gr[s];
            const double mi = motion_l1(s);
            const std::uint8_t eng = engine_[s & emask];
            auto pair = [&](std::uint32_t t) {
              double tc = contact_time(pi, di, fi, Vec2{gx[t], gy[t]}, Vec2{mv.dx[t], mv.dy[t]},
                                       frac(t), ri + gr[t]);
              if (tc < best) best = tc;
            };
            // The candidate test without branches: every robot of the 3x3 block is written at
            // the end of `found`, which grows only when the robot is a candidate (a block with
            // more candidates than `found` holds, which non-overlapping robots never make,
            // takes the cells again with a branch).
            std::uint32_t found[kGather + 1];
            unsigned k = 0;
            std::uint32_t rb[3], re[3];
            const int runs = grid.near_runs(pi, rb, re);
            if (wide) {
              k = gather_candidates_avx2(
                  gx, gy, mv.dx.data(), mv.dy.data(), rb, re, runs, static_cast<std::uint32_t>(n),
                  static_cast<std::uint32_t>(s), (ri + ri) + 4 * kSkin, mi, found, kGather);
            } else {
              for (int run = 0; run < runs && k < kGather; ++run) {
                for (std::uint32_t t = rb[run]; t < re[run] && k < kGather; ++t) {
                  found[k] = t;
                  k += candidate(s, ri, mi, eng, t);
                }
              }
            }
            if (k < kGather) {
              for (unsigned j = 0; j < k; ++j) pair(found[j]);
            } else {
              k = 0;
              grid.for_each_near(pi, [&](std::uint32_t t) {
                if (!candidate(s, ri, mi, eng, t)) return;
                found[k < kGather ? k : kGather] = t;
                ++k;
                pair(t);
              });
            }
            // Stored as offsets from s (a 3x3 block of cells spans far fewer than 32,768
            // slots at any density robots can have without overlapping; a list that does not
            // fit is an overflow, which rescans: slower, the same result).
            bool fits = k <= kCandidates;
            for (unsigned j = 0; j < k && fits; ++j) {
              const std::int64_t off = std::int64_t{found[j]} - static_cast<std::int64_t>(s);
              fits = off >= INT16_MIN && off <= INT16_MAX;
            }
            cand_count_[s] = static_cast<std::uint8_t>(fits ? k : kOverflow);
            if (fits)
              for (unsigned j = 0; j < k; ++j)
                gathered[used++] = static_cast<std::int16_t>(std::int64_t{found[j]} -
                                                             static_cast<std::int64_t>(s));
          }
          if (best < fi && !ghost(s)) {  // (a ghost's fraction comes from its process)
            mv.f_next[s] = -as_motion<M>(
                best, round_down, kFractionMargin);  // < fi: best < fi, and fi is an M; changed
            ++local_changes;
            if (changed_here.size() < sparse_max)
              changed_here.push_back(static_cast<std::uint32_t>(s));
          }
        };
        for_each_slot(c, slot_round);
        if (round == 0) cand_[c].assign(gathered, gathered + used);
      }
      changes.fetch_add(local_changes, std::memory_order_relaxed);
    });
    changed_count = changes.load();
    if (split) {  // every process's changes: the same decisions everywhere
      sends.clear();
      for (std::uint32_t s : shared_slots)
        if (std::signbit(mv.f_next[s])) sends.push_back(s);
      changed_count = border_round(mv, *split, sends, mv.f_next, false, changed_count,
                                   index.border_m, order, n, round + 1);
    }
    ++round;
    // A robot needs another look when it or a neighbour changed: the new fractions that
    // changed carry their sign bit (no pass over every robot to mark them, no byte a robot).
    std::swap(mv.f, mv.f_next);
    if (changed_count == 0 || changed_count <= sparse_max) break;
    if (round > kMaxRounds) {
      // Pathological chains: stop everyone still changing (still order independent).
      pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
        for (std::size_t s = b; s < e; ++s)
          if (changed(s)) mv.f[s] = -M{0};  // (still marked as changed)
      });
    }
  }
  if (changed_count > 0) {
    // Sparse rounds: the robots that changed, and their candidates (the same as a dense round
    // would recompute: a robot whose candidates all kept their fractions computes nothing new).
    std::vector<std::uint32_t>& now = sparse_changed_;
    now.clear();
    for (const auto& list : changed_by_worker_) now.insert(now.end(), list.begin(), list.end());
    if (split) now.insert(now.end(), ghost_changed_.begin(), ghost_changed_.end());
    queued_.assign((n + 63) / 64, 0);
    auto list_of = [&](std::size_t s) {
      // The group's start in its chunk's list, then the counts of the group's slots before s.
      std::size_t at = group_at_[s / kGroup];
      for (std::size_t u = s - s % kGroup; u < s; ++u)
        at += cand_count_[u] != kOverflow ? cand_count_[u] : 0;
      return cand_[s >> kChunkBits].data() + at;
    };
    // Split: every process makes the rounds until none changed anything.
    std::uint64_t changing = changed_count;
    while (split ? changing > 0 : !now.empty()) {
      if (round > kMaxRounds)
        for (std::uint32_t s : now) mv.f[s] = -M{0};  // pathological chains, as above
      work_.clear();
      auto queue = [&](std::uint32_t t) {
        std::uint64_t& word = queued_[t / 64];
        const std::uint64_t bit = std::uint64_t{1} << (t % 64);
        if (word & bit) return;
        word |= bit;
        work_.push_back(t);
      };
      for (std::uint32_t s : now) {
        queue(s);
        if (cand_count_[s] != 0) for_each_candidate(s, list_of(s), queue);
      }
      mv.updates.clear();
      for (std::uint32_t s : work_) {
        queued_[s / 64] = 0;
        if (ghost(s)) continue;
        const double best = relax(s, list_of(s));
        if (best < frac(s))
          mv.updates.push_back({s, -as_motion<M>(best, round_down, kFractionMargin)});
      }
      for (std::uint32_t s : now) mv.f[s] = frac(s);  // no longer changed
      now.clear();
      for (const auto& [s, f] : mv.updates) {
        mv.f[s] = f;
        now.push_back(s);
      }
      if (split) {
        sends.clear();
        for (std::uint32_t s : now)
          if (split->shared[order[s]]) sends.push_back(s);
        changing = border_round(mv, *split, sends, mv.f, false, now.size(), index.border_m, order,
                                n, round + 1);
        now.insert(now.end(), ghost_changed_.begin(), ghost_changed_.end());
      }
      ++round;
    }
  }
  last_rounds_ = round;

  // 3. Move, and the collision sensor: contacts at the final positions (recomputed from the
  // slot arrays, here and for the neighbours: no copy in slot order). Robots moved less than
  // a cell since the grid was built, so its 3x3 blocks still hold every touching pair.
  pool.parallel_for(chunks, 1, [&](std::size_t cb, std::size_t ce, int) {
    for (std::size_t c = cb; c < ce; ++c)
      for_each_slot(c, [&](std::size_t s, const std::int16_t* list) {
        const std::uint32_t i = order[s];
        if (!moved(s)) return;
        const Vec2 p{end_x(s), end_y(s)};
        realization[i] = (mv.dx[s] == 0 && mv.dy[s] == 0) ? 1.0f : static_cast<float>(frac(s));
        x[i] = p.x;
        y[i] = p.y;
        double ri = gr[s];
        double th = theta[i];
        // Every contact is collected, then sorted by angle and the first kMaxContacts kept: the
        // sensor's output is a function of the geometry, not of the order neighbours are visited.
        constexpr int kCollect = 32;
        float found[kCollect];
        int count = 0;
        float* angles = &contact_angle[static_cast<std::size_t>(i) * kMaxContacts];
        auto add = [&](Vec2 at) {
          if (count < kCollect)
            found[count++] =
                static_cast<float>(wrap_angle(bearing_atan2(at.y - p.y, at.x - p.x) - th));
        };
        const double touch = 4 * kSkin;
        // A wall point is one contact however many segments end there (a corner of the
        // bitmap's obstacles is the end of two edges), as the DEECo playground counts it.
        // (Plain doubles, not Vec2s: an array of Vec2 is zeroed, 512 bytes a robot a tick, for
        // the few robots near a wall.)
        double wall_x[kCollect], wall_y[kCollect];
        int wall_count = 0;
        for (std::uint32_t si : index.segments.near(p)) {
          Vec2 closest;
          if (distance_to_segment(p, segs[si], &closest) > ri + touch) continue;
          bool seen = false;
          for (int w = 0; w < wall_count; ++w)
            seen |= wall_x[w] == closest.x && wall_y[w] == closest.y;
          if (seen) continue;
          if (wall_count < kCollect) {
            wall_x[wall_count] = closest.x;
            wall_y[wall_count++] = closest.y;
          }
          add(closest);
        }
        // Robots touching at the end are among the candidates of round 0 (same slot order).
        auto touching = [&](std::uint32_t t) {
          Vec2 pj{end_x(t), end_y(t)};
          double rs = ri + gr[t] + touch;
          Vec2 rel = pj - p;
          if (dot(rel, rel) <= rs * rs) add(p + rel * (ri / (ri + gr[t])));
        };
        const std::uint8_t cc = cand_count_[s];
        if (cc != kOverflow) {
          for (unsigned k = 0; k < cc; ++k)
            touching(static_cast<std::uint32_t>(static_cast<std::int64_t>(s) + list[k]));
        } else {
          std::uint8_t eng = engine_[s & emask];
          grid.for_each_near(Vec2{gx[s], gy[s]}, [&](std::uint32_t t) {
            if (t != s && engine_[t & emask] == eng) touching(t);
          });
        }
        // By angle: an insertion sort for the few contacts a robot has (std::sort's own for up
        // to 16, so the same order of equal angles, -0 and +0), std::sort beyond.
        if (count <= 16) {
          for (int a = 1; a < count; ++a) {
            const float v = found[a];
            int b = a;
            for (; b > 0 && v < found[b - 1]; --b) found[b] = found[b - 1];
            found[b] = v;
          }
        } else {
          std::sort(found, found + count);
        }
        count = std::min(count, kMaxContacts);
        for (int k = 0; k < count; ++k) angles[k] = found[k];
        contact_count[i] = static_cast<std::uint8_t>(count);
        for (int k = count; k < kMaxContacts; ++k) angles[k] = 0;
      });
  });
}

template <class M>
std::uint64_t KinematicsEngine::border_round(Motion<M>& mv, const ContactBorders& b,
                                             const std::vector<std::uint32_t>& slots,
                                             std::vector<M>& f, bool motion, std::uint64_t changes,
                                             double reach, const std::uint32_t* order,
                                             std::size_t n, int round) {
  // 'B' u32 round, u64 changes, u32 k, k x (u32 robot id, [M dx, M dy,] M fraction);
  // little-endian; M is f32, or f64 in a run whose motions are doubles (kinematics_in_double)
  // (docs/distributed.md, "Contact rounds"). Routed: the kind, round and
  // changes to every process, the count and robots to each process they are near.
  std::vector<std::uint8_t> head;
  auto put = [](std::vector<std::uint8_t>& out, const void* v, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(v);
    out.insert(out.end(), p, p + size);
  };
  auto put_robots = [&](std::vector<std::uint8_t>& out, std::span<const std::uint32_t> list) {
    const auto k = static_cast<std::uint32_t>(list.size());
    out.reserve(out.size() + 4 + list.size() * (4 + (motion ? 3 : 1) * sizeof(M)));
    put(out, &k, 4);
    for (std::uint32_t s : list) {
      const EntityId id = b.ids[order[s]];  // (slots are this process's grid's)
      const M v = std::fabs(f[s]);
      put(out, &id, 4);
      if (motion) {
        put(out, &mv.dx[s], sizeof(M));
        put(out, &mv.dy[s], sizeof(M));
      }
      put(out, &v, sizeof(M));
    }
  };
  const std::uint8_t kind = 'B';
  const auto r32 = static_cast<std::uint32_t>(round);
  put(head, &kind, 1);
  put(head, &r32, 4);
  put(head, &changes, 8);
  std::vector<std::vector<std::uint8_t>> heads, bodies;
  if (b.routed) {
    RoutedMessage m;
    m.common = std::move(head);
    std::vector<std::vector<std::uint32_t>> by_process;
    std::vector<int> to;
    for (std::uint32_t s : slots) {
      to.clear();
      b.destinations(order[s], to);
      for (int q : to) {
        if (by_process.size() <= static_cast<std::size_t>(q))
          by_process.resize(static_cast<std::size_t>(q) + 1);
        by_process[static_cast<std::size_t>(q)].push_back(s);
      }
    }
    m.to.resize(by_process.size());
    for (std::size_t q = 0; q < by_process.size(); ++q) put_robots(m.to[q], by_process[q]);
    RoutedReceived got = b.routed_round(std::move(m));
    heads = std::move(got.common);
    bodies = std::move(got.from);
  } else {
    put_robots(head, slots);
    heads = b.round(std::move(head));
  }
  ghost_changed_.clear();
  std::uint64_t total = changes;
  for (std::size_t p = 0; p < heads.size(); ++p) {
    if (static_cast<int>(p) == b.process) continue;
    auto fail = [&](const char* what) {
      throw std::runtime_error("process " + std::to_string(p) +
                               " sent a malformed contact round (" + what +
                               "); the processes no longer agree on the world");
    };
    const std::vector<std::uint8_t>* in = &heads[p];
    std::size_t at = 0;
    auto take = [&](void* v, std::size_t size) {
      if (in->size() - at < size) fail("truncated");
      std::memcpy(v, in->data() + at, size);
      at += size;
    };
    std::uint8_t their_kind = 0;
    std::uint32_t their_round = 0, count = 0;
    std::uint64_t their_changes = 0;
    take(&their_kind, 1);
    take(&their_round, 4);
    if (their_kind != kind || their_round != r32) fail("another kind or round");
    take(&their_changes, 8);
    // (A process holding only its part may hold fewer robots than another moves: then the
    // bound is the id space.)
    if (their_changes > (b.partial || b.routed ? std::uint64_t{0xffffffffu} : n))
      fail("more changes than robots");
    total += their_changes;
    if (b.routed) {  // the robots come in the part it sent this process, if any
      if (at != in->size()) fail("trailing bytes");
      in = &bodies[p];
      at = 0;
      if (in->empty()) continue;
    }
    take(&count, 4);
    for (std::uint32_t j = 0; j < count; ++j) {
      EntityId id = 0;
      M dx = 0, dy = 0, v = 0;
      take(&id, 4);
      if (motion) {
        take(&dx, sizeof(M));
        take(&dy, sizeof(M));
      }
      take(&v, sizeof(M));
      if (!(v >= 0 && v <= 1)) fail("a fraction outside [0, 1]");
      const std::uint32_t row = b.row_of(id);
      if (row == kNoIndex && b.partial) continue;
      if (row >= n || b.mover[row] != static_cast<int>(p)) fail("a robot it does not move");
      const std::uint32_t s = slot_of_[row];
      if (motion) {
        if (!(std::fabs(dx) <= reach && std::fabs(dy) <= reach)) fail("a motion out of reach");
        mv.dx[s] = dx;
        mv.dy[s] = dy;
        f[s] = v;
        ghost_[s] = 1;
      } else {
        if (!ghost_[s]) fail("a fraction of a robot it did not share");
        f[s] = -v;  // changed
        ghost_changed_.push_back(s);
      }
    }
    if (at != in->size()) fail("trailing bytes");
  }
  return total;
}

void RegionMigration::migrate(const WorldModel& model, WorldState& state, const SpatialIndex& index,
                              ThreadPool& pool) {
  if (model.engines.size() <= 1) return;
  const std::size_t n = state.robot_count();
  const RobotGrid& grid = index.robots;
  const double* gx = grid.sorted_x().data();
  const double* gy = grid.sorted_y().data();
  const SlotRadius gr = grid.sorted_r();
  const std::uint32_t* order = grid.order().data();
  const double* x = state.x().data();
  const double* y = state.y().data();
  const std::uint16_t* kind = state.robot_kind().data();
  std::uint8_t* robot_engine = state.robot_engine().data();
  const std::size_t kGrain = 1024;
  // The engines before the move and the engines owning the new positions, in slot order:
  engine_.resize(n);
  target_.resize(n);
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t s = b; s < e; ++s) {
      const std::uint32_t i = order[s];
      engine_[s] = robot_engine[i];
      target_[s] = static_cast<std::uint8_t>(model.engine_at({x[i], y[i]}, kind[i]));
    }
  });
  // A robot belongs to the engine owning its new position, keeping its identity, controller
  // and every column. Robots of different engines may overlap (they never collide), so a move
  // into engine E waits while the robot overlaps a robot that is in E or is entering E: no
  // engine ever holds two overlapping robots (beyond dynamics2d's slop while pushing). The
  // rule reads only this step's engines, targets and new positions, so it is order
  // independent.
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t s = b; s < e; ++s) {
      const std::uint8_t to = target_[s];
      std::uint8_t owner = to;
      if (to != engine_[s]) {
        const double ri = gr[s];
        const Vec2 p{x[order[s]], y[order[s]]};
        // Robots moved less than a cell since the grid was built: its 3x3 block around the
        // old position holds every robot the new position can overlap.
        grid.for_each_near(Vec2{gx[s], gy[s]}, [&](std::uint32_t t) {
          if (t == s || (engine_[t] != to && target_[t] != to)) return;
          const Vec2 rel = Vec2{x[order[t]], y[order[t]]} - p;
          const double rs = ri + gr[t];
          if (dot(rel, rel) < rs * rs) owner = engine_[s];
        });
      }
      robot_engine[order[s]] = owner;
    }
  });
}

}  // namespace fleetsim

namespace fleetsim {
namespace {

/// The registry's kinematics2d: one KinematicsEngine steps every region of the type at once
/// (robots of different regions never meet in it), in the grid's slot order.
class Kinematics2d final : public PhysicsEngine {
 public:
  void setup(PhysicsSetup&) override {}
  std::string refuses(const KindInfo& kind) const override {
    if (kind.flies) return "it flies (expected a 3D engine such as pointmass3d)";
    return kind.shape == BodyShape::kCircle ? "" : "kinematics2d bodies are circles";
  }
  void step(PhysicsWorld& world) override {
    auto& w = dynamic_cast<CorePhysicsWorld&>(world);
    engine_.step(w.model, w.state, w.index, w.pool, &w.steps_mask(), w.borders);
  }

 private:
  KinematicsEngine engine_;
};

}  // namespace

std::unique_ptr<PhysicsEngine> make_kinematics2d_engine() {
  return std::make_unique<Kinematics2d>();
}

}  // namespace fleetsim
