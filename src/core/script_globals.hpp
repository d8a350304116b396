// A controller whose script globals can be read and set between steps: the live view's robot
// panel shows them and its `param` intervention sets one (docs/view-format.md,
// "Interventions"). The `lua` controller is one: a global its script defined whose value is a
// number, a string or a boolean. Not part of the plug-in SDK (a plug-in's controller has no
// such globals); the engine asks for it with dynamic_cast.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fleetsim {

/// A number, an integer (Lua's integer subtype), a string or a boolean.
struct ScriptValue {
  enum class Type { kNumber, kInteger, kString, kBoolean };
  Type type = Type::kNumber;
  double number = 0;
  std::int64_t integer = 0;
  std::string text;
  bool boolean = false;

  /// "number", "integer", "string" or "boolean".
  const char* type_name() const;
  /// Numbers and integers are one kind of value (a Lua number); strings and booleans are each
  /// their own.
  bool same_kind(const ScriptValue& other) const;
  /// As JSON text: a number as the shortest text that reads back as the same double, with a
  /// '.' or an exponent (so that it reads back as a number, not an integer); an integer
  /// without; a string in double quotes with JSON escapes; true or false.
  std::string json() const;
  /// Reads what json() writes (and any JSON number, string or boolean); false if `text` is
  /// none of those, or a number that is not finite.
  static bool parse(const std::string& text, ScriptValue& out);
};

class ScriptGlobals {
 public:
  virtual ~ScriptGlobals() = default;
  /// The globals the script defined whose values are numbers, strings or booleans, by name.
  virtual std::vector<std::pair<std::string, ScriptValue>> script_globals() const = 0;
  /// Sets global `name` (one of script_globals()) to `value`, of the same kind; a number given
  /// to an integer global that is integral stays an integer. Returns why not, else "".
  virtual std::string set_script_global(const std::string& name, const ScriptValue& value) = 0;
};

}  // namespace fleetsim
