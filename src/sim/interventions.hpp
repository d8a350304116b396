// Interventions: changes a person makes to a running world from the live view (a robot dragged
// to a new pose, added or removed, the experiment's reset), recorded with the tick boundary they
// landed at so that `fleetsim run
// --interventions FILE` replays the session with the same log bytes and final hash
// (docs/view-format.md, "Interventions"). Each lands between two steps through the path loop
// functions use (Simulation::place_robot), on one process or alike on every process of a run
// on several (land_intervention).
//
// The file is text, one intervention a line, `#` starting a comment:
//   TICK move ROBOT_ID X Y HEADING
//   TICK add KIND CONTROLLER X Y HEADING     (the robot gets the run's next entity id)
//   TICK remove ROBOT_ID
//   TICK leds ROBOT_ID R,G,B,A                (every LED of the robot, each channel 0 .. 255)
//   TICK command ROBOT_ID ACTUATOR V1,V2,...  (held until released: Simulation::hold_command)
//   TICK release ROBOT_ID ACTUATOR
//   TICK param ROBOT_ID NAME VALUE            (a global of the robot's script; VALUE as JSON)
//   TICK reset
// TICK: the world's tick when it landed (before the step from TICK to TICK + 1); X, Y in metres,
// HEADING in radians, each written as the shortest text that reads back as the same double.
// Ticks do not decrease, but after a reset, which takes the world back to tick 0.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"
#include "core/script_globals.hpp"
#include "fleetsim/parts.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

class Simulation;

/// One intervention at tick boundary `tick`: robot `robot` placed at (x, y) heading `heading`
/// (kMove); a robot of kind `robot_kind` driven by controller `controller` added there (kAdd);
/// robot `robot` removed (kRemove); robot `robot`'s LEDs all set to `color`, as if its
/// controller had set them (kLeds); robot `robot`'s actuator `actuator` commanded `values`
/// from now on, whatever its controller commands (kCommand), or left to its controller again
/// (kRelease); the global `name` of robot `robot`'s script set to `value` (kParam); or the
/// experiment's reset (kReset, Simulation::reset).
struct Intervention {
  enum class Kind { kMove, kReset, kAdd, kRemove, kLeds, kCommand, kRelease, kParam };
  Tick tick = 0;
  EntityId robot = 0;
  double x = 0, y = 0, heading = 0;
  int line = 0;  ///< in the file it was read from (0: made live)
  Kind kind = Kind::kMove;
  std::string robot_kind, controller;  ///< kAdd: names from the experiment (no spaces)
  Color color;                         ///< kLeds
  std::string actuator;                ///< kCommand, kRelease: the kind's actuator name
  std::vector<double> values;          ///< kCommand: as many as its command has
  std::string name;                    ///< kParam: the global's name
  ScriptValue value;                   ///< kParam
};

/// "move robot 3", "reset", ...: what `i` is, for messages.
std::string describe(const Intervention& i);

/// The line recording `i` (without newline).
std::string format_intervention(const Intervention& i);

/// Reads an interventions file: every problem in `diags` (file:line), nullopt if any. The
/// interventions come in file order; their ticks must not decrease.
std::optional<std::vector<Intervention>> load_interventions(const std::string& path,
                                                            Diagnostics& diags);
/// The same from `in` (`path` names it in the messages): the lines a run on several processes
/// announces to every process (Simulation::announce_interventions).
std::optional<std::vector<Intervention>> read_interventions(std::istream& in,
                                                            const std::string& path,
                                                            Diagnostics& diags);

/// Why `i` cannot land on `sim` now ("" when it can): no such robot, kind or controller, a
/// value that is not a finite number, a robot moved or added outside the arena, onto an
/// obstacle or a wall, or overlapping another robot (flyers excepted: they collide with
/// nothing); a reset the run cannot make (Simulation::reset_problem).
std::string intervention_problem(const Simulation& sim, const Intervention& i);

/// The f64 command column of actuator `actuator` of robot kind `kind` (`velocity_cmd` for a
/// quadrotor_speed actuator), or kNoColumn with why not in `why` (naming the ones there are).
ColumnHandle command_column(const Simulation& sim, std::uint16_t kind, const std::string& actuator,
                            std::string& why);

/// Lands `i` on `sim`, between steps (a moved robot's altitude, if it has one, is kept). Call
/// intervention_problem() first; throws RunError otherwise.
void apply_intervention(Simulation& sim, const Intervention& i);

/// Lands `i` on `sim` if it can; returns why not ("" when it landed). On several processes
/// every process calls it at the same tick boundary with the same interventions (the world is
/// whole and alike on each: Distribution::interventions) and finds the same; but a script's
/// global (kParam) is set by the process running the robot's controller alone (the others
/// return ""), and only its answer says what became of it (the first process hears it with
/// that process's next moves: Simulation::reply_to_first_process).
std::string land_intervention(Simulation& sim, const Intervention& i);

}  // namespace fleetsim
