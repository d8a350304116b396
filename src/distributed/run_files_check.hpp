// That every process of a run runs the same files: the experiment, its plug-in libraries and
// the files its parameters name, by content hash (a primary checks each joining secondary, MPI
// rank 0 every rank).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fleetsim/plugin.hpp"
#include "scenario/experiment.hpp"

namespace fleetsim::distributed {

/// The run's files as [{"what", "name", "hash"}, ...] (scenario/run_files.hpp).
nlohmann::json files_json(const Experiment& ex, const PluginRegistry& reg);

/// Why `theirs` differs from `ours` (empty when it does not), naming the file: "the experiment
/// file diffusion.xml differs (content hash H there, H' here)".
std::string compare_files(const nlohmann::json& ours, const nlohmann::json& theirs);

}  // namespace fleetsim::distributed
