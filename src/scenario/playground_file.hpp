// The DEECo playground's own scenario files (root <simulation cycles=... logfile=...>, as its
// Simulation reads them), read into fleetsim's experiment format, so that one builder
// (ExperimentParser in experiment.cpp) makes the world from either. docs/experiment-format.md,
// "DEECo playground scenarios", says what maps to what.
//
// Java classes cannot run here: a class mapping file beside the scenario (SCENARIO.classes.xml,
// else classes.xml) names, for each robot class, a fleetsim controller; for each sensor's
// processor, a fleetsim sensor; for each ensemble class, a fleetsim ensemble; and for each
// object class, optionally, an object behaviour:
//
//   <classes>
//     <knowledge> <field name="alert"/> ... </knowledge>            (optional)
//     <robot class="pkg.SimpleRobot" type="lua" script="simple_robot.lua"/>
//     <sensor processor="pkg.CoordinatesProcessor" type="positioning"/>
//     <ensemble class="pkg.SignalEnsemble" type="lua" script="signal.lua" period="1"/>
//     <object class="pkg.Item" type="lua" script="item.lua"/>
//   </classes>
//
// A robot's, ensemble's or object's other attributes are its fleetsim element's (controller,
// ensemble, behaviour parameters); paths are relative to the mapping file.
#pragma once

#include <memory>

#include "core/diagnostics.hpp"
#include "core/xml_reader.hpp"

namespace fleetsim {

/// True when `file`'s root element is the playground's <simulation>.
bool is_playground_scenario(const XmlFile& file);

/// Reads the playground scenario `scenario` and its class mapping, and returns the same
/// experiment as a <fleetsim> document (XmlFile::derived) whose nodes carry the scenario's lines.
/// What cannot map (a class the mapping lacks, a robot's `arg`, a missing mapping file) is
/// reported to `diags` at its line with what to do, all at once; returns nullptr then.
std::unique_ptr<XmlFile> read_playground_scenario(const XmlFile& scenario, Diagnostics& diags);

}  // namespace fleetsim
