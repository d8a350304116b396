// What the Python module checks at its boundary (docs/python.md, "Safety at the boundary"):
// nothing a Python program passes may crash the process or leave a robot corrupted, so the
// module's classes share these checks. Called with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/simulation.hpp"

namespace fleetsim::python {

/// A user error in an input file: every problem, as `fleetsim check` prints them. Python sees
/// fleetsim.ExperimentError, a ValueError.
class ExperimentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Marks an object as stepping while its step runs with the GIL released; any use of the
/// object from another Python thread meanwhile raises RuntimeError (check()) instead of reading
/// or writing memory the step is changing. The flag is only read and written with the GIL
/// held, so it needs no more than an atomic.
class OneThreadAtATime {
 public:
  explicit OneThreadAtATime(std::atomic<bool>& busy) : busy_(busy) {
    check(busy);
    busy_ = true;
  }
  ~OneThreadAtATime() { busy_ = false; }
  OneThreadAtATime(const OneThreadAtATime&) = delete;
  OneThreadAtATime& operator=(const OneThreadAtATime&) = delete;

  static void check(const std::atomic<bool>& busy) {
    if (busy)
      throw std::runtime_error(
          "the simulation is stepping in another thread (use a simulation from one thread at "
          "a time)");
  }

 private:
  std::atomic<bool>& busy_;
};

/// The overrides of a Simulation or Env that Python may get wrong: ValueError, not an abort.
inline void check_overrides(std::optional<int> threads, std::optional<double> length_s) {
  // The experiment file's own range for <framework threads> (scenario/experiment.cpp).
  if (threads && (*threads < 1 || *threads > 1024))
    throw pybind11::value_error(fmt::format("threads must be 1 to 1024, not {}", *threads));
  if (length_s && !(std::isfinite(*length_s) && *length_s > 0))
    throw pybind11::value_error(
        fmt::format("length must be a finite number of seconds > 0, not {}", *length_s));
}

/// Raises ValueError naming the first robot (in row order) and the column whose command is not
/// a finite number, among the f64 columns `is_command` accepts. A NaN or infinite command
/// would otherwise reach the physics and leave the robot's pose NaN for good.
template <class IsCommand>
void check_commands(const Simulation& sim, IsCommand is_command) {
  const ColumnStore& store = sim.state().robots;
  const std::size_t rows = store.rows();
  for (ColumnHandle c = 0; c < store.schema().size(); ++c) {
    const ColumnDesc& d = store.desc(c);
    if (d.type != ColumnType::kF64 || !is_command(d)) continue;
    const auto* v = static_cast<const double*>(store.data(c));
    for (std::size_t i = 0; i < rows * d.width; ++i) {
      if (std::isfinite(v[i])) continue;
      const std::size_t row = i / d.width;
      throw pybind11::value_error(fmt::format(
          "robot '{}': command column '{}'{} holds {} (commands must be finite numbers; the "
          "step did not run)",
          sim.state().robot_name()[row], d.name,
          d.width > 1 ? fmt::format(" [{}]", i % d.width) : std::string(), v[i]));
    }
  }
}

/// Adds fleetsim._core.Worlds (worlds.cpp).
void bind_worlds(pybind11::module_& m);

}  // namespace fleetsim::python
