// `fleetsim control URL pause|play|step|speed X`: steers a run started with `fleetsim run
// --view` through its HTTP control API (docs/view-format.md, "Control"), as the page does.
#include <httplib.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "core/diagnostics.hpp"
#include "view/view_command.hpp"

namespace fleetsim::view {

namespace {

struct ControlOptions {
  std::string url;
  std::string command;
  std::string value;
};

int run_control(const ControlOptions& o) {
  // http://HOST:PORT/...?token=T (the URL `fleetsim run --view` prints).
  static const std::regex kUrl(R"(^http://(\[[^\]]+\]|[^/:?#]+):(\d+)[^?#]*(\?[^#]*)?$)");
  std::smatch m;
  if (!std::regex_match(o.url, m, kUrl)) {
    std::cerr << "fleetsim control: error: '" << o.url
              << "' is not the URL of a live run (expected http://HOST:PORT/?token=TOKEN, as "
                 "`fleetsim run --view` prints it)\n";
    return kExitUserError;
  }
  std::string host = m[1].str();
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  int port = 0;
  const std::string port_text = m[2].str();
  std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  std::string token;
  static const std::regex kToken(R"([?&]token=([0-9A-Za-z]+))");
  const std::string query = m[3].str();
  if (std::smatch t; std::regex_search(query, t, kToken)) token = t[1].str();

  nlohmann::json body = {{"command", o.command}};
  if (o.command == "speed") {
    if (o.value.empty()) {
      std::cerr << "fleetsim control: error: speed needs a value: simulated seconds per wall "
                   "second (1 = real time) or max\n";
      return kExitUserError;
    }
    if (o.value == "max") {
      body["value"] = "max";
    } else {
      double v = 0;
      auto r = std::from_chars(o.value.data(), o.value.data() + o.value.size(), v);
      if (r.ec != std::errc() || r.ptr != o.value.data() + o.value.size() || !(v > 0)) {
        std::cerr << "fleetsim control: error: speed '" << o.value
                  << "' is not a number > 0 or max\n";
        return kExitUserError;
      }
      body["value"] = v;
    }
  } else if (!o.value.empty()) {
    std::cerr << "fleetsim control: error: " << o.command << " takes no value\n";
    return kExitUserError;
  }

  httplib::Client client(host, port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  auto res = client.Post(token.empty() ? "/api/control" : "/api/control?token=" + token,
                         body.dump(), "application/json");
  if (!res) {
    std::cerr << "fleetsim control: error: cannot reach " << host << ":" << port
              << " (has the run ended?)\n";
    return kExitRuntimeError;
  }
  nlohmann::json reply = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    std::cerr << "fleetsim control: refused: "
              << (reply.is_object() && reply.contains("error") && reply["error"].is_string()
                      ? reply["error"].get<std::string>()
                      : "HTTP " + std::to_string(res->status))
              << "\n";
    return kExitRuntimeError;
  }
  if (reply.is_object() && reply.contains("state"))
    std::cout << "run " << reply["state"].get<std::string>() << " at tick " << reply["tick"]
              << ", speed "
              << (reply["speed"].get<double>() > 0 ? reply["speed"].dump() + "x real time"
                                                   : std::string("max"))
              << "\n";
  return kExitOk;
}

}  // namespace

void add_control_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ControlOptions>();
  CLI::App* control = app.add_subcommand(
      "control",
      "Steer a run started with `fleetsim run --view`: pause, play, step (one tick), "
      "speed X (simulated seconds per wall second; 1 = real time) or speed max");
  control->add_option("URL", options->url, "the URL the run printed (it carries the token)")
      ->required();
  control->add_option("COMMAND", options->command, "pause, play, step or speed")
      ->required()
      ->check(CLI::IsMember({"pause", "play", "step", "speed"}));
  control->add_option("VALUE", options->value, "for speed: a number > 0, or max");
  control->callback([options, &status] { status = run_control(*options); });
}

}  // namespace fleetsim::view
