// The files a run depends on beyond its options: what the processes of a distributed run must
// share, and what a checkpoint must be resumed with (docs/distributed.md, docs/checkpoints.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fleetsim/plugin.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim {

/// The files a run reads, as (what, path): the experiment file, the plug-in libraries it
/// loaded, and the files named by its parameters (scripts). In a fixed order.
std::vector<std::pair<std::string, std::string>> run_files(const Experiment& ex,
                                                           const PluginRegistry& registry);

/// The 64-bit content hash of a file, as 16 hex digits ("unreadable" if it cannot be read).
std::string file_content_hash(const std::string& path);

}  // namespace fleetsim
