#include "scenario/bitmap.hpp"

#include <png.h>

#include <cstdio>
#include <cstring>
#include <fstream>

namespace fleetsim {

namespace {

/// A PNG's pixels as RGBA, row-major from the top row; `what` names the file's role in errors.
std::optional<ColorImage> load_rgba(const std::string& path, const char* what, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot open ") + what + " '" + path + "': " + std::strerror(errno) +
            " (expected a PNG file; paths are relative to the experiment file)";
    return std::nullopt;
  }
  unsigned char sig[8] = {};
  in.read(reinterpret_cast<char*>(sig), 8);
  if (in.gcount() != 8 || png_sig_cmp(sig, 0, 8) != 0) {
    error = std::string(what) + " '" + path + "' is not a PNG file (expected a PNG image)";
    return std::nullopt;
  }
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    error = std::string("cannot read ") + what + " '" + path + "': " + image.message;
    return std::nullopt;
  }
  if (image.width == 0 || image.height == 0 || image.width > 65536 || image.height > 65536 ||
      static_cast<double>(image.width) * image.height > 256e6) {
    png_image_free(&image);
    error = std::string(what) + " '" + path + "' is " + std::to_string(image.width) + " x " +
            std::to_string(image.height) +
            " pixels (expected at most 65536 a side and 256 million in all)";
    return std::nullopt;
  }
  image.format = PNG_FORMAT_RGBA;
  std::vector<png_byte> rgba(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, rgba.data(), 0, nullptr)) {
    error = std::string("cannot decode ") + what + " '" + path + "': " + image.message +
            " (the file may be truncated)";
    png_image_free(&image);
    return std::nullopt;
  }
  ColorImage out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.pixels.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height));
  for (std::size_t p = 0; p < out.pixels.size(); ++p) {
    const png_byte* px = &rgba[p * 4];
    out.pixels[p] = Color{px[0], px[1], px[2], px[3]};
  }
  return out;
}

}  // namespace

std::optional<Bitmap> load_png_bitmap(const std::string& path, std::string& error) {
  auto image = load_rgba(path, "bitmap", error);
  if (!image) return std::nullopt;
  Bitmap b;
  b.width = image->width;
  b.height = image->height;
  b.black.resize(image->pixels.size());
  for (std::size_t p = 0; p < b.black.size(); ++p) {
    const Color c = image->pixels[p];
    b.black[p] = (c.r == 0 && c.g == 0 && c.b == 0 && c.a != 0) ? 1 : 0;
  }
  return b;
}

std::optional<ColorImage> load_png_colors(const std::string& path, std::string& error) {
  return load_rgba(path, "floor image", error);
}

std::optional<ColorImage> load_png_image(const std::string& path, const char* what,
                                         std::string& error) {
  return load_rgba(path, what, error);
}

std::vector<Segment> bitmap_segments(const Bitmap& bm, double res, Vec2 top_left) {
  std::vector<Segment> out;
  auto wx = [&](int i) { return top_left.x + i * res; };
  auto wy = [&](int j) { return top_left.y - j * res; };
  // Horizontal edges: the boundary line above row j (j = 0..height), between pixel rows j-1
  // and j; an edge exists at column i where exactly one side is black. Maximal runs merge.
  for (int j = 0; j <= bm.height; ++j) {
    int run = -1;
    for (int i = 0; i <= bm.width; ++i) {
      bool edge = i < bm.width && bm.at(i, j - 1) != bm.at(i, j);
      if (edge && run < 0) run = i;
      if (!edge && run >= 0) {
        out.push_back({{wx(run), wy(j)}, {wx(i), wy(j)}});
        run = -1;
      }
    }
  }
  // Vertical edges: the boundary line left of column i.
  for (int i = 0; i <= bm.width; ++i) {
    int run = -1;
    for (int j = 0; j <= bm.height; ++j) {
      bool edge = j < bm.height && bm.at(i - 1, j) != bm.at(i, j);
      if (edge && run < 0) run = j;
      if (!edge && run >= 0) {
        out.push_back({{wx(i), wy(run)}, {wx(i), wy(j)}});
        run = -1;
      }
    }
  }
  return out;
}

}  // namespace fleetsim
