// The DEECo playground text log writer, in the grammar the playground program writes and
// reads (docs/log-format.md, section 2).
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "log/byte_io.hpp"
#include "log/deeco_text.hpp"
#include "log/log_writer.hpp"

namespace fleetsim::log {

namespace {

/// Writes the DEECo text log. Single-threaded (the caller's): each cycle line is formatted
/// into a reused buffer and written with one write() call, so a killed run leaves whole lines.
class DeecoLogWriter final : public LogWriter {
 public:
  DeecoLogWriter(std::string path, LogOpen open)
      : path_(std::move(path)),
        file_(open == LogOpen::kContinue ? open_for_continuing(path_) : open_for_writing(path_)) {}
  ~DeecoLogWriter() override {
    try {
      finish();
    } catch (...) {
      // Destructors do not throw; finish() reports errors to callers who call it.
    }
  }

  void begin(const LogHeader& header) override { start(header, nullptr); }
  void write(const LogFrameView& frame) override;
  void finish() override;
  LogMark mark() override {
    if (!begun_ || finished_) throw LogError("log '" + path_ + "': mark() outside a run");
    return {written_.size(), written_.value(), {}};
  }
  void resume(const LogHeader& header, const LogMark& mark) override { start(header, &mark); }

 private:
  /// begin() (mark null: writes the sections before the cycles) or resume() (cuts the file back
  /// to the mark instead; the sections are in it).
  void start(const LogHeader& header, const LogMark* mark);
  void put(const void* data, std::size_t n) {
    write_all(file_.get(), data, n, path_);
    written_.bytes(data, n);
  }
  /// Maps the frame's entity order onto the header's (the DEECo log is positional). Returns
  /// the frame index of each header entity; throws if the sets differ.
  const std::vector<std::size_t>* order_of(std::span<const EntityId> ids,
                                           const std::vector<EntityId>& header_ids,
                                           const std::unordered_map<EntityId, std::size_t>& pos,
                                           std::vector<std::size_t>& order, const char* kind,
                                           Tick tick) const;

  std::string path_;
  FileHandle file_;
  bool begun_ = false;
  bool finished_ = false;
  LogHeader header_columns_;            ///< only the column lists, for check_frame()
  std::vector<std::size_t> robot_at_;   ///< positions of id, x, y, theta, tag
  std::vector<std::size_t> object_at_;  ///< positions of id, x, y, size, tag
  deeco::FieldTransform field_;
  std::vector<EntityId> robot_ids_, object_ids_;
  std::unordered_map<EntityId, std::size_t> robot_pos_, object_pos_;
  std::vector<std::size_t> robot_order_, object_order_;
  std::string line_;
  StreamHasher written_;  ///< every byte in the file so far (for checkpoints' marks)
};

void DeecoLogWriter::start(const LogHeader& h, const LogMark* mark) {
  if (begun_) throw LogError("log '" + path_ + "': begin() called twice");
  if (!file_.is_open()) throw LogError("log '" + path_ + "': begin() after finish()");
  try {
    check_columns(h);
  } catch (const LogError& e) {
    throw LogError("log '" + path_ + "': " + e.what());
  }
  begun_ = true;
  header_columns_.robot_columns = h.robot_columns;
  header_columns_.object_columns = h.object_columns;
  auto at = [](const std::vector<ColumnDesc>& columns, const char* name) {
    return static_cast<std::size_t>(column_index(columns, name));  // present: checked above
  };
  for (const char* name : {"id", "x", "y", "theta", "tag"})
    robot_at_.push_back(at(h.robot_columns, name));
  for (const char* name : {"id", "x", "y", "size", "tag"})
    object_at_.push_back(at(h.object_columns, name));
  field_ = deeco::FieldTransform::of(h);

  std::string text;
  // Bitmap section. The playground writes the encoding column by column (x outer, y inner).
  if (h.bitmap_width > 0 && h.bitmap_height > 0) {
    text += std::to_string(h.bitmap_width) + "\n" + std::to_string(h.bitmap_height) + "\n";
    const auto w = static_cast<std::size_t>(h.bitmap_width);
    const auto ht = static_cast<std::size_t>(h.bitmap_height);
    if (h.bitmap.size() != w * ht) {
      throw LogError("log '" + path_ + "': the bitmap has " + std::to_string(h.bitmap.size()) +
                     " pixels instead of width x height");
    }
    for (std::size_t col = 0; col < w; ++col)
      for (std::size_t row = 0; row < ht; ++row)
        text.push_back(h.bitmap[row * w + col] != 0 ? '1' : '0');
    text.push_back('\n');
  } else {
    // The field size is integral: the arena in units of 10^-k metres.
    text += "null\n" + std::to_string(field_.width_units) + "\n" +
            std::to_string(field_.height_units) + "\n";
  }
  text += "---\n";
  // Robots section: kind,size (the radius in field units).
  for (const LogEntity& r : h.robots) {
    if (r.type_index >= h.kinds.size()) {
      throw LogError("log '" + path_ + "': robot '" + r.name + "' has no kind");
    }
    const LogKind& c = h.kinds[r.type_index];
    deeco::append_escaped(text, c.name);
    text.push_back(',');
    deeco::append_java_number(text, field_.field_length(c.radius_m));
    text.push_back('\n');
    robot_pos_[r.id] = robot_ids_.size();
    robot_ids_.push_back(r.id);
  }
  text += "---\n";
  // Objects section: class.
  for (const LogEntity& o : h.objects) {
    if (o.type_index >= h.object_classes.size()) {
      throw LogError("log '" + path_ + "': object '" + o.name + "' has no class");
    }
    deeco::append_escaped(text, h.object_classes[o.type_index].name);
    text.push_back('\n');
    object_pos_[o.id] = object_ids_.size();
    object_ids_.push_back(o.id);
  }
  text += "---\n";
  if (mark)
    written_ = cut_to_mark(file_.get(), *mark, path_);
  else
    put(text.data(), text.size());
}

const std::vector<std::size_t>* DeecoLogWriter::order_of(
    std::span<const EntityId> ids, const std::vector<EntityId>& header_ids,
    const std::unordered_map<EntityId, std::size_t>& pos, std::vector<std::size_t>& order,
    const char* kind, Tick tick) const {
  if (std::equal(ids.begin(), ids.end(), header_ids.begin(), header_ids.end())) return nullptr;
  auto fail = [&] {
    throw LogError("log '" + path_ + "', tick " + std::to_string(tick) + ": the set of " + kind +
                   "s differs from the start of the run; the DEECo log needs a fixed " + "set of " +
                   kind + "s; use the frame log for runs that add or remove " + "entities");
  };
  if (ids.size() != header_ids.size()) fail();
  order.assign(header_ids.size(), header_ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto it = pos.find(ids[i]);
    if (it == pos.end() || order[it->second] != header_ids.size()) fail();
    order[it->second] = i;
  }
  return &order;
}

void DeecoLogWriter::write(const LogFrameView& f) {
  if (!begun_) throw LogError("log '" + path_ + "': write() before begin()");
  if (finished_) throw LogError("log '" + path_ + "': write() after finish()");
  try {
    // Tag 0 is "" even when the frame's table is empty.
    check_frame(header_columns_, f, std::max<std::size_t>(f.tags.size(), 1));
  } catch (const LogError& e) {
    throw LogError("log '" + path_ + "': " + e.what());
  }
  const std::size_t n = f.robot_count;
  const std::size_t m = f.object_count;
  const auto robot_id = column_as<EntityId>(f.robot_columns[robot_at_[0]]);
  const auto robot_x = column_as<double>(f.robot_columns[robot_at_[1]]);
  const auto robot_y = column_as<double>(f.robot_columns[robot_at_[2]]);
  const auto robot_theta = column_as<double>(f.robot_columns[robot_at_[3]]);
  const auto robot_tag = column_as<std::uint32_t>(f.robot_columns[robot_at_[4]]);
  const auto object_id = column_as<EntityId>(f.object_columns[object_at_[0]]);
  const auto object_x = column_as<double>(f.object_columns[object_at_[1]]);
  const auto object_y = column_as<double>(f.object_columns[object_at_[2]]);
  const auto object_size = column_as<double>(f.object_columns[object_at_[3]]);
  const auto object_tag = column_as<std::uint32_t>(f.object_columns[object_at_[4]]);
  const auto* robots = order_of(robot_id, robot_ids_, robot_pos_, robot_order_, "robot", f.tick);
  const auto* objects =
      order_of(object_id, object_ids_, object_pos_, object_order_, "object", f.tick);
  auto tag = [&](std::uint32_t t) -> std::string_view {
    return t < f.tags.size() ? std::string_view(f.tags[t]) : std::string_view();
  };

  // status&&x,,y,,angle,,tag;;...&&x,,y,,size,,tag;;... (an object's size: half its width)
  line_.clear();
  deeco::append_escaped(line_, f.status);
  line_ += "&&";
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t i = robots ? (*robots)[k] : k;
    deeco::append_java_number(line_, field_.field_x(robot_x[i]));
    line_ += ",,";
    deeco::append_java_number(line_, field_.field_y(robot_y[i]));
    line_ += ",,";
    deeco::append_java_number(line_, deeco::FieldTransform::playground_angle(robot_theta[i]));
    line_ += ",,";
    deeco::append_escaped(line_, tag(robot_tag[i]));
    line_ += ";;";
  }
  line_ += "&&";
  for (std::size_t k = 0; k < m; ++k) {
    std::size_t i = objects ? (*objects)[k] : k;
    deeco::append_java_number(line_, field_.field_x(object_x[i]));
    line_ += ",,";
    deeco::append_java_number(line_, field_.field_y(object_y[i]));
    line_ += ",,";
    deeco::append_java_number(line_, field_.field_length(object_size[i]) / 2);
    line_ += ",,";
    deeco::append_escaped(line_, tag(object_tag[i]));
    line_ += ";;";
  }
  line_.push_back('\n');
  put(line_.data(), line_.size());
}

void DeecoLogWriter::finish() {
  if (finished_) return;
  finished_ = true;
  if (!file_.close()) throw LogError("cannot close log '" + path_ + "'");
}

}  // namespace

std::unique_ptr<LogWriter> make_deeco_log_writer(const std::string& path, LogOpen open) {
  return std::make_unique<DeecoLogWriter>(path, open);
}

}  // namespace fleetsim::log
