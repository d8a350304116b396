// Checkpoints (docs/checkpoints.md): a run's whole state at the end of a tick, in one file that
// a later run resumes from, on one process or several, and ends with the same final state and
// the same log as a run never interrupted.
//
// File: "FLEETCKP", u32 format version, u32 flags (0), u64 body size, u64 stored size, u64
// checksum (of these 32 bytes and the stored body), then the body compressed with zstd:
//   str fleetsim version, str experiment path, u32 n, n x (str what, str name, str content
//   hash) for the files the run reads, u64 start hash, i64 tick, u64 state hash, u64 size and
//   the simulation's saved state (Simulation, simulation_checkpoint.cpp).
// Strings are u32 length + bytes; everything little-endian.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleetsim/plugin.hpp"
#include "fleetsim/types.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {

/// A checkpoint that cannot be read, or cannot resume this run.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a checkpoint can only be resumed with.
struct CheckpointIdentity {
  std::string version;     ///< fleetsim's
  std::string experiment;  ///< the experiment file's path, as the run was given it
  /// The files the run reads (run_files()): what, file name, content hash.
  std::vector<std::array<std::string, 3>> files;
  /// The world as loaded, before any tick (Experiment::world_fingerprint: the same whether the
  /// load placed the robots or each process places its part), with the seed and the tick
  /// length: what options such as --seed change. (--length is not in it: a resumed run may be
  /// made longer.)
  std::uint64_t start_hash = 0;
};

struct Checkpoint {
  CheckpointIdentity identity;
  Tick tick = 0;
  std::uint64_t state_hash = 0;     ///< WorldState::hash() at the checkpoint
  std::vector<std::uint8_t> state;  ///< the simulation's saved state
};

/// The identity of a run of `ex`, freshly loaded (before its Simulation is made).
CheckpointIdentity identity_of(const Experiment& ex, const PluginRegistry& registry);
/// Why a checkpoint of `saved` cannot resume a run of `now`, naming what differs; empty if it
/// can.
std::string identity_mismatch(const CheckpointIdentity& saved, const CheckpointIdentity& now);

std::vector<std::uint8_t> encode_checkpoint(const Checkpoint& c);
/// Throws CheckpointError ("`what` is not a fleetsim checkpoint", "... is corrupt", "... has
/// checkpoint format N; this fleetsim reads format M") for anything but a whole, intact
/// checkpoint.
Checkpoint decode_checkpoint(std::span<const std::uint8_t> bytes, const std::string& what);

/// Reads a checkpoint file, or the newest checkpoint (highest tick) in a directory.
Checkpoint read_checkpoint(const std::string& path, std::string* chosen = nullptr);

/// Writes a run's checkpoints into a directory as STEM-tTICK.ckpt, each atomically (a
/// temporary file, flushed, then renamed: a run killed while writing leaves the previous one
/// whole), keeping the newest `keep`.
class CheckpointFiles {
 public:
  CheckpointFiles(std::string dir, std::string stem, int keep = 2);
  /// Returns the path written. Throws CheckpointError.
  std::string write(Tick tick, const std::vector<std::uint8_t>& bytes);
  const std::vector<std::string>& written() const { return written_; }

 private:
  std::string dir_, stem_;
  int keep_;
  std::vector<std::string> written_;  ///< the newest last; older ones removed
};

/// Asks a simulation for a checkpoint every `every_s` wall seconds (0: never), counted from
/// its creation and from each request. Call after every step.
class CheckpointTimer {
 public:
  explicit CheckpointTimer(double every_s) : every_s_(every_s) {}
  void after_step(Simulation& sim) {
    if (every_s_ <= 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_).count() < every_s_) return;
    last_ = now;
    sim.request_checkpoint();
  }

 private:
  double every_s_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// What a run gives Simulation::enable_checkpoints: each checkpoint of a run whose identity is
/// `id`, encoded and written into `files`.
CheckpointSink checkpoint_sink(CheckpointIdentity id, std::shared_ptr<CheckpointFiles> files);

}  // namespace fleetsim
