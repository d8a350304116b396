// User-facing error reports ("file:line: error: ...") and exit statuses (core, not the SDK).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace fleetsim {

/// Exit statuses of every fleetsim command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntimeError = 1;  ///< a failure during a run (controller threw, peer died)
inline constexpr int kExitUserError = 2;     ///< bad input: a file or option the user wrote

/// Where a value came from: a file and a 1-based line (0 when unknown, e.g. a command-line flag).
struct SourceLocation {
  std::string file;
  int line = 0;
};

/// One problem found in user input.
struct Diagnostic {
  enum class Severity { kError, kWarning };
  Severity severity = Severity::kError;
  SourceLocation where;
  std::string message;  ///< "what is wrong (what was expected)"
};

/// Collects every problem in the user's input so that all of them are reported at once, like a
/// compiler. Not thread-safe: used while loading, before a run starts.
class Diagnostics {
 public:
  void error(const SourceLocation& where, std::string message);
  void warning(const SourceLocation& where, std::string message);
  bool has_errors() const { return errors_ > 0; }
  int error_count() const { return errors_; }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Prints "file:line: error: message" lines, in the order found.
  void print(std::ostream& out) const;
  /// All diagnostics as one string (for exceptions and tests).
  std::string str() const;
  void clear() {
    items_.clear();
    errors_ = 0;
  }

 private:
  std::vector<Diagnostic> items_;
  int errors_ = 0;
};

/// Formats one diagnostic as "file:line: error: message".
std::string format_diagnostic(const Diagnostic& d);

/// Suggests the closest of `candidates` to `word` (edit distance), or "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "" — appended to "unknown ..." messages.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

/// How a child process ended, from waitpid's status: "exited with status 3", "was killed by
/// signal 9 (Killed)" or "stopped".
std::string describe_exit_status(int wait_status);

}  // namespace fleetsim
