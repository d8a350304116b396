// `fleetsim view LOG [--config VIEW.xml] [--port P] [--host ADDR]`: serves the web viewer for
// one log until Ctrl+C.
#pragma once

#include <CLI/CLI.hpp>

namespace fleetsim::view {

/// Adds the `view` subcommand to the fleetsim command line. When it runs, `status` receives
/// the exit status: 0 after Ctrl+C, 1 when the server cannot start, 2 for a bad log, view
/// configuration or option.
void add_command(CLI::App& app, int& status);

/// Adds the `control` subcommand (control_command.cpp): steers a run started with `fleetsim
/// run --view`. Status 0 when the run took the command, 1 when it refused it or cannot be
/// reached, 2 for a bad URL or value.
void add_control_command(CLI::App& app, int& status);

/// Adds the `render` subcommand (render_command.cpp): pictures (PNG) and videos (ffmpeg) of a
/// log's frames, painted as the page draws them, without a browser. Status 0 when every frame
/// was written, 1 when writing failed (ffmpeg missing or failing, a full disk), 2 for a bad
/// log, view configuration or option.
void add_render_command(CLI::App& app, int& status);

}  // namespace fleetsim::view
