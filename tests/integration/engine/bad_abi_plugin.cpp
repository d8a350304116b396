// A plug-in built for another ABI version: fleetsim must refuse it with a clear message.
#include "fleetsim/plugin.hpp"

extern "C" int fleetsim_plugin_abi_version() { return FLEETSIM_PLUGIN_ABI_VERSION + 998; }
extern "C" void fleetsim_register_plugins(fleetsim::PluginRegistry&) {}
