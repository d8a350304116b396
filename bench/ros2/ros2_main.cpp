// bench/ros2: what `fleetsim run --ros2` costs a run (issue 31: 1,000 robots publishing
// odometry and tf at 10 Hz, at most 10 % overhead). The diffusion scene of bench/diffusion
// (e-pucks, 10 ticks per simulated second), run `--pairs` times without the bridge and with
// it, alternated (so that the machine's load falls on both alike). With the bridge, every
// robot is chosen (`--ros2-robots all`): after every step it publishes /clock and, at
// `--rate` Hz of simulated time, /NS/poses, each robot's odometry (and scan with --scans on)
// and /tf, before every step it takes commands, as `fleetsim run --ros2` does. The bridge
// writes only what someone subscribes to, so `--subscribe` starts a second process, a
// subscriber as a ROS 2 node with the default QoS makes it (reliable, the last 10), before the
// runs: to /tf (`tf`, as rviz does), to /tf and every robot's odometry (and scan with --scans
// on) (`all`), or none. Each run's loop starts once every subscription has matched. DDS stays
// on the loopback interface (CYCLONEDDS_URI, unless set), in domain `--domain`.
//
//   ros2 --robots N --threads P --seconds S --pairs K --rate HZ --scans on|off [--realtime]
//        --subscribe none|tf|all --seed S
//   ros2 --raw-udp BYTES --robots N --seconds S --pairs K    (no DDS: the floor, below)
//
// Prints one JSON line: the loop's wall seconds of each run (`off_seconds`, `ros2_seconds`),
// their medians, `overhead` = median(ros2) / median(off) - 1 (as fast as possible),
// `pair_overhead_median` (the median of each pair's own ratio), the same for the process's
// CPU seconds in the loop (`cpu_overhead`, `pair_cpu_overhead_median`), `realtime_share` =
// (median(ros2) - median(off)) / simulated seconds: the share of each wall second the bridge
// takes in a real-time run (`--time-mode realtime`, as ROS 2 users run it),
// `realtime_cpu_cores` the same for CPU time, the bridge's setup seconds (joining DDS,
// creating the writers), the messages it published per run, the samples the subscriber
// received in all, and `same_hash` (the bridge changes nothing in the run).
#include <arpa/inet.h>
#include <dds/dds.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_run.hpp"
#include "core/command_line.hpp"
#include "core/hash.hpp"
#include "diffusion_scene.hpp"
#include "plugins/builtins.hpp"
#include "ros2/ros2_bridge.hpp"
#include "ros2_msgs.h"
#include "sim/simulation.hpp"

namespace {

using namespace fleetsim;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Run {
  double loop_seconds = 0;
  double cpu_seconds = 0;  ///< the process's CPU time (every thread, DDS's too) in the loop
  double setup_seconds = 0;
  std::uint64_t hash = 0;
  std::size_t topics = 0;
};

std::atomic<std::uint64_t> g_samples{0};
bool g_best_effort = false;  ///< the subscriptions' reliability (ROS 2's default: reliable)
/// --realtime: each run's loop paced to the wall clock, a tick per 100 ms (`fleetsim run
/// --time-mode realtime`), so that DDS's timed work (heartbeats, acknowledgements) falls per
/// wall second as in a live run; false: as fast as possible.
bool g_realtime = false;
volatile sig_atomic_t g_stop = 0;

void on_data(dds_entity_t reader, void*) {
  constexpr int kBatch = 32;
  for (;;) {
    void* s[kBatch] = {};
    dds_sample_info_t info[kBatch];
    const int n = dds_take(reader, s, info, kBatch, kBatch);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) g_samples += info[i].valid_data;
    dds_return_loan(reader, s, n);
    if (n < kBatch) return;
  }
}

/// The subscriber process: reliable subscriptions keeping the last 10 (a ROS 2 node's
/// default) to `topics`, counting the samples; on SIGTERM it writes the count to `fd`.
[[noreturn]] void subscriber(
    int domain, const std::vector<std::pair<std::string, const dds_topic_descriptor_t*>>& topics,
    int fd) {
  signal(SIGTERM, [](int) { g_stop = 1; });
  const dds_entity_t p =
      dds_create_participant(static_cast<dds_domainid_t>(domain), nullptr, nullptr);
  dds_qos_t* q = dds_create_qos();
  if (g_best_effort)
    dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
  else
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
  dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 10);
  dds_listener_t* l = dds_create_listener(nullptr);
  dds_lset_data_available(l, on_data);
  for (const auto& [name, type] : topics)
    dds_create_reader(p, dds_create_topic(p, type, name.c_str(), nullptr, nullptr), q, l);
  while (!g_stop) usleep(20000);
  const std::uint64_t n = g_samples;
  [[maybe_unused]] const auto written = write(fd, &n, sizeof n);
  dds_delete(p);
  _exit(0);
}

std::size_t g_subscriptions = 0;  ///< writers the subscriber process matches

Run run_once(const bench::DiffusionSceneOptions& o, const std::string& dir,
             const ros2::BridgeOptions* bridge) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics diags;
  auto ex = bench::make_diffusion_experiment(o, dir, registry, diags);
  if (!ex) {
    diags.print(std::cerr);
    std::exit(kExitUserError);
  }
  Simulation sim(std::move(*ex), registry);
  sim.start();
  Run r;
  std::unique_ptr<ros2::Bridge> ros;
  if (bridge) {
    const auto s0 = std::chrono::steady_clock::now();
    ros = std::make_unique<ros2::Bridge>(sim, *bridge);
    ros->publish();
    // Until the subscriber has matched every writer it subscribes to (at most a minute).
    for (int t = 0; t < 6000 && ros->subscribed_writers() < g_subscriptions; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (ros->subscribed_writers() < g_subscriptions)
      std::cerr << "ros2 bench: only " << ros->subscribed_writers() << " of " << g_subscriptions
                << " writers matched\n";
    r.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    r.topics = ros->topics().size();
  }
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = bench::cpu_seconds();
  const SimTime tick_ns = sim.model().tick_period_ns;
  Tick ticks = 0;
  while (!sim.done()) {
    if (ros) ros->take_commands();
    sim.step();
    if (ros) ros->publish();
    if (g_realtime) std::this_thread::sleep_until(w0 + std::chrono::nanoseconds(++ticks * tick_ns));
  }
  r.loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  r.cpu_seconds = bench::cpu_seconds() - c0;
  sim.finish();
  r.hash = sim.state().hash();
  return r;
}

/// --raw-udp BYTES: the floor under any DDS implementation that sends one datagram per sample.
/// As many datagrams as a publication of every robot's odometry makes (one per robot per
/// tick, BYTES each: Cyclone DDS sends an Odometry sample with its heartbeat as 812 bytes),
/// each with one sendmsg, over the loopback to a receiver process that takes them one by one,
/// a tick per 100 ms of wall time; the sender's CPU per second, `pairs` runs.
int raw_udp_floor(int robots, double seconds, int runs, int bytes) {
  const int rx = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof to;
  // (Cyclone DDS's receive buffer: 2 MB)
  const int buffer = 2 << 20;
  if (rx < 0 || bind(rx, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 ||
      getsockname(rx, reinterpret_cast<sockaddr*>(&to), &len) != 0 ||
      setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer) != 0) {
    std::cerr << "ros2 bench: cannot make a UDP socket on the loopback\n";
    return 1;
  }
  const pid_t child = fork();
  if (child == 0) {
    std::vector<char> in(65536);
    while (recv(rx, in.data(), in.size(), 0) > 1) {
    }
    _exit(0);
  }
  const int tx = socket(AF_INET, SOCK_DGRAM, 0);
  std::vector<char> out(static_cast<std::size_t>(bytes), 0);
  const auto ticks = static_cast<long>(seconds * 10);
  std::vector<double> cpu;
  std::uint64_t sent = 0;
  for (int k = 0; k < runs; ++k) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = bench::cpu_seconds();
    for (long t = 0; t < ticks; ++t) {
      for (int r = 0; r < robots; ++r) {
        iovec v{out.data(), out.size()};
        msghdr h{};
        h.msg_name = &to;
        h.msg_namelen = sizeof to;
        h.msg_iov = &v;
        h.msg_iovlen = 1;
        sent += sendmsg(tx, &h, 0) == bytes;
      }
      std::this_thread::sleep_until(w0 + std::chrono::milliseconds(100 * (t + 1)));
    }
    cpu.push_back(bench::cpu_seconds() - c0);
  }
  sendto(tx, out.data(), 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  waitpid(child, nullptr, 0);
  nlohmann::json j = {{"bench", "ros2_raw_udp"},
                      {"robots", robots},
                      {"seconds", seconds},
                      {"bytes", bytes},
                      {"runs", runs},
                      {"datagrams_per_second", robots * 10},
                      {"datagrams_sent", sent},
                      {"cpu_seconds", cpu},
                      {"realtime_cpu_cores", median(cpu) / seconds}};
  std::cout << j.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bench::DiffusionSceneOptions o;
  o.robots = 1000;
  o.seconds = 60;
  int pairs = 5;
  double rate = 10;
  std::string scans = "off";
  int domain = 200 + static_cast<int>(::getpid() % 33);
  CLI::App app{
      "What `fleetsim run --ros2` costs a run: the diffusion scene without and with the ROS 2 "
      "bridge publishing every robot's odometry and tf, alternated; prints one JSON line "
      "(docs/benchmarks.md, \"ROS 2 bridge\").",
      "ros2"};
  app.option_defaults()->always_capture_default();
  app.add_option("--robots", o.robots, "Number of e-pucks N")->check(CLI::Range(1, 100'000'000));
  app.add_option("--threads", o.threads, "Worker threads P")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", o.seconds, "Simulated seconds per run")->check(CLI::Range(0.1, 1e6));
  app.add_option("--pairs", pairs, "Runs without and with the bridge, alternated")
      ->check(CLI::Range(1, 100));
  app.add_option("--rate", rate, "Publications per simulated second (--ros2-rate)")
      ->check(CLI::PositiveNumber);
  app.add_option("--scans", scans, "on: every robot's laser scan too")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--domain", domain, "DDS domain (default: 200 + pid % 33)")
      ->check(CLI::Range(0, 232));
  app.add_option("--seed", o.seed, "Random seed of the placement and the controllers")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{0x7fffffffffffffff}));
  std::string subscribe = "tf";
  app.add_option("--subscribe", subscribe,
                 "a subscriber process to /tf (tf), to /tf and every robot's odometry and scans "
                 "(all), or none")
      ->check(CLI::IsMember({"none", "tf", "all"}));
  std::string reliability = "reliable";
  app.add_option("--subscriber-reliability", reliability,
                 "the subscriptions': reliable (ROS 2's default profile) or best_effort (its "
                 "sensor data profile)")
      ->check(CLI::IsMember({"reliable", "best_effort"}));
  app.add_flag("--realtime", g_realtime,
               "pace each run's loop to the wall clock (a simulated second per wall second, as "
               "`--time-mode realtime`); CPU time is then the figure");
  int raw_udp = 0;
  app.add_option("--raw-udp", raw_udp,
                 "instead: the floor under one datagram per sample, BYTES-byte UDP datagrams, "
                 "one per robot per tick, to a receiver process; --pairs runs")
      ->check(CLI::Range(0, 65000));
  if (int status = parse_command_line(app, argc, argv); status >= 0) return status;
  if (raw_udp > 0) return raw_udp_floor(o.robots, o.seconds, pairs, raw_udp);
  g_best_effort = reliability == "best_effort";
  // Nothing leaves the machine.
  setenv("CYCLONEDDS_URI",
         "<CycloneDDS><Domain><General><Interfaces><NetworkInterface address=\"127.0.0.1\"/>"
         "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
         "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>60"
         "</MaxAutoParticipantIndex><Peers><Peer Address=\"127.0.0.1\"/></Peers></Discovery>"
         "</Domain></CycloneDDS>",
         0);
  ros2::BridgeOptions b;
  b.domain = domain;
  b.ns = "bench" + std::to_string(::getpid());
  b.robots = {"all"};
  b.rate_hz = rate;
  b.scans = scans == "on";

  const auto dir = std::filesystem::temp_directory_path() /
                   ("fleetsim_bench_ros2_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);

  // The subscriber's topics, from the scene's robot ids; it forks before this process uses
  // DDS.
  std::vector<std::pair<std::string, const dds_topic_descriptor_t*>> subscriptions;
  if (subscribe != "none") subscriptions.push_back({"rt/tf", &tf2_msgs_msg_dds__TFMessage__desc});
  if (subscribe == "all") {
    PluginRegistry registry;
    register_builtins(registry);
    Diagnostics diags;
    auto ex = bench::make_diffusion_experiment(o, dir.string(), registry, diags);
    const auto& names = ex->state.robot_name();
    for (std::size_t row = 0; row < names.size(); ++row) {
      const std::string base = "rt/" + b.ns + "/" + ros2::ros_name_token(names[row]);
      subscriptions.push_back({base + "/odom", &nav_msgs_msg_dds__Odometry__desc});
      if (b.scans) subscriptions.push_back({base + "/scan", &sensor_msgs_msg_dds__LaserScan__desc});
    }
  }
  g_subscriptions = subscriptions.size();
  int pipe_fds[2] = {-1, -1};
  pid_t child = -1;
  if (!subscriptions.empty()) {
    if (pipe(pipe_fds) != 0) return 1;
    child = fork();
    if (child == 0) {
      close(pipe_fds[0]);
      subscriber(domain, subscriptions, pipe_fds[1]);
    }
    close(pipe_fds[1]);
  }
  std::vector<double> off, on, ratio, off_cpu, on_cpu, cpu_ratio, setup;
  std::uint64_t hash = 0;
  bool same = true;
  std::size_t topics = 0;
  for (int k = 0; k < pairs; ++k) {
    Run a, c;
    if (k % 2 == 0) {
      a = run_once(o, dir.string(), nullptr);
      c = run_once(o, dir.string(), &b);
    } else {
      c = run_once(o, dir.string(), &b);
      a = run_once(o, dir.string(), nullptr);
    }
    off.push_back(a.loop_seconds);
    on.push_back(c.loop_seconds);
    ratio.push_back(c.loop_seconds / a.loop_seconds - 1);
    off_cpu.push_back(a.cpu_seconds);
    on_cpu.push_back(c.cpu_seconds);
    cpu_ratio.push_back(c.cpu_seconds / a.cpu_seconds - 1);
    setup.push_back(c.setup_seconds);
    topics = c.topics;
    if (k == 0) hash = a.hash;
    same = same && a.hash == hash && c.hash == hash;
  }
  std::filesystem::remove_all(dir);
  std::uint64_t received = 0;
  if (child > 0) {
    kill(child, SIGTERM);
    if (read(pipe_fds[0], &received, sizeof received) != sizeof received) received = 0;
    waitpid(child, nullptr, 0);
  }
  const double m_off = median(off), m_on = median(on);
  const double ticks = o.seconds * 10;
  const double publications = std::floor(ticks * rate / 10 + 1e-9);
  nlohmann::json j = {
      {"bench", "ros2"},
      {"robots", o.robots},
      {"threads", o.threads},
      {"seconds", o.seconds},
      {"rate_hz", rate},
      {"scans", scans},
      {"pairs", pairs},
      {"topics", topics},
      // odometry (and scans) per robot, tf and poses, per publication; /clock every tick
      {"messages_per_run",
       publications * (static_cast<double>(o.robots) * (scans == "on" ? 2 : 1) + 2) + ticks},
      {"off_seconds", off},
      {"ros2_seconds", on},
      {"off_median", m_off},
      {"ros2_median", m_on},
      {"overhead", m_off > 0 ? m_on / m_off - 1 : 0},
      {"pair_overhead_median", median(ratio)},
      {"off_cpu_seconds", off_cpu},
      {"ros2_cpu_seconds", on_cpu},
      {"cpu_overhead", median(on_cpu) / median(off_cpu) - 1},
      {"pair_cpu_overhead_median", median(cpu_ratio)},
      // In a real-time run (a simulated second per wall second, as ROS 2 users run it), the
      // share of each wall second the bridge takes, and the cores its CPU time fills.
      {"realtime_share", (m_on - m_off) / o.seconds},
      {"realtime_cpu_cores", (median(on_cpu) - median(off_cpu)) / o.seconds},
      {"subscribe", subscribe},
      {"subscriber_reliability", reliability},
      {"realtime", g_realtime},
      {"subscribed_writers", g_subscriptions},
      {"samples_received", received},
      {"setup_seconds_median", median(setup)},
      {"same_hash", same},
      {"state_hash", hex64(hash)}};
  std::cout << j.dump() << std::endl;
  return same ? 0 : 1;
}
