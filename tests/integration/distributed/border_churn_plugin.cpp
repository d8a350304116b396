// The border_churn loop functions (border_churn.hpp) as a plug-in library, for the MPI tests'
// random experiments run by the fleetsim program. Built against include/fleetsim only.
#include "border_churn.hpp"

extern "C" int fleetsim_plugin_abi_version() {
  return FLEETSIM_PLUGIN_ABI_VERSION;
}

extern "C" void fleetsim_register_plugins(fleetsim::PluginRegistry& registry) {
  fleetsim::testing::add_border_churn(registry);
}
