// `fleetsim control URL pause|play|step|speed X|reset|move ID X Y [H]|add KIND CONTROLLER X Y
// [H]|remove ID|leds ID COLOR|command ID ACTUATOR V...|release ID ACTUATOR|param ID NAME V`:
// steers a run started
// with `fleetsim run --view` through its HTTP control API (docs/view-format.md, "Control"), as
// the page does.
#include <httplib.h>

#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/diagnostics.hpp"
#include "core/named_colors.hpp"
#include "core/script_globals.hpp"
#include "view/view_command.hpp"

namespace fleetsim::view {

namespace {

struct ControlOptions {
  std::string url;
  std::string command;
  std::vector<std::string> values;
};

/// `text` as a finite double, or nullopt.
std::optional<double> number(const std::string& text) {
  double v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() ||
      !std::isfinite(v))
    return std::nullopt;
  return v;
}

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
  std::uint32_t robot_id = 0;
  const std::vector<std::string>& v = o.values;
  if (o.command == "speed") {
    if (v.size() != 1) {
      std::cerr << "fleetsim control: error: speed needs one value: simulated seconds per wall "
                   "second (1 = real time) or max\n";
      return kExitUserError;
    }
    if (v[0] == "max") {
      body["value"] = "max";
    } else if (auto x = number(v[0]); x && *x > 0) {
      body["value"] = *x;
    } else {
      std::cerr << "fleetsim control: error: speed '" << v[0] << "' is not a number > 0 or max\n";
      return kExitUserError;
    }
  } else if (o.command == "move") {
    // move ROBOT_ID X Y [HEADING]
    std::uint32_t robot = 0;
    const bool id_ok =
        v.size() >= 3 && std::from_chars(v[0].data(), v[0].data() + v[0].size(), robot).ptr ==
                             v[0].data() + v[0].size();
    std::optional<double> x, y, heading;
    if (v.size() >= 3) x = number(v[1]), y = number(v[2]);
    if (v.size() == 4) heading = number(v[3]);
    if (!id_ok || v.size() > 4 || !x || !y || (v.size() == 4 && !heading)) {
      std::cerr << "fleetsim control: error: move needs ROBOT_ID X Y [HEADING] (metres, "
                   "radians)\n";
      return kExitUserError;
    }
    body["robot"] = robot;
    body["x"] = *x;
    body["y"] = *y;
    if (heading) body["heading"] = *heading;
  } else if (o.command == "add") {
    // add KIND CONTROLLER X Y [HEADING]
    std::optional<double> x, y, heading;
    if (v.size() >= 4) x = number(v[2]), y = number(v[3]);
    if (v.size() == 5) heading = number(v[4]);
    if (v.size() < 4 || v.size() > 5 || !x || !y || (v.size() == 5 && !heading)) {
      std::cerr << "fleetsim control: error: add needs KIND CONTROLLER X Y [HEADING] (the "
                   "experiment's names; metres, radians)\n";
      return kExitUserError;
    }
    body["kind"] = v[0];
    body["controller"] = v[1];
    body["x"] = *x;
    body["y"] = *y;
    if (heading) body["heading"] = *heading;
  } else if (o.command == "leds") {
    if (v.size() != 2 || !fleetsim::parse_color(v[1]) ||
        std::from_chars(v[0].data(), v[0].data() + v[0].size(), robot_id).ptr !=
            v[0].data() + v[0].size()) {
      std::cerr << "fleetsim control: error: leds needs ROBOT_ID COLOR (a colour name such as "
                   "red, or R,G,B or R,G,B,A, each 0 to 255)\n";
      return kExitUserError;
    }
    body["robot"] = robot_id;
    body["color"] = v[1];
  } else if (o.command == "command" || o.command == "release" || o.command == "param") {
    // command ROBOT_ID ACTUATOR V1 [V2 ...] | release ROBOT_ID ACTUATOR | param ROBOT_ID NAME V
    const bool id_ok =
        !v.empty() && std::from_chars(v[0].data(), v[0].data() + v[0].size(), robot_id).ptr ==
                          v[0].data() + v[0].size();
    bool ok = id_ok && v.size() >= 2;
    if (o.command == "command") {
      ok = ok && v.size() >= 3;
      nlohmann::json values = nlohmann::json::array();
      for (std::size_t k = 2; ok && k < v.size(); ++k) {
        const auto x = number(v[k]);
        ok = x.has_value();
        if (ok) values.push_back(*x);
      }
      if (!ok) {
        std::cerr << "fleetsim control: error: command needs ROBOT_ID ACTUATOR V1 [V2 ...] "
                     "(finite numbers: the actuator's command, e.g. wheels 0.05 -0.05)\n";
        return kExitUserError;
      }
      body["actuator"] = v[1];
      body["values"] = values;
    } else if (o.command == "release") {
      if (!ok || v.size() != 2) {
        std::cerr << "fleetsim control: error: release needs ROBOT_ID ACTUATOR\n";
        return kExitUserError;
      }
      body["actuator"] = v[1];
    } else {
      // A number, true or false, a JSON string ("12" in double quotes); any other word is a
      // string.
      ScriptValue value;
      if (ok && v.size() == 3 && !ScriptValue::parse(v[2], value)) {
        value.type = ScriptValue::Type::kString;
        value.text = v[2];
      }
      if (!ok || v.size() != 3) {
        std::cerr << "fleetsim control: error: param needs ROBOT_ID NAME VALUE (a global of the "
                     "robot's Lua script; VALUE a number, true, false or a string)\n";
        return kExitUserError;
      }
      body["name"] = v[1];
      body["value"] = nlohmann::json::parse(value.json());
    }
    body["robot"] = robot_id;
  } else if (o.command == "remove") {
    std::uint32_t robot = 0;
    if (v.size() != 1 || std::from_chars(v[0].data(), v[0].data() + v[0].size(), robot).ptr !=
                             v[0].data() + v[0].size()) {
      std::cerr << "fleetsim control: error: remove needs one ROBOT_ID\n";
      return kExitUserError;
    }
    body["robot"] = robot;
  } else if (!v.empty()) {
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
  if (o.command == "add" || o.command == "remove" || o.command == "leds" ||
      o.command == "command" || o.command == "release" || o.command == "param")
    std::cout << o.command
              << " sent: it lands at the run's next tick boundary (the page and the "
                 "run's terminal say what became of it)\n";
  if (o.command == "reset")
    std::cout << "reset sent: it lands at the run's next tick boundary (the page and the run's "
                 "terminal say what became of it)\n";
  if (o.command == "move")
    std::cout << "move of robot " << body["robot"] << " sent: it lands at the run's next tick "
              << "boundary (the page and the run's terminal say what became of it)\n";
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
      "speed X (simulated seconds per wall second; 1 = real time) or speed max, reset (the "
      "experiment's reset: back to tick 0), move ROBOT_ID X Y [HEADING], add KIND CONTROLLER X Y "
      "[HEADING], remove ROBOT_ID, leds ROBOT_ID COLOR, command ROBOT_ID ACTUATOR V1 [V2 ...] "
      "(held until released), release ROBOT_ID ACTUATOR or param ROBOT_ID NAME VALUE (a global "
      "of the robot's Lua script) (these eight at the next tick boundary, recorded by the run)");
  control->add_option("URL", options->url, "the URL the run printed (it carries the token)")
      ->required();
  control
      ->add_option("COMMAND", options->command,
                   "pause, play, step, speed, reset, move, add, remove, leds, command, "
                   "release or param")
      ->required()
      ->check(CLI::IsMember({"pause", "play", "step", "speed", "reset", "move", "add", "remove",
                             "leds", "command", "release", "param"}));
  control->add_option("VALUES", options->values,
                      "speed: a number > 0 (x real time) or max; move: ROBOT_ID X Y [HEADING]; "
                      "add: KIND CONTROLLER X Y [HEADING]; remove: ROBOT_ID; leds: ROBOT_ID COLOR; "
                      "command: ROBOT_ID ACTUATOR V1 [V2 ...]; release: ROBOT_ID ACTUATOR; "
                      "param: ROBOT_ID NAME VALUE");
  control->callback([options, &status] { status = run_control(*options); });
}

}  // namespace fleetsim::view
