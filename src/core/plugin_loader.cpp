#include "core/plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>

namespace fleetsim {

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
  std::string saved = registry.current_origin;
  registry.current_origin = path;
  std::size_t dup_before = registry.duplicates.size();
  reg(registry);
  registry.current_origin = saved;
  for (std::size_t i = dup_before; i < registry.duplicates.size(); ++i)
    diags.error(where, "plug-in library '" + path + "' registers '" + registry.duplicates[i] +
                           "', a name that already exists (expected unique plug-in names)");
  return registry.duplicates.size() == dup_before;
}

}  // namespace fleetsim
