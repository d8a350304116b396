// ARGoS experiment files (.argos, root <argos-configuration>), read into fleetsim's own
// experiment format, so that one builder (ExperimentParser in experiment.cpp) makes the world
// from either. See docs/argos.md for what maps to what.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "core/diagnostics.hpp"
#include "core/xml_reader.hpp"

namespace fleetsim {

/// True when `file`'s root element is ARGoS's <argos-configuration> (whatever the file's
/// extension).
bool is_argos_configuration(const XmlFile& file);

/// Reads the ARGoS experiment `argos` and returns the same experiment as a fleetsim
/// <fleetsim> document (XmlFile::derived), each node and attribute carrying the line of the
/// .argos element or attribute it comes from, so that the builder's errors point into the
/// .argos file. Everything fleetsim cannot do (light entities, floors, C++ controllers and loop
/// functions, sensors it lacks) and every unknown element or attribute is reported to `diags`
/// at its line, all at once; returns nullptr when there is any error. A Lua script path is
/// looked up as ARGoS does, relative to the current directory, then beside the .argos file.
/// `max_placement_tries` bounds the placement draws of all <distribute>s together
/// (ExperimentOverrides::max_placement_tries: the fuzz harness's bound). `seed`, when given
/// (ExperimentOverrides::seed, `fleetsim run --seed`), replaces the file's random_seed, for the
/// placements as for the run.
std::unique_ptr<XmlFile> read_argos_experiment(
    const XmlFile& argos, Diagnostics& diags,
    std::optional<std::int64_t> max_placement_tries = std::nullopt,
    std::optional<std::uint64_t> seed = std::nullopt);

}  // namespace fleetsim
