#include "world/world.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/hash.hpp"

namespace fleetsim {

double WorldModel::max_radius_m() const {
  double r = 0;
  for (const auto& k : kinds)
    if (k.in_run) r = std::max(r, k.radius_m);
  return r;
}

double WorldModel::tallest_ground_body_m() const {
  double h = 0;
  for (const auto& k : kinds)
    if (k.in_run && !k.flies) h = std::max(h, k.height_m);
  return h;
}

namespace {
bool inside_convex(const std::array<Vec2, 4>& c, Vec2 p) {
  for (int i = 0; i < 4; ++i)
    if (cross(c[(i + 1) % 4] - c[i], p - c[i]) < 0) return false;
  return true;
}
}  // namespace

Color Floor::color_at(Vec2 p) const {
  if (width <= 0) return color;
  // (As ARGoS: the offset times pixels per metre.)
  const double fx = (p.x - min.x) * (width / (max.x - min.x));
  const double fy = (p.y - min.y) * (height / (max.y - min.y));
  if (!(fx >= 0 && fy >= 0 && fx < width && fy < height)) return color;
  const auto i = static_cast<std::size_t>(fx);
  const auto j = static_cast<std::size_t>(height - 1) - static_cast<std::size_t>(fy);
  return pixels[j * static_cast<std::size_t>(width) + i];
}

bool WorldModel::inside_obstacle(Vec2 p) const {
  if (bitmap_width > 0) {
    double fx = (p.x - bitmap_top_left.x) / bitmap_resolution_m;
    double fy = (bitmap_top_left.y - p.y) / bitmap_resolution_m;
    if (fx >= 0 && fy >= 0 && fx < bitmap_width && fy < bitmap_height) {
      auto i = static_cast<std::size_t>(fx);
      auto j = static_cast<std::size_t>(fy);
      if (bitmap[j * static_cast<std::size_t>(bitmap_width) + i]) return true;
    }
  }
  for (const auto& b : boxes)
    if (inside_convex(b, p)) return true;
  return false;
}

int WorldModel::engine_at(Vec2 p, std::uint16_t k) const {
  const std::uint8_t type = kinds[k].engine_type;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const auto& r = engines[e];
    if (r.type_index == type && p.x >= r.min.x && p.x < r.max.x && p.y >= r.min.y && p.y < r.max.y)
      return static_cast<int>(e);
  }
  // Outside every region (on the arena's outer edge or beyond): the nearest region.
  int best = -1;
  double best_d = 1e300;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const auto& r = engines[e];
    if (r.type_index != type) continue;
    double dx = std::max({r.min.x - p.x, 0.0, p.x - r.max.x});
    double dy = std::max({r.min.y - p.y, 0.0, p.y - r.max.y});
    double d = dx * dx + dy * dy;
    if (best < 0 || d < best_d) {
      best_d = d;
      best = static_cast<int>(e);
    }
  }
  return best < 0 ? 0 : best;
}

std::uint32_t TagTable::intern(const std::string& s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  auto i = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(s);
  index_.emplace(s, i);
  return i;
}

const std::vector<ColumnDesc>& body_columns() {
  // In the order of the body:: handles. Logged: what the viewer and the DEECo log need.
  static const std::vector<ColumnDesc> columns = {
      {"id", ColumnType::kU32, 1, true, true, "entity id", "body"},
      {"kind", ColumnType::kU16, 1, true, true, "index of the robot's kind in the header", "body"},
      {"controller", ColumnType::kU16, 1, true, false, "index of the controller declaration",
       "body"},
      {"engine", ColumnType::kU8, 1, true, false, "physics engine (region) owning the body",
       "body"},
      {"x", ColumnType::kF64, 1, true, true, "position, metres", "body"},
      {"y", ColumnType::kF64, 1, true, true, "position, metres", "body"},
      {"theta", ColumnType::kF64, 1, true, true, "heading, radians CCW from +x", "body"},
      {"speed_cmd", ColumnType::kF64, 1, true, false, "commanded linear speed, m/s", "body", false},
      {"turn_cmd", ColumnType::kF64, 1, true, false, "commanded turn rate, rad/s", "body", false},
      {"realization", ColumnType::kF32, 1, true, false,
       "fraction of the last commanded motion done (collision sensor)", "body", false},
      {"contact_angle", ColumnType::kF32, kMaxContacts, true, false,
       "contact angles at the end of the last tick, radians from the heading", "body", false},
      {"contact_count", ColumnType::kU8, 1, true, false, "number of contacts", "body"},
      {"tag", ColumnType::kTag, 1, true, true, "the robot's tag", "body"},
      {"name", ColumnType::kString, 1, true, false, "the user's id string", "body"},
  };
  return columns;
}

const std::vector<ColumnDesc>& object_columns() {
  static const std::vector<ColumnDesc> columns = {
      {"id", ColumnType::kU32, 1, true, true, "entity id", "object"},
      {"class", ColumnType::kU16, 1, true, true, "index of the object's class", "object"},
      {"x", ColumnType::kF64, 1, true, true, "position, metres", "object"},
      {"y", ColumnType::kF64, 1, true, true, "position, metres", "object"},
      {"size", ColumnType::kF64, 1, true, true, "size, metres", "object"},
      {"tag", ColumnType::kTag, 1, true, true, "the object's tag", "object"},
      {"name", ColumnType::kString, 1, true, false, "the user's id string", "object"},
  };
  return columns;
}

WorldState::WorldState() {
  for (const auto& c : body_columns()) robots.add(c);
  for (const auto& c : object_columns()) objects.add(c);
}

EntityId WorldState::add_robot(std::uint16_t kind, std::uint16_t controller, Vec2 p, double heading,
                               std::uint32_t tag, const std::string& name) {
  const EntityId id = next_id;
  add_robot_at(id, kind, controller, p, heading, tag, name);
  return id;
}

void WorldState::add_robot_at(EntityId id, std::uint16_t kind, std::uint16_t controller, Vec2 p,
                              double heading, std::uint32_t tag, const std::string& name) {
  next_id = std::max(next_id, id + 1);
  const std::size_t r = robots.append_row();
  robot_id()[r] = id;
  robot_kind()[r] = kind;
  robot_controller()[r] = controller;
  x()[r] = p.x;
  y()[r] = p.y;
  theta()[r] = wrap_angle(heading);
  realization()[r] = 1.0f;
  robot_tag()[r] = tag;
  robot_name().set(r, name);
  index_of.set(id, static_cast<std::uint32_t>(r));
}

void WorldState::reserve_robots(std::size_t more) {
  robots.reserve(robots.rows() + more);
  index_of.reserve_ids(next_id + more);
}

EntityId WorldState::add_object(std::uint16_t cls, Vec2 p, double size, std::uint32_t tag,
                                const std::string& name) {
  EntityId id = next_id++;
  const std::size_t o = objects.append_row();
  object_id()[o] = id;
  object_class()[o] = cls;
  object_x()[o] = p.x;
  object_y()[o] = p.y;
  object_size()[o] = size;
  object_tag()[o] = tag;
  object_name().set(o, name);
  index_of.set(id, static_cast<std::uint32_t>(o) | kObjectRow);
  return id;
}

std::uint32_t WorldState::robot_index(EntityId id) const {
  const std::uint32_t r = index_of.get(id);
  return r & kObjectRow ? kNoIndex : r;
}

std::uint32_t WorldState::object_index(EntityId id) const {
  const std::uint32_t o = index_of.get(id);
  return o == kNoIndex || !(o & kObjectRow) ? kNoIndex : o & ~kObjectRow;
}

void WorldState::reindex_robots(std::size_t from) {
  auto ids = robot_id();
  for (std::size_t r = from; r < ids.size(); ++r)
    index_of.set(ids[r], static_cast<std::uint32_t>(r));
}

void WorldState::reindex_objects(std::size_t from) {
  auto ids = object_id();
  for (std::size_t o = from; o < ids.size(); ++o)
    index_of.set(ids[o], static_cast<std::uint32_t>(o) | kObjectRow);
}

void WorldState::remove_robot(EntityId id) {
  std::uint32_t r = robot_index(id);
  if (r == kNoIndex) return;
  robots.erase_row(r);
  index_of.erase(id);
  reindex_robots(r);
}

void WorldState::retain_robots(std::span<const std::uint8_t> keep) {
  auto ids = robot_id();
  for (std::size_t r = 0; r < ids.size(); ++r)
    if (!keep[r]) index_of.erase(ids[r]);
  robots.retain(keep);
  reindex_robots(0);
}

std::vector<std::uint32_t> WorldState::insert_robots(std::span<const EntityId> ids) {
  const std::size_t first = robot_count();
  if (!ids.empty() && first > 0 && ids.front() < robot_id()[first - 1]) ids_in_order = false;
  robots.resize_rows(first + ids.size());
  auto held = robot_id();
  std::vector<std::uint32_t> rows(ids.size());
  for (std::size_t j = 0; j < ids.size(); ++j) {
    rows[j] = static_cast<std::uint32_t>(first + j);
    held[rows[j]] = ids[j];
  }
  reindex_robots(first);
  return rows;
}

void WorldState::remove_object(EntityId id) {
  std::uint32_t o = object_index(id);
  if (o == kNoIndex) return;
  objects.erase_row(o);
  index_of.erase(id);
  reindex_objects(o);
}

std::uint64_t WorldState::hash() const {
  return hash_with(robot_count(), robot_digests());
}

std::vector<std::uint64_t> WorldState::robot_digests(std::span<const std::uint8_t> take) const {
  std::vector<std::uint64_t> sums(robots.schema().size(), 0);
  robots.add_row_digests(robot_id(), take, sums);
  return sums;
}

std::uint64_t WorldState::hash_with(std::size_t robot_rows,
                                    std::span<const std::uint64_t> digests) const {
  Hasher h;
  h.word(static_cast<std::uint64_t>(tick));
  h.text(status);
  const auto& schema = robots.schema();
  for (std::size_t c = 0; c < schema.size(); ++c) {
    if (!schema[c].hashed) continue;
    h.word(robot_rows * schema[c].width);
    h.word(digests[c]);
  }
  objects.hash_into(h);
  for (const auto& t : tags.strings()) h.text(t);
  return h.value();
}

}  // namespace fleetsim
