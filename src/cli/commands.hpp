// The engine's own subcommands: run, check, list.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim::cli {

/// Adds `run`, `check` and `list` to `app`; their callbacks store the exit status in `status`.
void add_engine_commands(CLI::App& app, int& status);

}  // namespace fleetsim::cli
