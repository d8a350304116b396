#include "transport/tap.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/little_endian.hpp"
#include "transport/wire.hpp"

namespace fleetsim::transport {

namespace {

constexpr const char* kTapDir = "/dev/shm/";
constexpr const char* kTapPrefix = "fleetsim-tap-";

// Reading one tap: whole frames as they are appended.
struct TapReader {
  std::string flow, peer, path;
  int fd = -1;
  std::vector<std::uint8_t> bytes;  ///< read, not yet taken
  std::size_t at = 0;               ///< first byte of `bytes` not taken

  ~TapReader() {
    if (fd >= 0) ::close(fd);
  }
  // Reads what the file has gained; true when it gained anything.
  bool grow() {
    if (fd < 0) {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return false;
    }
    std::uint8_t chunk[65536];
    bool got = false;
    for (;;) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) break;
      bytes.insert(bytes.end(), chunk, chunk + n);
      got = true;
    }
    return got;
  }
  // The next whole frame: its length (0: the source left) and where it starts.
  bool frame(std::uint32_t& length, std::size_t& start) const {
    if (bytes.size() - at < 4) return false;
    length = get_le<std::uint32_t>(bytes.data() + at);
    start = at + 4;
    return bytes.size() - start >= length;
  }
};

class TapPort final : public Port {
 public:
  TapPort(const NodeLayout& self, SimTime until, std::uint64_t run_id, PortOptions options)
      : Port(self, std::move(options)), until_(until), run_id_(run_id) {
    for (const auto& in : layout_.inputs)
      readers_.push_back({in.flow_name, in.source, tap_path(run_id, in.flow_name)});
    for (const auto& out : layout_.outputs) {
      writers_.push_back(std::make_unique<TapWriter>(run_id, out.flow_name));
      next_.push_back(out.initial);
    }
  }

  void send(std::size_t output, const Message& m) override {
    writers_.at(output)->append(m);
    next_[output] = m.timestamp + m.period;
    stats_.messages_sent++;
    stats_.bytes_sent += m.payload.size();
  }

  Message receive(std::size_t input) override {
    TapReader& r = readers_.at(input);
    const auto since = std::chrono::steady_clock::now();
    auto next_report = since + options_.wait_report_after;
    std::uint32_t length = 0;
    std::size_t start = 0;
    while (!r.frame(length, start)) {
      if (r.grow()) continue;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (std::chrono::steady_clock::now() >= next_report) {
        report_wait(false, input, r.peer, since);
        next_report += options_.wait_report_after;
      }
    }
    if (length == 0)
      throw PeerLost(r.peer, fmt::format("node '{}': node '{}' left before the end time; last "
                                         "timestamp received from it: {} (flow '{}')",
                                         layout_.name, r.peer, last_from(r.peer), r.flow));
    auto decoded = decode(r.bytes.data() + start, length);
    r.at = start + length;
    if (r.at > (1u << 20)) {  // keep the buffer small
      r.bytes.erase(r.bytes.begin(), r.bytes.begin() + static_cast<std::ptrdiff_t>(r.at));
      r.at = 0;
    }
    if (auto* e = std::get_if<WireError>(&decoded))
      throw std::runtime_error(fmt::format("node '{}': the tap of flow '{}' holds a bad frame: {}",
                                           layout_.name, r.flow, e->reason));
    Message m = std::get<Message>(std::move(decoded));
    if (m.run != run_id_)
      throw std::runtime_error(fmt::format(
          "node '{}': the tap of flow '{}' belongs to another run (run id {:016x}, this run's "
          "is {:016x})",
          layout_.name, r.flow, m.run, run_id_));
    last_from_[r.peer] = m.timestamp;
    stats_.messages_received++;
    return m;
  }

  // Leaves: outputs not written to the end time are marked, so their readers stop.
  void close() override {
    if (closed_) return;
    closed_ = true;
    for (std::size_t o = 0; o < writers_.size(); ++o)
      if (next_[o] < until_) writers_[o]->leave_early();
  }

 private:
  SimTime until_;
  std::uint64_t run_id_;
  std::vector<TapReader> readers_;
  std::vector<std::unique_ptr<TapWriter>> writers_;
  std::vector<SimTime> next_;  ///< per output: the timestamp its last message announced
  bool closed_ = false;
};

}  // namespace

std::string tap_path(std::uint64_t run_id, const std::string& flow) {
  return std::string(kTapDir) + kTapPrefix + run_id_text(run_id) + "-" + flow;
}

std::size_t remove_taps(std::uint64_t run_id) {
  std::size_t removed = 0;
  const std::string prefix = std::string(kTapPrefix) + run_id_text(run_id) + "-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kTapDir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0 && std::filesystem::remove(e, ec))
      ++removed;
  return removed;
}

TapWriter::TapWriter(std::uint64_t run_id, const std::string& flow)
    : path_(tap_path(run_id, flow)), run_id_(run_id) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0)
    throw std::runtime_error(fmt::format("cannot create tap {}: {}", path_, std::strerror(errno)));
}

TapWriter::~TapWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TapWriter::write_all(const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw std::runtime_error(fmt::format("cannot write tap {}: {}", path_, std::strerror(errno)));
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

void TapWriter::append(const Message& m) {
  encode(m, wire_, run_id_);
  frame_.clear();
  append_le(frame_, static_cast<std::uint32_t>(wire_.size()));
  frame_.insert(frame_.end(), wire_.begin(), wire_.end());
  write_all(frame_.data(), frame_.size());  // one write: a reader never sees half a length
}

void TapWriter::leave_early() {
  frame_.clear();
  append_le(frame_, std::uint32_t{0});
  write_all(frame_.data(), frame_.size());
}

std::unique_ptr<Port> make_tap_port(const FederationLayout& layout, const std::string& name,
                                    std::uint64_t run_id, PortOptions options) {
  const NodeLayout* self = layout.find(name);
  if (!self) throw std::logic_error("tap port: unknown node '" + name + "'");
  return std::make_unique<TapPort>(*self, layout.until, run_id, std::move(options));
}

}  // namespace fleetsim::transport
