#include "view/view_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/xml_reader.hpp"
#include "view/playground_view_config.hpp"

namespace fleetsim::view {

namespace {

struct NamedColor {
  const char* name;
  Rgba color;
};

// The names a user may write instead of numbers: the DEECo playground's basic colours plus a
// few greys. Kept short on purpose; any other colour is written as numbers.
constexpr std::array kNamedColors{
    NamedColor{"black", {0, 0, 0, 1}},          NamedColor{"white", {1, 1, 1, 1}},
    NamedColor{"red", {1, 0, 0, 1}},            NamedColor{"green", {0, 0.6f, 0, 1}},
    NamedColor{"blue", {0, 0, 1, 1}},           NamedColor{"yellow", {1, 0.85f, 0, 1}},
    NamedColor{"cyan", {0, 0.8f, 0.8f, 1}},     NamedColor{"magenta", {0.85f, 0, 0.85f, 1}},
    NamedColor{"orange", {1, 0.55f, 0, 1}},     NamedColor{"pink", {1, 0.6f, 0.75f, 1}},
    NamedColor{"purple", {0.5f, 0, 0.5f, 1}},   NamedColor{"brown", {0.55f, 0.3f, 0.1f, 1}},
    NamedColor{"gray", {0.5f, 0.5f, 0.5f, 1}},  NamedColor{"grey", {0.5f, 0.5f, 0.5f, 1}},
    NamedColor{"lightgray", {0.8f, 0.8f, 0.8f, 1}},
    NamedColor{"darkgray", {0.3f, 0.3f, 0.3f, 1}},
    NamedColor{"transparent", {0, 0, 0, 0}},
};

constexpr Rgba kBlack{0, 0, 0, 1};
constexpr Rgba kRed{1, 0, 0, 1};
constexpr Rgba kYellow{1, 0.85f, 0, 1};
constexpr Rgba kWhite{1, 1, 1, 1};
constexpr Rgba kRabBlue{0, 0.3f, 1, 0.5f};

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* type_name(LayerType t) {
  switch (t) {
    case LayerType::kBackground:
      return "background";
    case LayerType::kMap:
      return "map";
    case LayerType::kRobots:
      return "robots";
    case LayerType::kObjects:
      return "objects";
    case LayerType::kRangeAndBearing:
      return "range_and_bearing";
    case LayerType::kCustom:
      return "custom";
    case LayerType::kField:
      return "field";
  }
  return "?";
}

ViewLayer default_layer(LayerType type) {
  ViewLayer l;
  l.type = type;
  switch (type) {
    case LayerType::kBackground:
      l.coloring.color = kWhite;
      break;
    case LayerType::kMap:
      l.coloring.color = kBlack;
      break;
    case LayerType::kRobots:
      l.coloring.color = kRed;
      break;
    case LayerType::kObjects:
      l.coloring.color = kYellow;
      break;
    case LayerType::kRangeAndBearing:
      l.coloring.color = kRabBlue;
      break;
    case LayerType::kCustom:
      break;
    case LayerType::kField:
      l.coloring.color = kWhite;
      break;
  }
  l.label_color = kBlack;
  return l;
}

// Sniffs an image's format from its first bytes: the browser decodes it, but a file that is
// not an image at all is the user's mistake and is reported at the line that names it.
std::string image_mime_type(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 12> b{};
  in.read(reinterpret_cast<char*>(b.data()), b.size());
  std::size_t n = static_cast<std::size_t>(in.gcount());
  auto starts = [&](std::initializer_list<unsigned char> sig) {
    if (n < sig.size()) return false;
    return std::equal(sig.begin(), sig.end(), b.begin());
  };
  if (starts({0x89, 'P', 'N', 'G'})) return "image/png";
  if (starts({0xff, 0xd8, 0xff})) return "image/jpeg";
  if (starts({'G', 'I', 'F', '8'})) return "image/gif";
  if (starts({'B', 'M'})) return "image/bmp";
  if (n >= 12 && starts({'R', 'I', 'F', 'F'}) && b[8] == 'W' && b[9] == 'E' && b[10] == 'B' &&
      b[11] == 'P')
    return "image/webp";
  return "";
}

// Reads one view configuration, collecting every problem.
class ConfigReader {
 public:
  ConfigReader(const XmlFile& file, Diagnostics& diags) : file_(file), diags_(diags) {}

  ViewConfig read() {
    ViewConfig config;
    config.source = file_.path();
    XmlElement root(file_, file_.root(), diags_);
    if (std::string(root.name()) != "view") {
      root.error(std::string("root element is <") + root.name() + "> (expected <view>)");
      return config;
    }
    config.zoom = root.real("zoom", 1, 0.001, 1000);
    config.speed_ticks_per_s = root.real("speed", 0, 0, 1e9);
    config.seek_speed_ticks_per_s = root.real("seek_speed", 0, 0, 1e9);
    config.status_color = color_attr(root, "status_color", config.status_color);
    root.finish();
    root.check_children(
        {"background", "field", "map", "objects", "robots", "range_and_bearing", "custom"});

    std::map<LayerType, int> seen;  // single layer type -> line of its first element
    for (XmlElement e : root.children()) {
      std::string n = e.name();
      LayerType type;
      if (n == "background")
        type = LayerType::kBackground;
      else if (n == "map")
        type = LayerType::kMap;
      else if (n == "robots")
        type = LayerType::kRobots;
      else if (n == "objects")
        type = LayerType::kObjects;
      else if (n == "range_and_bearing")
        type = LayerType::kRangeAndBearing;
      else if (n == "custom")
        type = LayerType::kCustom;
      else if (n == "field")
        type = LayerType::kField;
      else continue;  // reported by check_children
      int line = file_.line_of(e.node());
      if (type != LayerType::kBackground && type != LayerType::kCustom &&
          type != LayerType::kField) {
        auto [it, fresh] = seen.emplace(type, line);
        if (!fresh) {
          e.error("second <" + n + "> layer (each of map, objects, robots and " +
                  "range_and_bearing appears at most once; the first one is at line " +
                  std::to_string(it->second) + ")");
          continue;
        }
      }
      config.layers.push_back(read_layer(e, type, line));
    }
    // Default layers the file did not list come last, in the default order (DEECo).
    for (LayerType k : {LayerType::kMap, LayerType::kObjects, LayerType::kRobots}) {
      if (seen.count(k)) continue;
      ViewLayer l = default_layer(k);
      l.implicit = true;
      config.layers.push_back(l);
    }
    config.assets = std::move(assets_);
    return config;
  }

 private:
  Rgba color_attr(XmlElement& e, const char* attr, Rgba fallback) {
    if (!e.has(attr)) {
      e.accept(attr);
      return fallback;
    }
    std::string v = e.text(attr);
    if (auto c = parse_color(v)) return *c;
    std::string hint;
    if (v.find(',') == std::string::npos) hint = did_you_mean(lower(trim(v)), color_names());
    e.error(std::string("attribute '") + attr + "' of <" + e.name() + "> is '" + v +
            "' (expected 3 or 4 numbers between 0 and 1 separated by commas, or a colour name: " +
            "red, green, blue, yellow, black, white, ...)" + hint);
    return fallback;
  }

  // A file named by the configuration: must exist; images must be images, scripts ES modules.
  int asset(XmlElement& e, const char* attr, bool script) {
    std::string raw = e.text(attr);
    if (trim(raw).empty()) {
      e.error(std::string("attribute '") + attr + "' of <" + e.name() +
              "> is empty (expected a path to " + (script ? "a JavaScript module" : "an image") +
              ")");
      return -1;
    }
    std::string path = file_.resolve(raw);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      e.error(std::string("attribute '") + attr + "' of <" + e.name() + "> names '" + raw +
              "', which " + (std::filesystem::exists(path, ec) ? "is not a file" : "does not exist") +
              " (expected a path relative to " +
              (file_.directory().empty() ? std::string("the current directory")
                                         : "'" + file_.directory() + "'") +
              ")");
      return -1;
    }
    std::string mime;
    if (script) {
      std::string ext = std::filesystem::path(path).extension().string();
      if (ext != ".js" && ext != ".mjs") {
        e.error(std::string("attribute '") + attr + "' of <" + e.name() + "> names '" + raw +
                "' (expected a JavaScript module ending in .js or .mjs)");
        return -1;
      }
      mime = "text/javascript";
    } else {
      mime = image_mime_type(path);
      if (mime.empty()) {
        e.error(std::string("attribute '") + attr + "' of <" + e.name() + "> names '" + raw +
                "', which is not a PNG, JPEG, GIF, BMP or WebP image (expected an image file)");
        return -1;
      }
    }
    for (std::size_t i = 0; i < assets_.size(); ++i)
      if (assets_[i].path == path) return static_cast<int>(i);
    assets_.push_back({path, mime});
    return static_cast<int>(assets_.size() - 1);
  }

  // color="..." or texture="..." (not both); `fallback` when neither is written.
  Coloring coloring(XmlElement& e, const char* texture_attr, Coloring fallback, bool required) {
    bool has_color = e.has("color"), has_texture = e.has(texture_attr);
    Coloring c = fallback;
    if (has_color && has_texture) {
      e.error(std::string("<") + e.name() + "> has both 'color' and '" + texture_attr +
              "' (expected one of them)");
    }
    if (has_color) {
      c.color = color_attr(e, "color", fallback.color);
      c.texture = -1;
    } else {
      e.accept("color");
    }
    if (has_texture && !has_color) {
      c.texture = asset(e, texture_attr, false);
    } else {
      e.accept(texture_attr);
    }
    if (required && !has_color && !has_texture)
      e.error(std::string("<") + e.name() + "> is missing attribute 'color' (expected color=\"" +
              "r,g,b\" or a colour name, or " + texture_attr + "=\"image file\")");
    return c;
  }

  ViewLayer read_layer(XmlElement& e, LayerType type, int line) {
    ViewLayer l = default_layer(type);
    l.line = line;
    l.transparent = e.boolean("transparent", false);
    switch (type) {
      case LayerType::kBackground:
        l.coloring = coloring(e, "image", l.coloring, false);
        e.check_children({});
        break;
      case LayerType::kField:
        l.coloring = coloring(e, "image", l.coloring, true);
        e.check_children({});
        break;
      case LayerType::kMap:
        l.coloring = coloring(e, "texture", l.coloring, false);
        e.check_children({});
        break;
      case LayerType::kRobots:
      case LayerType::kObjects:
        read_component_layer(e, l);
        break;
      case LayerType::kRangeAndBearing:
        l.coloring.color = color_attr(e, "color", l.coloring.color);
        e.check_children({});
        break;
      case LayerType::kCustom:
        l.script = e.has("script") ? asset(e, "script", true) : -1;
        if (!e.has("script"))
          e.error("<custom> is missing attribute 'script' (expected the path of a JavaScript "
                  "module exporting create(arg, api))");
        l.arg = e.text("arg");
        e.check_children({});
        break;
    }
    e.finish();
    return l;
  }

  void read_component_layer(XmlElement& e, ViewLayer& l) {
    bool robots = l.type == LayerType::kRobots;
    // Robots are coloured by their kind, objects by their class ("class" on robots is the
    // name older view files used for the kind, still accepted).
    std::string by =
        e.choice("by",
                 robots ? std::vector<std::string>{"none", "number", "kind", "tag", "led", "class"}
                        : std::vector<std::string>{"none", "number", "class", "tag"},
                 "none");
    l.by = by == "number"                  ? ColoringKey::kNumber
           : by == "kind" || by == "class" ? ColoringKey::kKindOrClass
           : by == "tag"                   ? ColoringKey::kTag
           : by == "led"                   ? ColoringKey::kLed
                                           : ColoringKey::kNone;
    if (robots) {
      l.rotation = e.boolean("rotation", true);
      l.leds = e.boolean("leds", true);
    } else {
      l.circles = e.choice("shape", {"square", "circle"}, "square") == "circle";
    }
    std::string label = e.choice("label", {"none", "id", "number", "tag"}, "none");
    l.label = label == "id" ? LabelKind::kId
              : label == "number" ? LabelKind::kNumber
              : label == "tag" ? LabelKind::kTag
                               : LabelKind::kNone;
    l.label_color = color_attr(e, "label_color", l.label_color);
    // The default colouring: an attribute on the layer or a <default> child.
    bool attr_default = e.has("color") || e.has("texture");
    l.coloring = coloring(e, "texture", l.coloring, false);
    e.check_children({"default", "coloring"});

    auto defaults = e.children("default");
    for (std::size_t i = 0; i < defaults.size(); ++i) {
      XmlElement d = defaults[i];
      if (i > 0 || attr_default) {
        d.error(std::string("second default colouring for <") + e.name() +
                "> (expected one, as a <default> element or as attributes of the layer)");
      }
      l.coloring = coloring(d, "texture", l.coloring, true);
      d.check_children({});
      d.finish();
    }

    std::set<std::string> values;
    for (XmlElement r : e.children("coloring")) {
      ColoringRule rule;
      rule.line = file_.line_of(r.node());
      std::string value = r.text("value", "", true);
      rule.coloring = coloring(r, "texture", l.coloring, true);
      r.check_children({});
      r.finish();
      if (l.by == ColoringKey::kNone || l.by == ColoringKey::kLed) {
        r.error(std::string("<coloring> rule in a <") + e.name() + "> layer coloured by " + by +
                " (expected by=\"number\", \"" + (robots ? "kind" : "class") +
                "\" or \"tag\" on <" + e.name() + ">)");
        continue;
      }
      if (!r.has("value")) continue;
      if (!values.insert(value).second) {
        r.error("second <coloring> rule for value '" + value + "' (expected each value once)");
        continue;
      }
      if (l.by == ColoringKey::kNumber) {
        if (!parse_range(value, rule.lo, rule.hi)) {
          r.error("attribute 'value' of <coloring> is '" + value +
                  "' (expected a number >= 0 or a range such as 10-19, since the layer is "
                  "coloured by number)");
          continue;
        }
      }
      rule.value = value;
      l.rules.push_back(rule);
    }
  }

  static bool parse_int(const std::string& s, std::int64_t& out) {
    if (s.empty()) return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0;
  }

  static bool parse_range(const std::string& raw, std::int64_t& lo, std::int64_t& hi) {
    std::string s = trim(raw);
    std::size_t dash = s.find('-');
    if (dash == std::string::npos) {
      if (!parse_int(s, lo)) return false;
      hi = lo;
      return true;
    }
    return parse_int(trim(s.substr(0, dash)), lo) && parse_int(trim(s.substr(dash + 1)), hi) &&
           lo <= hi;
  }

  const XmlFile& file_;
  Diagnostics& diags_;
  std::vector<ViewAsset> assets_;
};

nlohmann::json color_json(const Rgba& c) { return {c.r, c.g, c.b, c.a}; }

nlohmann::json coloring_json(const Coloring& c) {
  return {{"color", color_json(c.color)},
          {"texture", c.texture < 0 ? nlohmann::json(nullptr)
                                    : nlohmann::json("/asset/" + std::to_string(c.texture))}};
}

}  // namespace

const std::vector<std::string>& color_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& c : kNamedColors) v.emplace_back(c.name);
    return v;
  }();
  return names;
}

std::optional<Rgba> parse_color(const std::string& text) {
  std::string s = trim(text);
  if (s.find(',') == std::string::npos) {
    std::string l = lower(s);
    for (const auto& c : kNamedColors)
      if (l == c.name) return c.color;
    return std::nullopt;
  }
  std::vector<float> v;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    auto d = parse_real(s.substr(start, comma == std::string::npos ? comma : comma - start));
    if (!d || *d < 0 || *d > 1) return std::nullopt;
    v.push_back(static_cast<float>(*d));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() != 3 && v.size() != 4) return std::nullopt;
  return Rgba{v[0], v[1], v[2], v.size() == 4 ? v[3] : 1.0f};
}

ViewConfig default_view_config() {
  ViewConfig c;
  for (LayerType k : {LayerType::kMap, LayerType::kObjects, LayerType::kRobots}) {
    ViewLayer l = default_layer(k);
    l.implicit = true;
    c.layers.push_back(l);
  }
  return c;
}

std::optional<ViewConfig> load_view_config(const std::string& path, Diagnostics& diags) {
  int before = diags.error_count();
  auto file = XmlFile::load(path, diags);
  if (!file) return std::nullopt;
  // The DEECo playground's own configuration (root <visualization>) is read as a <view>.
  if (std::string_view(file->root().name()) == "visualization")
    file = playground_visualization_as_view(*file, diags);
  ViewConfig c = ConfigReader(*file, diags).read();
  if (diags.error_count() > before) return std::nullopt;
  return c;
}

std::optional<ViewConfig> parse_view_config(const std::string& text, const std::string& name,
                                            Diagnostics& diags) {
  int before = diags.error_count();
  auto file = XmlFile::parse(text, name, diags);
  if (!file) return std::nullopt;
  ViewConfig c = ConfigReader(*file, diags).read();
  if (diags.error_count() > before) return std::nullopt;
  return c;
}

void warn_unknown_kinds_and_classes(const ViewConfig& config, const std::vector<std::string>& kinds,
                                    const std::vector<std::string>& object_classes,
                                    Diagnostics& diags) {
  for (const ViewLayer& l : config.layers) {
    if (l.by != ColoringKey::kKindOrClass) continue;
    const bool robots = l.type == LayerType::kRobots;
    const auto& known = robots ? kinds : object_classes;
    const std::string what = robots ? "kind" : "class";
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    for (const ColoringRule& r : l.rules) {
      if (std::find(known.begin(), known.end(), r.value) != known.end()) continue;
      diags.warning({config.source, r.line},
                    what + " '" + r.value + "' does not appear in the log's " + type_name(l.type) +
                        " (" + (robots ? "kinds" : "classes") + " in the log: " +
                        (list.empty() ? "none" : list) + ")" + did_you_mean(r.value, known));
    }
  }
}

nlohmann::json to_json(const ViewConfig& config) {
  nlohmann::json layers = nlohmann::json::array();
  for (const ViewLayer& l : config.layers) {
    nlohmann::json j{{"type", type_name(l.type)},
                     {"transparent", l.transparent},
                     {"implicit", l.implicit},
                     {"line", l.line},
                     {"coloring", coloring_json(l.coloring)}};
    if (l.type == LayerType::kRobots || l.type == LayerType::kObjects) {
      const bool robots = l.type == LayerType::kRobots;
      const char* by_names[] = {"none", "number", robots ? "kind" : "class", "tag", "led"};
      static const char* label_names[] = {"none", "id", "tag", "number"};
      nlohmann::json rules = nlohmann::json::array();
      for (const ColoringRule& r : l.rules)
        rules.push_back({{"value", r.value},
                         {"lo", r.lo},
                         {"hi", r.hi},
                         {"coloring", coloring_json(r.coloring)}});
      j["by"] = by_names[static_cast<int>(l.by)];
      j["rules"] = rules;
      j["rotation"] = l.rotation;
      j["circles"] = l.circles || robots;
      if (robots) j["leds"] = l.leds;
      j["label"] = label_names[static_cast<int>(l.label)];
      j["labelColor"] = color_json(l.label_color);
    }
    if (l.type == LayerType::kCustom) {
      j["script"] = l.script < 0 ? nlohmann::json(nullptr)
                                 : nlohmann::json("/asset/" + std::to_string(l.script));
      j["arg"] = l.arg;
    }
    layers.push_back(j);
  }
  return {{"source", config.source},
          {"zoom", config.zoom},
          {"speed", config.speed_ticks_per_s},
          {"seekSpeed", config.seek_speed_ticks_per_s},
          {"statusColor", color_json(config.status_color)},
          {"layers", layers}};
}

}  // namespace fleetsim::view
