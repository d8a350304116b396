#include "distributed/swarm_run.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>

#include "core/child_processes.hpp"
#include "core/diagnostics.hpp"
#include "distributed/tick_rounds.hpp"
#include "sim/simulation.hpp"
#include "transport/inproc_transport.hpp"
#include "transport/shm_transport.hpp"
#include "transport/zmq_transport.hpp"

namespace fleetsim::distributed {

bool splits_over_domains(const std::string& type) {
  return type == "kinematics2d" || type == "pointmass3d";
}

Assignment assign(const Experiment& ex, int processes, const std::string& how) {
  const WorldModel& model = *ex.model;
  const std::size_t regions = model.engines.size();
  if (processes < 1) throw std::invalid_argument(how + " must be at least 1");
  Assignment a;
  if (!ex.distribution.empty()) {
    if (static_cast<int>(ex.distribution.size()) != processes)
      throw std::invalid_argument(ex.path + ":" + std::to_string(ex.distribution_where.line) +
                                  ": error: <distribution> lists " +
                                  std::to_string(ex.distribution.size()) +
                                  " processes but the run has " + std::to_string(processes) +
                                  " (give " + how + " " + std::to_string(ex.distribution.size()) +
                                  ", or remove <distribution> for the automatic one)");
    a.region_process.assign(regions, -1);
    bool listed = false;
    for (std::size_t p = 0; p < ex.distribution.size(); ++p)
      for (int e : ex.distribution[p]) {
        a.region_process[static_cast<std::size_t>(e)] = static_cast<int>(p);
        listed = true;
      }
    if (listed) return a;
    // Affinities only: the rest is automatic.
  }
  const RobotPlan* plan = ex.robot_plan.get();  // (set: the robots are not placed yet)
  const std::size_t robots = plan ? plan->total() : ex.state.robot_count();
  const bool split = processes > 1 &&
                     std::any_of(model.engines.begin(), model.engines.end(),
                                 [](const EngineRegion& r) { return splits_over_domains(r.type); });
  // At most one process per robot at the start (a domain without one would idle) or per region.
  const std::size_t usable = split ? std::max(robots, regions) : regions;
  if (static_cast<std::size_t>(processes) > usable)
    throw std::invalid_argument(
        ex.path + ": error: " + std::to_string(processes) +
        " processes but this run can use at most " + std::to_string(usable) +
        (split ? " (one per robot at the start: " + std::to_string(robots) + " robots)"
               : std::string(" (its ") + std::to_string(regions) +
                     (regions == 1 ? " physics engine region" : " physics engine regions") +
                     " each go whole to one process: their engine types do not split over "
                     "domains; divide the arena into more regions in <physics>)") +
        ": give " + how + (how.back() == '=' ? "" : " ") + std::to_string(usable) + " or fewer");
  std::vector<std::size_t> count(regions, 0);
  for (std::uint8_t e : ex.state.robot_engine()) ++count[e];
  a.region_process.assign(regions, 0);
  if (split && plan) {
    // A load that deferred the placement has one region, which splits: the domains are cut
    // along the placement's tiles, balanced by their robot counts.
    const std::vector<std::uint64_t> tiles = plan->tile_counts();
    const TileGrid& g = plan->grid;
    a.domains = Domains::bisect_tiles(tiles, g.lo, g.side, g.nx, g.ny, processes);
    a.region_process.assign(regions, -1);
    return a;
  }
  if (split) {
    const auto xs = ex.state.x(), ys = ex.state.y();
    std::vector<Vec2> points(robots);
    for (std::size_t i = 0; i < robots; ++i) points[i] = {xs[i], ys[i]};
    a.domains = Domains::bisect(points, model.arena_min(), model.arena_max(), processes);
    // Regions simulated whole: on the process whose domain holds most of their robots.
    std::vector<std::vector<std::size_t>> held(
        regions, std::vector<std::size_t>(static_cast<std::size_t>(processes), 0));
    for (std::size_t i = 0; i < robots; ++i)
      ++held[ex.state.robot_engine()[i]][static_cast<std::size_t>(a.domains.at(points[i]))];
    for (std::size_t e = 0; e < regions; ++e) {
      const EngineRegion& r = model.engines[e];
      if (splits_over_domains(r.type)) {
        a.region_process[e] = -1;
        continue;
      }
      const auto& h = held[e];
      int best = count[e] == 0 ? a.domains.at((r.min + r.max) * 0.5) : 0;
      if (count[e] > 0)
        for (std::size_t p = 1; p < h.size(); ++p)
          if (h[p] > h[static_cast<std::size_t>(best)]) best = static_cast<int>(p);
      a.region_process[e] = best;
    }
    return a;
  }
  std::vector<std::size_t> order(regions);
  for (std::size_t e = 0; e < regions; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return count[x] > count[y]; });
  std::vector<std::size_t> load(static_cast<std::size_t>(processes), 0);
  for (std::size_t k = 0; k < regions; ++k) {
    const std::size_t e = order[k];
    // The first `processes` regions go one to each process, so none is left without one.
    std::size_t best = 0;
    if (k < static_cast<std::size_t>(processes)) {
      best = k;
    } else {
      for (std::size_t p = 1; p < load.size(); ++p)
        if (load[p] < load[best]) best = p;
    }
    a.region_process[e] = static_cast<int>(best);
    load[best] += count[e];
  }
  return a;
}

std::vector<std::string> region_names(const WorldModel& model, const Assignment& owner, int p) {
  std::vector<std::string> names;
  for (std::size_t e = 0; e < owner.region_process.size(); ++e)
    if (owner.region_process[e] == p || owner.region_process[e] < 0)
      names.push_back(model.engines[e].id);
  return names;
}

namespace {
/// This process's resident memory now (Linux: /proc/self/statm), or 0.
std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}
}  // namespace

ProcessReport run_share(LoadedExperiment& loaded, int p, const Assignment& owner,
                        const SwarmRunOptions& o, const ExchangeMaker& make) {
  ProcessReport r;
  r.process = p;
  r.regions = region_names(*loaded.experiment.model, owner, p);
  std::unique_ptr<PortExchange> exchange;
  std::shared_ptr<CheckpointFiles> files;  // process 0's, with checkpoints
  try {
    const SimTime tick = loaded.experiment.model->tick_period_ns;
    Distribution d;
    d.process = p;
    d.processes = o.processes;
    d.engine_process = owner.region_process;
    d.domains = owner.domains;
    d.kind_process = loaded.experiment.kind_affinity;
    d.robot_process = loaded.experiment.robot_affinity;
    d.partition_storage = o.partition_storage;
    d.first_holds_all = p == 0 && static_cast<bool>(o.before_start);
    d.interventions = o.interventions;
    d.every_robot_everywhere = o.every_robot_everywhere;
    if (make) exchange = make(simulation_rounds_per_tick(d.has_affinities()));
    d.exchange = exchange.get();
    d.make_rounds = make_tick_rounds;
    d.part_bytes = o.part_bytes;
    CheckpointSink sink;
    if (o.checkpoint_every_s > 0 && p == 0) {
      files = std::make_shared<CheckpointFiles>(
          o.checkpoint_dir, std::filesystem::path(loaded.experiment.path).stem().string(),
          o.checkpoint_keep);
      sink = checkpoint_sink(identity_of(loaded.experiment, *loaded.registry), files);
      if (o.on_checkpoint)
        sink = [sink, files, tell = o.on_checkpoint](Tick t, std::uint64_t h,
                                                     std::vector<std::uint8_t> state) {
          sink(t, h, std::move(state));
          tell(files->written().back());
        };
    }
    Simulation sim(std::move(loaded.experiment), *loaded.registry, d,
                   o.resume ? &o.resume->state : nullptr);
    if (o.checkpoint_every_s > 0) sim.enable_checkpoints(sink);
    if (p == 0 && o.before_start) o.before_start(sim);
    sim.start();
    const Tick total = sim.model().length_ticks;
    const auto t0 = std::chrono::steady_clock::now();
    CheckpointTimer timer(p == 0 ? o.checkpoint_every_s : 0);
    const bool hooks = p == 0;
    const Tick from = sim.state().tick;
    time::Pacer pacer = o.pacing;
    const bool paced = hooks && pacer.mode() != time::TimeMode::kAsFastAsPossible;
    if (hooks && o.on_start) o.on_start(from);
    pacer.start();
    Tick paced_from = from;
    while (!sim.done()) {
      const Tick before = sim.state().tick;
      if (o.each_before_step) o.each_before_step(sim);
      if (hooks && o.before_step) o.before_step(sim);
      if (paced && sim.state().tick < before) {  // reset from the live view: paced from tick 0
        pacer = o.pacing;
        pacer.start();
        paced_from = sim.state().tick;
      }
      sim.step();
      if (hooks && o.after_step) o.after_step(sim);
      if (o.each_after_step) o.each_after_step(sim);
      if (o.progress_tick) o.progress_tick->store(sim.state().tick);
      if (paced) {
        pacer.wait_until((sim.state().tick - paced_from) * tick, "the run");
        r.max_lag_seconds = static_cast<double>(pacer.max_lag_ns()) / 1e9;
      }
      timer.after_step(sim);
      if (hooks && o.on_tick && !o.on_tick(sim.state().tick, total))
        throw std::runtime_error("interrupted at tick " + std::to_string(sim.state().tick));
    }
    r.rss_end_bytes = resident_bytes();
    sim.gather_state();
    r.loop_wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sim.finish();
    r.ticks = sim.state().tick;
    r.robot_steps = sim.robot_steps();
    r.state_hash = sim.world_hash();
    r.robots = sim.world_robot_count();
    r.partitioned = sim.partitioned();
    r.status = sim.state().status;
    r.threads = sim.threads();
    if (const Domains& split = sim.distribution().domains; !split.empty()) {
      const Vec2 lo = sim.model().arena_min(), hi = sim.model().arena_max();
      const Domains::Box& b = split.box(p);
      r.domain = {std::max(b.min.x, lo.x), std::max(b.min.y, lo.y), std::min(b.max.x, hi.x),
                  std::min(b.max.y, hi.y)};
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    r.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // (Linux: KiB)
    r.phase_seconds.assign(sim.phase_seconds().begin(), sim.phase_seconds().end());
    r.exchange = sim.exchange_stats();
    if (exchange) r.exchange.wire_bytes_sent = exchange->wire_bytes_sent();
    if (exchange) exchange->close();
    r.ok = true;
  } catch (const transport::PeerLost& e) {
    r.error = e.what();
    r.stopped_by_peer = true;
  } catch (const transport::FederationStopped& e) {
    r.error = e.what();
    r.stopped_by_peer = true;
  } catch (const std::exception& e) {
    // (A peer's loss may arrive wrapped in the phase's error: the exchange remembers it.)
    r.error = e.what();
    r.stopped_by_peer = exchange && exchange->peer_failed();
  }
  if (!r.ok && !r.stopped_by_peer && exchange) exchange->fail(r.error);
  if (files) r.checkpoints = files->written();  // (after a failure too: where to resume from)
  return r;
}

ProcessReport run_process(LoadedExperiment& loaded, int p, const Assignment& owner,
                          const SwarmRunOptions& o, transport::Port& port) {
  const SimTime tick = loaded.experiment.model->tick_period_ns;
  return run_share(loaded, p, owner, o, [&](int rounds_per_tick) {
    return make_exchange(o.sync, port, p, o.processes, tick, rounds_per_tick);
  });
}

ProcessReport run_alone(LoadedExperiment& loaded, const SwarmRunOptions& options) {
  SwarmRunOptions o = options;
  o.processes = 1;
  Assignment whole;
  whole.region_process.assign(loaded.experiment.model->engines.size(), 0);
  return run_share(loaded, 0, whole, o, nullptr);
}

std::string report_to_json(const ProcessReport& r) {
  return nlohmann::json{{"process", r.process},
                        {"regions", r.regions},
                        {"ok", r.ok},
                        {"error", r.error},
                        {"stopped_by_peer", r.stopped_by_peer},
                        {"ticks", r.ticks},
                        {"robot_steps", r.robot_steps},
                        {"state_hash", r.state_hash},
                        {"robots", r.robots},
                        {"status", r.status},
                        {"loop_wall_seconds", r.loop_wall_seconds},
                        {"threads", r.threads},
                        {"peak_rss_bytes", r.peak_rss_bytes},
                        {"rss_end_bytes", r.rss_end_bytes},
                        {"max_lag_seconds", r.max_lag_seconds},
                        {"phase_seconds", r.phase_seconds},
                        {"rounds", r.exchange.rounds},
                        {"bytes_sent", r.exchange.bytes_sent},
                        {"bytes_received", r.exchange.bytes_received},
                        {"wire_bytes_sent", r.exchange.wire_bytes_sent},
                        {"gather_bytes", r.exchange.gather_bytes},
                        {"gather_bytes_received", r.exchange.gather_bytes_received},
                        {"gather_seconds", r.exchange.gather_seconds},
                        {"rebalances", r.exchange.rebalances},
                        {"domain", r.domain},
                        {"halo_rows_sent", r.exchange.halo_rows_sent},
                        {"partitioned", r.partitioned},
                        {"held_robot_ticks", r.exchange.held_robot_ticks},
                        {"held_robots_max", r.exchange.held_robots_max},
                        {"placed_robots", r.exchange.placed_robots},
                        {"id_table_bytes", r.exchange.id_table_bytes},
                        {"migrations_in", r.exchange.migrations_in},
                        {"migrations_out", r.exchange.migrations_out},
                        {"exchange_seconds", r.exchange.seconds},
                        {"wait_seconds", r.exchange.wait_seconds},
                        {"checkpoints", r.checkpoints}}
      .dump();
}

ProcessReport report_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  ProcessReport r;
  r.process = j.at("process");
  r.regions = j.at("regions").get<std::vector<std::string>>();
  r.ok = j.at("ok");
  r.error = j.at("error");
  r.stopped_by_peer = j.at("stopped_by_peer");
  r.ticks = j.at("ticks");
  r.robot_steps = j.at("robot_steps");
  r.state_hash = j.at("state_hash");
  r.robots = j.at("robots");
  r.status = j.at("status");
  r.loop_wall_seconds = j.at("loop_wall_seconds");
  r.threads = j.value("threads", 0);
  r.peak_rss_bytes = j.value("peak_rss_bytes", std::uint64_t{0});
  r.rss_end_bytes = j.value("rss_end_bytes", std::uint64_t{0});
  r.max_lag_seconds = j.value("max_lag_seconds", 0.0);
  r.phase_seconds = j.at("phase_seconds").get<std::vector<double>>();
  r.exchange.rounds = j.at("rounds");
  r.exchange.bytes_sent = j.at("bytes_sent");
  r.exchange.gather_bytes = j.at("gather_bytes");
  r.exchange.bytes_received = j.value("bytes_received", std::uint64_t{0});
  r.exchange.wire_bytes_sent = j.value("wire_bytes_sent", std::uint64_t{0});
  r.exchange.gather_bytes_received = j.value("gather_bytes_received", std::uint64_t{0});
  r.exchange.gather_seconds = j.at("gather_seconds");
  r.exchange.rebalances = j.at("rebalances");
  r.domain = j.at("domain").get<std::vector<double>>();
  r.exchange.halo_rows_sent = j.at("halo_rows_sent");
  r.partitioned = j.at("partitioned");
  r.exchange.held_robot_ticks = j.at("held_robot_ticks");
  r.exchange.held_robots_max = j.at("held_robots_max");
  r.exchange.placed_robots = j.at("placed_robots");
  r.exchange.id_table_bytes = j.at("id_table_bytes");
  r.exchange.migrations_in = j.at("migrations_in");
  r.exchange.migrations_out = j.at("migrations_out");
  r.exchange.seconds = j.at("exchange_seconds");
  r.exchange.wait_seconds = j.at("wait_seconds");
  r.checkpoints = j.value("checkpoints", std::vector<std::string>{});
  return r;
}

namespace {

std::vector<ProcessReport> run_threads(const Loader& load, const SwarmRunOptions& o) {
  auto first = load();
  if (!first) throw std::invalid_argument("the experiment has errors");
  const auto owner = assign(first->experiment, o.processes);
  const SimTime tick = first->experiment.model->tick_period_ns;
  transport::InprocNetwork net(make_swarm_layout(o.sync, o.processes, tick));
  std::vector<ProcessReport> reports(static_cast<std::size_t>(o.processes));
  std::vector<std::thread> threads;
  for (int p = 0; p < o.processes; ++p) {
    threads.emplace_back([&, p] {
      transport::PortOptions po;
      po.jitter_us = o.jitter_us;
      po.log = [](const std::string&) {};
      auto port = net.port(process_name(p), po);
      std::optional<LoadedExperiment> mine;
      if (p == 0) {
        mine = std::move(first);
      } else {
        mine = load();
      }
      ProcessReport r;
      r.process = p;
      if (!mine) {
        r.error = "the experiment did not load";
      } else {
        r = run_process(*mine, p, owner, o, *port);
      }
      if (!r.ok) net.stop(process_name(p) + " failed: " + r.error);
      reports[static_cast<std::size_t>(p)] = std::move(r);
    });
  }
  for (auto& t : threads) t.join();
  return reports;
}

}  // namespace

void log_refusal(const std::string& line) {
  // Whole lines, one write each: the processes share the terminal.
  const std::string text = "fleetsim: " + line + "\n";
  (void)!write(2, text.data(), text.size());
}

int free_port_block(int n, const std::string& host) {
  std::mt19937 rng(
      static_cast<unsigned>(getpid()) ^
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int base = 20000 + static_cast<int>(rng() % 30000);
    bool ok = true;
    for (int k = 0; k < n && ok; ++k) {
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      if (fd < 0) return base;
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<std::uint16_t>(base + k));
      if (inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &a.sin_addr) != 1)
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      close(fd);
    }
    if (ok) return base;
  }
  throw std::runtime_error("found no free block of " + std::to_string(n) + " TCP ports on " + host);
}

namespace {

std::vector<ProcessReport> run_children(const Loader& load, const SwarmRunOptions& o) {
  auto loaded = load();
  if (!loaded) throw std::invalid_argument("the experiment has errors");
  const auto owner = assign(loaded->experiment, o.processes);
  const SimTime tick = loaded->experiment.model->tick_period_ns;
  auto layout = make_swarm_layout(o.sync, o.processes, tick);
  std::string dir;
  if (o.transport == TransportKind::kIpc) {
    char tmpl[] = "/tmp/fleetsim-swarm-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a directory for ipc:// endpoints");
    dir = tmpl;
    for (auto& n : layout.nodes) n.endpoint = "ipc://" + dir + "/" + n.name;
  } else if (o.transport == TransportKind::kTcp) {
    const int base = free_port_block(o.processes * o.processes, "127.0.0.1");
    for (std::size_t p = 0; p < layout.nodes.size(); ++p)
      layout.nodes[p].endpoint =
          "tcp://127.0.0.1:" + std::to_string(base + static_cast<int>(p) * o.processes);
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const std::uint64_t run_id = transport::new_run_id();
  ChildProcesses children;
  for (int p = 0; p < o.processes; ++p) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for a process");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot start a process (fork failed)");
    if (pid == 0) {
      // The child: no process outlives the run's supervisor.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      close(fds[0]);
      for (std::size_t q = 0; q < children.size(); ++q) close(children[q].fd);
      ProcessReport r;
      r.process = p;
      try {
        transport::PortOptions po;
        po.jitter_us = o.jitter_us;
        po.run_id = run_id;
        po.log = log_refusal;
        auto port = open_process_port(layout, p,
                                      o.transport == TransportKind::kShm ? transport::Carrier::kShm
                                                                         : transport::Carrier::kZmq,
                                      std::move(po));
        SwarmRunOptions mine = o;
        if (p != 0) mine.on_tick = nullptr;
        // The supervisor learns of each checkpoint as it is written, so that it can say where
        // to go on from even when this process is the one killed.
        if (p == 0)
          mine.on_checkpoint = [fd = fds[1]](const std::string& path) {
            const std::string line = nlohmann::json{{"checkpoint", path}}.dump() + "\n";
            (void)!write(fd, line.data(), line.size());  // one write: whole lines
          };
        r = run_process(*loaded, p, owner, mine, *port);
      } catch (const std::exception& e) {
        r.error = e.what();
      }
      const std::string text = report_to_json(r) + "\n";
      for (std::size_t at = 0; at < text.size();) {
        const ssize_t w = write(fds[1], text.data() + at, text.size() - at);
        if (w <= 0) break;
        at += static_cast<std::size_t>(w);
      }
      std::cout.flush();
      std::fflush(nullptr);
      _exit(r.ok ? 0 : 1);
    }
    close(fds[1]);
    children.adopt(pid, fds[0]);
  }
  // The supervisor: reads every report; once one process failed, the others get a grace
  // period to notice (their ports see the peer leave within a second) before being killed.
  const std::shared_ptr<const WorldModel> model = loaded->experiment.model;
  loaded.reset();
  std::optional<std::chrono::steady_clock::time_point> failed_at;
  const auto grace = std::chrono::seconds(3);
  while (true) {
    children.wait(std::chrono::milliseconds(50));
    bool running = false;
    for (std::size_t k = 0; k < children.size(); ++k) {
      const auto& c = children[k];
      running = running || !c.exited;
      if (c.exited && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) && !failed_at)
        failed_at = std::chrono::steady_clock::now();
    }
    if (!running) break;
    // (A stopped process is killed at once: the others see it hang within a second.)
    for (std::size_t k = 0; k < children.size(); ++k)
      if (failed_at && !children[k].exited &&
          (children[k].stopped || std::chrono::steady_clock::now() - *failed_at > grace))
        children.kill(k);
  }
  transport::remove_stale_shm_segments(run_id);  // what killed processes left in /dev/shm
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::vector<ProcessReport> reports;
  for (int p = 0; p < o.processes; ++p) {
    const ChildProcesses::Child& c = children[static_cast<std::size_t>(p)];
    // A child writes a line per checkpoint (process 0), then its report's line.
    std::vector<std::string> checkpoints;
    std::size_t at = 0;
    for (std::size_t end; (end = c.out.find('\n', at)) != std::string::npos; at = end + 1) {
      try {
        const auto j = nlohmann::json::parse(c.out.substr(at, end - at));
        if (!j.contains("checkpoint")) break;
        checkpoints.push_back(j["checkpoint"].get<std::string>());
        if (checkpoints.size() > static_cast<std::size_t>(std::max(1, o.checkpoint_keep)))
          checkpoints.erase(checkpoints.begin());
      } catch (const std::exception&) {
        break;
      }
    }
    ProcessReport r;
    try {
      r = report_from_json(c.out.substr(at));
    } catch (const std::exception&) {
      r = ProcessReport{};
      r.process = p;
      r.regions = region_names(*model, owner, p);
      r.error = "the process " + describe_exit_status(c.status) + " before reporting";
      r.checkpoints = checkpoints;  // what it wrote before it was lost
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

}  // namespace

std::vector<ProcessReport> run_swarm(const Loader& load, const SwarmRunOptions& options) {
  if (options.transport == TransportKind::kInproc) return run_threads(load, options);
  return run_children(load, options);
}

}  // namespace fleetsim::distributed
