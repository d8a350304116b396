// A hand-built world for testing robot parts one call at a time: kinds assembled from the
// registry exactly as the parser does (assemble_kinds), robots placed by hand, and the phases
// run in the engine's order (sense + bind for every robot, then act for every robot), without
// controllers or physics. Tests that need a whole run use an experiment and Simulation.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/thread_pool.hpp"
#include "physics/kinematics2d.hpp"
#include "plugins/builtins.hpp"
#include "robots/engine_world.hpp"
#include "robots/kinds.hpp"
#include "scenario/robot_assembly.hpp"

namespace fleetsim::testing {

/// A part declaration for a kind built by hand (parameters as the parser would pass them).
inline PartDecl make_part(const std::string& type, std::map<std::string, std::string> params = {},
                          const std::string& name = "") {
  return PartDecl{name.empty() ? type : name, type, "", Params(std::move(params)), {}};
}

struct PartScene {
  std::shared_ptr<WorldModel> model = std::make_shared<WorldModel>();
  WorldState state;
  PluginRegistry registry;
  Diagnostics diags;
  std::vector<AssembledKind> parts;
  SpatialIndex index;
  ThreadPool pool{1};
  std::unique_ptr<EngineWorld> world;
  Tick tick = 0;

  /// The built-in kinds that live in a 2D engine (e-puck = 0, foot-bot = 1, ...): the flyers'
  /// parts need a pointmass3d engine, which this scene has not.
  static std::vector<RobotKind> ground_kinds() {
    std::vector<RobotKind> kinds;
    for (RobotKind& k : builtin_kinds())
      if (!k.flies) kinds.push_back(std::move(k));
    return kinds;
  }

  /// A closed square arena of side `size` metres with `kinds` (default: the built-in ground
  /// kinds), 10 ticks per second. Parts are assembled at once.
  explicit PartScene(double size = 20, std::vector<RobotKind> kinds = ground_kinds()) {
    register_builtins(registry);
    model->arena_width_m = model->arena_height_m = size;
    const double h = size / 2;
    model->segments = {
        {{-h, -h}, {h, -h}}, {{h, -h}, {h, h}}, {{h, h}, {-h, h}}, {{-h, h}, {-h, -h}}};
    model->kinds = std::move(kinds);
    for (std::size_t k = 0; k < model->kinds.size(); ++k)
      model->kinds[k].index = static_cast<std::uint16_t>(k);
    model->controllers = {{"idle", "idle", {}}};
    model->engines = {{"k", model->arena_min(), model->arena_max()}};
    resolve_interfaces(*model, registry);
    parts = assemble_kinds(*model, state, registry, 1,
                           diags);
    EXPECT_FALSE(diags.has_errors()) << diags.str();
  }

  /// Adds a robot of kind index `kind`; heading in degrees.
  EntityId add(std::uint16_t kind, double x, double y, double heading_deg = 0) {
    world.reset();
    return state.add_robot(kind, 0, {x, y}, heading_deg * kPi / 180, 0, "r");
  }
  std::uint32_t row(EntityId id) const { return state.robot_index(id); }

  /// Rebuilds the spatial index (call after placing or moving robots).
  void ready() {
    double reach = 0;
    for (const auto& k : parts) reach = std::max(reach, k.near_reach_m);
    index.init(*model, state.robot_count(), reach);
    index.rebuild(*model, state, pool);
    world = std::make_unique<EngineWorld>(*model, state, index);
  }

  PartContext context() const { return {world.get(), tick, 0.1, model->seed, 0}; }

  /// The grid slot of a robot (what the engine passes as RobotRef::slot).
  RobotRef ref(EntityId id) const {
    const auto& order = index.robots.order();
    for (std::uint32_t s = 0; s < order.size(); ++s)
      if (order[s] == row(id)) return {row(id), s, id};
    ADD_FAILURE() << "robot " << id << " is not in the grid";
    return {row(id), 0, id};
  }

  /// Robot `id`'s sensor called `name`, sensed now (spans valid until the next call).
  SensorView sense(EntityId id, std::string_view name) {
    if (!world) ready();
    const AssembledKind& k = parts[state.robot_kind()[row(id)]];
    for (std::size_t j = 0; j < k.sensor_views.size(); ++j)
      if (k.sensor_views[j].name == name) {
        SensorView v = k.sensor_views[j];
        k.sensors[j]->sense(context(), ref(id), v);
        return v;
      }
    ADD_FAILURE() << "no sensor " << name;
    return {};
  }

  /// Robot `id`'s actuator called `name`, bound now (the controller's view of its commands).
  ActuatorView bind(EntityId id, std::string_view name) {
    if (!world) ready();
    const AssembledKind& k = parts[state.robot_kind()[row(id)]];
    for (std::size_t j = 0; j < k.actuator_views.size(); ++j)
      if (k.actuator_views[j].name == name) {
        ActuatorView v = k.actuator_views[j];
        k.actuators[j]->bind(context(), ref(id), v);
        return v;
      }
    ADD_FAILURE() << "no actuator " << name;
    return {};
  }

  /// The act phase for every robot, then the next tick.
  void act() {
    if (!world) ready();
    for (std::uint32_t i = 0; i < state.robot_count(); ++i) {
      const AssembledKind& k = parts[state.robot_kind()[i]];
      for (const auto& a : k.actuators)
        if (a->acts()) a->act(context(), {i, 0, state.robot_id()[i]});
    }
    ++tick;
  }
};

}  // namespace fleetsim::testing
