#include "physics/spatial_grid.hpp"

#include <algorithm>
#include <cmath>

#include "core/thread_pool.hpp"

namespace fleetsim {

void RobotGrid::configure(Vec2 min, Vec2 max, double cell_m, std::vector<double> kind_radius) {
  min_ = min;
  kind_radius_ = std::move(kind_radius);
  double w = std::max(max.x - min.x, cell_m), h = std::max(max.y - min.y, cell_m);
  // Cap the cell count: a huge sparse arena must not allocate billions of cells.
  double cell = cell_m;
  while ((w / cell) * (h / cell) > 64e6) cell *= 1.5;
  nx_ = std::max(1, static_cast<int>(w / cell));
  ny_ = std::max(1, static_cast<int>(h / cell));
  cell_ = std::max(w / nx_, h / ny_);
  // Both dimensions use the same (slightly larger) cell so queries stay a 3x3 block.
  nx_ = std::max(1, static_cast<int>(std::ceil(w / cell_)));
  ny_ = std::max(1, static_cast<int>(std::ceil(h / cell_)));
  inv_cell_ = 1.0 / cell_;
  start_.assign(static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_) + 1, 0);
}

void RobotGrid::rebuild(std::span<const double> x, std::span<const double> y,
                        std::span<const std::uint16_t> kind, ThreadPool& pool,
                        std::span<const std::uint32_t> ids) {
  const std::size_t n = x.size();
  const std::size_t cells = start_.size() - 1;
  order_.resize(n);
  sx_.resize(n);
  sy_.resize(n);
  sk_.resize(n);
  // The cell of robot i, computed where it is needed (twice per part) rather than kept: 4
  // bytes a robot less.
  const auto cols = static_cast<std::uint32_t>(nx_);
  auto cell_of = [&](std::size_t i) {
    return static_cast<std::uint32_t>(cell_y(y[i])) * cols +
           static_cast<std::uint32_t>(cell_x(x[i]));
  };
  // Counting sort, stable by robot index. Each part owns a contiguous range of cells and
  // reads every robot's cell, counting and then placing only its own: no histogram per part
  // (which cost 4 bytes per cell and part, ~14 bytes per robot at a million), and the result
  // does not depend on the number of parts. start_[c + 1] counts cell c, then holds where its
  // next robot goes; once every robot is placed it is where cell c + 1 starts.
  // Few robots in many cells: the per-cell passes dominate, so small swarms sort in one part.
  const std::size_t parts = n >= 16384 ? static_cast<std::size_t>(pool.size()) : 1;
  const std::size_t cell_chunk = (cells + parts - 1) / parts;
  block_total_.assign(parts + 1, 0);
  pool.parallel_for(parts, 1, [&](std::size_t pb, std::size_t pe, int) {
    for (std::size_t q = pb; q < pe; ++q) {
      const std::uint32_t cb = static_cast<std::uint32_t>(std::min(cells, q * cell_chunk));
      const std::uint32_t width =
          static_cast<std::uint32_t>(std::min(cells, (q + 1) * cell_chunk)) - cb;
      std::uint32_t* count = start_.data() + 1 + cb;
      std::fill(count, count + width, 0u);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t c = cell_of(i) - cb;  // wraps for cells below the range
        if (c < width) count[c]++;
      }
      std::uint32_t sum = 0;
      for (std::uint32_t c = 0; c < width; ++c) {
        const std::uint32_t k = count[c];
        count[c] = sum;
        sum += k;
      }
      block_total_[q + 1] = sum;
    }
  });
  for (std::size_t q = 0; q < parts; ++q) block_total_[q + 1] += block_total_[q];
  start_[0] = 0;
  pool.parallel_for(parts, 1, [&](std::size_t pb, std::size_t pe, int) {
    for (std::size_t q = pb; q < pe; ++q) {
      const std::uint32_t cb = static_cast<std::uint32_t>(std::min(cells, q * cell_chunk));
      const std::uint32_t width =
          static_cast<std::uint32_t>(std::min(cells, (q + 1) * cell_chunk)) - cb;
      std::uint32_t* next = start_.data() + 1 + cb;
      const std::uint32_t offset = block_total_[q];
      for (std::uint32_t c = 0; c < width; ++c) next[c] += offset;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t c = cell_of(i) - cb;
        if (c >= width) continue;
        const std::uint32_t s = next[c]++;
        order_[s] = static_cast<std::uint32_t>(i);
        sx_[s] = x[i];
        sy_[s] = y[i];
        sk_[s] = kind[i];
      }
      if (ids.empty()) continue;
      // Each cell's few robots in id order (insertion sort; usually already in order).
      for (std::uint32_t c = 0, b = offset; c < width; ++c) {
        const std::uint32_t e = next[c];  // (now where cell c ends)
        for (std::uint32_t s = b + 1; s < e; ++s) {
          const std::uint32_t row = order_[s];
          const double px = sx_[s], py = sy_[s];
          const std::uint16_t pk = sk_[s];
          std::uint32_t t = s;
          for (; t > b && ids[order_[t - 1]] > ids[row]; --t) {
            order_[t] = order_[t - 1];
            sx_[t] = sx_[t - 1];
            sy_[t] = sy_[t - 1];
            sk_[t] = sk_[t - 1];
          }
          order_[t] = row;
          sx_[t] = px;
          sy_[t] = py;
          sk_[t] = pk;
        }
        b = e;
      }
    }
  });
}

std::size_t RobotGrid::memory_bytes() const {
  return start_.capacity() * 4 + order_.capacity() * 4 + (sx_.capacity() + sy_.capacity()) * 8 +
         sk_.capacity() * 2;
}

double distance_to_segment(Vec2 p, const Segment& s, Vec2* closest) {
  Vec2 ab = s.b - s.a;
  double len2 = dot(ab, ab);
  double t = len2 > 0 ? dot(p - s.a, ab) / len2 : 0;
  t = std::clamp(t, 0.0, 1.0);
  Vec2 c = s.a + ab * t;
  if (closest) *closest = c;
  return length(p - c);
}

void SegmentGrid::build(const std::vector<Segment>& segments, Vec2 min, Vec2 max, double cell_m,
                        double reach) {
  segments_ = segments;
  min_ = min;
  double w = std::max(max.x - min.x, cell_m), h = std::max(max.y - min.y, cell_m);
  double cell = cell_m;
  while ((w / cell) * (h / cell) > 16e6) cell *= 1.5;
  nx_ = std::max(1, static_cast<int>(std::ceil(w / cell)));
  ny_ = std::max(1, static_cast<int>(std::ceil(h / cell)));
  inv_cell_ = 1.0 / cell;
  const std::size_t cells = static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_);
  std::vector<std::vector<std::uint32_t>> lists(cells);
  for (std::size_t si = 0; si < segments.size(); ++si) {
    const Segment& s = segments[si];
    double lo_x = std::min(s.a.x, s.b.x) - reach, hi_x = std::max(s.a.x, s.b.x) + reach;
    double lo_y = std::min(s.a.y, s.b.y) - reach, hi_y = std::max(s.a.y, s.b.y) + reach;
    auto cx = [&](double v) { return clamp_cell(std::floor((v - min_.x) * inv_cell_), nx_); };
    auto cy = [&](double v) { return clamp_cell(std::floor((v - min_.y) * inv_cell_), ny_); };
    for (int gy = cy(lo_y); gy <= cy(hi_y); ++gy)
      for (int gx = cx(lo_x); gx <= cx(hi_x); ++gx) {
        // Exact test: the segment comes within `reach` of the cell's rectangle.
        Vec2 c0{min_.x + gx * cell, min_.y + gy * cell};
        Vec2 center = c0 + Vec2{cell / 2, cell / 2};
        double half_diag = cell * 0.70710678118654757;
        if (distance_to_segment(center, s) > reach + half_diag) continue;
        lists[static_cast<std::size_t>(gy) * static_cast<std::size_t>(nx_) +
              static_cast<std::size_t>(gx)]
            .push_back(static_cast<std::uint32_t>(si));
      }
  }
  start_.assign(cells + 1, 0);
  items_.clear();
  for (std::size_t c = 0; c < cells; ++c) {
    start_[c] = static_cast<std::uint32_t>(items_.size());
    items_.insert(items_.end(), lists[c].begin(), lists[c].end());
  }
  start_[cells] = static_cast<std::uint32_t>(items_.size());
  // Which blocks of kBlock x kBlock cells hold a segment: a line's walk skips the empty ones
  // without reading their cells (a few hundred bytes for the largest grid's million cells).
  bx_ = (nx_ + kBlock - 1) / kBlock;
  const int by = (ny_ + kBlock - 1) / kBlock;
  block_used_.assign(static_cast<std::size_t>(bx_) * static_cast<std::size_t>(by), 0);
  for (int gy = 0; gy < ny_; ++gy)
    for (int gx = 0; gx < nx_; ++gx) {
      const std::size_t c = static_cast<std::size_t>(gy) * static_cast<std::size_t>(nx_) +
                            static_cast<std::size_t>(gx);
      if (start_[c] != start_[c + 1]) block_used_[block_of(gx, gy)] = 1;
    }
}

namespace {
// True when segments p-q and s strictly cross or touch (orientation tests).
bool segments_cross(Vec2 p, Vec2 q, const Segment& s) {
  auto orient = [](Vec2 a, Vec2 b, Vec2 c) { return cross(b - a, c - a); };
  double d1 = orient(s.a, s.b, p), d2 = orient(s.a, s.b, q);
  double d3 = orient(p, q, s.a), d4 = orient(p, q, s.b);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
    return true;
  auto on = [](Vec2 a, Vec2 b, Vec2 c) {  // c on segment a-b, given collinear
    return std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= c.y &&
           c.y <= std::max(a.y, b.y);
  };
  return (d1 == 0 && on(s.a, s.b, p)) || (d2 == 0 && on(s.a, s.b, q)) ||
         (d3 == 0 && on(p, q, s.a)) || (d4 == 0 && on(p, q, s.b));
}
}  // namespace

template <class Found>
bool SegmentGrid::find_crossing(Vec2 a, Vec2 b, Found&& found) const {
  // The cells the line passes through (those whose centre is within half a diagonal of it);
  // each lists every segment that enters it.
  const double cell = 1.0 / inv_cell_;
  auto cx = [&](double v) { return clamp_cell(std::floor((v - min_.x) * inv_cell_), nx_); };
  auto cy = [&](double v) { return clamp_cell(std::floor((v - min_.y) * inv_cell_), ny_); };
  const Segment line{a, b};
  const double half_diag = cell * 0.70710678118654757 * 1.000001;
  const double ylo = std::min(a.y, b.y), yhi = std::max(a.y, b.y);
  const int x_first = cx(std::min(a.x, b.x)), x_last = cx(std::max(a.x, b.x));
  const int y_last = cy(yhi);
  for (int gy = cy(ylo); gy <= y_last; ++gy) {
    // The columns the line can enter in this row: where it crosses the row's band (the border
    // rows reach out to infinity, as clamp_cell does), one column more each side for rounding.
    // A crossing lies on the line, so its cell is among them; the test below then keeps the
    // cells the whole-box walk kept, so the answer is the same, in fewer steps.
    int from = x_first, to = x_last;
    if (a.y != b.y) {
      const double band_lo = gy == 0 ? ylo : std::max(ylo, min_.y + gy * cell);
      const double band_hi = gy == ny_ - 1 ? yhi : std::min(yhi, min_.y + (gy + 1) * cell);
      const double slope = (b.x - a.x) / (b.y - a.y);
      const double x0 = a.x + (band_lo - a.y) * slope, x1 = a.x + (band_hi - a.y) * slope;
      from = std::max(from, cx(std::min(x0, x1)) - 1);
      to = std::min(to, cx(std::max(x0, x1)) + 1);
    }
    for (int gx = from; gx <= to; ++gx) {
      if (!block_used_[block_of(gx, gy)]) {  // the rest of this block's columns hold nothing
        gx |= kBlock - 1;
        continue;
      }
      const std::size_t c = static_cast<std::size_t>(gy) * static_cast<std::size_t>(nx_) +
                            static_cast<std::size_t>(gx);
      if (start_[c] == start_[c + 1]) continue;  // most cells hold no segment
      Vec2 center{min_.x + (gx + 0.5) * cell, min_.y + (gy + 0.5) * cell};
      if (distance_to_segment(center, line) > half_diag) continue;
      for (std::uint32_t k = start_[c]; k < start_[c + 1]; ++k)
        if (segments_cross(a, b, segments_[items_[k]]) && found(items_[k])) return true;
    }
  }
  return false;
}

bool SegmentGrid::blocks(Vec2 a, Vec2 b) const {
  return find_crossing(a, b, [](std::uint32_t) { return true; });
}

bool SegmentGrid::any_near_square(Vec2 p, double r) const {
  const int x0 = clamp_cell(std::floor((p.x - r - min_.x) * inv_cell_), nx_) / kBlock;
  const int x1 = clamp_cell(std::floor((p.x + r - min_.x) * inv_cell_), nx_) / kBlock;
  const int y0 = clamp_cell(std::floor((p.y - r - min_.y) * inv_cell_), ny_) / kBlock;
  const int y1 = clamp_cell(std::floor((p.y + r - min_.y) * inv_cell_), ny_) / kBlock;
  for (int by = y0; by <= y1; ++by)
    for (int bx = x0; bx <= x1; ++bx)
      if (block_used_[static_cast<std::size_t>(by) * static_cast<std::size_t>(bx_) +
                      static_cast<std::size_t>(bx)])
        return true;
  return false;
}

void SegmentGrid::near_point(Vec2 p, double reach, std::vector<std::uint32_t>& out) const {
  out.clear();
  // A segment crossing a line from p of length <= reach comes within reach of p (computed
  // distances err by far less than the margin). Its closest point to p lies in the square of
  // half side `r` around p, and that point's cell lists it.
  const double r = reach * (1 + 1e-9) + 1e-9;
  const int x0 = clamp_cell(std::floor((p.x - r - min_.x) * inv_cell_), nx_);
  const int x1 = clamp_cell(std::floor((p.x + r - min_.x) * inv_cell_), nx_);
  const int y0 = clamp_cell(std::floor((p.y - r - min_.y) * inv_cell_), ny_);
  const int y1 = clamp_cell(std::floor((p.y + r - min_.y) * inv_cell_), ny_);
  for (int gy = y0; gy <= y1; ++gy)
    for (int gx = x0; gx <= x1; ++gx) {
      if (!block_used_[block_of(gx, gy)]) {
        gx |= kBlock - 1;
        continue;
      }
      const std::size_t c = static_cast<std::size_t>(gy) * static_cast<std::size_t>(nx_) +
                            static_cast<std::size_t>(gx);
      for (std::uint32_t k = start_[c]; k < start_[c + 1]; ++k) {
        const std::uint32_t s = items_[k];
        if (std::find(out.begin(), out.end(), s) != out.end()) continue;  // a few at most
        if (distance_to_segment(p, segments_[s]) <= r) out.push_back(s);
      }
    }
  std::sort(out.begin(), out.end());
}

bool SegmentGrid::crosses_any(Vec2 a, Vec2 b, std::span<const std::uint32_t> candidates) const {
  for (const std::uint32_t s : candidates)
    if (segments_cross(a, b, segments_[s])) return true;
  return false;
}

bool SegmentGrid::any_crossing(Vec2 a, Vec2 b,
                               const std::function<bool(std::uint32_t)>& pred) const {
  return find_crossing(a, b, pred);
}

std::size_t SegmentGrid::memory_bytes() const {
  return segments_.capacity() * sizeof(Segment) + start_.capacity() * 4 + items_.capacity() * 4 +
         block_used_.capacity();
}

double ray_circle(Vec2 o, Vec2 u, double max_t, Vec2 c, double r) {
  Vec2 m = o - c;
  double b = dot(m, u);
  double cc = dot(m, m) - r * r;
  if (cc <= 0) return 0;
  if (b > 0) return -1;
  double disc = b * b - cc;
  if (disc < 0) return -1;
  double t = -b - std::sqrt(disc);
  if (t < 0) t = 0;
  return t <= max_t ? t : -1;
}

double ray_segment(Vec2 o, Vec2 u, double max_t, const Segment& s) {
  Vec2 e = s.b - s.a;
  double denom = cross(u, e);
  if (denom == 0) return -1;  // parallel: grazing rays are treated as misses
  Vec2 w = s.a - o;
  double t = cross(w, e) / denom;
  double v = cross(w, u) / denom;
  if (t < 0 || t > max_t || v < 0 || v > 1) return -1;
  return t;
}

}  // namespace fleetsim
