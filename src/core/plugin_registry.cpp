#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/xml_reader.hpp"
#include "fleetsim/plugin.hpp"

namespace fleetsim {

const char* to_string(PluginKind kind) {
  switch (kind) {
    case PluginKind::kSensor:
      return "sensor";
    case PluginKind::kActuator:
      return "actuator";
    case PluginKind::kController:
      return "controller";
    case PluginKind::kPhysicsEngine:
      return "physics engine";
    case PluginKind::kLoopFunctions:
      return "loop functions";
    case PluginKind::kLogWriter:
      return "log writer";
    case PluginKind::kEnsemble:
      return "ensemble";
    case PluginKind::kObjectBehaviour:
      return "object behaviour";
    case PluginKind::kReward:
      return "reward term";
    case PluginKind::kLayer:
      return "layer";
  }
  return "?";
}

std::string Params::text(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

double Params::real(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  auto v = parse_real(it->second);
  return v ? *v : fallback;
}

std::int64_t Params::integer(const std::string& name, std::int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return fallback;
  }
}

bool Params::boolean(const std::string& name, bool fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return fallback;
}

void PluginRegistry::add_info(PluginInfo info) {
  info.origin = origin_;
  if (find(info.kind, info.name)) duplicates_.push_back(info.name);
  infos_.push_back(std::move(info));
}

void PluginRegistry::add_builtin(PluginInfo info) {
  add_info(std::move(info));
}

void PluginRegistry::add_controller(PluginInfo info, ControllerFactory factory,
                                    ControllerScope scope) {
  info.kind = PluginKind::kController;
  if (!find(info.kind, info.name)) {
    controllers_[info.name] = std::move(factory);
    scopes_[info.name] = scope;
  }
  add_info(std::move(info));
}

void PluginRegistry::add_sensor(PluginInfo info, SensorFactory factory) {
  info.kind = PluginKind::kSensor;
  if (!find(info.kind, info.name)) sensors_[info.name] = std::move(factory);
  add_info(std::move(info));
}

void PluginRegistry::add_actuator(PluginInfo info, ActuatorFactory factory) {
  info.kind = PluginKind::kActuator;
  if (!find(info.kind, info.name)) actuators_[info.name] = std::move(factory);
  add_info(std::move(info));
}

void PluginRegistry::add_physics_engine(PluginInfo info, PhysicsEngineFactory factory) {
  info.kind = PluginKind::kPhysicsEngine;
  if (!find(info.kind, info.name)) engines_[info.name] = std::move(factory);
  add_info(std::move(info));
}

const PhysicsEngineFactory* PluginRegistry::physics_engine_factory(const std::string& name) const {
  auto it = engines_.find(name);
  return it == engines_.end() ? nullptr : &it->second;
}

const SensorFactory* PluginRegistry::sensor_factory(const std::string& name) const {
  auto it = sensors_.find(name);
  return it == sensors_.end() ? nullptr : &it->second;
}

const ActuatorFactory* PluginRegistry::actuator_factory(const std::string& name) const {
  auto it = actuators_.find(name);
  return it == actuators_.end() ? nullptr : &it->second;
}

ControllerScope PluginRegistry::controller_scope(const std::string& name) const {
  auto it = scopes_.find(name);
  return it == scopes_.end() ? ControllerScope::kPerRobot : it->second;
}

void PluginRegistry::add_loop_functions(PluginInfo info, LoopFunctionsFactory factory) {
  info.kind = PluginKind::kLoopFunctions;
  if (!find(info.kind, info.name)) loop_functions_[info.name] = std::move(factory);
  add_info(std::move(info));
}

void PluginRegistry::add_ensemble(PluginInfo info, EnsembleFactory factory) {
  info.kind = PluginKind::kEnsemble;
  if (!find(info.kind, info.name)) ensembles_[info.name] = std::move(factory);
  add_info(std::move(info));
}

const EnsembleFactory* PluginRegistry::ensemble_factory(const std::string& name) const {
  auto it = ensembles_.find(name);
  return it == ensembles_.end() ? nullptr : &it->second;
}

void PluginRegistry::add_object_behaviour(PluginInfo info, ObjectBehaviourFactory factory) {
  info.kind = PluginKind::kObjectBehaviour;
  if (!find(info.kind, info.name)) object_behaviours_[info.name] = std::move(factory);
  add_info(std::move(info));
}

const ObjectBehaviourFactory* PluginRegistry::object_behaviour_factory(
    const std::string& name) const {
  auto it = object_behaviours_.find(name);
  return it == object_behaviours_.end() ? nullptr : &it->second;
}

void PluginRegistry::add_reward(PluginInfo info, RewardFactory factory) {
  info.kind = PluginKind::kReward;
  if (!find(info.kind, info.name)) rewards_[info.name] = std::move(factory);
  add_info(std::move(info));
}

const RewardFactory* PluginRegistry::reward_factory(const std::string& name) const {
  auto it = rewards_.find(name);
  return it == rewards_.end() ? nullptr : &it->second;
}

void PluginRegistry::add_layer(PluginInfo info, LayerFactory factory) {
  info.kind = PluginKind::kLayer;
  if (!find(info.kind, info.name)) layers_[info.name] = std::move(factory);
  add_info(std::move(info));
}

const LayerFactory* PluginRegistry::layer_factory(const std::string& name) const {
  auto it = layers_.find(name);
  return it == layers_.end() ? nullptr : &it->second;
}

const PluginInfo* PluginRegistry::find(PluginKind kind, const std::string& name) const {
  for (const auto& i : infos_)
    if (i.kind == kind && i.name == name) return &i;
  return nullptr;
}

std::vector<std::string> PluginRegistry::names(PluginKind kind) const {
  std::vector<std::string> out;
  for (const auto& i : infos_)
    if (i.kind == kind) out.push_back(i.name);
  return out;
}

const ControllerFactory* PluginRegistry::controller_factory(const std::string& name) const {
  auto it = controllers_.find(name);
  return it == controllers_.end() ? nullptr : &it->second;
}

const LoopFunctionsFactory* PluginRegistry::loop_functions_factory(const std::string& name) const {
  auto it = loop_functions_.find(name);
  return it == loop_functions_.end() ? nullptr : &it->second;
}

}  // namespace fleetsim
