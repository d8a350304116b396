// Typed payloads (include/fleetsim/attributes.hpp): attributes at fixed offsets, little-endian.
#include "fleetsim/attributes.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/diagnostics.hpp"

namespace fleetsim {

// The payload is the host's bytes, copied: the wire format is little-endian.
static_assert(std::endian::native == std::endian::little,
              "typed payloads are little-endian; a big-endian host needs byte swaps here");

namespace {

template <typename T>
T load(const std::vector<std::uint8_t>& p, std::size_t offset) {
  T v;
  std::memcpy(&v, p.data() + offset, sizeof v);
  return v;
}

template <typename T>
void store(std::vector<std::uint8_t>& p, std::size_t offset, T v) {
  std::memcpy(p.data() + offset, &v, sizeof v);
}

// The range of an integer type, as doubles (for the checks of set and the modifiers' clamp).
std::pair<double, double> integer_range(AttributeType t) {
  switch (t) {
    case AttributeType::kI64:
      return {-0x1p63, 0x1p63};
    case AttributeType::kI32:
      return {-0x1p31, 0x1p31 - 1};
    case AttributeType::kU64:
      return {0, 0x1p64};
    case AttributeType::kU32:
      return {0, 0x1p32 - 1};
    case AttributeType::kU8:
      return {0, 255};
    default:
      return {0, 1};
  }
}

bool is_float(AttributeType t) {
  return t == AttributeType::kF64 || t == AttributeType::kF32;
}

// Stores an integer value already known to be in range.
void store_integer(std::vector<std::uint8_t>& p, const ClassLayout::Attribute& a, std::int64_t s,
                   std::uint64_t u, bool is_signed) {
  switch (a.type) {
    case AttributeType::kI64:
      store(p, a.offset, is_signed ? s : static_cast<std::int64_t>(u));
      break;
    case AttributeType::kI32:
      store(p, a.offset, static_cast<std::int32_t>(is_signed ? s : static_cast<std::int64_t>(u)));
      break;
    case AttributeType::kU64:
      store(p, a.offset, is_signed ? static_cast<std::uint64_t>(s) : u);
      break;
    case AttributeType::kU32:
      store(p, a.offset, static_cast<std::uint32_t>(is_signed ? static_cast<std::uint64_t>(s) : u));
      break;
    case AttributeType::kU8:
    case AttributeType::kBool:
      store(p, a.offset, static_cast<std::uint8_t>(is_signed ? static_cast<std::uint64_t>(s) : u));
      break;
    default:
      break;
  }
}

}  // namespace

const ClassLayout::Attribute* ClassLayout::find(std::string_view attribute) const {
  for (const auto& a : attributes)
    if (a.name == attribute) return &a;
  return nullptr;
}

void ClassLayout::add(std::string attribute, AttributeType type) {
  attributes.push_back({std::move(attribute), type, size});
  size += type_info(type).size;
}

std::string ClassLayout::layout_problem(const std::vector<std::uint8_t>& payload) const {
  if (payload.size() != size)
    return fmt::format(
        "a payload of {} bytes is not a value of class '{}' ({} bytes: {} "
        "attribute{})",
        payload.size(), name, size, attributes.size(), attributes.size() == 1 ? "" : "s");
  for (const auto& a : attributes)
    if (a.type == AttributeType::kBool && payload[a.offset] > 1)
      return fmt::format("attribute '{}' of class '{}' is bool and holds byte {} (expected 0 or 1)",
                         a.name, name, payload[a.offset]);
  return "";
}

double ClassLayout::read(const std::vector<std::uint8_t>& p, const Attribute& a) const {
  switch (a.type) {
    case AttributeType::kF64:
      return load<double>(p, a.offset);
    case AttributeType::kF32:
      return load<float>(p, a.offset);
    case AttributeType::kI64:
      return static_cast<double>(load<std::int64_t>(p, a.offset));
    case AttributeType::kI32:
      return load<std::int32_t>(p, a.offset);
    case AttributeType::kU64:
      return static_cast<double>(load<std::uint64_t>(p, a.offset));
    case AttributeType::kU32:
      return load<std::uint32_t>(p, a.offset);
    case AttributeType::kU8:
    case AttributeType::kBool:
      return load<std::uint8_t>(p, a.offset);
  }
  return 0;
}

void ClassLayout::write(std::vector<std::uint8_t>& p, const Attribute& a, double value) const {
  if (a.type == AttributeType::kF64) return store(p, a.offset, value);
  if (a.type == AttributeType::kF32) return store(p, a.offset, static_cast<float>(value));
  // Integers: nearest, saturated (NaN goes to 0); the top of the 64-bit ranges is exclusive.
  const auto [lo, hi] = integer_range(a.type);
  double r = std::isnan(value) ? 0.0 : std::nearbyint(value);
  const bool wide = a.type == AttributeType::kI64 || a.type == AttributeType::kU64;
  if (r < lo) r = lo;
  if (wide ? r >= hi : r > hi) {
    if (a.type == AttributeType::kI64)
      return store(p, a.offset, std::numeric_limits<std::int64_t>::max());
    if (a.type == AttributeType::kU64)
      return store(p, a.offset, std::numeric_limits<std::uint64_t>::max());
    r = hi;
  }
  if (a.type == AttributeType::kU64)
    store_integer(p, a, 0, static_cast<std::uint64_t>(r), false);
  else
    store_integer(p, a, static_cast<std::int64_t>(r), 0, true);
}

AttributeSet::AttributeSet(std::shared_ptr<const ClassLayout> cls, std::string context)
    : class_(std::move(cls)), bytes_(class_->size, 0), context_(std::move(context)) {}

AttributeSet::AttributeSet(std::shared_ptr<const ClassLayout> cls,
                           std::vector<std::uint8_t> payload, std::string context)
    : class_(std::move(cls)), bytes_(std::move(payload)), context_(std::move(context)) {
  const std::string problem = class_->layout_problem(bytes_);
  if (!problem.empty()) fail(problem);
}

void AttributeSet::fail(const std::string& what) const {
  throw FederateError(context_.empty() ? what : context_ + ": " + what);
}

const ClassLayout::Attribute& AttributeSet::attribute(std::string_view name) const {
  if (const auto* a = class_->find(name)) return *a;
  std::vector<std::string> names;
  for (const auto& a : class_->attributes) names.push_back(a.name);
  fail(fmt::format("class '{}' has no attribute '{}' (its attributes: {}){}", class_->name, name,
                   fmt::join(names, ", "), did_you_mean(std::string(name), names)));
}

AttributeSet& AttributeSet::set(std::string_view name, double value) {
  const auto& a = attribute(name);
  if (a.type == AttributeType::kBool)
    fail(fmt::format("attribute '{}' of class '{}' is bool (expected set(\"{}\", true or false))",
                     a.name, class_->name, a.name));
  if (!is_float(a.type)) {
    const auto [lo, hi] = integer_range(a.type);
    const double r = std::nearbyint(value);
    const bool wide = a.type == AttributeType::kI64 || a.type == AttributeType::kU64;
    if (std::isnan(value) || r < lo || (wide ? r >= hi : r > hi))
      fail(fmt::format("{} does not fit attribute '{}' of class '{}' ({})", value, a.name,
                       class_->name, type_info(a.type).name));
  }
  class_->write(bytes_, a, value);
  return *this;
}

AttributeSet& AttributeSet::set_bool(std::string_view name, bool value) {
  const auto& a = attribute(name);
  if (a.type != AttributeType::kBool)
    fail(fmt::format("attribute '{}' of class '{}' is {}, not bool", a.name, class_->name,
                     type_info(a.type).name));
  bytes_[a.offset] = value ? 1 : 0;
  return *this;
}

AttributeSet& AttributeSet::set_signed(std::string_view name, std::int64_t value) {
  const auto& a = attribute(name);
  if (is_float(a.type) || a.type == AttributeType::kBool) {
    if (a.type == AttributeType::kBool) return set_bool(name, value != 0);
    return set(name, static_cast<double>(value));
  }
  const bool fits = a.type == AttributeType::kI64 ||
                    (a.type == AttributeType::kU64 && value >= 0) ||
                    (value >= integer_range(a.type).first &&
                     static_cast<double>(value) <= integer_range(a.type).second);
  if (!fits)
    fail(fmt::format("{} does not fit attribute '{}' of class '{}' ({})", value, a.name,
                     class_->name, type_info(a.type).name));
  store_integer(bytes_, a, value, 0, true);
  return *this;
}

AttributeSet& AttributeSet::set_unsigned(std::string_view name, std::uint64_t value) {
  const auto& a = attribute(name);
  if (a.type == AttributeType::kU64) {
    store_integer(bytes_, a, 0, value, false);
    return *this;
  }
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail(fmt::format("{} does not fit attribute '{}' of class '{}' ({})", value, a.name,
                     class_->name, type_info(a.type).name));
  return set_signed(name, static_cast<std::int64_t>(value));
}

double AttributeSet::get(std::string_view name) const {
  return class_->read(bytes_, attribute(name));
}

std::int64_t AttributeSet::get_signed(std::string_view name) const {
  const auto& a = attribute(name);
  if (is_float(a.type))
    fail(fmt::format("attribute '{}' of class '{}' is {} (read it with get)", a.name, class_->name,
                     type_info(a.type).name));
  if (a.type == AttributeType::kI64) return load<std::int64_t>(bytes_, a.offset);
  if (a.type == AttributeType::kU64) {
    const auto u = load<std::uint64_t>(bytes_, a.offset);
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(
          fmt::format("attribute '{}' of class '{}' holds {}, beyond i64 (read it with "
                      "get_unsigned)",
                      a.name, class_->name, u));
    return static_cast<std::int64_t>(u);
  }
  return static_cast<std::int64_t>(class_->read(bytes_, a));
}

std::uint64_t AttributeSet::get_unsigned(std::string_view name) const {
  const auto& a = attribute(name);
  if (a.type == AttributeType::kU64) return load<std::uint64_t>(bytes_, a.offset);
  const std::int64_t s = get_signed(name);
  if (s < 0)
    fail(fmt::format("attribute '{}' of class '{}' holds {}, below 0 (read it with get_signed)",
                     a.name, class_->name, s));
  return static_cast<std::uint64_t>(s);
}

bool AttributeSet::get_bool(std::string_view name) const {
  const auto& a = attribute(name);
  if (a.type != AttributeType::kBool)
    fail(fmt::format("attribute '{}' of class '{}' is {}, not bool", a.name, class_->name,
                     type_info(a.type).name));
  return bytes_[a.offset] != 0;
}

}  // namespace fleetsim
