// fleetsim public SDK: reward terms for learning (docs/python.md, "Rewards").
//
// An environment for learning (Python's fleetsim.Env: W worlds of one experiment) gives each
// agent, a robot whose controller is `external`, a reward after each step: the sum of its
// reward terms, each times its weight. A term is a Reward plug-in (C++,
// PluginRegistry::add_reward); the built-in terms (target, centroid, collision, neighbours)
// are plug-ins of this kind too. A term is named in the experiment,
//
//   <learning> <reward type="progress" weight="2" to="1,0"/> </learning>
//
// (its other attributes are its parameters, checked against its ParamDocs at load), or from
// Python: Env(path, rewards={"progress": {"weight": 2, "to": "1,0"}}).
//
// When: each world has its own instance of each term, made and init() when the world is
// made; reset() at the start of every episode of that world (after the experiment's reset);
// compute() after each step of that world, on the thread that stepped it. Worlds step in
// parallel: a term shares nothing between its instances, and its values depend only on the
// world and its own state, so that the rewards are the same bits for any number of worlds and
// threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "fleetsim/columns.hpp"
#include "fleetsim/controller.hpp"
#include "fleetsim/types.hpp"

namespace fleetsim {

/// The world after a step, read-only, as a reward term sees it (implemented by the engine;
/// valid during compute() only).
class RewardWorld {
 public:
  virtual ~RewardWorld() = default;
  /// Every robot of the world (agents and others), by row.
  virtual std::size_t robot_count() const = 0;
  virtual EntityId robot_id(std::uint32_t row) const = 0;
  /// Metres; radians CCW from +x.
  virtual Vec2 robot_position(std::uint32_t row) const = 0;
  virtual double robot_heading(std::uint32_t row) const = 0;
  /// Start of a column's storage (row r's elements at r * column_width); cast to its type.
  virtual const void* column_data(ColumnHandle column) const = 0;
  virtual std::uint32_t column_width(ColumnHandle column) const = 0;
  /// The tick just ended (1 after the first step of an episode) and seconds per tick.
  virtual Tick tick() const = 0;
  virtual double tick_s() const = 0;

  template <class T>
  const T* column(ColumnHandle c) const {
    return static_cast<const T*>(column_data(c));
  }
};

/// Given to Reward::init: the world's columns and its agents.
class RewardSetup {
 public:
  virtual ~RewardSetup() = default;
  /// A robot column by name (a sensor's, the body's "x", ...), kNoColumn if the run has none.
  virtual ColumnHandle find_column(const std::string& name) const = 0;
  /// Its declaration (valid for a handle find_column returned).
  virtual const ColumnDesc& column(ColumnHandle column) const = 0;
  /// How many agents, and the row of each (the same rows in every world of the experiment).
  virtual std::span<const std::uint32_t> agents() const = 0;
};

/// A reward term.
class Reward {
 public:
  virtual ~Reward() = default;
  /// Once per world, before its first episode: the term's parameters (checked against its
  /// ParamDocs, defaults filled in). Throw SetupError for input it cannot use (a column the
  /// run lacks): reported at the <reward> element at load, or as a ValueError in Python.
  virtual void init(const Params& params, const RewardSetup& setup) {}
  /// At the start of every episode, the world at its tick 0 (a term keeping state between
  /// steps, such as the last positions, starts it again here).
  virtual void reset(const RewardWorld& world) {}
  /// After each step: the term's value for each agent, values[i] for the robot on row
  /// agents[i] (`values` comes zeroed; the environment adds weight * values[i] to the
  /// agent's reward).
  virtual void compute(const RewardWorld& world, std::span<const std::uint32_t> agents,
                       std::span<double> values) = 0;
};

}  // namespace fleetsim
