// A program's command line parsed with CLI11, with the project's exit statuses (the fleetsim
// command and the benchmark programs).
#pragma once

#include <CLI/CLI.hpp>

#include "core/diagnostics.hpp"

namespace fleetsim {

/// Parses the command line into `app` (running its callbacks). Returns -1 to go on, else the
/// status to exit with: kExitOk after --help or --version, kExitUserError after a bad option,
/// which CLI11 has then printed with a hint.
inline int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUserError;
  }
  return -1;
}

}  // namespace fleetsim
