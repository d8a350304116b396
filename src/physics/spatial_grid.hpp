// The spatial index every neighbour query and ray cast goes through.
//
// RobotGrid: a uniform grid over the arena, rebuilt every tick in O(N) by counting sort, so
// the robots of one cell are contiguous in memory (with a copy of their x, y and kind in that
// order: the hot loops read positions and radii from there, not through the index). Cells are at
// least as large as the longest contact (two robots closing on each other within one tick),
// so a contact query reads only the 3x3 block of cells around a point; a longer query (a
// sensor's reach) reads the block of cells its reach needs. Written by the main thread in
// `rebuild`, then read concurrently by every worker.
//
// SegmentGrid: static obstacles, indexed once at start. Each cell lists every segment that
// comes within `reach` of it, so a robot inside a cell only tests that cell's list.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim {

class ThreadPool;

/// The cell of fractional cell coordinate f among n, clamped in floating point first (a
/// position far outside the arena, or NaN, must not overflow the conversion to int).
inline int clamp_cell(double f, int n) {
  if (!(f >= 0)) return 0;
  if (f >= static_cast<double>(n)) return n - 1;
  return static_cast<int>(f);
}

/// The radius of the robot at each slot, read through its kind (2 bytes a slot instead of a
/// copied 8-byte radius): `r[s]` as with an array.
struct SlotRadius {
  const std::uint16_t* kind;
  const double* radius;  ///< per kind
  double operator[](std::size_t s) const { return radius[kind[s]]; }
};

class RobotGrid {
 public:
  /// Covers [min, max] with square cells of side >= `cell_m`; `kind_radius`: the body radius
  /// of each robot kind (sorted_r() reads it through the robots' kinds).
  void configure(Vec2 min, Vec2 max, double cell_m, std::vector<double> kind_radius);
  /// Sorts robots into cells. `kind` per robot. Within a cell, robots come in row order, or in
  /// the order of `ids` when given (rows not in id order: a process of a partitioned run, which
  /// appends the robots it takes in), so that every query visits robots in id order.
  void rebuild(std::span<const double> x, std::span<const double> y,
               std::span<const std::uint16_t> kind, ThreadPool& pool,
               std::span<const std::uint32_t> ids = {});

  /// The cell column and row of a position (inline: the grid's rebuild takes both for every
  /// robot twice, and the kernels once per query).
  int cell_x(double x) const { return clamp_cell((x - min_.x) * inv_cell_, nx_); }
  int cell_y(double y) const { return clamp_cell((y - min_.y) * inv_cell_, ny_); }
  int nx() const { return nx_; }
  int ny() const { return ny_; }
  double cell_size() const { return cell_; }

  /// The 3x3 block of cells around p as runs of contiguous slots [b[k], e[k]), one per row of
  /// cells (at most 3, some possibly empty); returns how many. For loops that take no
  /// callback (a kernel compiled for another instruction set cannot inline one).
  int near_runs(Vec2 p, std::uint32_t* b, std::uint32_t* e) const {
    const int cx = cell_x(p.x), cy = cell_y(p.y);
    return runs(cx > 0 ? cx - 1 : 0, cx + 1 < nx_ ? cx + 1 : nx_ - 1, cy > 0 ? cy - 1 : 0,
                cy + 1 < ny_ ? cy + 1 : ny_ - 1, b, e);
  }

  /// The cells that the square of half side `reach` around p touches, as runs [b[k], e[k]),
  /// one per row of cells (a superset of the robots within `reach`: for an e-puck, 16 to 25
  /// cells at 0.1 m, 9 to 16 at 5 cm, for_each_run_within's 25); returns how many. `b`
  /// and `e` hold `max_runs`; a reach needing more rows returns -1 (the caller then takes
  /// for_each_run_within).
  int runs_within(Vec2 p, double reach, std::uint32_t* b, std::uint32_t* e, int max_runs) const {
    const double r = reach * 1.000001 + 1e-9;  // rounding of p +- reach
    const int y0 = cell_y(p.y - r), y1 = cell_y(p.y + r);
    if (y1 - y0 + 1 > max_runs) return -1;
    return runs(cell_x(p.x - r), cell_x(p.x + r), y0, y1, b, e);
  }

  /// Calls f(slot) for every slot of the 3x3 block of cells around p, in a fixed order
  /// (cells row by row, robots by index within a cell). slot indexes sorted_*() arrays.
  template <class F>
  void for_each_near(Vec2 p, F&& f) const {
    std::uint32_t b[3], e[3];
    const int runs = near_runs(p, b, e);
    for (int k = 0; k < runs; ++k)
      for (std::uint32_t s = b[k]; s < e[k]; ++s) f(s);
  }

  /// Calls f(slot) for every slot of the cells within `reach` of p (a square block of cells,
  /// row by row): for queries longer than a cell, such as range-and-bearing. A superset.
  template <class F>
  void for_each_within(Vec2 p, double reach, F&& f) const {
    for_each_run_within(p, reach, [&](std::uint32_t b, std::uint32_t e) {
      for (std::uint32_t s = b; s < e; ++s) f(s);
    });
  }

  /// The same slots as for_each_within, as runs: f(b, e) for each row of cells, whose slots
  /// are the contiguous [b, e) (a caller can then size its buffers once per run).
  template <class F>
  void for_each_run_within(Vec2 p, double reach, F&& f) const {
    const int k = 1 + static_cast<int>(reach * inv_cell_);
    int cx = cell_x(p.x), cy = cell_y(p.y);
    int y0 = cy > k ? cy - k : 0, y1 = cy + k < ny_ ? cy + k : ny_ - 1;
    int x0 = cx > k ? cx - k : 0, x1 = cx + k < nx_ ? cx + k : nx_ - 1;
    for (int gy = y0; gy <= y1; ++gy) {
      std::size_t row = static_cast<std::size_t>(gy) * static_cast<std::size_t>(nx_);
      std::uint32_t b = start_[row + static_cast<std::size_t>(x0)];
      std::uint32_t e = start_[row + static_cast<std::size_t>(x1) + 1];
      if (b < e) f(b, e);
    }
  }

  /// Robot index of a slot, and the robot's position, kind and radius in slot order.
  const std::vector<std::uint32_t>& order() const { return order_; }
  const std::vector<double>& sorted_x() const { return sx_; }
  const std::vector<double>& sorted_y() const { return sy_; }
  const std::vector<std::uint16_t>& sorted_kind() const { return sk_; }
  SlotRadius sorted_r() const { return {sk_.data(), kind_radius_.data()}; }
  std::size_t memory_bytes() const;

 private:
  /// Cells [x0, x1] x [y0, y1] as one run of slots per row.
  int runs(int x0, int x1, int y0, int y1, std::uint32_t* b, std::uint32_t* e) const {
    int k = 0;
    for (int gy = y0; gy <= y1; ++gy, ++k) {
      std::size_t row = static_cast<std::size_t>(gy) * static_cast<std::size_t>(nx_);
      b[k] = start_[row + static_cast<std::size_t>(x0)];
      e[k] = start_[row + static_cast<std::size_t>(x1) + 1];
    }
    return k;
  }

  Vec2 min_;
  double cell_ = 1, inv_cell_ = 1;
  int nx_ = 1, ny_ = 1;
  std::vector<std::uint32_t> start_;  ///< per cell + 1: first slot
  std::vector<std::uint32_t> order_;  ///< slot -> robot index
  std::vector<double> sx_, sy_;
  std::vector<std::uint16_t> sk_;
  std::vector<double> kind_radius_;
  std::vector<std::uint32_t> block_total_;  ///< prefix of the cell ranges' totals (scratch)
};

class SegmentGrid {
 public:
  /// Indexes `segments`, listing in each cell every segment within `reach` of the cell.
  void build(const std::vector<Segment>& segments, Vec2 min, Vec2 max, double cell_m, double reach);
  /// Segment indices relevant to point p (inline: the engine and the rays ask for every robot
  /// several times a tick, and the answer is most often empty).
  std::span<const std::uint32_t> near(Vec2 p) const {
    const int cx = clamp_cell((p.x - min_.x) * inv_cell_, nx_);
    const int cy = clamp_cell((p.y - min_.y) * inv_cell_, ny_);
    const std::size_t c =
        static_cast<std::size_t>(cy) * static_cast<std::size_t>(nx_) + static_cast<std::size_t>(cx);
    return {items_.data() + start_[c], items_.data() + start_[c + 1]};
  }
  /// True when the segment a-b crosses an indexed segment (walks the cells along a-b).
  bool blocks(Vec2 a, Vec2 b) const;
  /// False when no indexed segment comes near the square of half side `r` around p (then no
  /// line inside it is blocked); true may still mean none does. A few bytes read.
  bool any_near_square(Vec2 p, double r) const;
  /// The indexed segments that come within `reach` of p, each once, ascending, into `out`:
  /// every segment that a line from p no longer than `reach` crosses is among them (the test
  /// keeps a margin for rounding). A sensor asks once per robot, then tests its lines against
  /// these few (crosses_any) before walking the cells (blocks).
  void near_point(Vec2 p, double reach, std::vector<std::uint32_t>& out) const;
  /// Whether a-b crosses or touches one of `candidates` (the test blocks() applies to each
  /// segment of the cells it walks): false means blocks(a, b) is false when `candidates` is
  /// near_point(a, reach) and |b - a| <= reach.
  bool crosses_any(Vec2 a, Vec2 b, std::span<const std::uint32_t> candidates) const;
  /// Whether `pred(index)` holds for an indexed segment the segment a-b crosses; stops at the
  /// first (a segment may be asked more than once: it is listed in every cell it enters).
  bool any_crossing(Vec2 a, Vec2 b, const std::function<bool(std::uint32_t)>& pred) const;
  const std::vector<Segment>& segments() const { return segments_; }
  std::size_t memory_bytes() const;

 private:
  std::vector<Segment> segments_;
  Vec2 min_;
  double inv_cell_ = 1;
  int nx_ = 1, ny_ = 1;
  std::vector<std::uint32_t> start_;
  std::vector<std::uint32_t> items_;
  /// 1 for each block of kBlock x kBlock cells (row-major, bx_ blocks a row) that lists a
  /// segment in one of its cells; built with the lists, read by the line walks.
  static constexpr int kBlock = 8;
  int bx_ = 1;
  std::vector<std::uint8_t> block_used_;
  std::size_t block_of(int gx, int gy) const {
    return static_cast<std::size_t>(gy / kBlock) * static_cast<std::size_t>(bx_) +
           static_cast<std::size_t>(gx / kBlock);
  }
  /// Walks the cells along a-b and calls `found(index)` for each indexed segment a-b crosses,
  /// until it returns true; returns whether one did (blocks, any_crossing).
  template <class Found>
  bool find_crossing(Vec2 a, Vec2 b, Found&& found) const;
};

/// Distance from p to segment s, and the closest point.
double distance_to_segment(Vec2 p, const Segment& s, Vec2* closest = nullptr);

/// Ray o + t u (|u| = 1, t in [0, max_t]) against a circle; returns t of the first hit or a
/// negative number for none. A ray starting inside the circle hits at 0.
double ray_circle(Vec2 o, Vec2 u, double max_t, Vec2 c, double r);
/// Ray against a segment; returns t or negative.
double ray_segment(Vec2 o, Vec2 u, double max_t, const Segment& s);

}  // namespace fleetsim
