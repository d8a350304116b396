#include "core/plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fleetsim {

/// While a library registers: its entries get the library's path as origin, and the names
/// it registers twice are collected. Restores the registry's origin when it ends.
class PluginLibraryScope {
 public:
  PluginLibraryScope(PluginRegistry& registry, const std::string& origin)
      : registry_(registry),
        saved_(std::exchange(registry.origin_, origin)),
        first_(registry.duplicates_.size()) {}
  ~PluginLibraryScope() { registry_.origin_ = saved_; }
  PluginLibraryScope(const PluginLibraryScope&) = delete;
  PluginLibraryScope& operator=(const PluginLibraryScope&) = delete;
  std::vector<std::string> duplicates() const {
    return {registry_.duplicates_.begin() + static_cast<std::ptrdiff_t>(first_),
            registry_.duplicates_.end()};
  }

 private:
  PluginRegistry& registry_;
  std::string saved_;
  std::size_t first_;
};

bool load_plugin_library(const std::string& path, PluginRegistry& registry, Diagnostics& diags,
                         const SourceLocation& where) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    diags.error(where, "plug-in library '" + path +
                           "' not found (expected a shared library path relative to the "
                           "experiment file, or a file name found in FLEETSIM_PLUGIN_PATH)");
    return false;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    diags.error(where, "plug-in library '" + path + "' does not load: " +
                           (why ? why : "unknown reason") +
                           " (expected a shared library built against this fleetsim)");
    return false;
  }
  using AbiFn = int (*)();
  using RegisterFn = void (*)(PluginRegistry&);
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, "fleetsim_plugin_abi_version"));
  auto reg = reinterpret_cast<RegisterFn>(dlsym(handle, "fleetsim_register_plugins"));
  if (!abi || !reg) {
    diags.error(where, "plug-in library '" + path +
                           "' is not a fleetsim plug-in (expected the functions "
                           "fleetsim_plugin_abi_version and fleetsim_register_plugins)");
    return false;
  }
  int version = abi();
  if (version != FLEETSIM_PLUGIN_ABI_VERSION) {
    diags.error(where, "plug-in library '" + path + "' was built for plug-in ABI version " +
                           std::to_string(version) + " but this fleetsim has version " +
                           std::to_string(FLEETSIM_PLUGIN_ABI_VERSION) +
                           " (rebuild the plug-in against this fleetsim's headers)");
    return false;
  }
  std::vector<std::string> duplicates;
  {
    PluginLibraryScope scope(registry, path);
    reg(registry);
    duplicates = scope.duplicates();
  }
  for (const std::string& name : duplicates)
    diags.error(where, "plug-in library '" + path + "' registers '" + name +
                           "', a name that already exists (expected unique plug-in names)");
  return duplicates.empty();
}

}  // namespace fleetsim
