#include "scenario/robot_assembly.hpp"

#include <algorithm>
#include <stdexcept>

namespace fleetsim {

namespace {

class KindPartSetup final : public PartSetup {
 public:
  KindPartSetup(const RobotKind& kind, const PartDecl& part, const std::string& type_name,
                WorldState& state, int workers, Diagnostics& diags)
      : kind_(kind),
        part_(part),
        type_(type_name),
        state_(state),
        workers_(workers),
        diags_(diags) {}
  /// Where errors of a part without a location go (the experiment file).
  void set_file(const std::string& file) { file_ = {file, 0}; }
  const KindInfo& kind() const override { return kind_; }
  const Params& params() const override { return part_.params; }
  const std::string& name() const override { return part_.name; }
  ColumnHandle column(const ColumnDesc& desc) override {
    ColumnDesc d = desc;
    if (d.owner.empty()) d.owner = type_;
    ColumnHandle existing = state_.robots.find(d.name);
    if (existing != kNoColumn &&
        (state_.robots.desc(existing).owner == "body" || existing < body::kCount)) {
      error("column '" + d.name + "' is already declared by '" +
            state_.robots.desc(existing).owner + "' (expected another part name, e.g. name=\"" +
            part_.name + "2\")");
      return existing;
    }
    try {
      return state_.robots.add(d);
    } catch (const std::exception& e) {
      error(e.what());
      return kNoColumn;
    }
  }
  ColumnHandle find_column(const std::string& n) const override { return state_.robots.find(n); }
  void set_near_reach(double metres) override { reach_ = std::max(reach_, metres); }
  int workers() const override { return workers_; }
  void error(const std::string& message) override {
    // A built-in kind's parts have no line of their own: the kind's, or the file's.
    const SourceLocation& where = !part_.where.file.empty()   ? part_.where
                                  : !kind_.where.file.empty() ? kind_.where
                                                              : file_;
    diags_.error(where, "kind '" + kind_.name + "': " + message);
  }
  double reach() const { return reach_; }

 private:
  const RobotKind& kind_;
  const PartDecl& part_;
  std::string type_;
  WorldState& state_;
  int workers_;
  Diagnostics& diags_;
  SourceLocation file_;
  double reach_ = 0;
};

std::string interface_of(const PluginRegistry& registry, PluginKind kind, const std::string& type) {
  const PluginInfo* info = registry.find(kind, type);
  return info && !info->interface.empty() ? info->interface : type;
}

template <class Part, class Views>
void add_part(const RobotKind& kind, const PartDecl& decl, PluginKind plugin_kind,
              WorldState& state, int workers, Diagnostics& diags, std::unique_ptr<Part> instance,
              std::vector<std::unique_ptr<Part>>& parts, Views& views, double& reach,
              const std::string& file) {
  KindPartSetup setup(kind, decl, decl.type, state, workers, diags);
  setup.set_file(file);
  try {
    instance->setup(setup);
  } catch (const std::exception& e) {
    setup.error(std::string(to_string(plugin_kind)) + " '" + decl.name + "': " + e.what());
  }
  reach = std::max(reach, setup.reach());
  views.emplace_back();
  instance->describe(views.back());  // (what the controllers see before the first step)
  parts.push_back(std::move(instance));
  views.back().name = decl.name;
  views.back().type = decl.interface;
}

}  // namespace

void resolve_interfaces(WorldModel& model, const PluginRegistry& registry) {
  for (RobotKind& k : model.kinds) {
    for (PartDecl& p : k.sensors) p.interface = interface_of(registry, PluginKind::kSensor, p.type);
    for (PartDecl& p : k.actuators)
      p.interface = interface_of(registry, PluginKind::kActuator, p.type);
  }
}

std::vector<AssembledKind> assemble_kinds(const WorldModel& model, WorldState& state,
                                          const PluginRegistry& registry, int workers,
                                          Diagnostics& diags) {
  std::vector<AssembledKind> out(model.kinds.size());
  for (std::size_t k = 0; k < model.kinds.size(); ++k) {
    const RobotKind& kind = model.kinds[k];
    if (!kind.in_run) continue;
    AssembledKind& a = out[k];
    for (const PartDecl& p : kind.sensors) {
      const SensorFactory* f = registry.sensor_factory(p.type);
      if (!f) {
        diags.error(p.where, "kind '" + kind.name + "': unknown sensor type '" + p.type +
                                 "' (`fleetsim list` shows them)" +
                                 did_you_mean(p.type, registry.names(PluginKind::kSensor)));
        continue;
      }
      add_part(kind, p, PluginKind::kSensor, state, workers, diags, (*f)(), a.sensors,
               a.sensor_views, a.near_reach_m, model.name);
    }
    for (const PartDecl& p : kind.actuators) {
      const ActuatorFactory* f = registry.actuator_factory(p.type);
      if (!f) {
        diags.error(p.where, "kind '" + kind.name + "': unknown actuator type '" + p.type +
                                 "' (`fleetsim list` shows them)" +
                                 did_you_mean(p.type, registry.names(PluginKind::kActuator)));
        continue;
      }
      add_part(kind, p, PluginKind::kActuator, state, workers, diags, (*f)(), a.actuators,
               a.actuator_views, a.near_reach_m, model.name);
    }
    for (const auto& act : a.actuators)
      if (act->acts()) a.acting.push_back(act.get());
    for (std::uint32_t j = 0; j < a.sensors.size(); ++j)
      (a.sensors[j]->batches() ? a.batch_sensors : a.single_sensors).push_back(j);
    for (std::uint32_t j = 0; j < a.actuators.size(); ++j)
      (a.actuators[j]->batches() ? a.batch_actuators : a.single_actuators).push_back(j);
  }
  return out;
}

std::vector<ColumnDesc> part_columns(const PluginRegistry& registry, PluginKind what,
                                     const std::string& type) {
  const PluginInfo* info = registry.find(what, type);
  if (!info) return {};
  std::map<std::string, std::string> defaults;
  for (const auto& p : info->params)
    if (!p.default_value.empty()) defaults[p.name] = p.default_value;
  WorldModel model;
  RobotKind kind;
  kind.name = "probe";
  kind.radius_m = 0.035;
  kind.max_speed_m_per_s = 0.13;
  PartDecl part{info->interface.empty() ? type : info->interface, type, "", Params(defaults), {}};
  part.interface = part.name;
  (what == PluginKind::kSensor ? kind.sensors : kind.actuators).push_back(part);
  model.kinds.push_back(kind);
  WorldState state;
  Diagnostics diags;
  assemble_kinds(model, state, registry, 1, diags);
  const auto& schema = state.robots.schema();
  return {schema.begin() + body::kCount, schema.end()};
}

namespace {
template <class Views>
std::optional<std::size_t> find_part(const Views& views, std::string_view name,
                                     std::string_view type) {
  // By name first, then by interface (type) when the name is an interface name.
  for (std::size_t i = 0; i < views.size(); ++i)
    if (views[i].name == name && (type.empty() || views[i].type == type)) return i;
  for (std::size_t i = 0; i < views.size(); ++i)
    if (views[i].type == name && (type.empty() || views[i].type == type)) return i;
  return std::nullopt;
}

template <class Views>
std::string part_list(const Views& views) {
  std::string s;
  for (const auto& v : views) s += (s.empty() ? "" : ", ") + std::string(v.name);
  return s.empty() ? "none" : s;
}
}  // namespace

std::size_t robot_pose(const WorldModel& model, const WorldState& state, std::size_t row,
                       std::array<double, 4>& out) {
  out = {state.x()[row], state.y()[row], state.theta()[row], 0.0};
  const ColumnHandle z = state.robots.find("z");
  if (!model.kinds[state.robot_kind()[row]].flies || z == kNoColumn) return 3;
  out[3] = static_cast<const double*>(state.robots.data(z))[row];
  return 4;
}

std::size_t KindControllerSetup::sensor(std::string_view name, std::string_view type) const {
  if (auto i = find_part(parts_.sensor_views, name, type)) return *i;
  throw MissingPartError("robot kind '" + kind_.name + "' has no sensor '" + std::string(name) +
                         "'" + (type.empty() ? "" : " of type '" + std::string(type) + "'") +
                         " (its sensors: " + part_list(parts_.sensor_views) + ")");
}

std::size_t KindControllerSetup::actuator(std::string_view name, std::string_view type) const {
  if (auto i = find_part(parts_.actuator_views, name, type)) return *i;
  throw MissingPartError("robot kind '" + kind_.name + "' has no actuator '" + std::string(name) +
                         "'" + (type.empty() ? "" : " of type '" + std::string(type) + "'") +
                         " (its actuators: " + part_list(parts_.actuator_views) + ")");
}

std::optional<std::size_t> KindControllerSetup::find_sensor_type(std::string_view type) const {
  for (std::size_t i = 0; i < parts_.sensor_views.size(); ++i)
    if (parts_.sensor_views[i].type == type) return i;
  return std::nullopt;
}

std::optional<std::size_t> KindControllerSetup::find_actuator_type(std::string_view type) const {
  for (std::size_t i = 0; i < parts_.actuator_views.size(); ++i)
    if (parts_.actuator_views[i].type == type) return i;
  return std::nullopt;
}

}  // namespace fleetsim
