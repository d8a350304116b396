// The HTTP server behind `fleetsim view`: serves the page, the view configuration, the files
// the configuration names, and the log in chunks read on demand (never the whole log).
//
// Routes (docs/view-format.md, "Wire format"):
//   GET /                     the page (index.html and its scripts)
//   GET /api/header           log header as JSON
//   GET /api/bitmap           obstacle bitmap, one byte per pixel
//   GET /api/config           view configuration as JSON
//   GET /api/frames?start=S&count=N   binary chunk of frames [S, S+N)
//   GET /api/robot?frame=F&index=I    exact pose, tag, id of one robot (JSON)
//   GET /api/ping             liveness, polled by the page
//   GET /asset/<i>            i-th file named by the configuration (texture, script)
// and for a live run (`fleetsim run --view`, docs/view-format.md, "Live view"):
//   GET  /api/live?frames=N&version=V&token=T   the run's status (JSON), answered once it has
//                             more than N frames or its status version is not V (long poll,
//                             at most 1 s); "control" says whether T is the run's token
//   POST /api/control?token=T body {"command": "pause"|"play"|"step"|"speed", "value": X}
//                             or {"command": "move", "robot": ID, "x": X, "y": Y}: 403 without
//                             the run's token, 400 for a malformed or unknown command; the
//                             run goes on either way
// Errors are JSON {"error": "..."} with status 4xx/5xx; a log that turns out to be corrupted
// at some frame is reported once on the terminal and to the page.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "log/log_reader.hpp"
#include "view/live_run.hpp"
#include "view/view_config.hpp"

namespace httplib {
class Server;
}

namespace fleetsim::view {

/// What a live server adds to a log's: the run, and the token its control requires.
struct LiveAccess {
  std::shared_ptr<LiveRun> run;
  std::string token;  ///< compared with the request's `token` parameter
};

/// Serves one log, or a run as it is computed (`live`). Construct, bind(), then run() (blocks)
/// until stop() from another thread.
class ViewServer {
 public:
  /// `log_name` is what the page shows; `report` receives user-facing problems found while
  /// serving (e.g. "frame 12 is corrupted"), each distinct message once, from server threads.
  ViewServer(std::shared_ptr<log::LogReader> reader, ViewConfig config, std::string log_name,
             std::function<void(const std::string&)> report);
  /// A live run: the run is the reader, its frames grow while it serves.
  ViewServer(LiveAccess live, ViewConfig config, std::string log_name,
             std::function<void(const std::string&)> report);
  ~ViewServer();
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;

  /// Binds `host`:`port` (0 = any free port). Returns the port, or -1 when it cannot bind.
  int bind(const std::string& host, int port);
  /// Serves until stop(). Call after a successful bind(), from one thread.
  void run();
  /// Stops run(). Any thread. (A stop() before run() has begun is lost: see wait_running().)
  void stop();
  /// Waits until run() serves, `timeout_ms` at most; whether it does.
  bool wait_running(int timeout_ms);

  /// Largest frame chunk sent in one response, bytes (the page asks for fewer frames).
  static constexpr std::size_t kMaxChunkBytes = 48u << 20;

 private:
  void add_routes();
  void add_live_routes();
  void report_once(const std::string& message);

  std::shared_ptr<log::LogReader> reader_;  // guarded by reader_mutex_ (it seeks)
  LiveAccess live_;                         // run null: a log's server
  std::mutex reader_mutex_;
  ViewConfig config_;
  std::string log_name_;
  std::string header_json_;  // built once (a live run's: at each request, frameCount grows)
  std::string config_json_;
  std::function<void(const std::string&)> report_;
  std::mutex report_mutex_;
  std::set<std::string> reported_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace fleetsim::view
