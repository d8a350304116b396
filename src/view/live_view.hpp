// `fleetsim run --view`: the live view of one run (docs/view-format.md, "Live view"). It owns
// the run's frames and controls (LiveRun) and the HTTP server that shows them with the page of
// `fleetsim view`, on a thread of its own. `fleetsim run` makes one before the run, gives
// frames() to the simulation, calls before_step() before each step and end() after the last.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "view/live_run.hpp"
#include "view/view_server.hpp"

namespace fleetsim::view {

class LiveView {
 public:
  struct Options {
    std::string host = "127.0.0.1";  ///< --view-host
    int port = 8080;                 ///< --port; 0 picks a free one
    LiveRun::Options run;
  };
  /// Binds the server (not serving yet). Throws std::invalid_argument naming the address when
  /// it cannot listen there. `report` receives problems found while serving.
  LiveView(Options options, std::function<void(const std::string&)> report);
  ~LiveView();
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  /// What the simulation writes frames into (Simulation::observe_frames).
  LiveRun& run() { return *run_; }
  /// The page's address, with the run's token (whoever has it may control the run).
  const std::string& url() const { return url_; }
  /// Starts serving (once the simulation has started: the header is known) and prints the
  /// URL on `out`, and on `err` a warning when the address is not this machine's loopback.
  void serve(const std::string& name, std::ostream& out, std::ostream& err);
  /// The run has ended (`message` says how): pages are told, and the server stops once each
  /// page that was polling has heard it (2 s at most).
  void end(const std::string& message);

 private:
  Options options_;
  std::shared_ptr<LiveRun> run_;
  std::string token_;
  std::string url_;
  std::unique_ptr<ViewServer> server_;
  std::thread thread_;
};

/// A fresh random token (32 hex digits), from the operating system's random source: never
/// from the simulation's (which it must not disturb).
std::string make_token();

}  // namespace fleetsim::view
