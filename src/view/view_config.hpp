// The viewer's configuration file (docs/view-format.md): global playback settings and an
// ordered list of layers, after the DEECo playground's visualization configuration.
//
// Read once, on the main thread, before the server starts; then only read (serialised to JSON
// for the page). Every file the configuration names (textures, background images, custom
// layer scripts) is checked here and becomes an "asset" the server may serve: the server never
// serves a path the configuration did not name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/diagnostics.hpp"

namespace fleetsim::view {

/// A colour with channels in [0, 1].
struct Rgba {
  float r = 0, g = 0, b = 0, a = 1;
  bool operator==(const Rgba&) const = default;
};

/// Parses "r,g,b", "r,g,b,a" (floats in [0, 1]) or a colour name ("red", "lightgray", ...).
std::optional<Rgba> parse_color(const std::string& text);
/// The colour names parse_color() accepts, in documentation order.
const std::vector<std::string>& color_names();

/// How an entity (or the map, or the background) is painted: a plain colour or a texture.
struct Coloring {
  Rgba color;
  int texture = -1;  ///< index into ViewConfig::assets, or -1 for the plain colour
  bool operator==(const Coloring&) const = default;
};

/// What a component layer's colouring rules are matched against.
enum class ColoringKey {
  kNone,         ///< every entity gets the default colouring
  kNumber,       ///< the entity's numeric id (its position in the list for DEECo logs)
  kKindOrClass,  ///< the robot's kind (by="kind") or the object's class (by="class")
  kTag,          ///< the entity's current tag string
  kLed,          ///< the robot's LED colour from the log (rules not allowed)
};

/// One "value -> colouring" rule of a component layer.
struct ColoringRule {
  std::string value;       ///< kind, class or tag name (for kKindOrClass, kTag)
  std::int64_t lo = 0;     ///< first number of the range (for kNumber)
  std::int64_t hi = -1;    ///< last number of the range, inclusive (for kNumber)
  Coloring coloring;
  int line = 0;            ///< where the rule was written
};

/// The type of a layer: the XML element that declares it ("layer type", so that "kind" only
/// ever means a robot kind).
/// kField: a picture stretched over the arena (an environment layer's map, e.g. the PNG of a
/// `bitmap` layer: docs/view-format.md, `<field>`).
enum class LayerType { kBackground, kMap, kRobots, kObjects, kRangeAndBearing, kCustom, kField };
/// Text drawn next to each entity of a component layer.
enum class LabelKind { kNone, kId, kTag, kNumber };

/// One layer of the ordered list. Fields that do not apply to a type keep their defaults.
struct ViewLayer {
  LayerType type = LayerType::kMap;
  bool transparent = false;  ///< true hides the layer
  bool implicit = false;     ///< appended because the file did not list it
  int line = 0;              ///< line in the configuration file (0 when implicit)

  /// background, map: the colouring; robots/objects: the default one; range_and_bearing: the
  /// colour of its lines
  Coloring coloring;

  // Component layers (robots, objects).
  ColoringKey by = ColoringKey::kNone;
  std::vector<ColoringRule> rules;
  bool rotation = true;      ///< robots: draw the heading
  bool leds = true;          ///< robots: draw the LEDs of kinds with more than one as dots
  bool circles = false;      ///< objects: circles instead of squares (robots are always round)
  LabelKind label = LabelKind::kNone;
  Rgba label_color;

  // Custom layers.
  int script = -1;  ///< index into ViewConfig::assets of the layer's ES module
  std::string arg;  ///< passed to the module's create()
};

/// A file the configuration names, served to the page as /asset/<index>.
struct ViewAsset {
  std::string path;       ///< resolved path on disk
  std::string mime_type;  ///< "image/png", "text/javascript", ...
};

/// The whole configuration, with the default layers appended.
struct ViewConfig {
  std::string source;               ///< the file it was read from ("" for the defaults)
  double zoom = 1;                  ///< 1 = the arena fits the window
  double speed_ticks_per_s = 0;     ///< playback speed; 0 = real time (from the log)
  double seek_speed_ticks_per_s = 0;  ///< rewind / fast-forward speed; 0 = 10 x playback speed
  Rgba status_color{0.1f, 0.1f, 0.1f, 1};
  std::vector<ViewLayer> layers;
  std::vector<ViewAsset> assets;
};

/// The configuration used without a file: map, objects, robots (the DEECo default order).
ViewConfig default_view_config();

/// Reads `path`. On any problem reports every error to `diags` (file:line: error: ...) and
/// returns std::nullopt.
std::optional<ViewConfig> load_view_config(const std::string& path, Diagnostics& diags);
/// Parses `text` as if read from `name` (files it names resolve relative to `name`'s folder).
std::optional<ViewConfig> parse_view_config(const std::string& text, const std::string& name,
                                            Diagnostics& diags);

/// Checks the by="kind" / by="class" rules against the robot kinds and object classes a log
/// actually has and reports a warning (with the config's file:line) for every name the log
/// does not contain.
void warn_unknown_kinds_and_classes(const ViewConfig& config, const std::vector<std::string>& kinds,
                                    const std::vector<std::string>& object_classes,
                                    Diagnostics& diags);

/// The configuration as the page reads it (assets as URLs, enums as strings).
nlohmann::json to_json(const ViewConfig& config);

}  // namespace fleetsim::view
