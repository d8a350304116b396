// One experiment over the ranks of an MPI job (docs/distributed.md, "On a cluster: MPI"):
// `mpirun -n P fleetsim run EXPERIMENT` or `srun -n P fleetsim run EXPERIMENT`. Rank r is
// process r of the run, as with `--processes P` on one machine: the same regions, rounds and
// bits; the rounds go over MPI's collectives instead of a transport port.
#pragma once

#include <string>
#include <vector>

#include "distributed/swarm_run.hpp"

namespace fleetsim::distributed {

/// Whether this fleetsim was built with MPI (Open MPI from Debian).
bool mpi_built_in();

/// Whether this process is one rank of an MPI job of several, started by mpirun, mpiexec or
/// srun (from the environment their launchers set; known before MPI_Init).
bool mpi_launched();
/// This process's rank in that job (0 when not launched so).
int mpi_launched_rank();

/// This rank's share of the run. Every rank checks that the others run the same files (the
/// experiment, plug-in libraries and files its parameters name), then runs as process RANK.
/// Rank 0's result lists every rank's report (index = rank); another rank's, its own. A rank's
/// failure stops the others at their next round, naming it, its host and its error.
/// std::invalid_argument for a user error found before the run (on every rank alike: too many
/// ranks for the regions, different files), std::runtime_error when MPI cannot start.
std::vector<ProcessReport> run_mpi(const Loader& load, const SwarmRunOptions& options);

}  // namespace fleetsim::distributed
