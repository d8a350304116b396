// fleetsim public SDK: plug-ins (controllers, loop functions, ...) and their registry.
//
// Built-in plug-ins are listed explicitly in one place (src/plugins/builtins.cpp); out-of-tree
// plug-ins live in a shared library that exports two C functions:
//
//   extern "C" int fleetsim_plugin_abi_version() { return FLEETSIM_PLUGIN_ABI_VERSION; }
//   extern "C" void fleetsim_register_plugins(fleetsim::PluginRegistry& registry) { ... }
//
// and is named in the experiment file: <plugins><library path="libmine.so"/></plugins>.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fleetsim/controller.hpp"
#include "fleetsim/ensemble.hpp"
#include "fleetsim/layer.hpp"
#include "fleetsim/loop_functions.hpp"
#include "fleetsim/object_behaviour.hpp"
#include "fleetsim/parts.hpp"
#include "fleetsim/physics.hpp"
#include "fleetsim/reward.hpp"

/// Bumped whenever a public SDK type changes layout or meaning.
#define FLEETSIM_PLUGIN_ABI_VERSION 14

namespace fleetsim {

/// The kinds of plug-in.
enum class PluginKind {
  kSensor,
  kActuator,
  kController,
  kPhysicsEngine,
  kLoopFunctions,
  kLogWriter,
  kEnsemble,
  kObjectBehaviour,
  kReward,
  kLayer
};
const char* to_string(PluginKind kind);

/// One documented parameter (an XML attribute of the element that instantiates the plug-in).
struct ParamDoc {
  std::string name;
  std::string type;           ///< "real", "integer", "string", "bool"
  std::string default_value;  ///< "" = required
  std::string doc;            ///< meaning and unit
};

/// What every registry entry carries: `fleetsim list` prints it; a test checks it is filled.
struct PluginInfo {
  PluginKind kind = PluginKind::kController;
  std::string name;
  std::string description;  ///< one line
  std::vector<ParamDoc> params;
  std::string origin = "built-in";  ///< "built-in" or the shared library's path
  /// Sensors and actuators: the interface this implementation provides (e.g. "proximity" for
  /// both the exact and the noisy proximity sensor); "" = the same as `name`. A part's default
  /// name in a kind is its interface, and controllers (and the Lua API) find parts by it.
  std::string interface;
};

using ControllerFactory = std::function<std::unique_ptr<Controller>()>;
using LoopFunctionsFactory = std::function<std::unique_ptr<LoopFunctions>()>;
using SensorFactory = std::function<std::unique_ptr<Sensor>()>;
using ActuatorFactory = std::function<std::unique_ptr<Actuator>()>;
using PhysicsEngineFactory = std::function<std::unique_ptr<PhysicsEngine>()>;
using EnsembleFactory = std::function<std::unique_ptr<Ensemble>()>;
using ObjectBehaviourFactory = std::function<std::unique_ptr<ObjectBehaviour>()>;
using RewardFactory = std::function<std::unique_ptr<Reward>()>;
using LayerFactory = std::function<std::unique_ptr<Layer>()>;

/// How many instances of a controller a run makes.
enum class ControllerScope {
  kPerRobot,  ///< one per robot: the controller may keep per-robot state (the default)
  kShared,    ///< one per declaration and kind, stepped for all its robots concurrently
};

/// The registry of every plug-in known to a run. Built-ins are added first, then each library
/// of the experiment in file order; a duplicate name is an error.
class PluginRegistry {
 public:
  /// Registers a controller; `factory` makes one instance per robot (or per kind, shared).
  void add_controller(PluginInfo info, ControllerFactory factory,
                      ControllerScope scope = ControllerScope::kPerRobot);
  /// Registers a sensor type; `factory` makes one instance per kind that lists it.
  void add_sensor(PluginInfo info, SensorFactory factory);
  /// Registers an actuator type; `factory` makes one instance per kind that lists it.
  void add_actuator(PluginInfo info, ActuatorFactory factory);
  /// Registers loop functions; `factory` makes one instance per run.
  void add_loop_functions(PluginInfo info, LoopFunctionsFactory factory);
  /// Registers a physics engine type (fleetsim/physics.hpp); `factory` makes one instance per
  /// run that declares engines of the type. Its ParamDocs are the attributes of its <physics>
  /// elements besides `id` and `region`.
  void add_physics_engine(PluginInfo info, PhysicsEngineFactory factory);
  /// Registers an ensemble type (fleetsim/ensemble.hpp); `factory` makes one instance per
  /// <ensemble> element of the type. Its ParamDocs are the element's other attributes.
  void add_ensemble(PluginInfo info, EnsembleFactory factory);
  /// Registers an object behaviour (fleetsim/object_behaviour.hpp); `factory` makes one
  /// instance per object that names a <behaviour> of the type. Its ParamDocs are the
  /// <behaviour> element's attributes besides `id` and `type`.
  void add_object_behaviour(PluginInfo info, ObjectBehaviourFactory factory);
  /// Registers a reward term for learning (fleetsim/reward.hpp); `factory` makes one instance
  /// per world and term. Its ParamDocs are the <reward> element's attributes besides `type`
  /// and `weight`.
  void add_reward(PluginInfo info, RewardFactory factory);
  /// Registers an environment layer (fleetsim/layer.hpp); `factory` makes one instance per
  /// <layer> element of the type. Its ParamDocs are the element's attributes besides `name`,
  /// `type` and `initial`.
  void add_layer(PluginInfo info, LayerFactory factory);

  const PluginInfo* find(PluginKind kind, const std::string& name) const;
  std::vector<std::string> names(PluginKind kind) const;
  const std::vector<PluginInfo>& all() const { return infos_; }
  const ControllerFactory* controller_factory(const std::string& name) const;
  const LoopFunctionsFactory* loop_functions_factory(const std::string& name) const;
  const SensorFactory* sensor_factory(const std::string& name) const;
  const ActuatorFactory* actuator_factory(const std::string& name) const;
  const PhysicsEngineFactory* physics_engine_factory(const std::string& name) const;
  const EnsembleFactory* ensemble_factory(const std::string& name) const;
  const ObjectBehaviourFactory* object_behaviour_factory(const std::string& name) const;
  const RewardFactory* reward_factory(const std::string& name) const;
  const LayerFactory* layer_factory(const std::string& name) const;
  ControllerScope controller_scope(const std::string& name) const;

 private:
  // The engine's side, not the plug-ins': register_builtins() documents entries implemented
  // inside the engine (physics engines, log writers); the library loader sets the origin of
  // what a library registers and reports the names it registers twice.
  friend void register_builtins(PluginRegistry& registry);
  friend class PluginLibraryScope;
  void add_builtin(PluginInfo info);
  void add_info(PluginInfo info);
  std::string origin_ = "built-in";
  std::vector<std::string> duplicates_;
  std::vector<PluginInfo> infos_;
  std::map<std::string, ControllerFactory> controllers_;
  std::map<std::string, LoopFunctionsFactory> loop_functions_;
  std::map<std::string, SensorFactory> sensors_;
  std::map<std::string, ActuatorFactory> actuators_;
  std::map<std::string, PhysicsEngineFactory> engines_;
  std::map<std::string, EnsembleFactory> ensembles_;
  std::map<std::string, ObjectBehaviourFactory> object_behaviours_;
  std::map<std::string, RewardFactory> rewards_;
  std::map<std::string, LayerFactory> layers_;
  std::map<std::string, ControllerScope> scopes_;
};

}  // namespace fleetsim
