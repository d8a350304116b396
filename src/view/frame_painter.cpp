#include "view/frame_painter.hpp"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace fleetsim::view {

namespace {

// The page's constants (web/js/main.js, gl_renderer.js); docs/view-format.md states them.
constexpr Rgba kOutside{0.85f, 0.855f, 0.865f, 1};  // around the arena
constexpr Rgba kFloor{1, 1, 1, 1};                  // the arena
constexpr double kRing = 0.75;                      // LED ring, x the body radius from the centre
constexpr double kRingDot = 0.15;                   // LED dot radius, x the body radius
constexpr double kBeacon = 0.3;                     // beacon dot radius, x the body radius
constexpr double kLedMinPixels = 6;       // LED dots once the smallest such body is this large
constexpr double kAltitudeGrowth = 0.25;  // a flyer's radius grows this much per metre
constexpr double kMinRadiusPixels = 1.5;  // anything smaller is drawn this large
constexpr double kDetailPixels = 4;       // heading stripe and rim from this radius
constexpr double kRabLinePixels = 1.5;    // range-and-bearing links, pixels wide

}  // namespace

FramePainter::Rgba8 FramePainter::pack(const Rgba& c) {
  // As colorings.js packColor: each channel round(v * 255), clamped.
  auto b = [](float v) {
    const double x = std::floor(static_cast<double>(v) * 255.0 + 0.5);
    return static_cast<std::uint8_t>(std::clamp(x, 0.0, 255.0));
  };
  return {b(c.r), b(c.g), b(c.b), b(c.a)};
}

void FramePainter::blend(std::uint8_t* p, Rgba8 c, float dim) {
  if (c.a == 255 && dim == 1) {
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
    return;
  }
  // GL's SRC_ALPHA, ONE_MINUS_SRC_ALPHA on an 8-bit target, in floats, rounded at the end.
  const float a = c.a / 255.0f;
  const std::uint8_t src[3] = {c.r, c.g, c.b};
  for (int k = 0; k < 3; ++k) {
    const float s = src[k] / 255.0f * dim, d = p[k] / 255.0f;
    const float out = s * a + d * (1 - a);
    p[k] = static_cast<std::uint8_t>(std::clamp(std::floor(out * 255.0f + 0.5f), 0.0f, 255.0f));
  }
}

FramePainter::FramePainter(const log::LogHeader& header, ViewConfig config, int width, int height)
    : header_(header), config_(std::move(config)), width_(width), height_(height) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw std::invalid_argument("a picture of " + std::to_string(width) + " x " +
                                std::to_string(height) + " pixels (expected 1 to 16384 each)");
  // The page's fit(): the arena and the bitmap, with 3 % of margin on each side, times zoom.
  double w = header_.arena_width_m > 0 ? header_.arena_width_m : 1;
  double h = header_.arena_height_m > 0 ? header_.arena_height_m : 1;
  if (header_.bitmap_width > 0 && header_.bitmap_height > 0) {
    w = std::max(w, header_.bitmap_width * header_.bitmap_resolution_m);
    h = std::max(h, header_.bitmap_height * header_.bitmap_resolution_m);
  }
  scale_ =
      std::min(width / (w * 1.06), height / (h * 1.06)) * (config_.zoom > 0 ? config_.zoom : 1);

  bool textures = false, labels = false, custom = false;
  field_images_.resize(config_.assets.size());
  field_sizes_.resize(config_.assets.size());
  for (const ViewLayer& l : config_.layers) {
    if (l.transparent) continue;
    if (l.type == LayerType::kField && l.coloring.texture >= 0) {
      // (A field's image is drawn: read once; one that cannot be read is its colour.)
      const auto a = static_cast<std::size_t>(l.coloring.texture);
      if (a < config_.assets.size() && field_images_[a].empty()) {
        try {
          field_images_[a] =
              read_png(config_.assets[a].path, field_sizes_[a].first, field_sizes_[a].second);
        } catch (const std::exception&) {
          unsupported_.push_back("field images that are not PNG (drawn in their layer's colour)");
        }
      }
      continue;
    }
    textures = textures || l.coloring.texture >= 0;
    for (const ColoringRule& r : l.rules) textures = textures || r.coloring.texture >= 0;
    labels = labels || l.label != LabelKind::kNone;
    custom = custom || l.type == LayerType::kCustom;
  }
  if (textures) unsupported_.push_back("textures and images (drawn in their layer's colour)");
  if (labels) unsupported_.push_back("labels");
  if (custom) unsupported_.push_back("custom layers");

  // The outside, the floor, then the layers that do not change with the frame, up to the
  // first that does: painted once.
  base_.assign(static_cast<std::size_t>(width_) * height_ * 3, 0);
  const Rgba8 outside = pack(kOutside);
  for (std::size_t p = 0; p < base_.size(); p += 3) blend(&base_[p], outside);
  fill_rect(base_, -header_.arena_width_m / 2, -header_.arena_height_m / 2,
            header_.arena_width_m / 2, header_.arena_height_m / 2, pack(kFloor));
  for (; base_layers_ < config_.layers.size(); ++base_layers_) {
    const ViewLayer& l = config_.layers[base_layers_];
    if (l.transparent) continue;
    if (l.type == LayerType::kBackground) {
      if (l.coloring.texture >= 0) continue;  // (an image: not drawn)
      const Rgba8 c = pack(l.coloring.color);
      for (std::size_t p = 0; p < base_.size(); p += 3) blend(&base_[p], c);
    } else if (l.type == LayerType::kMap) {
      paint_map(base_, l);
    } else if (l.type == LayerType::kField) {
      paint_field(base_, l);
    } else if (l.type != LayerType::kCustom) {
      break;
    }
  }
}

std::pair<double, double> FramePainter::to_image(double x, double y) const {
  const Vec2 c = header_.arena_center;
  return {width_ / 2.0 + (x - c.x) * scale_, height_ / 2.0 - (y - c.y) * scale_};
}

void FramePainter::fill_rect(std::vector<std::uint8_t>& rgb, double x0, double y0, double x1,
                             double y1, Rgba8 c) const {
  // Pixel i is covered when its centre i + 0.5 lies in [left, right).
  const double left = width_ / 2.0 + x0 * scale_, right = width_ / 2.0 + x1 * scale_;
  const double top = height_ / 2.0 - y1 * scale_, bottom = height_ / 2.0 - y0 * scale_;
  const int i0 = std::max(0, static_cast<int>(std::ceil(left - 0.5)));
  const int i1 = std::min(width_, static_cast<int>(std::ceil(right - 0.5)));
  const int j0 = std::max(0, static_cast<int>(std::ceil(top - 0.5)));
  const int j1 = std::min(height_, static_cast<int>(std::ceil(bottom - 0.5)));
  for (int j = j0; j < j1; ++j)
    for (int i = i0; i < i1; ++i) blend(&rgb[(static_cast<std::size_t>(j) * width_ + i) * 3], c);
}

void FramePainter::fill_segment(std::vector<std::uint8_t>& rgb, double ax, double ay, double bx,
                                double by, double half, Rgba8 c) const {
  // The page's segment quad: along the segment, `half` past each end, `half` on each side.
  const double dx = bx - ax, dy = by - ay, len = std::hypot(dx, dy);
  const double tx = len > 0 ? dx / len : 1, ty = len > 0 ? dy / len : 0;
  const double lo_x = std::min(ax, bx) - half, hi_x = std::max(ax, bx) + half;
  const double lo_y = std::min(ay, by) - half, hi_y = std::max(ay, by) + half;
  const int i0 = std::max(0, static_cast<int>(std::floor(width_ / 2.0 + lo_x * scale_)));
  const int i1 = std::min(width_ - 1, static_cast<int>(std::ceil(width_ / 2.0 + hi_x * scale_)));
  const int j0 = std::max(0, static_cast<int>(std::floor(height_ / 2.0 - hi_y * scale_)));
  const int j1 = std::min(height_ - 1, static_cast<int>(std::ceil(height_ / 2.0 - lo_y * scale_)));
  for (int j = j0; j <= j1; ++j) {
    const double wy = (height_ / 2.0 - (j + 0.5)) / scale_ - ay;
    for (int i = i0; i <= i1; ++i) {
      const double wx = (i + 0.5 - width_ / 2.0) / scale_ - ax;
      const double u = wx * tx + wy * ty, v = -wx * ty + wy * tx;
      if (u < -half || u > len + half || v < -half || v > half) continue;
      blend(&rgb[(static_cast<std::size_t>(j) * width_ + i) * 3], c);
    }
  }
}

void FramePainter::paint_map(std::vector<std::uint8_t>& rgb, const ViewLayer& l) const {
  const Rgba8 c = pack(l.coloring.color);
  const Vec2 center = header_.arena_center;
  // The obstacle bitmap: each pixel takes the cell under its centre (nearest, as the page).
  const int bw = header_.bitmap_width, bh = header_.bitmap_height;
  if (bw > 0 && bh > 0 && header_.bitmap.size() == static_cast<std::size_t>(bw) * bh) {
    const double res = header_.bitmap_resolution_m;
    const double x0 = header_.bitmap_top_left.x - center.x,
                 y0 = header_.bitmap_top_left.y - center.y;
    for (int j = 0; j < height_; ++j) {
      const double wy = (height_ / 2.0 - (j + 0.5)) / scale_;
      const double v = (y0 - wy) / (bh * res);
      if (v < 0 || v >= 1) continue;
      const int row = std::min(bh - 1, static_cast<int>(v * bh));
      const std::uint8_t* cells = header_.bitmap.data() + static_cast<std::size_t>(row) * bw;
      for (int i = 0; i < width_; ++i) {
        const double wx = (i + 0.5 - width_ / 2.0) / scale_;
        const double u = (wx - x0) / (bw * res);
        if (u < 0 || u >= 1) continue;
        if (cells[std::min(bw - 1, static_cast<int>(u * bw))])
          blend(&rgb[(static_cast<std::size_t>(j) * width_ + i) * 3], c);
      }
    }
  }
  // Walls and boxes: 1.5 pixels (at least 1 cm) on each side.
  const double half = std::max(1.5 / scale_, 0.01);
  for (const Segment& s : header_.segments)
    fill_segment(rgb, s.a.x - center.x, s.a.y - center.y, s.b.x - center.x, s.b.y - center.y, half,
                 c);
}

void FramePainter::paint_shapes(std::vector<std::uint8_t>& rgb, const Shapes& s) const {
  const double ox = width_ / 2.0, oy = height_ / 2.0;
  for (std::size_t k = 0; k < s.count; ++k) {
    const double sx = ox + s.x[k] * scale_, sy = oy - s.y[k] * scale_;
    const double r = std::max(static_cast<double>(s.radius[k]) * scale_, kMinRadiusPixels);
    if (!(sx > -r && sy > -r && sx < width_ + r && sy < height_ + r)) continue;  // (NaN too)
    // Pixels whose centres can be inside: [sx - r, sx + r].
    const int i0 = std::max(0, static_cast<int>(std::ceil(sx - r - 0.5)));
    const int i1 = std::min(width_ - 1, static_cast<int>(std::floor(sx + r - 0.5)));
    const int j0 = std::max(0, static_cast<int>(std::ceil(sy - r - 0.5)));
    const int j1 = std::min(height_ - 1, static_cast<int>(std::floor(sy + r - 0.5)));
    const Rgba8 c = s.color[k];
    const bool detail = r >= kDetailPixels;
    const double inv = 1 / r;
    const double rim = 1 - 1.5 * inv;
    const double ct = s.theta ? std::cos(s.theta[k]) : 1, st = s.theta ? std::sin(s.theta[k]) : 0;
    // A box: half extents (fractions of r) along and across its heading (the page's shaders).
    const bool box = s.box && s.box[2 * k] > 0;
    const double bl = box ? s.box[2 * k] : 0, bw = box ? s.box[2 * k + 1] : 0;
    const double bt = box && s.box_theta ? s.box_theta[k] : 0;
    const double bc = std::cos(bt), bs = std::sin(bt);
    for (int j = j0; j <= j1; ++j) {
      const double ly = -(j + 0.5 - sy) * inv;
      std::uint8_t* row = &rgb[static_cast<std::size_t>(j) * width_ * 3];
      for (int i = i0; i <= i1; ++i) {
        const double lx = (i + 0.5 - sx) * inv;
        const double d =
            s.circle ? std::sqrt(lx * lx + ly * ly) : std::max(std::abs(lx), std::abs(ly));
        double edge = 0;  // a box: to its nearest side, in units of r
        if (box) {
          edge = std::min(bl - std::abs(lx * bc + ly * bs), bw - std::abs(bc * ly - bs * lx));
          if (edge < 0) continue;
        } else if (d > 1) {
          continue;
        }
        float dim = 1;
        if (detail) {
          // The heading: a dark stripe ahead of the centre (the body's frame); the rim darker.
          const double bx = lx * ct + ly * st, by = ct * ly - st * lx;
          // (A box's stripe: 0.16 of its half width on each side.)
          if (s.heading && bx > 0 && std::abs(by) < (box ? 0.16 * bw : 0.16)) dim *= 0.3f;
          if (box ? edge * r < 1.5 : d > rim) dim *= 0.55f;
        }
        blend(row + static_cast<std::size_t>(i) * 3, c, dim);
      }
    }
  }
}

FramePainter::Rgba8 FramePainter::color_of(const ViewLayer& l, const log::LogFrame& f, bool robots,
                                           std::size_t i) const {
  const Rgba8 def = pack(l.coloring.color);
  const auto& h = header_;
  switch (l.by) {
    case ColoringKey::kNone:
      return def;
    case ColoringKey::kKindOrClass: {
      const auto type =
          robots ? f.robot<std::uint16_t>("kind", h) : f.object<std::uint16_t>("class", h);
      if (i >= type.size()) return def;
      const std::uint16_t t = type[i];
      const std::string* name =
          robots ? (t < h.kinds.size() ? &h.kinds[t].name : nullptr)
                 : (t < h.object_classes.size() ? &h.object_classes[t].name : nullptr);
      if (!name) return def;
      for (const ColoringRule& r : l.rules)
        if (r.value == *name) return pack(r.coloring.color);
      return def;
    }
    case ColoringKey::kTag: {
      const auto tags =
          robots ? f.robot<std::uint32_t>("tag", h) : f.object<std::uint32_t>("tag", h);
      if (i >= tags.size() || tags[i] >= f.tags.size()) return def;
      for (const ColoringRule& r : l.rules)
        if (r.value == f.tags[tags[i]]) return pack(r.coloring.color);
      return def;
    }
    case ColoringKey::kNumber: {
      const auto ids = robots ? f.robot<std::uint32_t>("id", h) : f.object<std::uint32_t>("id", h);
      if (i >= ids.size()) return def;
      for (const ColoringRule& r : l.rules)
        if (ids[i] >= r.lo && ids[i] <= r.hi) return pack(r.coloring.color);
      return def;
    }
    case ColoringKey::kLed: {
      // The robot's first lit LED (colorings.js): the ring in order, then the beacon.
      const auto leds = f.robot<std::uint32_t>("leds", h);
      const auto kind = f.robot<std::uint16_t>("kind", h);
      if (!robots || leds.empty() || f.robot_count == 0) return def;
      const std::size_t width = leds.size() / f.robot_count;
      const std::uint16_t k = i < kind.size() ? kind[i] : 0;
      const std::size_t count = k < h.kinds.size() ? h.kinds[k].led_count : 1;
      for (std::size_t j = 0; j < count && j < width; ++j) {
        const std::uint32_t c = leds[i * width + j];
        if (c >> 24)
          return {static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(c >> 8),
                  static_cast<std::uint8_t>(c >> 16), static_cast<std::uint8_t>(c >> 24)};
      }
      return def;
    }
  }
  return def;
}

void FramePainter::paint_entities(std::vector<std::uint8_t>& rgb, const ViewLayer& l,
                                  const log::LogFrame& f) const {
  const bool robots = l.type == LayerType::kRobots;
  const auto& h = header_;
  const std::size_t n = robots ? f.robot_count : f.object_count;
  const auto x = robots ? f.robot<double>("x", h) : f.object<double>("x", h);
  const auto y = robots ? f.robot<double>("y", h) : f.object<double>("y", h);
  if (n == 0 || x.size() < n || y.size() < n) return;
  const Vec2 c = h.arena_center;
  std::vector<double> xs(n), ys(n);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = x[i] - c.x;
    ys[i] = y[i] - c.y;
  }
  std::vector<float> radius(n);
  std::vector<Rgba8> colors(n);
  for (std::size_t i = 0; i < n; ++i) colors[i] = color_of(l, f, robots, i);
  Shapes s;
  s.count = n;
  s.x = xs.data();
  s.y = ys.data();
  s.radius = radius.data();
  s.color = colors.data();
  if (!robots) {
    const auto size = f.object<double>("size", h);
    for (std::size_t i = 0; i < n; ++i)
      radius[i] = static_cast<float>(i < size.size() && size[i] > 0 ? size[i] / 2 : 0.05);
    s.circle = l.circles;
    paint_shapes(rgb, s);
    return;
  }
  // Robots: the kind's radius, a flyer's larger with its altitude (up to 3 m).
  const auto kind = f.robot<std::uint16_t>("kind", h);
  const auto z = f.robot<double>("z", h);
  const auto theta = f.robot<double>("theta", h);
  auto body = [&](std::size_t i) {
    const std::uint16_t k = i < kind.size() ? kind[i] : 0;
    return k < h.kinds.size() && h.kinds[k].radius_m > 0 ? h.kinds[k].radius_m : 0.05;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double alt = i < z.size() ? std::clamp(z[i], 0.0, 3.0) : 0.0;
    radius[i] = static_cast<float>(body(i) * (1 + kAltitudeGrowth * (std::isnan(alt) ? 0 : alt)));
  }
  // Box-shaped kinds (main.js robotBoxes): half extents as fractions of the half-diagonal.
  std::vector<float> boxes;
  if (std::any_of(h.kinds.begin(), h.kinds.end(),
                  [](const log::LogKind& k) { return k.shape == log::LogShape::kBox; }) &&
      theta.size() >= n) {
    boxes.assign(2 * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t k = i < kind.size() ? kind[i] : 0;
      if (k >= h.kinds.size() || h.kinds[k].shape != log::LogShape::kBox ||
          !(h.kinds[k].radius_m > 0))
        continue;
      boxes[2 * i] = static_cast<float>(h.kinds[k].half_length_m / h.kinds[k].radius_m);
      boxes[2 * i + 1] = static_cast<float>(h.kinds[k].half_width_m / h.kinds[k].radius_m);
    }
    s.box = boxes.data();
    s.box_theta = theta.data();
  }
  s.circle = true;
  s.heading = l.rotation;
  s.theta = l.rotation && theta.size() >= n ? theta.data() : nullptr;
  paint_shapes(rgb, s);

  // LED dots of kinds with several LEDs, once the smallest such body is 6 pixels in radius.
  if (!l.leds) return;
  const auto leds = f.robot<std::uint32_t>("leds", h);
  double smallest = INFINITY;
  for (const auto& k : h.kinds)
    if (k.led_count > 1) smallest = std::min(smallest, k.radius_m > 0 ? k.radius_m : 0.05);
  if (leds.empty() || theta.size() < n || smallest * scale_ < kLedMinPixels) return;
  const std::size_t width = leds.size() / n;
  std::vector<double> dx, dy;
  std::vector<float> dr;
  std::vector<Rgba8> dc;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t k = i < kind.size() ? kind[i] : 0;
    if (k >= h.kinds.size()) continue;
    const std::size_t count = std::min<std::size_t>(h.kinds[k].led_count, width);
    if (count < 2) continue;
    const double r = body(i);
    const std::size_t ring = count - 1;
    for (std::size_t j = 0; j < count; ++j) {
      const std::uint32_t v = leds[i * width + j];
      if (!(v >> 24)) continue;  // off
      if (j == ring) {
        dx.push_back(xs[i]);
        dy.push_back(ys[i]);
        dr.push_back(static_cast<float>(kBeacon * r));
      } else {
        const double a = theta[i] + 2 * M_PI * static_cast<double>(j) / static_cast<double>(ring);
        dx.push_back(xs[i] + kRing * r * std::cos(a));
        dy.push_back(ys[i] + kRing * r * std::sin(a));
        dr.push_back(static_cast<float>(kRingDot * r));
      }
      dc.push_back({static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8),
                    static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>(v >> 24)});
    }
  }
  Shapes d;
  d.count = dx.size();
  d.x = dx.data();
  d.y = dy.data();
  d.radius = dr.data();
  d.color = dc.data();
  paint_shapes(rgb, d);
}

void FramePainter::paint_links(std::vector<std::uint8_t>& rgb, const ViewLayer& l,
                               const log::LogFrame& f) const {
  // A link between two robots whose kinds both have a range and which are within the smaller
  // one; robots sorted into a grid of cells as large as the largest range (main.js rabLinks).
  const auto& h = header_;
  const auto x = f.robot<double>("x", h), y = f.robot<double>("y", h);
  const auto kind = f.robot<std::uint16_t>("kind", h);
  const std::size_t n = f.robot_count;
  if (x.size() < n || y.size() < n || kind.size() < n) return;
  std::vector<double> range(h.kinds.size());
  double largest = 0;
  for (std::size_t k = 0; k < h.kinds.size(); ++k) {
    range[k] = h.kinds[k].rab_range_m > 0 ? h.kinds[k].rab_range_m : 0;
    largest = std::max(largest, range[k]);
  }
  if (largest <= 0) return;
  std::vector<std::uint32_t> members;
  double lx = INFINITY, ly = INFINITY, hx = -INFINITY, hy = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) {
    if (kind[i] >= range.size() || !(range[kind[i]] > 0) || !std::isfinite(x[i]) ||
        !std::isfinite(y[i]))
      continue;
    members.push_back(static_cast<std::uint32_t>(i));
    lx = std::min(lx, x[i]), hx = std::max(hx, x[i]), ly = std::min(ly, y[i]),
    hy = std::max(hy, y[i]);
  }
  if (members.size() < 2) return;
  double cell = largest;
  auto cells = [&] {
    return (std::floor((hx - lx) / cell) + 1) * (std::floor((hy - ly) / cell) + 1);
  };
  while (cells() > 2.0 * static_cast<double>(members.size()) + 16) cell *= 2;
  const int gw = static_cast<int>(std::floor((hx - lx) / cell)) + 1;
  const int gh = static_cast<int>(std::floor((hy - ly) / cell)) + 1;
  std::vector<int> cx(n), cy(n), start(static_cast<std::size_t>(gw) * gh + 1, 0);
  for (std::uint32_t i : members) {
    cx[i] = std::min(gw - 1, static_cast<int>(std::floor((x[i] - lx) / cell)));
    cy[i] = std::min(gh - 1, static_cast<int>(std::floor((y[i] - ly) / cell)));
    ++start[static_cast<std::size_t>(cy[i]) * gw + cx[i] + 1];
  }
  for (std::size_t c = 0; c + 1 < start.size(); ++c) start[c + 1] += start[c];
  std::vector<int> fill(start.begin(), start.end() - 1);
  std::vector<std::uint32_t> order(members.size());
  for (std::uint32_t i : members) order[fill[static_cast<std::size_t>(cy[i]) * gw + cx[i]]++] = i;
  const Rgba8 color = pack(l.coloring.color);
  const double half = kRabLinePixels / 2 / scale_;
  const Vec2 c = h.arena_center;
  for (std::uint32_t i : members) {
    const double ri = range[kind[i]];
    for (int gy = std::max(0, cy[i] - 1); gy <= std::min(gh - 1, cy[i] + 1); ++gy)
      for (int gx = std::max(0, cx[i] - 1); gx <= std::min(gw - 1, cx[i] + 1); ++gx) {
        const std::size_t cellk = static_cast<std::size_t>(gy) * gw + gx;
        for (int q = start[cellk]; q < start[cellk + 1]; ++q) {
          const std::uint32_t j = order[static_cast<std::size_t>(q)];
          if (j <= i) continue;
          const double reach = std::min(ri, range[kind[j]]);
          const double ex = x[j] - x[i], ey = y[j] - y[i];
          if (ex * ex + ey * ey > reach * reach) continue;
          fill_segment(rgb, x[i] - c.x, y[i] - c.y, x[j] - c.x, y[j] - c.y, half, color);
        }
      }
  }
}

void FramePainter::paint(const log::LogFrame& frame, std::vector<std::uint8_t>& rgb) const {
  rgb = base_;
  for (std::size_t k = base_layers_; k < config_.layers.size(); ++k) {
    const ViewLayer& l = config_.layers[k];
    if (l.transparent) continue;
    switch (l.type) {
      case LayerType::kBackground:
        if (l.coloring.texture < 0) {
          const Rgba8 c = pack(l.coloring.color);
          for (std::size_t p = 0; p < rgb.size(); p += 3) blend(&rgb[p], c);
        }
        break;
      case LayerType::kMap:
        paint_map(rgb, l);
        break;
      case LayerType::kRobots:
      case LayerType::kObjects:
        paint_entities(rgb, l, frame);
        break;
      case LayerType::kRangeAndBearing:
        paint_links(rgb, l, frame);
        break;
      case LayerType::kCustom:
        break;
      case LayerType::kField:
        paint_field(rgb, l);
        break;
    }
  }
}

void FramePainter::paint_field(std::vector<std::uint8_t>& rgb, const ViewLayer& l) const {
  const double w = header_.arena_width_m, h = header_.arena_height_m;
  const std::size_t image = static_cast<std::size_t>(l.coloring.texture);
  if (l.coloring.texture < 0 || image >= field_images_.size() || field_images_[image].empty()) {
    fill_rect(rgb, -w / 2, -h / 2, w / 2, h / 2, pack(l.coloring.color));
    return;
  }
  // The picture stretched over the arena, each pixel of it the image's pixel under its centre.
  const std::vector<std::uint8_t>& px = field_images_[image];
  const int iw = field_sizes_[image].first, ih = field_sizes_[image].second;
  const double left = width_ / 2.0 - w / 2 * scale_, top = height_ / 2.0 - h / 2 * scale_;
  const int i0 = std::max(0, static_cast<int>(std::ceil(left - 0.5)));
  const int i1 = std::min(width_, static_cast<int>(std::ceil(left + w * scale_ - 0.5)));
  const int j0 = std::max(0, static_cast<int>(std::ceil(top - 0.5)));
  const int j1 = std::min(height_, static_cast<int>(std::ceil(top + h * scale_ - 0.5)));
  for (int j = j0; j < j1; ++j) {
    const int v = std::clamp(static_cast<int>((j + 0.5 - top) / (h * scale_) * ih), 0, ih - 1);
    for (int i = i0; i < i1; ++i) {
      const int u = std::clamp(static_cast<int>((i + 0.5 - left) / (w * scale_) * iw), 0, iw - 1);
      const std::uint8_t* c = &px[(static_cast<std::size_t>(v) * iw + u) * 3];
      std::uint8_t* p = &rgb[(static_cast<std::size_t>(j) * width_ + i) * 3];
      p[0] = c[0], p[1] = c[1], p[2] = c[2];
    }
  }
}

void write_png(const std::string& path, int width, int height,
               const std::vector<std::uint8_t>& rgb) {
  if (rgb.size() != static_cast<std::size_t>(width) * height * 3)
    throw std::runtime_error("cannot write '" + path + "': the picture has the wrong size");
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  std::string error;
  png_structp png = png_create_write_struct(
      PNG_LIBPNG_VER_STRING, &error,
      [](png_structp p, png_const_charp message) {
        *static_cast<std::string*>(png_get_error_ptr(p)) = message;
        png_longjmp(p, 1);
      },
      nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  // (libpng reports errors by longjmp: nothing with a destructor lives past this point)
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    throw std::runtime_error("cannot write '" + path +
                             "': " + (error.empty() ? std::string("out of memory") : error));
  }
  png_init_io(png, file);
  // The pictures are mostly flat colour: the "sub" filter turns runs of one colour into zeros,
  // which zlib's run-length strategy at its fastest level packs in a fraction of the default's
  // time (at 1920 x 1080: ~19 ms against ~90 ms, bench/render), to a few tens of kB.
  png_set_compression_level(png, 1);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
  png_set_compression_strategy(png, Z_RLE);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE,
               PNG_FILTER_TYPE_BASE);
  png_write_info(png, info);
  for (int j = 0; j < height; ++j)
    png_write_row(png, rgb.data() + static_cast<std::size_t>(j) * width * 3);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fclose(file) != 0)
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
}

std::vector<std::uint8_t> read_png(const std::string& path, int& width, int& height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw std::runtime_error("cannot read '" + path + "': " + image.message);
  image.format = PNG_FORMAT_RGB;
  std::vector<std::uint8_t> rgb(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw std::runtime_error("cannot read '" + path + "': " + why);
  }
  width = static_cast<int>(image.width);
  height = static_cast<int>(image.height);
  return rgb;
}

}  // namespace fleetsim::view
