// The live view (`fleetsim run --view`): its control protocol, its HTTP API (the token, bad
// and dropped requests), and the promise that watching and steering never change a result:
// the same log bytes and final hash with and without a view, with pages polling and a run
// paused, stepped and paced. And one encoding for live and replay: the chunks served live are
// those `fleetsim view` serves from the run's log.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "log/log_reader.hpp"
#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"
#include "view/frame_encoding.hpp"
#include "view/live_view.hpp"

namespace fleetsim::view {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Waits (polling, up to 20 s) for `pred`; false on time-out. Never a timing assertion: only
/// how long a test may wait for something that must happen.
template <class F>
bool eventually(F pred) {
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

TEST(LiveRun, ControlCommandsAndTheirRefusals) {
  LiveRun run({});
  EXPECT_EQ(run.status().state, "running");
  EXPECT_EQ(run.control("pause", std::nullopt), "");
  EXPECT_EQ(run.status().state, "paused");
  EXPECT_EQ(run.control("play", std::nullopt), "");
  EXPECT_EQ(run.status().state, "running");
  EXPECT_EQ(run.control("speed", 2.5), "");
  EXPECT_EQ(run.status().speed, 2.5);
  EXPECT_EQ(run.control("speed", std::nullopt), "");
  EXPECT_EQ(run.status().speed, 0);
  EXPECT_NE(run.control("speed", -1.0).find("a number > 0"), std::string::npos);
  EXPECT_NE(run.control("speed", std::nan("")).find("a number > 0"), std::string::npos);
  EXPECT_NE(run.control("teleport", std::nullopt).find("unknown command 'teleport'"),
            std::string::npos);
  EXPECT_NE(run.control("", std::nullopt).find("unknown command"), std::string::npos);
  run.end("the run finished at tick 3");
  EXPECT_EQ(run.status().state, "ended");
  EXPECT_NE(run.control("play", std::nullopt).find("the run has ended"), std::string::npos);
}

TEST(LiveRun, APausedRunWaitsAndAStepLetsOneTickThrough) {
  LiveRun::Options o;
  o.paused = true;
  LiveRun run(o);
  std::atomic<int> ticks{0};
  std::thread loop([&] {
    for (int t = 0; t < 5; ++t) {
      run.before_step(t, 100'000'000, [] { return true; });
      ticks.store(t + 1);
    }
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(ticks.load(), 0) << "a paused run computes nothing";
  EXPECT_EQ(run.control("step", std::nullopt), "");
  ASSERT_TRUE(eventually([&] { return ticks.load() == 1; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(ticks.load(), 1) << "one step, one tick";
  EXPECT_EQ(run.status().state, "paused");
  EXPECT_EQ(run.control("play", std::nullopt), "");
  loop.join();
  EXPECT_EQ(ticks.load(), 5);
}

TEST(LiveRun, APausedRunGivesWayToCtrlC) {
  LiveRun::Options o;
  o.paused = true;
  LiveRun run(o);
  std::atomic<bool> interrupted{false};
  std::thread loop([&] { run.before_step(0, 1, [&] { return !interrupted.load(); }); });
  interrupted.store(true);
  loop.join();  // (hangs, and the test times out, if it did not give way)
}

// --- A run, with and without a live view -------------------------------------------------

const char* kExperiment = R"(<fleetsim>
  <framework ticks_per_second="10" length="4" seed="7"/>
  <controllers><controller id="c" type="diffusion"/></controllers>
  <arena size="4,4">
    <distribute count="12" kind="epuck" controller="c"/>
  </arena>
  <log path="LOG" format="frames"/>
</fleetsim>
)";

struct RunResult {
  std::string log_bytes;
  std::uint64_t hash = 0;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs the experiment with its log at `log`; `live` (or null) observes it, and its
/// before_step() holds the run as `fleetsim run --view` does.
RunResult run_experiment(const fs::path& log, LiveView* live,
                         const std::function<void(Tick)>& between = {}) {
  PluginRegistry reg;
  register_builtins(reg);
  std::string xml = kExperiment;
  xml.replace(xml.find("LOG"), 3, log.string());
  Diagnostics diags;
  auto ex = parse_experiment(xml, (log.parent_path() / "exp.xml").string(), reg, {}, diags);
  EXPECT_TRUE(ex) << diags.str();
  RunResult r;
  if (!ex) return r;
  Simulation sim(std::move(*ex), reg);
  if (live) sim.observe_frames(&live->run());
  sim.enable_reset();
  sim.start();
  if (live) {
    std::ostringstream out, err;
    live->serve("test", out, err);
  }
  while (!sim.done()) {
    if (live) {
      // Resets from the pages land as `fleetsim run --view` lands them (moves are not tested
      // here: tests/unit/sim/interventions_test.cpp).
      auto land = [&] {
        for (const LiveRun::Request& q : live->run().take_requests())
          if (q.kind == LiveRun::Request::Kind::kReset) sim.reset();
      };
      while (!live->run().before_step(sim.state().tick, sim.model().tick_period_ns, {})) land();
      land();
    }
    if (between) between(sim.state().tick);
    sim.step();
  }
  sim.finish();
  if (live) live->end("the run finished at tick " + std::to_string(sim.state().tick));
  r.log_bytes = read_bytes(log);
  r.hash = sim.state().hash();
  return r;
}

struct Url {
  std::string host;
  int port = 0;
  std::string token;
};
Url parse(const std::string& url) {
  Url u;
  const auto colon = url.find(':', 7);
  const auto slash = url.find('/', colon);
  u.host = url.substr(7, colon - 7);
  u.port = std::stoi(url.substr(colon + 1, slash - colon - 1));
  u.token = url.substr(url.find("token=") + 6);
  return u;
}

class LiveViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fleetsim_live_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(LiveViewTest, WatchingAndSteeringChangeNoBit) {
  const RunResult plain = run_experiment(dir_ / "plain.flog", nullptr);
  ASSERT_FALSE(plain.log_bytes.empty());

  // The same run, watched by two polling pages, paused, stepped, paced, played.
  LiveView::Options o;
  o.port = 0;
  o.run.paused = true;
  LiveView live(o, [](const std::string& m) { ADD_FAILURE() << m; });
  const Url url = parse(live.url());
  std::atomic<bool> done{false};
  std::vector<std::thread> pages;
  for (int p = 0; p < 2; ++p)
    pages.emplace_back([&, p] {
      httplib::Client c(url.host, url.port);
      std::uint64_t frames = 0, version = 0;
      while (!done.load()) {
        auto res = c.Get("/api/live?frames=" + std::to_string(frames) +
                         "&version=" + std::to_string(version) + (p ? "&token=" + url.token : ""));
        if (!res || res->status != 200) break;  // the server stopped: the run has ended
        auto st = nlohmann::json::parse(res->body);
        frames = st["frames"];
        version = st["version"];
        c.Get("/api/frames?start=" + std::to_string(frames - 1) + "&count=1");
        if (st["state"] == "ended") break;
      }
    });
  httplib::Client control(url.host, url.port);
  auto send = [&](const std::string& body) {
    auto res = control.Post("/api/control?token=" + url.token, body, "application/json");
    return res ? res->status : -1;
  };
  std::thread steer([&] {
    eventually([&] { return live.run().status().frames >= 1; });
    for (int k = 0; k < 3; ++k) EXPECT_EQ(send(R"({"command": "step"})"), 200);
    // Slow enough that the pause below comes before the end even under a sanitizer:
    // the thirty ticks after the tenth take 1.5 s at 2x.
    EXPECT_EQ(send(R"({"command": "speed", "value": 2})"), 200);
    EXPECT_EQ(send(R"({"command": "play"})"), 200);
    eventually([&] { return live.run().status().tick >= 10; });
    EXPECT_EQ(send(R"({"command": "pause"})"), 200);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(send(R"({"command": "speed", "value": "max"})"), 200);
    EXPECT_EQ(send(R"({"command": "play"})"), 200);
  });
  const RunResult watched = run_experiment(dir_ / "live.flog", &live);
  steer.join();
  done.store(true);
  for (auto& t : pages) t.join();

  EXPECT_EQ(watched.hash, plain.hash);
  EXPECT_TRUE(watched.log_bytes == plain.log_bytes) << "the log's bytes differ";
  EXPECT_EQ(live.run().status().state, "ended");
}

TEST_F(LiveViewTest, LiveChunksAreThoseOfTheRunsLog) {
  LiveView::Options o;
  o.port = 0;
  o.run.held_fps = o.run.idle_held_fps = 0;  // every frame held, even at full speed
  LiveView live(o, {});
  run_experiment(dir_ / "run.flog", &live);
  auto reader = log::LogReader::open((dir_ / "run.flog").string());
  ASSERT_EQ(live.run().frame_count(), reader->frame_count());
  EXPECT_EQ(encode_chunk(live.run(), 0, reader->frame_count(), 1 << 24),
            encode_chunk(*reader, 0, reader->frame_count(), 1 << 24));
  EXPECT_EQ(header_json(live.run().header(), live.run().format(), 1, "x"),
            header_json(reader->header(), reader->format(), 1, "x"));
}

TEST_F(LiveViewTest, AtFullSpeedTheLastFrameIsHeldWhateverWasSkipped) {
  LiveView::Options o;
  o.port = 0;
  o.run.held_fps = o.run.idle_held_fps = 1e-3;  // the first frame, then none for 1000 s
  LiveView live(o, {});
  run_experiment(dir_ / "run.flog", &live);
  auto reader = log::LogReader::open((dir_ / "run.flog").string());
  ASSERT_EQ(live.run().frame_count(), 2u) << "the first frame and the last";
  EXPECT_EQ(live.run().read_frame(0).tick, 0);
  EXPECT_EQ(live.run().read_frame(1).tick, 40);
  EXPECT_EQ(live.run().status().tick, 40);
  // The last frame is the log's last, byte for byte.
  const log::LogFrame a = live.run().read_frame(1), b = reader->read_frame(40);
  EXPECT_EQ(a.robot_columns, b.robot_columns);
  EXPECT_EQ(a.object_columns, b.object_columns);
  EXPECT_EQ(a.tags, b.tags);
}

TEST_F(LiveViewTest, ControlNeedsTheTokenAndBadRequestsAreRefusedWhileTheRunGoesOn) {
  LiveView::Options o;
  o.port = 0;
  o.run.paused = true;
  LiveView live(o, {});
  const Url url = parse(live.url());
  std::atomic<bool> ran{false};
  std::thread run([&] {
    run_experiment(dir_ / "run.flog", &live);
    ran.store(true);
  });
  ASSERT_TRUE(eventually([&] { return live.run().status().frames >= 1; }));
  httplib::Client c(url.host, url.port);
  auto error_of = [](const httplib::Result& res) {
    return res ? nlohmann::json::parse(res->body, nullptr, false).value("error", "") : "";
  };

  // Watching needs no token here (127.0.0.1), control does.
  auto st = c.Get("/api/live");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->status, 200);
  EXPECT_EQ(nlohmann::json::parse(st->body)["control"], false);
  auto res = c.Post("/api/control", R"({"command": "play"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_NE(error_of(res).find("needs the run's token"), std::string::npos);
  res = c.Post("/api/control?token=0123", R"({"command": "play"})", "application/json");
  EXPECT_EQ(res->status, 403);
  EXPECT_NE(error_of(res).find("not the run's token"), std::string::npos);
  EXPECT_EQ(c.Get("/api/live?token=0123")->status, 403);

  // Malformed and unknown commands: refused, saying what was expected.
  const std::string with_token = "/api/control?token=" + url.token;
  for (const char* body : {"", "{", "[1,2]", "{\"command\": 3}", "null", "\xff\xfe"}) {
    res = c.Post(with_token, body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << body;
    EXPECT_NE(error_of(res).find("expected a JSON object"), std::string::npos) << body;
  }
  res = c.Post(with_token, R"({"command": "fly"})", "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(error_of(res).find("unknown command 'fly' (expected pause, play, step, speed, reset, "
                               "move, add, remove, leds, command, release or param)"),
            std::string::npos);
  // A held command or a script global whose values do not have the expected shape.
  for (const char* bad : {R"({"command": "command", "robot": 1, "actuator": "w", "values": ["a"]})",
                          R"({"command": "command", "robot": 1, "actuator": "w", "values": []})",
                          R"({"command": "release", "robot": 1})",
                          R"({"command": "param", "robot": 1, "name": "speed"})",
                          R"({"command": "param", "robot": 1, "name": "s", "value": [1]})"}) {
    res = c.Post(with_token, bad, "application/json");
    EXPECT_EQ(res->status, 400) << bad;
    const std::string what = nlohmann::json::parse(bad)["command"].get<std::string>();
    EXPECT_NE(error_of(res).find(what + " expects {"), std::string::npos) << error_of(res);
  }
  res = c.Post(with_token, R"({"command": "speed", "value": "fast"})", "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(error_of(res).find("speed expects"), std::string::npos);

  // A dropped connection, mid-request: the server goes on.
  {
    httplib::Client dropped(url.host, url.port);
    dropped.set_read_timeout(0, 1000);  // 1 ms: the client gives up on the long poll
    dropped.Get("/api/live?frames=999999&version=0");
  }
  EXPECT_EQ(live.run().status().state, "paused") << "nothing above steered the run";
  EXPECT_FALSE(ran.load());

  // With the token, the run goes on to its end.
  res = c.Post(with_token, R"({"command": "play"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  run.join();
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(live.run().status().state, "ended");
  EXPECT_EQ(live.run().status().end_message, "the run finished at tick 40");
}

// A reset asked for by a page lands at once on a paused run: the pages see tick 0 again (the
// world's start, byte for byte the log's first frame), the frames before it stay on the
// timeline, and the run then ends with the bits of a run never reset.
TEST_F(LiveViewTest, AResetFromAPageTakesThePausedRunBackToTickZero) {
  const RunResult plain = run_experiment(dir_ / "plain.flog", nullptr);
  LiveView::Options o;
  o.port = 0;
  o.run.paused = true;
  LiveView live(o, {});
  const Url url = parse(live.url());
  RunResult watched;
  std::thread run([&] { watched = run_experiment(dir_ / "run.flog", &live); });
  ASSERT_TRUE(eventually([&] { return live.run().status().frames >= 1; }));
  httplib::Client c(url.host, url.port);
  const std::string with_token = "/api/control?token=" + url.token;
  for (int k = 0; k < 3; ++k) {
    const std::uint64_t before = live.run().status().frames;
    ASSERT_EQ(c.Post(with_token, R"({"command": "step"})", "application/json")->status, 200);
    ASSERT_TRUE(eventually([&] { return live.run().status().frames > before; }));
  }
  ASSERT_EQ(live.run().status().tick, 3);
  ASSERT_EQ(c.Post(with_token, R"({"command": "reset"})", "application/json")->status, 200);
  // The tick is the run's, the frames the pages': the reset's frame is held just after the run
  // is back at tick 0, so wait for both.
  ASSERT_TRUE(eventually([&] {
    const LiveRun::Status s = live.run().status();
    return s.tick == 0 && s.frames > 4;
  }));
  const LiveRun::Status st = live.run().status();
  EXPECT_EQ(st.state, "paused") << "a reset does not play the run";
  EXPECT_EQ(st.frames, 5u) << "ticks 0 to 3, then 0 again";
  EXPECT_EQ(live.run().read_frame(3).tick, 3);
  const log::LogFrame again = live.run().read_frame(4), first = live.run().read_frame(0);
  EXPECT_EQ(again.tick, 0);
  EXPECT_EQ(again.robot_columns, first.robot_columns);
  EXPECT_EQ(again.tags, first.tags);
  ASSERT_EQ(c.Post(with_token, R"({"command": "play"})", "application/json")->status, 200);
  run.join();
  EXPECT_EQ(watched.hash, plain.hash);
  EXPECT_TRUE(watched.log_bytes == plain.log_bytes) << "the reset run's log is a fresh run's";
}

}  // namespace
}  // namespace fleetsim::view
