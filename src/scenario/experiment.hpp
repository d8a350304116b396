// Experiment files (XML, shaped like ARGoS's .argos): parsed, checked in full, and turned into
// a WorldModel and an initial WorldState. See docs/experiment-format.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fleetsim/diagnostics.hpp"
#include "fleetsim/plugin.hpp"
#include "log/log_writer.hpp"
#include "world/world.hpp"

namespace fleetsim {

struct LogSpec {
  std::string path;
  log::LogFormat format = log::LogFormat::kFrames;
  std::int64_t every = 1;
  SourceLocation where;
};

/// Command-line values that replace the file's.
struct ExperimentOverrides {
  std::optional<int> threads;
  std::optional<std::uint64_t> seed;
  std::optional<double> length_s;
  std::optional<std::string> log_path;
  std::optional<log::LogFormat> log_format;
};

/// A loaded, checked experiment, ready to run.
struct Experiment {
  std::string path;
  std::shared_ptr<WorldModel> model;
  WorldState state;
  int threads = 1;
  std::vector<LogSpec> logs;
  std::string loop_functions;  ///< registry name, "" = none
  Params loop_params;
  std::vector<ControllerDecl> controllers;  ///< same as model->controllers
};

/// Reads and checks `path`. Loads the plug-in libraries it names into `registry`. Every
/// problem goes to `diags`; returns nullopt when there is any error.
std::optional<Experiment> load_experiment(const std::string& path, PluginRegistry& registry,
                                          const ExperimentOverrides& overrides,
                                          Diagnostics& diags);
/// Same, from text (tests); relative paths resolve against the current directory.
std::optional<Experiment> parse_experiment(const std::string& text, const std::string& name,
                                           PluginRegistry& registry,
                                           const ExperimentOverrides& overrides,
                                           Diagnostics& diags);

/// The built-in robot kind, the e-puck-like robot (radius 3.5 cm).
RobotKind epuck_kind();

}  // namespace fleetsim
