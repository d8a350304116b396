#include "physics/kinematics2d.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace fleetsim {

void SpatialIndex::init(const WorldModel& model) {
  double rmax = model.max_radius_m();
  double dt = static_cast<double>(model.tick_period_ns) / kNanosPerSecond;
  double move = 0, range = 0;
  for (const auto& k : model.kinds) {
    move = std::max(move, std::min(k.max_speed_m_per_s, k.max_wheel_speed_m_per_s) * dt);
    range = std::max(range, k.proximity_range_m);
  }
  // Longest interaction: two robots closing on each other within one tick, or a ray from one
  // robot's surface reaching another robot's far side.
  interaction_m = std::max(2 * rmax + 2 * move + 4 * kSkin, 2 * rmax + range) * 1.001;
  double cell = std::max(interaction_m, 1e-3);
  Vec2 lo = model.arena_min(), hi = model.arena_max();
  robots.configure(lo, hi, cell);
  double reach = std::max(rmax + move + 4 * kSkin, rmax + range) * 1.001;
  segments.build(model.segments, lo, hi, cell, reach);
}

void SpatialIndex::rebuild(const WorldModel& model, const WorldState& state, ThreadPool& pool) {
  std::size_t n = state.robot_count();
  radius.resize(n);
  pool.parallel_for(n, 4096, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i) radius[i] = model.kinds[state.robot_kind[i]].radius_m;
  });
  robots.rebuild(state.x, state.y, radius, pool);
}

namespace {

// First t in [0, len] with |r0 + t v| < rs while approaching; -1 if none.
inline double first_contact_linear(Vec2 r0, Vec2 v, double rs, double len) {
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

}  // namespace

double pair_contact_time(Vec2 pi, Vec2 di, double fi, Vec2 pj, Vec2 dj, double fj,
                         double r_sum) {
  double rs = r_sum + kSkin;
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

double segment_contact_time(Vec2 p, Vec2 d, double r, const Segment& s, double limit) {
  double rs = r + kSkin;
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
    double s0 = dot(p - s.a, n);   // signed distance at t = 0
    double sv = dot(d, n);         // its rate
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

void KinematicsEngine::step(const WorldModel& model, WorldState& state,
                            const SpatialIndex& index, ThreadPool& pool) {
  const std::size_t n = state.robot_count();
  const double dt = static_cast<double>(model.tick_period_ns) / kNanosPerSecond;
  dx_.resize(n);
  dy_.resize(n);
  new_theta_.resize(n);
  f_.resize(n);
  f_next_.resize(n);
  active_.resize(n);
  changed_.resize(n);
  const RobotGrid& grid = index.robots;
  const auto& gx = grid.sorted_x();
  const auto& gy = grid.sorted_y();
  const auto& gr = grid.sorted_r();
  const auto& order = grid.order();
  const auto& segs = index.segments.segments();
  const std::size_t kGrain = 1024;

  // 1. Commanded motion (clamped) and the static obstacles' limit on it.
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i) {
      const RobotKind& k = model.kinds[state.robot_kind[i]];
      double l = std::clamp(state.cmd_left[i], -k.max_wheel_speed_m_per_s,
                            k.max_wheel_speed_m_per_s);
      double r = std::clamp(state.cmd_right[i], -k.max_wheel_speed_m_per_s,
                            k.max_wheel_speed_m_per_s);
      double v = std::clamp((l + r) / 2, -k.max_speed_m_per_s, k.max_speed_m_per_s);
      double w = (r - l) / k.wheel_distance_m;
      double th = state.theta[i];
      double mid = th + w * dt / 2;
      new_theta_[i] = wrap_angle(th + w * dt);
      Vec2 d{v * dt * std::cos(mid), v * dt * std::sin(mid)};
      dx_[i] = d.x;
      dy_[i] = d.y;
      double f = 1.0;
      if (d.x != 0 || d.y != 0) {
        Vec2 p{state.x[i], state.y[i]};
        for (std::uint32_t si : index.segments.near(p))
          f = segment_contact_time(p, d, k.radius_m, segs[si], f);
      }
      f_[i] = f;
    }
  });

  // 2. Robot-robot contacts: Jacobi rounds until no f changes. Round 0 visits every robot and
  // marks those with a neighbour whose path comes near theirs (`active_`); later rounds visit
  // only active robots whose neighbourhood changed.
  std::fill(changed_.begin(), changed_.end(), 1);
  int round = 0;
  while (true) {
    std::atomic<bool> any{false};
    pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
      bool local_any = false;
      for (std::size_t i = b; i < e; ++i) {
        f_next_[i] = f_[i];
        if (round > 0 && !active_[i]) continue;
        Vec2 pi{state.x[i], state.y[i]};
        Vec2 di{dx_[i], dy_[i]};
        double fi = f_[i];
        double ri = index.radius[i];
        std::uint8_t eng = state.robot_engine[i];
        bool near_change = round == 0 || changed_[i];
        bool has_neighbour = false;
        double best = fi;
        grid.for_each_near(pi, [&](std::uint32_t s) {
          std::uint32_t j = order[s];
          if (j == i || state.robot_engine[j] != eng) return;
          Vec2 pj{gx[s], gy[s]};
          double rsum = ri + gr[s];
          Vec2 rel = pj - pi;
          double reach = rsum + kSkin + std::abs(di.x) + std::abs(di.y) + std::abs(dx_[j]) +
                         std::abs(dy_[j]);
          if (dot(rel, rel) > reach * reach) return;
          has_neighbour = true;
          if (round > 0 && !near_change && !changed_[j]) return;
          double t = pair_contact_time(pi, di, fi, pj, Vec2{dx_[j], dy_[j]}, f_[j], rsum);
          if (t < best) best = t;
        });
        if (round == 0) active_[i] = has_neighbour;
        if (best < fi) {
          f_next_[i] = best;
          local_any = true;
        }
      }
      if (local_any) any.store(true, std::memory_order_relaxed);
    });
    ++round;
    // A robot needs another look when it or a neighbour changed; mark the changes.
    pool.parallel_for(n, kGrain * 4, [&](std::size_t b, std::size_t e, int) {
      for (std::size_t i = b; i < e; ++i) {
        changed_[i] = f_next_[i] != f_[i];
      }
    });
    std::swap(f_, f_next_);
    if (!any.load()) break;
    // A neighbour's change makes robot i stale too: propagate to neighbours via near_change
    // (checked through changed_[j] in the loop above), nothing more to do here.
    if (round > 200) {
      // Pathological chains: stop everyone still changing (still order independent).
      pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
        for (std::size_t i = b; i < e; ++i)
          if (changed_[i]) f_[i] = 0;
      });
    }
  }
  last_rounds_ = round;

  // 3. Move, and fill the collision sensor with contacts at the final positions.
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i) {
      double f = f_[i];
      state.x[i] += f * dx_[i];
      state.y[i] += f * dy_[i];
      state.theta[i] = new_theta_[i];
      state.realization[i] = (dx_[i] == 0 && dy_[i] == 0) ? 1.0f : static_cast<float>(f);
    }
  });
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i) {
      Vec2 p{state.x[i], state.y[i]};
      double ri = index.radius[i];
      double th = state.theta[i];
      int count = 0;
      float* angles = &state.contact_angle[i * kMaxContacts];
      auto add = [&](Vec2 at) {
        if (count < kMaxContacts)
          angles[count++] = static_cast<float>(wrap_angle(std::atan2(at.y - p.y, at.x - p.x) - th));
      };
      const double touch = 4 * kSkin;
      for (std::uint32_t si : index.segments.near(p)) {
        Vec2 c;
        if (distance_to_segment(p, segs[si], &c) <= ri + touch) add(c);
      }
      std::uint8_t eng = state.robot_engine[i];
      grid.for_each_near(p, [&](std::uint32_t s) {
        std::uint32_t j = order[s];
        if (j == i || state.robot_engine[j] != eng) return;
        Vec2 pj{state.x[j], state.y[j]};
        double rs = ri + index.radius[j] + touch;
        Vec2 rel = pj - p;
        if (dot(rel, rel) <= rs * rs) add(p + rel * (ri / (ri + index.radius[j])));
      });
      state.contact_count[i] = static_cast<std::uint8_t>(count);
      for (int k = count; k < kMaxContacts; ++k) angles[k] = 0;
    }
  });

  // 4. Migration, at this one fixed point of the step: a robot belongs to the engine owning
  // its new position. Identity, controller and every column stay with it.
  if (model.engines.size() > 1) {
    pool.parallel_for(n, kGrain * 4, [&](std::size_t b, std::size_t e, int) {
      for (std::size_t i = b; i < e; ++i)
        state.robot_engine[i] =
            static_cast<std::uint8_t>(model.engine_at({state.x[i], state.y[i]}));
    });
  }
}

}  // namespace fleetsim
