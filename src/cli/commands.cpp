#include "cli/commands.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/run_command.hpp"
#include "core/diagnostics.hpp"
#include "core/plugin_loader.hpp"
#include "plugins/builtins.hpp"
#include "robots/kinds.hpp"
#ifdef FLEETSIM_HAVE_FEDERATION
#include <fstream>
#include <sstream>

#include "federation/example_nodes.hpp"
#include "federation/federation_file.hpp"
#endif

namespace fleetsim::cli {

namespace {

int check_command(const RunArgs& args) {
  RunArgs a = args;
#ifdef FLEETSIM_HAVE_FEDERATION
  // Federation files (root <federation>) are checked as `fleetsim launch` reads them.
  bool federation_errors = false;
  std::erase_if(a.files, [&](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string head = text.str().substr(0, 4096);
    const auto root = head.find("<federation");
    if (root == std::string::npos || head.find("<fleetsim") < root) return false;
    Diagnostics diags;
    const auto fed = federation::load_federation(path, diags);
    if (fed) federation::check_swarm_nodes(*fed, diags);  // swarm nodes against their experiments
    diags.print(std::cerr);
    if (!fed || diags.has_errors()) {
      federation_errors = true;
    } else {
      std::size_t typed = 0;
      for (const auto& f : fed->flows) typed += f.data_class != nullptr;
      std::cout << path << ": ok (" << fed->nodes.size() << " nodes, " << fed->flows.size()
                << " flows, " << typed << " typed, " << fed->classes.size() << " classes)\n";
    }
    return true;
  });
  if (a.files.empty()) return federation_errors ? kExitUserError : kExitOk;
  auto loaded = load_all(a);
  if (!loaded || federation_errors) return kExitUserError;
#else
  auto loaded = load_all(a);
  if (!loaded) return kExitUserError;
#endif
  for (const auto& [ex, reg] : *loaded)
    std::cout << ex.path << ": ok (" << ex.state.robot_count() << " robots, "
              << ex.state.object_count() << " objects, " << ex.model->segments.size()
              << " obstacle segments, " << ex.model->length_ticks << " ticks)\n";
  return kExitOk;
}

/// A built-in robot kind's body, in words: what `fleetsim list` shows before its parts.
std::string body_text(const RobotKind& k) {
  std::string s = k.shape == BodyShape::kBox ? fmt::format("box {} m x {} m", k.length_m, k.width_m)
                                             : fmt::format("radius {} m", k.radius_m);
  if (k.height_m > 0) s += fmt::format(", height {} m", k.height_m);
  if (k.max_speed_m_per_s > 0) s += fmt::format(", max speed {} m/s", k.max_speed_m_per_s);
  if (k.mass_kg > 0) s += fmt::format(", {} kg", k.mass_kg);
  s += k.passive ? ", passive (no parts, no controller)" : "";
  s += k.flies ? ", flies" : "";
  return s + "; physics engine: " + (k.engine.empty() ? std::string("any") : k.engine);
}

/// A part of a built-in kind: its name, its type when the name differs, its parameters.
std::string part_text(const PartDecl& p) {
  std::string s = p.name;
  if (p.type != p.name) s += " (" + p.type + ")";
  std::string params;
  for (const auto& [name, value] : p.params.values())
    params += (params.empty() ? "" : ", ") + name + "=" + value;
  return params.empty() ? s : s + ": " + params;
}

int list_command(bool json, const std::vector<std::string>& libraries) {
  PluginRegistry reg;
  register_builtins(reg);
  Diagnostics diags;
  for (const auto& lib : libraries) load_plugin_library(lib, reg, diags, {lib, 0});
  diags.print(std::cerr);
  if (diags.has_errors()) return kExitUserError;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& i : reg.all()) {
      nlohmann::json params = nlohmann::json::array();
      for (const auto& p : i.params)
        params.push_back(
            {{"name", p.name}, {"type", p.type}, {"default", p.default_value}, {"doc", p.doc}});
      nlohmann::json columns = nlohmann::json::array();
      if (i.kind == PluginKind::kSensor || i.kind == PluginKind::kActuator)
        for (const auto& c : part_columns(reg, i.kind, i.name))
          columns.push_back({{"name", c.name},
                             {"type", to_string(c.type)},
                             {"width", c.width},
                             {"hashed", c.hashed},
                             {"logged", c.logged},
                             {"doc", c.doc}});
      out.push_back({{"kind", to_string(i.kind)},
                     {"name", i.name},
                     {"interface", i.interface.empty() ? i.name : i.interface},
                     {"description", i.description},
                     {"params", params},
                     {"columns", columns}});
    }
    for (const RobotKind& k : builtin_kinds()) {
      auto parts = [](const std::vector<PartDecl>& list) {
        nlohmann::json a = nlohmann::json::array();
        for (const PartDecl& p : list)
          a.push_back({{"name", p.name}, {"type", p.type}, {"params", p.params.values()}});
        return a;
      };
      out.push_back({{"kind", "robot kind"},
                     {"name", k.name},
                     {"description", body_text(k)},
                     {"radius_m", k.radius_m},
                     {"height_m", k.height_m},
                     {"max_speed_m_per_s", k.max_speed_m_per_s},
                     {"engine", k.engine},
                     {"passive", k.passive},
                     {"sensors", parts(k.sensors)},
                     {"actuators", parts(k.actuators)}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<PluginInfo> infos = reg.all();
  std::stable_sort(infos.begin(), infos.end(),
                   [](const PluginInfo& a, const PluginInfo& b) { return a.kind < b.kind; });
  PluginKind last = PluginKind::kLogWriter;
  bool first = true;
  for (const auto& i : infos) {
    if (first || i.kind != last) {
      std::string heading = to_string(i.kind);
      if (heading.back() != 's') heading += 's';
      std::cout << (first ? "" : "\n") << heading << ":\n";
      last = i.kind;
      first = false;
    }
    std::cout << "  " << i.name << " — " << i.description
              << (i.origin == "built-in" ? "" : "  [" + i.origin + "]") << "\n";
    for (const auto& p : i.params)
      std::cout << "      " << p.name << " (" << p.type << ", default "
                << (p.default_value.empty() ? (p.type == "string" ? "none" : "required")
                                            : p.default_value)
                << "): " << p.doc << "\n";
    if (i.kind == PluginKind::kSensor || i.kind == PluginKind::kActuator) {
      if (!i.interface.empty() && i.interface != i.name)
        std::cout << "      provides: " << i.interface << "\n";
      for (const auto& c : part_columns(reg, i.kind, i.name))
        std::cout << "      column " << c.name << ": " << to_string(c.type) << " x " << c.width
                  << (c.logged ? ", logged" : "") << (c.hashed ? "" : ", not hashed") << " — "
                  << c.doc << "\n";
    }
  }
  // The built-in robot kinds (src/robots/kinds.hpp): a body and parts from the lists above.
  std::cout << "\nrobot kinds:\n";
  for (const RobotKind& k : builtin_kinds()) {
    std::cout << "  " << k.name << " — " << body_text(k) << "\n";
    for (const PartDecl& p : k.sensors) std::cout << "      sensor " << part_text(p) << "\n";
    for (const PartDecl& p : k.actuators) std::cout << "      actuator " << part_text(p) << "\n";
  }
  std::cout << "\nPlug-in libraries named in an experiment's <plugins> add their own entries; an "
               "experiment's <kinds> makes kinds of its own from these parts.\n";
  return kExitOk;
}

}  // namespace

void add_engine_commands(CLI::App& app, int& status) {
  auto args = std::make_shared<RunArgs>();
  if (const char* d = std::getenv("ROS_DOMAIN_ID")) {
    int domain = -1;
    if (std::from_chars(d, d + std::strlen(d), domain).ec == std::errc() && domain >= 0 &&
        domain <= 232)
      args->ros2_domain = domain;
  }
  auto* run = app.add_subcommand(
      "run",
      "Run experiment files one after another, writing their logs.\n"
      "All files are checked before the first one starts. Exit status: 0 ok, 1 a run failed "
      "(its log is complete up to the last frame), 2 bad input.\n"
      "On a cluster, `mpirun -n P fleetsim run EXPERIMENT` (or srun) runs it on the P ranks of "
      "the job, with the same log as one process (docs/distributed.md).");
  run->add_option("EXPERIMENT", args->files,
                  "experiment files (XML, docs/experiment-format.md; or ARGoS .argos files, "
                  "docs/argos.md); with --resume, the checkpointed run's file by default");
  run->add_option("--threads", args->threads, "worker threads (overrides <framework threads>)")
      ->check(CLI::Range(1, 1024));
  run->add_option("--seed", args->seed, "random seed (overrides <framework seed>)");
  run->add_option("--length", args->length, "simulated seconds (overrides <framework length>)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--log", args->log_path,
                  "write one log here, replacing the file's <log> elements ('' writes none)");
  run->add_option("--log-format", args->log_format, "frames (binary, default) or deeco (text)")
      ->check(CLI::IsMember({"frames", "deeco"}));
  run->add_flag("--quiet", args->quiet, "no progress bar and no summary text");
  run->add_option("--processes", args->processes,
                  "run on N processes, each moving the robots of its domain of the arena "
                  "(domains balanced by robot count; or the whole regions the experiment's "
                  "<distribution> gives it); the log and the state are the same as on one "
                  "process (docs/distributed.md)")
      ->check(CLI::Range(1, 255));
  run->add_option("--transport", args->transport,
                  "with --processes: inproc (threads of this process), shm (processes on this "
                  "machine linked by shared-memory rings, default), ipc or tcp (processes linked "
                  "by ZeroMQ over ipc:// or tcp://127.0.0.1)")
      ->check(CLI::IsMember({"inproc", "shm", "ipc", "tcp"}));
  run->add_option("--sync", args->sync,
                  "with --processes: dsaam (decentralised flows, default) or lockstep (every "
                  "exchange through process 0)")
      ->check(CLI::IsMember({"dsaam", "lockstep"}));
  run->add_option("--jitter-us", args->jitter_us,
                  "with --processes: delay every message by a random 0..U microseconds (results "
                  "do not change; a test of that)")
      ->check(CLI::Range(0, 1000000));
  run->add_option("--network-role", args->network_role,
                  "run one process of a run over several machines: primary (listens, waits for "
                  "its secondaries, writes the log) or secondary (joins a primary)")
      ->check(CLI::IsMember({"primary", "secondary"}));
  run->add_option("--network-secondaries", args->network_secondaries,
                  "primary: how many secondaries to wait for (the run has N + 1 processes)")
      ->check(CLI::Range(1, 254));
  run->add_option("--listen", args->listen,
                  "primary: tcp://ADDR:PORT to listen on (default tcp://127.0.0.1:7770; its links "
                  "use the next ports); secondary: tcp://ADDR:PORT for its links (default: free "
                  "ports on 127.0.0.1; give this machine's address when the others are elsewhere)");
  run->add_option("--primary", args->primary, "secondary: the primary's tcp://HOST:PORT");
  run->add_option("--connect-timeout", args->connect_timeout,
                  "secondary: seconds to wait for the primary's answer (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  run->add_option("--secret-key", args->secret_key,
                  "network roles, authenticated: this machine's secret key file (`fleetsim "
                  "keygen`); the primary then admits only the secondaries in --public-keys, a "
                  "secondary checks the primary's --primary-key, and every link is encrypted");
  run->add_option("--public-keys", args->public_keys,
                  "primary: the directory of the public keys (NAME.pub) of the machines that "
                  "may join");
  run->add_option("--primary-key", args->primary_key,
                  "secondary: the primary's public key file (NAME.pub)");
  run->add_option("--checkpoint-every", args->checkpoint_every,
                  "write a checkpoint of the whole run every SECONDS of wall time into "
                  "--checkpoint-dir, keeping the newest two; works on one process or several "
                  "(docs/checkpoints.md)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--checkpoint-dir", args->checkpoint_dir,
                  "where --checkpoint-every writes (default: checkpoints)");
  run->add_option("--resume", args->resume,
                  "go on from a checkpoint file, or the newest in a directory, on any number "
                  "of processes: the final state and the log are those of a run never stopped. "
                  "Give the options the checkpointed run had (--seed, --log, ...)");
  run->add_option("--time-mode", args->time_mode,
                  "afap: as fast as possible (default); realtime: a simulated second takes a "
                  "wall second, for ROS 2 nodes or people watching a live run; linear: "
                  "--speedup simulated seconds per wall second. A run that cannot keep up says "
                  "how far behind it is, and --json reports max_lag_seconds; results never "
                  "change")
      ->check(CLI::IsMember({"afap", "realtime", "linear"}));
  run->add_option("--speedup", args->speedup,
                  "with --time-mode linear: simulated seconds per wall second (> 0)")
      ->check(CLI::PositiveNumber);
  run->add_flag("--json", args->json,
                "print a JSON summary on the last line of stdout (one object; {\"runs\": [...]} "
                "for several files)");
  run->add_flag("--view", args->view,
                "watch the run in a browser as it is computed, and pause, step or pace it: "
                "serves the page of `fleetsim view` and prints its URL, with the token that "
                "controls the run (docs/view-format.md, \"Live view\"); results never change");
  run->add_option("--port", args->view_port, "with --view: TCP port; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  run->add_option("--view-host", args->view_host,
                  "with --view: address to listen on (default 127.0.0.1); another lets anyone "
                  "who can reach this machine watch (control still needs the token)");
  run->add_flag("--view-paused", args->view_paused,
                "with --view: the run waits for play or step from a page or `fleetsim control`");
  run->add_flag("--view-steer", args->view_steer,
                "with --view on several processes: every process holds every robot, so that "
                "interventions land on any run (costs the split of a run whose robots read only "
                "their neighbours; docs/view-format.md, \"Live view\")");
  run->add_option("--view-speed", args->view_speed,
                  "with --view: the run's pace at the start: max (as fast as possible, default) "
                  "or simulated seconds per wall second (1 = real time)");
  run->add_option("--render-png", args->render_png,
                  "paint the run's frames as it computes them, one PNG file a picture, named by "
                  "tick: frames/frame_%06d.png (docs/view-format.md, \"Pictures and videos\")");
  run->add_option("--render-video", args->render_video,
                  "paint the run's frames as it computes them into a video (ffmpeg): out.mp4");
  run->add_option("--render-every", args->render_every,
                  "with --render-png or --render-video: a picture every K ticks (default 1)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  run->add_option("--render-size", args->render_size,
                  "with --render-png or --render-video: WIDTHxHEIGHT pixels (default 1280x720)");
  run->add_option("--render-fps", args->render_fps,
                  "with --render-video: frames a second (default: real time)")
      ->check(CLI::Range(0.01, 1000.0));
  run->add_option("--render-config", args->render_config,
                  "with --render-png or --render-video: a view configuration (layers, colourings)")
      ->check(CLI::ExistingFile);
  run->add_option("--interventions", args->interventions,
                  "replay the interventions recorded by a --view session (robots moved from "
                  "the page, resets), each at its tick: the same log bytes and final state as that "
                  "session (docs/view-format.md, \"Interventions\")")
      ->check(CLI::ExistingFile);
  run->add_option("--record-interventions", args->record_interventions,
                  "with --view: where interventions made from a page are recorded (default: "
                  "EXPERIMENT-NAME.interventions in the current directory, written at the first "
                  "one)");
  run->add_flag("--ros2", args->ros2,
                "publish the run to ROS 2 over DDS (/clock, /NS/poses, and /NS/ROBOT/pose for "
                "robots whose controller is external) and take /NS/ROBOT/cmd_vel velocity "
                "commands for those robots (docs/ros2.md); with --time-mode realtime ROS nodes "
                "see a live simulation");
  run->add_option("--ros2-domain", args->ros2_domain,
                  "with --ros2: the DDS domain, as ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID, else 0)")
      ->check(CLI::Range(0, 232));
  run->add_option("--ros2-namespace", args->ros2_namespace,
                  "with --ros2: the topics' namespace NS and the node's name (default: fleetsim)");
  run->add_option("--ros2-distro", args->ros2_distro,
                  "with --ros2: the ROS 2 release to speak to: jazzy (default; also iron, "
                  "kilted, rolling: type hashes in USER_DATA, 16-byte gids) or humble (no type "
                  "hashes, 24-byte gids)")
      ->check(CLI::IsMember({"humble", "iron", "jazzy", "kilted", "rolling"}));
  run->add_option("--ros2-robots", args->ros2_robots,
                  "with --ros2: the robots that publish /NS/ROBOT/odom, /NS/ROBOT/scan and /tf: "
                  "robot ids, kind:KIND or all, comma-separated (default: the robots whose "
                  "controller is external)")
      ->delimiter(',');
  run->add_option("--ros2-rate", args->ros2_rate,
                  "with --ros2: poses, odometry, tf and scans per simulated second (default: "
                  "every tick; /clock is published every tick)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--record-inputs", args->record_inputs,
                  "with --ros2: where the velocity commands taken from ROS 2 are recorded, each "
                  "with its tick (default: EXPERIMENT-NAME.ros2-inputs in the current "
                  "directory, written at the first command; '' records none)");
  run->add_option("--replay-inputs", args->replay_inputs,
                  "land the ROS 2 commands recorded by a --ros2 run at their ticks, without "
                  "ROS 2: the same log bytes and final state as that run (docs/ros2.md, "
                  "\"Repeatability\")")
      ->check(CLI::ExistingFile);
  run->callback([args, &status] { status = run_command(*args); });

  auto check_args = std::make_shared<RunArgs>();
  auto* check = app.add_subcommand(
      "check",
      "Check experiment files (or federation files) without running them: every problem, as "
      "file:line.");
  check
      ->add_option("EXPERIMENT", check_args->files,
                   "experiment (fleetsim or ARGoS .argos) or federation files")
      ->required();
  check->callback([check_args, &status] { status = check_command(*check_args); });

  auto json = std::make_shared<bool>(false);
  auto libs = std::make_shared<std::vector<std::string>>();
  auto* list = app.add_subcommand(
      "list",
      "List every plug-in (sensors, actuators, controllers, physics engines, loop "
      "functions, log writers) with its documented parameters, and the built-in robot kinds "
      "with their bodies and parts.");
  list->add_flag("--json", *json, "as JSON");
  list->add_option("--plugins", *libs, "also load these plug-in libraries and list their entries");
  list->callback([json, libs, &status] { status = list_command(*json, *libs); });
}

}  // namespace fleetsim::cli
