#include "world/world.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/hash.hpp"

namespace fleetsim {

double WorldModel::max_radius_m() const {
  double r = 0;
  for (const auto& k : kinds) r = std::max(r, k.radius_m);
  return r;
}

namespace {
bool inside_convex(const std::array<Vec2, 4>& c, Vec2 p) {
  for (int i = 0; i < 4; ++i)
    if (cross(c[(i + 1) % 4] - c[i], p - c[i]) < 0) return false;
  return true;
}
}  // namespace

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

int WorldModel::engine_at(Vec2 p) const {
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const auto& r = engines[e];
    if (p.x >= r.min.x && p.x < r.max.x && p.y >= r.min.y && p.y < r.max.y)
      return static_cast<int>(e);
  }
  // Outside every region (on the arena's outer edge or beyond): the nearest region.
  int best = 0;
  double best_d = 1e300;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const auto& r = engines[e];
    double dx = std::max({r.min.x - p.x, 0.0, p.x - r.max.x});
    double dy = std::max({r.min.y - p.y, 0.0, p.y - r.max.y});
    double d = dx * dx + dy * dy;
    if (d < best_d) {
      best_d = d;
      best = static_cast<int>(e);
    }
  }
  return best;
}

std::uint32_t TagTable::intern(const std::string& s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  auto i = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(s);
  index_.emplace(s, i);
  return i;
}

EntityId WorldState::add_robot(std::uint16_t kind, std::uint16_t controller, Vec2 p,
                               double heading, std::uint32_t tag, const std::string& name) {
  EntityId id = next_id++;
  robot_id.push_back(id);
  robot_kind.push_back(kind);
  robot_controller.push_back(controller);
  robot_engine.push_back(0);
  x.push_back(p.x);
  y.push_back(p.y);
  theta.push_back(wrap_angle(heading));
  cmd_left.push_back(0);
  cmd_right.push_back(0);
  proximity.insert(proximity.end(), kProximityCount, 0.0f);
  contact_angle.insert(contact_angle.end(), kMaxContacts, 0.0f);
  contact_count.push_back(0);
  realization.push_back(1.0f);
  robot_tag.push_back(tag);
  led.push_back(Color{0, 0, 0, 255});
  robot_name.push_back(name);
  index_of.resize(next_id, kNoIndex);
  is_object.resize(next_id, 0);
  index_of[id] = static_cast<std::uint32_t>(robot_id.size() - 1);
  return id;
}

EntityId WorldState::add_object(std::uint16_t cls, Vec2 p, double size, std::uint32_t tag,
                                const std::string& name) {
  EntityId id = next_id++;
  object_id.push_back(id);
  object_class.push_back(cls);
  object_x.push_back(p.x);
  object_y.push_back(p.y);
  object_size.push_back(size);
  object_tag.push_back(tag);
  object_name.push_back(name);
  index_of.resize(next_id, kNoIndex);
  is_object.resize(next_id, 0);
  index_of[id] = static_cast<std::uint32_t>(object_id.size() - 1);
  is_object[id] = 1;
  return id;
}

std::uint32_t WorldState::robot_index(EntityId id) const {
  if (id >= index_of.size() || is_object[id]) return kNoIndex;
  return index_of[id];
}

std::uint32_t WorldState::object_index(EntityId id) const {
  if (id >= index_of.size() || !is_object[id]) return kNoIndex;
  return index_of[id];
}

namespace {
template <class V>
void erase_rows(V& v, std::size_t at, std::size_t width) {
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(at * width),
          v.begin() + static_cast<std::ptrdiff_t>((at + 1) * width));
}
}  // namespace

void WorldState::reindex_robots(std::size_t from) {
  for (std::size_t r = from; r < robot_id.size(); ++r)
    index_of[robot_id[r]] = static_cast<std::uint32_t>(r);
}

void WorldState::reindex_objects(std::size_t from) {
  for (std::size_t o = from; o < object_id.size(); ++o)
    index_of[object_id[o]] = static_cast<std::uint32_t>(o);
}

void WorldState::remove_robot(EntityId id) {
  std::uint32_t r = robot_index(id);
  if (r == kNoIndex) return;
  for_each_robot_column(*this, [&](auto& col, std::size_t width) { erase_rows(col, r, width); });
  index_of[id] = kNoIndex;
  reindex_robots(r);
}

void WorldState::remove_object(EntityId id) {
  std::uint32_t o = object_index(id);
  if (o == kNoIndex) return;
  for_each_object_column(*this, [&](auto& col, std::size_t width) { erase_rows(col, o, width); });
  index_of[id] = kNoIndex;
  reindex_objects(o);
}

std::uint64_t WorldState::hash() const {
  Hasher h;
  h.word(static_cast<std::uint64_t>(tick));
  h.text(status);
  auto col = [&](const auto& v, std::size_t) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    h.word(v.size());
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (!v.empty()) h.bytes(v.data(), v.size() * sizeof(T));
    } else {
      for (const auto& item : v) h.text(item);
    }
  };
  for_each_robot_column(*this, col);
  for_each_object_column(*this, col);
  for (const auto& t : tags.strings()) h.text(t);
  return h.value();
}

}  // namespace fleetsim
