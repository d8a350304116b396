#include "view/playground_view_config.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <string_view>

namespace fleetsim::view {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

class Translator {
 public:
  Translator(const XmlFile& in, Diagnostics& diags)
      : in_(in), diags_(diags), out_(XmlFile::derived(in.path())) {}

  std::unique_ptr<XmlFile> run() {
    const pugi::xml_node root = in_.root();
    pugi::xml_node view = add(out_->document(), "view", root);
    for (pugi::xml_attribute a : root.attributes()) {
      const std::string_view name = a.name();
      if (name == "zoom") continue;  // pixels per field unit there; the page fits the arena
      if (name == "maxCPS")
        set(view, "speed", a.value(), root, a.name());
      else if (name == "rewindSpeed")
        set(view, "seek_speed", a.value(), root, a.name());
      else if (name == "fontColor")
        set(view, "status_color", lower(a.value()), root, a.name());
      else
        unknown(root, a.name());
    }
    for (pugi::xml_node e : root.children()) {
      if (e.type() != pugi::node_element) continue;
      const std::string_view name = e.name();
      if (name == "robots" || name == "objects") {
        component(view, e, name == "robots");
      } else if (name == "map") {
        coloring(add(view, "map", e), e, "texture");
      } else if (name == "background") {
        coloring(add(view, "background", e), e, "image");
      } else if (name == "additional") {
        // A Java VisualizationLayer cannot run in the page: left out, said so.
        diags_.warning({in_.path(), in_.line_of(e)},
                       std::string("<additional class=\"") + e.attribute("class").value() +
                           "\"> is a Java layer of the playground's visualizer and is left out "
                           "(write it as a JavaScript module and list it in a fleetsim view "
                           "configuration as <custom script=\"layer.js\"/>; docs/view-format.md)");
      } else {
        diags_.error({in_.path(), in_.line_of(e)},
                     std::string("unknown element <") + e.name() +
                         "> in <visualization> (expected robots, objects, map, background or "
                         "additional)");
      }
    }
    return std::move(out_);
  }

 private:
  pugi::xml_node add(pugi::xml_node parent, const char* name, pugi::xml_node from) {
    return out_->add_element(parent, name, in_.line_of(from));
  }
  void set(pugi::xml_node n, const char* name, const std::string& value, pugi::xml_node from,
           const char* from_attr) {
    out_->add_attribute(n, name, value, in_.line_of(from, from_attr));
  }
  void unknown(pugi::xml_node e, const char* attr) {
    diags_.error({in_.path(), in_.line_of(e, attr)},
                 std::string("unknown attribute '") + attr + "' of <" + e.name() +
                     "> (the playground's visualization configuration)");
  }
  // The playground looks a texture up from the current directory; fleetsim's configuration
  // from its own directory: a texture found from the current directory is given whole.
  std::string texture(const std::string& path) {
    std::error_code ec;
    if (!path.empty() && std::filesystem::path(path).is_relative() &&
        std::filesystem::is_regular_file(path, ec))
      return std::filesystem::absolute(path, ec).string();
    return path;
  }
  // color="..." or texture="..." onto `n` (`texture_as`: fleetsim's name for a texture here).
  void coloring(pugi::xml_node n, pugi::xml_node from, const char* texture_as,
                const std::vector<std::string>& others = {}) {
    for (pugi::xml_attribute a : from.attributes()) {
      const std::string_view name = a.name();
      if (name == "color")
        set(n, "color", lower(a.value()), from, a.name());
      else if (name == "texture")
        set(n, texture_as, texture(a.value()), from, a.name());
      else if (std::find(others.begin(), others.end(), name) == others.end())
        unknown(from, a.name());
    }
  }
  void component(pugi::xml_node view, pugi::xml_node e, bool robots) {
    pugi::xml_node n = add(view, robots ? "robots" : "objects", e);
    bool numbers = false, tags = false, rotation = false;
    for (pugi::xml_attribute a : e.attributes()) {
      const std::string_view name = a.name();
      const bool on = std::string_view(a.value()) == "true";
      if (name == "displayNumbers")
        numbers = on;
      else if (name == "displayTags")
        tags = on;
      else if (name == "enableRotation")
        rotation = on;
      else if (name == "circularShape") {
        if (!robots) set(n, "shape", on ? "circle" : "square", e, a.name());
      } else if (name == "fontColor")
        set(n, "label_color", lower(a.value()), e, a.name());
      else
        unknown(e, a.name());
    }
    // One label in fleetsim's page: the tag when the playground shows tags, else the number.
    if (tags || numbers)
      set(n, "label", tags ? "tag" : "number", e, tags ? "displayTags" : "displayNumbers");
    // The playground turns robots' textures only when asked (fleetsim's default is to).
    if (robots) set(n, "rotation", rotation ? "true" : "false", e, "enableRotation");
    for (pugi::xml_node b : e.children()) {
      if (b.type() != pugi::node_element) continue;
      const std::string_view base = b.name();
      const char* by = base == "tag-based"      ? "tag"
                       : base == "class-based"  ? (robots ? "kind" : "class")
                       : base == "number-based" ? "number"
                                                : nullptr;
      if (!by) {
        diags_.error({in_.path(), in_.line_of(b)},
                     std::string("unknown element <") + b.name() + "> in <" + e.name() +
                         "> (expected tag-based, class-based or number-based)");
        continue;
      }
      // (A playground robot's kind is named after its class: `kind` matches the class.)
      set(n, "by", by, b, "");
      const char* item = base == "tag-based" ? "tag" : base == "class-based" ? "class" : "number";
      const char* key = base == "number-based" ? "number" : "name";
      for (pugi::xml_node c : b.children()) {
        if (c.type() != pugi::node_element) continue;
        if (std::string_view(c.name()) == "default") {
          coloring(add(n, "default", c), c, "texture");
        } else if (std::string_view(c.name()) == item) {
          pugi::xml_node rule = add(n, "coloring", c);
          set(rule, "value", c.attribute(key).value(), c, key);
          coloring(rule, c, "texture", {key});
        } else {
          diags_.error({in_.path(), in_.line_of(c)}, std::string("unknown element <") + c.name() +
                                                         "> in <" + b.name() +
                                                         "> (expected default or " + item + ")");
        }
      }
    }
  }

  const XmlFile& in_;
  Diagnostics& diags_;
  std::unique_ptr<XmlFile> out_;
};

}  // namespace

std::unique_ptr<XmlFile> playground_visualization_as_view(const XmlFile& file, Diagnostics& diags) {
  return Translator(file, diags).run();
}

}  // namespace fleetsim::view
