#include "fleetsim/columns.hpp"

namespace fleetsim {

namespace {
constexpr const char* kTypeNames[] = {"u8", "u16", "u32", "i32", "f32",
                                      "f64", "color", "tag", "string"};
constexpr std::size_t kTypeCount = sizeof(kTypeNames) / sizeof(kTypeNames[0]);
}  // namespace

const char* to_string(ColumnType t) {
  auto i = static_cast<std::size_t>(t);
  return i < kTypeCount ? kTypeNames[i] : "?";
}

std::optional<ColumnType> column_type_from_string(std::string_view name) {
  for (std::size_t i = 0; i < kTypeCount; ++i)
    if (name == kTypeNames[i]) return static_cast<ColumnType>(i);
  return std::nullopt;
}

std::optional<ColumnType> column_type_from_code(std::uint8_t code) {
  if (code >= kTypeCount) return std::nullopt;
  return static_cast<ColumnType>(code);
}

}  // namespace fleetsim
