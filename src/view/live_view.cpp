#include "view/live_view.hpp"

#include <chrono>
#include <random>
#include <stdexcept>

#include "view/view_config.hpp"

namespace fleetsim::view {

std::string make_token() {
  std::random_device device;
  std::string token;
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t v = device();
    for (int k = 0; k < 8; ++k) token += hex[(v >> (4 * k)) & 0xf];
  }
  return token;
}

namespace {

bool loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

}  // namespace

LiveView::LiveView(Options options, std::function<void(const std::string&)> report)
    : options_(std::move(options)),
      run_(std::make_shared<LiveRun>(options_.run)),
      token_(make_token()) {
  server_ = std::make_unique<ViewServer>(LiveAccess{run_, token_}, default_view_config(), "live",
                                         std::move(report));
  const int port = server_->bind(options_.host, options_.port);
  if (port < 0)
    throw std::invalid_argument("--view: cannot listen on " + options_.host + ":" +
                                std::to_string(options_.port) +
                                " (address in use or not local; --port 0 picks a free port)");
  const bool v6 = options_.host.find(':') != std::string::npos;
  url_ = "http://" + (v6 ? "[" + options_.host + "]" : options_.host) + ":" + std::to_string(port) +
         "/?token=" + token_;
}

LiveView::~LiveView() {
  run_->end("the run was stopped");
  if (thread_.joinable()) {
    server_->wait_running(2000);  // (a stop() before it serves would be lost)
    server_->stop();
    thread_.join();
  }
}

void LiveView::serve(const std::string& name, std::ostream& out, std::ostream& err) {
  if (thread_.joinable()) return;
  if (!loopback(options_.host))
    err << "fleetsim run: warning: --view-host " << options_.host
        << ": anyone who can reach this machine can watch the run (control still needs the "
           "token in the URL)\n";
  out << "fleetsim run: " << name << ": watch and control it at " << url_
      << "\n  (the token in this URL lets its holder control the run; without it a page only "
         "watches)"
      << std::endl;
  thread_ = std::thread([this] { server_->run(); });
}

void LiveView::end(const std::string& message) {
  run_->end(message);
  if (!thread_.joinable()) return;
  // A polling page asks again within its long poll's second: give each the chance to hear
  // that the run has ended before the server goes.
  const auto ended = std::chrono::steady_clock::now();
  const auto deadline = ended + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto polled = run_->last_poll();
    if (polled.time_since_epoch().count() == 0 ||
        polled < ended - std::chrono::seconds(5))  // no page is watching
      break;
    if (polled > ended + std::chrono::milliseconds(100)) break;  // it heard
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  server_->wait_running(2000);  // (a stop() before it serves would be lost)
  server_->stop();
  thread_.join();
}

}  // namespace fleetsim::view
