// bench/faults: how fast a distributed run stops when one of its processes dies or hangs.
//
// For each case it starts a real run of the `fleetsim` binary, lets it get under way, kills
// (SIGKILL) or stops (SIGSTOP) one process, and measures the time until every *other* process
// of the run has stopped: the nodes of a federation (started one by one with `fleetsim node`,
// or under `fleetsim launch`, which is then one of the others), the processes of a swarm run
// (`fleetsim run --processes 3`, their supervisor being one of the others), a primary and its
// two secondaries (`--network-role`). It prints one JSON line: per case, the median over the
// repeats, every repeat's time, and for each other process how it ended and the first line of
// its error. docs/testing.md ("Faults") holds the table; the target is 1 s everywhere.
//
// The processes started here are this program's children (or their children), and every one
// still running at the end of a case is killed: nothing is left behind.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/command_line.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kSource = FLEETSIM_SOURCE_DIR;

/// A process of the run: started by this program (`own`: it can be waited for) or a child of
/// one (its end is seen in /proc; its output went to its parent's).
struct Proc {
  std::string name;
  pid_t pid = -1;
  bool own = false;
  fs::path err;  ///< its standard error (own processes only)
  std::optional<int> status;
  std::optional<double> stopped_after_s;
};

pid_t spawn(std::vector<std::string> args, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  return pid;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

/// A process that is not ours has ended when it is gone or a zombie.
bool ended(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return true;
  const auto close = line.rfind(')');
  return close == std::string::npos || line.size() < close + 3 || line[close + 2] == 'Z';
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The first line of an error in `text` (a line with "error" or "lost peer"), else its last line.
std::string first_error_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos || line.find("lost peer") != std::string::npos)
      return line;
    if (!line.empty()) last = line;
  }
  return last;
}

std::string status_text(int st) {
  if (WIFEXITED(st)) return "exit " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return std::string("killed by ") + strsignal(WTERMSIG(st));
  return "?";
}

int free_port_base() {
  // A random block below the kernel's ephemeral ports, as the tests do.
  return 20000 + static_cast<int>((Clock::now().time_since_epoch().count() / 1000) % 12000);
}

struct Options {
  std::string fleetsim;
  int repeat = 5;
  int settle_ms = 800;
  double limit_s = 10;
  std::string only;
};

/// One case: how to start the run and which process to hit.
struct Case {
  std::string kind;       ///< the kind of process hit
  std::string transport;  ///< as the user gives it
  int signal = SIGKILL;
  std::string name() const {
    return kind + "/" + transport + "/" + (signal == SIGKILL ? "SIGKILL" : "SIGSTOP");
  }
};

/// Starts the run of `c` in `dir`; the processes, the victim's index among them.
std::pair<std::vector<Proc>, std::size_t> start(const Case& c, const Options& o,
                                                const fs::path& dir) {
  std::vector<Proc> procs;
  auto own = [&](const std::string& name, std::vector<std::string> args) {
    Proc p;
    p.name = name;
    p.own = true;
    p.err = dir / (name + ".err");
    p.pid = spawn(std::move(args), dir / (name + ".out"), p.err);
    procs.push_back(p);
  };
  auto wait_children = [&](pid_t parent, std::size_t count) {
    std::vector<pid_t> kids;
    for (int t = 0; t < 1000 && kids.size() < count; ++t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      kids = children_of(parent);
    }
    if (kids.size() < count) throw std::runtime_error(c.name() + ": the processes did not start");
    return kids;
  };
  const std::string fed = kSource + "/examples/federations/heterogeneous_rates.xml";
  const std::string exp = kSource + "/examples/diffusion/diffusion.xml";
  std::size_t victim = 0;
  if (c.kind == "federation node") {
    for (std::string n : {"dynamics", "controller", "camera"})
      own(n, {o.fleetsim, "node", fed, "--name", n, "--transport", c.transport, "--ipc-dir",
              dir.string(), "--until", "100000", "--quiet"});
    victim = 1;
  } else if (c.kind == "launched node") {
    own("launch",
        {o.fleetsim, "launch", fed, "--transport", c.transport, "--until", "100000", "--quiet"});
    for (pid_t k : wait_children(procs[0].pid, 3))
      procs.push_back({"node " + std::to_string(k), k, false, {}, {}, {}});
    victim = 2;
  } else if (c.kind == "swarm node process") {
    // A federation's swarm node on 3 processes (its children) and a node it feeds.
    std::ofstream(dir / "swarm.xml") << R"(<fleetsim>
  <framework ticks_per_second="10" length="1000000" seed="5"/>
  <controllers><controller id="d" type="diffusion" speed="0.1"/></controllers>
  <arena size="4,4"><distribute count="30" kind="epuck" controller="d" id_prefix="ep"/></arena>
  <physics>
    <kinematics2d id="south" region="-2,-2,2,0"/>
    <kinematics2d id="north_west" region="-2,0,0,2"/>
    <kinematics2d id="north_east" region="0,0,2,2"/>
  </physics>
</fleetsim>)";
    std::ofstream(dir / "fed.xml") << R"(<federation until="100000s">
  <node name="swarm" experiment="swarm.xml" processes="3"><output name="poses"/></node>
  <node name="watcher" kind="mixer"><input name="poses"/></node>
  <flow name="poses" from="swarm.poses" to="watcher.poses" period="100ms"/>
</federation>)";
    own("launch",
        {o.fleetsim, "launch", (dir / "fed.xml").string(), "--transport", c.transport, "--quiet"});
    std::vector<pid_t> swarm;
    const auto nodes = wait_children(procs[0].pid, 2);
    for (int t = 0; t < 1000 && swarm.size() < 2; ++t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (pid_t n : nodes)
        if (auto k = children_of(n); !k.empty()) swarm = k;
    }
    if (swarm.size() < 2) throw std::runtime_error(c.name() + ": the processes did not start");
    for (pid_t n : nodes) procs.push_back({"node " + std::to_string(n), n, false, {}, {}, {}});
    for (pid_t k : swarm)
      procs.push_back({"swarm process " + std::to_string(k), k, false, {}, {}, {}});
    victim = procs.size() - 1;
  } else if (c.kind == "swarm process") {
    own("supervisor",
        {o.fleetsim, "run", exp, "--processes", "3", "--transport", c.transport, "--threads", "1",
         "--length", "100000", "--quiet", "--log", (dir / "run.flog").string()});
    const auto kids = wait_children(procs[0].pid, 3);
    for (std::size_t k = 0; k < kids.size(); ++k)
      procs.push_back({"process " + std::to_string(k), kids[k], false, {}, {}, {}});
    victim = 2;  // process 1
  } else {       // primary or secondary
    const std::string listen = "tcp://127.0.0.1:" + std::to_string(free_port_base());
    const std::vector<std::string> common = {o.fleetsim, "run",      exp,      "--threads",
                                             "1",        "--length", "100000", "--quiet"};
    auto with = [&](std::vector<std::string> more) {
      auto a = common;
      a.insert(a.end(), more.begin(), more.end());
      return a;
    };
    own("primary", with({"--network-role", "primary", "--network-secondaries", "2", "--listen",
                         listen, "--log", (dir / "run.flog").string()}));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (std::string n : {"secondary-1", "secondary-2"})
      own(n, with({"--network-role", "secondary", "--primary", listen}));
    victim = c.kind == "primary" ? 0 : 1;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(o.settle_ms));
  for (auto& p : procs) {
    int st = 0;
    if (p.own ? waitpid(p.pid, &st, WNOHANG) == p.pid : ended(p.pid))
      throw std::runtime_error(c.name() + ": " + p.name + " ended before the fault: " +
                               (p.own ? first_error_line(slurp(p.err)) : std::string()));
  }
  return {procs, victim};
}

/// One repeat: the seconds until every other process stopped (nullopt: one did not, within
/// the limit), and what each did.
std::pair<std::optional<double>, nlohmann::json> measure(const Case& c, const Options& o) {
  std::string t = (fs::temp_directory_path() / "fleetsim-faults-XXXXXX").string();
  const fs::path dir = mkdtemp(t.data());
  auto [procs, victim] = start(c, o, dir);
  kill(procs[victim].pid, c.signal);
  const auto hit = Clock::now();
  const auto deadline = hit + std::chrono::duration<double>(o.limit_s);
  while (Clock::now() < deadline) {
    bool all = true;
    for (std::size_t i = 0; i < procs.size(); ++i) {
      Proc& p = procs[i];
      if (i == victim || p.stopped_after_s) continue;
      int st = 0;
      const bool gone = p.own ? waitpid(p.pid, &st, WNOHANG) == p.pid : ended(p.pid);
      if (gone) {
        p.stopped_after_s = std::chrono::duration<double>(Clock::now() - hit).count();
        if (p.own) p.status = st;
      } else {
        all = false;
      }
    }
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Nothing left behind: the victim and whatever did not stop.
  std::optional<double> every;
  bool complete = true;
  nlohmann::json others = nlohmann::json::array();
  for (std::size_t i = 0; i < procs.size(); ++i) {
    Proc& p = procs[i];
    if (i == victim) continue;
    if (!p.stopped_after_s) complete = false;
    nlohmann::json j = {{"process", p.name}};
    j["stopped_after_s"] = p.stopped_after_s ? nlohmann::json(*p.stopped_after_s) : nullptr;
    if (p.own && p.status) j["status"] = status_text(*p.status);
    if (p.own) j["error"] = first_error_line(slurp(p.err));
    others.push_back(j);
    if (p.stopped_after_s) every = std::max(every.value_or(0), *p.stopped_after_s);
  }
  for (auto& p : procs) {
    if (p.own && !p.stopped_after_s) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, nullptr, 0);
    } else if (!p.own && !ended(p.pid)) {
      kill(p.pid, SIGKILL);
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return {complete ? every : std::nullopt, others};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.fleetsim = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim";
  CLI::App app{
      "Kills and stops each kind of process of a distributed run and measures how long "
      "the others take to stop (docs/testing.md, Faults)"};
  app.add_option("--fleetsim", o.fleetsim, "the fleetsim program")->capture_default_str();
  app.add_option("--repeat", o.repeat, "runs per case (the median is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--settle-ms", o.settle_ms, "how long a run goes on before the fault")
      ->capture_default_str()
      ->check(CLI::Range(100, 60000));
  app.add_option("--limit", o.limit_s, "seconds after which a process counts as not stopping")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 600.0));
  app.add_option("--only", o.only, "only the cases whose name contains this text");
  if (const int rc = fleetsim::parse_command_line(app, argc, argv); rc >= 0) return rc;

  std::vector<Case> cases;
  for (int sig : {SIGKILL, SIGSTOP}) {
    for (const char* t : {"shm", "zmq"}) cases.push_back({"federation node", t, sig});
    for (const char* t : {"shm", "zmq"}) cases.push_back({"launched node", t, sig});
    for (const char* t : {"shm", "ipc", "tcp"}) cases.push_back({"swarm process", t, sig});
    for (const char* t : {"shm", "zmq"}) cases.push_back({"swarm node process", t, sig});
    cases.push_back({"primary", "tcp", sig});
    cases.push_back({"secondary", "tcp", sig});
  }
  nlohmann::json out = nlohmann::json::array();
  for (const Case& c : cases) {
    if (!o.only.empty() && c.name().find(o.only) == std::string::npos) continue;
    std::vector<double> times;
    nlohmann::json runs = nlohmann::json::array();
    nlohmann::json last;
    int missed = 0;
    for (int r = 0; r < o.repeat; ++r) {
      try {
        auto [t, others] = measure(c, o);
        if (t)
          times.push_back(*t);
        else
          ++missed;
        runs.push_back(t ? nlohmann::json(*t) : nullptr);
        last = others;
      } catch (const std::exception& e) {
        std::cerr << "bench/faults: " << e.what() << "\n";
        return 1;
      }
    }
    std::sort(times.begin(), times.end());
    nlohmann::json j = {{"case", c.name()},
                        {"process", c.kind},
                        {"transport", c.transport},
                        {"signal", c.signal == SIGKILL ? "SIGKILL" : "SIGSTOP"},
                        {"runs_s", runs},
                        {"did_not_stop", missed},
                        {"others", last}};
    j["median_s"] =
        times.empty() ? nlohmann::json(nullptr) : nlohmann::json(times[times.size() / 2]);
    out.push_back(j);
    std::cerr << "bench/faults: " << c.name() << ": median "
              << (times.empty() ? std::string("-") : std::to_string(times[times.size() / 2]))
              << " s\n";
  }
  std::cout << nlohmann::json{{"bench", "faults"}, {"repeat", o.repeat}, {"cases", out}}.dump()
            << "\n";
  return 0;
}
