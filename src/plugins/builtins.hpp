// The one explicit list of built-in plug-ins. `fleetsim list` prints it; a test checks that
// every entry is documented.
#pragma once

#include "fleetsim/plugin.hpp"

namespace fleetsim {

/// Adds every built-in plug-in to `registry`, in a fixed order.
void register_builtins(PluginRegistry& registry);

}  // namespace fleetsim
