// Typed data on flows (docs/federation-format.md, "Classes"): a federation file declares object
// classes and interactions with typed attributes; a flow whose ports name a class carries one
// value of it per message, little-endian, the attributes at fixed offsets in declaration order,
// with no padding. AttributeSet builds and reads such a payload by attribute name.
//
//   fleetsim::AttributeSet pose = fed.attributes("pose");  // zeros, the output's class
//   pose.set("x", 1.5).set("y", -2.0).set("id", 7);
//   fed.update("pose", pose);
//   double x = fed.decode(message).get("x");
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fleetsim {

/// A misuse of the federate API (an unknown output or attribute, a time below the granted one,
/// a payload that is not its class's) or a federation that cannot be joined: the message says
/// which, naming the node, the flow and the timestamp where there is one.
class FederateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The value type of an attribute, as written in the file's type="..." (kAttributeTypes).
enum class AttributeType : std::uint8_t { kF64, kF32, kI64, kI32, kU64, kU32, kU8, kBool };

/// One row of the attribute type table: the one list the parser, the docs' table (checked by
/// a test), the encoder and the decoder all read.
struct AttributeTypeInfo {
  AttributeType type;
  const char* name;  ///< as in the file
  std::size_t size;  ///< bytes
  bool numeric;      ///< may carry noise, bias or a frame conversion (bool may not)
};

/// Every attribute type, in enum order.
inline constexpr AttributeTypeInfo kAttributeTypes[] = {
    {AttributeType::kF64, "f64", 8, true}, {AttributeType::kF32, "f32", 4, true},
    {AttributeType::kI64, "i64", 8, true}, {AttributeType::kI32, "i32", 4, true},
    {AttributeType::kU64, "u64", 8, true}, {AttributeType::kU32, "u32", 4, true},
    {AttributeType::kU8, "u8", 1, true},   {AttributeType::kBool, "bool", 1, false},
};

/// The table row of `type`.
inline constexpr const AttributeTypeInfo& type_info(AttributeType type) {
  return kAttributeTypes[static_cast<std::size_t>(type)];
}

/// An object class or an interaction of the federation file: its attributes in declaration
/// order, each at a fixed byte offset. Built once from the file, never changed.
struct ClassLayout {
  struct Attribute {
    std::string name;
    AttributeType type = AttributeType::kF64;
    std::size_t offset = 0;  ///< bytes from the start of the payload
  };
  std::string name;
  bool interaction = false;  ///< <interaction> rather than <class>
  std::vector<Attribute> attributes;
  std::size_t size = 0;  ///< bytes of one payload: the sum of the attributes' sizes

  /// The attribute called `name`, or nullptr.
  const Attribute* find(std::string_view attribute) const;
  /// Appends an attribute at the end of the layout.
  void add(std::string attribute, AttributeType type);
  /// Why `payload` is not a value of this class ("" when it is): its size, or a bool byte
  /// other than 0 and 1.
  std::string layout_problem(const std::vector<std::uint8_t>& payload) const;
  /// Attribute `a` of `payload` (which has the class's layout) as a double.
  double read(const std::vector<std::uint8_t>& payload, const Attribute& a) const;
  /// Writes `value` into attribute `a`: rounded to the nearest integer for integer types,
  /// saturated to the type's range. For the modifiers, which never fail at run time.
  void write(std::vector<std::uint8_t>& payload, const Attribute& a, double value) const;
};

/// One value of a class, built or read by attribute name. `context` names where it belongs
/// (node, flow, timestamp) in its errors; Federate::attributes and Federate::decode give it.
class AttributeSet {
 public:
  /// A value of `cls`: every attribute zero (or false).
  AttributeSet(std::shared_ptr<const ClassLayout> cls, std::string context);
  /// The value `payload`; throws FederateError when it is not a value of `cls`.
  AttributeSet(std::shared_ptr<const ClassLayout> cls, std::vector<std::uint8_t> payload,
               std::string context);

  const ClassLayout& class_layout() const { return *class_; }
  /// The payload: class_layout().size bytes.
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

  /// Sets attribute `name` (any numeric type: rounded to the nearest integer, ties to even, for
  /// integer types). Throws FederateError for an unknown attribute (with "did you mean"), a bool
  /// attribute, or a value outside the type's range (or NaN into an integer).
  AttributeSet& set(std::string_view name, double value);
  /// Sets an integer or bool attribute exactly (u64 and i64 beyond 2^53 included).
  template <std::integral T>
  AttributeSet& set(std::string_view name, T value) {
    if constexpr (std::same_as<T, bool>)
      return set_bool(name, value);
    else if constexpr (std::is_signed_v<T>)
      return set_signed(name, static_cast<std::int64_t>(value));
    else
      return set_unsigned(name, static_cast<std::uint64_t>(value));
  }
  AttributeSet& set_bool(std::string_view name, bool value);
  AttributeSet& set_signed(std::string_view name, std::int64_t value);
  AttributeSet& set_unsigned(std::string_view name, std::uint64_t value);

  /// Attribute `name` as a double (bool: 0 or 1). Throws FederateError when unknown.
  double get(std::string_view name) const;
  /// An integer or bool attribute, exactly; an f32/f64 attribute is refused.
  std::int64_t get_signed(std::string_view name) const;
  std::uint64_t get_unsigned(std::string_view name) const;
  bool get_bool(std::string_view name) const;

 private:
  const ClassLayout::Attribute& attribute(std::string_view name) const;
  [[noreturn]] void fail(const std::string& what) const;
  std::shared_ptr<const ClassLayout> class_;
  std::vector<std::uint8_t> bytes_;
  std::string context_;
};

}  // namespace fleetsim
