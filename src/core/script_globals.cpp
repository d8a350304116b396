#include "core/script_globals.hpp"

#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>

namespace fleetsim {

const char* ScriptValue::type_name() const {
  switch (type) {
    case Type::kInteger:
      return "integer";
    case Type::kString:
      return "string";
    case Type::kBoolean:
      return "boolean";
    case Type::kNumber:
      break;
  }
  return "number";
}

bool ScriptValue::same_kind(const ScriptValue& other) const {
  const auto kind = [](Type t) { return t == Type::kInteger ? Type::kNumber : t; };
  return kind(type) == kind(other.type);
}

std::string ScriptValue::json() const {
  switch (type) {
    case Type::kInteger:
      return std::to_string(integer);
    case Type::kString:
      return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    case Type::kBoolean:
      return boolean ? "true" : "false";
    case Type::kNumber:
      break;
  }
  std::string s = fmt::format("{}", number);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

bool ScriptValue::parse(const std::string& text, ScriptValue& out) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return false;
  if (j.is_boolean()) {
    out = {};
    out.type = Type::kBoolean;
    out.boolean = j.get<bool>();
    return true;
  }
  if (j.is_string()) {
    out = {};
    out.type = Type::kString;
    out.text = j.get<std::string>();
    return true;
  }
  if (j.is_number_integer()) {
    out = {};
    out.type = Type::kInteger;
    out.integer = j.is_number_unsigned() ? static_cast<std::int64_t>(j.get<std::uint64_t>())
                                         : j.get<std::int64_t>();
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t{INT64_MAX}) return false;
    return true;
  }
  if (j.is_number_float() && std::isfinite(j.get<double>())) {
    out = {};
    out.type = Type::kNumber;
    out.number = j.get<double>();
    return true;
  }
  return false;
}

}  // namespace fleetsim
