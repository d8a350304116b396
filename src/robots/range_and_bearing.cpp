#include "robots/range_and_bearing.hpp"
#include "core/det_math.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "fleetsim/controller.hpp"
#include "robots/engine_world.hpp"
#include "robots/part_geometry.hpp"

namespace fleetsim {

double rab_range_m(const RobotKind& kind) {
  for (const PartDecl& s : kind.sensors)
    if (provides(s, kRangeAndBearing)) return s.params.real("range", kRangeAndBearingDefaultRangeM);
  return 0;
}

namespace {

/// Sectors of directions for the occlusion test, and the sector of direction (x, y) != 0: a
/// pseudo-angle in [0, 4) that grows with the angle (a quarter turn per unit, exact at the
/// axes), cut in kSectors equal parts. No trigonometry; any monotone cut serves. (A power of
/// two: sector arithmetic wraps with a mask.)
constexpr int kSectors = 32;
inline int sector(double x, double y) {
  const double ax = std::abs(x), ay = std::abs(y);
  const double f = ay / (ax + ay);  // 0 on the x axis, 1 on the y axis
  // Selects, not branches: the quadrant of a neighbour is a coin toss for a predictor.
  const double t = x >= 0 ? (y >= 0 ? f : 4 - f) : (y >= 0 ? 2 - f : 2 + f);
  const int b = static_cast<int>(t * (kSectors / 4));
  return b < kSectors ? b : kSectors - 1;
}

/// Reads and checks `data_size` (both parts).
std::uint32_t read_data_size(PartSetup& setup, const char* what) {
  const auto n = setup.params().integer("data_size", kRangeAndBearingDefaultDataSize);
  if (n < 1 || n > kRangeAndBearingMaxDataSize) {
    setup.error(std::string(what) + " '" + setup.name() + "': data_size=" + std::to_string(n) +
                " is out of range (expected 1 to " + std::to_string(kRangeAndBearingMaxDataSize) +
                " bytes)");
    return 1;
  }
  return static_cast<std::uint32_t>(n);
}

ColumnHandle declare_data_column(PartSetup& setup, std::uint32_t data_size) {
  return setup.column({kRangeAndBearingDataColumn, ColumnType::kU8, data_size, true, false,
                       "range-and-bearing payload published in the last act phase (what "
                       "receivers get), bytes",
                       kRangeAndBearing});
}

class RangeAndBearingActuator final : public BatchedActuator<RangeAndBearingActuator> {
 public:
  void setup(PartSetup& setup) override {
    data_size_ = read_data_size(setup, "actuator");
    constants_[0] = data_size_;
    data_ = declare_data_column(setup, data_size_);
    command_ = setup.column({kRangeAndBearingCommandColumn, ColumnType::kU8, data_size_, true,
                             false, "range-and-bearing payload set by the controller, bytes",
                             kRangeAndBearing, false});
  }
  void describe(ActuatorView& out) const override { out.constants = constants_; }
  void bind(const PartContext& ctx, RobotRef robot, ActuatorView& out) override {
    const EngineWorld& w = engine_world(ctx);
    const std::size_t width = w.state().robots.desc(command_).width;
    out.data = {static_cast<std::uint8_t*>(w.state().robots.data(command_)) + robot.row * width,
                data_size_};
    out.constants = constants_;
  }
  void act(const PartContext& ctx, RobotRef robot) override {
    const EngineWorld& w = engine_world(ctx);
    const std::size_t width = w.state().robots.desc(command_).width;
    const std::uint8_t* from =
        static_cast<std::uint8_t*>(w.state().robots.data(command_)) + robot.row * width;
    std::copy(from, from + data_size_,
              static_cast<std::uint8_t*>(w.state().robots.data(data_)) + robot.row * width);
  }

 private:
  std::uint32_t data_size_ = 10;
  double constants_[1] = {10};
  ColumnHandle data_ = kNoColumn, command_ = kNoColumn;
};

class RangeAndBearingSensor final : public Sensor {
 public:
  void setup(PartSetup& setup) override {
    const Params& p = setup.params();
    range_ = p.real("range", kRangeAndBearingDefaultRangeM);
    if (!(range_ > 0) || !std::isfinite(range_))
      setup.error("sensor '" + setup.name() + "': range must be > 0 (metres)");
    range2_ = range_ * range_;
    blocked_ = p.boolean("blocked_by_obstacles", false);
    bodies_ = p.boolean("blocked_by_bodies", false);
    data_size_ = read_data_size(setup, "sensor");
    height_ = setup.kind().height_m;
    z_ = setup.find_column("z");
    data_ = declare_data_column(setup, data_size_);
    scratch_.resize(static_cast<std::size_t>(std::max(1, setup.workers())));
  }

  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    const EngineWorld& w = engine_world(ctx);
    std::call_once(kinds_once_, [&] { find_emitters(w.model()); });
    Scratch& sc = scratch_[static_cast<std::size_t>(ctx.worker)];
    const RobotGrid& grid = w.index().robots;
    const double* gx = grid.sorted_x().data();
    const double* gy = grid.sorted_y().data();
    const std::uint32_t* order = grid.order().data();
    const std::uint16_t* kind = w.state().robot_kind().data();
    const EntityId* ids = w.state().robot_id().data();
    const Vec2 p{gx[robot.slot], gy[robot.slot]};
    // Altitudes, when flyers are in the run: a device is at its robot's z + its kind's height.
    const double* z =
        z_ == kNoColumn ? nullptr : static_cast<const double*>(w.state().robots.data(z_));
    const double own_z = z ? z[robot.row] : 0.0;

    // 1. The grid slots within range horizontally, appended without a branch (whether a
    //    neighbour is in range is a coin toss for the branch predictor). Positions are read in
    //    slot order, contiguous; the buffer is sized once per row of cells.
    std::size_t n = 0;
    grid.for_each_run_within(p, range_, [&](std::uint32_t b, std::uint32_t e) {
      if (n + (e - b) > sc.slots.size()) sc.slots.resize(2 * (n + (e - b)) + 64);
      std::uint32_t* slots = sc.slots.data();
      const double px = p.x, py = p.y, r2 = range2_;
      const std::uint32_t self = robot.slot;
      for (std::uint32_t s = b; s < e; ++s) {
        const double dx = gx[s] - px, dy = gy[s] - py;
        slots[n] = s;
        n += static_cast<std::size_t>((dx * dx + dy * dy <= r2) & (s != self));
      }
    });
    // 2. The emitters among them, within range in 3D (the same test when heights are equal).
    sc.senders.clear();
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t s = sc.slots[k], row = order[s];
      const Emitter& e = emitters_[kind[row]];
      if (!e.emits) continue;
      const double dz = e.height_m - height_ + (z ? z[row] - own_z : 0.0);
      if (dz != 0) {
        const double dx = gx[s] - p.x, dy = gy[s] - p.y;
        if (dx * dx + dy * dy + dz * dz > range2_) continue;
      }
      sc.senders.push_back(std::uint64_t{ids[row]} << 32 | s);
    }
    // The documented order: by sender id.
    sort_by_row(sc.senders, sc.rows, sc.sorted);
    if (blocked_) {
      // The walls within range, once; a line that crosses none of them is not blocked, and
      // the few that cross one are walked through the grid as before (the same answer).
      const SegmentGrid& walls = w.index().segments;
      walls.near_point(p, range_, sc.walls);
      if (!sc.walls.empty())
        std::erase_if(sc.senders, [&](std::uint64_t rs) {
          const auto s = static_cast<std::uint32_t>(rs);
          const Vec2 q{gx[s], gy[s]};
          return walls.crosses_any(p, q, sc.walls) && w.line_blocked(p, q);
        });
    }
    if (bodies_ && !sc.senders.empty() && !(z && own_z > 0))
      drop_hidden_by_bodies(sc, grid, kind, order, z, robot.slot, p);

    // 3. Range and bearings in the receiver's frame; the payload is read in place (only the
    //    act phase writes it, so it is stable for the whole sense+control phase).
    const double theta = w.state().theta()[robot.row];
    double c, sn;
    det_sincos(theta, sn, c);
    const std::size_t width = w.state().robots.desc(data_).width;
    const std::uint8_t* payload = static_cast<std::uint8_t*>(w.state().robots.data(data_));
    // Offsets gathered into arrays, so that the bearings are computed on vectors.
    const std::size_t m = sc.senders.size();
    sc.geometry.resize(4 * m);
    double* dx = sc.geometry.data();
    double* dy = dx + m;
    double* dz = dy + m;
    double* bearing = dz + m;
    for (std::size_t k = 0; k < m; ++k) {
      const auto s = static_cast<std::uint32_t>(sc.senders[k]);
      const std::uint32_t row = order[s];
      dx[k] = gx[s] - p.x;
      dy[k] = gy[s] - p.y;
      dz[k] = emitters_[kind[row]].height_m - height_ + (z ? z[row] - own_z : 0.0);
    }
    frame_bearings(m, dx, dy, c, sn, bearing);
    sc.messages.resize(m);
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint32_t row = order[static_cast<std::uint32_t>(sc.senders[k])];
      const double dh2 = dx[k] * dx[k] + dy[k] * dy[k];
      RabMessage& msg = sc.messages[k];
      msg.sender = ids[row];
      msg.data = {payload + row * width, data_size_};
      msg.range_m = static_cast<float>(std::sqrt(dh2 + dz[k] * dz[k]));
      msg.horizontal_bearing = static_cast<float>(bearing[k]);
      msg.vertical_bearing =
          dz[k] == 0 ? 0.0f : static_cast<float>(bearing_atan2(dz[k], std::sqrt(dh2)));
    }
    out.messages = sc.messages;
    out.scalar = static_cast<float>(range_);
  }

 private:
  /// Which kinds emit, the height of their device, their radius and whether they fly: read
  /// once from the model (the parts of every kind are known only once the run is assembled).
  void find_emitters(const WorldModel& model) {
    emitters_.resize(model.kinds.size());
    for (std::size_t k = 0; k < model.kinds.size(); ++k) {
      emitters_[k].radius_m = model.kinds[k].radius_m;
      emitters_[k].radius2_m = model.kinds[k].radius_m * model.kinds[k].radius_m;
      emitters_[k].root_radius2_m = std::sqrt(emitters_[k].radius2_m);
      emitters_[k].flies = model.kinds[k].flies;
      if (model.kinds[k].in_run && !model.kinds[k].flies)
        max_body_radius_ = std::max(max_body_radius_, model.kinds[k].radius_m);
      emitters_[k].height_m = model.kinds[k].height_m;
      for (const PartDecl& a : model.kinds[k].actuators)
        if (provides(a, kRangeAndBearing)) emitters_[k].emits = true;
    }
  }

  struct Emitter {
    bool emits = false, flies = false;
    double height_m = 0, radius_m = 0;
    double radius2_m = 0, root_radius2_m = 0;  ///< radius^2, and its root (the tangents')
  };
  /// One worker's lists: valid until that worker senses its next robot.
  struct Scratch {
    std::vector<std::uint32_t> slots;    ///< grid slots within range (first n used)
    std::vector<std::uint64_t> senders;  ///< the senders: row << 32 | grid slot, sorted
    std::vector<std::uint32_t> rows;     ///< sorting scratch
    std::vector<std::uint64_t> sorted;   ///< sorting scratch
    std::vector<double> geometry;        ///< per sender: dx, dy, dz, bearing (4 arrays)
    std::vector<RabMessage> messages;
    std::vector<std::uint32_t> walls;     ///< blocked_by_obstacles: the segments within range
    std::vector<double> ox, oy, o2, or2;  ///< blocked_by_bodies: bodies that may block, their
    std::vector<double> orad, oslot;      ///< offsets, squared distance and radius, radius,
    std::vector<double> onear;            ///< grid slots, squared distance bound (first q used)
    std::vector<int> ofirst, ocount;      ///< each body's first sector and how many it spans
    std::vector<std::uint32_t> listed;    ///< the bodies listed per sector, sector after sector
  };

  /// ARGoS's occlusion check (its medium's `check_occlusions`), in fleetsim's plane: a message
  /// is lost when the segment from the receiver's centre to the sender's crosses the body of a
  /// third robot on the ground before it reaches the sender's body (ARGoS: the closest body
  /// the line between the two devices meets, the receiver's aside, is not the sender's).
  /// Flyers neither block nor are blocked. Each pair's test reads only the positions, so the
  /// result does not depend on the order of the lists, the threads or the processes.
  void drop_hidden_by_bodies(Scratch& sc, const RobotGrid& grid, const std::uint16_t* kind,
                             const std::uint32_t* order, const double* z, std::uint32_t self,
                             Vec2 p) const {
    const double* gx = grid.sorted_x().data();
    const double* gy = grid.sorted_y().data();
    // The bodies that may stand between this robot and a sender within range: those whose
    // circle reaches into the disc of the range; appended without a branch (as the senders),
    // in arrays sized once per row of cells. Per body: offset, squared distance, squared
    // radius, radius (the root of the square, as the tangents below take it), grid slot, and
    // `near`: the squared distance from the line to a sender beyond which the exact test
    // cannot find the body on it (see the senders' loop).
    std::size_t q = 0;
    grid.for_each_run_within(p, range_ + max_body_radius_, [&](std::uint32_t b, std::uint32_t e) {
      if (q + (e - b) > sc.ox.size()) {
        const std::size_t size = 2 * (q + (e - b)) + 64;
        for (std::vector<double>* v :
             {&sc.ox, &sc.oy, &sc.o2, &sc.or2, &sc.orad, &sc.oslot, &sc.onear})
          v->resize(size);
      }
      double* ox = sc.ox.data();
      double* oy = sc.oy.data();
      double* o2 = sc.o2.data();
      double* or2 = sc.or2.data();
      double* orad = sc.orad.data();
      double* oslot = sc.oslot.data();
      double* onear = sc.onear.data();
      for (std::uint32_t s = b; s < e; ++s) {
        const std::uint32_t row = order[s];
        const Emitter& k = emitters_[kind[row]];
        const double dx = gx[s] - p.x, dy = gy[s] - p.y;
        const double reach = range_ + k.radius_m;
        const double d2 = dx * dx + dy * dy;
        ox[q] = dx;
        oy[q] = dy;
        o2[q] = d2;
        or2[q] = k.radius2_m;
        orad[q] = k.root_radius2_m;
        oslot[q] = static_cast<double>(s);
        onear[q] = k.radius2_m + 1e-9 * (1 + d2);
        const bool up = k.flies || (z && z[row] > 0);
        q += static_cast<std::size_t>((s != self) & !up & !(d2 > reach * reach));
      }
    });
    const double* ox = sc.ox.data();
    const double* oy = sc.oy.data();
    const double* o2 = sc.o2.data();
    const double* or2 = sc.or2.data();
    const double* orad = sc.orad.data();
    const double* oslot = sc.oslot.data();
    const double* onear = sc.onear.data();
    // Each body is listed in the sectors of directions (seen from this robot) in which it can
    // stand on a line: between its two tangents, widened by a sector each side, so that the
    // exact test below finds every body the full scan would (the sectors only skip bodies off
    // the line). Sectors are cut in a pseudo-angle (no trigonometry), a body over this robot's
    // centre is in every sector. (A loop without branches: its roots and quotients go two at
    // a time; a body over the centre computes harmless values that are then replaced.)
    if (sc.ofirst.size() < q) {
      sc.ofirst.resize(q);
      sc.ocount.resize(q);
    }
    int* ofirst = sc.ofirst.data();
    int* ocount = sc.ocount.data();
    for (std::size_t j = 0; j < q; ++j) {
      const bool over = o2[j] <= or2[j];
      const double x = over ? 1.0 : ox[j], y = over ? 0.0 : oy[j];
      const double r = over ? 0.0 : orad[j], c = over ? 1.0 : std::sqrt(o2[j] - or2[j]);
      const int first = sector(x * c + y * r, y * c - x * r) - 1;  // the right tangent
      const int last = sector(x * c - y * r, y * c + x * r) + 1;
      ofirst[j] = over ? 0 : first;
      ocount[j] = over ? kSectors : ((last - first) & (kSectors - 1)) + 1;
    }
    std::array<std::uint32_t, kSectors + 1> start{};
    for (std::size_t j = 0; j < q; ++j)
      for (int k = 0; k < ocount[j]; ++k) ++start[((ofirst[j] + k) & (kSectors - 1)) + 1];
    for (int k = 0; k < kSectors; ++k) start[k + 1] += start[k];
    sc.listed.resize(start[kSectors]);
    std::array<std::uint32_t, kSectors> fill{};
    for (std::size_t j = 0; j < q; ++j)
      for (int k = 0; k < ocount[j]; ++k) {
        const int b = (ofirst[j] + k) & (kSectors - 1);
        sc.listed[start[b] + fill[b]++] = static_cast<std::uint32_t>(j);
      }
    std::erase_if(sc.senders, [&](std::uint64_t rs) {
      const auto s = static_cast<std::uint32_t>(rs);
      const std::uint32_t row = order[s];
      if (z && z[row] > 0) return false;  // a flyer's messages pass over the ground robots
      const double sx = gx[s] - p.x, sy = gy[s] - p.y;
      const double d2 = sx * sx + sy * sy;
      if (!(d2 > 0)) return false;
      const double sender = static_cast<double>(s);
      const int b = sector(sx, sy);
      double ux = 0, uy = 0, end = 0;
      bool ready = false;
      for (std::uint32_t k = start[b]; k < start[b + 1]; ++k) {
        const std::uint32_t j = sc.listed[k];
        if (oslot[j] == sender) continue;
        // First a bound without roots or quotients: the body's squared distance from the line
        // is cross^2 / d2 (cross = the offsets' cross product); beyond `onear` (its squared
        // radius and a margin far above the rounding of either test) the exact test below
        // cannot find it on the line, so skipping it changes no answer.
        const double cross = ox[j] * sy - oy[j] * sx;
        if (cross * cross > onear[j] * d2) continue;
        if (!ready) {
          const double d = std::sqrt(d2);
          ux = sx / d;
          uy = sy / d;
          // Where the segment enters the sender's body, from this robot's centre.
          end = d - emitters_[kind[row]].radius_m;
          if (!(end > 0)) return false;  // this robot's centre is inside the sender's body
          ready = true;
        }
        // The body's centre projected on the line (a) and its distance from it: the line is
        // inside the body between a - w and a + w, w^2 = r^2 - (o2 - a^2). That stretch meets
        // the segment's [0, end] when w^2 > 0, a + w > 0 and a - w < end (without the root).
        const double a = ox[j] * ux + oy[j] * uy;
        const double w2 = or2[j] - (o2[j] - a * a);
        const double past = a - end;
        if ((w2 > 0) & ((a >= 0) | (o2[j] < or2[j])) & ((past < 0) | (w2 > past * past)))
          return true;
      }
      return false;
    });
  }

  double range_ = 3, range2_ = 9, height_ = 0;
  ColumnHandle z_ = kNoColumn;
  bool blocked_ = false, bodies_ = false;
  double max_body_radius_ = 0;  ///< the largest radius of a ground kind in the run
  std::uint32_t data_size_ = 10;
  ColumnHandle data_ = kNoColumn;
  std::vector<Scratch> scratch_;
  std::once_flag kinds_once_;
  std::vector<Emitter> emitters_;
};

}  // namespace

std::unique_ptr<Sensor> make_range_and_bearing_sensor() {
  return std::make_unique<RangeAndBearingSensor>();
}
std::unique_ptr<Actuator> make_range_and_bearing_actuator() {
  return std::make_unique<RangeAndBearingActuator>();
}

}  // namespace fleetsim
