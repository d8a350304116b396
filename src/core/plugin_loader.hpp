// Loading out-of-tree plug-ins from shared libraries (dlopen), with an ABI version check.
#pragma once

#include <string>

#include "core/diagnostics.hpp"
#include "fleetsim/plugin.hpp"

namespace fleetsim {

/// Loads `path`, checks `fleetsim_plugin_abi_version()` and calls
/// `fleetsim_register_plugins(registry)`. Problems go to `diags` at `where`. The library
/// stays loaded for the life of the process.
bool load_plugin_library(const std::string& path, PluginRegistry& registry, Diagnostics& diags,
                         const SourceLocation& where);

}  // namespace fleetsim
