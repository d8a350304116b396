#include "scenario/robot_plan.hpp"

#include <algorithm>
#include <cmath>

#include "core/hash.hpp"
#include "fleetsim/random.hpp"
#include "physics/kinematics2d.hpp"
#include "physics/spatial_grid.hpp"
#include "scenario/placement.hpp"

namespace fleetsim {

int TileGrid::tile_x(double x) const {
  return std::clamp(static_cast<int>(std::floor((x - lo.x) / side)), 0, nx - 1);
}
int TileGrid::tile_y(double y) const {
  return std::clamp(static_cast<int>(std::floor((y - lo.y) / side)), 0, ny - 1);
}

namespace {

/// The share of a tile's part of a box where a robot of radius r may stand: 1 without
/// obstacles, else the share of an 8 x 8 lattice of points that lie, with the four points r
/// away along the axes, outside every obstacle.
double free_share(const WorldModel& m, Vec2 a, Vec2 b, double r) {
  if (m.bitmap_width == 0 && m.boxes.empty()) return 1;
  int free = 0;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 8; ++i) {
      const Vec2 p{a.x + (b.x - a.x) * (i + 0.5) / 8, a.y + (b.y - a.y) * (j + 0.5) / 8};
      free += m.inside_obstacle(p) || m.inside_obstacle({p.x - r, p.y}) ||
                      m.inside_obstacle({p.x + r, p.y}) || m.inside_obstacle({p.x, p.y - r}) ||
                      m.inside_obstacle({p.x, p.y + r})
                  ? 0
                  : 1;
    }
  return free / 64.0;
}

/// A tile's colour: the parity of its column and row. Tiles of one colour never touch.
int colour(int tx, int ty) {
  return (tx & 1) | ((ty & 1) << 1);
}

/// Splits a distribute's count over the tiles of its range: a bisection tree over the range,
/// each node's robots shared between its halves in proportion to their weights (rounded by a
/// draw from the node's own stream), the leaves numbered in the tree's order.
class Splitter {
 public:
  Splitter(DistributePlan& d, std::uint64_t seed, std::vector<double> weights)
      : d_(d), seed_(seed), w_(std::move(weights)) {
    // Sparse: the robots' discs cover less than a twentieth of the free area.
    double free = 0;
    for (double w : w_) free += w;
    binomial_ = static_cast<double>(d.count) * kPi * d.radius * d.radius < 0.05 * free;
    eps_ = 1e-9 * free;
    // Summed weights: sum_[(y) * (nx + 1) + x] over the tiles below x and y.
    const auto nx = static_cast<std::size_t>(d.nx), ny = static_cast<std::size_t>(d.ny);
    sum_.assign((nx + 1) * (ny + 1), 0.0);
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x)
        sum_[(y + 1) * (nx + 1) + x + 1] = w_[y * nx + x] + sum_[y * (nx + 1) + x + 1] +
                                           sum_[(y + 1) * (nx + 1) + x] - sum_[y * (nx + 1) + x];
  }
  double weight(int x0, int y0, int x1, int y1) const {
    const auto w = static_cast<std::size_t>(d_.nx) + 1;
    auto s = [&](int x, int y) {
      return sum_[static_cast<std::size_t>(y) * w + static_cast<std::size_t>(x)];
    };
    return s(x1, y1) - s(x0, y1) - s(x1, y0) + s(x0, y0);
  }
  void split(int x0, int y0, int x1, int y1, std::uint64_t n, std::int64_t key) {
    if (n == 0) return;
    if (x1 - x0 == 1 && y1 - y0 == 1) {
      const auto t = static_cast<std::size_t>(y0) * static_cast<std::size_t>(d_.nx) +
                     static_cast<std::size_t>(x0);
      d_.count_of[t] = static_cast<std::uint32_t>(n);
      d_.first_of[t] = static_cast<std::uint32_t>(next_);
      d_.order.push_back(static_cast<std::uint32_t>(t));
      next_ += n;
      return;
    }
    const bool across_x = (x1 - x0) >= (y1 - y0);
    const int mid = across_x ? x0 + (x1 - x0) / 2 : y0 + (y1 - y0) / 2;
    // (Summed weights cancel: what is within rounding of the whole's total is none.)
    auto clean = [&](double w) { return w > eps_ ? w : 0.0; };
    const double wl = clean(across_x ? weight(x0, y0, mid, y1) : weight(x0, y0, x1, mid));
    const double wr = clean(across_x ? weight(mid, y0, x1, y1) : weight(x0, mid, x1, y1));
    std::uint64_t left = n;
    if (wl + wr > 0) {
      const double p = wl / (wl + wr);
      CounterRng rng(seed_, static_cast<EntityId>(d_.index), -key, RandomStream::kPlacement);
      if (binomial_) {
        // Each robot falls in either half as a uniform draw over the region would put it: the
        // tiles' counts are those of independent uniform positions (multinomial).
        const auto below =
            p >= 1 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(std::ldexp(p, 64));
        left = 0;
        for (std::uint64_t i = 0; i < n; ++i) left += rng.next() < below ? 1 : 0;
        if (p >= 1) left = n;
      } else {
        // A crowded placement: shares in proportion to the free area, so that no tile is much
        // denser than the region and every tile can hold its robots.
        const double share = static_cast<double>(n) * p;
        left = std::min<std::uint64_t>(n, static_cast<std::uint64_t>(std::floor(share)));
        if (left < n && rng.uniform() < share - static_cast<double>(left)) ++left;
      }
    }
    if (across_x) {
      split(x0, y0, mid, y1, left, 2 * key);
      split(mid, y0, x1, y1, n - left, 2 * key + 1);
    } else {
      split(x0, y0, x1, mid, left, 2 * key);
      split(x0, mid, x1, y1, n - left, 2 * key + 1);
    }
  }

 private:
  DistributePlan& d_;
  std::uint64_t seed_;
  bool binomial_ = true;
  double eps_ = 0;
  std::vector<double> w_, sum_;
  std::uint64_t next_ = 0;
};

}  // namespace

std::string too_many_placement_tries(std::int64_t limit) {
  return "placing the robots takes more than " + std::to_string(limit) +
         " random tries in all, this check's limit (expected fewer robots)";
}

bool set_robot_leds(const WorldModel& m, WorldState& st, std::uint16_t k, std::uint32_t row,
                    Color colour) {
  for (const auto& a : m.kinds[k].actuators) {
    if (a.interface != "leds") continue;
    for (const std::string& col : {a.name, a.name + "_cmd"}) {
      const ColumnHandle h = st.robots.find(col);
      if (h == kNoColumn) continue;
      const std::size_t width = st.robots.desc(h).width;
      auto leds = st.robots.span<Color>(h);
      const auto count = static_cast<std::size_t>(a.params.integer("count", 1));
      for (std::size_t i = 0; i < count && i < width; ++i) leds[row * width + i] = colour;
    }
    return true;
  }
  return false;
}

void RobotPlan::plan(const WorldModel& m) {
  const Vec2 lo = m.arena_min(), hi = m.arena_max();
  // Tiles of 8 to 128 robots of the densest placement, and never narrower than two of the
  // largest robots and their skin: then a robot can touch only robots of its own tile and of
  // the eight around it.
  const double rmax = m.max_radius_m();
  const double narrowest = std::max(2 * rmax + 4 * kSkin + 1e-9, 1e-3);
  double side = std::max({hi.x - lo.x, hi.y - lo.y, 1e-3});
  double swarm = 0;
  for (const DistributePlan& d : distributes) swarm += static_cast<double>(d.count);
  for (const DistributePlan& d : distributes) {
    const double area = (d.hi.x - d.lo.x + 2 * d.radius) * (d.hi.y - d.lo.y + 2 * d.radius);
    const auto n = static_cast<double>(d.count);
    // A swarm whose discs cover a twentieth of its region or more: tiles of 128 robots, whose
    // counts vary little, so that none is much denser than the region. A sparser one: a 256th
    // of the swarm (8 to 128 robots), fine enough to balance the domains of a run on several
    // processes.
    const bool crowded = n * kPi * d.radius * d.radius >= 0.05 * area;
    const double per_tile = crowded ? 128.0 : std::clamp(swarm / 256, 8.0, 128.0);
    side = std::min(side, std::sqrt(per_tile * area / n));
  }
  side = std::max(side, narrowest);
  auto cells = [&](double extent) { return std::max(1.0, std::ceil(extent / side)); };
  while (cells(hi.x - lo.x) * cells(hi.y - lo.y) > 64e6) side *= 1.5;
  grid = TileGrid{lo, side, static_cast<int>(cells(hi.x - lo.x)),
                  static_cast<int>(cells(hi.y - lo.y))};
  for (DistributePlan& d : distributes) {
    d.tx0 = grid.tile_x(d.lo.x);
    d.ty0 = grid.tile_y(d.lo.y);
    d.nx = grid.tile_x(d.hi.x) - d.tx0 + 1;
    d.ny = grid.tile_y(d.hi.y) - d.ty0 + 1;
    const std::size_t n = static_cast<std::size_t>(d.nx) * static_cast<std::size_t>(d.ny);
    std::vector<double> w(n);
    for (int y = 0; y < d.ny; ++y)
      for (int x = 0; x < d.nx; ++x) {
        const Vec2 a{std::max(d.lo.x, grid.x_at(d.tx0 + x)),
                     std::max(d.lo.y, grid.y_at(d.ty0 + y))};
        const Vec2 b{std::min(d.hi.x, grid.x_at(d.tx0 + x + 1)),
                     std::min(d.hi.y, grid.y_at(d.ty0 + y + 1))};
        const double area = std::max(0.0, b.x - a.x) * std::max(0.0, b.y - a.y);
        w[static_cast<std::size_t>(y) * static_cast<std::size_t>(d.nx) +
          static_cast<std::size_t>(x)] = area > 0 ? area * free_share(m, a, b, d.radius) : 0;
      }
    d.count_of.assign(n, 0);
    d.first_of.assign(n, 0);
    d.order.clear();
    Splitter(d, seed, std::move(w)).split(0, 0, d.nx, d.ny, static_cast<std::uint64_t>(d.count), 1);
  }
}

std::size_t RobotPlan::total() const {
  std::size_t n = robots.size();
  for (const DistributePlan& d : distributes) n += static_cast<std::size_t>(d.count);
  return n;
}

std::vector<std::uint64_t> RobotPlan::tile_counts() const {
  std::vector<std::uint64_t> c(grid.tiles(), 0);
  for (const PlannedRobot& r : robots) ++c[grid.at(grid.tile_x(r.p.x), grid.tile_y(r.p.y))];
  for (const DistributePlan& d : distributes)
    for (std::uint32_t t : d.order) c[grid.at(d.tile_x(t), d.tile_y(t))] += d.count_of[t];
  return c;
}

std::uint64_t RobotPlan::fingerprint() const {
  Hasher h;
  h.word(seed);
  h.real(grid.side);
  for (const PlannedRobot& r : robots) {
    h.word(r.id);
    h.word((std::uint64_t{r.kind} << 32) | r.controller);
    h.real(r.p.x);
    h.real(r.p.y);
    h.real(r.heading);
    h.text(r.name);
  }
  for (const DistributePlan& d : distributes) {
    h.word(d.first_id);
    h.word(static_cast<std::uint64_t>(d.count));
    h.word((std::uint64_t{d.kind} << 32) | d.controller);
    h.real(d.lo.x);
    h.real(d.lo.y);
    h.real(d.hi.x);
    h.real(d.hi.y);
    h.text(d.prefix);
    h.word(static_cast<std::uint64_t>(d.tries));
  }
  return h.value();
}

void RobotPlan::for_each_run(
    const std::function<void(EntityId, std::uint32_t, std::size_t)>& f) const {
  for (const DistributePlan& d : distributes)
    for (std::uint32_t t : d.order)
      f(d.first_id + d.first_of[t], d.count_of[t], grid.at(d.tile_x(t), d.tile_y(t)));
}

bool RobotPlan::place(const WorldModel& m, WorldState& st, const std::vector<std::uint8_t>* wanted,
                      Diagnostics& diags) const {
  // The tiles to place: all, or those wanted and those they wait for (their neighbours of
  // lower colours, and theirs: at most three tiles away).
  std::vector<std::uint8_t> need(grid.tiles(), 1);
  if (wanted) {
    need = *wanted;
    for (int c = 3; c > 0; --c)
      for (int ty = 0; ty < grid.ny; ++ty)
        for (int tx = 0; tx < grid.nx; ++tx) {
          if (colour(tx, ty) != c || !need[grid.at(tx, ty)]) continue;
          for (int y = std::max(ty - 1, 0); y <= std::min(ty + 1, grid.ny - 1); ++y)
            for (int x = std::max(tx - 1, 0); x <= std::min(tx + 1, grid.nx - 1); ++x)
              if (colour(x, y) < c) need[grid.at(x, y)] = 1;
        }
  }
  auto in_range = [](const DistributePlan& d, int tx, int ty) {
    return tx >= d.tx0 && tx < d.tx0 + d.nx && ty >= d.ty0 && ty < d.ty0 + d.ny;
  };
  auto local = [](const DistributePlan& d, int tx, int ty) {
    return static_cast<std::size_t>(ty - d.ty0) * static_cast<std::size_t>(d.nx) +
           static_cast<std::size_t>(tx - d.tx0);
  };

  // Where each distribute's robots of the tiles placed go (slot_of: a tile's first slot).
  struct Placed {
    Vec2 p;
    double heading;
  };
  std::vector<std::vector<Placed>> placed(distributes.size());
  std::vector<std::vector<std::uint32_t>> slot_of(distributes.size());
  std::size_t bodies = robots.size();
  for (std::size_t k = 0; k < distributes.size(); ++k) {
    const DistributePlan& d = distributes[k];
    slot_of[k].assign(static_cast<std::size_t>(d.nx) * static_cast<std::size_t>(d.ny), 0);
    std::uint32_t held = 0;
    for (int ty = d.ty0; ty < d.ty0 + d.ny; ++ty)
      for (int tx = d.tx0; tx < d.tx0 + d.nx; ++tx)
        if (need[grid.at(tx, ty)]) {
          slot_of[k][local(d, tx, ty)] = held;
          held += d.count_of[local(d, tx, ty)];
        }
    placed[k].resize(held);
    bodies += held;
  }
  Placement placement(m, m.max_radius_m(), bodies);
  placement.reserve(bodies);
  for (std::size_t i = 0; i < robots.size(); ++i)
    placement.add(robots[i].p, robots[i].kind, static_cast<std::uint32_t>(i));

  // Tile by tile in colour order; in a tile, the distributes in the file's order.
  std::int64_t tries_so_far = 0;
  for (int c = 0; c < 4; ++c)
    for (int ty = c >> 1; ty < grid.ny; ty += 2)
      for (int tx = c & 1; tx < grid.nx; tx += 2) {
        if (!need[grid.at(tx, ty)]) continue;
        for (std::size_t k = 0; k < distributes.size(); ++k) {
          const DistributePlan& d = distributes[k];
          if (!in_range(d, tx, ty)) continue;
          const std::size_t t = local(d, tx, ty);
          if (d.count_of[t] == 0) continue;
          // The tile's part of the box; a draw on its far edge (rounding) is drawn again, so
          // every robot lies in its tile (the domains of a partitioned run cut along tiles).
          const Vec2 a{std::max(d.lo.x, grid.x_at(tx)), std::max(d.lo.y, grid.y_at(ty))};
          const double bx = grid.x_at(tx + 1), by = grid.y_at(ty + 1);
          const Vec2 b{std::min(d.hi.x, bx), std::min(d.hi.y, by)};
          // (A tile's stream: its index. A placement of one tile draws what the whole-region
          // placement before tiles drew, robot by robot.)
          CounterRng rng(seed, static_cast<EntityId>(d.index),
                         static_cast<std::int64_t>(grid.at(tx, ty)), RandomStream::kPlacement);
          for (std::uint32_t i = 0; i < d.count_of[t]; ++i) {
            bool done = false;
            for (std::int64_t attempt = 0; attempt < d.tries && !done; ++attempt) {
              if (max_tries && ++tries_so_far > *max_tries) {
                diags.error(d.where, too_many_placement_tries(*max_tries));
                return false;
              }
              const Vec2 p{rng.uniform(a.x, b.x), rng.uniform(a.y, b.y)};
              const double heading = rng.uniform(-kPi, kPi);
              if (p.x >= bx || p.y >= by) continue;
              if (!placement.check(p, d.radius, robots).empty()) continue;
              placement.add(p, d.kind, kNoIndex);
              placed[k][slot_of[k][t] + i] = {p, heading};
              done = true;
            }
            if (!done) {
              // The tile is nearly full: a scan of a fine lattice over it, from a drawn start,
              // takes the first free spot (a dense placement then fills holes that random
              // draws rarely hit, as a placement over the whole region would by chance).
              const double step = std::max(d.radius / 2, std::max(b.x - a.x, b.y - a.y) / 512);
              const auto cols =
                  static_cast<std::uint64_t>(std::max(1.0, std::floor((b.x - a.x) / step)));
              const auto rows =
                  static_cast<std::uint64_t>(std::max(1.0, std::floor((b.y - a.y) / step)));
              const std::uint64_t spots = cols * rows, from = rng.below(spots);
              for (std::uint64_t j = 0; j < spots && !done; ++j) {
                if (max_tries && ++tries_so_far > *max_tries) {
                  diags.error(d.where, too_many_placement_tries(*max_tries));
                  return false;
                }
                const std::uint64_t q = (from + j) % spots;
                const Vec2 p{a.x + (static_cast<double>(q % cols) + 0.5) * step,
                             a.y + (static_cast<double>(q / cols) + 0.5) * step};
                if (p.x >= bx || p.y >= by || !placement.check(p, d.radius, robots).empty())
                  continue;
                placement.add(p, d.kind, kNoIndex);
                placed[k][slot_of[k][t] + i] = {p, rng.uniform(-kPi, kPi)};
                done = true;
              }
            }
            if (!done) {
              diags.error(
                  d.where,
                  "could not place robot " + std::to_string(d.first_of[t] + i + 1) + " of " +
                      std::to_string(d.count) + " after " + std::to_string(d.tries) +
                      " random tries and a scan: the part of the region around (" +
                      std::to_string(0.5 * (a.x + b.x)) + ", " + std::to_string(0.5 * (a.y + b.y)) +
                      ") is full (expected fewer robots, a larger region, or a higher "
                      "max_tries)");
              return false;
            }
          }
          // Ids follow space within the tile too: strips of about 2,500 robots of the
          // distribute, left to right within a strip, so neighbours in the arena are neighbours
          // in memory (every column and the spatial grid are in id order).
          const double rows_per_m = static_cast<double>(d.count) / (d.hi.y - d.lo.y + 2 * d.radius);
          const double strip = std::max(4 * d.radius, 2500.0 / std::max(rows_per_m, 1e-9));
          const double base = d.lo.y - d.radius;
          auto first = placed[k].begin() + slot_of[k][t];
          std::stable_sort(first, first + d.count_of[t], [&](const Placed& u, const Placed& v) {
            const auto su = static_cast<std::int64_t>((u.p.y - base) / strip);
            const auto sv = static_cast<std::int64_t>((v.p.y - base) / strip);
            if (su != sv) return su < sv;
            return u.p.x < v.p.x;
          });
        }
      }

  // Into the world, in id order: the robots placed by hand and the distributes' runs.
  std::size_t adding = robots.size();
  for (std::size_t k = 0; k < distributes.size(); ++k)
    for (std::uint32_t t : distributes[k].order)
      if (!wanted || (*wanted)[grid.at(distributes[k].tile_x(t), distributes[k].tile_y(t))])
        adding += distributes[k].count_of[t];
  st.robots.reserve(st.robot_count() + adding);
  const std::size_t first_row = st.robot_count();
  auto wants = [&](Vec2 p) {
    return !wanted || (*wanted)[grid.at(grid.tile_x(p.x), grid.tile_y(p.y))];
  };
  std::size_t r = 0;
  for (std::size_t k = 0; k <= distributes.size(); ++k) {
    const EntityId until = k < distributes.size() ? distributes[k].first_id : ~EntityId{0};
    for (; r < robots.size() && robots[r].id < until; ++r) {
      const PlannedRobot& pr = robots[r];
      if (!wants(pr.p)) continue;
      st.add_robot_at(pr.id, pr.kind, pr.controller, pr.p, pr.heading, pr.tag, pr.name);
      if (pr.led)
        set_robot_leds(m, st, pr.kind, static_cast<std::uint32_t>(st.robot_count() - 1), *pr.led);
    }
    if (k == distributes.size()) break;
    const DistributePlan& d = distributes[k];
    for (std::uint32_t t : d.order) {
      const int tx = d.tile_x(t), ty = d.tile_y(t);
      if (wanted && !(*wanted)[grid.at(tx, ty)]) continue;
      for (std::uint32_t i = 0; i < d.count_of[t]; ++i) {
        const Placed& pl = placed[k][slot_of[k][t] + i];
        const std::uint32_t number = d.first_of[t] + i;
        st.add_robot_at(d.first_id + number, d.kind, d.controller, pl.p, pl.heading, d.tag,
                        d.prefix + std::to_string(number));
      }
    }
  }
  EntityId end = 0;
  if (!robots.empty()) end = robots.back().id + 1;
  if (!distributes.empty())
    end = std::max(end,
                   distributes.back().first_id + static_cast<EntityId>(distributes.back().count));
  st.skip_robot_ids_to(end);
  // The engines own the robots in their regions from the start.
  auto engine = st.robot_engine();
  auto x = st.x(), y = st.y();
  auto kind = st.robot_kind();
  for (std::size_t i = first_row; i < st.robot_count(); ++i)
    engine[i] = static_cast<std::uint8_t>(m.engine_at({x[i], y[i]}, kind[i]));
  return true;
}

}  // namespace fleetsim
