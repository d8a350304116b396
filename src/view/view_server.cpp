#include "view/view_server.hpp"

#include <httplib.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/named_colors.hpp"
#include "view/frame_encoding.hpp"
#include "view/page_files.hpp"

namespace fleetsim::view {

namespace {

constexpr const char* kJson = "application/json";

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", message}}.dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace),
                  kJson);
}

// A non-negative integer query parameter; nullopt when absent or malformed.
std::optional<std::size_t> param(const httplib::Request& req, const char* key) {
  if (!req.has_param(key)) return std::nullopt;
  std::string v = req.get_param_value(key);
  std::size_t x = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) return std::nullopt;
  return x;
}

}  // namespace

ViewServer::ViewServer(LiveAccess live, ViewConfig config, std::string log_name,
                       std::function<void(const std::string&)> report)
    : ViewServer(std::shared_ptr<log::LogReader>(live.run), std::move(config), std::move(log_name),
                 std::move(report)) {
  live_ = std::move(live);
  // Long polls hold a thread each: room for many pages beside their frame requests.
  http_->new_task_queue = [] { return new httplib::ThreadPool(32); };
  add_live_routes();
}

ViewServer::ViewServer(std::shared_ptr<log::LogReader> reader, ViewConfig config,
                       std::string log_name, std::function<void(const std::string&)> report)
    : reader_(std::move(reader)),
      config_(std::move(config)),
      log_name_(std::move(log_name)),
      report_(std::move(report)),
      http_(std::make_unique<httplib::Server>()) {
  // Names, tags and column docs come from the log: bytes that are not UTF-8 are replaced, not
  // a reason to fail.
  header_json_ =
      header_json(reader_->header(), reader_->format(), reader_->frame_count(), log_name_)
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  config_json_ = to_json(config_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  add_routes();
}

ViewServer::~ViewServer() = default;

int ViewServer::bind(const std::string& host, int port) {
  if (port == 0) return http_->bind_to_any_port(host);
  return http_->bind_to_port(host, port) ? port : -1;
}

void ViewServer::run() {
  http_->listen_after_bind();
}

void ViewServer::stop() {
  http_->stop();
}

bool ViewServer::wait_running(int timeout_ms) {
  for (int waited = 0; !http_->is_running() && waited < timeout_ms; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return http_->is_running();
}

void ViewServer::report_once(const std::string& message) {
  std::lock_guard lock(report_mutex_);
  if (reported_.insert(message).second && report_) report_(message);
}

namespace {

nlohmann::json status_json(const LiveRun::Status& st, bool control) {
  return {{"frames", st.frames},
          {"firstFrame", st.first_frame},
          {"tick", st.tick},
          {"state", st.state},
          {"speed", st.speed},
          {"endMessage", st.end_message},
          {"version", st.version},
          {"control", control},
          {"intervention", st.intervention},
          {"interventions", st.interventions}};
}

}  // namespace

void ViewServer::add_live_routes() {
  httplib::Server& s = *http_;
  auto has_token = [this](const httplib::Request& req) {
    return req.has_param("token") && req.get_param_value("token") == live_.token;
  };

  s.Get("/api/live", [this, has_token](const httplib::Request& req, httplib::Response& res) {
    const bool control = has_token(req);
    if (req.has_param("token") && !control) {
      send_error(res, 403,
                 "this is not the run's token (the URL printed by `fleetsim run --view` "
                 "carries it)");
      return;
    }
    auto frames = param(req, "frames");
    auto version = param(req, "version");
    LiveRun::Status st = frames && version
                             ? live_.run->wait(*frames, *version, std::chrono::milliseconds(1000))
                             : live_.run->status();
    res.set_content(status_json(st, control).dump(), kJson);
  });

  // GET /api/robot-now?robot=ID: the robot as the run holds it at its next tick boundary,
  // every column and its script's globals (for its panel; watching is enough).
  s.Get("/api/robot-now", [this](const httplib::Request& req, httplib::Response& res) {
    auto robot = param(req, "robot");
    if (!robot || *robot > 0xffffffffu) {
      send_error(res, 400, "expected /api/robot-now?robot=ID");
      return;
    }
    const std::string answer =
        live_.run->look(static_cast<std::uint32_t>(*robot), std::chrono::seconds(2));
    if (answer.empty()) {
      send_error(res, 503, "the run did not answer (has it ended?)");
      return;
    }
    res.set_content(answer, kJson);
  });

  s.Post("/api/control", [this, has_token](const httplib::Request& req, httplib::Response& res) {
    if (!has_token(req)) {
      send_error(res, 403,
                 req.has_param("token")
                     ? "control refused: this is not the run's token"
                     : "control refused: it needs the run's token (?token=..., in the URL "
                       "`fleetsim run --view` prints)");
      return;
    }
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object() || !body.contains("command") ||
        !body["command"].is_string()) {
      send_error(res, 400,
                 "expected a JSON object {\"command\": \"pause\"|\"play\"|\"step\"|\"speed\"|"
                 "\"reset\"|\"move\"|\"add\"|\"remove\"|\"leds\"|\"command\"|\"release\"|"
                 "\"param\", ...}");
      return;
    }
    const std::string command = body["command"].get<std::string>();
    if (command == "move") {
      // {"command": "move", "robot": ID, "x": X, "y": Y[, "heading": H]}
      auto finite = [&](const char* key) {
        return body.contains(key) && body[key].is_number() &&
               std::isfinite(body[key].get<double>());
      };
      const bool robot_ok = body.contains("robot") && body["robot"].is_number_unsigned() &&
                            body["robot"].get<std::uint64_t>() <= 0xffffffffu;
      if (!robot_ok || !finite("x") || !finite("y") ||
          (body.contains("heading") && !finite("heading"))) {
        send_error(res, 400,
                   "move expects {\"command\": \"move\", \"robot\": ID, \"x\": X, \"y\": Y} "
                   "(metres; optional \"heading\", radians) with finite numbers");
        return;
      }
      LiveRun::Request m;
      m.kind = LiveRun::Request::Kind::kMove;
      m.robot = static_cast<std::uint32_t>(body["robot"].get<std::uint64_t>());
      m.x = body["x"].get<double>();
      m.y = body["y"].get<double>();
      if (body.contains("heading")) m.heading = body["heading"].get<double>();
      const std::string refused = live_.run->request(m);
      if (!refused.empty()) {
        send_error(res, 409, refused);
        return;
      }
      res.set_content(status_json(live_.run->status(), true).dump(), kJson);
      return;
    }
    if (command == "leds") {
      // {"command": "leds", "robot": ID, "color": "red" | "r,g,b[,a]"}: every LED of the robot.
      const bool robot_ok = body.contains("robot") && body["robot"].is_number_unsigned() &&
                            body["robot"].get<std::uint64_t>() <= 0xffffffffu;
      std::optional<Color> color;
      if (body.contains("color") && body["color"].is_string())
        color = fleetsim::parse_color(body["color"].get<std::string>());
      if (!robot_ok || !color) {
        send_error(res, 400,
                   "leds expects {\"command\": \"leds\", \"robot\": ID, \"color\": C} (a colour "
                   "name such as \"red\", or \"r,g,b\" or \"r,g,b,a\", each 0 to 255)");
        return;
      }
      LiveRun::Request r;
      r.kind = LiveRun::Request::Kind::kLeds;
      r.robot = static_cast<std::uint32_t>(body["robot"].get<std::uint64_t>());
      r.color = *color;
      if (const std::string refused = live_.run->request(r); !refused.empty()) {
        send_error(res, 409, refused);
        return;
      }
      res.set_content(status_json(live_.run->status(), true).dump(), kJson);
      return;
    }
    if (command == "add" || command == "remove") {
      // {"command": "add", "kind": K, "controller": C, "x": X, "y": Y[, "heading": H]} or
      // {"command": "remove", "robot": ID}: at the next tick boundary, as a move.
      auto finite = [&](const char* key) {
        return body.contains(key) && body[key].is_number() &&
               std::isfinite(body[key].get<double>());
      };
      auto name = [&](const char* key) {
        return body.contains(key) && body[key].is_string() && !body[key].get<std::string>().empty();
      };
      LiveRun::Request r;
      if (command == "add") {
        if (!name("kind") || !name("controller") || !finite("x") || !finite("y") ||
            (body.contains("heading") && !finite("heading"))) {
          send_error(res, 400,
                     "add expects {\"command\": \"add\", \"kind\": KIND, \"controller\": "
                     "CONTROLLER, \"x\": X, \"y\": Y} (metres; optional \"heading\", radians)");
          return;
        }
        r.kind = LiveRun::Request::Kind::kAdd;
        r.robot_kind = body["kind"].get<std::string>();
        r.controller = body["controller"].get<std::string>();
        r.x = body["x"].get<double>();
        r.y = body["y"].get<double>();
        if (body.contains("heading")) r.heading = body["heading"].get<double>();
      } else {
        if (!body.contains("robot") || !body["robot"].is_number_unsigned() ||
            body["robot"].get<std::uint64_t>() > 0xffffffffu) {
          send_error(res, 400, "remove expects {\"command\": \"remove\", \"robot\": ID}");
          return;
        }
        r.kind = LiveRun::Request::Kind::kRemove;
        r.robot = static_cast<std::uint32_t>(body["robot"].get<std::uint64_t>());
      }
      if (const std::string refused = live_.run->request(r); !refused.empty()) {
        send_error(res, 409, refused);
        return;
      }
      res.set_content(status_json(live_.run->status(), true).dump(), kJson);
      return;
    }
    if (command == "command" || command == "release" || command == "param") {
      // {"command": "command", "robot": ID, "actuator": A, "values": [V, ...]},
      // {"command": "release", "robot": ID, "actuator": A} or
      // {"command": "param", "robot": ID, "name": N, "value": number | string | boolean}.
      auto text = [&](const char* key) {
        return body.contains(key) && body[key].is_string() && !body[key].get<std::string>().empty();
      };
      LiveRun::Request r;
      bool ok = body.contains("robot") && body["robot"].is_number_unsigned() &&
                body["robot"].get<std::uint64_t>() <= 0xffffffffu;
      std::string expected;
      if (command == "command") {
        r.kind = LiveRun::Request::Kind::kCommand;
        expected =
            "{\"command\": \"command\", \"robot\": ID, \"actuator\": NAME, \"values\": "
            "[V, ...]} (finite numbers, as many as the actuator's command has)";
        ok = ok && text("actuator") && body.contains("values") && body["values"].is_array() &&
             !body["values"].empty();
        if (ok)
          for (const auto& v : body["values"]) {
            ok = ok && v.is_number() && std::isfinite(v.get<double>());
            if (ok) r.values.push_back(v.get<double>());
          }
        if (ok) r.actuator = body["actuator"].get<std::string>();
      } else if (command == "release") {
        r.kind = LiveRun::Request::Kind::kRelease;
        expected = "{\"command\": \"release\", \"robot\": ID, \"actuator\": NAME}";
        ok = ok && text("actuator");
        if (ok) r.actuator = body["actuator"].get<std::string>();
      } else {
        r.kind = LiveRun::Request::Kind::kParam;
        expected =
            "{\"command\": \"param\", \"robot\": ID, \"name\": NAME, \"value\": V} (a "
            "finite number, a string or a boolean)";
        ok = ok && text("name") && body.contains("value") &&
             ScriptValue::parse(body["value"].dump(), r.value);
        if (ok) r.name = body["name"].get<std::string>();
      }
      if (!ok) {
        send_error(res, 400, command + " expects " + expected);
        return;
      }
      r.robot = static_cast<std::uint32_t>(body["robot"].get<std::uint64_t>());
      if (const std::string refused = live_.run->request(r); !refused.empty()) {
        send_error(res, 409, refused);
        return;
      }
      res.set_content(status_json(live_.run->status(), true).dump(), kJson);
      return;
    }
    if (command == "reset") {  // {"command": "reset"}: lands at the next tick boundary
      LiveRun::Request r;
      r.kind = LiveRun::Request::Kind::kReset;
      if (const std::string refused = live_.run->request(r); !refused.empty()) {
        send_error(res, 409, refused);
        return;
      }
      res.set_content(status_json(live_.run->status(), true).dump(), kJson);
      return;
    }
    std::optional<double> value;
    if (command == "speed") {
      const nlohmann::json& v = body.contains("value") ? body["value"] : nlohmann::json();
      if (v.is_number()) {
        value = v.get<double>();
      } else if (!(v.is_string() && v.get<std::string>() == "max")) {
        send_error(res, 400,
                   "speed expects \"value\": simulated seconds per wall second, a number > 0 "
                   "(1 = real time), or \"max\" (as fast as possible)");
        return;
      }
    }
    const std::string refused = live_.run->control(command, value);
    if (!refused.empty()) {
      send_error(res, refused.starts_with("the run has ended") ? 409 : 400, refused);
      return;
    }
    res.set_content(status_json(live_.run->status(), true).dump(), kJson);
  });
}

void ViewServer::add_routes() {
  httplib::Server& s = *http_;
  s.set_default_headers({{"Cache-Control", "no-store"}});

  // The page: from FLEETSIM_VIEWER_DIR when set (development), else the embedded copy.
  const char* dir = std::getenv("FLEETSIM_VIEWER_DIR");
  if (dir && *dir) {
    s.set_mount_point("/", dir);
  } else {
    for (const PageFile& f : embedded_page_files()) {
      auto handler = [&f](const httplib::Request&, httplib::Response& res) {
        res.set_content(f.bytes.data(), f.bytes.size(), std::string(f.mime_type).c_str());
      };
      s.Get("/" + std::string(f.path), handler);
      if (f.path == "index.html") s.Get("/", handler);
    }
  }

  s.Get("/api/header", [this](const httplib::Request&, httplib::Response& res) {
    if (!live_.run) {
      res.set_content(header_json_, kJson);
      return;
    }
    // A live run's frames grow: the count as it is now, and the oldest frame still held.
    const LiveRun::Status st = live_.run->status();
    nlohmann::json h = header_json(reader_->header(), reader_->format(), st.frames, log_name_);
    h["live"] = true;
    h["firstFrame"] = st.first_frame;
    h["addable"] = {{"kinds", live_.run->addable_kinds()},
                    {"controllers", live_.run->addable_controllers()}};
    res.set_content(h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kJson);
  });
  s.Get("/api/ping",
        [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", kJson); });
  s.Get("/api/config", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(config_json_, kJson);
  });
  s.Get("/api/bitmap", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(bitmap_bytes(reader_->header()), "application/octet-stream");
  });

  s.Get("/api/frames", [this](const httplib::Request& req, httplib::Response& res) {
    auto start = param(req, "start");
    auto count = param(req, "count");
    if (!start || !count || *count == 0) {
      send_error(res, 400, "expected /api/frames?start=FIRST&count=N with N >= 1");
      return;
    }
    std::string body;
    try {
      std::lock_guard lock(reader_mutex_);
      if (*start >= reader_->frame_count()) {
        send_error(res, 416,
                   "frame " + std::to_string(*start) + " is past the end of the log (" +
                       std::to_string(reader_->frame_count()) + " frames)");
        return;
      }
      body = encode_chunk(*reader_, *start, std::min<std::size_t>(*count, 100000), kMaxChunkBytes);
    } catch (const std::exception& e) {
      std::string message = e.what();  // names the log and the frame
      report_once(message);
      send_error(res, 500, message);
      return;
    }
    res.set_content(body, "application/octet-stream");
  });

  s.Get("/api/robot", [this](const httplib::Request& req, httplib::Response& res) {
    auto frame = param(req, "frame");
    auto index = param(req, "index");
    if (!frame || !index) {
      send_error(res, 400, "expected /api/robot?frame=F&index=I");
      return;
    }
    try {
      std::lock_guard lock(reader_mutex_);
      nlohmann::json j = robot_json(*reader_, *frame, *index);
      if (j.is_null()) {
        send_error(res, 404,
                   "no robot " + std::to_string(*index) + " in frame " + std::to_string(*frame));
        return;
      }
      res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kJson);
    } catch (const std::exception& e) {
      std::string message = e.what();  // names the log and the frame
      report_once(message);
      send_error(res, 500, message);
    }
  });

  // Only files the configuration named, by index: never a path from the request.
  s.Get(R"(/asset/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::size_t i = 0;
    const std::string m = req.matches[1];
    std::from_chars(m.data(), m.data() + m.size(), i);
    if (i >= config_.assets.size()) {
      send_error(res, 404, "no such asset");
      return;
    }
    const ViewAsset& a = config_.assets[i];
    std::ifstream in(a.path, std::ios::binary);
    if (!in) {
      std::string message = a.path + ": cannot read (named by " + config_.source + ")";
      report_once(message);
      send_error(res, 404, message);
      return;
    }
    std::ostringstream body;
    body << in.rdbuf();
    res.set_content(body.str(), a.mime_type.c_str());
  });

  s.set_exception_handler(
      [this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        report_once(what);
        send_error(res, 500, what);
      });
}

}  // namespace fleetsim::view
