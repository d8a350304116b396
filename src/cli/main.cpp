// fleetsim command line: `fleetsim run|check|list|view|render|control|launch|node ...`.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "core/command_line.hpp"
#include "core/diagnostics.hpp"
#ifdef FLEETSIM_HAVE_FEDERATION
#include "distributed/swarm_node.hpp"
#include "federation/federation_commands.hpp"
#endif
#ifdef FLEETSIM_HAVE_VIEWER
#include "view/view_command.hpp"
#endif

int main(int argc, char** argv) {
  CLI::App app{
      "fleetsim: a repeatable simulator for large robot swarms and fleets.\n"
      "Same experiment and seed, same bits: whatever the thread count, process count or load.\n"
      "Start with `fleetsim run examples/diffusion/diffusion.xml`, then `fleetsim view` its log."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fleetsim 0.1.0");
  int status = fleetsim::kExitOk;
  fleetsim::cli::add_engine_commands(app, status);
#ifdef FLEETSIM_HAVE_FEDERATION
  fleetsim::federation::add_commands(app, status);
  fleetsim::distributed::install_swarm_nodes();  // <node experiment="...">
#endif
#ifdef FLEETSIM_HAVE_VIEWER
  fleetsim::view::add_command(app, status);
  fleetsim::view::add_control_command(app, status);
  fleetsim::view::add_render_command(app, status);
#endif
  if (int code = fleetsim::parse_command_line(app, argc, argv); code >= 0) return code;
  return status;
}
