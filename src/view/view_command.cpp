#include "view/view_command.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "core/diagnostics.hpp"
#include "log/log_reader.hpp"
#include "view/view_config.hpp"
#include "view/view_server.hpp"

namespace fleetsim::view {

namespace {

struct ViewOptions {
  std::string log_path;
  std::string config_path;
  std::string host = "127.0.0.1";
  int port = 8080;
};

#ifndef FLEETSIM_VIEWER_NO_LOG
std::string url_of(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/";
}

// Serves until SIGINT/SIGTERM. The signals are blocked in every thread (the server's workers
// inherit the mask) and taken synchronously by one waiter, which stops the server: no code
// runs inside a signal handler.
void serve_until_signal(ViewServer& server) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    timespec tick{0, 200'000'000};
    while (!done.load()) {
      if (sigtimedwait(&signals, nullptr, &tick) > 0) {
        server.stop();
        return;
      }
    }
  });
  server.run();
  done.store(true);
  waiter.join();
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
}

#endif

int run_view(const ViewOptions& o) {
  // 1. The view configuration: every problem, file:line, before anything starts.
  ViewConfig config = default_view_config();
  if (!o.config_path.empty()) {
    Diagnostics diags;
    auto loaded = load_view_config(o.config_path, diags);
    diags.print(std::cerr);
    if (!loaded) return kExitUserError;
    config = std::move(*loaded);
  }

#ifdef FLEETSIM_VIEWER_NO_LOG
  std::cerr << "fleetsim view: error: this fleetsim was built without the log module\n";
  return kExitRuntimeError;
#else
  // 2. The log: opened (header and index), never read whole.
  std::unique_ptr<log::LogReader> reader;
  try {
    reader = log::LogReader::open(o.log_path);
  } catch (const std::exception& e) {
    // The reader's messages name the file ("log 'run.flog' is truncated ...").
    std::cerr << "fleetsim view: error: " << e.what() << "\n";
    return kExitUserError;
  }
  const log::LogHeader& h = reader->header();
  std::size_t frames = reader->frame_count();
  if (frames == 0)
    std::cerr << "fleetsim view: warning: " << o.log_path
              << ": the log has no complete frame (only the arena is shown)\n";
  {
    std::vector<std::string> kinds, object_classes;
    for (const auto& k : h.kinds) kinds.push_back(k.name);
    for (const auto& c : h.object_classes) object_classes.push_back(c.name);
    Diagnostics diags;
    warn_unknown_kinds_and_classes(config, kinds, object_classes, diags);
    diags.print(std::cerr);
  }
  std::size_t robots = h.robots.size();

  // 3. Serve.
  ViewServer server(std::move(reader), std::move(config), o.log_path,
                    [](const std::string& message) {
                      std::cerr << "fleetsim view: error: " << message << std::endl;
                    });
  int port = server.bind(o.host, o.port);
  if (port < 0) {
    std::cerr << "fleetsim view: error: cannot listen on " << o.host << ":" << o.port
              << " (address in use or not local; --port 0 picks a free port)\n";
    return kExitRuntimeError;
  }
  if (o.host != "127.0.0.1" && o.host != "localhost" && o.host != "::1")
    std::cerr << "fleetsim view: warning: listening on " << o.host
              << ": the log is readable by anyone who can reach this machine\n";
  std::cout << "fleetsim view: " << o.log_path << " (" << frames << " frames, " << robots
            << " robots)\n"
            << "fleetsim view: open " << url_of(o.host, port) << "  (Ctrl+C to stop)"
            << std::endl;
  serve_until_signal(server);
  std::cout << "fleetsim view: stopped" << std::endl;
  return kExitOk;
#endif
}

}  // namespace

void add_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ViewOptions>();
  CLI::App* view = app.add_subcommand(
      "view", "Serve the web viewer for a log (frame log or DEECo text log) and print its URL");
  view->add_option("LOG", options->log_path, "Log file written by `fleetsim run`")->required();
  view->add_option("--config", options->config_path,
                   "View configuration XML (layers, colourings, speeds; docs/view-format.md)");
  view->add_option("--port", options->port, "TCP port; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  view->add_option("--host", options->host,
                   "Address to listen on; use 0.0.0.0 only on a trusted network")
      ->capture_default_str();
  view->callback([options, &status] { status = run_view(*options); });
}

}  // namespace fleetsim::view
