#include "transport/shm_transport.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "fleetsim/random.hpp"
#include "transport/link_port.hpp"
#include "transport/wire.hpp"

namespace fleetsim::transport {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kShmMagic = 0x314d48534d545346ull;  // "FSTMSHM1"
/// Bumped on any incompatible change of the segment layout below.
constexpr std::uint32_t kShmLayoutVersion = 1;
constexpr const char* kShmDir = "/dev/shm/";
/// A frame is a 4-byte little-endian length, then that many bytes of wire format.
constexpr std::size_t kLengthBytes = 4;
constexpr std::size_t kMaxFrame = kWireHeaderBytes + kWireMaxPayload;

enum ProducerState : std::uint32_t {
  kNotAttached = 0,
  kAttached = 1,
  kClosed = 2,   ///< the producer left normally
  kAborted = 3,  ///< the producer's port was destroyed without close() (it failed)
};

// The segment: Head, Bell, Life, one RingControl per link, then the rings' bytes. Fields a
// process writes sit on cache lines of their own.
struct alignas(64) Head {
  std::uint64_t magic;
  std::uint32_t layout;
  std::uint32_t rings;
  std::uint64_t run;
  std::uint64_t ring_bytes;
  std::int64_t pid;
};
struct alignas(64) Bell {
  /// Futex word: bumped by whoever gives the owner work while it sleeps (or is about to). Only
  /// then: a bump on every message would move this cache line between cores every time.
  std::atomic<std::uint32_t> seq;
  std::atomic<std::uint32_t> sleeping;  ///< the owner is about to sleep, or sleeps, on seq
  /// What the sleeping owner waits for: kAnything, or 1 + the index of the one ring whose
  /// data it needs (then writers of other rings and freed room do not wake it).
  std::atomic<std::uint32_t> wants;
};
constexpr std::uint32_t kAnything = 0;
constexpr std::size_t kRoom = 0xffffffffu;  ///< a notification of freed room
struct alignas(64) Life {
  std::atomic<std::uint64_t> heartbeat;  ///< bumped by the owner's heartbeat thread
};
struct RingControl {
  alignas(64) std::atomic<std::uint64_t> head;  ///< bytes ever written (the producer's)
  std::atomic<std::uint32_t> producer;          ///< ProducerState (the producer's)
  alignas(64) std::atomic<std::uint64_t> tail;  ///< bytes ever read (the consumer's)
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

constexpr std::size_t kControlBytes = sizeof(Head) + sizeof(Bell) + sizeof(Life);

std::size_t segment_bytes(std::size_t rings, std::size_t ring_bytes) {
  return kControlBytes + rings * sizeof(RingControl) + rings * ring_bytes;
}

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* t) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, t, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The owner of a segment holds a write lock on its first byte (an open file description lock:
// the kernel releases it when the process dies, however it dies).
struct flock first_byte(short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 1;
  return fl;
}

bool take_lock(int fd) {
  struct flock fl = first_byte(F_WRLCK);
  return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

bool lock_held(int fd) {
  struct flock fl = first_byte(F_WRLCK);
  if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return false;
  return fl.l_type != F_UNLCK;
}

/// One mapped segment: this node's own, or a peer's.
struct Segment {
  std::string path;
  int fd = -1;
  void* base = nullptr;
  std::size_t size = 0;

  ~Segment() {
    if (base) munmap(base, size);
    if (fd >= 0) ::close(fd);
  }
  Head* head() const { return static_cast<Head*>(base); }
  Bell* bell() const { return reinterpret_cast<Bell*>(static_cast<char*>(base) + sizeof(Head)); }
  Life* life() const {
    return reinterpret_cast<Life*>(static_cast<char*>(base) + sizeof(Head) + sizeof(Bell));
  }
  RingControl* control(std::size_t ring) const {
    return reinterpret_cast<RingControl*>(static_cast<char*>(base) + kControlBytes) + ring;
  }
  std::uint8_t* data(std::size_t ring) const {
    return static_cast<std::uint8_t*>(base) + kControlBytes + head()->rings * sizeof(RingControl) +
           ring * head()->ring_bytes;
  }
  bool alive() const { return lock_held(fd); }
};

std::string run_prefix(std::uint64_t run_id) {
  return fmt::format("fleetsim-{:016x}-", run_id);
}

/// A peer's segment, or nullptr while there is none (not started yet) or the one there belongs
/// to another run. Throws when it is of another release.
std::unique_ptr<Segment> open_peer(const std::string& path, std::uint64_t run,
                                   const std::string& self, const std::string& peer) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  auto seg = std::make_unique<Segment>();
  seg->path = path;
  seg->fd = fd;
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < kControlBytes) return nullptr;
  seg->size = static_cast<std::size_t>(st.st_size);
  seg->base = mmap(nullptr, seg->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (seg->base == MAP_FAILED) {
    seg->base = nullptr;
    return nullptr;
  }
  const Head& h = *seg->head();
  if (h.magic != kShmMagic) return nullptr;
  if (h.layout != kShmLayoutVersion)
    throw std::runtime_error(fmt::format(
        "node '{}': node '{}' uses shared-memory layout {}, this node layout {}: every node of "
        "a federation must run the same fleetsim release (and federates be built against it)",
        self, peer, h.layout, kShmLayoutVersion));
  if (h.run != run || h.ring_bytes == 0 || h.rings > 1u << 16 ||
      segment_bytes(h.rings, h.ring_bytes) != seg->size)
    return nullptr;
  return seg;
}

/// What a node last saw of a peer's heartbeat.
struct Pulse {
  std::uint64_t beat = 0;
  Clock::time_point moved;
  bool seen = false;
};

}  // namespace

std::string shm_segment_name(const FederationLayout& layout, const std::string& node,
                             std::uint64_t run_id) {
  const NodeLayout* n = layout.find(node);
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the endpoint
  if (n)
    for (unsigned char c : n->endpoint) h = (h ^ c) * 0x100000001b3ull;
  std::string safe;
  for (char c : node)
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return fmt::format("{}{:08x}-{}", run_prefix(run_id), static_cast<std::uint32_t>(mix64(h)),
                     safe.substr(0, 160));
}

bool all_nodes_local(const FederationLayout& layout) {
  for (const auto& n : layout.nodes) {
    const std::string& e = n.endpoint;
    if (e.empty() || e.rfind("ipc://", 0) == 0 || e.rfind("tcp://127.", 0) == 0 ||
        e.rfind("tcp://localhost:", 0) == 0)
      continue;
    return false;
  }
  return true;
}

bool use_shm(const FederationLayout& layout, const std::string& choice) {
  if (choice == "shm") return true;
  if (choice == "zmq") return false;
  for (const auto& n : layout.nodes)
    if (!n.public_key.empty()) return false;
  return all_nodes_local(layout);
}

namespace {

/// Removes the segment at `path` if its owner is dead and it was last changed before
/// `changed_before` (seconds since the epoch). True if it did.
bool remove_if_dead(const std::string& path, std::int64_t changed_before) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool removed = fstat(fd, &st) == 0 && st.st_mtime < changed_before && !lock_held(fd) &&
                       ::unlink(path.c_str()) == 0;
  ::close(fd);
  return removed;
}

/// Removes the dead segments whose name starts with `prefix` and that were last changed
/// before `changed_before` (seconds since the epoch).
std::size_t remove_dead_segments(const std::string& prefix, std::int64_t changed_before) {
  std::size_t removed = 0;
  DIR* dir = opendir(kShmDir);
  if (!dir) return 0;
  std::vector<std::string> names;
  while (dirent* e = readdir(dir))
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) names.emplace_back(e->d_name);
  closedir(dir);
  for (const auto& name : names) removed += remove_if_dead(kShmDir + name, changed_before);
  return removed;
}

}  // namespace

std::size_t remove_stale_shm_segments(std::uint64_t run_id) {
  return remove_dead_segments(run_prefix(run_id), std::numeric_limits<std::int64_t>::max());
}

std::size_t remove_abandoned_shm_segments(std::chrono::seconds min_age) {
  return remove_dead_segments("fleetsim-", static_cast<std::int64_t>(::time(nullptr)) -
                                               static_cast<std::int64_t>(min_age.count()));
}

/// A node's view of the shared-memory federation. Only the node's thread calls it; a helper
/// thread bumps the heartbeat.
class ShmPort final : public LinkPort {
 public:
  ShmPort(const FederationLayout& layout, const NodeLayout& self, PortOptions options,
          ShmOptions so)
      : LinkPort(layout, self, std::move(options)), sopt_(so) {
    ring_bytes_ = std::bit_ceil(std::max<std::size_t>(sopt_.ring_bytes, 4096));
    remove_abandoned_shm_segments();
    const auto sources = feeding_nodes(layout_);
    create_own_segment(layout, sources.size());
    try {
      wire(layout, sources);
    } catch (...) {
      ::unlink(me_->path.c_str());
      throw;
    }
    heart_ = std::thread([this] {
      std::unique_lock lock(heart_mutex_);
      while (!heart_cv_.wait_for(lock, sopt_.heartbeat_interval, [this] { return heart_stop_; }))
        me_->life()->heartbeat.fetch_add(1, std::memory_order_relaxed);
    });
  }

 private:
  void wire(const FederationLayout& layout, const std::vector<std::string>& sources) {
    for (std::size_t k = 0; k < sources.size(); ++k) {
      RecvLink r;
      r.peer = sources[k];
      r.path = kShmDir + shm_segment_name(layout, sources[k], options_.run_id);
      r.ring = k;
      recv_.push_back(std::move(r));
    }
    std::map<std::string, std::size_t> link_of;
    for (const auto& out : layout_.outputs) {
      std::vector<std::size_t> links;
      for (const auto& sink : out.sinks) {
        auto it = link_of.find(sink);
        if (it == link_of.end()) {
          const NodeLayout* n = layout.find(sink);
          if (!n) throw std::logic_error("shm transport: unknown node '" + sink + "'");
          auto feeders = feeding_nodes(*n);
          SendLink l;
          l.peer = sink;
          l.path = kShmDir + shm_segment_name(layout, sink, options_.run_id);
          l.ring = static_cast<std::size_t>(
              std::find(feeders.begin(), feeders.end(), layout_.name) - feeders.begin());
          l.rings_expected = feeders.size();
          it = link_of.emplace(sink, send_.size()).first;
          send_.push_back(std::move(l));
        }
        send_[it->second].next[out.flow] = out.initial;
        links.push_back(it->second);
      }
      out_links_.push_back(std::move(links));
    }
    // Nodes started by hand share run id 0 from run to run: what a killed node of an earlier
    // run left behind goes (launch and swarm runs clean up after their own runs).
    if (options_.run_id == 0) {
      constexpr auto any_age = std::numeric_limits<std::int64_t>::max();
      for (const auto& r : recv_) remove_if_dead(r.path, any_age);
      for (const auto& l : send_) remove_if_dead(l.path, any_age);
    }
    for (auto& l : send_) attach(l);
  }

 public:
  ~ShmPort() override { shut(); }

  void send(std::size_t output, const Message& m) override {
    frame(m);
    for (std::size_t k = 0; k < out_links_.at(output).size(); ++k) deliver(output, k, m);
  }

  void send_each(std::size_t output, std::span<const Message> per_sink) override {
    if (per_sink.size() != out_links_.at(output).size())
      throw std::logic_error("send_each: one message per sink");
    for (std::size_t k = 0; k < per_sink.size(); ++k) {
      frame(per_sink[k]);
      deliver(output, k, per_sink[k]);
    }
  }

  Message receive(std::size_t input) override {
    Input& st = in_.at(input);
    RecvLink& r = recv_[st.link];
    Clock::time_point since{}, next_report{};  // set when it first has to wait
    for (bool waited = false; st.buffer.empty(); waited = true) {
      read_link(r);
      if (!st.buffer.empty()) break;
      if (!waited) {
        since = Clock::now();
        next_report = since + options_.wait_report_after;
      }
      wait(next_report, static_cast<std::uint32_t>(r.ring + 1), [&] { return readable(r); });
      read_link(r);
      if (!st.buffer.empty()) break;
      const auto now = Clock::now();
      maybe_check_peers(now);
      if (now >= next_report) {
        report_wait(false, input, r.peer, since);
        next_report += options_.wait_report_after;
      }
    }
    return pop(input);
  }

  // What a node wrote stays in its sinks' segments, which they own: a node may leave as soon
  // as it has received what it needs, telling the nodes it feeds that it left normally.
  void close() override {
    if (closed_) return;
    closed_ = true;
    shut();
  }

 private:
  /// Encodes `m` as the frame deliver() writes: its length, then its wire bytes.
  void frame(const Message& m) {
    encode(m, wire_, options_.run_id);
    const auto n = static_cast<std::uint32_t>(wire_.size());
    for (std::size_t i = 0; i < kLengthBytes; ++i)
      length_[i] = static_cast<std::uint8_t>(n >> (8 * i));
  }

  /// Writes the frame (`m`'s, made by frame()) into the ring of sink `k` of `output`, waiting
  /// while the ring is full.
  void deliver(std::size_t output, std::size_t k, const Message& m) {
    SendLink& link = send_[out_links_.at(output)[k]];
    jitter();
    const std::size_t total = kLengthBytes + wire_.size();
    std::size_t done = 0;
    Clock::time_point since{}, next_report{};  // set when it first has to wait
    for (bool waited = false;; waited = true) {
      if (!link.seg) attach(link);
      if (link.seg) {
        std::size_t wrote = write_some(link, done, total);
        if (wrote > 0) {
          done += wrote;
          notify(*link.seg, link.ring);  // (also a part: the sink reads it, making room)
        }
        if (done == total) break;
      }
      if (!waited) {
        since = Clock::now();
        next_report = since + options_.wait_report_after;
      }
      // The sink's ring is full (or the sink has not started): keep reading (a node
      // receives in every state) and watching the peers until there is room.
      wait(next_report, kAnything, [&] { return room(link) || any_readable(); });
      for (auto& r : recv_) read_link(r);
      const auto now = Clock::now();
      maybe_check_peers(now);
      if (now >= next_report) {
        report_wait(true, output, link.peer, since);
        next_report += options_.wait_report_after;
      }
    }
    link.next[m.flow] = m.timestamp + m.period;
    stats_.messages_sent++;
    stats_.bytes_sent += m.payload.size();
  }

  struct SendLink {
    std::string peer;
    std::string path;
    std::unique_ptr<Segment> seg;  ///< the sink's, once it exists
    std::size_t ring = 0;          ///< this node's ring in it
    std::size_t rings_expected = 0;
    std::uint64_t head = 0;  ///< bytes written (mirrors the ring's head)
    /// The sink's read position when last loaded: the free room is at least what it gives,
    /// so the sink's cache line is read again only when that is not enough.
    std::uint64_t tail = 0;
    std::map<FlowId, SimTime> next;  ///< per flow: timestamp of the next message owed
    Pulse pulse;
    Clock::time_point next_attach{};
  };
  struct RecvLink {
    std::string peer;
    std::string path;
    std::unique_ptr<Segment> seg;       ///< the source's (to wake it and watch it), once known
    std::size_t ring = 0;               ///< its ring in this node's segment
    std::uint64_t tail = 0;             ///< bytes read (mirrors the ring's tail)
    std::uint32_t frame = 0;            ///< length of the frame being read, 0: none
    std::vector<std::uint8_t> partial;  ///< a frame that wraps or is larger than the ring
    bool gone = false;
    Clock::time_point gone_at;
    Pulse pulse;
    Clock::time_point next_attach{};
  };
  void create_own_segment(const FederationLayout& layout, std::size_t rings) {
    const std::string name = shm_segment_name(layout, layout_.name, options_.run_id);
    const std::string path = kShmDir + name;
    const std::string staging =
        fmt::format("{}{}.new-{}-{}", kShmDir, name, getpid(), static_cast<const void*>(this));
    auto seg = std::make_unique<Segment>();
    seg->path = path;
    seg->size = segment_bytes(rings, ring_bytes_);
    seg->fd = ::open(staging.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    auto fail = [&](const std::string& what) {
      const int e = errno;
      ::unlink(staging.c_str());
      throw std::runtime_error(fmt::format("node '{}': cannot create its shared memory {} ({}): {}",
                                           layout_.name, path, what, std::strerror(e)));
    };
    if (seg->fd < 0) fail("open");
    if (ftruncate(seg->fd, static_cast<off_t>(seg->size)) != 0) fail("size");
    // Commit the pages now: a full /dev/shm must fail here, not with SIGBUS mid-run.
    if (int e = posix_fallocate(seg->fd, 0, static_cast<off_t>(seg->size)); e != 0) {
      errno = e;
      fail(fmt::format("{} bytes", seg->size));
    }
    seg->base = mmap(nullptr, seg->size, PROT_READ | PROT_WRITE, MAP_SHARED, seg->fd, 0);
    if (seg->base == MAP_FAILED) {
      seg->base = nullptr;
      fail("map");
    }
    auto* h = new (seg->base) Head{};
    h->magic = kShmMagic;
    h->layout = kShmLayoutVersion;
    h->rings = static_cast<std::uint32_t>(rings);
    h->run = options_.run_id;
    h->ring_bytes = ring_bytes_;
    h->pid = getpid();
    new (seg->bell()) Bell{};
    new (seg->life()) Life{};
    for (std::size_t k = 0; k < rings; ++k) new (seg->control(k)) RingControl{};
    if (!take_lock(seg->fd)) fail("lock");
    // Another live node of this name and run? (A dead one's segment is simply replaced.)
    int other = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (other >= 0) {
      const bool live = lock_held(other);
      ::close(other);
      if (live) {
        ::unlink(staging.c_str());
        throw std::runtime_error(fmt::format(
            "node '{}': a node of that name is already running in this run on this machine "
            "(its shared memory {} is in use): start each node once, or give each run its own "
            "--run-id",
            layout_.name, path));
      }
    }
    if (::rename(staging.c_str(), path.c_str()) != 0) fail("rename");
    me_ = std::move(seg);
  }

  // Opens the sink's segment when it exists; a segment whose owner is dead is a run's leftover
  // (run id 0: the sink has not replaced it yet) or the sink's own after it left.
  void attach(SendLink& l) {
    auto now = Clock::now();
    if (now < l.next_attach) return;
    l.next_attach = now + std::chrono::microseconds(500);
    auto seg = open_peer(l.path, options_.run_id, layout_.name, l.peer);
    if (!seg) return;
    if (seg->head()->rings != l.rings_expected)
      throw std::runtime_error(fmt::format(
          "node '{}': node '{}' has {} input links, this node's federation file gives it {}: "
          "the two read different federation files",
          layout_.name, l.peer, seg->head()->rings, l.rings_expected));
    if (!seg->alive() && options_.run_id == 0) return;  // perhaps an earlier run's
    RingControl* c = seg->control(l.ring);
    l.head = c->head.load(std::memory_order_relaxed);
    l.tail = c->tail.load(std::memory_order_acquire);
    c->producer.store(kAttached, std::memory_order_release);
    l.seg = std::move(seg);
  }

  // The source's segment, to wake it when room frees up and to watch it.
  void attach(RecvLink& r) {
    auto now = Clock::now();
    if (r.seg || now < r.next_attach) return;
    r.next_attach = now + std::chrono::milliseconds(1);
    r.seg = open_peer(r.path, options_.run_id, layout_.name, r.peer);
  }

  bool room(SendLink& l) { return l.seg && free_room(l, 1) > 0; }

  // Free bytes in `l`'s ring, at least `wanted` if the sink has read that far: the read
  // position is loaded again only when the one last seen does not leave that much.
  std::size_t free_room(SendLink& l, std::size_t wanted) {
    const std::size_t cap = l.seg->head()->ring_bytes;
    if (cap - (l.head - l.tail) < wanted) {
      const std::uint64_t tail = l.seg->control(l.ring)->tail.load(std::memory_order_acquire);
      if (l.head - tail > cap || tail < l.tail)
        throw std::runtime_error(fmt::format(
            "node '{}': the ring to '{}' is corrupt (read position beyond write position)",
            layout_.name, l.peer));
      l.tail = tail;
    }
    return cap - static_cast<std::size_t>(l.head - l.tail);
  }

  bool readable(const RecvLink& r) const {
    return !links_[r.ring].held &&
           me_->control(r.ring)->head.load(std::memory_order_acquire) != r.tail;
  }

  bool any_readable() const {
    for (const auto& r : recv_)
      if (readable(r)) return true;
    return false;
  }

  // Copies bytes [done, total) of the frame (length_ then wire_) into the sink's ring, as many
  // as fit; returns how many.
  std::size_t write_some(SendLink& l, std::size_t done, std::size_t total) {
    RingControl* c = l.seg->control(l.ring);
    const std::size_t cap = l.seg->head()->ring_bytes;
    std::size_t n = std::min(free_room(l, total - done), total - done);
    std::uint8_t* data = l.seg->data(l.ring);
    for (std::size_t left = n, at = done; left > 0;) {
      const std::uint8_t* src;
      std::size_t run;
      if (at < kLengthBytes) {
        src = length_ + at;
        run = kLengthBytes - at;
      } else {
        src = wire_.data() + (at - kLengthBytes);
        run = total - at;
      }
      run = std::min(run, left);
      const std::size_t pos = static_cast<std::size_t>(l.head) & (cap - 1);
      run = std::min(run, cap - pos);
      std::memcpy(data + pos, src, run);
      l.head += run;
      at += run;
      left -= run;
    }
    if (n > 0) c->head.store(l.head, std::memory_order_release);
    return n;
  }

  // Copies `n` bytes at the read position of ring `r` (wrapping) to `out`.
  void copy_out(const RecvLink& r, std::uint8_t* out, std::size_t n) const {
    const std::uint8_t* data = me_->data(r.ring);
    std::size_t pos = static_cast<std::size_t>(r.tail) & (ring_bytes_ - 1);
    const std::size_t first = std::min(n, ring_bytes_ - pos);
    std::memcpy(out, data + pos, first);
    std::memcpy(out + first, data, n - first);
  }

  [[noreturn]] void corrupt(const RecvLink& r, const std::string& what) const {
    throw std::runtime_error(fmt::format(
        "node '{}': the ring from '{}' is corrupt ({}): its writer is not a fleetsim node of "
        "this release",
        layout_.name, r.peer, what));
  }

  void read_arrived(std::size_t k) override { read_link(recv_.at(k)); }

  // Moves every complete message of link `r` into its input buffers, until one has no room.
  bool read_link(RecvLink& r) {
    bool got = false, consumed = false;
    RingControl* c = me_->control(r.ring);
    while (!links_[r.ring].held) {
      const std::uint64_t head = c->head.load(std::memory_order_acquire);
      if (head - r.tail > ring_bytes_) corrupt(r, "write position beyond the ring");
      std::size_t avail = static_cast<std::size_t>(head - r.tail);
      if (r.frame == 0) {
        if (avail < kLengthBytes) break;
        std::uint8_t len[kLengthBytes];
        copy_out(r, len, kLengthBytes);
        std::uint32_t n = 0;
        for (std::size_t i = 0; i < kLengthBytes; ++i) n |= std::uint32_t{len[i]} << (8 * i);
        if (n == 0 || n > kMaxFrame) corrupt(r, fmt::format("a frame of {} bytes", n));
        r.tail += kLengthBytes;
        avail -= kLengthBytes;
        r.frame = n;
        r.partial.clear();
        consumed = true;
      }
      std::optional<std::variant<Message, WireError>> decoded;
      const std::size_t pos = static_cast<std::size_t>(r.tail) & (ring_bytes_ - 1);
      if (r.partial.empty() && avail >= r.frame && pos + r.frame <= ring_bytes_) {
        decoded = decode(me_->data(r.ring) + pos, r.frame);  // in place: the usual case
        r.tail += r.frame;
      } else {
        const std::size_t take = std::min(avail, r.frame - r.partial.size());
        if (take == 0) break;
        const std::size_t at = r.partial.size();
        r.partial.resize(at + take);
        copy_out(r, r.partial.data() + at, take);
        r.tail += take;
        consumed = true;
        if (r.partial.size() < r.frame) {
          c->tail.store(r.tail, std::memory_order_release);
          continue;  // the rest is not written yet
        }
        decoded = decode(r.partial.data(), r.partial.size());
      }
      r.frame = 0;
      c->tail.store(r.tail, std::memory_order_release);
      consumed = true;
      got |= accept(r.ring, std::move(*decoded));
    }
    if (consumed) {
      attach(r);
      if (r.seg) notify(*r.seg, kRoom);  // room for the source
    }
    return got;
  }

  // Rings `s`'s doorbell about its ring `ring` (or kRoom), after new data or freed room was
  // published: wakes its owner if it sleeps (or is about to) waiting for that ring or for
  // anything. The fences of this and of wait() order "publish, then read `sleeping`" against
  // "set `sleeping`, then look for work": either the owner sees the work, or this sees it
  // sleeping and bumps seq, so that its futex wait returns at once if it has not begun.
  static void notify(Segment& s, std::size_t ring) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    Bell* b = s.bell();
    if (!b->sleeping.load(std::memory_order_acquire)) return;
    const std::uint32_t wants = b->wants.load(std::memory_order_relaxed);
    if (wants != kAnything && (ring == kRoom || wants != ring + 1)) return;
    b->seq.fetch_add(1, std::memory_order_release);
    futex(&b->seq, FUTEX_WAKE, INT_MAX, nullptr);
  }

  // Polls `ready` for the spin time, then between yields of the processor for the yield time,
  // then sleeps on this node's doorbell until someone rings it or budget(next_report) passes.
  template <typename Ready>
  void wait(Clock::time_point next_report, std::uint32_t wants, Ready&& ready) {
    if (sopt_.spin.count() > 0) {
      const auto spin_end = Clock::now() + sopt_.spin;
      for (int i = 0;; ++i) {
        if (ready()) return;
        cpu_relax();
        if ((i & 63) == 63 && Clock::now() >= spin_end) break;
      }
    }
    // More nodes than cores: the source this node waits for is often runnable on this core,
    // and yielding lets it run at once, where a futex sleep and wake-up would cost both
    // several microseconds of the kernel's time (K = 4 on 2 cores: 30 -> 4 us per step).
    // With a core to itself, sched_yield returns at once and this is polling. (The clock is
    // read every 4th time: in a virtual machine a read can cost a tenth of a yield.)
    Clock::time_point yield_end{};
    for (int i = 0; sopt_.yield.count() > 0; ++i) {
      if (ready()) return;
      if ((i & 3) == 0) {
        const auto now = Clock::now();
        if (i == 0)
          yield_end = now + sopt_.yield;
        else if (now >= yield_end)
          break;
      }
      sched_yield();
    }
    const std::chrono::milliseconds timeout = budget(next_report);
    Bell* b = me_->bell();
    const std::uint32_t seen = b->seq.load(std::memory_order_acquire);
    b->wants.store(wants, std::memory_order_relaxed);
    b->sleeping.store(1, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!ready()) {
      timespec t{};
      t.tv_sec = static_cast<time_t>(timeout.count() / 1000);
      t.tv_nsec = static_cast<long>(timeout.count() % 1000) * 1000000L;
      futex(&b->seq, FUTEX_WAIT, seen, &t);
    }
    b->sleeping.store(0, std::memory_order_relaxed);
  }

  std::chrono::milliseconds budget(Clock::time_point next_report) const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_report - Clock::now());
    bool attaching = false;
    for (const auto& l : send_) attaching |= !l.seg;
    return std::clamp(left, std::chrono::milliseconds(1),
                      std::chrono::milliseconds(attaching ? 2 : 20));
  }

  // Is the owner of `seg` alive and not hung?
  bool alive(const Segment& seg, Pulse& p) const {
    if (!seg.alive()) return false;
    const std::uint64_t beat = seg.life()->heartbeat.load(std::memory_order_relaxed);
    const auto now = Clock::now();
    if (!p.seen || beat != p.beat) {
      p = {beat, now, true};
      return true;
    }
    return now - p.moved < sopt_.hang_timeout;
  }

  void maybe_check_peers(Clock::time_point now) {
    if (now < next_check_) return;
    next_check_ = now + std::chrono::milliseconds(20);
    check_peers();
  }

  // Throws PeerLost if a peer left while messages were still due on a link with it.
  void check_peers() {
    for (auto& s : send_)
      if (s.seg && !alive(*s.seg, s.pulse)) check_sink(s.peer, s.next, "it died, hung or left");
    for (auto& r : recv_) {
      if (!r.gone) {
        const auto state = me_->control(r.ring)->producer.load(std::memory_order_acquire);
        if (state == kAttached) attach(r);
        // (A producer creates its segment before it attaches: if that is gone without the
        // producer saying it left, the producer died and someone cleared what it left.)
        struct stat st {};
        const bool vanished =
            state == kAttached && !r.seg && ::stat(r.path.c_str(), &st) != 0 && errno == ENOENT;
        if (state >= kClosed || vanished ||
            (state == kAttached && r.seg && !alive(*r.seg, r.pulse))) {
          r.gone = true;
          r.gone_at = Clock::now();
        }
      }
      if (!r.gone || links_[r.ring].held || !owes(r.ring)) continue;
      // Its last messages may still be in the ring: drain before declaring it lost.
      if (read_link(r) || buffered(r.ring)) continue;
      lost_source(r.ring, "it died, hung or left");
    }
  }

  void shut() {
    if (shut_) return;
    shut_ = true;
    {
      std::lock_guard lock(heart_mutex_);
      heart_stop_ = true;
    }
    heart_cv_.notify_all();
    if (heart_.joinable()) heart_.join();
    for (auto& l : send_) {
      // A sink this node has not reached yet (it was not there when this node last looked)
      // may be there now, waiting for this node's messages: it cannot tell a node that left
      // before reaching it from one that has not started, so it must be told.
      if (!l.seg) {
        l.next_attach = {};
        try {
          attach(l);
        } catch (const std::exception&) {  // (its federation file differs: it will say so)
        }
      }
      if (!l.seg) continue;
      l.seg->control(l.ring)->producer.store(closed_ ? kClosed : kAborted,
                                             std::memory_order_release);
      notify(*l.seg, l.ring);
    }
    // Remove the segment's name (if it is still this node's), then release the lock by
    // closing: peers that mapped it keep their mapping.
    struct stat mine {
    }, there{};
    if (fstat(me_->fd, &mine) == 0 && stat(me_->path.c_str(), &there) == 0 &&
        mine.st_ino == there.st_ino)
      ::unlink(me_->path.c_str());
    send_.clear();
    recv_.clear();
    me_.reset();
  }

  ShmOptions sopt_;
  std::size_t ring_bytes_ = 0;
  std::unique_ptr<Segment> me_;
  std::vector<RecvLink> recv_;
  std::vector<SendLink> send_;
  std::vector<std::vector<std::size_t>> out_links_;
  std::vector<std::uint8_t> wire_;
  std::uint8_t length_[kLengthBytes] = {};
  Clock::time_point next_check_ = Clock::now();
  std::thread heart_;
  std::mutex heart_mutex_;
  std::condition_variable heart_cv_;
  bool heart_stop_ = false;
  bool closed_ = false;
  bool shut_ = false;
};

std::unique_ptr<Port> make_shm_port(const FederationLayout& layout, const std::string& name,
                                    PortOptions options, ShmOptions shm_options) {
  const NodeLayout* self = layout.find(name);
  if (!self) throw std::logic_error("shm transport: unknown node '" + name + "'");
  return std::make_unique<ShmPort>(layout, *self, std::move(options), shm_options);
}

}  // namespace fleetsim::transport
