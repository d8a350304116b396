// Starting federations: every node on this machine (threads for the in-process transport,
// child processes for ZeroMQ), or one node of a federation spread over several machines.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "federation/federation_file.hpp"
#include "federation/node_runner.hpp"
#include "transport/zmq_transport.hpp"

namespace fleetsim::federation {

/// Runs every node as a thread on the in-process transport; waits for all. When one fails the
/// others are stopped. Returns kExitOk or kExitRuntimeError.
int launch_threads(const Federation& fed, const RunOptions& options);

/// Runs every node as a child process (`options.node_program node FED --name N ...`, or the
/// node's own program) on shared memory or ZeroMQ (options.transport); waits for all. When
/// one fails the others get a few seconds to notice and stop by themselves, then are killed:
/// no process is left behind. Returns kExitOk or kExitRuntimeError.
int launch_processes(const Federation& fed, const std::string& federation_path,
                     const RunOptions& options);

/// Runs node `name` of `fed` in this process, on shared memory or ZeroMQ
/// (options.transport, transport::use_shm). Returns an exit status.
int run_node_process(const Federation& fed, const std::string& name, const RunOptions& options);

/// The ZeroMQ options of node `name`: its CURVE secret key from `secret_keys_dir`/NAME.key
/// when the federation is authenticated (std::runtime_error naming the node when it cannot be
/// read); a warning when it listens on a network address without authentication.
/// `io_thread`: "any" (ZeroMQ's placement) or "dedicated" (the I/O thread pinned to a CPU per
/// node and SCHED_BATCH: faster when the machine runs nothing else, see zmq_transport.hpp).
transport::ZmqOptions zmq_options_for(const Federation& fed, const std::string& name,
                                      const std::string& secret_keys_dir,
                                      const std::string& io_thread = "any");

/// The path of the running executable (/proc/self/exe resolved).
std::string self_executable();

/// Starts program args[0] with arguments `args` (and this process's environment), its stdout
/// on `stdout_fd` when that is >= 0. Returns 0 and the child in `pid`, or posix_spawn's error.
int spawn_program(std::vector<std::string> args, pid_t& pid, int stdout_fd = -1);

/// Fills the empty endpoints of `fed` with ipc://DIR/NODE.
void assign_ipc_endpoints(Federation& fed, const std::string& dir);

}  // namespace fleetsim::federation
