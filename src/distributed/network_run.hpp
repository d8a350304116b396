// One experiment over several machines (docs/distributed.md, "Several machines"): Gazebo's
// primary and secondaries. The primary listens; secondaries announce themselves with the
// content hashes of the files they run (the experiment, the plug-in libraries, the files its
// parameters name); the primary checks them against its own, refusing a secondary that runs
// other files (naming the file), gives every process its index and every process's address,
// and the run goes on as on one machine (each process its regions, DSAAM or lockstep rounds,
// heartbeats); at the end the secondaries send their figures to the primary.
#pragma once

#include <string>
#include <vector>

#include "distributed/swarm_run.hpp"

namespace fleetsim::distributed {

struct NetworkOptions {
  bool primary = false;
  int secondaries = 0;            ///< primary: how many to wait for
  std::string listen;             ///< tcp://ADDR:PORT this machine binds (its links use PORT..)
  std::string primary_address;    ///< secondary: tcp://HOST:PORT of the primary's listen
  double connect_timeout_s = 10;  ///< secondary: how long to wait for the primary's answer
  /// Authentication (CURVE; docs/distributed.md): this machine's secret key file; with it the
  /// primary admits only secondaries whose public key is in `public_keys_dir` (DIR/*.pub,
  /// each file's name naming the machine), and a secondary checks the primary's key
  /// (`primary_key_file`). The links between processes are then authenticated as well.
  std::string secret_key_file;
  std::string public_keys_dir;   ///< primary
  std::string primary_key_file;  ///< secondary
};

/// This machine's process. The primary's result lists every process's report (the
/// secondaries' as they sent them at the end); a secondary's, its own. std::invalid_argument
/// for a user error found before the run (refused by the primary: status 2), std::runtime_error
/// when the run cannot start (no primary within the timeout, an address in use: status 1).
std::vector<ProcessReport> run_network(const Loader& load, const SwarmRunOptions& options,
                                       const NetworkOptions& network);

}  // namespace fleetsim::distributed
