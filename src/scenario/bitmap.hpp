// Bitmap fields: a PNG whose black pixels (RGB 0,0,0, not transparent) are obstacles; and
// floor images, whose colours ground sensors read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim {

struct Bitmap {
  int width = 0, height = 0;
  std::vector<std::uint8_t> black;  ///< 1 = obstacle, row-major from the top row
  bool at(int i, int j) const {
    return i >= 0 && j >= 0 && i < width && j < height &&
           black[static_cast<std::size_t>(j) * static_cast<std::size_t>(width) +
                 static_cast<std::size_t>(i)];
  }
};

/// An image's colours, row-major from the top row.
struct ColorImage {
  int width = 0, height = 0;
  std::vector<Color> pixels;
};

/// Loads a PNG's colours (a floor image). On failure returns nullopt and sets `error`.
std::optional<ColorImage> load_png_colors(const std::string& path, std::string& error);

/// Loads a PNG's colours; `what` names the file's role in the error. On failure returns
/// nullopt and sets `error`.
std::optional<ColorImage> load_png_image(const std::string& path, const char* what,
                                         std::string& error);

/// Loads a PNG. On failure returns nullopt and sets `error` to a user-facing reason.
std::optional<Bitmap> load_png_bitmap(const std::string& path, std::string& error);

/// The outline of the black regions as line segments, in world metres: pixel (i, j) covers
/// [left + i*res, left + (i+1)*res] x [top - (j+1)*res, top - j*res]. Collinear edges of
/// adjacent pixels are merged into one segment, so a black rectangle of any size gives 4.
std::vector<Segment> bitmap_segments(const Bitmap& bitmap, double resolution_m, Vec2 top_left);

}  // namespace fleetsim
