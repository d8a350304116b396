#include "robots/range_and_bearing.hpp"
#include "core/det_math.hpp"

#include <algorithm>
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
    if (blocked_)
      std::erase_if(sc.senders, [&](std::uint64_t rs) {
        const auto s = static_cast<std::uint32_t>(rs);
        return w.line_blocked(p, {gx[s], gy[s]});
      });

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
  /// Which kinds emit, and the height of their device: read once from the model (the parts of
  /// every kind are known only once the run is assembled).
  void find_emitters(const WorldModel& model) {
    emitters_.resize(model.kinds.size());
    for (std::size_t k = 0; k < model.kinds.size(); ++k) {
      emitters_[k].height_m = model.kinds[k].height_m;
      for (const PartDecl& a : model.kinds[k].actuators)
        if (provides(a, kRangeAndBearing)) emitters_[k].emits = true;
    }
  }

  struct Emitter {
    bool emits = false;
    double height_m = 0;
  };
  /// One worker's lists: valid until that worker senses its next robot.
  struct Scratch {
    std::vector<std::uint32_t> slots;    ///< grid slots within range (first n used)
    std::vector<std::uint64_t> senders;  ///< the senders: row << 32 | grid slot, sorted
    std::vector<std::uint32_t> rows;     ///< sorting scratch
    std::vector<std::uint64_t> sorted;   ///< sorting scratch
    std::vector<double> geometry;        ///< per sender: dx, dy, dz, bearing (4 arrays)
    std::vector<RabMessage> messages;
  };

  double range_ = 3, range2_ = 9, height_ = 0;
  ColumnHandle z_ = kNoColumn;
  bool blocked_ = false;
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
