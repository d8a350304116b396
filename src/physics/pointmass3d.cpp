// `pointmass3d`: flying robots as point masses in 3D (ARGoS's pointmass3d, for the eye-bot).
//
// A flyer's controller sets a target velocity (world frame, m/s) and a yaw rate through its
// `quadrotor_speed` actuator (the `velocity_cmd` column, declared here). Each tick the engine
// moves the velocity toward the target by at most max_acceleration x dt (horizontal speed and
// vertical speed each capped by the kind's max_speed), then integrates position and heading.
// Flyers collide with nothing: not with each other, not with ground robots (which are in 2D
// engines: robots of different engines never collide), not with walls; they stay inside the
// arena and between the ground (z = 0, where they start) and the region's ceiling.
//
// The altitude is the `z` column (halo: other robots' sensors read it; a ground robot's
// proximity rays pass under a flyer higher than the robot). Velocities are the `body_vx`,
// `body_vy`, `body_vz` columns (shared with dynamics2d's). Each robot's step reads and writes
// its own row only, so robots run in parallel and the bits do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "physics/physics_world.hpp"

namespace fleetsim {
namespace {

struct FlightSettings {
  double max_acceleration = 2.0;
  double ceiling = 10.0;
};

class PointMass3d final : public PhysicsEngine {
 public:
  void setup(PhysicsSetup& setup) override {
    for (std::size_t r = 0; r < setup.regions().size(); ++r) {
      FlightSettings f;
      f.max_acceleration = engine_real(setup, r, "max_acceleration", 2.0, true);
      f.ceiling = engine_real(setup, r, "ceiling", 10.0, true);
      settings_.resize(std::max<std::size_t>(settings_.size(), setup.regions()[r].index + 1u));
      settings_[setup.regions()[r].index] = f;
    }
    auto column = [&](const char* name, std::uint32_t width, bool halo, bool logged,
                      const char* doc) {
      ColumnDesc d;
      d.name = name;
      d.type = ColumnType::kF64;
      d.width = width;
      d.halo = halo;
      d.logged = logged;
      d.doc = doc;
      d.owner = "pointmass3d";
      return setup.column(d);
    };
    z_ = column("z", 1, true, true, "altitude of a flyer's centre, metres (pointmass3d)");
    vx_ = column("body_vx", 1, false, false, "linear velocity along x at the end of the tick, m/s");
    vy_ = column("body_vy", 1, false, false, "linear velocity along y at the end of the tick, m/s");
    vz_ = column("body_vz", 1, false, false,
                 "vertical velocity at the end of the tick, m/s (pointmass3d)");
    cmd_ = column("velocity_cmd", 4, false, false,
                  "commanded velocity x, y, z (m/s, world frame) and yaw rate (rad/s) "
                  "(quadrotor_speed actuator)");
    x_ = setup.find_column("x");
    y_ = setup.find_column("y");
    theta_ = setup.find_column("theta");
    realization_ = setup.find_column("realization");
    contact_count_ = setup.find_column("contact_count");
  }

  std::string refuses(const KindInfo& kind) const override {
    return kind.flies ? "" : "pointmass3d simulates flyers only (expected a 2D engine for it)";
  }

  void step(PhysicsWorld& world) override {
    auto& w = dynamic_cast<CorePhysicsWorld&>(world);
    const Vec2 lo = w.model.arena_min(), hi = w.model.arena_max();
    double* x = w.column<double>(x_);
    double* y = w.column<double>(y_);
    double* theta = w.column<double>(theta_);
    double* z = w.column<double>(z_);
    double* vx = w.column<double>(vx_);
    double* vy = w.column<double>(vy_);
    double* vz = w.column<double>(vz_);
    const double* cmd = w.column<double>(cmd_);
    float* realization = w.column<float>(realization_);
    std::uint8_t* contacts = w.column<std::uint8_t>(contact_count_);
    const double dt = w.dt_s;
    const std::uint8_t* engine = w.state.robot_engine().data();
    const std::uint16_t* kinds = w.state.robot_kind().data();
    const std::uint8_t* steps = w.steps_mask().data();
    w.parallel_for(w.robot_count(), 1024, [&](std::size_t b, std::size_t e, int) {
      for (std::size_t i = b; i < e; ++i) {
        const std::uint8_t region = engine[i];
        if (!steps[region] || !w.moves(static_cast<std::uint32_t>(i))) continue;
        const FlightSettings& f = settings_[region];
        const KindInfo& kind = w.model.kinds[kinds[i]];
        const double vmax = kind.max_speed_m_per_s;
        const double* c = cmd + 4 * i;
        // The target: horizontal speed and vertical speed each within the kind's maximum.
        double tx = std::isfinite(c[0]) ? c[0] : 0, ty = std::isfinite(c[1]) ? c[1] : 0;
        const double th = std::sqrt(tx * tx + ty * ty);
        if (th > vmax) {
          tx *= vmax / th;
          ty *= vmax / th;
        }
        const double tz = std::clamp(std::isfinite(c[2]) ? c[2] : 0.0, -vmax, vmax);
        const double yaw = std::isfinite(c[3]) ? c[3] : 0.0;
        // At most max_acceleration x dt of change in velocity this tick.
        double dx = tx - vx[i], dy = ty - vy[i], dz = tz - vz[i];
        const double dv = std::sqrt(dx * dx + dy * dy + dz * dz), limit = f.max_acceleration * dt;
        if (dv > limit) {
          dx *= limit / dv;
          dy *= limit / dv;
          dz *= limit / dv;
        }
        vx[i] += dx;
        vy[i] += dy;
        vz[i] += dz;
        const double r = kind.radius_m;
        double nx = x[i] + vx[i] * dt, ny = y[i] + vy[i] * dt, nz = z[i] + vz[i] * dt;
        // The arena's walls (in x and y), the ground and the ceiling stop a flyer.
        if (nx < lo.x + r || nx > hi.x - r) {
          nx = std::clamp(nx, lo.x + r, std::max(lo.x + r, hi.x - r));
          vx[i] = 0;
        }
        if (ny < lo.y + r || ny > hi.y - r) {
          ny = std::clamp(ny, lo.y + r, std::max(lo.y + r, hi.y - r));
          vy[i] = 0;
        }
        if (nz < 0 || nz > f.ceiling) {
          nz = std::clamp(nz, 0.0, f.ceiling);
          vz[i] = 0;
        }
        x[i] = nx;
        y[i] = ny;
        z[i] = nz;
        theta[i] = wrap_angle(theta[i] + yaw * dt);
        realization[i] = 1.0f;
        contacts[i] = 0;
      }
    });
  }

 private:
  std::vector<FlightSettings> settings_;  ///< by engine (region) index
  ColumnHandle z_ = kNoColumn, vx_ = kNoColumn, vy_ = kNoColumn, vz_ = kNoColumn, cmd_ = kNoColumn,
               x_ = kNoColumn, y_ = kNoColumn, theta_ = kNoColumn, realization_ = kNoColumn,
               contact_count_ = kNoColumn;
};

}  // namespace

std::unique_ptr<PhysicsEngine> make_pointmass3d_engine() {
  return std::make_unique<PointMass3d>();
}

}  // namespace fleetsim
