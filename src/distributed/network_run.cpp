#include "distributed/network_run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <zmq.hpp>

#include <fmt/format.h>

#include "distributed/run_files_check.hpp"
#include "transport/curve.hpp"
#include "transport/refusals.hpp"
#include "transport/wire.hpp"
#include "transport/zmq_sockets.hpp"
#include "transport/zmq_transport.hpp"

namespace fleetsim::distributed {

namespace {

using Clock = std::chrono::steady_clock;

/// "tcp://HOST:PORT" -> (HOST, PORT); throws std::invalid_argument.
std::pair<std::string, int> split_tcp(const std::string& endpoint, const char* option) {
  const std::string prefix = "tcp://";
  const auto colon = endpoint.rfind(':');
  if (endpoint.rfind(prefix, 0) != 0 || colon == std::string::npos || colon < prefix.size()) {
    throw std::invalid_argument(std::string(option) + " " + endpoint +
                                ": expected tcp://HOST:PORT (e.g. tcp://192.168.1.10:7770)");
  }
  int port = -1;
  try {
    port = std::stoi(endpoint.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (port < 0 || port > 65535)
    throw std::invalid_argument(std::string(option) + " " + endpoint +
                                ": the port must be a number from 0 to 65535");
  return {endpoint.substr(prefix.size(), colon - prefix.size()), port};
}

std::string tcp(const std::string& host, int port) {
  return "tcp://" + host + ":" + std::to_string(port);
}

/// The primary's join port (its --listen socket) as its monitor shows it: the connections it
/// refused, logged as a federation's links log theirs (the ZAP handler's, with their address,
/// and those that failed the handshake or were not ZeroMQ at all), and the connections that
/// closed: a secondary that died, or hung (the port's heartbeats then go unanswered), sends
/// nothing more. Used by the primary's thread only.
class JoinPort {
 public:
  JoinPort(zmq::context_t& ctx, zmq::socket_t& socket, transport::ZapHandler* zap)
      : monitor_(transport::monitor_socket(ctx, socket, "inproc://fleetsim-join-monitor",
                                           transport::HandshakeWatch::events())),
        zap_(zap) {}
  ~JoinPort() { monitor_.close(); }

  /// Logs the refusals since the last call and notes the connections that closed.
  void watch() {
    if (zap_)
      for (const auto& line : zap_->take_refusals())
        std::cerr << "fleetsim: primary: " << line << "\n";
    while (auto e = transport::read_monitor_event(monitor_)) {
      if (e->first == ZMQ_EVENT_ACCEPTED) closed_.erase(e->second);  // (descriptors are reused)
      if (e->first == ZMQ_EVENT_DISCONNECTED) closed_.insert(e->second);
      if (!zap_) continue;  // (without keys, every connection may join)
      if (auto refused = handshakes_.take(e->first, e->second); refused && refused->log)
        std::cerr << "fleetsim: primary: refused a connection to the primary's --listen port ("
                  << refused->count << " so far): " << refused->reason << "\n";
    }
  }
  /// The connection of descriptor `fd` closed (watch() has seen it).
  bool closed(int fd) const { return closed_.count(fd) != 0; }
  /// Counts a message refused on the port; true when it is to be logged.
  bool refuse_message() { return messages_.count(); }

 private:
  zmq::socket_t monitor_;
  transport::ZapHandler* zap_;
  transport::HandshakeWatch handshakes_;
  transport::RefusalCount messages_;
  std::set<int> closed_;
};

void send_json(zmq::socket_t& s, const nlohmann::json& j) {
  const std::string text = j.dump();
  s.send(zmq::buffer(text), zmq::send_flags::none);
}

}  // namespace

std::vector<ProcessReport> run_network(const Loader& load, const SwarmRunOptions& options,
                                       const NetworkOptions& net) {
  auto loaded = load();
  if (!loaded) throw std::invalid_argument("the experiment has errors");
  const nlohmann::json files = files_json(loaded->experiment, *loaded->registry);
  const SimTime tick = loaded->experiment.model->tick_period_ns;
  zmq::context_t ctx(1);
  SwarmRunOptions o = options;

  if (net.primary) {
    const int n = net.secondaries + 1;
    o.processes = n;
    const auto owner =
        assign(loaded->experiment, n, "--network-secondaries (plus 1)");  // before anyone waits
    const auto [host, port] = split_tcp(net.listen, "--listen");
    if (port == 0)
      throw std::invalid_argument("--listen " + net.listen + ": give a port (e.g. 7770)");
    const bool curve = !net.secret_key_file.empty();
    if (curve != !net.public_keys_dir.empty())
      throw std::invalid_argument(
          "an authenticated primary needs both --secret-key FILE (its own) and --public-keys DIR "
          "(the secondaries')");
    if (!curve && host != "127.0.0.1" && host != "localhost")
      std::cerr << "fleetsim: warning: listening on " << net.listen
                << ": any machine that reaches it may join this run (it is not authenticated: "
                   "give --secret-key and --public-keys, docs/distributed.md)\n";
    std::string secret, own_public;
    transport::ZapHandler::Allowed allowed;
    std::map<std::string, std::string> key_of;  // machine name -> Z85 public key
    std::unique_ptr<transport::ZapHandler> zap;
    if (curve) {
      secret = transport::read_curve_key_file(net.secret_key_file);
      own_public = transport::curve_public_of(secret);
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(net.public_keys_dir, ec)) {
        if (e.path().extension() != ".pub") continue;
        const std::string key = transport::read_curve_key_file(e.path().string());
        key_of[e.path().stem().string()] = key;
        allowed["the primary's --listen port"][transport::binary_key(key)] =
            e.path().stem().string();
      }
      if (key_of.empty())
        throw std::invalid_argument("--public-keys " + net.public_keys_dir +
                                    " holds no public key (NAME.pub, from `fleetsim keygen`)");
      zap = std::make_unique<transport::ZapHandler>(ctx, std::move(allowed));
    }
    zmq::socket_t control(ctx, zmq::socket_type::router);
    control.set(zmq::sockopt::linger, 0);
    transport::set_heartbeats(control);
    JoinPort join(ctx, control, zap.get());
    if (curve) {
      control.set(zmq::sockopt::curve_server, 1);
      control.set(zmq::sockopt::curve_secretkey, secret);
      control.set(zmq::sockopt::zap_domain, "the primary's --listen port");
    }
    try {
      control.bind(net.listen);
    } catch (const zmq::error_t& e) {
      throw std::runtime_error("cannot listen on " + net.listen + ": " + e.what() +
                               " (is another program using the port? give --listen another)");
    }
    // The primary's own links: the ports after the control port.
    // (Secondaries reach them at the host they reached the primary at.)
    std::vector<std::string> endpoints = {tcp(host, port + 1)};
    std::vector<std::string> keys = {own_public};  // by process, with authentication
    std::vector<zmq::message_t> ids;
    std::vector<int> fds = {-1};  // by process: the secondary's connection to the join port
    std::cerr << "fleetsim: primary: waiting for " << net.secondaries << " secondar"
              << (net.secondaries == 1 ? "y" : "ies") << " on " << net.listen << "\n";
    while (static_cast<int>(ids.size()) < net.secondaries) {
      std::vector<zmq::message_t> parts;
      zmq::pollitem_t item{control.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(200));
      join.watch();
      if (!(item.revents & ZMQ_POLLIN)) {
        if (o.on_wait && !o.on_wait()) throw std::runtime_error("interrupted while waiting");
        continue;
      }
      zmq::message_t id, body;
      if (!control.recv(id) || !id.more() || !control.recv(body)) continue;
      while (body.more()) (void)control.recv(body);  // extra frames: ignored
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(body.to_string());
      } catch (const std::exception&) {
        if (join.refuse_message())
          std::cerr << "fleetsim: primary: refused a malformed message on " << net.listen << "\n";
        continue;
      }
      if (!j.is_object() || j.value("type", "") != "join" || !j.contains("endpoint") ||
          !j["endpoint"].is_string()) {
        if (join.refuse_message())
          std::cerr << "fleetsim: primary: refused a message that is not a secondary's join\n";
        continue;
      }
      std::string endpoint = j["endpoint"].get<std::string>();
      // A secondary bound on every interface is reached at the address it came from.
      if (endpoint.rfind("tcp://0.0.0.0:", 0) == 0) {
        const char* peer = body.gets("Peer-Address");
        if (peer) endpoint = tcp(peer, split_tcp(endpoint, "endpoint").second);
      }
      const std::string who = j.value("host", "?") + " (" + endpoint + ")";
      std::string why;
      if (j.value("wire", 0) != transport::kWireVersion)
        why = fmt::format(
            "it speaks wire version {}, this primary {} (run the same fleetsim "
            "release on every machine)",
            j.value("wire", 0), transport::kWireVersion);
      if (why.empty()) why = compare_files(files, j.value("files", nlohmann::json()));
      if (why.empty() && j.value("processes", 0) != 0 && j.value("processes", 0) != n)
        why = "it expects another number of processes";
      if (!why.empty()) {
        std::cerr << "fleetsim: primary: refused the secondary on " << who << ": " << why << "\n";
        control.send(id, zmq::send_flags::sndmore);
        send_json(control,
                  {{"type", "refused"}, {"reason", "the primary refused this secondary: " + why}});
        continue;
      }
      std::string machine;
      if (curve) {
        const char* user = body.gets("User-Id");
        machine = user ? user : "";
        if (!key_of.count(machine)) continue;  // (the handler admitted it: cannot happen)
        keys.push_back(key_of[machine]);
      }
      std::cerr << "fleetsim: primary: secondary " << ids.size() + 1 << " joined from " << who
                << (curve ? ", key " + machine : "") << "\n";
      endpoints.push_back(endpoint);
      ids.push_back(std::move(id));
      fds.push_back(body.get(ZMQ_SRCFD));
    }
    const std::uint64_t run_id = transport::new_run_id();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      control.send(ids[k], zmq::send_flags::sndmore);
      send_json(control, {{"type", "welcome"},
                          {"index", k + 1},
                          {"processes", n},
                          {"endpoints", endpoints},
                          {"public_keys", curve ? keys : std::vector<std::string>{}},
                          {"primary_port", port + 1},
                          {"run_id", transport::run_id_text(run_id)},
                          {"sync", o.sync == SyncMode::kLockstep ? "lockstep" : "dsaam"},
                          // (the live view's: how every process exchanges its robots)
                          {"interventions", o.interventions},
                          {"every_robot_everywhere", o.every_robot_everywhere}});
    }
    auto layout = make_swarm_layout(o.sync, n, tick);
    for (int p = 0; p < n; ++p) {
      layout.nodes[static_cast<std::size_t>(p)].endpoint = endpoints[static_cast<std::size_t>(p)];
      if (curve)
        layout.nodes[static_cast<std::size_t>(p)].public_key = keys[static_cast<std::size_t>(p)];
    }
    transport::ZmqOptions zo;
    zo.secret_key = secret;
    transport::PortOptions po;
    po.jitter_us = o.jitter_us;
    po.run_id = run_id;
    po.log = log_refusal;
    std::vector<ProcessReport> reports(static_cast<std::size_t>(n));
    const std::shared_ptr<const WorldModel> model = loaded->experiment.model;  // the run takes it
    // The join port stays open during the run: what it refuses is logged as it comes.
    auto next_watch = Clock::now();
    o.on_tick = [&join, &next_watch, on_tick = o.on_tick](Tick t, Tick total) {
      if (Clock::now() >= next_watch) {
        next_watch = Clock::now() + std::chrono::milliseconds(100);
        join.watch();
      }
      return !on_tick || on_tick(t, total);
    };
    try {
      auto p0 = open_process_port(layout, 0, transport::Carrier::kZmq, po, zo);
      reports[0] = run_process(*loaded, 0, owner, o, *p0);
    } catch (const std::exception& e) {
      reports[0].error = e.what();
    }
    for (int p = 1; p < n; ++p) {
      reports[static_cast<std::size_t>(p)].process = p;
      reports[static_cast<std::size_t>(p)].regions = region_names(*model, owner, p);
      reports[static_cast<std::size_t>(p)].error = "sent no report at the end";
      reports[static_cast<std::size_t>(p)].stopped_by_peer = true;
    }
    // The secondaries' figures, as they finish (they send them at once). A secondary whose
    // connection closed (it died, or hung and missed the heartbeats) sends none: waiting for
    // it would only keep the primary from stopping.
    std::vector<bool> waiting(static_cast<std::size_t>(n), true);
    waiting[0] = false;
    auto take = [&](const zmq::message_t& body) {
      try {
        ProcessReport r = report_from_json(body.to_string());
        if (r.process >= 1 && r.process < n && waiting[static_cast<std::size_t>(r.process)]) {
          waiting[static_cast<std::size_t>(r.process)] = false;
          reports[static_cast<std::size_t>(r.process)] = std::move(r);
        }
      } catch (const std::exception&) {
      }
    };
    const auto until = Clock::now() + std::chrono::seconds(3);
    while (Clock::now() < until) {
      join.watch();
      bool any = false;
      for (int p = 1; p < n; ++p)
        any = any || (waiting[static_cast<std::size_t>(p)] &&
                      !join.closed(fds[static_cast<std::size_t>(p)]));
      zmq::pollitem_t item{control.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, any ? std::chrono::milliseconds(20) : std::chrono::milliseconds(0));
      // (What a secondary sent before its connection closed is still read here.)
      zmq::message_t id, body;
      while (control.recv(id, zmq::recv_flags::dontwait)) {
        if (id.more() && control.recv(body)) take(body);
        while (body.more()) (void)control.recv(body);
      }
      if (!any) break;
    }
    return reports;
  }

  // A secondary.
  split_tcp(net.primary_address, "--primary");
  std::string listen = net.listen.empty() ? "tcp://127.0.0.1:0" : net.listen;
  auto [host, port] = split_tcp(listen, "--listen");
  const bool curve = !net.secret_key_file.empty();
  if (curve != !net.primary_key_file.empty())
    throw std::invalid_argument(
        "an authenticated secondary needs both --secret-key FILE (its own) and --primary-key "
        "FILE (the primary's public key)");
  std::string secret, own_public;
  zmq::socket_t control(ctx, zmq::socket_type::dealer);
  control.set(zmq::sockopt::linger, 2000);
  transport::set_heartbeats(control);
  zmq::socket_t control_monitor =
      transport::monitor_socket(ctx, control, "inproc://fleetsim-control-monitor",
                                ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED);
  if (curve) {
    secret = transport::read_curve_key_file(net.secret_key_file);
    own_public = transport::curve_public_of(secret);
    control.set(zmq::sockopt::curve_serverkey,
                transport::read_curve_key_file(net.primary_key_file));
    control.set(zmq::sockopt::curve_publickey, own_public);
    control.set(zmq::sockopt::curve_secretkey, secret);
  }
  control.connect(net.primary_address);
  char hostname[256] = "?";
  gethostname(hostname, sizeof hostname - 1);
  // Ports: the links of this process's node use PORT.. (one per other process); with port 0
  // the run picks a free block of 64 (up to 64 processes).
  const std::string endpoint =
      tcp(host, port == 0 ? free_port_block(64, host == "0.0.0.0" ? "127.0.0.1" : host) : port);
  // The join waits at most the connect timeout to leave too: a primary that refuses the
  // connection's handshake (it requires keys this one lacks) leaves no pipe to send on, and an
  // unbounded send would wait for ever.
  const auto wait_ms = static_cast<int>(net.connect_timeout_s * 1000);
  control.set(zmq::sockopt::sndtimeo, wait_ms);
  const std::string join = nlohmann::json{{"type", "join"},
                                          {"host", hostname},
                                          {"endpoint", endpoint},
                                          {"files", files},
                                          {"wire", transport::kWireVersion}}
                               .dump();
  const bool sent = control.send(zmq::buffer(join), zmq::send_flags::none).has_value();
  control.set(zmq::sockopt::sndtimeo, -1);
  std::cerr << "fleetsim: secondary: joining the primary at " << net.primary_address << "\n";
  zmq::pollitem_t item{control.handle(), 0, ZMQ_POLLIN, 0};
  if (sent) zmq::poll(&item, 1, std::chrono::milliseconds(wait_ms));
  if (!(item.revents & ZMQ_POLLIN)) {
    control.set(zmq::sockopt::linger, 0);
    throw std::runtime_error("no answer from a primary at " + net.primary_address + " within " +
                             std::to_string(static_cast<int>(net.connect_timeout_s)) +
                             " s (is `fleetsim run ... --network-role primary --listen " +
                             net.primary_address + "` running there, and the port reachable? " +
                             (curve ? "Does its --public-keys hold this machine's key, and "
                                      "--primary-key the primary's?"
                                    : "Does it require keys (--secret-key, --primary-key)?") +
                             ")");
  }
  zmq::message_t body;
  if (!control.recv(body)) throw std::runtime_error("the primary's answer was lost");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body.to_string());
  } catch (const std::exception&) {
    throw std::runtime_error("a malformed answer from " + net.primary_address);
  }
  if (j.value("type", "") == "refused") throw std::invalid_argument(j.value("reason", "refused"));
  if (j.value("type", "") != "welcome" || !j.contains("endpoints") || !j["endpoints"].is_array())
    throw std::runtime_error("an answer from " + net.primary_address + " that is not a welcome");
  const int n = j.value("processes", 0);
  const int index = j.value("index", 0);
  if (n < 2 || index < 1 || index >= n || static_cast<int>(j["endpoints"].size()) != n)
    throw std::runtime_error("a welcome from " + net.primary_address + " that does not add up");
  o.processes = n;
  o.sync = j.value("sync", "dsaam") == "lockstep" ? SyncMode::kLockstep : SyncMode::kDsaam;
  o.interventions = j.value("interventions", false);
  o.every_robot_everywhere = j.value("every_robot_everywhere", false);
  const auto owner = assign(loaded->experiment, n, "--network-secondaries (plus 1)");
  auto layout = make_swarm_layout(o.sync, n, tick);
  for (int p = 0; p < n; ++p)
    layout.nodes[static_cast<std::size_t>(p)].endpoint =
        j["endpoints"][static_cast<std::size_t>(p)].get<std::string>();
  // The primary's links, at the host this secondary reached it at.
  layout.nodes[0].endpoint =
      tcp(split_tcp(net.primary_address, "--primary").first, j.value("primary_port", 0));
  transport::ZmqOptions zo;
  if (curve) {
    const auto keys = j.value("public_keys", std::vector<std::string>{});
    if (static_cast<int>(keys.size()) != n || keys[static_cast<std::size_t>(index)] != own_public)
      throw std::runtime_error("a welcome from " + net.primary_address +
                               " without this run's keys");
    for (int p = 0; p < n; ++p)
      layout.nodes[static_cast<std::size_t>(p)].public_key = keys[static_cast<std::size_t>(p)];
    zo.secret_key = secret;
  }
  const auto run_id = transport::parse_run_id(j.value("run_id", ""));
  if (!run_id)
    throw std::runtime_error("a welcome from " + net.primary_address + " without a run id");
  transport::PortOptions po;
  po.jitter_us = o.jitter_us;
  po.run_id = *run_id;
  po.log = log_refusal;
  o.on_tick = nullptr;
  ProcessReport r;
  r.process = index;
  try {
    auto port_ = open_process_port(layout, index, transport::Carrier::kZmq, po, zo);
    r = run_process(*loaded, index, owner, o, *port_);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  // The report, unless the primary is gone (it died, or hung and missed the heartbeats): it
  // would then wait out the linger, and this process would not stop. (A connection counts
  // from its handshake: a hung primary's kernel still accepts one.) After a failure, the
  // primary may be going too: the report waits less.
  bool connected = true;
  while (auto e = transport::read_monitor_event(control_monitor))
    connected = e->first == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
  if (connected) {
    if (!r.ok) control.set(zmq::sockopt::linger, 300);
    send_json(control, nlohmann::json::parse(report_to_json(r)));
  } else {
    control.set(zmq::sockopt::linger, 0);
  }
  zmq_socket_monitor(control.handle(), nullptr, 0);
  control_monitor.close();
  return {r};
}

}  // namespace fleetsim::distributed
