#include "log/deeco_log_reader.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>

#include "log/deeco_text.hpp"

namespace fleetsim::log {

namespace {

constexpr std::size_t kChunkBytes = 1 << 20;
/// Longest line accepted in the robots and objects sections and for width/height.
constexpr std::size_t kMaxEntityLine = 1 << 20;
constexpr std::size_t kMaxNumberLine = 64;
/// Largest bitmap accepted (pixels).
constexpr std::uint64_t kMaxBitmapPixels = std::uint64_t{1} << 32;

bool parse_int(std::string_view s, std::int64_t& v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

DeecoLogReader::DeecoLogReader(std::string path, double metres_per_unit)
    : path_(std::move(path)), file_(open_for_reading(path_)), metres_per_unit_(metres_per_unit) {
  if (!(metres_per_unit_ > 0) || !std::isfinite(metres_per_unit_)) {
    throw LogError("log '" + path_ + "': the field unit must be a positive number of metres");
  }
  header_.robot_columns = required_robot_columns();
  header_.object_columns = required_object_columns();
  const std::uint64_t size = file_size(file_.get(), path_);
  if (size == 0) throw LogError("log '" + path_ + "' is empty");

  // One streaming pass: header lines are accumulated and parsed, cycle lines only located.
  std::vector<char> chunk(kChunkBytes);
  std::string current;
  std::uint64_t line_start = 0;
  std::size_t line_number = 0;  // 0-based number of the current line
  bool in_body = false;
  auto cap = [&]() -> std::size_t {
    if (section_line_ < 2) return kMaxNumberLine;
    if (section_line_ == 2 && has_bitmap_) return bitmap_pixels() + 1;
    if (section_line_ == 2) return kMaxNumberLine;
    return kMaxEntityLine;
  };
  for (std::uint64_t offset = 0; offset < size;) {
    std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, size - offset));
    if (!read_exact_at(file_.get(), chunk.data(), k, offset, path_)) break;
    std::size_t from = 0;
    while (from < k) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data() + from, '\n', k - from));
      std::size_t to = nl ? static_cast<std::size_t>(nl - chunk.data()) : k;
      if (!in_body) {
        current.append(chunk.data() + from, to - from);
        if (current.size() > cap()) {
          // Only a cycle line may be this long.
          if (section_line_ >= 3 && (!playground_ || separators_ == 3) &&
              deeco::contains_unescaped(current, "&&")) {
            in_body = true;
            header_lines_ = line_number;
            current.clear();
          } else {
            throw LogError("log '" + path_ + "', line " + std::to_string(line_number + 1) +
                           ": line too long; not a DEECo log");
          }
        }
      }
      if (!nl) break;
      const std::uint64_t end = offset + to;  // offset of the newline
      if (!in_body) {
        if (!current.empty() && current.back() == '\r') current.pop_back();
        if (section_line_ >= 3 && (!playground_ || separators_ == 3) &&
            deeco::contains_unescaped(current, "&&")) {
          in_body = true;
          header_lines_ = line_number;
        } else {
          parse_header_line(current, line_number + 1);
        }
        current.clear();
      }
      if (in_body) {
        if (line_starts_.empty()) line_starts_.push_back(line_start);
        line_starts_.push_back(end + 1);
      }
      line_start = end + 1;
      ++line_number;
      from = to + 1;
    }
    offset += k;
  }
  if (section_line_ < 3) {
    throw LogError("log '" + path_ + "' is truncated or not a DEECo log (its bitmap section " +
                   "is incomplete)");
  }
  if (!in_body) header_lines_ = line_number;
  if (playground_ && separators_ < 3) {
    throw LogError("log '" + path_ + "' is truncated: its header ends before the third '---' " +
                   "line (after the robots and the objects)");
  }
  // Object ids follow the robots' so that every id is unique.
  for (std::size_t j = 0; j < header_.objects.size(); ++j) {
    header_.objects[j].id = static_cast<EntityId>(header_.robots.size() + j);
  }
}

void DeecoLogReader::parse_header_line(const std::string& line, std::size_t line_number) {
  const std::string where = "log '" + path_ + "', line " + std::to_string(line_number);
  switch (section_line_) {
    case 0:
      if (line == "null") {
        has_bitmap_ = false;
      } else {
        std::int64_t w = 0;
        if (!parse_int(line, w) || w <= 0) {
          throw LogError(where + ": expected 'null' or the bitmap width; not a DEECo log");
        }
        has_bitmap_ = true;
        header_.bitmap_width = static_cast<int>(std::min<std::int64_t>(w, 1 << 30));
      }
      break;
    case 1:
    case 2:
      if (has_bitmap_ && section_line_ == 1) {
        std::int64_t h = 0;
        if (!parse_int(line, h) || h <= 0 ||
            static_cast<std::uint64_t>(h) * static_cast<std::uint64_t>(header_.bitmap_width) >
                kMaxBitmapPixels) {
          throw LogError(where + ": expected the bitmap height (a positive integer)");
        }
        header_.bitmap_height = static_cast<int>(h);
      } else if (has_bitmap_) {
        const std::size_t pixels = bitmap_pixels();
        if (line.size() != pixels || line.find_first_not_of("01") != std::string::npos) {
          throw LogError(where + ": expected the bitmap encoding (" + std::to_string(pixels) +
                         " characters 0 or 1)");
        }
        // Sized only now that the encoding is read: the width and height alone are a claim, and
        // a few bytes claiming 2^30 x 2 pixels must not allocate 2 GB.
        header_.bitmap.reserve(pixels);
        for (char c : line) header_.bitmap.push_back(c == '1' ? 1 : 0);
        const double w = header_.bitmap_width * metres_per_unit_;
        const double h = header_.bitmap_height * metres_per_unit_;
        header_.arena_width_m = w;
        header_.arena_height_m = h;
        header_.bitmap_resolution_m = metres_per_unit_;
        header_.bitmap_top_left = {-w / 2, h / 2};
      } else {
        double v = 0;
        if (!deeco::parse_number(line, v) || !(v >= 0)) {
          throw LogError(where + ": expected the field " +
                         (section_line_ == 1 ? "width" : "height") + " (a number)");
        }
        (section_line_ == 1 ? header_.arena_width_m : header_.arena_height_m) =
            v * metres_per_unit_;
      }
      break;
    default: {
      if (line == "---") {
        // The playground's sections: after the bitmap, the robots and the objects.
        if (section_line_ == 3) {
          playground_ = true;
          if (has_bitmap_) {  // written column by column: rows again
            const auto w = static_cast<std::size_t>(header_.bitmap_width);
            const auto h = static_cast<std::size_t>(header_.bitmap_height);
            std::vector<std::uint8_t> rows(w * h);
            for (std::size_t col = 0; col < w; ++col)
              for (std::size_t row = 0; row < h; ++row)
                rows[row * w + col] = header_.bitmap[col * h + row];
            header_.bitmap = std::move(rows);
          }
        } else if (!playground_ || separators_ >= 3) {
          throw LogError(where + ": a '---' line where none belongs");
        }
        ++separators_;
        in_objects_ = separators_ >= 2;
        break;
      }
      if (playground_ && separators_ >= 3)
        throw LogError(where + ": expected a cycle 'status&&robots&&objects'");
      auto fields = deeco::split_unescaped(line, ",");
      if (playground_ && !in_objects_ && fields.size() != 2)
        throw LogError(where + ": expected a robot 'class,size' (or '---')");
      if (playground_ && in_objects_) fields.resize(std::min<std::size_t>(fields.size(), 1));
      if (fields.size() == 2 && !(playground_ && in_objects_)) {
        // Robot: kind,size (size: the radius in the playground's grammar, the diameter in the
        // document's).
        if (in_objects_) throw LogError(where + ": a robot line after the objects section");
        double size = 0;
        if (!deeco::parse_number(fields[1], size)) {
          throw LogError(where + ": expected 'kind,size' with a number size");
        }
        std::string name = deeco::unescape(fields[0]);
        std::size_t k = 0;
        while (k < header_.kinds.size() &&
               !(header_.kinds[k].name == name && field_sizes_[k] == size)) {
          ++k;
        }
        if (k == header_.kinds.size()) {
          if (k > 0xffff) throw LogError(where + ": more than 65536 robot kinds");
          header_.kinds.push_back({name, (playground_ ? size : size / 2) * metres_per_unit_, 0, 0});
          field_sizes_.push_back(size);
        }
        const auto id = static_cast<EntityId>(header_.robots.size());
        header_.robots.push_back(
            {id, static_cast<std::uint16_t>(k), "robot " + std::to_string(id)});
        robot_kind_.push_back(static_cast<std::uint16_t>(k));
      } else if (fields.size() == 1) {
        // Object: class (in the playground's grammar the whole line: a class name).
        in_objects_ = true;
        std::string name = deeco::unescape(playground_ ? std::string_view(line) : fields[0]);
        std::size_t c = 0;
        while (c < header_.object_classes.size() && header_.object_classes[c].name != name) ++c;
        if (c == header_.object_classes.size()) {
          if (c > 0xffff) throw LogError(where + ": more than 65536 object classes");
          header_.object_classes.push_back({name});
        }
        header_.objects.push_back({kNoEntity, static_cast<std::uint16_t>(c),
                                   "object " + std::to_string(header_.objects.size())});
        object_class_.push_back(static_cast<std::uint16_t>(c));
      } else {
        throw LogError(where + ": expected a robot 'kind,size', an object 'class' or a cycle");
      }
    }
  }
  ++section_line_;
}

LogFrame DeecoLogReader::read_frame(std::size_t index) {
  const std::string where =
      "log '" + path_ + "', line " + std::to_string(header_lines_ + index + 1);
  if (index >= frame_count()) {
    throw LogError("log '" + path_ + "': no frame " + std::to_string(index) + " (the log has " +
                   std::to_string(frame_count()) + ")");
  }
  const std::uint64_t start = line_starts_[index];
  const std::uint64_t end = line_starts_[index + 1] - 1;
  line_.resize(static_cast<std::size_t>(end - start));
  if (!read_exact_at(file_.get(), line_.data(), line_.size(), start, path_)) {
    throw LogError(where + ": the file is shorter than when it was opened");
  }
  std::string_view text = line_;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);

  auto parts = deeco::split_unescaped(text, "&&");
  if (parts.size() != 3) throw LogError(where + ": expected 'status&&robots&&objects'");
  auto items = [](std::string_view list) {
    auto v = deeco::split_unescaped(list, ";;");
    if (v.back().empty()) v.pop_back();  // every item ends with ";;"
    return v;
  };
  auto robots = items(parts[1]);
  auto objects = items(parts[2]);
  const std::size_t n = header_.robots.size();
  const std::size_t m = header_.objects.size();
  if (robots.size() != n || objects.size() != m) {
    throw LogError(where + ": " + std::to_string(robots.size()) + " robots and " +
                   std::to_string(objects.size()) + " objects where the header lists " +
                   std::to_string(n) + " and " + std::to_string(m));
  }

  LogFrame f;
  f.tick = static_cast<Tick>(index);
  f.time_ns = 0;
  f.status = deeco::unescape(parts[0]);
  f.tags.emplace_back();
  std::unordered_map<std::string, std::uint32_t> tag_index{{"", 0}};
  auto tag = [&](std::string_view escaped) {
    auto [it, added] =
        tag_index.try_emplace(deeco::unescape(escaped), static_cast<std::uint32_t>(f.tags.size()));
    if (added) f.tags.push_back(it->first);
    return it->second;
  };
  const double half_w = header_.arena_width_m / 2, half_h = header_.arena_height_m / 2;
  const double unit = metres_per_unit_;
  auto number = [&](std::string_view token, const char* name) {
    double v = 0;
    if (!deeco::parse_number(token, v)) {
      throw LogError(where + ": " + name + " '" + std::string(token) + "' is not a number");
    }
    return v;
  };

  std::vector<EntityId> id(n);
  std::vector<double> x(n), y(n), theta(n);
  std::vector<std::uint32_t> tags(n);
  const char* robot_separator = playground_ ? ",," : ",";
  for (std::size_t i = 0; i < n; ++i) {
    auto fields = deeco::split_unescaped(robots[i], robot_separator);
    if (fields.size() != 4) {
      throw LogError(where + ": robot " + std::to_string(i) + " is not " +
                     (playground_ ? "'x,,y,,angle,,tag'" : "'x,y,angle,tag'"));
    }
    id[i] = static_cast<EntityId>(i);
    x[i] = number(fields[0], "x") * unit - half_w;
    y[i] = half_h - number(fields[1], "y") * unit;
    const double angle = number(fields[2], "angle");
    theta[i] = playground_ ? deeco::FieldTransform::world_theta(angle) : 0.0 - angle;
    tags[i] = tag(fields[3]);
  }
  f.set_robot("id", header_, id);
  f.set_robot("kind", header_, robot_kind_);
  f.set_robot("x", header_, x);
  f.set_robot("y", header_, y);
  f.set_robot("theta", header_, theta);
  f.set_robot("tag", header_, tags);

  id.resize(m);
  x.resize(m);
  y.resize(m);
  std::vector<double> size(m);
  tags.resize(m);
  for (std::size_t j = 0; j < m; ++j) {
    auto fields = deeco::split_unescaped(objects[j], ",,");
    if (fields.size() != 4) {
      throw LogError(where + ": object " + std::to_string(j) + " is not 'x,,y,,size,,tag'");
    }
    id[j] = static_cast<EntityId>(n + j);
    x[j] = number(fields[0], "x") * unit - half_w;
    y[j] = half_h - number(fields[1], "y") * unit;
    size[j] = number(fields[2], "size") * unit * (playground_ ? 2 : 1);  // (a half width)
    tags[j] = tag(fields[3]);
  }
  f.set_object("id", header_, id);
  f.set_object("class", header_, object_class_);
  f.set_object("x", header_, x);
  f.set_object("y", header_, y);
  f.set_object("size", header_, size);
  f.set_object("tag", header_, tags);
  return f;
}

}  // namespace fleetsim::log
