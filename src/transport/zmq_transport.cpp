#include "transport/zmq_transport.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <zmq.hpp>

#include "transport/curve.hpp"
#include "transport/link_port.hpp"
#include "transport/refusals.hpp"
#include "transport/wire.hpp"
#include "transport/zmq_sockets.hpp"

namespace fleetsim::transport {

namespace {

using Clock = std::chrono::steady_clock;

/// A link's name in authentication messages (its ZAP domain).
std::string link_name(const std::string& source) {
  return "the link from '" + source + "'";
}

// Places the background threads of `ctx` (before its first socket starts them): see "Where
// ZeroMQ's I/O thread runs" in zmq_transport.hpp. ZeroMQ aborts the process if it cannot apply
// a setting to a thread it starts, so only settings the calling thread could take are passed.
void place_io_thread(zmq::context_t& ctx, const FederationLayout& layout, const NodeLayout& self,
                     const ZmqOptions& zo) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int cpu = zo.io_thread_cpu;
  if (cpu == kIoThreadCpuByNode) {
    auto position =
        static_cast<int>(std::find_if(layout.nodes.begin(), layout.nodes.end(),
                                      [&](const NodeLayout& n) { return n.name == self.name; }) -
                         layout.nodes.begin());
    int k = position % std::max(CPU_COUNT(&allowed), 1);
    cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
      if (CPU_ISSET(c, &allowed) && k-- == 0) cpu = c;
  } else if (cpu >= 0 && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))) {
    throw std::runtime_error(fmt::format(
        "node '{}': cannot pin ZeroMQ's I/O thread to CPU {}: this process may not run there",
        self.name, cpu));
  }
  if (cpu >= 0 && zmq_ctx_set(ctx.handle(), ZMQ_THREAD_AFFINITY_CPU_ADD, cpu) != 0)
    throw zmq::error_t();
  if (zo.io_thread_batch && sched_getscheduler(0) == SCHED_OTHER &&
      zmq_ctx_set(ctx.handle(), ZMQ_THREAD_SCHED_POLICY, SCHED_BATCH) != 0)
    throw zmq::error_t();
}

}  // namespace

std::string link_endpoint(const FederationLayout& layout, const std::string& sink,
                          const std::string& source) {
  const NodeLayout* node = layout.find(sink);
  if (!node) throw std::logic_error("zmq transport: unknown node '" + sink + "'");
  auto sources = feeding_nodes(*node);
  auto it = std::find(sources.begin(), sources.end(), source);
  if (it == sources.end())
    throw std::logic_error("zmq transport: node '" + source + "' does not feed '" + sink + "'");
  auto k = static_cast<int>(it - sources.begin());
  const std::string& e = node->endpoint;
  if (e.rfind("tcp://", 0) == 0) {
    auto colon = e.rfind(':');
    int port = std::stoi(e.substr(colon + 1));
    return e.substr(0, colon + 1) + std::to_string(port + k);
  }
  return e + "." + std::to_string(k);
}

/// A node's view of the ZeroMQ federation. Single-threaded: only the node's thread calls it;
/// ZeroMQ's own I/O thread does the network work.
class ZmqPort final : public LinkPort {
 public:
  ZmqPort(const FederationLayout& layout, const NodeLayout& self, PortOptions options,
          ZmqOptions zo)
      : LinkPort(layout, self, std::move(options)), zopt_(zo) {
    place_io_thread(ctx_, layout, self, zopt_);
    // Authentication: every node lists a public key, or none does.
    const bool curve = !self.public_key.empty();
    for (const auto& n : layout.nodes)
      if (n.public_key.empty() == curve)
        throw std::logic_error("zmq transport: some nodes have keys and some do not");
    std::string my_secret, my_public;
    if (curve) {
      if (zopt_.secret_key.empty())
        throw std::runtime_error(fmt::format(
            "node '{}': the federation requires authentication: give this node its secret key "
            "(--secret-keys DIR, with DIR/{}.key from `fleetsim keygen {}`)",
            self.name, self.name, self.name));
      if (curve_public_of(zopt_.secret_key) != self.public_key)
        throw std::runtime_error(fmt::format(
            "node '{}': its secret key is not the one whose public key the federation lists "
            "for it (the key files do not match: make them again with `fleetsim keygen`)",
            self.name));
      my_secret = binary_key(zopt_.secret_key);
      my_public = binary_key(self.public_key);
      ZapHandler::Allowed allowed;  // each link: the node feeding it
      for (const auto& source : feeding_nodes(self))
        allowed[link_name(source)][binary_key(layout.find(source)->public_key)] = source;
      zap_ = std::make_unique<ZapHandler>(ctx_, std::move(allowed));
    }
    int monitor_id = 0;
    auto monitored = [&](zmq::socket_type type, std::size_t hwm) {
      zmq::socket_t s(ctx_, type);
      s.set(zmq::sockopt::linger, 0);
      set_heartbeats(s, zopt_);
      s.set(zmq::sockopt::reconnect_ivl, 20);
      s.set(zmq::sockopt::sndhwm, static_cast<int>(std::max<std::size_t>(hwm, 1)));
      s.set(zmq::sockopt::rcvhwm, static_cast<int>(std::max<std::size_t>(hwm, 1)));
      zmq::socket_t m =
          monitor_socket(ctx_, s, "inproc://fleetsim-monitor-" + std::to_string(monitor_id++),
                         ZMQ_EVENT_CONNECTED | HandshakeWatch::events());
      return std::make_pair(std::move(s), std::move(m));
    };

    // One bound link per feeding node (links_, in that order).
    for (const auto& link : links_) {
      const std::string& source = link.peer;
      std::size_t hwm = 1;
      for (const auto& in : layout_.inputs)
        if (in.source == source) hwm = std::max(hwm, in.capacity);
      auto [s, m] = monitored(zmq::socket_type::pull, hwm);
      if (curve) {  // the server of the link: only `source` may connect
        s.set(zmq::sockopt::curve_server, 1);
        check_rc(zmq_setsockopt(s.handle(), ZMQ_CURVE_SECRETKEY, my_secret.data(), 32));
        s.set(zmq::sockopt::zap_domain, link_name(source));
      }
      std::string endpoint = link_endpoint(layout, layout_.name, source);
      std::string bind_to = endpoint;
      // A loopback endpoint binds the loopback interface only; another host binds every
      // interface (the name others reach this machine by need not be one of its own).
      if (bind_to.rfind("tcp://localhost:", 0) == 0)
        bind_to = "tcp://127.0.0.1" + endpoint.substr(endpoint.rfind(':'));
      else if (bind_to.rfind("tcp://", 0) == 0 && bind_to.rfind("tcp://127.", 0) != 0)
        bind_to = "tcp://*" + endpoint.substr(endpoint.rfind(':'));
      try {
        s.bind(bind_to);
      } catch (const zmq::error_t& e) {
        throw std::runtime_error(fmt::format("node '{}': cannot bind {} (link from '{}'): {}",
                                             layout_.name, endpoint, source, e.what()));
      }
      RecvLink r;
      r.peer = source;
      r.socket = std::move(s);
      r.monitor = std::move(m);
      recv_.push_back(std::move(r));
    }
    // One connected link per fed node.
    std::map<std::string, std::size_t> link_of;
    for (const auto& out : layout_.outputs) {
      std::vector<std::size_t> links;
      for (const auto& sink : out.sinks) {
        auto it = link_of.find(sink);
        if (it == link_of.end()) {
          std::size_t hwm = 1;
          if (const NodeLayout* n = layout.find(sink))
            for (const auto& in : n->inputs)
              if (in.source == layout_.name) hwm = std::max(hwm, in.capacity);
          auto [s, m] = monitored(zmq::socket_type::push, hwm);
          if (curve) {  // the client: proves it is this node, and that it reached `sink`
            const std::string server = binary_key(layout.find(sink)->public_key);
            check_rc(zmq_setsockopt(s.handle(), ZMQ_CURVE_SERVERKEY, server.data(), 32));
            check_rc(zmq_setsockopt(s.handle(), ZMQ_CURVE_PUBLICKEY, my_public.data(), 32));
            check_rc(zmq_setsockopt(s.handle(), ZMQ_CURVE_SECRETKEY, my_secret.data(), 32));
          }
          s.connect(link_endpoint(layout, sink, layout_.name));
          SendLink l;
          l.peer = sink;
          l.socket = std::move(s);
          l.monitor = std::move(m);
          it = link_of.emplace(sink, send_.size()).first;
          send_.push_back(std::move(l));
        }
        send_[it->second].next[out.flow] = out.initial;
        links.push_back(it->second);
      }
      out_links_.push_back(std::move(links));
    }
  }

  ~ZmqPort() override { shut(0); }

  void send(std::size_t output, const Message& m) override {
    encode(m, wire_, options_.run_id);
    for (std::size_t k = 0; k < out_links_.at(output).size(); ++k) deliver(output, k, m);
  }

  void send_each(std::size_t output, std::span<const Message> per_sink) override {
    if (per_sink.size() != out_links_.at(output).size())
      throw std::logic_error("send_each: one message per sink");
    for (std::size_t k = 0; k < per_sink.size(); ++k) {
      encode(per_sink[k], wire_, options_.run_id);
      deliver(output, k, per_sink[k]);
    }
  }

  Message receive(std::size_t input) override {
    Input& st = in_.at(input);
    auto since = Clock::now();
    auto next_report = since + options_.wait_report_after;
    while (st.buffer.empty()) {
      // Fast path: the message is often already in the socket; no poll, no monitor check.
      if (!links_[st.link].held) read_link(st.link, &st);
      if (!st.buffer.empty()) break;
      pump(wait_budget(next_report), -1, static_cast<int>(st.link), &st);
      if (!st.buffer.empty()) break;
      check_peers();
      if (Clock::now() >= next_report) {
        report_wait(false, input, recv_[st.link].peer, since);
        next_report += options_.wait_report_after;
      }
    }
    return pop(input);
  }

  // ZeroMQ's linger does not deliver what is still queued behind a full pipe when a socket
  // closes, so a node leaves in two phases: it closes its inputs (it has received every
  // message it needs, and this tells its sources so), then waits until every node it feeds
  // has closed its inputs in turn (so has received everything), and only then closes its
  // outputs. Nodes wait on their sinks only after releasing their sources: no cycle.
  void close() override {
    if (shut_) return;
    closed_ = true;
    for (auto& r : recv_) read_events(r);  // (refused connections not yet logged)
    log_refusals();
    for (auto& r : recv_) {
      zmq_socket_monitor(r.socket.handle(), nullptr, 0);
      r.monitor.close();
      r.socket.close();
    }
    recv_.clear();
    auto deadline = Clock::now() + zopt_.linger;
    while (Clock::now() < deadline) {
      bool waiting = false;
      for (auto& s : send_) waiting |= s.sent_any && !s.gone;
      if (!waiting) break;
      items_.clear();
      for (auto& s : send_) items_.push_back({s.monitor.handle(), 0, ZMQ_POLLIN, 0});
      zmq::poll(items_.data(), items_.size(), std::chrono::milliseconds(50));
      for (std::size_t i = 0; i < send_.size(); ++i)
        if (items_[i].revents & ZMQ_POLLIN) read_events(send_[i]);
    }
    shut(0);
  }

 private:
  /// Sends the wire bytes of `m` (encoded by the caller into wire_) to sink `k` of `output`,
  /// waiting while the link's buffers are full.
  void deliver(std::size_t output, std::size_t k, const Message& m) {
    const auto& links = out_links_.at(output);
    SendLink& link = send_[links[k]];
    jitter();
    auto since = Clock::now();
    auto next_report = since + options_.wait_report_after;
    while (true) {
      zmq::message_t zm(wire_.data(), wire_.size());
      if (link.socket.send(zm, zmq::send_flags::dontwait)) break;
      // The sink's buffers are full: keep receiving (a node receives in every state) and
      // watching the peers until the link drains.
      pump(wait_budget(next_report), static_cast<int>(links[k]));
      check_peers();
      if (Clock::now() >= next_report) {
        report_wait(true, output, link.peer, since);
        next_report += options_.wait_report_after;
      }
    }
    link.next[m.flow] = m.timestamp + m.period;
    link.sent_any = true;
    stats_.messages_sent++;
    stats_.bytes_sent += m.payload.size();
  }

  struct RecvLink {
    std::string peer;
    zmq::socket_t socket;
    zmq::socket_t monitor;
    std::set<std::int32_t> connections;  ///< open connections (fds) on this bound socket
    bool gone = false;                   ///< every connection closed after one existed
    Clock::time_point gone_at;
    HandshakeWatch handshakes;  ///< with CURVE: the connections it refused
  };
  struct SendLink {
    std::string peer;
    zmq::socket_t socket;
    zmq::socket_t monitor;
    bool gone = false;
    bool sent_any = false;
    std::map<FlowId, SimTime> next;  ///< per flow: timestamp of the next message owed
  };

  std::chrono::milliseconds wait_budget(Clock::time_point next_report) const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_report - Clock::now());
    return std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(20));
  }

  // Waits up to `timeout` for data on link `recv_link` (receiving: only the link the node
  // needs wakes it, the others are read when their turn comes), or for room on `send_link`
  // while reading every link (sending: a node receives in every state, or two nodes sending
  // to each other could block each other). The monitors are read at most every 20 ms: peer
  // loss is rare, waking up for it on every message is not worth it. Receiving reads link
  // `recv_link` only until `wanted` has a message (read_link).
  void pump(std::chrono::milliseconds timeout, int send_link, int recv_link = -1,
            const Input* wanted = nullptr) {
    items_.clear();
    if (send_link >= 0) {
      items_.push_back(
          {send_[static_cast<std::size_t>(send_link)].socket.handle(), 0, ZMQ_POLLOUT, 0});
      for (std::size_t k = 0; k < recv_.size(); ++k) items_.push_back(poll_item(k));
    } else {
      items_.push_back(poll_item(static_cast<std::size_t>(recv_link)));
    }
    zmq::poll(items_.data(), items_.size(), timeout);
    if (send_link >= 0) {
      for (std::size_t k = 0; k < recv_.size(); ++k)
        if (items_[k + 1].revents & ZMQ_POLLIN) read_link(k);
    } else if (items_[0].revents & ZMQ_POLLIN) {
      read_link(static_cast<std::size_t>(recv_link), wanted);
    }
    auto now = Clock::now();
    if (now >= next_monitor_check_) {
      next_monitor_check_ = now + std::chrono::milliseconds(20);
      for (auto& r : recv_) read_events(r);
      for (auto& l : send_) read_events(l);
      log_refusals();
    }
  }

  // (receive() reads a link only as far as it needs: poll() reads all that has arrived.)
  void read_arrived(std::size_t k) override { read_link(k); }

  // Link k's socket, polled for input unless a message of it is held back.
  zmq::pollitem_t poll_item(std::size_t k) {
    return {recv_[k].socket.handle(), 0, static_cast<short>(links_[k].held ? 0 : ZMQ_POLLIN), 0};
  }

  // Moves the available messages of link `k` into its input buffers, until one has no room,
  // or (given `wanted`) until input `wanted` has a message. Stopping there saves the read that
  // finds the socket empty: that read puts ZeroMQ's pipe to sleep, and then the I/O thread
  // has to wake the socket (a command and an eventfd write, and the node's thread a poll and a
  // read) for the next message, where otherwise it just appends it.
  bool read_link(std::size_t k, const Input* wanted = nullptr) {
    bool got = false;
    while (!links_[k].held && !(wanted && !wanted->buffer.empty())) {
      zmq::message_t zm;
      if (!recv_[k].socket.recv(zm, zmq::recv_flags::dontwait)) break;
      // (Only the link's peer gets this far in an authenticated federation; elsewhere anyone
      // can disturb a run anyway.)
      got |= accept(k, decode(zm.data(), zm.size()));
    }
    return got;
  }

  void read_events(RecvLink& r) {
    while (auto e = read_monitor_event(r.monitor)) {
      if (e->first == ZMQ_EVENT_ACCEPTED) {
        r.connections.insert(e->second);
        r.gone = false;
      } else if (e->first == ZMQ_EVENT_DISCONNECTED) {
        r.connections.erase(e->second);
        if (r.connections.empty() && !r.gone) {
          r.gone = true;
          r.gone_at = Clock::now();
        }
      }
      // With CURVE, a connection that fails the handshake never reaches the ZAP handler, and
      // one that sends garbage or HTTP has no handshake event at all: the watch finds both.
      if (!zap_) continue;
      if (auto refused = r.handshakes.take(e->first, e->second); refused && refused->log)
        log(fmt::format("node '{}': refused a connection to the link from '{}' ({} so far): {}",
                        layout_.name, r.peer, refused->count, refused->reason));
    }
  }

  /// Connections the authentication refused (ZAP handler's thread), logged here.
  void log_refusals() {
    if (!zap_) return;
    for (const auto& line : zap_->take_refusals())
      log(fmt::format("node '{}': {}", layout_.name, line));
  }

  void read_events(SendLink& s) {
    while (auto e = read_monitor_event(s.monitor)) {
      if (e->first == ZMQ_EVENT_CONNECTED) s.gone = false;
      if (e->first == ZMQ_EVENT_DISCONNECTED) s.gone = true;
      if (e->first == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        throw std::runtime_error(fmt::format(
            "node '{}': node '{}' refused this node's key (the secret key given to '{}' is not "
            "the one whose public key that node's federation file lists: check --secret-keys "
            "and the public key files)",
            layout_.name, s.peer, layout_.name));
    }
  }

  static void check_rc(int rc) {
    if (rc != 0) throw zmq::error_t();
  }

  // Throws PeerLost if a peer left while messages were still due on a link with it.
  void check_peers() {
    log_refusals();
    for (auto& s : send_)
      if (s.gone) check_sink(s.peer, s.next, "connection closed or heartbeats missed");
    for (std::size_t k = 0; k < recv_.size(); ++k) {
      RecvLink& r = recv_[k];
      if (!r.gone || links_[k].held || !owes(k)) continue;
      if (Clock::now() - r.gone_at < zopt_.drain_grace) continue;
      // Its last messages may still sit in the socket: drain before declaring it lost.
      if (read_link(k)) {
        r.gone_at = Clock::now();
        continue;
      }
      if (buffered(k)) continue;
      lost_source(k, "connection closed or heartbeats missed");
    }
  }

  void shut(int linger_ms) {
    if (shut_) return;
    shut_ = true;
    auto close_link = [&](zmq::socket_t& s, zmq::socket_t& m) {
      zmq_socket_monitor(s.handle(), nullptr, 0);
      m.close();
      s.set(zmq::sockopt::linger, linger_ms);
      s.close();
    };
    for (auto& s : send_) close_link(s.socket, s.monitor);
    for (auto& r : recv_) close_link(r.socket, r.monitor);
  }

  zmq::context_t ctx_{1};
  std::unique_ptr<ZapHandler> zap_;  ///< with CURVE keys; stopped before ctx_ ends
  ZmqOptions zopt_;
  std::vector<RecvLink> recv_;  ///< beside links_: the socket of each
  std::vector<SendLink> send_;
  std::vector<std::vector<std::size_t>> out_links_;
  std::vector<zmq::pollitem_t> items_;
  Clock::time_point next_monitor_check_ = Clock::now();
  std::vector<std::uint8_t> wire_;
  bool closed_ = false;
  bool shut_ = false;
};

std::unique_ptr<Port> make_zmq_port(const FederationLayout& layout, const std::string& name,
                                    PortOptions options, ZmqOptions zmq_options) {
  const NodeLayout* self = layout.find(name);
  if (!self) throw std::logic_error("zmq transport: unknown node '" + name + "'");
  return std::make_unique<ZmqPort>(layout, *self, std::move(options), zmq_options);
}

}  // namespace fleetsim::transport
