// bench/timesync: K nodes with trivial work per step, synchronised either by DSAAM flows or
// by the lockstep baseline, on the in-process, shared-memory or ZeroMQ transport. Prints one
// JSON line.
//
//   timesync --nodes K --mode dsaam|lockstep --transport inproc|shm|zmq
//            --topology ring|all-to-all --steps M --payload BYTES
//
// A step is one period of simulated time. DSAAM: every node emits one message per step on
// its flow (ring: to its successor; all-to-all: one flow to every other node), and consumes
// its inputs' messages of the previous step. Lockstep: node 0 is the primary; it sends each
// secondary the step order carrying the state it needs (ring: its predecessor's, all-to-all:
// everyone else's), each secondary steps and acks with its own state. With ZeroMQ every node
// is a process (this program re-executed with --node I). Timing starts after a warm-up of a
// tenth of the steps; the slowest node's time counts.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/command_line.hpp"
#include "fleetsim/federate.hpp"
#include "time/flow_node.hpp"
#include "time/lockstep.hpp"
#include "transport/inproc_transport.hpp"
#include "transport/open_port.hpp"
#include "transport/shm_transport.hpp"
#include "transport/zmq_transport.hpp"

extern char** environ;

namespace fleetsim {
namespace {

using Clock = std::chrono::steady_clock;
constexpr SimTime kPeriod = 1'000'000;  // 1 ms of simulated time per step

struct Config {
  int nodes = 4;
  std::string mode = "dsaam";
  std::string transport = "zmq";
  std::string topology = "all-to-all";
  std::int64_t steps = 20000;
  std::size_t payload = 0;
  std::string endpoint = "tcp";
  int port_base = 0;
  int node = -1;             // internal: run only this node (zmq child)
  std::string api = "flow";  // flow: a FlowNode with a behaviour; federate: the federate API
  std::string zmq_io_thread = "default";  // zmq: "dedicated" pins it per node, SCHED_BATCH
  int spin_us = -1;                       // shm: spin before sleeping (-1: the transport's default)
  int yield_us = -1;  // shm: then yield before sleeping (-1: the transport's default)
};

/// The federation file the federate API's nodes join (written by the parent, read by each
/// node process): the layout of make_layout as docs/federation-format.md writes it.
std::string federation_path(const Config& c) {
  return fmt::format("/tmp/fleetsim-timesync-{}.xml", c.port_base);
}

/// What one node measured.
struct NodeTiming {
  double elapsed_s = 0;        ///< from the end of the warm-up to the end
  std::uint64_t messages = 0;  ///< messages it sent over the whole run
};

std::int64_t warmup(const Config& c) {
  return c.steps / 10;
}

transport::FederationLayout make_layout(const Config& c) {
  transport::FederationLayout l;
  if (c.mode == "lockstep") {
    std::vector<std::string> names;
    for (int i = 0; i < c.nodes; ++i) names.push_back(fmt::format("n{}", i));
    l = time::make_lockstep_layout(names, c.steps * kPeriod);
  } else {
    l.until = c.steps * kPeriod;
    for (int i = 0; i < c.nodes; ++i) l.nodes.push_back({fmt::format("n{}", i), "", {}, {}});
    for (int i = 0; i < c.nodes; ++i) {
      auto flow = static_cast<transport::FlowId>(i);
      transport::OutputLink out{flow, fmt::format("f{}", i), {}, 0};
      for (int j = 0; j < c.nodes; ++j) {
        bool linked = c.topology == "ring" ? j == (i + 1) % c.nodes : j != i;
        if (!linked) continue;
        out.sinks.push_back(l.nodes[static_cast<std::size_t>(j)].name);
        l.nodes[static_cast<std::size_t>(j)].inputs.push_back(
            {flow, out.flow_name, l.nodes[static_cast<std::size_t>(i)].name, 4, 0});
      }
      l.nodes[static_cast<std::size_t>(i)].outputs.push_back(out);
    }
  }
  for (int i = 0; i < c.nodes; ++i) {
    auto& n = l.nodes[static_cast<std::size_t>(i)];
    n.endpoint = c.endpoint == "ipc"
                     ? fmt::format("ipc:///tmp/fleetsim-timesync-{}-n{}", c.port_base, i)
                     : fmt::format("tcp://127.0.0.1:{}", c.port_base + 32 * i);
  }
  return l;
}

/// DSAAM node: emits `payload` bytes per step, folds what it consumes into a checksum.
class TrivialNode final : public time::NodeBehaviour {
 public:
  TrivialNode(std::size_t payload, SimTime warm_until) : payload_(payload), warm_(warm_until) {}
  void consume(std::size_t, const time::Message& m) override { sum_ += m.payload.size(); }
  time::Emission emit(std::size_t, SimTime t) override {
    if (t == warm_) start_ = Clock::now();
    return {t, kPeriod, std::vector<std::uint8_t>(payload_, static_cast<std::uint8_t>(t))};
  }
  Clock::time_point start() const { return start_; }

 private:
  std::size_t payload_;
  SimTime warm_;
  Clock::time_point start_ = Clock::now();
  std::uint64_t sum_ = 0;
};

void write_federation(const Config& c, const transport::FederationLayout& layout) {
  std::string xml = fmt::format("<federation until=\"{}ms\" buffer=\"4\">\n", c.steps);
  for (const auto& n : layout.nodes) {
    xml += fmt::format("  <node name=\"{}\" kind=\"mixer\" endpoint=\"{}\">\n", n.name, n.endpoint);
    for (const auto& i : n.inputs) xml += fmt::format("    <input name=\"{}\"/>\n", i.source);
    xml += "    <output name=\"o\"/>\n  </node>\n";
  }
  for (const auto& n : layout.nodes) {
    std::string to;
    for (const auto& sink : n.outputs[0].sinks) to += fmt::format(" {}.{}", sink, n.name);
    xml += fmt::format("  <flow name=\"{}\" from=\"{}.o\" to=\"{}\" period=\"1ms\"/>\n",
                       n.outputs[0].flow_name, n.name, to.substr(1));
  }
  xml += "</federation>\n";
  std::FILE* f = std::fopen(federation_path(c).c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + federation_path(c));
  std::fputs(xml.c_str(), f);
  std::fclose(f);
}

/// A node on the federate API: one time-advance request per step, its payload sent at each.
NodeTiming run_federate(const Config& c, const transport::FederationLayout& layout, int index) {
  FederateOptions o;
  o.quiet = true;
  o.transport = c.transport;  // (auto would pick shared memory for these local endpoints)
  Federate fed(federation_path(c), layout.nodes[static_cast<std::size_t>(index)].name, o);
  fed.update("o", std::vector<std::uint8_t>(c.payload, 7));
  std::uint64_t sum = 0;
  fed.set_message_handler([&](const Delivered& m) { sum += m.payload.size(); });
  Clock::time_point start = Clock::now();
  for (std::int64_t k = 0;; ++k) {
    if (k == warmup(c)) start = Clock::now();
    if (fed.time_advance_request(k * kPeriod).done) break;
  }
  NodeTiming timing;
  timing.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  timing.messages =
      fed.emitted() * layout.nodes[static_cast<std::size_t>(index)].outputs[0].sinks.size();
  fed.resign();
  return timing;
}

NodeTiming run_node(const Config& c, const transport::FederationLayout& layout, int index,
                    transport::Port& port) {
  NodeTiming timing;
  Clock::time_point start;
  if (c.mode == "dsaam") {
    TrivialNode behaviour(c.payload, warmup(c) * kPeriod);
    time::FlowNode node(layout.nodes[static_cast<std::size_t>(index)], port,
                        {.until = layout.until});
    node.run(behaviour);
    start = behaviour.start();
  } else if (index == 0) {
    time::LockstepPrimary primary(port, kPeriod);
    std::size_t per = c.topology == "ring" ? c.payload : c.payload * (c.nodes - 1);
    std::vector<std::vector<std::uint8_t>> orders(primary.secondaries(),
                                                  std::vector<std::uint8_t>(per));
    for (std::int64_t k = 0; k < c.steps; ++k) {
      if (k == warmup(c)) start = Clock::now();
      primary.step(orders);
    }
  } else {
    time::LockstepSecondary secondary(port);
    start = Clock::now();
    for (std::int64_t k = 0; k < c.steps; ++k) {
      auto order = secondary.next_step();
      secondary.ack(std::vector<std::uint8_t>(c.payload, static_cast<std::uint8_t>(k)));
    }
  }
  timing.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  timing.messages = port.stats().messages_sent;
  port.close();
  return timing;
}

std::vector<NodeTiming> run_inproc(const Config& c) {
  auto layout = make_layout(c);
  transport::InprocNetwork net(layout);
  std::vector<NodeTiming> timings(static_cast<std::size_t>(c.nodes));
  std::vector<std::thread> threads;
  for (int i = 0; i < c.nodes; ++i)
    threads.emplace_back([&, i] {
      auto port = net.port(layout.nodes[static_cast<std::size_t>(i)].name, {});
      timings[static_cast<std::size_t>(i)] = run_node(c, layout, i, *port);
    });
  for (auto& t : threads) t.join();
  return timings;
}

// One child process per node; each prints "elapsed messages" on its stdout (a pipe).
std::vector<NodeTiming> run_processes(const Config& c, const std::vector<std::string>& args) {
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int i = 0; i < c.nodes; ++i) {
    int fd[2];
    if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    std::vector<std::string> child = args;
    child.insert(child.end(),
                 {"--node", std::to_string(i), "--port-base", std::to_string(c.port_base)});
    std::vector<char*> argv;
    for (auto& a : child) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start a node process");
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    pids.push_back(pid);
    pipes.push_back(fd[0]);
  }
  std::vector<NodeTiming> timings;
  bool failed = false;
  for (int i = 0; i < c.nodes; ++i) {
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(pipes[static_cast<std::size_t>(i)], buf, sizeof buf)) > 0)
      out.append(buf, static_cast<std::size_t>(n));
    close(pipes[static_cast<std::size_t>(i)]);
    int st = 0;
    waitpid(pids[static_cast<std::size_t>(i)], &st, 0);
    NodeTiming t;
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
        std::sscanf(out.c_str(), "%lf %lu", &t.elapsed_s, &t.messages) != 2)
      failed = true;
    timings.push_back(t);
  }
  if (failed) throw std::runtime_error("a node process failed");
  return timings;
}

}  // namespace
}  // namespace fleetsim

int main(int argc, char** argv) {
  using namespace fleetsim;
  Config c;
  CLI::App app{"Time-synchronisation benchmark: DSAAM flows versus lockstep; one JSON line."};
  app.add_option("--nodes", c.nodes, "Number of nodes K (>= 2)")->check(CLI::Range(2, 64));
  app.add_option("--mode", c.mode, "dsaam or lockstep")
      ->check(CLI::IsMember({"dsaam", "lockstep"}));
  app.add_option("--transport", c.transport,
                 "inproc (threads), shm (processes, shared-memory rings) or zmq (processes)")
      ->check(CLI::IsMember({"inproc", "shm", "zmq"}));
  app.add_option("--topology", c.topology, "ring or all-to-all")
      ->check(CLI::IsMember({"ring", "all-to-all"}));
  app.add_option("--steps", c.steps, "Steps M")->check(CLI::Range(10, 1'000'000'000));
  app.add_option("--payload", c.payload, "Payload bytes per message")
      ->check(CLI::Range(0, 1 << 24));
  app.add_option("--endpoint", c.endpoint, "zmq: tcp (loopback) or ipc")
      ->check(CLI::IsMember({"tcp", "ipc"}));
  app.add_option("--port-base", c.port_base, "zmq: first tcp port (default: random)");
  app.add_option("--zmq-io-thread", c.zmq_io_thread,
                 "zmq: default (the scheduler places ZeroMQ's I/O thread) or dedicated (pinned "
                 "to a CPU per node and SCHED_BATCH: for machines given to the federation)")
      ->check(CLI::IsMember({"default", "dedicated"}));
  app.add_option("--node", c.node, "internal: run only this node")->group("");
  app.add_option("--api", c.api,
                 "dsaam over zmq: flow (a FlowNode running a behaviour) or federate (each node "
                 "a program on the federate API, one time-advance request per step)")
      ->check(CLI::IsMember({"flow", "federate"}));
  app.add_option("--spin-us", c.spin_us,
                 "shm: microseconds a node polls its rings before it sleeps (default: the "
                 "transport's)");
  app.add_option("--yield-us", c.yield_us,
                 "shm: microseconds a node then polls between yields of the processor before "
                 "it sleeps (default: the transport's)");
  if (int status = parse_command_line(app, argc, argv); status >= 0) return status;

  try {
    if (c.api == "federate" && (c.mode != "dsaam" || c.transport == "inproc")) {
      std::cerr << "timesync: --api federate needs --mode dsaam and --transport zmq or shm\n";
      return 2;
    }
    if (c.node >= 0 && c.api == "federate") {
      auto t = run_federate(c, make_layout(c), c.node);
      std::printf("%.9f %lu\n", t.elapsed_s, static_cast<unsigned long>(t.messages));
      return 0;
    }
    if (c.node >= 0) {
      auto layout = make_layout(c);
      const auto& name = layout.nodes[static_cast<std::size_t>(c.node)].name;
      transport::PortConfig pc;
      pc.carrier = c.transport == "shm" ? transport::Carrier::kShm : transport::Carrier::kZmq;
      if (c.spin_us >= 0) pc.shm.spin = std::chrono::microseconds(c.spin_us);
      if (c.yield_us >= 0) pc.shm.yield = std::chrono::microseconds(c.yield_us);
      if (c.zmq_io_thread == "dedicated") {
        pc.zmq.io_thread_cpu = transport::kIoThreadCpuByNode;
        pc.zmq.io_thread_batch = true;
      }
      auto port = transport::open_port(layout, name, std::move(pc));
      auto t = run_node(c, layout, c.node, *port);
      std::printf("%.9f %lu\n", t.elapsed_s, static_cast<unsigned long>(t.messages));
      return 0;
    }
    // Below the kernel's ephemeral port range (32768+), where outgoing connections take ports.
    if (c.port_base == 0) c.port_base = 20000 + static_cast<int>(std::random_device{}() % 10000);
    std::vector<NodeTiming> timings;
    if (c.transport == "inproc") {
      timings = run_inproc(c);
    } else {
      std::vector<std::string> args(argv, argv + argc);
      if (c.api == "federate") write_federation(c, make_layout(c));
      timings = run_processes(c, args);
      if (c.api == "federate") std::remove(federation_path(c).c_str());
    }
    // CPU of every node process (user + system, the whole run with start-up and warm-up),
    // per message sent: what a message costs the machine, beside the time per step.
    double cpu_s = -1;
    if (c.transport != "inproc") {
      rusage ru{};
      getrusage(RUSAGE_CHILDREN, &ru);
      cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    }
    double elapsed = 0;
    std::uint64_t messages = 0;
    for (const auto& t : timings) {
      elapsed = std::max(elapsed, t.elapsed_s);
      messages += t.messages;
    }
    double measured = static_cast<double>(c.steps - warmup(c));
    double steps_per_second = measured / elapsed;
    double per_step = static_cast<double>(messages) / static_cast<double>(c.steps);
    nlohmann::json j;
    j["nodes"] = c.nodes;
    j["mode"] = c.mode;
    j["api"] = c.api;
    j["transport"] = c.transport;
    j["topology"] = c.topology;
    j["payload"] = c.payload;
    j["steps"] = c.steps;
    j["steps_per_second"] = std::round(steps_per_second * 10) / 10;
    j["messages_per_second"] = std::round(steps_per_second * per_step);
    j["microseconds_per_step"] = std::round(1e7 / steps_per_second) / 10;
    j["messages_per_step"] = per_step;
    // DSAAM sends nothing but data; every lockstep message is a step order or an ack.
    j["control_messages_per_step"] = c.mode == "dsaam" ? 0.0 : per_step;
    if (cpu_s >= 0 && messages > 0)
      j["cpu_microseconds_per_message"] =
          std::round(cpu_s * 1e7 / static_cast<double>(messages)) / 10;
    std::cout << j.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "timesync: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
