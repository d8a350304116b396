#include "diffusion_scene.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "sim/simulation.hpp"

namespace fleetsim::bench {

double arena_side_m(std::int64_t robots) {
  constexpr double kSide = 40, kRobots = 100'000;
  if (robots <= kRobots) return kSide;
  return kSide * std::sqrt(static_cast<double>(robots) / kRobots);
}

bool engine_grid(int engines, int& columns, int& rows) {
  switch (engines) {
    case 1:
      columns = 1, rows = 1;
      return true;
    case 2:
      columns = 2, rows = 1;
      return true;
    case 4:
      columns = 2, rows = 2;
      return true;
    case 8:
      columns = 4, rows = 2;
      return true;
    case 16:
      columns = 4, rows = 4;
      return true;
    default:
      return false;
  }
}

namespace {

// The rooms of scripts/make-room-bitmap.py, pixel for pixel: a cross of walls with a door in
// each arm, and one more wall with a door in each quadrant.
std::vector<std::uint8_t> rooms(int n) {
  std::vector<std::uint8_t> black(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0);
  const int t = std::max(1, n / 200);
  auto set = [&](int x, int y) { black[static_cast<std::size_t>(y) * n + x] = 1; };
  auto hwall = [&](int y, int x0, int x1) {
    for (int yy = y; yy < y + t; ++yy)
      for (int x = x0; x < x1; ++x) set(x, yy);
  };
  auto vwall = [&](int x, int y0, int y1) {
    for (int y = y0; y < y1; ++y)
      for (int xx = x; xx < x + t; ++xx) set(xx, y);
  };
  const int h = n / 2, door = n / 20, q = n / 4;
  hwall(h, 0, n / 4 - door / 2);
  hwall(h, n / 4 + door / 2, 3 * n / 4 - door / 2);
  hwall(h, 3 * n / 4 + door / 2, n);
  vwall(h, 0, n / 4 - door / 2);
  vwall(h, n / 4 + door / 2, 3 * n / 4 - door / 2);
  vwall(h, 3 * n / 4 + door / 2, n);
  const int corners[4][2] = {{0, 0}, {h, 0}, {0, h}, {h, h}};
  for (const auto& c : corners) {
    vwall(c[0] + q, c[1] + n / 16, c[1] + q - door / 2);
    vwall(c[0] + q, c[1] + q + door / 2, c[1] + h - n / 16);
  }
  return black;
}

int rooms_pixels(std::int64_t robots) {
  return static_cast<int>(std::lround(arena_side_m(robots) / 0.1));
}

std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

bool write_rooms_png(const std::string& path, int pixels) {
  std::vector<std::uint8_t> black = rooms(pixels);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    return false;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, static_cast<png_uint_32>(pixels), static_cast<png_uint_32>(pixels), 8,
               PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  std::vector<std::uint8_t> row(static_cast<std::size_t>(pixels));
  for (int y = 0; y < pixels; ++y) {
    for (int x = 0; x < pixels; ++x)
      row[static_cast<std::size_t>(x)] = black[static_cast<std::size_t>(y) * pixels + x] ? 0 : 255;
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return std::fclose(f) == 0;
}

std::string diffusion_experiment_xml(const DiffusionSceneOptions& o) {
  const double side = arena_side_m(o.robots);
  std::string x = "<?xml version=\"1.0\"?>\n<fleetsim>\n";
  x += "  <framework ticks_per_second=\"10\" length=\"" + real(o.seconds) + "\" seed=\"" +
       std::to_string(o.seed) + "\" threads=\"" + std::to_string(o.threads) + "\"/>\n";
  x += "  <controllers>\n";
  if (o.controller == "diffusion")
    x += "    <controller id=\"c\" type=\"diffusion\" alpha_degrees=\"7.5\" delta=\"0.1\" "
         "speed=\"0.1\"" +
         (o.rule.empty() ? std::string() : " rule=\"" + o.rule + "\"") + "/>\n";
  else if (o.controller == "lua")
    x += "    <controller id=\"c\" type=\"lua\" script=\"" + o.script + "\"/>\n";
  else
    x += "    <controller id=\"c\" type=\"" + o.controller + "\"/>\n";
  x += "  </controllers>\n";
  x += "  <arena size=\"" + real(side) + "," + real(side) + "\">\n";
  x += "    <bitmap file=\"rooms.png\" resolution=\"0.1\"/>\n";
  // Uniform random placement, stratified in horizontal strips of ~2,500 robots (one
  // <distribute> each, the count proportional to the strip's free area in the bitmap): the
  // placement is still uniform over the free floor, and robot ids then follow the grid's cells
  // row by row, so the per-robot columns a worker touches stay in cache (docs/benchmarks.md
  // shows the effect).
  const int pixels = rooms_pixels(o.robots);
  const int rows_per_strip =
      std::max<int>(1, static_cast<int>(static_cast<double>(pixels) * 2500 / o.robots));
  if (rows_per_strip >= pixels) {
    x += "    <distribute count=\"" + std::to_string(o.robots) +
         "\" kind=\"epuck\" controller=\"c\" id_prefix=\"ep\"/>\n";
  } else {
    const std::vector<std::uint8_t> black = rooms(pixels);
    std::vector<std::int64_t> free_rows(static_cast<std::size_t>(pixels), 0);
    for (int j = 0; j < pixels; ++j)
      for (int i = 0; i < pixels; ++i)
        free_rows[static_cast<std::size_t>(j)] +=
            black[static_cast<std::size_t>(j) * pixels + i] ? 0 : 1;
    std::int64_t total = 0;
    for (auto f : free_rows) total += f;
    // Strip k covers pixel rows [k R, (k+1) R) from the top; robot centres lie in its rows:
    // the region is widened by the radius, which distribute takes off again.
    const double r = 0.035, lo = -side / 2, hi = side / 2;
    const double top = pixels * 0.1 / 2;
    std::int64_t cum = 0;
    int k = 0;
    for (int j0 = 0; j0 < pixels; j0 += rows_per_strip, ++k) {
      const int j1 = std::min(pixels, j0 + rows_per_strip);
      std::int64_t strip_free = 0;
      for (int j = j0; j < j1; ++j) strip_free += free_rows[static_cast<std::size_t>(j)];
      const std::int64_t count = (cum + strip_free) * o.robots / total - cum * o.robots / total;
      cum += strip_free;
      if (count == 0) continue;
      const double y1 = j0 == 0 ? hi : std::min(hi, top - j0 * 0.1 + r);
      const double y0 = j1 == pixels ? lo : std::max(lo, top - j1 * 0.1 - r);
      x += "    <distribute count=\"" + std::to_string(count) +
           "\" kind=\"epuck\" controller=\"c\" id_prefix=\"ep" + std::to_string(k) +
           "_\" region=\"" + real(lo) + "," + real(y0) + "," + real(hi) + "," + real(y1) + "\"/>\n";
    }
  }
  x += "  </arena>\n";
  int columns = 1, rows = 1;
  const std::string engine_attributes =
      o.sub_steps > 0 ? " sub_steps=\"" + std::to_string(o.sub_steps) + "\"" : std::string();
  if (o.engines == 1 && o.engine != "kinematics2d") {
    x += "  <physics>\n    <" + o.engine + " id=\"e0\"" + engine_attributes + "/>\n  </physics>\n";
  } else if (o.engines > 1 && engine_grid(o.engines, columns, rows)) {
    // The arena is centred on the origin; region edges are exact at the arena's border.
    const double lo = -side / 2, hi = side / 2;
    auto edge = [&](int k, int parts) {
      return k == 0 ? lo : k == parts ? hi : lo + side * k / parts;
    };
    x += "  <physics>\n";
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < columns; ++c)
        x += "    <" + o.engine + " id=\"e" + std::to_string(r * columns + c) + "\" region=\"" +
             real(edge(c, columns)) + "," + real(edge(r, rows)) + "," + real(edge(c + 1, columns)) +
             "," + real(edge(r + 1, rows)) + "\"" + engine_attributes + "/>\n";
    x += "  </physics>\n";
  }
  if (!o.loop_functions.empty()) x += "  <loop_functions type=\"" + o.loop_functions + "\"/>\n";
  if (o.log_frames) x += "  <log path=\"diffusion.flog\" format=\"frames\"/>\n";
  x += "</fleetsim>\n";
  return x;
}

std::optional<Experiment> make_diffusion_experiment(const DiffusionSceneOptions& o,
                                                    const std::string& directory,
                                                    PluginRegistry& registry, Diagnostics& diags,
                                                    bool defer_placement) {
  const int pixels = rooms_pixels(o.robots);
  const std::string png = directory + "/rooms.png";
  if (!write_rooms_png(png, pixels)) {
    diags.error({png, 0}, "cannot write the rooms bitmap (expected a writable directory)");
    return std::nullopt;
  }
  return parse_experiment(diffusion_experiment_xml(o), directory + "/diffusion.xml", registry,
                          ExperimentOverrides{.defer_placement = defer_placement}, diags);
}

}  // namespace fleetsim::bench
