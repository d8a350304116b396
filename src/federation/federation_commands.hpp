// `fleetsim launch` and `fleetsim node`: the command-line face of the federation layer.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim::federation {

/// Adds the `launch` and `node` subcommands to `app`. Their callbacks set `status` (0 ok,
/// 1 a failure during the run, 2 a user error).
void add_commands(CLI::App& app, int& status);

}  // namespace fleetsim::federation
