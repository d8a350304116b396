#include "scenario/run_files.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/hash.hpp"

namespace fleetsim {

std::vector<std::pair<std::string, std::string>> run_files(const Experiment& ex,
                                                           const PluginRegistry& registry) {
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("the experiment file", ex.path);
  std::set<std::string> libraries;
  for (const auto& info : registry.all())
    if (info.origin != "built-in") libraries.insert(info.origin);
  for (const auto& lib : libraries) files.emplace_back("the plug-in library " + lib, lib);
  // Files the parameters name (scripts): values that are paths of existing files.
  std::set<std::string> named;
  auto add = [&](const Params& p) {
    for (const auto& [k, v] : p.values()) {
      std::error_code ec;
      if (!v.empty() && v.find('/') != std::string::npos && std::filesystem::is_regular_file(v, ec))
        named.insert(v);
    }
  };
  for (const auto& c : ex.model->controllers) add(c.params);
  for (const auto& k : ex.model->kinds) {
    for (const auto& p : k.sensors) add(p.params);
    for (const auto& p : k.actuators) add(p.params);
  }
  add(ex.loop_params);
  for (const auto& f : named) files.emplace_back("the file " + f, f);
  return files;
}

std::string file_content_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  std::ostringstream s;
  s << in.rdbuf();
  Hasher h;
  h.text(s.str());
  return hex64(h.value());
}

}  // namespace fleetsim
