#include "distributed/run_files_check.hpp"

#include <filesystem>
#include <map>

#include "scenario/run_files.hpp"

namespace fleetsim::distributed {

nlohmann::json files_json(const Experiment& ex, const PluginRegistry& reg) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [what, path] : run_files(ex, reg))
    files.push_back({{"what", what},
                     {"name", std::filesystem::path(path).filename().string()},
                     {"hash", file_content_hash(path)}});
  return files;
}

/// Why `theirs` differs from `ours` (empty when it does not), naming the file.
std::string compare_files(const nlohmann::json& ours, const nlohmann::json& theirs) {
  if (!theirs.is_array()) return "it sent no file list";
  std::map<std::string, std::pair<std::string, std::string>> mine, other;
  for (const auto& f : ours) mine[f.at("what")] = {f.at("name"), f.at("hash")};
  for (const auto& f : theirs) {
    if (!f.is_object() || !f.contains("what") || !f.contains("name") || !f.contains("hash"))
      return "its file list is malformed";
    other[f.at("what").get<std::string>()] = {f.at("name").get<std::string>(),
                                              f.at("hash").get<std::string>()};
  }
  for (const auto& [what, nf] : mine) {
    auto it = other.find(what);
    if (it == other.end()) return "it does not load " + what + " (" + nf.first + ")";
    if (it->second.second != nf.second)
      return what + " " + nf.first + " differs (content hash " + it->second.second + " there, " +
             nf.second + " here)";
  }
  for (const auto& [what, nf] : other)
    if (!mine.count(what))
      return "it also loads " + what + " (" + nf.first + "), this one does not";
  return "";
}

}  // namespace fleetsim::distributed
