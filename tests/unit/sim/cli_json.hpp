// Running the fleetsim command from a test and reading its --json summary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fleetsim::test {

/// Runs `fleetsim run ARGS --quiet --json` (standard error included in what it returns);
/// *status is its exit status (-1 when it did not exit).
inline std::string run_fleetsim(const std::string& args, int* status) {
  const std::string cmd =
      std::string(FLEETSIM_BINARY_DIR) + "/fleetsim run " + args + " --quiet --json 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  const int s = p ? pclose(p) : -1;
  *status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return out;
}

/// The text of a JSON summary's field `key` (a number, or a string with its quotes), or "".
inline std::string json_field(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  const auto begin = at + key.size() + 3;
  return json.substr(begin, json.find_first_of(",}", begin) - begin);
}

}  // namespace fleetsim::test
