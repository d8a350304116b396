// Running one experiment on several processes (docs/distributed.md): which process simulates
// which engine regions, starting the processes (threads with the in-process transport, child
// processes with ZeroMQ over ipc:// or tcp://), running each one's share and bringing their
// figures together.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/exchanges.hpp"
#include "fleetsim/plugin.hpp"
#include "scenario/experiment.hpp"
#include "sim/checkpoint.hpp"
#include "sim/distribution.hpp"
#include "time/pacer.hpp"
#include "transport/port.hpp"

namespace fleetsim {
class Simulation;
}

namespace fleetsim::distributed {

/// How the processes of a swarm run meet: threads of one process, processes linked by
/// shared-memory rings, or by ZeroMQ over ipc:// or tcp:// (loopback).
enum class TransportKind { kInproc, kShm, kIpc, kTcp };

struct SwarmRunOptions {
  int processes = 1;
  TransportKind transport = TransportKind::kShm;
  SyncMode sync = SyncMode::kDsaam;
  std::uint32_t jitter_us = 0;
  std::size_t part_bytes = std::size_t{32} << 20;  ///< see Distribution::part_bytes
  /// Each process holds only its part of the world when the run allows it (see
  /// Distribution::partition_storage); false: every process holds the whole world.
  bool partition_storage = true;
  bool progress = false;  ///< a progress bar on stderr (process 0)
  /// Checkpoints every `checkpoint_every_s` wall seconds (0: none) into `checkpoint_dir`,
  /// written by process 0 (docs/checkpoints.md).
  double checkpoint_every_s = 0;
  std::string checkpoint_dir = "checkpoints";
  int checkpoint_keep = 2;  ///< the newest this many are kept
  /// A checkpoint to resume from, already checked against the experiment; or null.
  std::shared_ptr<const Checkpoint> resume;
  /// Process 0 holds the run back to the wall clock (docs/distributed.md, "Pacing"): tick T is
  /// reached at the loop's start + (T - the tick it started from) / speed-up; the others wait for
  /// it. Its lag is in the report.
  time::Pacer pacing{time::TimeMode::kAsFastAsPossible, 1.0};
  // Process 0's hooks: what the command line attaches to a run (progress, pacing, Ctrl-C, the
  // ROS 2 bridge). No other process calls them.
  /// With the simulation made, before its start() (the header and first frame of its logs).
  std::function<void(Simulation&)> before_start;
  /// Before the first step, with the tick the run starts from (0, or its checkpoint's).
  std::function<void(Tick from)> on_start;
  /// After every tick; return false to stop the run ("interrupted at tick T").
  std::function<bool(Tick tick, Tick total)> on_tick;
  /// Every 200 ms while it waits before the run (a primary for its secondaries); return false
  /// to stop waiting ("interrupted while waiting").
  std::function<bool()> on_wait;
  /// Just before and just after every step, with the simulation.
  std::function<void(Simulation&)> before_step, after_step;
  /// Every process, not only process 0: just before every step (before before_step), with
  /// its simulation; called from each process's thread (with `inproc`, at once).
  std::function<void(Simulation&)> each_before_step;
  /// Every process: just after every step (after after_step), with its simulation; called
  /// from each process's thread (with `inproc`, at once).
  std::function<void(Simulation&)> each_after_step;
  /// Interventions may land (Distribution::interventions, Distribution::every_robot_everywhere).
  bool interventions = false, every_robot_everywhere = false;
  /// After each checkpoint file is written and renamed into place, with its path.
  std::function<void(const std::string& path)> on_checkpoint;
  /// Every process: set to its run's tick after every step (a watchdog reports it), or null.
  std::atomic<Tick>* progress_tick = nullptr;
};

/// Which process simulates what (docs/distributed.md, "Which process simulates what").
struct Assignment {
  /// Per region: the process simulating it whole, or -1 for a region split over the domains.
  std::vector<int> region_process;
  Domains domains;  ///< one per process; empty when every region is simulated whole
};

/// Whether the regions of engine type `type` may be split over domains (kinematics2d and
/// pointmass3d); the others (dynamics2d, plug-in types) are simulated whole by one process.
bool splits_over_domains(const std::string& type);

/// Which process simulates what: the experiment's <distribution> when it lists regions
/// (every region whole), else automatic: the arena in domains by recursive bisection of the
/// robots' positions at the start, each region of a type that splits shared by them and each
/// other region whole on the process whose domain holds most of its robots (ties: the lowest
/// index; none: the domain of its centre). Without a region that splits, the regions in
/// decreasing order of their robots (ties by order in the file) each go to the process with
/// the fewest robots so far (ties: the lowest index). A pure function of the experiment.
/// Throws std::invalid_argument (a user error) when the run cannot use `processes` or the
/// <distribution> does not fit; `how` is the option that sets the count, for its message
/// ("--processes", "mpirun -n").
Assignment assign(const Experiment& ex, int processes, const std::string& how = "--processes");

/// What one process did.
struct ProcessReport {
  int process = 0;
  std::vector<std::string> regions;
  /// Its domain at the end (x min, y min, x max, y max, within the arena), when the run was
  /// split over domains; empty otherwise.
  std::vector<double> domain;
  bool ok = false;
  std::string error;
  /// The process stopped because another one failed or left (its error says which).
  bool stopped_by_peer = false;
  Tick ticks = 0;
  std::uint64_t robot_steps = 0;
  std::uint64_t state_hash = 0;
  std::size_t robots = 0;
  bool partitioned = false;  ///< it held only its part of the world (Simulation::partitioned)
  std::string status;
  double loop_wall_seconds = 0;
  int threads = 0;                   ///< its worker threads
  std::uint64_t peak_rss_bytes = 0;  ///< its process's peak resident memory (threads: shared)
  /// Its process's resident memory after the last tick (before the end's gather): what a
  /// process needs while it runs, once the load is behind it.
  std::uint64_t rss_end_bytes = 0;
  double max_lag_seconds = 0;  ///< process 0: how far behind the wall clock it fell (paced runs)
  std::vector<double> phase_seconds;
  ExchangeStats exchange;
  std::vector<std::string> checkpoints;  ///< the checkpoint files process 0 wrote and kept
};

/// A loaded experiment and the registry it was loaded with (which must outlive its run).
struct LoadedExperiment {
  Experiment experiment;
  std::unique_ptr<PluginRegistry> registry;
};
/// Loads the experiment; nullopt after printing its errors.
using Loader = std::function<std::optional<LoadedExperiment>()>;

/// The whole run: every process's report (index = process). `load` is called once per
/// in-process thread; ZeroMQ children are forked after one load and share it. A failure
/// inside a process is in its report; std::invalid_argument for a user error found before any
/// process starts (the assignment), std::runtime_error when a process cannot be started.
std::vector<ProcessReport> run_swarm(const Loader& load, const SwarmRunOptions& options);

// Building blocks (also of network_run.cpp).

/// Runs process `p` of the run on `port`: its share of the experiment, to the end. Never
/// throws: a failure is in the report.
ProcessReport run_process(LoadedExperiment& loaded, int p, const Assignment& owner,
                          const SwarmRunOptions& options, transport::Port& port);
/// Makes a process's exchange, given the rounds each tick has (distributed/exchanges.hpp).
using ExchangeMaker = std::function<std::unique_ptr<PortExchange>(int rounds_per_tick)>;
/// Runs process `p` of the run: its share of the experiment, to the end, on the exchange `make`
/// makes (none when null: the whole run is here). Never throws: a failure is in the report, and
/// the exchange is told of it (PortExchange::fail).
ProcessReport run_share(LoadedExperiment& loaded, int p, const Assignment& owner,
                        const SwarmRunOptions& options, const ExchangeMaker& make);
/// Runs the whole experiment in this process (`options.processes` is taken as 1): the same
/// loop, hooks, checkpoints and report as a process of several, without an exchange.
ProcessReport run_alone(LoadedExperiment& loaded, const SwarmRunOptions& options);
/// The names of the regions `owner` gives process p (whole, or its domain's share of them).
std::vector<std::string> region_names(const WorldModel& model, const Assignment& owner, int p);
/// A free block of `n` TCP ports on `host` (an IPv4 address), checked by binding each (another
/// program may still take one before the run binds it, which the run then reports).
int free_port_block(int n, const std::string& host);
/// A process's port log (refused messages, refused connections): one line on stderr.
void log_refusal(const std::string& line);
/// A report as one line of JSON, and back (throws on malformed text).
std::string report_to_json(const ProcessReport& r);
ProcessReport report_from_json(const std::string& text);

}  // namespace fleetsim::distributed
