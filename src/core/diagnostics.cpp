#include "core/diagnostics.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace fleetsim {

void Diagnostics::error(const SourceLocation& where, std::string message) {
  items_.push_back({Diagnostic::Severity::kError, where, std::move(message)});
  ++errors_;
}

void Diagnostics::warning(const SourceLocation& where, std::string message) {
  items_.push_back({Diagnostic::Severity::kWarning, where, std::move(message)});
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.where.file.empty()) {
    out += d.where.file;
    if (d.where.line > 0) {
      out += ':';
      out += std::to_string(d.where.line);
    }
    out += ": ";
  }
  out += d.severity == Diagnostic::Severity::kError ? "error: " : "warning: ";
  out += d.message;
  return out;
}

void Diagnostics::print(std::ostream& out) const {
  for (const auto& d : items_) out << format_diagnostic(d) << '\n';
}

std::string Diagnostics::str() const {
  std::ostringstream s;
  print(s);
  return s.str();
}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string m = closest_match(word, candidates);
  return m.empty() ? std::string() : " (did you mean '" + m + "'?)";
}

std::string describe_exit_status(int st) {
  if (WIFEXITED(st)) return "exited with status " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st))
    return "was killed by signal " + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) +
           ")";
  return "stopped";
}

}  // namespace fleetsim
