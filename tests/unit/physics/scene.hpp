// A small hand-built world for physics and sensor tests (no experiment file needed).
#pragma once

#include <algorithm>
#include <memory>

#include "core/thread_pool.hpp"
#include "physics/kinematics2d.hpp"
#include "robots/kinds.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim::testing {

struct Scene {
  std::shared_ptr<WorldModel> model = std::make_shared<WorldModel>();
  WorldState state;
  SpatialIndex index;
  KinematicsEngine engine;
  ThreadPool pool{1};

  /// A closed square arena of side `size` metres, one e-puck kind, 10 ticks per second.
  explicit Scene(double size = 10, int threads = 1) : pool(threads) {
    model->arena_width_m = model->arena_height_m = size;
    double h = size / 2;
    model->segments = {{{-h, -h}, {h, -h}}, {{h, -h}, {h, h}}, {{h, h}, {-h, h}}, {{-h, h}, {-h, -h}}};
    model->kinds = {epuck_kind()};
    model->controllers = {{"idle", "idle", {}}};
    model->engines = {{"k", model->arena_min(), model->arena_max()}};
  }
  EntityId add(double x, double y, double heading = 0) {
    return state.add_robot(0, 0, {x, y}, heading, 0, "r");
  }
  /// Wheel speeds, turned into a body velocity as the e-puck's differential_drive does.
  void drive(EntityId id, double left, double right) {
    auto i = state.robot_index(id);
    const double l = std::clamp(left, -0.13, 0.13), r = std::clamp(right, -0.13, 0.13);
    state.speed_cmd()[i] = (l + r) / 2;
    state.turn_cmd()[i] = (r - l) / 0.053;
  }
  void ready(std::size_t robots_hint = 0) { index.init(*model, robots_hint, 0.1); }
  void step() {
    index.rebuild(*model, state, pool);
    engine.step(*model, state, index, pool);
    state.tick++;
  }
  Vec2 pos(EntityId id) const {
    auto i = state.robot_index(id);
    return {state.x()[i], state.y()[i]};
  }
};

}  // namespace fleetsim::testing
