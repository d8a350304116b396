#include "scenario/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <map>
#include <set>
#include <sstream>

#include "core/hash.hpp"
#include "core/named_colors.hpp"
#include "core/plugin_loader.hpp"
#include "core/xml_reader.hpp"
#include "physics/kinematics2d.hpp"
#include "robots/kinds.hpp"
#include "scenario/argos_file.hpp"
#include "scenario/bitmap.hpp"
#include "scenario/placement.hpp"
#include "scenario/playground_file.hpp"
#include "scenario/robot_plan.hpp"

namespace fleetsim {

std::unique_ptr<Controller> make_controller(const WorldModel& model,
                                            const std::vector<AssembledKind>& parts,
                                            const PluginRegistry& registry, std::uint16_t c,
                                            std::uint16_t k, EntityId robot,
                                            const RobotStart& start) {
  const ControllerDecl& decl = model.controllers[c];
  const ControllerFactory* f = registry.controller_factory(decl.type);
  if (!f) throw SetupError("controller type '" + decl.type + "' has no factory");
  std::unique_ptr<Controller> ctrl = (*f)();
  KindControllerSetup setup(model.kinds[k], parts[k], robot, start.name,
                            {start.pose.data(), start.pose_size});
  setup.set_model(&model);
  ctrl->init(decl.params, setup);
  return ctrl;
}

RobotStart robot_start(const WorldModel& model, const WorldState& state, std::size_t row) {
  RobotStart s;
  s.name = state.robot_name()[row];
  s.pose_size = robot_pose(model, state, row, s.pose);
  return s;
}

namespace {

constexpr double kDeg = kPi / 180.0;
/// A kind's engine type before it is resolved (or when it cannot be).
constexpr std::uint8_t kNoEngineType = 0xff;
/// The controller id given to passive bodies placed without one.
constexpr const char* kPassiveController = "(passive body)";

/// Reads a plug-in element's attributes against the plug-in's documented parameters; missing
/// ones get their documented defaults. A "path" is resolved against the experiment file and
/// must name a file: otherwise the error is at the attribute that holds it (a Lua script that
/// does not exist is reported at its <controller>, not at each robot that uses it), and
/// `files_exist`, when given, becomes false.
Params read_params(XmlElement& e, const PluginInfo& info, const std::vector<std::string>& own,
                   const XmlFile& file, bool* files_exist = nullptr) {
  std::map<std::string, std::string> values;
  for (const auto& p : info.params) {
    if (std::find(own.begin(), own.end(), p.name) != own.end()) continue;
    const char* n = p.name.c_str();
    if (!e.has(n)) {
      e.accept(n);
      if (p.default_value.empty() && p.type != "string")
        e.error("<" + std::string(e.name()) + " type=\"" + info.name +
                "\"> is missing parameter '" + p.name + "' (" + p.doc + ")");
      else if (!p.default_value.empty() && p.type != "path")
        values[p.name] = p.default_value;
      continue;
    }
    if (p.type == "path") {
      const std::string written = e.text(n);
      const std::string resolved = file.resolve(written);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(resolved, ec)) {
        e.diagnostics().error(e.where(n), "parameter '" + p.name + "' of <" + e.name() +
                                              " type=\"" + info.name + "\"> names '" + written +
                                              "'" +
                                              (resolved == written ? "" : " ('" + resolved + "')") +
                                              ", which is not a file (expected " + p.doc + ")");
        if (files_exist) *files_exist = false;
      }
      values[p.name] = resolved;
      continue;
    }
    if (p.type == "real") {
      e.real(n, 0);
    } else if (p.type == "integer") {
      e.integer(n, 0);
    } else if (p.type == "bool") {
      e.boolean(n, false);
    } else {
      e.text(n);
    }
    values[p.name] = e.node().attribute(n).value();
  }
  return Params(std::move(values));
}

struct Box4 {
  Vec2 lo, hi;
};

std::optional<Box4> read_region(XmlElement& e, const char* attr, bool required) {
  auto v = e.reals(attr, 4, required);
  if (v.size() != 4) return std::nullopt;
  Box4 b{{std::min(v[0], v[2]), std::min(v[1], v[3])},
         {std::max(v[0], v[2]), std::max(v[1], v[3])}};
  if (b.hi.x - b.lo.x <= 0 || b.hi.y - b.lo.y <= 0) {
    e.error(std::string("attribute '") + attr + "' of <" + e.name() +
            "> is an empty box (expected \"xmin,ymin,xmax,ymax\" with xmin < xmax, ymin < ymax)");
    return std::nullopt;
  }
  return b;
}

/// What an ensemble's init sees: the experiment's knowledge fields.
class KnowledgeSetup final : public EnsembleSetup {
 public:
  explicit KnowledgeSetup(const WorldModel& model) : model_(model) {}
  std::size_t knowledge(std::string_view field) const override {
    std::string declared;
    for (std::size_t i = 0; i < model_.knowledge_names.size(); ++i) {
      if (model_.knowledge_names[i] == field) return i;
      declared += (i ? ", " : "") + model_.knowledge_names[i];
    }
    throw SetupError("no knowledge field '" + std::string(field) + "' (the experiment's " +
                     "<knowledge> " +
                     (declared.empty() ? "declares none" : "declares: " + declared) + ")");
  }
  std::span<const std::string> knowledge_fields() const override { return model_.knowledge_names; }
  std::span<const std::uint32_t> knowledge_sizes() const override { return model_.knowledge_sizes; }

 private:
  const WorldModel& model_;
};

class ExperimentParser {
 public:
  ExperimentParser(const XmlFile& file, PluginRegistry& reg, const ExperimentOverrides& ov,
                   Diagnostics& d)
      : file_(file), reg_(reg), ov_(ov), d_(d) {}

  std::optional<Experiment> parse() {
    XmlElement root(file_, file_.root(), d_);
    if (std::string(root.name()) != "fleetsim") {
      root.error(std::string("root element is <") + root.name() +
                 "> (expected <fleetsim>, ARGoS's <argos-configuration> or the DEECo playground's "
                 "<simulation>; see docs/experiment-format.md and docs/argos.md)");
      return std::nullopt;
    }
    root.finish();
    root.check_children({"framework", "plugins", "kinds", "controllers", "arena", "physics",
                         "distribution", "loop_functions", "log", "knowledge", "ensembles",
                         "layers", "learning"});
    model_ = std::make_shared<WorldModel>();
    model_->name = file_.path();
    ex_.path = file_.path();
    root.check_at_most_one({"framework", "plugins", "kinds", "controllers", "arena", "physics",
                            "distribution", "loop_functions", "knowledge", "ensembles", "layers",
                            "learning"});
    auto first = [&](const char* n) { return root.first_child(n); };
    if (auto e = first("framework"))
      read_framework(*e);
    else
      root.error(
          "missing <framework> (expected <framework ticks_per_second=\"10\" length=\"60\"/>)");
    if (auto e = first("plugins")) read_plugins(*e);
    model_->kinds = builtin_kinds();
    resolve_interfaces(*model_, reg_);
    if (auto e = first("kinds")) read_kinds(*e);
    resolve_interfaces(*model_, reg_);
    for (std::size_t k = 0; k < model_->kinds.size(); ++k)
      model_->kinds[k].index = static_cast<std::uint16_t>(k);
    if (model_->kinds.size() > 65535) root.error("more than 65535 robot kinds");
    if (auto e = first("knowledge")) read_knowledge(*e);
    if (auto e = first("controllers")) read_controllers(*e);
    if (auto e = first("arena"))
      read_arena_geometry(*e);
    else
      root.error("missing <arena> (expected <arena size=\"W,H\">)");
    if (auto e = first("layers")) read_layers(*e);
    if (auto e = first("physics")) read_physics(*e);
    if (model_->engines.empty() && arena_ok_)
      model_->engines.push_back({"kinematics2d", model_->arena_min(), model_->arena_max()});
    if (auto e = first("distribution")) read_distribution(*e);
    if (auto e = first("loop_functions")) read_loop_functions(*e);
    for (auto& e : root.children("log")) read_log(e);
    apply_log_overrides();
    // The kinds in the run (declared in the file, or placed in the arena) assemble their
    // parts, which declare their columns before any robot is added.
    for (RobotKind& k : model_->kinds) k.in_run = declared_kinds_.count(k.name) > 0;
    if (auto a = first("arena"))
      for (auto& b : a->children())
        if (std::string(b.name()) == "robot" || std::string(b.name()) == "distribute") {
          const std::string kind = b.node().attribute("kind").as_string("epuck");
          for (RobotKind& k : model_->kinds)
            if (k.name == kind) k.in_run = true;
        }
    // Engines first: they declare the columns their bodies keep (altitude, velocities, the
    // flyers' commands), which parts then find.
    resolve_engine_types(root);
    setup_engines();
    ex_.parts = assemble_kinds(*model_, ex_.state, reg_, ex_.threads, d_);
    add_knowledge_columns();
    // Bodies last: placement needs the whole geometry.
    if (auto e = first("arena"); e && arena_ok_) read_arena_bodies(*e);
    fill_layer_columns();
    resolve_pinned_robots();
    if (!d_.has_errors()) check_controllers();
    if (auto e = first("ensembles")) read_ensembles(*e);
    if (auto e = first("learning")) read_learning(*e);
    if (d_.has_errors()) return std::nullopt;
    ex_.model = model_;
    return std::move(ex_);
  }

 private:
  void read_framework(XmlElement& e) {
    std::int64_t tps = e.integer("ticks_per_second", 10, 1, 1'000'000);
    if (kNanosPerSecond % tps != 0)
      e.error("ticks_per_second=" + std::to_string(tps) +
              " does not divide one second into whole nanoseconds (expected e.g. 1, 2, 4, 5, 8, "
              "10, 20, 25, 50, 100, 1000)");
    model_->tick_period_ns = kNanosPerSecond / tps;
    double length = e.real("length", 60, 0, 1e9);
    if (ov_.length_s) length = *ov_.length_s;
    model_->length_ticks = static_cast<Tick>(std::llround(length * static_cast<double>(tps)));
    // A length that rounds to no tick would mean "until the loop functions end the run".
    if (length > 0 && model_->length_ticks == 0)
      e.error(std::string(ov_.length_s ? "--length " : "length=") + fmt_real(length) +
              " is shorter than half a tick (" + fmt_real(1.0 / static_cast<double>(tps)) +
              " s at ticks_per_second=" + std::to_string(tps) +
              "), so the run would not end by itself (expected 0 to run until the loop "
              "functions end it, or at least one tick)");
    std::int64_t seed = e.integer("seed", 0, 0);
    model_->seed = ov_.seed ? *ov_.seed : static_cast<std::uint64_t>(seed);
    ex_.threads = static_cast<int>(e.integer("threads", 1, 1, 1024));
    if (ov_.threads) ex_.threads = *ov_.threads;
    model_->processing_time = static_cast<int>(e.integer("processing_time", 0, 0, 1000));
    ex_.processing_time_where = e.where("processing_time");
    e.finish();
    e.check_children({});
  }

  void read_plugins(XmlElement& e) {
    e.finish();
    e.check_children({"library"});
    for (auto& lib : e.children("library")) {
      std::string path = lib.text("path", "", true);
      lib.finish();
      if (!path.empty()) load_plugin_library(find_library(path), reg_, d_, lib.where());
    }
  }

  /// A library path relative to the experiment file; a bare name not found there is also
  /// looked up in the directories of FLEETSIM_PLUGIN_PATH (colon-separated).
  std::string find_library(const std::string& path) const {
    std::string here = file_.resolve(path);
    std::error_code ec;
    if (std::filesystem::exists(here, ec) || path.find('/') != std::string::npos) return here;
    if (const char* env = std::getenv("FLEETSIM_PLUGIN_PATH")) {
      std::string dirs = env;
      std::size_t start = 0;
      while (start <= dirs.size()) {
        std::size_t colon = dirs.find(':', start);
        std::string dir =
            dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!dir.empty()) {
          std::string candidate = (std::filesystem::path(dir) / path).string();
          if (std::filesystem::exists(candidate, ec)) return candidate;
        }
        if (colon == std::string::npos) break;
        start = colon + 1;
      }
    }
    return here;
  }

  /// <kinds>: each <kind> is a body plus parts. A kind without <sensor>/<actuator> children
  /// takes the parts of its `base` (default epuck); the attributes max_wheel_speed,
  /// wheel_distance and proximity_range are shorthands for its drive's and proximity
  /// sensor's parameters. Redefining a built-in kind replaces it.
  void read_kinds(XmlElement& e) {
    e.finish();
    e.check_children({"kind"});
    std::map<std::string, SourceLocation> seen;
    for (auto& k : e.children("kind")) {
      std::string name = k.text("name", "", true);
      std::string base_name = k.text("base", "epuck");
      const RobotKind* base = nullptr;
      for (const auto& b : model_->kinds)
        if (b.name == base_name) base = &b;
      std::vector<std::string> kind_names;
      for (const auto& b : model_->kinds) kind_names.push_back(b.name);
      if (!base) {
        k.error("unknown base kind '" + base_name + "' (expected one of: " + join(kind_names) +
                ")" + did_you_mean(base_name, kind_names));
        base = &model_->kinds[0];
      }
      RobotKind kind = *base;
      // A kind whose base named its engine type names it too.
      if (auto b = explicit_engine_.find(base_name);
          b != explicit_engine_.end() && !k.has("engine"))
        explicit_engine_[name] = b->second;
      kind.name = name;
      kind.where = k.where();
      if (kind.shape == BodyShape::kBox && k.has("radius")) {
        k.accept("radius");
        k.error(
            "attribute 'radius' is for round kinds (expected size=\"length,width\" on a box "
            "kind)");
      } else {
        kind.radius_m = k.real("radius", kind.radius_m, 1e-4, 100);
      }
      kind.height_m = k.real("height", kind.height_m, 0, 100);
      kind.max_speed_m_per_s = k.real("max_speed", kind.max_speed_m_per_s, 0, 1e3);
      if (k.has("mass")) {
        const double m = k.real("mass", 1, 0, 1e6);
        if (m <= 0)
          k.error("mass of kind '" + name + "' is not positive (expected kilograms > 0)");
        else
          kind.mass_kg = m;
      } else {
        k.accept("mass");
      }
      if (k.has("size")) {
        auto v = k.reals("size", 2, false);
        if (kind.shape != BodyShape::kBox) {
          k.error(
              "attribute 'size' is for box-shaped kinds (expected base=\"box\", or radius "
              "for a round one)");
        } else if (v.size() == 2) {
          if (!(v[0] > 0 && v[1] > 0 && v[0] <= 100 && v[1] <= 100)) {
            k.error("size of kind '" + name +
                    "' is not two lengths in (0, 100] metres "
                    "(expected \"length,width\")");
          } else {
            kind.length_m = v[0];
            kind.width_m = v[1];
            kind.radius_m = std::sqrt(v[0] * v[0] + v[1] * v[1]) / 2;
          }
        }
      } else {
        k.accept("size");
      }
      if (k.has("engine")) {
        kind.engine = k.choice("engine", reg_.names(PluginKind::kPhysicsEngine), kind.engine);
        explicit_engine_[name] = k.where();
      } else {
        k.accept("engine");
      }
      auto shorthand = [&](const char* attr, std::vector<PartDecl>& parts, const char* iface,
                           const char* param) {
        if (!k.has(attr)) {
          k.accept(attr);
          return;
        }
        double v = k.real(attr, 0, 0, 1e3);
        for (auto& p : parts)
          if (p.type == iface || p.interface == iface) {
            auto values = p.params.values();
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.17g", v);
            values[param] = buf;
            p.params = Params(std::move(values));
            return;
          }
        k.error(std::string("attribute '") + attr + "' needs a " + iface + " part in kind '" +
                name + "' (expected it on a kind with one)");
      };
      auto sensors = k.children("sensor");
      auto actuators = k.children("actuator");
      if (!sensors.empty() || !actuators.empty()) {
        kind.sensors.clear();
        kind.actuators.clear();
        read_parts(kind, sensors, PluginKind::kSensor, kind.sensors);
        read_parts(kind, actuators, PluginKind::kActuator, kind.actuators);
      }
      kind.passive = kind.sensors.empty() && kind.actuators.empty();
      shorthand("max_wheel_speed", kind.actuators, "differential_drive", "max_wheel_speed");
      shorthand("wheel_distance", kind.actuators, "differential_drive", "axle_length");
      shorthand("proximity_range", kind.sensors, "proximity", "range");
      k.finish();
      k.check_children({"sensor", "actuator"});
      if (name.empty()) continue;
      declared_kinds_.insert(name);
      auto [at, fresh] = seen.emplace(name, k.where());
      if (!fresh) {
        k.error("kind '" + name + "' is declared twice (first at line " +
                std::to_string(at->second.line) + "; expected unique kind names)");
        continue;
      }
      auto it = std::find_if(model_->kinds.begin(), model_->kinds.end(),
                             [&](const RobotKind& x) { return x.name == name; });
      if (it != model_->kinds.end())
        *it = kind;  // redefining a built-in kind
      else
        model_->kinds.push_back(kind);
    }
  }

  void read_parts(const RobotKind& kind, std::vector<XmlElement>& elements, PluginKind what,
                  std::vector<PartDecl>& out) {
    const char* noun = what == PluginKind::kSensor ? "sensor" : "actuator";
    for (auto& pe : elements) {
      PartDecl part;
      part.where = pe.where();
      part.type = pe.text("type", "", true);
      const PluginInfo* info = reg_.find(what, part.type);
      part.name = pe.text("name", "");
      if (!part.type.empty() && !info) {
        pe.error(std::string("unknown ") + noun + " type '" + part.type + "' in kind '" +
                 kind.name + "' (expected one of: " + join(reg_.names(what)) +
                 "; `fleetsim list` shows them)" + did_you_mean(part.type, reg_.names(what)));
      }
      if (info) {
        part.interface = info->interface.empty() ? info->name : info->interface;
        if (part.name.empty()) part.name = part.interface;
        part.params = read_params(pe, *info, {"type", "name"}, file_);
        pe.finish();
      }
      pe.check_children({});
      for (const auto& other : out)
        if (!part.name.empty() && other.name == part.name)
          pe.error(std::string(noun) + " name '" + part.name + "' is used twice in kind '" +
                   kind.name + "' (expected unique names; set name=\"...\")");
      if (info) out.push_back(std::move(part));
    }
  }

  void read_controllers(XmlElement& e) {
    e.finish();
    e.check_children({"controller", "behaviour"});
    for (auto& b : e.children("behaviour")) read_behaviour(b);
    for (auto& c : e.children("controller")) {
      ControllerDecl decl;
      decl.id = c.text("id", "", true);
      decl.type = c.text("type", "", true);
      const PluginInfo* info = reg_.find(PluginKind::kController, decl.type);
      if (!decl.type.empty() && !info) {
        c.error("unknown controller type '" + decl.type + "' (expected one of: " +
                join(reg_.names(PluginKind::kController)) + "; `fleetsim list` shows them)" +
                did_you_mean(decl.type, reg_.names(PluginKind::kController)));
      }
      decl.where = c.where();
      if (info) {
        bool files_exist = true;
        decl.params = read_params(c, *info, {"id", "type"}, file_, &files_exist);
        // Its error is reported: no second one at each robot that uses it.
        if (!files_exist) missing_files_.insert(model_->controllers.size());
        c.finish();  // parameters of an unknown type are not reported: one error is enough
      }
      c.check_children({});
      for (const auto& other : model_->controllers)
        if (other.id == decl.id && !decl.id.empty())
          c.error("controller id '" + decl.id + "' is declared twice (expected unique ids)");
      model_->controllers.push_back(std::move(decl));
    }
  }

  // <behaviour id=... type=... .../> in <controllers>: an object behaviour's declaration.
  void read_behaviour(XmlElement& b) {
    ObjectBehaviourDecl decl;
    decl.id = b.text("id", "", true);
    decl.type = b.text("type", "", true);
    decl.where = b.where();
    const PluginInfo* info = reg_.find(PluginKind::kObjectBehaviour, decl.type);
    if (!decl.type.empty() && !info)
      b.error("unknown object behaviour type '" + decl.type + "' (expected one of: " +
              join(reg_.names(PluginKind::kObjectBehaviour)) + "; `fleetsim list` shows them)" +
              did_you_mean(decl.type, reg_.names(PluginKind::kObjectBehaviour)));
    if (info) {
      bool files_exist = true;
      decl.params = read_params(b, *info, {"id", "type"}, file_, &files_exist);
      if (!files_exist) missing_behaviours_.insert(ex_.behaviours.size());
      b.finish();
    }
    b.check_children({});
    for (const auto& other : ex_.behaviours)
      if (other.id == decl.id && !decl.id.empty())
        b.error("behaviour id '" + decl.id + "' is declared twice (expected unique ids)");
    if (!info) missing_behaviours_.insert(ex_.behaviours.size());
    ex_.behaviours.push_back(std::move(decl));
  }

  /// The behaviour of the object at `e` made and initialised (its errors reported there, or
  /// at the script's line).
  void add_object_behaviour(XmlElement& e, const std::string& behaviour, EntityId object) {
    std::size_t b = 0;
    std::vector<std::string> ids;
    while (b < ex_.behaviours.size() && ex_.behaviours[b].id != behaviour)
      ids.push_back(ex_.behaviours[b++].id);
    if (b == ex_.behaviours.size()) {
      e.error("unknown behaviour '" + behaviour +
              "' (expected the id of a <behaviour> in <controllers>" +
              (ids.empty() ? std::string(", and there is none") : ": " + join(ids)) + ")" +
              did_you_mean(behaviour, ids));
      return;
    }
    if (missing_behaviours_.count(b)) return;  // (its element's error is reported)
    const ObjectBehaviourDecl& decl = ex_.behaviours[b];
    ObjectWithBehaviour o;
    o.object = object;
    o.behaviour = static_cast<std::uint16_t>(b);
    o.instance = (*reg_.object_behaviour_factory(decl.type))();
    struct Setup final : ObjectSetup {
      const WorldState& st;
      std::uint32_t row;
      Setup(const WorldState& s, std::uint32_t r) : st(s), row(r) {}
      EntityId object() const override { return st.object_id()[row]; }
      // (A copy: the string column gives its strings by value, and a view of one would dangle.)
      std::string_view name() const override { return name_copy; }
      std::string_view object_class() const override { return cls; }
      Vec2 position() const override { return {st.object_x()[row], st.object_y()[row]}; }
      double size() const override { return st.object_size()[row]; }
      std::string_view tag() const override { return st.tags.str(st.object_tag()[row]); }
      std::span<const std::string> knowledge_fields() const override { return names; }
      std::span<const std::uint32_t> knowledge_sizes() const override { return sizes; }
      std::string cls, name_copy;
      std::span<const std::string> names;
      std::span<const std::uint32_t> sizes;
    } setup(ex_.state, ex_.state.object_index(object));
    setup.names = model_->knowledge_names;
    setup.sizes = model_->knowledge_sizes;
    setup.cls = model_->object_classes[ex_.state.object_class()[setup.row]];
    setup.name_copy = ex_.state.object_name()[setup.row];
    try {
      o.instance->init(decl.params, setup);
    } catch (const SetupError& err) {
      if (!err.file.empty())
        d_.error({err.file, err.line}, err.what());
      else
        e.error("behaviour '" + decl.id + "': " + err.what());
      return;
    } catch (const std::exception& err) {
      e.error("behaviour '" + decl.id + "': init failed: " + err.what());
      return;
    }
    ex_.object_behaviours.push_back(std::move(o));
  }

  void read_arena_geometry(XmlElement& e) {
    Vec2 size = e.vec2("size", {0, 0}, true);
    model_->arena_center = e.vec2("center", {0, 0});
    bool closed = e.boolean("closed", true);
    e.finish();
    e.check_children({"bitmap", "wall", "box", "robot", "distribute", "object", "light", "floor"});
    if (size.x <= 0 || size.y <= 0) {
      if (e.has("size"))
        e.error("arena size must be positive (expected \"width,height\" in metres)");
      return;
    }
    constexpr double kMaxSide = 1e6;  // 1,000 km: grids and float physics stay meaningful
    if (size.x > kMaxSide || size.y > kMaxSide || std::abs(model_->arena_center.x) > kMaxSide ||
        std::abs(model_->arena_center.y) > kMaxSide) {
      e.error(
          "arena size or center beyond 1,000 km (expected \"width,height\" and \"x,y\" in "
          "metres, each at most 1000000)");
      return;
    }
    model_->arena_width_m = size.x;
    model_->arena_height_m = size.y;
    arena_ok_ = true;
    Vec2 lo = model_->arena_min(), hi = model_->arena_max();
    auto bitmaps = e.children("bitmap");
    if (bitmaps.size() > 1)
      bitmaps[1].error("<bitmap> appears more than once (expected at most one)");
    if (!bitmaps.empty()) read_bitmap(bitmaps[0]);
    constexpr double kTall = std::numeric_limits<double>::infinity();
    model_->segment_heights.assign(model_->segments.size(), kTall);
    for (auto& w : e.children("wall")) {
      Vec2 a = w.vec2("from", {}, true), b = w.vec2("to", {}, true);
      const double height = w.real("height", kTall, 0, 1e6);
      w.finish();
      w.check_children({});
      if (a == b && w.has("from") && w.has("to"))
        w.error("wall has zero length (expected from != to)");
      else {
        model_->segments.push_back({a, b});
        model_->segment_heights.push_back(height);
      }
    }
    for (auto& b : e.children("box")) {
      Vec2 c = b.vec2("center", {}, true);
      Vec2 s = b.vec2("size", {}, true);
      double ang = b.real("angle", 0, -360, 360) * kDeg;
      const double height = b.real("height", kTall, 0, 1e6);
      b.finish();
      b.check_children({});
      if (s.x <= 0 || s.y <= 0) {
        if (b.has("size"))
          b.error("box size must be positive (expected \"width,height\" in metres)");
        continue;
      }
      double ca = std::cos(ang), sa = std::sin(ang);
      std::array<Vec2, 4> corners;
      const double hx[4] = {-1, 1, 1, -1}, hy[4] = {-1, -1, 1, 1};
      for (int k = 0; k < 4; ++k) {
        Vec2 l{hx[k] * s.x / 2, hy[k] * s.y / 2};
        corners[k] = c + Vec2{ca * l.x - sa * l.y, sa * l.x + ca * l.y};
      }
      model_->boxes.push_back(corners);
      for (int k = 0; k < 4; ++k) {
        model_->segments.push_back({corners[k], corners[(k + 1) % 4]});
        model_->segment_heights.push_back(height);
      }
    }
    for (auto& l : e.children("light")) read_light(l);
    auto floors = e.children("floor");
    if (floors.size() > 1) floors[1].error("<floor> appears more than once (expected at most one)");
    if (!floors.empty()) read_floor(floors[0]);
    if (closed) {
      model_->segments.push_back({{lo.x, lo.y}, {hi.x, lo.y}});
      model_->segments.push_back({{hi.x, lo.y}, {hi.x, hi.y}});
      model_->segments.push_back({{hi.x, hi.y}, {lo.x, hi.y}});
      model_->segments.push_back({{lo.x, hi.y}, {lo.x, lo.y}});
      model_->segment_heights.resize(model_->segments.size(), kTall);
    }
  }

  /// A colour attribute: a name (ARGoS's) or "r,g,b" / "r,g,b,a".
  std::optional<Color> color_attr(XmlElement& e, const char* attr, Color fallback) {
    const std::string text = e.text(attr, "");
    if (text.empty()) return fallback;
    if (auto c = parse_color(text)) return *c;
    d_.error(e.where(attr), std::string(attr) + "=\"" + text +
                                "\" is not a colour (expected a name such as yellow, or "
                                "\"r,g,b\" with components 0 to 255)");
    return std::nullopt;
  }

  /// <light id= position="x,y" height= color= intensity=/>: a static point light.
  void read_light(XmlElement& l) {
    Light light;
    light.id = l.text("id", "light" + std::to_string(model_->lights.size()));
    light.position = l.vec2("position", {}, true);
    light.z_m = l.real("height", 0, 0, 1e6);
    light.intensity = l.real("intensity", 1, 0, 1e9);
    auto c = color_attr(l, "color", Color{255, 255, 0, 255});
    l.finish();
    l.check_children({});
    for (const Light& other : model_->lights)
      if (other.id == light.id)
        l.error("light id '" + light.id + "' is used twice (expected unique ids)");
    if (c) light.color = *c;
    model_->lights.push_back(light);
  }

  /// <floor color= image= center= size=/>: what ground sensors read.
  void read_floor(XmlElement& f) {
    Floor& floor = model_->floor;
    auto c = color_attr(f, "color", floor.color);
    const std::string image = f.text("image", "");
    const Vec2 center = f.vec2("center", model_->arena_center);
    const Vec2 size = f.vec2("size", {model_->arena_width_m, model_->arena_height_m});
    f.finish();
    f.check_children({});
    if (c) floor.color = *c;
    if (image.empty()) {
      if (f.has("center") || f.has("size"))
        f.error("center= and size= place a floor image (expected image=\"file.png\" too)");
      return;
    }
    if (!(size.x > 0 && size.y > 0)) {
      f.error("floor size must be positive (expected \"width,height\" in metres)");
      return;
    }
    std::string error;
    auto img = load_png_colors(file_.resolve(image), error);
    if (!img) {
      d_.error(f.where("image"), error);
      return;
    }
    floor.width = img->width;
    floor.height = img->height;
    floor.pixels = std::move(img->pixels);
    floor.min = center - size * 0.5;
    floor.max = center + size * 0.5;
  }

  void read_bitmap(XmlElement& b) {
    std::string file = b.text("file", "", true);
    double res = b.real("resolution", 0, 1e-6, 1e3, true);
    std::optional<Vec2> top_left;
    if (b.has("top_left"))
      top_left = b.vec2("top_left", {});
    else
      b.accept("top_left");
    b.finish();
    b.check_children({});
    if (file.empty() || res <= 0) return;
    std::string error;
    auto bm = load_png_bitmap(file_.resolve(file), error);
    if (!bm) {
      b.error(error);
      return;
    }
    double w = bm->width * res, h = bm->height * res;
    // By default the bitmap is centred on the arena.
    Vec2 tl =
        top_left ? *top_left : Vec2{model_->arena_center.x - w / 2, model_->arena_center.y + h / 2};
    model_->bitmap_width = bm->width;
    model_->bitmap_height = bm->height;
    model_->bitmap_resolution_m = res;
    model_->bitmap_top_left = tl;
    model_->bitmap = bm->black;
    auto segs = bitmap_segments(*bm, res, tl);
    model_->segments.insert(model_->segments.begin(), segs.begin(), segs.end());
    model_->bitmap_segment_count = segs.size();
  }

  /// <physics>: one element per engine instance, named by its registered type. Each type's
  /// regions tile the arena; regions of different types may overlap (they are different
  /// views of the same space).
  void read_physics(XmlElement& e) {
    e.finish();
    const std::vector<std::string> types = reg_.names(PluginKind::kPhysicsEngine);
    e.check_children(types);
    std::map<std::string, double> area;  // by type
    std::map<std::string, SourceLocation> first_of;
    for (auto& k : e.children()) {
      const std::string type = k.name();
      const PluginInfo* info = reg_.find(PluginKind::kPhysicsEngine, type);
      if (!info) continue;  // reported by check_children
      EngineRegion r;
      r.type = type;
      r.where = k.where();
      r.id = k.text("id", type);
      r.params = read_params(k, *info, {"id", "region"}, file_);
      if (!arena_ok_) {
        k.accept("region");
        k.finish();
        continue;
      }
      Box4 box{model_->arena_min(), model_->arena_max()};
      if (k.has("region")) {
        auto b = read_region(k, "region", false);
        if (!b) {
          k.finish();
          continue;
        }
        box = *b;
      } else {
        k.accept("region");
      }
      k.finish();
      k.check_children({});
      Vec2 lo = model_->arena_min(), hi = model_->arena_max();
      const double eps = 1e-9 * std::max(model_->arena_width_m, model_->arena_height_m);
      if (box.lo.x < lo.x - eps || box.lo.y < lo.y - eps || box.hi.x > hi.x + eps ||
          box.hi.y > hi.y + eps) {
        k.error("engine '" + r.id + "' region extends outside the arena (expected a box inside " +
                fmt_box(lo, hi) + ")");
        continue;
      }
      for (std::size_t o = 0; o < model_->engines.size(); ++o) {
        const auto& q = model_->engines[o];
        if (q.type != type) continue;
        double ix = std::min(box.hi.x, q.max.x) - std::max(box.lo.x, q.min.x);
        double iy = std::min(box.hi.y, q.max.y) - std::max(box.lo.y, q.min.y);
        if (ix > eps && iy > eps)
          k.error("engine '" + r.id + "' region overlaps engine '" + q.id + "' of the same type " +
                  type + " (expected regions of one type that tile the arena without overlap)");
      }
      for (const auto& q : model_->engines)
        if (q.id == r.id) k.error("engine id '" + r.id + "' is used twice (expected unique ids)");
      r.min = box.lo;
      r.max = box.hi;
      area[type] += (box.hi.x - box.lo.x) * (box.hi.y - box.lo.y);
      first_of.emplace(type, r.where);
      model_->engines.push_back(r);
    }
    if (model_->engines.size() > 255)
      e.error("more than 255 physics engines (expected at most 255)");
    double arena = model_->arena_width_m * model_->arena_height_m;
    for (const auto& [type, a] : area)
      if (arena_ok_ && std::abs(a - arena) > 1e-9 * arena && !d_.has_errors())
        d_.error(first_of[type], "the " + type + " engines' regions cover " + std::to_string(a) +
                                     " m2 of the " + std::to_string(arena) +
                                     " m2 arena (expected regions of each engine type that tile "
                                     "the whole arena)");
  }

  /// Makes one engine per type in the run; each reads its regions' parameters and declares
  /// its columns (before any robot exists).
  void setup_engines() {
    class Setup final : public PhysicsSetup {
     public:
      Setup(ExperimentParser& p, std::uint8_t type) : p_(p) {
        for (std::size_t e = 0; e < p.model_->engines.size(); ++e) {
          const EngineRegion& r = p.model_->engines[e];
          if (r.type_index != type) continue;
          regions_.push_back({r.id, static_cast<std::uint8_t>(e), r.min, r.max});
          decls_.push_back(&r);
        }
      }
      std::span<const EngineRegionInfo> regions() const override { return regions_; }
      const Params& params(std::size_t r) const override { return decls_.at(r)->params; }
      ColumnHandle column(const ColumnDesc& desc) override {
        ColumnDesc d = desc;
        if (d.owner.empty()) d.owner = decls_.front()->type;
        const ColumnHandle existing = p_.ex_.state.robots.find(d.name);
        if (existing != kNoColumn) {
          // Engines of two types may keep the same quantity (velocities): one column.
          const ColumnDesc& e = p_.ex_.state.robots.desc(existing);
          if (existing >= body::kCount && e.type == d.type && e.width == d.width) return existing;
          error(0, "column '" + d.name + "' is already declared by '" + e.owner + "'");
          return kNoColumn;
        }
        return p_.ex_.state.robots.add(d);
      }
      ColumnHandle find_column(const std::string& name) const override {
        return p_.ex_.state.robots.find(name);
      }
      void error(std::size_t r, const std::string& message) override {
        p_.d_.error(decls_.at(r)->where, "engine '" + decls_.at(r)->id + "': " + message);
      }

     private:
      ExperimentParser& p_;
      std::vector<EngineRegionInfo> regions_;
      std::vector<const EngineRegion*> decls_;
    };
    for (std::size_t t = 0; t < ex_.engines.size(); ++t) {
      Setup setup(*this, static_cast<std::uint8_t>(t));
      try {
        ex_.engines[t]->setup(setup);
      } catch (const std::exception& ex) {
        setup.error(0, ex.what());
      }
    }
  }

  /// Numbers the engine types, and gives every kind the type that accepts its body: the one it
  /// names, or else the only type the experiment declares.
  void resolve_engine_types(XmlElement& root) {
    for (auto& r : model_->engines) {
      auto it = std::find(model_->engine_types.begin(), model_->engine_types.end(), r.type);
      if (it == model_->engine_types.end())
        it = model_->engine_types.insert(model_->engine_types.end(), r.type);
      r.type_index = static_cast<std::uint8_t>(it - model_->engine_types.begin());
    }
    if (model_->engine_types.empty()) return;  // no arena: reported already
    // One engine object per type, made here so that it can say which kinds it refuses.
    for (const std::string& type : model_->engine_types) {
      const PhysicsEngineFactory* f = reg_.physics_engine_factory(type);
      if (!f) {
        d_.error({file_.path(), 0}, "physics engine type '" + type + "' has no factory");
        ex_.engines.clear();
        return;
      }
      ex_.engines.push_back((*f)());
    }
    for (RobotKind& k : model_->kinds) {
      k.engine_type = kNoEngineType;
      const SourceLocation where = k.where.file.empty() ? root.where() : k.where;
      if (explicit_engine_.count(k.name) == 0) {
        // The declared types whose engine accepts this kind's bodies.
        std::vector<std::string> accepting, why_not;
        for (std::size_t t = 0; t < ex_.engines.size(); ++t) {
          const std::string why = ex_.engines[t]->refuses(k);
          if (why.empty())
            accepting.push_back(model_->engine_types[t]);
          else
            why_not.push_back(model_->engine_types[t] + ": " + why);
        }
        if (accepting.size() == 1) {
          k.engine = accepting[0];
        } else if (!k.in_run) {
          continue;
        } else if (accepting.empty() && k.where.file.empty()) {
          // A built-in kind: refused where a robot of it is placed (engine_accepts).
          k.engine = model_->engine_types[0];
        } else if (accepting.empty()) {
          d_.error(where, "no physics engine of the experiment accepts robot kind '" + k.name +
                              "' (" + join(why_not) +
                              "; expected <physics> to declare one that does)");
          continue;
        } else {
          d_.error(where, "robot kind '" + k.name +
                              "' does not say which physics engine type "
                              "accepts it, and the experiment declares " +
                              join(accepting) + " (expected <kind name=\"" + k.name +
                              "\" engine=\"" + accepting[0] + "\"> or another of them)");
          continue;
        }
      }
      auto it = std::find(model_->engine_types.begin(), model_->engine_types.end(), k.engine);
      if (it == model_->engine_types.end()) {
        if (!k.in_run) continue;
        d_.error(explicit_engine_.count(k.name) ? explicit_engine_[k.name] : where,
                 "robot kind '" + k.name + "' needs a " + k.engine +
                     " engine, and the experiment declares none (expected <physics><" + k.engine +
                     " .../></physics>, or engine=\"" + model_->engine_types[0] +
                     "\" on the kind)");
        continue;
      }
      k.engine_type = static_cast<std::uint8_t>(it - model_->engine_types.begin());
      if (const std::string why = ex_.engines[k.engine_type]->refuses(k);
          !why.empty() && k.in_run && explicit_engine_.count(k.name))
        d_.error(explicit_engine_[k.name],
                 "robot kind '" + k.name + "' cannot be simulated by " + k.engine + ": " + why);
    }
  }

  // <distribution><process regions="west north" kinds="eyebot" robots="ep3"/>...
  // </distribution>: which process simulates which engine regions in a run on several
  // processes (one <process> per process), and affinities: kinds and robots whose sensors,
  // controllers and actuators one process runs wherever they are.
  static std::vector<std::string> words_of(std::string list) {
    std::replace(list.begin(), list.end(), ',', ' ');
    std::istringstream in(list);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  }

  void read_distribution(XmlElement& e) {
    e.finish();
    e.check_children({"process"});
    ex_.distribution_where = e.where();
    std::vector<int> owner(model_->engines.size(), -1);
    auto processes = e.children("process");
    if (processes.empty())
      e.error(
          "<distribution> lists no <process> (expected one <process regions=\"...\"/> per "
          "process, or no <distribution> for the automatic assignment)");
    bool any_regions = false;
    std::vector<bool> pins(processes.size(), false);
    for (std::size_t p = 0; p < processes.size(); ++p) {
      XmlElement& pe = processes[p];
      const auto listed = words_of(pe.text("regions"));
      const auto kinds = words_of(pe.text("kinds"));
      const auto robots = words_of(pe.text("robots"));
      pe.finish();
      pe.check_children({});
      any_regions = any_regions || pe.has("regions");
      pins[p] = !kinds.empty() || !robots.empty();
      std::vector<int> mine;
      for (const std::string& id : listed) {
        int found = -1;
        for (std::size_t r = 0; r < model_->engines.size(); ++r)
          if (model_->engines[r].id == id) found = static_cast<int>(r);
        if (found < 0) {
          std::string known;
          for (const auto& r : model_->engines) known += (known.empty() ? "" : ", ") + r.id;
          pe.error("unknown region '" + id + "' (expected ids of <physics> engines: " + known +
                   ")");
          continue;
        }
        if (owner[found] >= 0) {
          pe.error("region '" + id + "' is already given to process " +
                   std::to_string(owner[found]) +
                   " (expected each region in exactly one <process>)");
          continue;
        }
        owner[found] = static_cast<int>(p);
        mine.push_back(found);
      }
      for (const std::string& name : kinds) {
        const int k = kind_index(pe, name);
        if (k < 0) continue;
        if (ex_.kind_affinity.empty()) ex_.kind_affinity.assign(model_->kinds.size(), -1);
        int& to = ex_.kind_affinity[static_cast<std::size_t>(k)];
        if (to >= 0) {
          pe.error("kind '" + name + "' is already pinned to process " + std::to_string(to) +
                   " (expected each kind in at most one <process kinds=\"...\">)");
          continue;
        }
        to = static_cast<int>(p);
      }
      for (const std::string& name : robots)
        pinned_robots_.push_back({name, static_cast<int>(p), pe.where()});
      ex_.distribution.push_back(std::move(mine));
    }
    if (!any_regions) {
      // Affinities only: the regions are assigned automatically.
      for (auto& r : ex_.distribution) r.clear();
      return;
    }
    for (std::size_t p = 0; p < processes.size(); ++p)
      if (ex_.distribution[p].empty() && !pins[p] && !processes[p].has("regions"))
        processes[p].error("process " + std::to_string(p) +
                           " has no regions= while others do (expected regions=\"ID ...\", or "
                           "kinds= or robots= for a process that only runs controllers)");
      else if (ex_.distribution[p].empty() && !pins[p] && !d_.has_errors())
        processes[p].error("process " + std::to_string(p) +
                           " simulates no region (expected regions=\"ID ...\")");
    for (std::size_t r = 0; r < owner.size(); ++r)
      if (owner[r] < 0 && !processes.empty())
        e.error("region '" + model_->engines[r].id +
                "' is in no <process> (expected every <physics> region in one)");
  }

  // Robots pinned by name (robots="..."), once the arena's robots are placed.
  void resolve_pinned_robots() {
    if (pinned_robots_.empty()) return;
    std::map<std::string, EntityId> by_name;
    const auto& names = ex_.state.robot_name();
    const auto ids = ex_.state.robot_id();
    for (std::size_t i = 0; i < ex_.state.robot_count(); ++i) by_name[names[i]] = ids[i];
    for (const auto& pin : pinned_robots_) {
      auto it = by_name.find(pin.name);
      if (it == by_name.end()) {
        d_.error(pin.where, "unknown robot '" + pin.name +
                                "' in robots= (expected the id of a <robot>, or of a "
                                "<distribute> robot: its id_prefix and number, e.g. robot0)");
        continue;
      }
      if (ex_.robot_affinity.size() <= it->second) ex_.robot_affinity.resize(it->second + 1, -1);
      int& to = ex_.robot_affinity[it->second];
      if (to >= 0 && to != pin.process) {
        d_.error(pin.where, "robot '" + pin.name + "' is already pinned to process " +
                                std::to_string(to) +
                                " (expected each robot in at most one <process>)");
        continue;
      }
      to = pin.process;
    }
  }

  void read_loop_functions(XmlElement& e) {
    std::string type = e.text("type", "", true);
    const PluginInfo* info = reg_.find(PluginKind::kLoopFunctions, type);
    if (!type.empty() && !info)
      e.error("unknown loop functions '" + type +
              "' (expected one of: " + join(reg_.names(PluginKind::kLoopFunctions)) +
              "; plug-in libraries are named in <plugins>)" +
              did_you_mean(type, reg_.names(PluginKind::kLoopFunctions)));
    ex_.loop_functions = type;
    if (info) {
      ex_.loop_params = read_params(e, *info, {"type"}, file_);
      e.finish();
    }
    e.check_children({});
  }

  // <knowledge><field name="energy" size="1"/>...</knowledge>: every robot's knowledge.
  void read_knowledge(XmlElement& e) {
    e.finish();
    e.check_children({"field"});
    for (auto& f : e.children("field")) {
      const std::string name = f.text("name", "", true);
      const auto size = f.integer("size", 1, 1, 64);
      f.finish();
      f.check_children({});
      if (name.empty()) continue;
      if (std::find(model_->knowledge_names.begin(), model_->knowledge_names.end(), name) !=
          model_->knowledge_names.end()) {
        f.error("knowledge field '" + name + "' is declared twice (expected unique names)");
        continue;
      }
      const bool word = std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      if (!word || std::isdigit(static_cast<unsigned char>(name[0]))) {
        f.error("knowledge field name '" + name +
                "' is not a word (expected letters, digits and _, not starting with a digit: "
                "Lua scripts read it as robot.knowledge." +
                name + ")");
        continue;
      }
      model_->knowledge_names.push_back(name);
      model_->knowledge_sizes.push_back(static_cast<std::uint32_t>(size));
    }
  }

  void add_knowledge_columns() {
    for (std::size_t i = 0; i < model_->knowledge_names.size(); ++i)
      ex_.state.robots.add({"knowledge." + model_->knowledge_names[i], ColumnType::kF64,
                            model_->knowledge_sizes[i], true, false,
                            "knowledge field (docs/experiment-format.md, <knowledge>)", "knowledge",
                            true});
    // Objects have the same fields (ensembles and behaviours read and write them).
    for (std::size_t i = 0; i < model_->knowledge_names.size(); ++i)
      ex_.state.objects.add({"knowledge." + model_->knowledge_names[i], ColumnType::kF64,
                             model_->knowledge_sizes[i], true, false,
                             "an object's knowledge field (docs/experiment-format.md, "
                             "<knowledge>)",
                             "knowledge", true});
    // (Hashed: a layer may keep state in its values, and controllers read them.)
    for (std::size_t i = 0; i < model_->layer_names.size(); ++i)
      ex_.state.robots.add(
          {"layer." + model_->layer_names[i], ColumnType::kF64, model_->layer_sizes[i], true, false,
           "environment layer (docs/experiment-format.md, <layers>)", "layer", false});
  }

  // <layers><layer name="heat" type="bitmap" .../></layers>: environment layers, made and
  // initialised here (their sizes are known before the controllers look them up).
  void read_layers(XmlElement& e) {
    e.finish();
    e.check_children({"layer"});
    std::set<std::string> names;
    for (auto& x : e.children("layer")) {
      const int errors_before = d_.error_count();
      LayerDecl d;
      d.where = x.where();
      d.name = x.text("name", "", true);
      d.type = x.text("type", "", true);
      d.initial = x.real("initial", 0);
      const bool word = !d.name.empty() && std::all_of(d.name.begin(), d.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      }) && !std::isdigit(static_cast<unsigned char>(d.name[0]));
      if (!d.name.empty() && !word)
        x.diagnostics().error(x.where("name"),
                              "layer name '" + d.name +
                                  "' is not a word (expected letters, digits and _, not starting "
                                  "with a digit: Lua scripts read it as robot.layer(\"" +
                                  d.name + "\"))");
      if (word && !names.insert(d.name).second)
        x.diagnostics().error(x.where("name"),
                              "layer '" + d.name + "' is declared twice (expected unique names)");
      const PluginInfo* info = find_plugin(x, PluginKind::kLayer, d.type, "layer type");
      if (!info) continue;
      bool files_exist = true;
      d.params = read_params(x, *info, {"name", "type", "initial"}, file_, &files_exist);
      x.finish();
      x.check_children({});
      // (An element with an error is not made: its init would only repeat it.)
      if (!files_exist || d_.error_count() > errors_before || !arena_ok_) continue;
      d.instance = (*reg_.layer_factory(d.type))();
      struct Setup final : LayerSetup {
        std::string_view name_;
        Vec2 lo, hi;
        std::string_view name() const override { return name_; }
        Vec2 arena_min() const override { return lo; }
        Vec2 arena_max() const override { return hi; }
      } setup;
      setup.name_ = d.name;
      setup.lo = model_->arena_min();
      setup.hi = model_->arena_max();
      std::uint32_t size = 0;
      try {
        d.instance->init(d.params, setup);
        size = d.instance->size();
      } catch (const SetupError& err) {
        if (!err.file.empty())
          d_.error({err.file, err.line}, err.what());
        else
          d_.error(d.where, "layer '" + d.name + "' (type '" + d.type + "'): " + err.what());
        continue;
      } catch (const std::exception& err) {
        d_.error(d.where,
                 "layer '" + d.name + "' (type '" + d.type + "'): init failed: " + err.what());
        continue;
      }
      if (size < 1 || size > 64) {
        d_.error(d.where, "layer '" + d.name + "' (type '" + d.type + "') gives " +
                              std::to_string(size) + " numbers per robot (expected 1 to 64)");
        continue;
      }
      model_->layer_names.push_back(d.name);
      model_->layer_sizes.push_back(size);
      ex_.layers.push_back(std::move(d));
    }
  }

  /// Every robot placed at load starts with its layers' `initial` values.
  void fill_layer_columns() {
    const std::size_t n = ex_.state.robot_count();
    for (std::size_t i = 0; i < ex_.layers.size(); ++i) {
      const ColumnHandle c = ex_.state.robots.find("layer." + model_->layer_names[i]);
      if (c == kNoColumn) continue;
      auto* v = static_cast<double*>(ex_.state.robots.data(c));
      std::fill(v, v + n * model_->layer_sizes[i], ex_.layers[i].initial);
    }
  }

  /// The registry's plug-in `type` of `kind` named by element `x`; reports an unknown one at
  /// `x` (with the known ones; `what` names the kind) and returns null (also for no type).
  const PluginInfo* find_plugin(XmlElement& x, PluginKind kind, const std::string& type,
                                const char* what) {
    const PluginInfo* info = reg_.find(kind, type);
    if (!type.empty() && !info)
      x.error("unknown " + std::string(what) + " '" + type +
              "' (expected one of: " + join(reg_.names(kind)) +
              "; plug-in libraries are named in <plugins>)" + did_you_mean(type, reg_.names(kind)));
    return info;
  }

  // <learning>: <observations columns=...>, <actions columns=...>, <reward type=... weight=...
  // .../>, for Python's fleetsim.Env. Every column and term is checked here, and each term
  // made and initialised once, so that their problems are reported before any run.
  void read_learning(XmlElement& e) {
    LearningSpec& spec = ex_.learning;
    spec.where = e.where();
    e.finish();
    e.check_children({"observations", "actions", "reward"});
    e.check_at_most_one({"observations", "actions"});
    const ColumnStore& robots = ex_.state.robots;
    auto columns = [&](XmlElement& x) {
      std::vector<std::string> names;
      std::string list = x.text("columns", "", true);
      x.finish();
      x.check_children({});
      for (char& c : list)
        if (c == ',') c = ' ';
      std::istringstream words(list);
      for (std::string w; words >> w;) names.push_back(w);
      if (names.empty() && x.has("columns"))
        x.diagnostics().error(x.where("columns"), "columns=\"\" names no column");
      return names;
    };
    if (auto x = e.first_child("observations")) {
      spec.observations = columns(*x);
      for (const auto& name : *spec.observations)
        if (std::string why = observation_column_problem(robots, name); !why.empty())
          x->diagnostics().error(x->where("columns"), "<observations>: " + why);
    }
    if (auto x = e.first_child("actions")) {
      spec.actions = columns(*x);
      for (const auto& name : *spec.actions)
        if (std::string why = action_column_problem(reg_, robots, name); !why.empty())
          x->diagnostics().error(x->where("columns"), "<actions>: " + why);
    }
    const std::vector<std::uint32_t> agents =
        ex_.robot_plan ? std::vector<std::uint32_t>{} : agent_rows(*model_, ex_.state);
    // (No robot at all after an error elsewhere is that error's consequence.)
    if (!ex_.robot_plan && agents.empty() && (ex_.state.robot_count() > 0 || !d_.has_errors()))
      e.error(
          "<learning>, but no robot has the `external` controller (the agents are the robots "
          "whose controller is external)");
    for (auto& x : e.children("reward")) {
      if (!spec.rewards) spec.rewards.emplace();
      RewardDecl d;
      d.where = x.where();
      d.type = x.text("type", "", true);
      d.weight = x.real("weight", 1);
      const PluginInfo* info = find_plugin(x, PluginKind::kReward, d.type, "reward term");
      if (!info) continue;
      bool files_exist = true;
      d.params = read_params(x, *info, {"type", "weight"}, file_, &files_exist);
      x.finish();
      x.check_children({});
      if (!files_exist) continue;
      try {
        make_reward(reg_, d.type, d.params, StateRewardSetup(robots, agents));
      } catch (const SetupError& err) {
        if (!err.file.empty())
          d_.error({err.file, err.line}, err.what());
        else
          x.error("reward '" + d.type + "': " + err.what());
        continue;
      } catch (const std::exception& err) {
        x.error("reward '" + d.type + "': init failed: " + err.what());
        continue;
      }
      spec.rewards->push_back(std::move(d));
    }
  }

  // <ensembles><ensemble type=... period=... coordinators=... members=... within=.../>: made
  // and initialised here, so their problems are reported before the run.
  void read_ensembles(XmlElement& e) {
    e.finish();
    e.check_children({"ensemble"});
    for (auto& x : e.children("ensemble")) {
      EnsembleDecl d;
      d.where = x.where();
      d.type = x.text("type", "", true);
      d.period = x.integer("period", 1, 1, 1'000'000'000);
      d.within_m = x.real("within", 0, 0, 1e9);
      auto selector = [&](const char* attr) {
        ComponentSelector s;
        const std::string text = x.text(attr, "all");
        if (text == "all") return s;
        if (text == "objects") {
          s.by = ComponentSelector::By::kObjects;
          return s;
        }
        const auto colon = text.find(':');
        const std::string how = colon == std::string::npos ? "" : text.substr(0, colon);
        s.value = colon == std::string::npos ? "" : text.substr(colon + 1);
        if (how == "tag") {
          s.by = ComponentSelector::By::kTag;
        } else if (how == "kind") {
          s.by = ComponentSelector::By::kKind;
          bool found = false;
          for (const RobotKind& k : model_->kinds)
            if (k.name == s.value) found = true, s.kind = k.index;
          if (!found)
            x.diagnostics().error(x.where(attr), std::string(attr) + "=\"" + text +
                                                     "\": no robot kind '" + s.value + "'");
        } else if (how == "class") {
          s.by = ComponentSelector::By::kClass;
          const auto& classes = model_->object_classes;
          const auto it = std::find(classes.begin(), classes.end(), s.value);
          if (it == classes.end())
            x.diagnostics().error(
                x.where(attr), std::string(attr) + "=\"" + text + "\": no object of class '" +
                                   s.value + "' in the arena (its classes: " +
                                   (classes.empty() ? std::string("none") : join(classes)) + ")" +
                                   did_you_mean(s.value, classes));
          else
            s.kind = static_cast<std::uint16_t>(it - classes.begin());
        } else {
          x.diagnostics().error(x.where(attr),
                                std::string(attr) + "=\"" + text +
                                    "\" is not a selector (expected all, kind:NAME, tag:TAG, "
                                    "objects or class:NAME)");
        }
        return s;
      };
      d.coordinators = selector("coordinators");
      d.members = selector("members");
      const PluginInfo* info = find_plugin(x, PluginKind::kEnsemble, d.type, "ensemble type");
      if (!info) continue;
      bool files_exist = true;
      d.params = read_params(x, *info, {"type", "period", "coordinators", "members", "within"},
                             file_, &files_exist);
      x.finish();
      x.check_children({});
      if (!files_exist || d_.has_errors()) continue;
      d.instance = (*reg_.ensemble_factory(d.type))();
      try {
        d.instance->init(d.params, KnowledgeSetup(*model_));
      } catch (const SetupError& err) {
        if (!err.file.empty())
          d_.error({err.file, err.line}, err.what());
        else
          d_.error(d.where, "ensemble '" + d.type + "': " + err.what());
        continue;
      } catch (const std::exception& err) {
        d_.error(d.where, "ensemble '" + d.type + "': init failed: " + err.what());
        continue;
      }
      ex_.ensembles.push_back(std::move(d));
    }
  }

  void read_log(XmlElement& e) {
    LogSpec s;
    s.where = e.where();
    s.path = e.text("path", "", true);
    std::string f = e.choice("format", {"frames", "deeco"}, "frames");
    s.format = f == "deeco" ? log::LogFormat::kDeeco : log::LogFormat::kFrames;
    s.every = e.integer("every", 1, 1, 1'000'000'000);
    e.finish();
    e.check_children({});
    if (!s.path.empty()) {
      s.path = file_.resolve(s.path);
      ex_.logs.push_back(s);
    }
  }

  void apply_log_overrides() {
    if (ov_.log_path && ov_.log_path->empty()) {
      ex_.logs.clear();  // --log '': no log at all
    } else if (ov_.log_path) {
      LogSpec s;
      std::int64_t every = ex_.logs.empty() ? 1 : ex_.logs[0].every;
      s.path = *ov_.log_path;
      s.every = every;
      s.format = ov_.log_format ? *ov_.log_format
                                : (ex_.logs.empty() ? log::LogFormat::kFrames : ex_.logs[0].format);
      ex_.logs = {s};
    } else if (ov_.log_format) {
      for (auto& l : ex_.logs) l.format = *ov_.log_format;
    }
  }

  int kind_index(XmlElement& e, const std::string& name) {
    for (std::size_t k = 0; k < model_->kinds.size(); ++k)
      if (model_->kinds[k].name == name) return static_cast<int>(k);
    std::vector<std::string> names;
    for (const auto& k : model_->kinds) names.push_back(k.name);
    e.error("unknown robot kind '" + name + "' (expected one of: " + join(names) +
            "; declare kinds in <kinds>)" + did_you_mean(name, names));
    return -1;
  }

  /// False (reported) when kind k's engine type cannot simulate its bodies.
  bool engine_accepts(XmlElement& e, int k) {
    const RobotKind& kind = model_->kinds[static_cast<std::size_t>(k)];
    // Unresolved, or named on the kind (then refused at the kind): reported already.
    if (kind.engine_type >= ex_.engines.size()) return true;
    if (explicit_engine_.count(kind.name))
      return ex_.engines[kind.engine_type]->refuses(kind).empty();
    const std::string why = ex_.engines[kind.engine_type]->refuses(kind);
    if (why.empty()) return true;
    e.error("robot kind '" + kind.name + "' cannot be simulated by " + kind.engine + ": " + why +
            " (expected <physics> to declare an engine type that accepts it: dynamics2d for "
            "boxes, pointmass3d for flyers)");
    return false;
  }

  /// The controller of a <robot> or <distribute> of kind k (-1 when unknown, reported): the
  /// one named, or for a passive kind without one, a built-in idle controller.
  int body_controller(XmlElement& e, int k, const std::string& ctrl) {
    if (!ctrl.empty()) return controller_index(e, ctrl);
    if (k >= 0 && model_->kinds[static_cast<std::size_t>(k)].passive) {
      for (std::size_t c = 0; c < model_->controllers.size(); ++c)
        if (model_->controllers[c].id == kPassiveController) return static_cast<int>(c);
      model_->controllers.push_back({kPassiveController, "idle", {}, e.where()});
      return static_cast<int>(model_->controllers.size() - 1);
    }
    if (k >= 0)
      e.error(std::string("<") + e.name() +
              "> is missing attribute 'controller' (expected the "
              "id of a <controller> in <controllers>; only passive kinds such as cylinder and "
              "box need none)");
    return -1;
  }

  int controller_index(XmlElement& e, const std::string& id) {
    for (std::size_t c = 0; c < model_->controllers.size(); ++c)
      if (model_->controllers[c].id == id) return static_cast<int>(c);
    std::vector<std::string> ids;
    for (const auto& c : model_->controllers) ids.push_back(c.id);
    e.error("unknown controller '" + id + "' (expected the id of a <controller> in <controllers>" +
            (ids.empty() ? std::string(", and there is none") : ": " + join(ids)) + ")" +
            did_you_mean(id, ids));
    return -1;
  }

  void read_arena_bodies(XmlElement& arena) {
    WorldState& st = ex_.state;
    std::map<std::string, SourceLocation> names;
    std::map<std::string, std::uint16_t> classes;
    int distribute_index = 0;
    auto plan = std::make_shared<RobotPlan>();
    plan->seed = model_->seed;
    plan->max_tries = ov_.max_placement_tries;
    // Ids in the order of the file: robots, each <distribute>'s robots, objects.
    EntityId next = 0;
    std::size_t by_hand = 0;
    for (pugi::xml_node b : arena.node().children())
      if (std::string_view(b.name()) == "robot") ++by_hand;
    Placement place(*model_, model_->max_radius_m(), by_hand);
    place.reserve(by_hand);
    plan->robots.reserve(by_hand);
    for (auto& e : arena.children()) {
      std::string n = e.name();
      if (n == "robot") {
        std::string id = e.text("id", "", true);
        std::string kind = e.text("kind", "epuck");
        std::string ctrl = e.text("controller", "");
        Vec2 p = e.vec2("position", {}, true);
        double heading = e.real("heading", 0, -360, 360) * kDeg;
        std::string tag = e.text("tag");
        std::string led = e.text("led", "off");
        e.finish();
        e.check_children({});
        int k = kind_index(e, kind);
        int c = body_controller(e, k, ctrl);
        if (k >= 0 && !engine_accepts(e, k)) continue;
        auto colour = parse_color(led);
        if (!colour)
          e.error("led '" + led +
                  "' is not a colour (expected a name such as red, green, "
                  "gray50 or off, or \"r,g,b\"; docs/lua-api.md lists the names)");
        if (!id.empty() && !unique_name(e, id, names)) continue;
        if (k < 0 || c < 0 || !e.has("position")) continue;
        double r = model_->kinds[k].radius_m;
        std::string why = place.check(p, r, plan->robots);
        if (!why.empty()) {
          e.error("robot '" + id + "' at " + fmt_vec(p) + " " + why +
                  " (expected a free position inside the arena)");
          continue;
        }
        if (colour && e.has("led") && !has_leds(k)) {
          e.error("robot kind '" + model_->kinds[static_cast<std::size_t>(k)].name +
                  "' has no LEDs (expected no led attribute, or a kind with a leds actuator)");
          continue;
        }
        place.add(p, static_cast<std::uint16_t>(k),
                  static_cast<std::uint32_t>(plan->robots.size()));
        PlannedRobot pr{next++,
                        static_cast<std::uint16_t>(k),
                        static_cast<std::uint16_t>(c),
                        p,
                        heading,
                        st.tags.intern(tag),
                        id,
                        std::nullopt};
        if (colour && e.has("led")) pr.led = *colour;
        plan->robots.push_back(std::move(pr));
        note_controller(c, k, e.where(), id);
      } else if (n == "distribute") {
        std::int64_t count = e.integer("count", 0, 1, 100'000'000, true);
        std::string kind = e.text("kind", "epuck");
        std::string ctrl = e.text("controller", "");
        std::string prefix = e.text("id_prefix", "robot");
        std::string tag = e.text("tag");
        std::int64_t tries = e.integer("max_tries", 1000, 1, 1'000'000);
        std::optional<Box4> region;
        if (e.has("region"))
          region = read_region(e, "region", false);
        else
          e.accept("region");
        e.finish();
        e.check_children({});
        int k = kind_index(e, kind);
        int c = body_controller(e, k, ctrl);
        int dindex = distribute_index++;
        if (k >= 0 && !engine_accepts(e, k)) continue;
        if (k < 0 || c < 0 || count <= 0) continue;
        note_controller(c, k, e.where(), prefix + "0");
        const double r = model_->kinds[k].radius_m;
        const Box4 box = region ? *region : Box4{model_->arena_min(), model_->arena_max()};
        if (box.hi.x - box.lo.x <= 2 * r || box.hi.y - box.lo.y <= 2 * r) {
          e.error("the region is too small for a robot of kind '" + kind + "' (radius " +
                  fmt_real(r) + " m; expected a region wider and taller than " + fmt_real(2 * r) +
                  " m)");
          continue;
        }
        DistributePlan d;
        d.where = e.where();
        d.index = dindex;
        d.first_id = next;
        d.count = count;
        d.kind = static_cast<std::uint16_t>(k);
        d.controller = static_cast<std::uint16_t>(c);
        d.tag = st.tags.intern(tag);
        d.prefix = prefix;
        d.tries = tries;
        d.radius = r;
        d.lo = {box.lo.x + r, box.lo.y + r};
        d.hi = {box.hi.x - r, box.hi.y - r};
        plan->distributes.push_back(std::move(d));
        next += static_cast<EntityId>(count);
      } else if (n == "object") {
        std::string id = e.text("id", "", true);
        std::string cls = e.text("class", "object");
        Vec2 p = e.vec2("position", {}, true);
        double size = e.real("size", 0.1, 0, 1e6);
        std::string tag = e.text("tag");
        std::string behaviour = e.text("behaviour");
        e.finish();
        e.check_children({});
        if (!id.empty() && !unique_name(e, id, names)) continue;
        auto it = classes.find(cls);
        if (it == classes.end()) {
          it =
              classes.emplace(cls, static_cast<std::uint16_t>(model_->object_classes.size())).first;
          model_->object_classes.push_back(cls);
        }
        st.next_id = next++;
        const EntityId object = st.add_object(it->second, p, size, st.tags.intern(tag), id);
        if (!behaviour.empty()) add_object_behaviour(e, behaviour, object);
      }
    }
    st.skip_robot_ids_to(next);
    if (d_.has_errors()) return;
    // (Every robot takes a try at least: a bound on the tries bounds the plan's work too.)
    if (ov_.max_placement_tries && !plan->distributes.empty() &&
        static_cast<std::int64_t>(plan->total()) > *ov_.max_placement_tries) {
      d_.error(plan->distributes.front().where, too_many_placement_tries(*ov_.max_placement_tries));
      return;
    }
    plan->plan(*model_);
    {
      Hasher world;
      world.word(st.hash());
      world.word(plan->fingerprint());
      ex_.world_fingerprint = world.value();
    }
    // Placed now, unless the run asked to place them later (a process of a partitioned run
    // places only the tiles near its domain); robots pinned to processes by name are placed
    // now, to be found.
    const bool splits = model_->engines.size() == 1 && (model_->engines[0].type == "kinematics2d" ||
                                                        model_->engines[0].type == "pointmass3d");
    if (ov_.defer_placement && plan->total() >= ov_.defer_placement_from && splits &&
        pinned_robots_.empty() && ex_.distribution.empty() && ex_.kind_affinity.empty()) {
      ex_.robot_plan = std::move(plan);
      return;
    }
    if (ov_.keep_placement) {
      ex_.placement = plan;
      ex_.unplaced = std::make_shared<const WorldState>(st);
    }
    plan->place(*model_, st, nullptr, d_);
  }

  bool has_leds(int k) const {
    for (const auto& a : model_->kinds[static_cast<std::size_t>(k)].actuators)
      if (a.interface == "leds") return true;
    return false;
  }

  /// Remembers the first place each (controller, kind) pair is used.
  void note_controller(int c, int k, const SourceLocation& where, const std::string& name) {
    used_.emplace(std::make_pair(static_cast<std::uint16_t>(c), static_cast<std::uint16_t>(k)),
                  FirstUse{where, name});
  }

  /// Every controller is initialised once per kind it drives before the run: a controller
  /// asking for a part the kind lacks, or a script that does not load, is a user error here.
  /// Controllers whose file is missing were reported by read_params, once, and are skipped.
  /// Shared controllers keep that instance.
  void check_controllers() {
    for (const auto& [ck, first] : used_) {
      const SourceLocation& where = first.where;
      const auto [c, k] = ck;
      if (missing_files_.count(c)) continue;
      const ControllerDecl& decl = model_->controllers[c];
      try {
        // A per-robot controller is checked under the name of the pair's first robot (a script
        // may read its role from it in init); a shared one drives no robot in particular.
        const bool shared = reg_.controller_scope(decl.type) == ControllerScope::kShared;
        auto ctrl = make_controller(*model_, ex_.parts, reg_, c, k, kNoEntity,
                                    shared ? RobotStart{} : RobotStart{first.name});
        if (shared)
          ex_.shared_controllers[ck] = std::move(ctrl);
        else
          ctrl->destroy();
      } catch (const MissingPartError& err) {
        // The kind lacks a part the controller needs: at the element that pairs them.
        d_.error(where, "controller '" + decl.id + "' (type '" + decl.type + "'): " + err.what());
      } catch (const SetupError& err) {
        // The controller's input is wrong: at the script's line, else at the <controller>
        // element (a script without step(), a bad parameter), whichever robot uses it.
        if (!err.file.empty())
          d_.error({err.file, err.line}, err.what());
        else
          d_.error(decl.where.file.empty() ? where : decl.where,
                   "controller '" + decl.id + "' (type '" + decl.type + "'): " + err.what());
      } catch (const std::exception& err) {
        d_.error(
            decl.where.file.empty() ? where : decl.where,
            "controller '" + decl.id + "' (type '" + decl.type + "'): init failed: " + err.what());
      }
    }
  }

  bool unique_name(XmlElement& e, const std::string& id,
                   std::map<std::string, SourceLocation>& names) {
    auto [it, fresh] = names.emplace(id, e.where());
    if (!fresh) {
      e.error("id '" + id + "' is already used at line " + std::to_string(it->second.line) +
              " (expected unique ids)");
      return false;
    }
    return true;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "none" : s;
  }
  static std::string fmt_real(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  static std::string fmt_vec(Vec2 v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "(%g, %g)", v.x, v.y);
    return buf;
  }
  static std::string fmt_box(Vec2 lo, Vec2 hi) { return fmt_vec(lo) + "-" + fmt_vec(hi); }

  const XmlFile& file_;
  PluginRegistry& reg_;
  const ExperimentOverrides& ov_;
  Diagnostics& d_;
  std::shared_ptr<WorldModel> model_;
  Experiment ex_;
  bool arena_ok_ = false;
  /// Where each (controller, kind) pair is first used, and its first robot's name.
  struct FirstUse {
    SourceLocation where;
    std::string name;
  };
  std::map<std::pair<std::uint16_t, std::uint16_t>, FirstUse> used_;
  std::int64_t placement_tries_ = 0;  ///< counted against ov_.max_placement_tries
  std::map<std::string, SourceLocation> explicit_engine_;  ///< kinds naming their engine type
  struct PinnedRobot {
    std::string name;
    int process;
    SourceLocation where;
  };
  std::vector<PinnedRobot> pinned_robots_;  ///< <process robots="...">, resolved after placement
  std::set<std::string> declared_kinds_;
  std::set<std::size_t> missing_files_;       ///< controllers naming a file that does not exist
  std::set<std::size_t> missing_behaviours_;  ///< behaviours whose own element has an error
};

}  // namespace

namespace {
/// Gives the parse's scratch (placement grids, XML tree: as much again as the world at a
/// million robots) back to the system, so the run's own buffers do not add to it.
std::optional<Experiment> release_scratch(std::optional<Experiment> ex) {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  return ex;
}
}  // namespace

namespace {
/// An ARGoS experiment (root <argos-configuration>, whatever its extension) and a DEECo
/// playground scenario (root <simulation>) are read into fleetsim's format first; all then go
/// through the one builder.
std::unique_ptr<XmlFile> in_fleetsim_format(std::unique_ptr<XmlFile> file,
                                            const ExperimentOverrides& overrides,
                                            Diagnostics& diags) {
  if (file && is_playground_scenario(*file)) return read_playground_scenario(*file, diags);
  if (!file || !is_argos_configuration(*file)) return file;
  return read_argos_experiment(*file, diags, overrides.max_placement_tries, overrides.seed);
}
}  // namespace

std::optional<Experiment> load_experiment(const std::string& path, PluginRegistry& registry,
                                          const ExperimentOverrides& overrides,
                                          Diagnostics& diags) {
  auto file = in_fleetsim_format(XmlFile::load(path, diags), overrides, diags);
  if (!file) return std::nullopt;
  auto ex = ExperimentParser(*file, registry, overrides, diags).parse();
  file.reset();
  return release_scratch(std::move(ex));
}

std::optional<Experiment> parse_experiment(const std::string& text, const std::string& name,
                                           PluginRegistry& registry,
                                           const ExperimentOverrides& overrides,
                                           Diagnostics& diags) {
  auto file = in_fleetsim_format(XmlFile::parse(text, name, diags), overrides, diags);
  if (!file) return std::nullopt;
  auto ex = ExperimentParser(*file, registry, overrides, diags).parse();
  file.reset();
  return release_scratch(std::move(ex));
}

}  // namespace fleetsim
