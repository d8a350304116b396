#include "distributed/mpi_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <thread>

#ifdef FLEETSIM_HAVE_MPI
// The C API only (Open MPI's mpi.h otherwise pulls in its deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <nlohmann/json.hpp>

#include "distributed/run_files_check.hpp"
#endif

namespace fleetsim::distributed {

namespace {

/// The first of these environment variables that is set, as a number; -1 when none is.
int env_number(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return -1;
}

}  // namespace

bool mpi_launched() {
  // Open MPI's mpirun, MPICH's and Slurm's PMI; PMIx (srun --mpi=pmix) tells no size before
  // MPI_Init. A job of one rank runs as fleetsim does alone.
  const int size = env_number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  return size > 1 || (size < 0 && std::getenv("PMIX_RANK") != nullptr);
}

int mpi_launched_rank() {
  return std::max(0, env_number({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}));
}

#ifndef FLEETSIM_HAVE_MPI

bool mpi_built_in() {
  return false;
}
std::vector<ProcessReport> run_mpi(const Loader&, const SwarmRunOptions&) {
  throw std::runtime_error(
      "this fleetsim was built without MPI (scripts/install-deps.sh installs Open MPI; build "
      "again), so it cannot run as one rank of an MPI job");
}

#else

namespace {

/// MPI for the life of the process: initialised once (a run of several files runs them one
/// after another on the same ranks), finalised at exit.
void ensure_mpi() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return;
  int provided = 0;
  // (Multiple: the watchdog's thread sends and receives beside the run's collectives.)
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init failed");
  // Errors come back as codes (and become exceptions here) instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit([] {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Finalize();
  });
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(code, text, &n);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, n));
}

/// Every rank's bytes, by rank (MPI_Allgather of the sizes, then MPI_Allgatherv), and each
/// rank's `tag` (a small number that travels with its size, 0 to 255).
std::vector<std::vector<std::uint8_t> > all_gather_bytes(
    const std::vector<std::uint8_t>& mine, int ranks, std::uint8_t tag = 0,
    std::vector<std::uint8_t>* tags = nullptr) {
  const auto n = static_cast<std::size_t>(ranks);
  const long long head = static_cast<long long>(mine.size()) * 256 + tag;
  std::vector<long long> heads(n);
  check(MPI_Allgather(&head, 1, MPI_LONG_LONG, heads.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD),
        "MPI_Allgather");
  std::vector<int> counts(n), offsets(n);
  long long total = 0;
  if (tags) tags->resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const long long size = heads[r] / 256;
    if (heads[r] < 0 || size > (1LL << 30))
      throw std::runtime_error("rank " + std::to_string(r) + " sent a round of " +
                               std::to_string(size) + " bytes");
    if (tags) (*tags)[r] = static_cast<std::uint8_t>(heads[r] % 256);
    counts[r] = static_cast<int>(size);
    offsets[r] = static_cast<int>(total);
    total += size;
    if (total > (1LL << 31) - 1)
      throw std::runtime_error("a round of more than 2 GiB over all ranks");
  }
  std::vector<std::uint8_t> flat(static_cast<std::size_t>(total));
  check(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, flat.data(),
                       counts.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::vector<std::uint8_t> > all(n);
  for (std::size_t r = 0; r < n; ++r)
    all[r].assign(flat.begin() + offsets[r], flat.begin() + offsets[r] + counts[r]);
  return all;
}

/// The rounds of a run over MPI_COMM_WORLD. Each is one collective on every rank, in the same
/// order (the run's rounds are a pure function of the experiment). A tag with each rank's size
/// says what it brings: a round's data, the end of its run, or its failure (then the bytes are
/// its error), so that a rank that fails between two rounds stops the others at their next one.
class MpiExchange final : public PortExchange {
 public:
  MpiExchange(int rank, int ranks, std::vector<std::string> hosts)
      : rank_(rank), ranks_(ranks), hosts_(std::move(hosts)) {}

  void close() override { (void)collect(kEnd, {}); }
  void fail(const std::string& why) override {
    try {
      (void)collect(kFailed, std::vector<std::uint8_t>(why.begin(), why.end()));
    } catch (const std::exception&) {  // (another rank failed too)
    }
  }

 protected:
  std::vector<std::vector<std::uint8_t> > round(std::vector<std::uint8_t> mine, bool) override {
    wire_bytes_ += mine.size() * static_cast<std::uint64_t>(ranks_ - 1);
    return collect(kData, mine);
  }

 public:
  std::uint64_t wire_bytes_sent() const override { return wire_bytes_; }

 protected:
  /// The common bytes in one collective, the parts point to point to the peers only: a rank
  /// receives the bulk of a round from the ranks whose domains border its own, not from all.
  RoutedReceived routed_round(RoutedMessage mine, int process, std::span<const int> peers,
                              bool) override {
    static const std::vector<std::uint8_t> kNone;
    std::vector<MPI_Request> sends(peers.size(), MPI_REQUEST_NULL);
    try {
      wire_bytes_ += mine.common.size() * static_cast<std::uint64_t>(ranks_ - 1);
      for (std::size_t k = 0; k < peers.size(); ++k) {
        const auto q = static_cast<std::size_t>(peers[k]);
        const auto& part = q < mine.to.size() ? mine.to[q] : kNone;
        wire_bytes_ += part.size();
        check(MPI_Isend(part.data(), static_cast<int>(part.size()), MPI_BYTE, peers[k], kPartTag,
                        MPI_COMM_WORLD, &sends[k]),
              "MPI_Isend");
      }
      RoutedReceived got;
      got.common = collect(kData, mine.common);  // (a rank that failed says so here)
      got.from.resize(static_cast<std::size_t>(ranks_));
      for (int q : peers) {
        MPI_Status status;
        check(MPI_Probe(q, kPartTag, MPI_COMM_WORLD, &status), "MPI_Probe");
        int count = 0;
        check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
        auto& part = got.from[static_cast<std::size_t>(q)];
        part.resize(static_cast<std::size_t>(std::max(count, 0)));
        check(
            MPI_Recv(part.data(), count, MPI_BYTE, q, kPartTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Recv");
      }
      check(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
      (void)process;
      return got;
    } catch (...) {
      for (MPI_Request& r : sends)
        if (r != MPI_REQUEST_NULL) {
          MPI_Cancel(&r);
          MPI_Request_free(&r);
        }
      throw;
    }
  }

 private:
  enum Kind : std::uint8_t { kData = 'D', kEnd = 'Z', kFailed = 'F' };
  /// The tag of a routed round's parts (point to point; the collectives are apart from them).
  static constexpr int kPartTag = 0x5a17;

  std::vector<std::vector<std::uint8_t> > collect(Kind kind,
                                                  const std::vector<std::uint8_t>& mine) {
    std::vector<std::uint8_t> kinds;
    auto all = all_gather_bytes(mine, ranks_, kind, &kinds);
    for (int r = 0; r < ranks_; ++r) {
      const auto& got = all[static_cast<std::size_t>(r)];
      if (r != rank_ && kinds[static_cast<std::size_t>(r)] == kFailed)
        throw transport::PeerLost("rank " + std::to_string(r),
                                  "rank " + std::to_string(r) + " (" +
                                      hosts_[static_cast<std::size_t>(r)] +
                                      ") failed: " + std::string(got.begin(), got.end()));
    }
    for (int r = 0; r < ranks_; ++r)
      if (kinds[static_cast<std::size_t>(r)] != kind)
        throw std::runtime_error("rank " + std::to_string(r) + " is at another round than rank " +
                                 std::to_string(rank_) + " (a fleetsim of another release?)");
    return all;
  }

  int rank_, ranks_;
  std::uint64_t wire_bytes_ = 0;  ///< wire_bytes_sent()
  std::vector<std::string> hosts_;
};

/// A rank that stops answering (SIGSTOP, a frozen machine) would hold every other in its next
/// collective for ever: MPI has no heartbeat of its own. Each rank's watchdog thread sends the
/// next rank in a ring a heartbeat every 50 ms on a communicator of its own, carrying the tick
/// its run is at; when the previous rank's heartbeats stop for 500 ms (or the milliseconds of
/// FLEETSIM_MPI_SILENCE_MS, for machines so loaded that a thread may wait longer) it says so,
/// naming that rank, its host and its last tick, and aborts the job (MPI_Abort: mpirun ends every
/// rank). A rank leaving in good order sends a last heartbeat that says so. Without
/// MPI_THREAD_MULTIPLE there is no watchdog (docs/distributed.md).
class Watchdog {
 public:
  Watchdog(int rank, int ranks, std::vector<std::string> hosts, const std::atomic<Tick>& tick)
      : rank_(rank), ranks_(ranks), hosts_(std::move(hosts)), tick_(tick) {
    if (const char* ms = std::getenv("FLEETSIM_MPI_SILENCE_MS"); ms && std::atoi(ms) > 0)
      silence_ = std::chrono::milliseconds(std::atoi(ms));
    int provided = 0;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE || ranks < 2) return;
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  static constexpr int kTag = 7;
  static constexpr std::int64_t kLeaving = -1;
  static constexpr auto kPeriod = std::chrono::milliseconds(50);

  void watch() {
    using clock = std::chrono::steady_clock;
    const int next = (rank_ + 1) % ranks_, prev = (rank_ + ranks_ - 1) % ranks_;
    std::int64_t in = 0, last_tick = 0;
    MPI_Request recv = MPI_REQUEST_NULL;
    MPI_Irecv(&in, 1, MPI_INT64_T, prev, kTag, comm_, &recv);
    // Each send's payload stays put until it completes (a small message completes at once).
    constexpr int kSlots = 16;
    std::int64_t out[kSlots] = {};
    MPI_Request sends[kSlots];
    std::fill(std::begin(sends), std::end(sends), MPI_REQUEST_NULL);
    auto send = [&](int slot, std::int64_t value) {
      int done = 1;
      MPI_Test(&sends[slot], &done, MPI_STATUS_IGNORE);
      if (!done) return;  // (the previous one is still on its way: skip a beat)
      out[slot] = value;
      MPI_Isend(&out[slot], 1, MPI_INT64_T, next, kTag, comm_, &sends[slot]);
    };
    auto heard = clock::now();
    bool watching = true;
    for (int beat = 0; !stop_; ++beat) {
      send(beat % kSlots, tick_.load());
      for (int got = 1; watching;) {
        MPI_Test(&recv, &got, MPI_STATUS_IGNORE);
        if (!got) break;
        heard = clock::now();
        if (in == kLeaving) {
          watching = false;  // it left in good order
        } else {
          last_tick = in;
          MPI_Irecv(&in, 1, MPI_INT64_T, prev, kTag, comm_, &recv);
        }
      }
      if (watching && clock::now() - heard > silence_) {
        const std::string host = hosts_[static_cast<std::size_t>(prev)];
        std::fprintf(stderr,
                     "fleetsim: rank %d (%s) stopped answering at tick %lld (no heartbeat for "
                     "%lld ms: stopped, or its machine froze); rank %d ends the job\n",
                     prev, host.c_str(), static_cast<long long>(last_tick),
                     static_cast<long long>(
                         std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - heard)
                             .count()),
                     rank_);
        std::fflush(stderr);
        // MPI_Abort asks mpirun to end every rank; when mpirun is already ending the job (a
        // rank that died, which it noticed too) the call may wait for its signals: this rank
        // leaves by itself 300 ms later.
        std::thread([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          std::_Exit(1);
        }).detach();
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      std::this_thread::sleep_for(kPeriod);
    }
    // The last beat says this rank leaves (its previous beat in slot 0 has long completed).
    MPI_Wait(&sends[0], MPI_STATUS_IGNORE);
    out[0] = kLeaving;
    MPI_Isend(&out[0], 1, MPI_INT64_T, next, kTag, comm_, &sends[0]);
    for (auto& r : sends)
      if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (watching) {
      MPI_Cancel(&recv);
      MPI_Wait(&recv, MPI_STATUS_IGNORE);
    }
  }

  int rank_, ranks_;
  std::vector<std::string> hosts_;
  const std::atomic<Tick>& tick_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::chrono::milliseconds silence_{500};
};

std::vector<std::string> host_names(int ranks) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int n = 0;
  MPI_Get_processor_name(name, &n);
  const std::string mine(name, static_cast<std::size_t>(n));
  std::vector<std::string> hosts;
  for (const auto& h : all_gather_bytes({mine.begin(), mine.end()}, ranks))
    hosts.emplace_back(h.begin(), h.end());
  return hosts;
}

/// Why some rank runs other files than rank 0, or could not load them (empty when every rank
/// runs rank 0's): every rank learns it. `mine`: this rank's files (files_json), or null when
/// its experiment did not load.
std::string compare_ranks_files(const nlohmann::json& mine, int ranks,
                                const std::vector<std::string>& hosts) {
  const std::string text = mine.dump();
  auto all = all_gather_bytes({text.begin(), text.end()}, ranks);
  auto parse = [&all](int r) {
    const auto& bytes = all[static_cast<std::size_t>(r)];
    return nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  };
  const auto ours = parse(0);
  if (!ours.is_array()) return "";  // (rank 0 did not load it: it prints why)
  for (int r = 1; r < ranks; ++r) {
    const std::string who =
        "rank " + std::to_string(r) + " (" + hosts[static_cast<std::size_t>(r)] + ")";
    const auto theirs = parse(r);
    if (!theirs.is_array())
      return who + " could not load the experiment (`fleetsim check` on that machine says why)";
    const std::string why = compare_files(ours, theirs);
    if (!why.empty())
      return who + " runs other files than rank 0: " + why +
             " (every rank must run the same experiment, plug-ins and files)";
  }
  return "";
}

}  // namespace

bool mpi_built_in() {
  return true;
}

std::vector<ProcessReport> run_mpi(const Loader& load, const SwarmRunOptions& options) {
  ensure_mpi();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const auto hosts = host_names(ranks);
  std::atomic<Tick> tick{0};
  Watchdog watchdog(rank, ranks, hosts, tick);
  auto loaded = load();
  // Every rank takes part in the file check, loaded or not, so that none waits for ever.
  const nlohmann::json files =
      loaded ? files_json(loaded->experiment, *loaded->registry) : nlohmann::json(nullptr);
  const std::string differs = compare_ranks_files(files, ranks, hosts);
  if (!loaded) throw std::invalid_argument("the experiment has errors");
  if (!differs.empty()) throw std::invalid_argument(differs);
  SwarmRunOptions o = options;  // (its hooks run on rank 0 only: run_share)
  o.processes = ranks;
  o.progress_tick = &tick;
  // (The same on every rank: a pure function of the experiment and the number of ranks.)
  const auto owner = assign(loaded->experiment, ranks, "mpirun -n");
  ProcessReport mine = run_share(*loaded, rank, owner, o, [&](int) {
    return std::make_unique<MpiExchange>(rank, ranks, hosts);
  });
  // Every rank's report to rank 0.
  const std::string text = report_to_json(mine);
  const auto all = all_gather_bytes({text.begin(), text.end()}, ranks);
  if (rank != 0) return {mine};
  std::vector<ProcessReport> reports;
  for (int r = 0; r < ranks; ++r) {
    const auto& bytes = all[static_cast<std::size_t>(r)];
    reports.push_back(r == 0 ? mine : report_from_json(std::string(bytes.begin(), bytes.end())));
  }
  return reports;
}

#endif

}  // namespace fleetsim::distributed
