#include "scenario/playground_file.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scenario/bitmap.hpp"

namespace fleetsim {

bool is_playground_scenario(const XmlFile& file) {
  return std::string_view(file.root().name()) == "simulation";
}

namespace {

/// A number as the derived document's text: the shortest that reads back to the same double.
std::string number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// What the mapping says of one Java class: its fleetsim element's attributes.
struct ClassMapping {
  std::vector<std::pair<std::string, std::string>> attributes;  ///< in the file's order
  std::string type;
  SourceLocation where;
};

class PlaygroundReader {
 public:
  PlaygroundReader(const XmlFile& in, Diagnostics& d) : in_(in), d_(d) {}

  std::unique_ptr<XmlFile> read() {
    XmlElement root(in_, in_.root(), d_);
    read_mapping(root);
    out_ = XmlFile::derived(in_.path());
    fleetsim_ = add(out_->document(), "fleetsim", root.where().line);
    const int line = root.where().line;
    const std::int64_t cycles = root.integer("cycles", 0, 0, 1'000'000'000, true);
    const std::string logfile = root.text("logfile", "", true);
    const std::int64_t processing = root.integer("processingTime", 1, 1, 1000);
    const bool has_bitmap = root.has("bitmap");
    const std::string bitmap = root.text("bitmap");
    std::int64_t size_x = root.integer("sizeX", 0, 1, 1'000'000);
    std::int64_t size_y = root.integer("sizeY", 0, 1, 1'000'000);
    root.finish();
    root.check_children({"sensors", "robots", "ensembles", "objects"});
    // One cycle is one tick of one second: a speed of 1 (the playground's most, a field unit a
    // cycle) is 1 m/s with field units of a metre.
    pugi::xml_node framework = add(fleetsim_, "framework", line);
    set(framework, "ticks_per_second", "1", line);
    set(framework, "length", std::to_string(cycles), root.where("cycles").line);
    // processingTime p: the components decide p + 1 times on a cycle's inputs, and the last
    // decision is fetched (measured on the playground: docs/experiment-format.md).
    set(framework, "processing_time", std::to_string(processing),
        root.where("processingTime").line);
    std::string bitmap_path;
    if (has_bitmap) {
      // As the playground: relative to the current directory; then beside the scenario.
      std::error_code ec;
      bitmap_path = std::filesystem::absolute(bitmap, ec).string();
      if (!std::filesystem::exists(bitmap_path, ec)) bitmap_path = in_.resolve(bitmap);
      std::string why;
      auto bm = load_png_bitmap(bitmap_path, why);
      if (!bm) {
        d_.error(root.where("bitmap"),
                 "bitmap '" + bitmap + "': " + why +
                     " (fleetsim reads PNG fields: convert a JPG or BMP field to PNG, e.g. "
                     "`convert map.jpg map.png`, keeping black obstacles at 0,0,0)");
        return nullptr;
      }
      size_x = bm->width;
      size_y = bm->height;
    } else if (!root.has("sizeX") || !root.has("sizeY")) {
      root.error(
          "no field: the playground needs either bitmap=\"map.png\" or sizeX and sizeY "
          "(expected e.g. sizeX=\"100\" sizeY=\"100\")");
      return nullptr;
    }
    height_ = static_cast<double>(size_y);
    kinds_ = add(fleetsim_, "kinds", line);
    if (mapping_knowledge_) copy_element(*mapping_knowledge_, fleetsim_, line);
    controllers_ = add(fleetsim_, "controllers", line);
    arena_ = add(fleetsim_, "arena", line);
    set(arena_, "size", std::to_string(size_x) + "," + std::to_string(size_y), line);
    set(arena_, "center", number(size_x / 2.0) + "," + number(size_y / 2.0), line);
    if (has_bitmap) {
      pugi::xml_node b = add(arena_, "bitmap", root.where("bitmap").line);
      set(b, "file", bitmap_path, root.where("bitmap").line);
      set(b, "resolution", "1", root.where("bitmap").line);
    }
    // Sensors first: every robot kind carries them all.
    for (auto& s : root.children("sensors")) read_sensors(s);
    for (auto& r : root.children("robots")) read_robots(r);
    for (auto& o : root.children("objects")) read_objects(o);
    pugi::xml_node ensembles;
    for (auto& e : root.children("ensembles")) {
      e.finish();
      e.check_children({"ensemble"});
      for (auto& x : e.children("ensemble")) {
        const std::string cls = x.text("class", "", true);
        x.finish();
        x.check_children({});
        const ClassMapping* m =
            mapped(x, ensembles_, cls, "ensemble",
                   "<ensemble class=\"" + cls + "\" type=\"lua\" script=\"signal.lua\"/>");
        if (!m) continue;
        if (!ensembles) ensembles = add(fleetsim_, "ensembles", x.where().line);
        pugi::xml_node n = add(ensembles, "ensemble", x.where().line);
        for (const auto& [k, v] : m->attributes) set(n, k.c_str(), v, x.where().line);
        if (auto more = more_ensembles_.find(cls); more != more_ensembles_.end())
          for (const ClassMapping& extra : more->second) {
            pugi::xml_node e2 = add(ensembles, "ensemble", x.where().line);
            for (const auto& [k, v] : extra.attributes) set(e2, k.c_str(), v, x.where().line);
          }
      }
    }
    std::error_code ec;
    pugi::xml_node log = add(fleetsim_, "log", root.where("logfile").line);
    set(log, "path", std::filesystem::absolute(logfile, ec).string(), root.where("logfile").line);
    set(log, "format", "deeco", root.where("logfile").line);
    if (d_.has_errors()) return nullptr;
    return std::move(out_);
  }

 private:
  pugi::xml_node add(pugi::xml_node parent, const char* name, int line) {
    return out_->add_element(parent, name, line);
  }
  void set(pugi::xml_node n, const char* attr, const std::string& value, int line) {
    out_->add_attribute(n, attr, value, line);
  }
  void copy_element(pugi::xml_node from, pugi::xml_node parent, int line) {
    pugi::xml_node n = add(parent, from.name(), line);
    for (pugi::xml_attribute a : from.attributes()) set(n, a.name(), a.value(), line);
    for (pugi::xml_node c : from.children())
      if (c.type() == pugi::node_element) copy_element(c, n, line);
  }

  // ------------------------------------------------------------------ the class mapping
  void read_mapping(const XmlElement& root) {
    const std::filesystem::path scenario(in_.path());
    const std::filesystem::path dir = scenario.parent_path();
    std::vector<std::filesystem::path> candidates = {
        dir / (scenario.stem().string() + ".classes.xml"), dir / "classes.xml"};
    std::error_code ec;
    for (const auto& c : candidates)
      if (std::filesystem::exists(c, ec)) {
        mapping_ = XmlFile::load(c.string(), d_);
        break;
      }
    if (!mapping_) {
      if (!d_.has_errors())
        root.error(
            "a DEECo playground scenario needs a class mapping: fleetsim runs no Java, so '" +
            candidates[0].filename().string() + "' or 'classes.xml' beside it names a " +
            "fleetsim controller for each robot class, sensor processor and ensemble " +
            "(expected <classes><robot class=\"pkg.MyRobot\" type=\"lua\" "
            "script=\"my_robot.lua\"/>...</classes>; docs/experiment-format.md, "
            "\"DEECo playground scenarios\")");
      return;
    }
    XmlElement m(*mapping_, mapping_->root(), d_);
    if (std::string(m.name()) != "classes") {
      m.error(std::string("root element is <") + m.name() +
              "> (expected <classes>, a DEECo playground class mapping)");
      return;
    }
    m.finish();
    m.check_children({"knowledge", "action", "robot", "sensor", "layer", "ensemble", "object"});
    m.check_at_most_one({"knowledge", "action"});
    if (auto k = m.first_child("knowledge")) mapping_knowledge_ = k->node();
    // <action extras="..."/>: the robots' deeco_wheels' parameters (a custom action's numbers,
    // such as the firefighters' extinguisher).
    if (auto a = m.first_child("action")) {
      for (pugi::xml_attribute at : a->node().attributes())
        action_attributes_.emplace_back(at.name(), at.value());
      a->check_children({});
    }
    auto entry = [&](XmlElement& x, const char* key, std::map<std::string, ClassMapping>& into) {
      ClassMapping c;
      c.where = x.where();
      std::string cls;
      for (pugi::xml_attribute a : x.node().attributes()) {
        if (std::string_view(a.name()) == key) {
          cls = a.value();
          continue;
        }
        if (std::string_view(a.name()) == "type") c.type = a.value();
        c.attributes.emplace_back(a.name(), a.value());
      }
      x.check_children({});
      if (cls.empty()) {
        x.error(std::string("missing attribute '") + key +
                "' (expected the Java class's full name)");
        return;
      }
      if (c.type.empty()) {
        x.error("missing attribute 'type' (expected the fleetsim type it runs as, e.g. lua)");
        return;
      }
      if (into.count(cls) && &into == &ensembles_) {
        // An ensemble class may stand for several ensembles (one whose coordinators are
        // robots and objects is two here): each entry becomes one, in the mapping's order.
        more_ensembles_[cls].push_back(std::move(c));
        return;
      }
      if (!into.emplace(cls, std::move(c)).second)
        x.error("class '" + cls + "' is mapped twice (expected one entry per class)");
    };
    for (auto& x : m.children("robot")) entry(x, "class", robots_);
    for (auto& x : m.children("sensor")) entry(x, "processor", sensors_);
    for (auto& x : m.children("layer")) entry(x, "processor", layers_);
    for (auto& x : m.children("ensemble")) entry(x, "class", ensembles_);
    for (auto& x : m.children("object")) entry(x, "class", objects_);
  }

  /// The mapping of `cls`, or an error at `e` saying what to add to the mapping file.
  const ClassMapping* mapped(const XmlElement& e, const std::map<std::string, ClassMapping>& in,
                             const std::string& cls, const char* what, const std::string& example) {
    if (cls.empty() || !mapping_) return nullptr;
    auto it = in.find(cls);
    if (it != in.end()) return &it->second;
    e.error(std::string(what) + " class '" + cls + "' has no fleetsim counterpart in " +
            mapping_->path() + " (Java classes do not run in fleetsim: port it to Lua or C++ " +
            "and add " + example + ")");
    return nullptr;
  }

  // ------------------------------------------------------------------ sensors, robots, objects
  void read_sensors(XmlElement& s) {
    s.finish();
    s.check_children({"sensor"});
    for (auto& x : s.children("sensor")) {
      const std::string name = x.text("name", "", true);
      const std::string processor = x.text("processor", "", true);
      const std::string arg = x.text("arg");
      x.finish();
      x.check_children({});
      if (name == "collisions")
        x.error(
            "a sensor cannot be called 'collisions' (the playground's collision sensor has "
            "that name)");
      if (!sensor_names_.insert(name).second)
        x.error("two sensors are called '" + name + "' (expected unique names)");
      if (!arg.empty())
        x.error("arg=\"" + arg +
                "\": a fleetsim sensor takes no argument string (remove arg "
                "and give the sensor's parameters in the class mapping's <sensor> entry)");
      // A processor mapped to an environment layer: the layer of the sensor's name, which
      // the robots read by it (robot.layer(name), as getInputFromSensor(name, type)).
      if (auto l = layers_.find(processor); l != layers_.end()) {
        if (!layers_node_) layers_node_ = add(fleetsim_, "layers", x.where().line);
        pugi::xml_node n = add(layers_node_, "layer", x.where().line);
        set(n, "name", name, x.where("name").line);
        for (const auto& [k, v] : l->second.attributes) set(n, k.c_str(), v, x.where().line);
        continue;
      }
      const ClassMapping* m =
          mapped(x, sensors_, processor, "sensor processor",
                 "<sensor processor=\"" + processor + "\" type=\"positioning\"/> or <layer " +
                     "processor=\"" + processor + "\" type=\"lua\" script=\"layer.lua\"/>");
      if (m) sensor_parts_.push_back(m);
    }
  }

  void read_robots(XmlElement& r) {
    r.finish();
    r.check_children({"robot"});
    for (auto& x : r.children("robot")) {
      const int line = x.where().line;
      const std::string cls = x.text("class", "", true);
      const double px = x.real("posX", 0, -1e9, 1e9, true);
      const double py = x.real("posY", 0, -1e9, 1e9, true);
      const double angle = x.real("angle", 0, -1e9, 1e9, true);
      const double size = x.real("size", 3.0, 1.0, 1e6);
      const std::string tag = x.text("tag");
      const std::string arg = x.text("arg");
      x.finish();
      x.check_children({});
      if (!arg.empty())
        x.error("arg=\"" + arg + "\": fleetsim controllers take no per-robot argument string " +
                "(remove arg, and give the value as a parameter of the robot class's entry in " +
                "the class mapping, or a tag)");
      const ClassMapping* m =
          mapped(x, robots_, cls, "robot",
                 "<robot class=\"" + cls + "\" type=\"lua\" script=\"my_robot.lua\"/>");
      if (!m) continue;
      if (controllers_made_.insert(cls).second) {
        pugi::xml_node c = add(controllers_, "controller", line);
        set(c, "id", cls, line);
        for (const auto& [k, v] : m->attributes) set(c, k.c_str(), v, line);
      }
      // A kind per class and size, named after the class (the log's robot section shows it).
      const std::string kind = kind_for(cls, size, line);
      pugi::xml_node n = add(arena_, "robot", line);
      set(n, "id", "r" + std::to_string(robot_count_++), line);
      set(n, "kind", kind, line);
      set(n, "controller", cls, line);
      set(n, "position", number(px) + "," + number(height_ - py), line);
      // The playground's angle 0 points down the field; fleetsim's heading 0 along +x.
      set(n, "heading", number(std::remainder(angle - 90.0, 360.0)), x.where("angle").line);
      if (!tag.empty()) set(n, "tag", tag, line);
    }
  }

  std::string kind_for(const std::string& cls, double size, int line) {
    const auto key = std::make_pair(cls, size);
    auto it = kinds_made_.find(key);
    if (it != kinds_made_.end()) return it->second;
    std::string name = cls;
    for (const auto& [k, v] : kinds_made_)
      if (k.first == cls) name = cls + "@" + number(size);
    pugi::xml_node k = add(kinds_, "kind", line);
    set(k, "name", name, line);
    set(k, "base", "epuck", line);
    set(k, "radius", number(size), line);
    set(k, "max_speed", "1", line);
    set(add(k, "sensor", line), "type", "collision", line);
    for (const ClassMapping* s : sensor_parts_) {
      pugi::xml_node n = add(k, "sensor", line);
      for (const auto& [a, v] : s->attributes) set(n, a.c_str(), v, line);
    }
    pugi::xml_node wheels = add(k, "actuator", line);
    set(wheels, "type", "deeco_wheels", line);
    for (const auto& [a, v] : action_attributes_) set(wheels, a.c_str(), v, line);
    kinds_made_.emplace(key, name);
    return name;
  }

  void read_objects(XmlElement& o) {
    o.finish();
    o.check_children({"object"});
    for (auto& x : o.children("object")) {
      const int line = x.where().line;
      const std::string cls = x.text("class", "", true);
      const double px = x.real("posX", 0, -1e9, 1e9, true);
      const double py = x.real("posY", 0, -1e9, 1e9, true);
      const double size = x.real("size", 0, 0, 1e9, true);
      const std::string tag = x.text("tag");
      const std::string arg = x.text("arg");
      x.finish();
      x.check_children({});
      if (!arg.empty())
        x.error("arg=\"" + arg + "\": fleetsim object behaviours take no per-object argument " +
                "string (remove arg, and give the value as a parameter of the class's entry in " +
                "the class mapping)");
      pugi::xml_node n = add(arena_, "object", line);
      set(n, "id", "o" + std::to_string(object_count_++), line);
      set(n, "class", cls, line);
      set(n, "position", number(px) + "," + number(height_ - py), line);
      // The playground's size is a half side; fleetsim's the full width.
      set(n, "size", number(2 * size), x.where("size").line);
      if (!tag.empty()) set(n, "tag", tag, line);
      // A class the mapping does not name stays where the scenario puts it (a DEECoObject
      // without processes).
      auto it = objects_.find(cls);
      if (it == objects_.end()) continue;
      if (behaviours_made_.insert(cls).second) {
        pugi::xml_node b = add(controllers_, "behaviour", line);
        set(b, "id", cls, line);
        for (const auto& [k, v] : it->second.attributes) set(b, k.c_str(), v, line);
      }
      set(n, "behaviour", cls, line);
    }
  }

  const XmlFile& in_;
  Diagnostics& d_;
  std::unique_ptr<XmlFile> out_, mapping_;
  std::optional<pugi::xml_node> mapping_knowledge_;
  std::vector<std::pair<std::string, std::string>> action_attributes_;
  std::map<std::string, ClassMapping> robots_, sensors_, layers_, ensembles_, objects_;
  std::map<std::string, std::vector<ClassMapping>> more_ensembles_;  ///< further entries
  pugi::xml_node layers_node_;
  std::vector<const ClassMapping*> sensor_parts_;
  std::set<std::string> sensor_names_, controllers_made_, behaviours_made_;
  std::map<std::pair<std::string, double>, std::string> kinds_made_;
  pugi::xml_node fleetsim_, kinds_, controllers_, arena_;
  double height_ = 0;
  int robot_count_ = 0, object_count_ = 0;
};

}  // namespace

std::unique_ptr<XmlFile> read_playground_scenario(const XmlFile& scenario, Diagnostics& diags) {
  return PlaygroundReader(scenario, diags).read();
}

}  // namespace fleetsim
