// Pictures of log frames without a browser (`fleetsim render`, docs/view-format.md,
// "Pictures and videos"): a software rasterizer that draws a frame as the page's WebGL2
// renderer does (web/js/gl_renderer.js, main.js), into an RGB image.
//
// The same picture as the page: the view fits the arena (and bitmap) in the image times the
// configuration's zoom; the floor, the outside, the layers in the configured order with their
// colourings (by number, kind or class, tag, LED), the obstacle bitmap and segments, robots as
// discs (box-shaped kinds as boxes turned by their heading) with their heading stripe and dark
// rim (when 4 pixels or more in radius), objects as
// squares or discs, flyers larger by altitude, the LED dots of kinds with several LEDs, and the
// range-and-bearing links. A pixel is covered when its centre is inside a shape (the page's
// WebGL canvas has no antialiasing), and colours blend by their alpha as the page's do. Not
// drawn: textures and background images (their layer's colour instead), labels and custom
// (JavaScript) layers; `unsupported()` lists what a configuration asks for of those.
//
// Threads: one painter per thread; paint() only reads the frame.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "log/log_types.hpp"
#include "view/view_config.hpp"

namespace fleetsim::view {

class FramePainter {
 public:
  /// A painter of `width` x `height` pixels (each 1 .. 16384) for the log `header`'s frames
  /// under `config` (default_view_config() for the page's default picture).
  FramePainter(const log::LogHeader& header, ViewConfig config, int width, int height);

  /// Paints `frame` (a frame of the header's log) into `rgb`: width x height pixels, rows from
  /// the top, 3 bytes (r, g, b) a pixel; resized to fit.
  void paint(const log::LogFrame& frame, std::vector<std::uint8_t>& rgb) const;

  int width() const { return width_; }
  int height() const { return height_; }
  /// Pixels per metre, and the world point (relative to the arena centre) at the image centre.
  double scale() const { return scale_; }
  /// Where world point (x, y) (world coordinates, not relative to the centre) falls in the
  /// image, in pixels from the top-left corner (pixel (i, j) spans [i, i + 1) x [j, j + 1)).
  std::pair<double, double> to_image(double x, double y) const;
  /// What the configuration asks for that the painter does not draw, one phrase each
  /// ("textures (drawn in their layer's colour)", "labels", "custom layers"); empty if none.
  const std::vector<std::string>& unsupported() const { return unsupported_; }

 private:
  /// An RGBA colour, 8 bits a channel, as the page packs it (colorings.js packColor).
  struct Rgba8 {
    std::uint8_t r = 0, g = 0, b = 0, a = 255;
  };
  static Rgba8 pack(const Rgba& c);
  /// Blends `c` (alpha included) into the pixel at `p`; `dim` multiplies c's r, g, b first.
  static void blend(std::uint8_t* p, Rgba8 c, float dim = 1);
  /// Fills the pixels whose centres are inside the world rectangle [x0, x1] x [y0, y1]
  /// (relative to the centre).
  void fill_rect(std::vector<std::uint8_t>& rgb, double x0, double y0, double x1, double y1,
                 Rgba8 c) const;
  /// Fills a segment (relative to the centre) `half` metres wide on each side and past each end.
  void fill_segment(std::vector<std::uint8_t>& rgb, double ax, double ay, double bx, double by,
                    double half, Rgba8 c) const;
  void paint_map(std::vector<std::uint8_t>& rgb, const ViewLayer& l) const;
  /// A <field> layer: its image stretched over the arena (or its colour).
  void paint_field(std::vector<std::uint8_t>& rgb, const ViewLayer& l) const;
  /// The <field> layers' images (RGB rows from the top), by asset index; empty when none.
  std::vector<std::vector<std::uint8_t>> field_images_;
  std::vector<std::pair<int, int>> field_sizes_;
  /// Discs or squares of `radius` metres at (x, y) relative to the centre, as the page's entity
  /// shader draws them (heading stripe and rim from 4 pixels in radius).
  struct Shapes {
    std::size_t count = 0;
    const double* x = nullptr;
    const double* y = nullptr;
    const double* theta = nullptr;  ///< null: not rotated
    const float* radius = nullptr;
    const Rgba8* color = nullptr;
    /// Or null: per entity its half length and half width as fractions of its radius, turned
    /// by `box_theta` (a box; (0, 0): a circle).
    const float* box = nullptr;
    const double* box_theta = nullptr;
    bool circle = true, heading = false;
  };
  void paint_shapes(std::vector<std::uint8_t>& rgb, const Shapes& s) const;
  void paint_entities(std::vector<std::uint8_t>& rgb, const ViewLayer& l,
                      const log::LogFrame& f) const;
  void paint_links(std::vector<std::uint8_t>& rgb, const ViewLayer& l,
                   const log::LogFrame& f) const;
  /// The layer's colour for entity `i`.
  Rgba8 color_of(const ViewLayer& l, const log::LogFrame& f, bool robots, std::size_t i) const;

  log::LogHeader header_;
  ViewConfig config_;
  int width_ = 0, height_ = 0;
  double scale_ = 1;
  /// The picture up to the first layer that changes with the frame, painted once.
  std::vector<std::uint8_t> base_;
  std::size_t base_layers_ = 0;  ///< layers of config_ painted into base_
  std::vector<std::string> unsupported_;
};

/// Writes `rgb` (width x height, 3 bytes a pixel, rows from the top) as a PNG file (libpng,
/// zlib's fastest level). Throws std::runtime_error naming the file when it cannot.
void write_png(const std::string& path, int width, int height,
               const std::vector<std::uint8_t>& rgb);

/// Reads a PNG file as RGB (tests, tools): width, height and the pixels. Throws
/// std::runtime_error when it cannot.
std::vector<std::uint8_t> read_png(const std::string& path, int& width, int& height);

}  // namespace fleetsim::view
