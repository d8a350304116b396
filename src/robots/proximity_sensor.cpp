#include "robots/proximity_sensor.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/cpu_features.hpp"
#include "core/det_math.hpp"
#include "core/lane_tables.hpp"
#include "fleetsim/controller.hpp"
#include "robots/engine_world.hpp"

// Instrumented (sanitizer) builds cannot vectorise the ray loop; clang then warns about its
// `omp simd`. The results are the same either way.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

namespace fleetsim {

namespace {
constexpr int kMaxRays = 64;

// Rays against the static obstacles (double precision; few robots are near a wall, so this is
// out of line and keeps the kernel's registers for the robots).
[[gnu::noinline]] void hit_segments(const SpatialIndex& index, double px, double py, double r,
                                    double range, int n, const float* ux, const float* uy,
                                    float* best) {
  const Vec2 p{px, py};
  const auto near = index.segments.near(p);
  if (near.empty()) return;
  const auto& segs = index.segments.segments();
  for (std::uint32_t si : near) {
    const Segment& sg = segs[si];
    if (distance_to_segment(p, sg) > r + range) continue;
    for (int k = 0; k < n; ++k) {
      const Vec2 u{ux[k], uy[k]};
      const double t = ray_segment(p + u * r, u, best[k], sg);
      const float tf = static_cast<float>(t);
      if (t >= 0 && tf < best[k]) best[k] = tf;
    }
  }
}

// ARGoS's uniform noise (`noise_level`), then proximity_noisy's Gaussian noise, clamped to
// [0, 1]; each from its own stream of the counter-based generator, one draw per ray in ray
// order. Out of line: most sensors have none.
[[gnu::noinline]] void add_noise(const ProximityReadingModel& model, int n, float* out) {
  if (model.noise_level > 0) {
    CounterRng rng(model.seed, model.robot, model.tick, RandomStream::kProximityNoise);
    for (int k = 0; k < n; ++k)
      out[k] = static_cast<float>(
          std::clamp(out[k] + rng.uniform(-model.noise_level, model.noise_level), 0.0, 1.0));
  }
  if (model.noise_sd > 0) {
    CounterRng rng(model.seed, model.robot, model.tick, RandomStream::kSensorNoise);
    for (int k = 0; k < n; ++k)
      out[k] = static_cast<float>(std::clamp(out[k] + model.noise_sd * rng.normal(), 0.0, 1.0));
  }
}

// Where the gather of the robots within reach stands: the run of slots, and the slot in it.
struct GatherCursor {
  int run = 0;
  std::uint32_t at = 0;
};

// The gather below for AVX2, four slots at a time, when every robot has the same radius `rj`
// (its reach is then one number) and none flies: the same tests and the same float
// operations, so the same lists. Appends to lx, ly, lq from m and returns the new m; stops
// early (the cursor then says where) when the lists may not have room for 4 more below `cap`.
[[gnu::target("avx2")]] [[gnu::noinline]] int gather_within_avx2(
    const double* gx, const double* gy, const std::uint32_t* rb, const std::uint32_t* re, int runs,
    std::uint32_t slots, GatherCursor& cursor, std::uint32_t self, double px, double py,
    double reach2, float rj, float* lx, float* ly, float* lq, int m, int cap) {
  const __m256d vpx = _mm256_set1_pd(px), vpy = _mm256_set1_pd(py);
  const __m256d vreach2 = _mm256_set1_pd(reach2);
  const __m128 vrj2 = _mm_set1_ps(rj * rj);
  while (cursor.run < runs) {
    const std::uint32_t e = re[cursor.run];
    for (std::uint32_t s = cursor.at; s < e; s += 4) {
      if (m > cap - 4) {
        cursor.at = s;
        return m;
      }
      const std::uint32_t width = std::min(4u, e - s);
      __m256d x, y;
      if (s + 4 <= slots) {  // (lanes past the run read its neighbours: their bits are cleared)
        x = _mm256_loadu_pd(gx + s);
        y = _mm256_loadu_pd(gy + s);
      } else {  // the array's last slots: the lanes past its end are not read
        const __m256i mask =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes::kFirst64[width]));
        x = _mm256_maskload_pd(gx + s, mask);
        y = _mm256_maskload_pd(gy + s, mask);
      }
      const __m256d dx = _mm256_sub_pd(x, vpx), dy = _mm256_sub_pd(y, vpy);
      const __m256d d2 = _mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy));
      unsigned bits =
          static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(d2, vreach2, _CMP_LE_OQ)));
      bits &= (1u << width) - 1;
      if (self - s < width) bits &= ~(1u << (self - s));
      const __m128 rx = _mm256_cvtpd_ps(dx), ry = _mm256_cvtpd_ps(dy);
      const __m128 q = _mm_sub_ps(vrj2, _mm_add_ps(_mm_mul_ps(rx, rx), _mm_mul_ps(ry, ry)));
      const __m128i pack = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes::kPack[bits]));
      _mm_storeu_ps(lx + m, _mm_permutevar_ps(rx, pack));
      _mm_storeu_ps(ly + m, _mm_permutevar_ps(ry, pack));
      _mm_storeu_ps(lq + m, _mm_permutevar_ps(q, pack));
      m += lanes::kCount[bits];
    }
    if (++cursor.run < runs) cursor.at = rb[cursor.run];
  }
  return m;
}

// The kernel: robot at slot `self` of the grid, with pose (p, theta), radius r and range.
// N > 0: a compile-time ray count (the loops unroll and vectorise: the e-puck's 8 rays are two
// SSE vectors of floats); N = 0: `n` rays.
template <int N, bool kAvx2>
[[gnu::always_inline]] inline void cast_rays(const SpatialIndex& index, std::uint32_t self,
                                             double px, double py, double theta, double r,
                                             double range, double seen, const RayLayout& dir,
                                             int n_runtime, float* out, const double* z,
                                             double height, const std::uint32_t* rb,
                                             const std::uint32_t* re, int runs,
                                             const ProximityReadingModel& model) {
  const int n = N > 0 ? N : n_runtime;
  constexpr int kCap = N > 0 ? N : kMaxRays;
  // World directions and the nearest hit per ray, as separate arrays so the ray loop
  // vectorises.
  alignas(32) float ux[kCap], uy[kCap], best[kCap];
  ray_directions(theta, dir, ux, uy);
  const float rf = static_cast<float>(r), two_r = 2 * rf, r2 = rf * rf;
  const float rangef = static_cast<float>(range);
  for (int k = 0; k < n; ++k) best[k] = rangef;
  const RobotGrid& grid = index.robots;
  const double* gx = grid.sorted_x().data();
  const double* gy = grid.sorted_y().data();
  const SlotRadius gr = grid.sorted_r();
  const std::uint32_t* order = grid.order().data();
  // Two passes over the cells the caller found within reach (`rb`, `re`: one run of slots per
  // row of cells). First the robots within reach (a robot farther than r +
  // range + its radius cannot be hit; the margin keeps the cut exact in float), gathered
  // without branches: each robot is written at the end of the list, which grows only when it
  // is kept. Then the rays against the gathered robots. (A robot the cut lets through would
  // change nothing: its hits lie beyond the range.)
  constexpr int kGather = 64;
  alignas(32) float lx[kGather + 1], ly[kGather + 1], lq[kGather + 1];
  int m = 0;
  auto rays = [&] {
    for (int j = 0; j < m; ++j) {
      const float relx = lx[j], rely = ly[j], q = lq[j], e = r2 - q;
#pragma omp simd
      for (int k = 0; k < n; ++k) {
        const float v = ray_circle_hit(relx * ux[k] + rely * uy[k], q, e, rf, two_r);
        best[k] = v < best[k] ? v : best[k];
      }
    }
    m = 0;
  };
  // Only robots within `seen` of the body (cast() says why: beyond it every reading is 0).
  const double reach_base = r + seen;
  if (kAvx2 && index.uniform_radius && !z && runs > 0) {
    const double reach = (reach_base + index.max_radius_m) * 1.0001;
    GatherCursor cursor{0, rb[0]};
    while (true) {
      m = gather_within_avx2(
          gx, gy, rb, re, runs, static_cast<std::uint32_t>(grid.sorted_x().size()), cursor, self,
          px, py, reach * reach, static_cast<float>(index.max_radius_m), lx, ly, lq, m, kGather);
      if (cursor.run >= runs) break;
      rays();
    }
    runs = 0;  // (the loop below has nothing left to do)
  }
  for (int run = 0; run < runs; ++run) {
    for (std::uint32_t s = rb[run]; s < re[run]; ++s) {
      const double dx = gx[s] - px, dy = gy[s] - py;
      const double reach = (reach_base + gr[s]) * 1.0001;
      // Flyers (a `z` column, kept by pointmass3d) above the sensing robot's height pass over.
      const bool over = z && z[order[s]] > height;
      const bool keep = (dx * dx + dy * dy <= reach * reach) & (s != self) & !over;
      const float relx = static_cast<float>(dx), rely = static_cast<float>(dy);
      const float rj = static_cast<float>(gr[s]);
      lx[m] = relx;
      ly[m] = rely;
      lq[m] = rj * rj - (relx * relx + rely * rely);
      m += keep;
      if (m == kGather) rays();
    }
  }
  rays();
  hit_segments(index, px, py, r, seen, n, ux, uy, best);
  // The readings, produced here: the linear reading of each ray's nearest hit, then the
  // response curve on the whole vector of rays, then the noise.
  alignas(32) float linear[kCap];
  for (int k = 0; k < n; ++k) linear[k] = best[k] < rangef ? 1.0f - best[k] / rangef : 0.0f;
  switch (model.response) {
    case ProximityResponse::kLinear:
      for (int k = 0; k < n; ++k) out[k] = linear[k];
      break;
    case ProximityResponse::kFootbot:
#pragma omp simd
      for (int k = 0; k < n; ++k)
        out[k] = proximity_response<ProximityResponse::kFootbot>(linear[k], range);
      break;
    case ProximityResponse::kEpuck:
#pragma omp simd
      for (int k = 0; k < n; ++k)
        out[k] = proximity_response<ProximityResponse::kEpuck>(linear[k], range);
      break;
  }
  if (model.noise_level > 0 || model.noise_sd > 0) [[unlikely]]
    add_noise(model, n, out);
}

// The kernel for the baseline instruction set (SSE2: 4 floats per vector) and for AVX2 (8 per
// vector: the e-puck's 8 rays in one). The same IEEE operations in the same order, no FMA
// (-ffp-contract=off), so the two give the same bits (tests run both).
#define FLEETSIM_CAST_BODY                                                                         \
  const int n = static_cast<int>(dir.count());                                                     \
  if (n == 8)                                                                                      \
    return cast_rays<8, kAvx2>(index, self, px, py, theta, r, range, seen, dir, n, out, z, height, \
                               rb, re, runs, model);                                               \
  if (n == 24)                                                                                     \
    return cast_rays<24, kAvx2>(index, self, px, py, theta, r, range, seen, dir, n, out, z,        \
                                height, rb, re, runs, model);                                      \
  cast_rays<0, kAvx2>(index, self, px, py, theta, r, range, seen, dir, n, out, z, height, rb, re,  \
                      runs, model);

void cast_baseline(const SpatialIndex& index, std::uint32_t self, double px, double py,
                   double theta, double r, double range, double seen, const RayLayout& dir,
                   float* out, const double* z, double height, const std::uint32_t* rb,
                   const std::uint32_t* re, int runs, const ProximityReadingModel& model) {
  constexpr bool kAvx2 = false;
  FLEETSIM_CAST_BODY
}

[[gnu::target("avx2")]] void cast_avx2(const SpatialIndex& index, std::uint32_t self, double px,
                                       double py, double theta, double r, double range, double seen,
                                       const RayLayout& dir, float* out, const double* z,
                                       double height, const std::uint32_t* rb,
                                       const std::uint32_t* re, int runs,
                                       const ProximityReadingModel& model) {
  constexpr bool kAvx2 = true;
  FLEETSIM_CAST_BODY
}
#undef FLEETSIM_CAST_BODY

void cast(const SpatialIndex& index, std::uint32_t self, Vec2 p, double theta, double r,
          double range, const RayLayout& dir, float* out, const double* z, double height,
          const ProximityReadingModel& model) {
  // The rows of cells the rays can reach (any robot within r + seen + its radius, `seen` the
  // distance within which the response can read non-zero: 4 rows for the e-puck's curve, 5
  // for a linear 0.1 m sensor). A reach needing more rows than kRuns (a sensor reaching
  // dozens of cells) takes them from the heap.
  constexpr int kRuns = 16;
  std::uint32_t rb[kRuns], re[kRuns];
  const double seen = proximity_seen_range(model.response, range);
  const double reach = (r + seen + std::max(index.max_radius_m, r)) * 1.001;
  int runs = index.robots.runs_within(p, reach, rb, re, kRuns);
  std::vector<std::uint32_t> wide_b, wide_e;
  const std::uint32_t* b = rb;
  const std::uint32_t* e = re;
  if (runs < 0) {
    index.robots.for_each_run_within(p, reach, [&](std::uint32_t rb0, std::uint32_t re0) {
      wide_b.push_back(rb0);
      wide_e.push_back(re0);
    });
    runs = static_cast<int>(wide_b.size());
    b = wide_b.data();
    e = wide_e.data();
  }
  if (simd_path() == SimdPath::kAvx2)
    return cast_avx2(index, self, p.x, p.y, theta, r, range, seen, dir, out, z, height, b, e, runs,
                     model);
  cast_baseline(index, self, p.x, p.y, theta, r, range, seen, dir, out, z, height, b, e, runs,
                model);
}

}  // namespace

float proximity_response(ProximityResponse response, float linear, double range) {
  switch (response) {
    case ProximityResponse::kLinear:
      return linear;
    case ProximityResponse::kFootbot:
      return proximity_response<ProximityResponse::kFootbot>(linear, range);
    case ProximityResponse::kEpuck:
      return proximity_response<ProximityResponse::kEpuck>(linear, range);
  }
  return linear;
}

std::vector<double> proximity_ray_angles(const Params& p, std::string& error) {
  const auto rays = p.integer("rays", kEpuckRays);
  if (rays < 1 || rays > kMaxRays) {
    error = "rays=" + std::to_string(rays) + " is out of range (expected 1 to " +
            std::to_string(kMaxRays) + ")";
    return {};
  }
  std::vector<double> angles;
  std::string list = p.text("angles");
  if (!list.empty()) {
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
      try {
        std::size_t used = 0;
        double deg = std::stod(item, &used);
        if (item.find_first_not_of(" \t", used) != std::string::npos) throw std::exception();
        angles.push_back(deg * kPi / 180.0);
      } catch (...) {
        error = "angles=\"" + list +
                "\" is not a list of numbers (expected degrees, e.g. \"0,90,180,-90\")";
        return {};
      }
    }
    if (static_cast<std::int64_t>(angles.size()) != rays && p.has("rays")) {
      error = std::to_string(angles.size()) + " angles for rays=" + std::to_string(rays) +
              " (expected as many)";
      return {};
    }
  } else if (rays == kEpuckRays) {
    angles.assign(kEpuckProximityAngles, kEpuckProximityAngles + kEpuckRays);
  } else {
    for (std::int64_t k = 0; k < rays; ++k)
      angles.push_back(
          wrap_angle((static_cast<double>(k) + 0.5) * 2 * kPi / static_cast<double>(rays)));
  }
  return angles;
}

const RayLayout& epuck_rays() {
  static const RayLayout layout = [] {
    RayLayout l;
    for (double a : kEpuckProximityAngles) {
      l.cos.push_back(std::cos(a));
      l.sin.push_back(std::sin(a));
    }
    return l;
  }();
  return layout;
}

void read_proximity_slot(const WorldState& state, const SpatialIndex& index, std::uint32_t slot,
                         double r, double range, const RayLayout& layout, float* out,
                         const double* z, double height, const ProximityReadingModel& model) {
  const std::uint32_t i = index.robots.order()[slot];
  if (range <= 0) {
    std::fill(out, out + layout.count(), 0.0f);
    add_noise(model, static_cast<int>(layout.count()), out);
    return;
  }
  const Vec2 p{index.robots.sorted_x()[slot], index.robots.sorted_y()[slot]};
  cast(index, slot, p, state.theta()[i], r, range, layout, out, z, height, model);
}

void read_proximity(const WorldState& state, const SpatialIndex& index, std::size_t i, double r,
                    double range, const RayLayout& layout, float* out, const double* z,
                    double height, const ProximityReadingModel& model) {
  std::fill(out, out + layout.count(), 0.0f);
  if (range <= 0) return add_noise(model, static_cast<int>(layout.count()), out);
  // Robot i's own slot (to skip itself): in the cells around it, linear in their population.
  const Vec2 p{state.x()[i], state.y()[i]};
  const auto& order = index.robots.order();
  std::uint32_t self = kNoIndex;
  index.robots.for_each_near(p, [&](std::uint32_t s) {
    if (order[s] == i) self = s;
  });
  cast(index, self, p, state.theta()[i], r, range, layout, out, z, height, model);
}

namespace {

class ProximitySensor final : public BatchedSensor<ProximitySensor> {
 public:
  explicit ProximitySensor(bool noisy) : noisy_(noisy) {}

  void setup(PartSetup& setup) override {
    const Params& p = setup.params();
    range_ = p.real("range", 0.1);
    noise_ = noisy_ ? p.real("noise", 0.05) : 0.0;
    noise_level_ = p.real("noise_level", 0);
    if (!(noise_level_ >= 0))
      setup.error("sensor '" + setup.name() +
                  "': noise_level must be >= 0 (ARGoS's uniform noise)");
    const std::string response = p.text("response", "linear");
    if (response == "linear") {
      response_ = ProximityResponse::kLinear;
    } else if (response == "footbot") {
      response_ = ProximityResponse::kFootbot;
    } else if (response == "epuck") {
      response_ = ProximityResponse::kEpuck;
    } else {
      setup.error("sensor '" + setup.name() + "': response=\"" + response +
                  "\" is not a proximity response (expected linear, footbot or epuck)");
    }
    if (range_ < 0) setup.error("sensor '" + setup.name() + "': range must be >= 0 (metres)");
    std::string error;
    const std::vector<double> angles = proximity_ray_angles(p, error);
    if (!error.empty()) {
      setup.error("sensor '" + setup.name() + "': " + error);
      return;
    }
    for (double a : angles) {
      layout_.cos.push_back(std::cos(a));
      layout_.sin.push_back(std::sin(a));
      angles_.push_back(static_cast<float>(a));
      directions_.push_back({std::cos(a), std::sin(a)});
    }
    radius_ = setup.kind().radius_m;
    height_ = setup.kind().height_m;
    z_ = setup.find_column("z");
    column_ =
        setup.column({setup.name(), ColumnType::kF32, static_cast<std::uint32_t>(angles.size()),
                      true, false, "proximity readings in [0, 1], one per ray",
                      noisy_ ? "proximity_noisy" : "proximity", false});
    setup.set_near_reach(range_);
  }
  void describe(SensorView& out) const override {
    out.angles = angles_;
    out.directions = directions_;
  }

  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const EngineWorld& w = engine_world(ctx);
    ColumnStore& store = w.state().robots;
    const std::size_t width = store.desc(column_).width;
    float* values = static_cast<float*>(store.data(column_)) + std::size_t{robot.row} * width;
    const double* z = z_ == kNoColumn ? nullptr : static_cast<const double*>(store.data(z_));
    const ProximityReadingModel model{response_, noise_level_, noise_,
                                      ctx.seed,  robot.id,     ctx.tick};
    read_proximity_slot(w.state(), w.index(), robot.slot, radius_, range_, layout_, values, z,
                        height_, model);
    out.values = {values, layout_.count()};
    out.angles = angles_;
    out.directions = directions_;
  }

 private:
  bool noisy_;
  double range_ = 0.1, noise_ = 0, noise_level_ = 0, radius_ = 0, height_ = 0;
  ProximityResponse response_ = ProximityResponse::kLinear;
  ColumnHandle z_ = kNoColumn;  ///< altitudes, when flyers are in the run
  RayLayout layout_;
  std::vector<float> angles_;
  std::vector<Vec2> directions_;
  ColumnHandle column_ = kNoColumn;
};

}  // namespace

std::unique_ptr<Sensor> make_proximity_sensor(bool noisy) {
  return std::make_unique<ProximitySensor>(noisy);
}

}  // namespace fleetsim
