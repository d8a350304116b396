// The core's side of the physics phase: the PhysicsWorld every engine type steps in, and the
// built-in engine types' factories.
#pragma once

#include <memory>
#include <vector>

#include "core/thread_pool.hpp"
#include "fleetsim/physics.hpp"
#include "physics/kinematics2d.hpp"
#include "world/world.hpp"

namespace fleetsim {

/// The PhysicsWorld of one process's physics phase. The built-in engines, which live inside
/// the core, also reach the model, the state and the spatial index through it (kinematics2d
/// moves robots in the grid's slot order); a plug-in engine sees only PhysicsWorld.
class CorePhysicsWorld final : public PhysicsWorld {
 public:
  CorePhysicsWorld(const WorldModel& m, WorldState& s, const SpatialIndex& i, ThreadPool& p)
      : model(m), state(s), index(i), pool(p) {}

  /// Sets up the step of engine type `type`: steps(e) is true for this type's regions that
  /// `owned` (one flag per region; null = all) names.
  void begin_type(std::uint8_t type, const std::uint8_t* owned) {
    steps_.assign(model.engines.size(), 0);
    for (std::size_t e = 0; e < model.engines.size(); ++e)
      steps_[e] = model.engines[e].type_index == type && (!owned || owned[e]);
    tick = state.tick;
    dt_s = static_cast<double>(model.tick_period_ns) / kNanosPerSecond;
  }
  /// Per region: 1 when the current type steps it here.
  const std::vector<std::uint8_t>& steps_mask() const { return steps_; }

  std::size_t robot_count() const override { return state.robot_count(); }
  void* column_data(ColumnHandle column) const override { return state.robots.data(column); }
  const KindInfo& robot_kind(std::uint32_t row) const override {
    return model.kinds[state.robot_kind()[row]];
  }
  std::uint8_t robot_region(std::uint32_t row) const override { return state.robot_engine()[row]; }
  bool steps(std::uint8_t region) const override {
    return region < steps_.size() && steps_[region];
  }
  std::span<const Segment> obstacles() const override { return model.segments; }
  void parallel_for(std::size_t n, std::size_t grain,
                    const std::function<void(std::size_t, std::size_t, int)>& f) override {
    pool.parallel_for(n, grain, f);
  }
  int workers() const override { return pool.size(); }

  /// A run split over domains: which robots this process moves, and the contact rounds
  /// (kinematics2d.hpp); null otherwise. Set by the run for the whole physics phase.
  const ContactBorders* borders = nullptr;
  /// Whether this process moves robot `row` (of a region it steps): in a run split over
  /// domains, the robots of its domain only.
  bool moves(std::uint32_t row) const {
    return !borders || borders->mover[row] == borders->process;
  }

  const WorldModel& model;
  WorldState& state;
  const SpatialIndex& index;
  ThreadPool& pool;

 private:
  std::vector<std::uint8_t> steps_;
};

/// Region r's integer parameter `name`, checked to lie in [lo, hi]; out of range it is reported
/// (`NAME=V is out of range (expected LO to HI)`) and `fallback` returned.
int engine_integer(PhysicsSetup& setup, std::size_t r, const char* name, int fallback, int lo,
                   int hi);
/// Region r's real parameter `name`, checked finite and non-negative (positive: > 0 as well);
/// otherwise reported and `fallback` returned.
double engine_real(PhysicsSetup& setup, std::size_t r, const char* name, double fallback,
                   bool positive);

/// `kinematics2d` as a PhysicsEngine (the KinematicsEngine of kinematics2d.hpp).
std::unique_ptr<PhysicsEngine> make_kinematics2d_engine();
/// `dynamics2d`: rigid bodies on Box2D (dynamics2d.cpp).
std::unique_ptr<PhysicsEngine> make_dynamics2d_engine();
/// `pointmass3d`: flyers as point masses (pointmass3d.cpp).
std::unique_ptr<PhysicsEngine> make_pointmass3d_engine();

}  // namespace fleetsim
