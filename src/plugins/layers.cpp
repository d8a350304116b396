#include "plugins/layers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <string>

#include "lua/lua_layer.hpp"
#include "scenario/bitmap.hpp"

namespace fleetsim {

namespace {

/// A PNG stretched over the arena; a robot reads the pixel under its centre, its grey level
/// mapped linearly from 0..255 to min..max.
class BitmapLayer final : public Layer {
 public:
  void init(const Params& params, const LayerSetup& setup) override {
    std::string error;
    auto image = load_png_image(params.text("file"), "layer image", error);
    if (!image) throw SetupError(error);
    lo_ = setup.arena_min();
    hi_ = setup.arena_max();
    const double low = params.real("min", 0), high = params.real("max", 1);
    map_.width = image->width;
    map_.height = image->height;
    map_.low = std::min(low, high);
    map_.high = std::max(low, high);
    map_.values.resize(image->pixels.size());
    for (std::size_t p = 0; p < image->pixels.size(); ++p) {
      const Color& c = image->pixels[p];
      const double grey = (static_cast<double>(c.r) + c.g + c.b) / 3.0;
      map_.values[p] = low + (high - low) * grey / 255.0;
    }
  }
  void compute(const LayerWorld& world, std::span<double> values) override {
    const std::span<const LayerRobot> robots = world.robots();
    const double w = hi_.x - lo_.x, h = hi_.y - lo_.y;
    for (std::size_t r = 0; r < robots.size(); ++r) {
      const Vec2 p = robots[r].position;
      const int i = cell((p.x - lo_.x) / w, map_.width);
      const int j = cell((hi_.y - p.y) / h, map_.height);
      values[r] = map_.values[static_cast<std::size_t>(j) * static_cast<std::size_t>(map_.width) +
                              static_cast<std::size_t>(i)];
    }
  }
  const LayerMap* map() const override { return &map_; }

 private:
  /// The pixel index of a fraction of the side (clamped to the image: a robot on the far edge
  /// reads the last pixel).
  static int cell(double fraction, int pixels) {
    const double at = std::floor(fraction * pixels);
    if (!(at >= 0)) return 0;
    return at >= pixels ? pixels - 1 : static_cast<int>(at);
  }
  Vec2 lo_, hi_;
  LayerMap map_;
};

/// The distance from the robot's centre to the centre of the nearest object whose tag (and
/// class) match; with bearing, also the angle to it from the robot's heading.
class NearestObjectLayer final : public Layer {
 public:
  void init(const Params& params, const LayerSetup&) override {
    tag_ = params.text("tag");
    class_ = params.text("class");
    none_ = params.real("none", -1);
    bearing_ = params.boolean("bearing", false);
  }
  std::uint32_t size() const override { return bearing_ ? 2 : 1; }
  void compute(const LayerWorld& world, std::span<double> values) override {
    const std::span<const LayerRobot> robots = world.robots();
    const std::uint32_t n = size();
    for (std::size_t r = 0; r < robots.size(); ++r) {
      const Vec2 p = robots[r].position;
      double best = std::numeric_limits<double>::infinity();
      Vec2 at{};
      for (const LayerObject& o : world.objects()) {
        if (!tag_.empty() && o.tag != tag_) continue;
        if (!class_.empty() && o.object_class != class_) continue;
        const double d = std::hypot(o.position.x - p.x, o.position.y - p.y);
        if (d < best) best = d, at = o.position;  // (ties: the lowest id, met first)
      }
      const bool found = std::isfinite(best);
      values[r * n] = found ? best : none_;
      if (bearing_) {
        double a = found ? std::atan2(at.y - p.y, at.x - p.x) - robots[r].heading : 0;
        a = std::remainder(a, 2 * std::numbers::pi);
        values[r * n + 1] = a;
      }
    }
  }

 private:
  std::string tag_, class_;
  double none_ = -1;
  bool bearing_ = false;
};

}  // namespace

void register_builtin_layers(PluginRegistry& r) {
  r.add_layer({PluginKind::kLayer,
               "bitmap",
               "a PNG stretched over the arena: each robot reads the grey level of the pixel under "
               "its centre, mapped from 0..255 to min..max (a temperature map, a terrain)",
               {{"file", "path", "", "the PNG file, relative to the experiment file"},
                {"min", "real", "0", "the value of a black pixel"},
                {"max", "real", "1", "the value of a white pixel (grey = (R+G+B)/3)"}}},
              [] { return std::make_unique<BitmapLayer>(); });
  r.add_layer({PluginKind::kLayer,
               "nearest_object",
               "the distance in metres from the robot's centre to the centre of the nearest "
               "object of a tag (and class); with bearing, then the angle to it from the "
               "robot's heading (radians, CCW). Cost: robots x objects per tick",
               {{"tag", "string", "", "the objects' tag (none: any tag)"},
                {"class", "string", "", "the objects' class (none: any class)"},
                {"none", "real", "-1", "the distance given when no object matches"},
                {"bearing", "bool", "false", "also the bearing (two numbers per robot)"}}},
              [] { return std::make_unique<NearestObjectLayer>(); });
  r.add_layer({PluginKind::kLayer,
               "lua",
               "a layer written in Lua: value(r) gives a robot's numbers from r, layer.robots, "
               "layer.objects and the field, after an optional step() per tick "
               "(docs/lua-api.md, Layers)",
               {{"script", "path", "", "the Lua file, relative to the experiment file"},
                {"size", "integer", "1", "numbers per robot (1 to 64)"}}},
              [] { return lua::make_lua_layer(); });
}

}  // namespace fleetsim
