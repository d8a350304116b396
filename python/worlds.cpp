// fleetsim._core.Worlds: W worlds of one experiment in one process, stepped together for
// learning (docs/python.md, "Environments for learning"; fleetsim/env.py builds Env and its
// Gymnasium- and PettingZoo-style views on it).
//
// Each world is a whole Simulation with one thread of its own; the worlds step in parallel over
// this object's thread pool, with the GIL released. The agents are the robots whose controller
// is `external`, in row order (the same in every world: one experiment). Their observations are
// gathered from columns and their actions written to command columns, through arrays allocated
// once: observations [W, agents, obs_dim] (float64), rewards [W, agents], terminations and
// truncations [W, agents] (bool). step() overwrites them and returns the same arrays (no copy).
//
// Repeatable: world w's first episode after reset(seed=s) is the run of seed s + w (the run
// Simulation(path, seed=s + w) gives; reset(seed=[...]) gives each world its own), and its
// episode e after that has that seed + e * K; no seed depends on the number of worlds or
// threads, and the worlds share nothing.
//
// An episode starts with the experiment's reset (Simulation::reset with the episode's seed):
// the world goes back to tick 0, placed with that seed, and the controllers' and loop
// functions' reset() run; the experiment is loaded once per world, when the world is first
// made. (A file whose placement cannot be redone with another seed, an .argos or DEECo file,
// is loaded again for each episode instead.)
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "boundary.hpp"
#include "core/diagnostics.hpp"
#include "core/thread_pool.hpp"
#include "core/xml_reader.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "scenario/learning.hpp"
#include "sim/simulation.hpp"

namespace py = pybind11;

namespace fleetsim::python {
namespace {

/// The seed step between a world's episodes (2^64 / golden ratio): episodes of one world, and
/// worlds of one reset, never share a seed in practice.
constexpr std::uint64_t kEpisodeSeedStep = 0x9E3779B97F4A7C15ull;

/// A reward term as given: its type (a Reward plug-in, fleetsim/reward.hpp), weight and
/// parameters (checked against its ParamDocs, defaults filled in).
struct Term {
  std::string type;
  double weight = 1;
  Params params;
};

/// Python's reward terms: (type, weight, {parameter: text}).
using PyTerms = std::vector<std::tuple<std::string, double, std::map<std::string, std::string>>>;

/// One column of the observations or actions: where it is and how many values it gives.
struct Slot {
  std::string name;
  ColumnHandle handle = kNoColumn;
  ColumnType type = ColumnType::kF64;
  std::size_t values = 1;  ///< per robot (a colour counts 4)
};

class Worlds {
 public:
  Worlds(const std::string& path, std::optional<std::string> text, int worlds, int threads,
         std::optional<std::vector<std::string>> observations,
         std::optional<std::vector<std::string>> actions, std::optional<PyTerms> rewards,
         bool autoreset, std::optional<double> length, std::optional<std::uint64_t> seed)
      : path_(path), worlds_(worlds), autoreset_(autoreset), length_(length) {
    if (worlds < 1) throw py::value_error(fmt::format("worlds must be >= 1, not {}", worlds));
    check_overrides(threads, length);
    if (text) {
      text_ = *text;
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in) throw ExperimentError(path + ": cannot read the file");
      std::ostringstream all;
      all << in.rdbuf();
      text_ = all.str();
    }
    pool_ = std::make_unique<ThreadPool>(threads);
    sims_.resize(worlds);
    registries_.resize(worlds);
    terms_of_.resize(worlds);
    reward_values_.resize(worlds);
    episode_.assign(worlds, 0);
    ended_.assign(worlds, 0);
    if (seed) seed_all(*seed);
    // World 0 tells the agents and the columns; the others are checked against it.
    make_world(0);
    const Simulation& s = *sims_[0];
    const WorldState& st = s.state();
    agents_ = agent_rows(s.model(), st);
    if (agents_.empty())
      throw py::value_error(path +
                            ": no robot has the `external` controller (the agents are the robots "
                            "whose controller is external; docs/python.md)");
    for (auto r : agents_) agent_names_.push_back(st.robot_name()[r]);
    const ColumnStore& store = st.robots;
    // Python's observations, actions and rewards, each where given; else the file's
    // <learning>; else proximity, the wheels and no reward.
    const LearningSpec& file = learning_;
    const std::vector<std::string> obs_names =
        observations ? *observations
                     : file.observations.value_or(std::vector<std::string>{"proximity"});
    const std::vector<std::string> act_names =
        actions ? *actions : file.actions.value_or(std::vector<std::string>{"differential_drive"});
    for (const auto& name : obs_names) {
      if (std::string why = observation_column_problem(store, name); !why.empty())
        if (store.find(name) == kNoColumn)
          throw py::key_error(why);
        else
          throw py::type_error(why);
      Slot c = slot(store, name);
      obs_.push_back(c);
      obs_dim_ += c.values;
    }
    if (act_names.empty()) throw py::value_error("actions: name at least one command column");
    double max_speed = 0;
    for (auto r : agents_)
      max_speed = std::max(max_speed, s.model().kinds[st.robot_kind()[r]].max_speed_m_per_s);
    for (const auto& name : act_names) {
      if (std::string why = action_column_problem(*registries_[0], store, name); !why.empty())
        if (store.find(name) == kNoColumn)
          throw py::key_error(why);
        else
          throw py::value_error(why);
      Slot c = slot(store, name);
      const ColumnDesc& d = store.desc(c.handle);
      // The wheels' limit is the kinds' top speed; other commands are only required finite.
      const double bound = d.owner == "differential_drive" && max_speed > 0
                               ? max_speed
                               : std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < c.values; ++k) {
        low_.push_back(-bound);
        high_.push_back(bound);
      }
      acts_.push_back(c);
      action_dim_ += c.values;
    }
    if (rewards) {
      for (const auto& [type, weight, params] : *rewards)
        terms_.push_back({type, weight, checked_params(type, params)});
    } else if (file.rewards) {
      for (const RewardDecl& d : *file.rewards) terms_.push_back({d.type, d.weight, d.params});
    }
    for (const Term& t : terms_)
      if (!std::isfinite(t.weight))
        throw py::value_error("reward term '" + t.type + "': its weight must be finite");
    // Every world is made now (world 0's terms too), so that every episode, the first
    // included, starts with the experiment's reset.
    make_rewards(0);
    for (int w = 1; w < worlds_; ++w) make_world(w);
    const auto W = static_cast<py::ssize_t>(worlds_);
    const auto A = static_cast<py::ssize_t>(agents_.size());
    observations_ = py::array_t<double>({W, A, static_cast<py::ssize_t>(obs_dim_)});
    rewards_ = py::array_t<double>({W, A});
    terminations_ = py::array_t<bool>({W, A});
    truncations_ = py::array_t<bool>({W, A});
    ticks_ = py::array_t<std::int64_t>({W});
    episodes_ = py::array_t<std::int64_t>({W});
    obs_data_ = observations_.mutable_data();
    reward_data_ = rewards_.mutable_data();
    term_data_ = terminations_.mutable_data();
    trunc_data_ = truncations_.mutable_data();
    tick_data_ = ticks_.mutable_data();
    episode_data_ = episodes_.mutable_data();
    for (py::array* a :
         {static_cast<py::array*>(&observations_), static_cast<py::array*>(&rewards_),
          static_cast<py::array*>(&terminations_), static_cast<py::array*>(&truncations_),
          static_cast<py::array*>(&ticks_), static_cast<py::array*>(&episodes_)}) {
      std::memset(a->mutable_data(), 0, a->nbytes());
      a->attr("setflags")(py::arg("write") = false);  // the engine's; copy to keep or change
    }
  }

  /// Every world from the start of its first episode. `seed`: an int s (world w: s + w), one
  /// seed per world, or None (the last reset's; at first the experiment's seed s, world w
  /// s + w). Returns the observations and infos.
  py::tuple reset(const py::object& seed) {
    live();
    OneThreadAtATime::check(busy_);
    if (py::isinstance<py::int_>(seed)) {
      seed_all(seed.cast<std::uint64_t>());
    } else if (!seed.is_none()) {
      if (!py::isinstance<py::sequence>(seed) || py::isinstance<py::str>(seed))
        throw py::type_error("seed must be an int, one int per world, or None");
      const auto seeds = seed.cast<std::vector<std::uint64_t>>();
      if (seeds.size() != static_cast<std::size_t>(worlds_))
        throw py::value_error(fmt::format("seed: {} seeds for {} worlds", seeds.size(), worlds_));
      seeds_ = seeds;
    }
    started_ = false;  // until every world has started again (a failure leaves it false)
    {
      OneThreadAtATime busy(busy_);
      py::gil_scoped_release free;
      for (int w = 0; w < worlds_; ++w) episode_[w] = 0;
      const std::vector<Start> how = begin_episodes([](int) { return true; });
      pool_->parallel_for(worlds_, 1, [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t w = begin; w < end; ++w) start_episode(w, how[w]);
      });
    }
    started_ = true;
    return py::make_tuple(observations_, infos());
  }

  /// One tick of every world, `actions` [W, agents, action_dim] written to the agents' command
  /// columns first. A world whose episode ended at the previous step starts its next episode
  /// instead (its actions are ignored; Gymnasium's next-step autoreset): its observations are
  /// its first, its rewards 0, its flags false.
  py::tuple step(const py::handle& actions) {
    live();
    OneThreadAtATime::check(busy_);
    if (!started_) throw py::value_error("call reset() before step()");
    if (!autoreset_)
      for (int w = 0; w < worlds_; ++w)
        if (ended_[w])
          throw py::value_error(fmt::format(
              "world {}'s episode has ended: call reset() (this environment does not reset "
              "by itself)",
              w));
    write_actions(actions);
    {
      OneThreadAtATime busy(busy_);
      py::gil_scoped_release free;
      // A world whose episode ended at the previous step starts its next one instead.
      for (int w = 0; w < worlds_; ++w) episode_[w] += ended_[w];
      const std::vector<Start> how = begin_episodes([&](int w) { return ended_[w] != 0; });
      pool_->parallel_for(worlds_, 1, [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t w = begin; w < end; ++w) {
          if (how[w] != kGoesOn) {
            start_episode(w, how[w]);
            continue;
          }
          sims_[w]->step();
          if (sims_[w]->state().robot_count() != robot_count_)
            throw RunError(fmt::format(
                "world {}: the loop functions added or removed robots (an Env needs a fixed set "
                "of robots)",
                w));
          gather(w, true);
        }
      });
    }
    return py::make_tuple(observations_, rewards_, terminations_, truncations_, infos());
  }

  /// Column `name` of world `w`'s robots, a copy (a world's memory is replaced at its next
  /// episode, so a view could outlive it). Rows are all robots, in row order.
  py::array column(int w, const std::string& name) {
    live();
    OneThreadAtATime::check(busy_);
    if (w < 0 || w >= worlds_)
      throw py::index_error(fmt::format("world {} of {} worlds", w, worlds_));
    const ColumnStore& store = sims_[w]->state().robots;
    const Slot c = slot(store, name);
    if (c.type == ColumnType::kString) throw py::type_error("column '" + name + "' holds strings");
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(store.rows())};
    const ColumnDesc& d = store.desc(c.handle);
    if (d.width > 1) shape.push_back(d.width);
    if (d.type == ColumnType::kColor) shape.push_back(4);
    py::array view(dtype_of(d.type), shape, {}, store.data(c.handle));
    return view.attr("copy")();
  }

  std::string state_hash(int w) {
    live();
    OneThreadAtATime::check(busy_);
    if (w < 0 || w >= worlds_)
      throw py::index_error(fmt::format("world {} of {} worlds", w, worlds_));
    return fmt::format("{:016x}", sims_[w]->state().hash());
  }

  void close() {
    OneThreadAtATime::check(busy_);
    terms_of_.clear();
    for (auto& s : sims_)
      if (s) s->finish();
    sims_.clear();
    registries_.clear();
    closed_ = true;
  }

  int worlds() const { return worlds_; }
  const std::vector<std::string>& agent_names() const { return agent_names_; }
  std::size_t obs_dim() const { return obs_dim_; }
  std::size_t action_dim() const { return action_dim_; }
  const std::vector<double>& low() const { return low_; }
  const std::vector<double>& high() const { return high_; }
  int threads() const { return pool_->size(); }
  std::int64_t length_ticks() const {
    live();
    return sims_[0]->model().length_ticks;
  }
  double tick_s() const {
    live();
    return static_cast<double>(sims_[0]->model().tick_period_ns) / 1e9;
  }
  /// Each world's seed for its first episode after reset.
  std::vector<std::uint64_t> seeds() const {
    live();
    return seeds_;
  }
  std::vector<std::string> observation_columns() const {
    std::vector<std::string> out;
    for (const auto& c : obs_) out.push_back(c.name);
    return out;
  }
  PyTerms reward_terms() const {
    PyTerms out;
    for (const Term& t : terms_) out.emplace_back(t.type, t.weight, t.params.values());
    return out;
  }
  std::vector<std::string> action_columns() const {
    std::vector<std::string> out;
    for (const auto& c : acts_) out.push_back(c.name);
    return out;
  }

 private:
  static py::dtype dtype_of(ColumnType t) {
    switch (t) {
      case ColumnType::kU8:
      case ColumnType::kColor:
        return py::dtype::of<std::uint8_t>();
      case ColumnType::kU16:
        return py::dtype::of<std::uint16_t>();
      case ColumnType::kU32:
      case ColumnType::kTag:
        return py::dtype::of<std::uint32_t>();
      case ColumnType::kI32:
        return py::dtype::of<std::int32_t>();
      case ColumnType::kF32:
        return py::dtype::of<float>();
      default:
        return py::dtype::of<double>();
    }
  }

  void live() const {
    if (closed_) throw py::value_error("the environment is closed (close() or a with block's end)");
  }

  Slot slot(const ColumnStore& store, const std::string& name) const {
    const ColumnHandle h = store.find(name);
    if (h == kNoColumn) {
      std::vector<std::string> names;
      for (const auto& d : store.schema()) names.push_back(d.name);
      throw py::key_error("no robot column '" + name + "' in this run (its columns: " +
                          fmt::to_string(fmt::join(names, ", ")) + ")" + did_you_mean(name, names));
    }
    const ColumnDesc& d = store.desc(h);
    return {name, h, d.type, d.width * (d.type == ColumnType::kColor ? 4u : 1u)};
  }

  void seed_all(std::uint64_t s) {
    seeds_.resize(worlds_);
    for (int w = 0; w < worlds_; ++w) seeds_[w] = s + static_cast<std::uint64_t>(w);
  }

  /// World w's seed for its current episode.
  std::uint64_t episode_seed(int w) const {
    return seeds_[w] + static_cast<std::uint64_t>(episode_[w]) * kEpisodeSeedStep;
  }

  /// How each world starts its current episode (begin_episodes).
  enum Start : std::uint8_t { kGoesOn, kMade, kReset };

  /// Readies the current episode of the worlds `due(w)` selects: a world not yet made, or
  /// whose run cannot take another seed, is made anew here, one after another (loading a file
  /// is not made for threads); the others are to be reset (start_episode), in parallel.
  template <typename Due>
  std::vector<Start> begin_episodes(Due due) {
    std::vector<Start> how(worlds_, kGoesOn);
    for (int w = 0; w < worlds_; ++w) {
      if (!due(w)) continue;
      if (sims_[w] && sims_[w]->reset_problem(episode_seed(w)).empty()) {
        how[w] = kReset;
      } else {
        make_world(w);
        how[w] = kMade;
      }
    }
    return how;
  }

  /// World w's episode starts (`how` from begin_episodes: the experiment's reset with the
  /// episode's seed, each world resetting only its own run); its first observations.
  void start_episode(std::size_t w, Start how) {
    if (how == kReset) {
      sims_[w]->reset(episode_seed(static_cast<int>(w)));
      if (sims_[w]->state().robot_count() != robot_count_)
        throw RunError(fmt::format(
            "world {}: after the reset it has {} robots, not {} (an Env needs a fixed set of "
            "robots)",
            w, sims_[w]->state().robot_count(), robot_count_));
    }
    if (!terms_of_[w].empty()) {
      const StateRewardWorld world(sims_[w]->model(), sims_[w]->state());
      for (auto& term : terms_of_[w]) term->reset(world);
    }
    ended_[w] = 0;
    gather(w, false);
  }

  /// (Re)makes world w for its current episode: a new run of the experiment (the loop
  /// functions' and controllers' start), seed from seeds_[w] and episode_[w].
  void make_world(int w) {
    // The new run is made whole before the old one goes, so that a failure (a file that no
    // longer loads) leaves the world as it was, never without a run.
    auto registry = std::make_unique<PluginRegistry>();
    register_builtins(*registry);
    ExperimentOverrides o;
    o.threads = 1;  // the worlds are the parallel work
    o.length_s = length_;
    o.keep_placement = true;  // for the episodes' resets with their seeds
    if (!seeds_.empty()) o.seed = episode_seed(w);
    Diagnostics d;
    auto ex = parse_experiment(text_, path_, *registry, o, d);
    if (!ex) throw ExperimentError(d.str());
    ex->logs.clear();
    if (w == 0 && agents_.empty()) learning_ = ex->learning;
    if (seeds_.empty()) {
      // No seed given: the experiment's own, as world 0's; the others follow from it.
      seed_all(ex->model->seed);
      if (w != 0 || episode_[w] != 0) {
        make_world(w);
        return;
      }
    }
    auto sim = std::make_unique<Simulation>(std::move(*ex), *registry);
    sim->enable_reset();
    sim->start();
    if (!agents_.empty()) {
      if (sim->state().robot_count() != robot_count_)
        throw ExperimentError(
            fmt::format("world {} has {} robots, world 0 {} (an Env needs the "
                        "same robots in every world)",
                        w, sim->state().robot_count(), robot_count_));
    } else {
      robot_count_ = sim->state().robot_count();
    }
    std::vector<std::unique_ptr<Reward>> terms;
    if (rewards_ready_) terms = new_rewards(*registry, sim->state());
    // The ended run goes after its successor is in place: its reward terms, its loop
    // functions' destroy, then its registry (declared first, so destroyed last: the run and
    // the terms may come from its libraries).
    auto old_registry = std::move(registries_[w]);
    auto old_sim = std::move(sims_[w]);
    auto old_terms = std::move(terms_of_[w]);
    registries_[w] = std::move(registry);
    sims_[w] = std::move(sim);
    terms_of_[w] = std::move(terms);
    old_terms.clear();
    if (old_sim) old_sim->finish();
  }

  /// World w's reward terms, once the terms are known (the constructor, then make_world).
  void make_rewards(int w) {
    terms_of_[w] = new_rewards(*registries_[w], sims_[w]->state());
    rewards_ready_ = true;
  }

  std::vector<std::unique_ptr<Reward>> new_rewards(const PluginRegistry& registry,
                                                   const WorldState& state) const {
    std::vector<std::unique_ptr<Reward>> out;
    const StateRewardSetup setup(state.robots, agents_);
    for (const Term& t : terms_) {
      try {
        out.push_back(make_reward(registry, t.type, t.params, setup));
      } catch (const SetupError& e) {
        throw py::value_error(std::string("reward term '") + t.type + "': " + e.what());
      }
    }
    return out;
  }

  /// Python's parameters of reward term `type`, checked against its ParamDocs (defaults
  /// filled in), as the experiment file's are at load.
  Params checked_params(const std::string& type,
                        const std::map<std::string, std::string>& given) const {
    const PluginRegistry& reg = *registries_[0];
    const PluginInfo* info = reg.find(PluginKind::kReward, type);
    const auto names = reg.names(PluginKind::kReward);
    if (!info)
      throw py::value_error("no reward term '" + type +
                            "' (expected one of: " + fmt::to_string(fmt::join(names, ", ")) +
                            "; plug-in libraries are named in the experiment's <plugins>)" +
                            did_you_mean(type, names));
    std::map<std::string, std::string> values;
    std::vector<std::string> known;
    for (const ParamDoc& p : info->params) known.push_back(p.name);
    for (const auto& [name, text] : given) {
      const auto doc = std::find_if(info->params.begin(), info->params.end(),
                                    [&](const ParamDoc& p) { return p.name == name; });
      if (doc == info->params.end())
        throw py::value_error(
            "reward term '" + type + "' has no parameter '" + name + "'" +
            (known.empty() ? std::string(" (it has none)")
                           : " (its parameters: " + fmt::to_string(fmt::join(known, ", ")) + ")") +
            did_you_mean(name, known));
      const bool number = doc->type == "real" || doc->type == "integer";
      if (number && !parse_real(text))
        throw py::value_error("reward term '" + type + "': " + name + "=" + text +
                              " is not a number (" + doc->doc + ")");
      values[name] = text;
    }
    for (const ParamDoc& p : info->params) {
      if (values.count(p.name)) continue;
      if (p.default_value.empty() && p.type != "string")
        throw py::value_error("reward term '" + type + "' needs parameter '" + p.name + "' (" +
                              p.doc + ")");
      if (!p.default_value.empty()) values[p.name] = p.default_value;
    }
    return Params(std::move(values));
  }

  /// Checks `actions` whole (dtype, shape, every value finite and within bounds) before
  /// writing any of it, so that a refused step leaves every world as it was.
  void write_actions(const py::handle& given) {
    if (!py::isinstance<py::array>(given))
      throw py::type_error("actions must be a numpy array of shape (worlds, agents, action_dim)");
    const auto raw = py::reinterpret_borrow<py::array>(given);
    const char kind = raw.dtype().kind();
    if (kind != 'f' && kind != 'i' && kind != 'u')
      throw py::type_error(fmt::format("actions must be real numbers, not dtype {}",
                                       std::string(py::str(raw.dtype()))));
    const std::vector<py::ssize_t> want{worlds_, static_cast<py::ssize_t>(agents_.size()),
                                        static_cast<py::ssize_t>(action_dim_)};
    const std::vector<py::ssize_t> got(raw.shape(), raw.shape() + raw.ndim());
    if (got != want)
      throw py::value_error(
          fmt::format("actions must have shape ({}) (worlds, agents, "
                      "action_dim), not ({})",
                      fmt::join(want, ", "), fmt::join(got, ", ")));
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(raw);
    const double* v = a.data();
    const std::size_t A = agents_.size(), D = action_dim_;
    // One pass, branch-free per value (NaN fails both comparisons, so the bounds test alone
    // refuses it); the first bad value is looked up only when there is one.
    const std::size_t n = static_cast<std::size_t>(worlds_) * A * D;
    bool ok = true;
    // (The bounds without infinities, so that the same test refuses an infinite value.)
    std::vector<double> lo(D), hi(D);
    for (std::size_t k = 0; k < D; ++k) {
      lo[k] = std::max(low_[k], std::numeric_limits<double>::lowest());
      hi[k] = std::min(high_[k], std::numeric_limits<double>::max());
    }
    for (std::size_t row = 0; row < n; row += D)
      for (std::size_t k = 0; k < D; ++k) ok &= v[row + k] >= lo[k] && v[row + k] <= hi[k];
    for (std::size_t i = 0; !ok && i < n; ++i) {
      const std::size_t k = i % D;
      if (std::isfinite(v[i]) && v[i] >= low_[k] && v[i] <= high_[k]) continue;
      const std::size_t agent = (i / D) % A, w = i / (D * A);
      std::size_t col = 0, first = 0;
      while (k >= first + acts_[col].values) first += acts_[col++].values;
      throw py::value_error(fmt::format(
          "world {}, robot '{}': action for column '{}'{} is {} ({}; the step did not run)", w,
          agent_names_[agent], acts_[col].name,
          acts_[col].values > 1 ? fmt::format(" [{}]", k - first) : std::string(), v[i],
          std::isfinite(v[i]) ? fmt::format("expected {} to {}", low_[k], high_[k])
                              : std::string("actions must be finite numbers")));
    }
    for (int w = 0; w < worlds_; ++w) {
      if (ended_[w]) continue;  // its next step starts a new episode instead
      ColumnStore& store = sims_[w]->state_between_steps().robots;
      for (std::size_t agent = 0; agent < A; ++agent) {
        const double* src = v + (static_cast<std::size_t>(w) * A + agent) * D;
        for (const Slot& c : acts_) {
          double* dst = static_cast<double*>(store.data(c.handle)) + agents_[agent] * c.values;
          std::copy(src, src + c.values, dst);
          src += c.values;
        }
      }
    }
  }

  /// World w's observations, and after a step its rewards and flags; marks its end.
  void gather(std::size_t w, bool stepped) {
    const Simulation& sim = *sims_[w];
    const ColumnStore& store = sim.state().robots;
    const std::size_t A = agents_.size();
    double* obs = obs_data_ + w * A * obs_dim_;
    for (std::size_t agent = 0; agent < A; ++agent) {
      double* out = obs + agent * obs_dim_;
      const std::size_t row = agents_[agent];
      for (const Slot& c : obs_) {
        const void* base = store.data(c.handle);
        for (std::size_t k = 0; k < c.values; ++k) out[k] = value(c.type, base, row * c.values + k);
        out += c.values;
      }
    }
    double* reward = reward_data_ + w * A;
    bool* term = term_data_ + w * A;
    bool* trunc = trunc_data_ + w * A;
    tick_data_[w] = sim.state().tick;
    episode_data_[w] = episode_[w];
    std::fill(reward, reward + A, 0.0);
    std::fill(term, term + A, false);
    std::fill(trunc, trunc + A, false);
    if (!stepped) return;
    add_rewards(w, sim, reward);
    if (sim.done()) {
      const bool truncated =
          sim.model().length_ticks > 0 && sim.state().tick >= sim.model().length_ticks;
      std::fill(truncated ? trunc : term, (truncated ? trunc : term) + A, true);
      ended_[w] = 1;
    }
  }

  static double value(ColumnType t, const void* base, std::size_t i) {
    switch (t) {
      case ColumnType::kU8:
      case ColumnType::kColor:
        return static_cast<const std::uint8_t*>(base)[i];
      case ColumnType::kU16:
        return static_cast<const std::uint16_t*>(base)[i];
      case ColumnType::kU32:
      case ColumnType::kTag:
        return static_cast<const std::uint32_t*>(base)[i];
      case ColumnType::kI32:
        return static_cast<const std::int32_t*>(base)[i];
      case ColumnType::kF32:
        return static_cast<const float*>(base)[i];
      case ColumnType::kF64:
        return static_cast<const double*>(base)[i];
      case ColumnType::kString:
        break;
    }
    return 0;
  }

  /// The terms, in the order given, each weighted, added per agent in a fixed order.
  void add_rewards(std::size_t w, const Simulation& sim, double* out) {
    if (terms_of_[w].empty()) return;
    const StateRewardWorld world(sim.model(), sim.state());
    const std::size_t A = agents_.size();
    std::vector<double>& values = reward_values_[w];
    values.resize(A);
    for (std::size_t k = 0; k < terms_.size(); ++k) {
      std::fill(values.begin(), values.end(), 0.0);
      terms_of_[w][k]->compute(world, agents_, values);
      const double weight = terms_[k].weight;
      for (std::size_t i = 0; i < A; ++i) out[i] += weight * values[i];
    }
  }

  py::dict infos() const {
    py::dict d;
    d["tick"] = ticks_;
    d["episode"] = episodes_;
    return d;
  }

  std::string path_, text_;
  int worlds_;
  bool autoreset_;
  std::optional<double> length_;
  std::vector<std::uint64_t> seeds_;  ///< per world, its first episode's; empty: the file's
  LearningSpec learning_;             ///< the file's <learning>
  std::vector<Term> terms_;
  bool rewards_ready_ = false;  ///< terms_ is final: worlds made from now on get theirs
  std::unique_ptr<ThreadPool> pool_;
  // Per world: its registry (plug-in libraries its file names), its run, its episode count
  // since reset, and whether its episode ended at the last step.
  std::vector<std::unique_ptr<PluginRegistry>> registries_;
  std::vector<std::unique_ptr<Simulation>> sims_;
  std::vector<std::vector<std::unique_ptr<Reward>>> terms_of_;  ///< per world, per term
  std::vector<std::vector<double>> reward_values_;              ///< per world: one term's values
  std::vector<std::int64_t> episode_;
  std::vector<std::uint8_t> ended_;
  std::vector<std::uint32_t> agents_;  ///< rows, the same in every world
  std::vector<std::string> agent_names_;
  std::size_t robot_count_ = 0;
  std::vector<Slot> obs_, acts_;
  std::size_t obs_dim_ = 0, action_dim_ = 0;
  std::vector<double> low_, high_;
  // The arrays step() returns, overwritten in place (worker threads write their worlds' rows).
  py::array_t<double> observations_, rewards_;
  py::array_t<bool> terminations_, truncations_;
  py::array_t<std::int64_t> ticks_, episodes_;
  double *obs_data_ = nullptr, *reward_data_ = nullptr;
  bool *term_data_ = nullptr, *trunc_data_ = nullptr;
  std::int64_t *tick_data_ = nullptr, *episode_data_ = nullptr;
  bool started_ = false, closed_ = false;
  std::atomic<bool> busy_{false};
};

}  // namespace

void bind_worlds(py::module_& m) {
  py::class_<Worlds>(m, "Worlds",
                     "W worlds of one experiment stepped together in this process "
                     "(fleetsim.Env wraps it; docs/python.md)")
      .def(py::init<const std::string&, std::optional<std::string>, int, int,
                    std::optional<std::vector<std::string>>,
                    std::optional<std::vector<std::string>>, std::optional<PyTerms>, bool,
                    std::optional<double>, std::optional<std::uint64_t>>(),
           py::arg("path"), py::kw_only(), py::arg("text") = py::none(), py::arg("worlds") = 1,
           py::arg("threads") = 1, py::arg("observations") = py::none(),
           py::arg("actions") = py::none(), py::arg("rewards") = py::none(),
           py::arg("autoreset") = true, py::arg("length") = py::none(),
           py::arg("seed") = py::none(),
           "Loads the experiment `path` once per world. The agents are the robots whose "
           "controller is `external`. observations: column names concatenated per agent; "
           "actions: command column names; rewards: [(type, weight, {parameter: text})], reward "
           "terms (built-in target, centroid, collision, neighbours, or a plug-in's). Each of "
           "the three, when None, is the experiment's <learning> one (else proximity, the "
           "wheels, no reward).")
      .def("reset", &Worlds::reset, py::arg("seed") = py::none(),
           "Starts every world's first episode (seed: an int s, world w then runs s + w; one "
           "int per world; None: as before); returns (observations, infos).")
      .def("step", &Worlds::step, py::arg("actions"),
           "One tick of every world; returns (observations, rewards, terminations, "
           "truncations, infos), the same arrays each time.")
      .def("column", &Worlds::column, py::arg("world"), py::arg("name"),
           "Column `name` of every robot of world `world`, a copy.")
      .def("state_hash", &Worlds::state_hash, py::arg("world"), "World `world`'s state hash.")
      .def("close", &Worlds::close, "Ends every world's run. Idempotent.")
      .def_property_readonly("worlds", &Worlds::worlds)
      .def_property_readonly("agent_names", &Worlds::agent_names)
      .def_property_readonly("obs_dim", &Worlds::obs_dim)
      .def_property_readonly("action_dim", &Worlds::action_dim)
      .def_property_readonly("action_low", &Worlds::low)
      .def_property_readonly("action_high", &Worlds::high)
      .def_property_readonly("threads", &Worlds::threads)
      .def_property_readonly("length_ticks", &Worlds::length_ticks)
      .def_property_readonly("tick_s", &Worlds::tick_s)
      .def_property_readonly("seeds", &Worlds::seeds,
                             "Each world's seed for its first episode after reset.")
      .def_property_readonly("observation_columns", &Worlds::observation_columns)
      .def_property_readonly("action_columns", &Worlds::action_columns)
      .def_property_readonly("reward_terms", &Worlds::reward_terms,
                             "The reward terms in use: [(type, weight, {parameter: text})].");
}

}  // namespace fleetsim::python
