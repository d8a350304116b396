#include "cli/commands.hpp"

namespace fleetsim::cli {
void add_engine_commands(CLI::App& app, int& status) {}
}  // namespace fleetsim::cli
