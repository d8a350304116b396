// `fleetsim run --view` and `fleetsim control` as a user meets them on the command line: the
// URL with the token is printed, `fleetsim control` steps, paces and resumes the run, and
// refuses (with the server's reason, status 1) without the token; a bad URL or value is a
// user error (status 2); a bad --view option stops before the run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <thread>
#include <vector>

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/crossing_scene.hpp"
#include "support/processes.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::slurp;
const std::string kFleetsim = std::string(FLEETSIM_BINARY_DIR) + "/fleetsim";
const std::string kDiffusion =
    std::string(FLEETSIM_SOURCE_DIR) + "/examples/diffusion/diffusion.xml";

/// Starts `fleetsim run EXPERIMENT --length 5 --view --view-paused` logging to DIR/live.flog,
/// its output in DIR/run.out and run.err, recording interventions in `session`; returns its pid
/// and the URL it printed ("" if none came: the run is then killed).
std::pair<pid_t, std::string> start_paused(const std::string& experiment, const fs::path& dir,
                                           const fs::path& session) {
  const std::string out = (dir / "run.out").string(), err = (dir / "run.err").string();
  const pid_t run = testing::spawn_with_output(
      kFleetsim,
      {"run", experiment, "--length", "5", "--view", "--port", "0", "--view-paused", "--log",
       (dir / "live.flog").string(), "--json", "--record-interventions", session.string()},
      out, err);
  if (std::string url = testing::wait_for_view_url(out, 3000); !url.empty()) return {run, url};
  kill(run, SIGKILL);
  waitpid(run, nullptr, 0);
  return {run, ""};
}

/// Waits (10 s at most) until file `path` holds `text`.
void wait_for_text(const fs::path& path, const std::string& text) {
  for (int i = 0; i < 1000 && slurp(path).find(text) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST(LiveCli, ControlStepsPacesAndResumesARunAndRefusesWithoutTheToken) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  const std::string out = (dir / "run.out").string(), err = (dir / "run.err").string();
  const pid_t run = testing::spawn_with_output(
      kFleetsim,
      {"run", kDiffusion, "--view", "--port", "0", "--view-paused", "--log",
       (dir / "run.flog").string(), "--json", "--record-interventions",
       (dir / "session.interventions").string()},
      out, err);
  struct Reap {  // a run left paused by a failed assertion is not left behind
    pid_t pid;
    bool waited = false;
    ~Reap() {
      if (!waited) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } reap{run};
  const std::string url = testing::wait_for_view_url(out, 2000);
  ASSERT_FALSE(url.empty()) << slurp(out) << slurp(err);
  const std::string plain = url.substr(0, url.find('?'));
  auto control = [&](const std::string& args) {
    return run_command(kFleetsim + " control " + args, dir, 30);
  };

  auto r = control(url + " step");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("run paused at tick"), std::string::npos) << r.out;
  r = control(url + " speed 2.5");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2.5x real time"), std::string::npos) << r.out;

  r = control(plain + " play");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("refused: control refused: it needs the run's token"), std::string::npos)
      << r.err;
  r = control(plain + "?token=00000000 play");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("not the run's token"), std::string::npos) << r.err;
  for (const char* bad : {"ftp://x/ play", "http://127.0.0.1/ play", "nonsense play"}) {
    r = control(std::string(bad));
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("is not the URL of a live run"), std::string::npos) << r.err;
  }
  r = control(url + " speed 0");
  EXPECT_EQ(r.status, 2);
  r = control(url + " speed");
  EXPECT_EQ(r.status, 2);
  r = control(url + " jump");
  EXPECT_EQ(r.status, 2);  // (CLI11: not one of the commands)

  // A move lands at the next tick boundary, recorded with it.
  r = control(url + " move 3 1.5 2.25 0.5");
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* bad : {" move 3 1.5", " move x 1 2", " move 3 1 2 3 4", " move 3 nan 2"}) {
    r = control(url + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("move needs ROBOT_ID X Y [HEADING]"), std::string::npos) << r.err;
  }
  r = control(url + " step");
  EXPECT_EQ(r.status, 0) << r.err;
  for (int i = 0;
       i < 500 && slurp(dir / "session.interventions").find("move 3") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(slurp(dir / "session.interventions").find("1 move 3 1.5 2.25 0.5"), std::string::npos)
      << slurp(dir / "session.interventions");

  r = control(url + " speed max");
  EXPECT_EQ(r.status, 0) << r.err;
  r = control(url + " play");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::wait_for(run, std::chrono::seconds(120)), 0) << slurp(err);
  reap.waited = true;
  const std::string text = slurp(out);
  const auto j = nlohmann::json::parse(text.substr(text.rfind("\n{") + 1));
  EXPECT_EQ(j["ticks"], 600);
  r = control(url + " play");
  EXPECT_EQ(r.status, 1) << "the run has ended: nobody answers";
  EXPECT_NE(r.err.find("cannot reach"), std::string::npos) << r.err;
}

TEST(LiveCli, BadViewOptionsStopBeforeTheRun) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  auto r =
      run_command(kFleetsim + " run " + kDiffusion + " --view --view-speed fast --log ''", dir, 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--view-speed 'fast': expected max or a number > 0"), std::string::npos)
      << r.err;
  r = run_command(kFleetsim + " run " + kDiffusion +
                      " --view --network-role secondary --primary tcp://127.0.0.1:9 --log ''",
                  dir, 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--view goes to the primary of a network run (it serves the page, and "
                       "tells the secondaries): drop --view here"),
            std::string::npos)
      << r.err;
  r = run_command(kFleetsim + " run " + kDiffusion + " --view --view-host 203.0.113.1 --log ''",
                  dir, 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot listen on 203.0.113.1"), std::string::npos) << r.err;
}

// `fleetsim control URL reset` takes the run back to tick 0 (after a move), `add` and `remove`
// add and remove robots; all are recorded with their ticks (a refused addition is not), and the
// session file replays with `--interventions` to the same log bytes and hash. (That a reset run
// with nothing else changed ends as a fresh run: tests/unit/sim/interventions_test.cpp.)
TEST(LiveCli, ResetAddAndRemoveFromTheCommandLineAreRecordedAndReplayed) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  auto fresh = run_command(kFleetsim + " run " + kDiffusion + " --length 5 --quiet --json --log " +
                               (dir / "fresh.flog").string(),
                           dir, 120);
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  const std::string out = (dir / "run.out").string(), err = (dir / "run.err").string();
  const fs::path session = dir / "session.interventions";
  const auto [run, url] = start_paused(kDiffusion, dir, session);
  if (url.empty()) FAIL() << slurp(out) << slurp(err);
  auto control = [&](const std::string& args) {
    return run_command(kFleetsim + " control " + args, dir, 30);
  };
  auto wait_for_line = [&](const std::string& text) { wait_for_text(session, text); };
  for (const char* command : {" step", " step", " move 3 1.5 2.25 0.5", " step"}) {
    auto r = control(url + command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  }
  wait_for_line("move 3");
  auto r = control(url + " reset");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("reset sent"), std::string::npos) << r.out;
  r = control(url + " step");  // (the reset lands before this tick)
  EXPECT_EQ(r.status, 0) << r.err;
  wait_for_line("reset");
  r = control(url + " reset now");
  EXPECT_EQ(r.status, 2) << "reset takes no value";
  // A robot added and one removed (after the reset: the reset run is a fresh run's till then).
  for (const char* bad :
       {" add epuck diffuse 1", " add epuck diffuse x 1", " remove", " remove x"}) {
    r = control(url + bad);
    EXPECT_EQ(r.status, 2) << bad;
  }
  r = control(url + " add epuck diffuse 0.5 0.25 1.5");
  EXPECT_EQ(r.status, 0) << r.err;
  r = control(url + " remove 7");
  EXPECT_EQ(r.status, 0) << r.err;
  r = control(url + " leds 9 red");
  EXPECT_EQ(r.status, 0) << r.err;
  r = control(url + " leds 9 mauve");
  EXPECT_EQ(r.status, 2) << "not a colour";
  r = control(url + " add tank diffuse 0.5 0.25");  // (sent; refused by the run, not recorded)
  EXPECT_EQ(r.status, 0) << r.err;
  wait_for_line("leds 9");
  r = control(url + " play");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(180)), 0) << slurp(err);
  const std::string file = slurp(session);
  // (A paused run takes a move or a reset at once, at the tick it stands at.)
  EXPECT_TRUE(std::regex_search(
      file,
      std::regex(
          R"(\n2 move 3 1\.5 2\.25 0\.5\n3 reset\n1 add epuck diffuse 0\.5 0\.25 1\.5\n1 remove 7\n1 leds 9 255,0,0,255\n$)")))
      << file;
  EXPECT_NE(hash_of(slurp(out)), hash_of(fresh.out)) << "the robot added and removed count";

  auto replay =
      run_command(kFleetsim + " run " + kDiffusion + " --length 5 --quiet --json --interventions " +
                      session.string() + " --log " + (dir / "replay.flog").string(),
                  dir, 120);
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(hash_of(replay.out), hash_of(slurp(out)));
  EXPECT_TRUE(slurp(dir / "replay.flog") == slurp(dir / "live.flog")) << "the replay differs";
}

// Commands held and a Lua controller's globals set from the command line: each lands at a tick
// boundary and is recorded; bad ones are refused with the reason while the run goes on; the
// file replays the session's log bytes and hash.
TEST(LiveCli, CommandsAndScriptGlobalsFromTheCommandLineAreRecordedAndReplayed) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  std::ofstream(dir / "steered.lua") << "speed = 5\nmode = \"forward\"\nfunction step()\n"
                                        "  if mode == \"forward\" then "
                                        "robot.wheels.set_velocity(speed, speed)\n"
                                        "  else robot.wheels.set_velocity(-speed, speed) end\n"
                                        "end\n";
  std::ofstream(dir / "steered.xml")
      << "<fleetsim><framework ticks_per_second=\"10\" seed=\"3\"/>"
         "<controllers><controller id=\"s\" type=\"lua\" script=\"steered.lua\"/></controllers>"
         "<arena size=\"8,8\"><distribute count=\"6\" kind=\"epuck\" controller=\"s\"/></arena>"
         "<log path=\"steered.flog\" format=\"frames\"/>"
         "</fleetsim>\n";
  const std::string experiment = (dir / "steered.xml").string();
  const fs::path session = dir / "session.interventions";
  const auto [run, url] = start_paused(experiment, dir, session);
  if (url.empty()) FAIL() << slurp(dir / "run.out") << slurp(dir / "run.err");
  auto control = [&](const std::string& args) {
    return run_command(kFleetsim + " control " + args, dir, 30);
  };
  // The values' shapes are checked before sending (status 2) ...
  for (const char* bad : {" command 3 differential_drive", " command 3 differential_drive x 1",
                          " release 3", " param 1 speed", " param x speed 1"}) {
    auto r = control(url + bad);
    EXPECT_EQ(r.status, 2) << bad;
  }
  // ... what the run cannot take is refused there, with the reason, and not recorded.
  for (const char* command :
       {" param 1 speed 0.25", " param 2 mode spin", " param 1 speed fast", " param 1 sped 2",
        " command 3 differential_drive 0.05 -0.05", " command 3 differential_drive 0.05",
        " command 3 wheels 1 1", " step", " step", " release 3 differential_drive", " step"}) {
    auto r = control(url + command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  }
  wait_for_text(session, "release 3");
  auto r = control(url + " play");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(180)), 0) << slurp(dir / "run.err");
  const std::string file = slurp(session);
  EXPECT_TRUE(std::regex_search(
      file, std::regex(R"(\n0 param 1 speed 0\.25\n0 param 2 mode "spin"\n0 command 3 )"
                       R"(differential_drive 0\.05,-0\.05\n2 release 3 differential_drive\n$)")))
      << file;
  const std::string said = slurp(dir / "run.err");
  for (const char* reason :
       {"refused: cannot set global 'speed' of robot 1's script: global 'speed' of robot 1's "
        "script is a number, not a string",
        "robot 1's script has no global 'sped' that is a number, a string or a boolean (its: "
        "mode, speed)",
        "actuator 'differential_drive' takes 2 values",
        "robot kind 'epuck' has no actuator 'wheels' with a numeric command (its: "
        "differential_drive)",
        "global 'speed' of robot 1's script set to 0.25 at tick 0",
        "robot 3's 'differential_drive' held at 0.05,-0.05 from tick 0 (until released)"})
    EXPECT_NE(said.find(reason), std::string::npos) << reason << "\n" << said;
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  auto replay =
      run_command(kFleetsim + " run " + experiment + " --length 5 --quiet --json --interventions " +
                      session.string() + " --log " + (dir / "replay.flog").string(),
                  dir, 120);
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(hash_of(replay.out), hash_of(slurp(dir / "run.out")));
  EXPECT_TRUE(slurp(dir / "replay.flog") == slurp(dir / "live.flog")) << "the replay differs";
}

// On several processes, process 0 serves the view; a paused run's other processes wait for it.
// The interventions sent at a tick boundary land on every process at the next one (announced
// with the tick's moves), a reset too, are recorded with it, and the file replays on one
// process and on two with the live session's log bytes and hash.
TEST(LiveCli, OnTwoProcessesInterventionsLandOnEveryProcessAndReplayByteForByte) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  const std::string common = " run " + kDiffusion + " --length 20 --json --log ";
  auto untouched =
      run_command(kFleetsim + common + (dir / "one.flog").string() + " --quiet", dir, 120);
  ASSERT_EQ(untouched.status, 0) << untouched.err;
  const std::string out = (dir / "run.out").string(), err = (dir / "run.err").string();
  const fs::path session = dir / "session.interventions";
  const pid_t run = testing::spawn_with_output(
      kFleetsim,
      {"run", kDiffusion, "--processes", "2", "--length", "20", "--view", "--port", "0",
       "--view-paused", "--log", (dir / "two.flog").string(), "--json", "--record-interventions",
       session.string()},
      out, err);
  const std::string url = testing::wait_for_view_url(out, 3000);
  if (url.empty()) {
    kill(run, SIGKILL);
    waitpid(run, nullptr, 0);
    FAIL() << slurp(out) << slurp(err);
  }
  // Paused at tick 2, the run announces them; they land at tick 3, once stepped.
  auto control = [&](const std::string& command) {
    auto r = run_command(kFleetsim + " control " + url + command, dir, 30);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  };
  for (const char* command : {" step", " step", " move 3 1.5 2.25 0.5", " leds 5 red",
                              " add epuck diffuse 0.5 0.25 1.5", " remove 7", " move 99999 1 1"})
    control(command);
  wait_for_text(err, "no robot with id 99999");
  EXPECT_EQ(slurp(session), "") << "nothing lands before the next tick boundary";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // paused: the others wait
  control(" step");
  wait_for_text(session, "remove 7");
  // A reset at tick 5 lands at 6: back to tick 0 on both processes; a move after it.
  for (const char* command : {" step", " step", " reset", " step"}) control(command);
  wait_for_text(session, "reset");
  control(" move 3 -1 1 0");
  control(" step");
  wait_for_text(session, "move 3 -1");
  control(" play");
  ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(180)), 0) << slurp(err);
  const std::string file = slurp(session);
  EXPECT_TRUE(std::regex_search(
      file, std::regex(R"(\n3 move 3 1\.5 2\.25 0\.5\n3 leds 5 255,0,0,255\n3 add epuck diffuse )"
                       R"(0\.5 0\.25 1\.5\n3 remove 7\n6 reset\n1 move 3 -1 1 0\n$)")))
      << file;
  const std::string said = slurp(err);
  for (const char* text : {"will move robot 3 at tick 3 (the next tick boundary of every process)",
                           "robot 3 moved to (1.500, 2.250) at tick 3",
                           "the run was reset at tick 6 (back to tick 0)"})
    EXPECT_NE(said.find(text), std::string::npos) << text << "\n" << said;
  EXPECT_NE(hash_of(slurp(out)), hash_of(untouched.out)) << "the interventions count";
  for (const char* processes : {"1", "2"}) {
    SCOPED_TRACE(std::string("--processes ") + processes);
    const fs::path log = dir / (std::string("replay") + processes + ".flog");
    auto replay = run_command(kFleetsim + common + log.string() + " --quiet --processes " +
                                  processes + " --interventions " + session.string(),
                              dir, 120);
    ASSERT_EQ(replay.status, 0) << replay.err;
    EXPECT_EQ(hash_of(replay.out), hash_of(slurp(out)));
    EXPECT_TRUE(slurp(log) == slurp(dir / "two.flog")) << "the replay differs";
  }
}

// On two processes, a global of the script of a robot whose controller process 1 runs is set
// by process 1 at the next tick boundary (process 0 announces it and records what process 1
// says became of it); a name the script lacks is refused there, with the reason. The value is
// part of the controller's state: it goes with the robot when the robot drives into process
// 0's domain (process 0's robot panel then shows it). The file replays on one process and on
// two with the live session's log bytes and hash.
TEST(LiveCli, OnTwoProcessesAScriptGlobalLandsWhereTheControllerRunsAndTravelsWithIt) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  // Robot 2 (c) starts in the right-hand domain, facing the left-hand one; it stands still
  // until its speed is set (support/crossing_scene.hpp).
  const std::string experiment = testing::write_crossing_scene(dir, 10);
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  const std::string out = (dir / "run.out").string(), err = (dir / "run.err").string();
  const fs::path session = dir / "session.interventions";
  const pid_t run = testing::spawn_with_output(
      kFleetsim,
      {"run", experiment, "--processes", "2", "--view", "--view-steer", "--port", "0",
       "--view-paused", "--json", "--log", (dir / "two.flog").string(), "--record-interventions",
       session.string()},
      out, err);
  const std::string url = testing::wait_for_view_url(out, 3000);
  if (url.empty()) {
    kill(run, SIGKILL);
    waitpid(run, nullptr, 0);
    FAIL() << slurp(out) << slurp(err);
  }
  const std::string token = url.substr(url.find("token="));
  httplib::Client page("127.0.0.1", testing::view_url_port(url));
  auto robot_now = [&](int id) {
    auto res = page.Get("/api/robot-now?robot=" + std::to_string(id) + "&" + token);
    return res && res->status == 200 ? nlohmann::json::parse(res->body) : nlohmann::json();
  };
  const nlohmann::json before = robot_now(2);
  EXPECT_EQ(before.value("why", ""),
            "its controller runs on process 1, not on the one serving "
            "the view")
      << before.dump();
  auto control = [&](const std::string& command) {
    auto r = run_command(kFleetsim + " control " + url + command, dir, 30);
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  };
  control(" param 2 speed 10");
  control(" param 2 sped 1");
  control(" step");
  wait_for_text(err, "refused at tick 1");
  EXPECT_EQ(slurp(session).find("sped"), std::string::npos) << slurp(session);
  // 10 cm/s for 6 s: robot 2 crosses into the left-hand domain, and its controller with it.
  for (int i = 0; i < 60; ++i) control(" step");
  const nlohmann::json after = robot_now(2);
  ASSERT_TRUE(after.contains("globals")) << after.dump();
  EXPECT_LT(after["columns"]["x"].get<double>(), -0.2) << after.dump();
  EXPECT_EQ(after["globals"], nlohmann::json::parse(R"({"speed": 10})")) << after.dump();
  control(" play");
  ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(180)), 0) << slurp(err);
  EXPECT_TRUE(std::regex_search(slurp(session), std::regex(R"(\n1 param 2 speed 10\n$)")))
      << slurp(session);
  const std::string said = slurp(err);
  for (const char* text :
       {"will set global 'speed' of robot 2's script at tick 1 (the next tick boundary of every "
        "process; process 1 runs its controller and checks it)",
        "global 'speed' of robot 2's script set to 10 at tick 1",
        "refused at tick 1: cannot set global 'sped' of robot 2's script: robot 2's script has "
        "no global 'sped' that is a number, a string or a boolean (its: speed)"})
    EXPECT_NE(said.find(text), std::string::npos) << text << "\n" << said;
  const std::string common = " run " + experiment + " --json --quiet --log ";
  auto untouched = run_command(kFleetsim + common + (dir / "still.flog").string(), dir, 120);
  ASSERT_EQ(untouched.status, 0) << untouched.err;
  EXPECT_NE(hash_of(untouched.out), hash_of(slurp(out))) << "the global counts";
  for (const char* processes : {"1", "2"}) {
    SCOPED_TRACE(std::string("--processes ") + processes);
    const fs::path log = dir / (std::string("replay") + processes + ".flog");
    auto replay = run_command(kFleetsim + common + log.string() + " --processes " + processes +
                                  " --interventions " + session.string(),
                              dir, 120);
    ASSERT_EQ(replay.status, 0) << replay.err;
    EXPECT_EQ(hash_of(replay.out), hash_of(slurp(out)));
    EXPECT_TRUE(slurp(log) == slurp(dir / "two.flog")) << "the replay differs";
  }
}

// A run split so that each process holds only its part (one region over the domains, robots
// that read only their neighbours) refuses interventions on several processes, saying how to
// have them; with --view-steer every process holds every robot, and a move lands, recorded,
// and replays on one process with the same log bytes and hash.
TEST(LiveCli, OnTwoProcessesASplitRunTakesInterventionsWithViewSteer) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  std::ofstream(dir / "split.xml")
      << "<fleetsim><framework ticks_per_second=\"10\" length=\"2\" seed=\"3\"/>"
         "<controllers><controller id=\"c\" type=\"diffusion\"/></controllers>"
         "<arena size=\"8,8\"><distribute count=\"20\" kind=\"epuck\" controller=\"c\"/></arena>"
         "</fleetsim>\n";
  const std::string experiment = (dir / "split.xml").string();
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  for (const bool steer : {false, true}) {
    SCOPED_TRACE(steer ? "--view-steer" : "without --view-steer");
    const std::string name = steer ? "steer" : "plain";
    const fs::path out = dir / (name + ".out"), err = dir / (name + ".err"),
                   session = dir / (name + ".interventions");
    std::vector<std::string> args = {"run",
                                     experiment,
                                     "--processes",
                                     "2",
                                     "--view",
                                     "--port",
                                     "0",
                                     "--view-paused",
                                     "--json",
                                     "--log",
                                     (dir / (name + ".flog")).string(),
                                     "--record-interventions",
                                     session.string()};
    if (steer) args.push_back("--view-steer");
    const pid_t run = testing::spawn_with_output(kFleetsim, args, out.string(), err.string());
    const std::string url = testing::wait_for_view_url(out, 3000);
    if (url.empty()) {
      kill(run, SIGKILL);
      waitpid(run, nullptr, 0);
      FAIL() << slurp(out) << slurp(err);
    }
    for (const char* command : {" move 3 1 1 0", " step"}) {
      auto r = run_command(kFleetsim + " control " + url + command, dir, 30);
      EXPECT_EQ(r.status, 0) << command << ": " << r.err;
    }
    if (steer)
      wait_for_text(session, "move 3");
    else
      wait_for_text(err, "run it with --view-steer");
    auto r = run_command(kFleetsim + " control " + url + " play", dir, 30);
    EXPECT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(120)), 0) << slurp(err);
    if (!steer) {
      EXPECT_NE(slurp(err).find("refused: cannot move robot 3: on several processes this run "
                                "gives each process only the robots near its domain"),
                std::string::npos)
          << slurp(err);
      EXPECT_FALSE(fs::exists(session)) << "nothing was recorded";
      continue;
    }
    EXPECT_NE(slurp(session).find("\n1 move 3 1 1 0\n"), std::string::npos) << slurp(session);
    auto replay =
        run_command(kFleetsim + " run " + experiment + " --quiet --json --log " +
                        (dir / "replay.flog").string() + " --interventions " + session.string(),
                    dir, 120);
    ASSERT_EQ(replay.status, 0) << replay.err;
    EXPECT_EQ(hash_of(replay.out), hash_of(slurp(out)));
    EXPECT_TRUE(slurp(dir / "replay.flog") == slurp(dir / "steer.flog")) << "the replay differs";
  }
}

/// A run split over two domains (one region, 30 e-pucks, 4 s at 10 ticks a second), with
/// `log_element` (a <log>, or nothing); returns the experiment's path.
std::string write_split_scene(const fs::path& dir, const std::string& log_element) {
  std::ofstream(dir / "split.xml")
      << "<fleetsim><framework ticks_per_second=\"10\" length=\"4\" seed=\"5\"/>"
         "<controllers><controller id=\"c\" type=\"diffusion\"/></controllers>"
         "<arena size=\"8,8\"><distribute count=\"30\" kind=\"epuck\" controller=\"c\"/>"
         "</arena>"
      << log_element << "</fleetsim>\n";
  return (dir / "split.xml").string();
}

/// `experiment` on 2 processes with --view at real time, its output into `out` and `err`.
pid_t start_watched_run(const std::string& experiment, const fs::path& out, const fs::path& err) {
  return testing::spawn_with_output(kFleetsim,
                                    {"run", experiment, "--processes", "2", "--view", "--port", "0",
                                     "--view-speed", "1", "--json"},
                                    out.string(), err.string());
}

/// The URL the run prints; empty, the run stopped and its output reported as a failure, when
/// it prints none.
std::string view_url_or_stop(pid_t run, const fs::path& out, const fs::path& err) {
  const std::string url = testing::wait_for_view_url(out, 3000);
  if (url.empty()) {
    kill(run, SIGKILL);
    waitpid(run, nullptr, 0);
    ADD_FAILURE() << slurp(out) << slurp(err);
  }
  return url;
}

// On several processes, a page attached gets whole frames while the run goes (the first process
// asks for them at the page's frame rate, announced in its moves message), not only those a log
// keeps (with no log: the first and the last); and the run ends with the same hash, and the
// same log bytes, as on one process.
TEST(LiveCli, OnTwoProcessesAPageGetsWholeFramesWhileTheRunGoesWithTheSameBits) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  for (const bool logged : {false, true}) {
    SCOPED_TRACE(logged ? "a log every 15 ticks" : "no log");
    // One region over the domains: a split run (each process holds the robots near its
    // domain). Real time: 40 ticks at 10 a second, 4 seconds.
    const fs::path log = dir / "run.flog";
    const std::string experiment = write_split_scene(
        dir, logged ? "<log path=\"" + log.string() + "\" format=\"frames\" every=\"15\"/>" : "");
    const fs::path out = dir / "run.out", err = dir / "run.err";
    const pid_t run = start_watched_run(experiment, out, err);
    const std::string url = view_url_or_stop(run, out, err);
    if (url.empty()) return;
    // A page: long polls of the status (as viewer.js's), the newest frame fetched each time.
    httplib::Client page("127.0.0.1", testing::view_url_port(url));
    std::uint64_t frames = 0, version = 0, fetched = 0;
    int middle_robot_status = 0;
    std::string state;
    for (int i = 0; i < 2000 && state != "ended"; ++i) {
      auto res = page.Get("/api/live?frames=" + std::to_string(frames) +
                          "&version=" + std::to_string(version));
      if (!res || res->status != 200) break;  // the server stopped: the run has ended
      const auto st = nlohmann::json::parse(res->body);
      frames = st["frames"];
      version = st["version"];
      state = st["state"];
      if (frames == 0) continue;
      auto f = page.Get("/api/frames?start=" + std::to_string(frames - 1) + "&count=1");
      if (f && f->status == 200) ++fetched;
      if (frames > 6 && middle_robot_status == 0)  // (a frame not the first or the last)
        if (auto r = page.Get("/api/robot?frame=" + std::to_string(frames / 2) + "&index=29"))
          middle_robot_status = r->status;
    }
    ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(120)), 0) << slurp(err);
    // The log alone gives the first and the last frame, or those of ticks 0, 15, 30 and 40.
    EXPECT_GT(frames, logged ? 4u : 2u) << "only the frames a log keeps came";
    EXPECT_GT(fetched, 2u);
    // Whole frames: a frame of the middle of the run has every robot (made in the frame log's
    // blocks where the robots are: neither process takes in every robot).
    EXPECT_EQ(middle_robot_status, 200) << "the last of the 30 robots is in the middle frame";
    const std::string text = slurp(out);
    const auto report = nlohmann::json::parse(text.substr(text.rfind("\n{") + 1));
    EXPECT_LT(report["per_process"][0]["held_robots_max"], 30) << "process 0 took in every robot";
    EXPECT_LT(report["per_process"][1]["held_robots_max"], 30) << "still a split run";
    std::string watched_log;
    if (logged) watched_log = slurp(log);
    // Watching changed nothing: the same hash (and log bytes) as on one process, and as on two
    // unwatched.
    auto one = run_command(kFleetsim + " run " + experiment + " --quiet --json", dir, 120);
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(hash_of(text), hash_of(one.out));
    if (logged) {
      EXPECT_FALSE(watched_log.empty());
      EXPECT_TRUE(slurp(log) == watched_log) << "the watched run's log differs";
    }
    auto two =
        run_command(kFleetsim + " run " + experiment + " --processes 2 --quiet --json", dir, 120);
    ASSERT_EQ(two.status, 0) << two.err;
    EXPECT_EQ(hash_of(two.out), hash_of(one.out));
    if (logged) {
      EXPECT_TRUE(slurp(log) == watched_log) << "the unwatched run's log differs";
    }
    // With --view and no page attached, nothing more is gathered: the first process holds no
    // more robots than without --view (its part; the whole world only with a log).
    auto unwatched = run_command(
        kFleetsim + " run " + experiment + " --processes 2 --view --port 0 --json", dir, 120);
    ASSERT_EQ(unwatched.status, 0) << unwatched.err;
    const auto held = [](const std::string& t) {
      return nlohmann::json::parse(
          t.substr(t.rfind("\n{") + 1))["per_process"][0]["held_robots_max"];
    };
    EXPECT_EQ(held(unwatched.out), held(two.out));
    if (!logged) {
      EXPECT_LT(held(unwatched.out), 30);
    }
    EXPECT_EQ(hash_of(unwatched.out), hash_of(one.out));
  }
}

/// The frames of a chunk of /api/frames (docs/view-format.md, "Wire format"), by tick: each
/// frame's bytes as the page reads them (its tick, time, counts, status and columns). The
/// chunk's tag table is kept with each (the frames index into it).
std::map<double, std::string> chunk_frames(const std::string& chunk) {
  std::map<double, std::string> out;
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    std::memcpy(&v, chunk.data() + at, 4);
    return v;
  };
  if (chunk.size() < 20) return out;
  const std::uint32_t count = u32(8), tags = u32(16);
  std::size_t at = 20;
  for (std::uint32_t t = 0; t < tags && at + 4 <= chunk.size(); ++t)
    at += (4 + u32(at) + 3) / 4 * 4;
  const std::string table = chunk.substr(16, at - 16);
  for (std::uint32_t k = 0; k < count && at + 12 <= chunk.size(); ++k) {
    const std::uint32_t bytes = u32(at);
    double tick = 0;
    std::memcpy(&tick, chunk.data() + at + 4, 8);
    out[tick] = table + chunk.substr(at, bytes);
    at += bytes;
  }
  return out;
}

// A run split over domains gives a watching page its frames in the frame log's blocks, each
// made where its robots are (the first process never takes in every robot): the page's frames
// are those of a one-process run at the same ticks, byte for byte as the page reads them.
TEST(LiveCli, OnTwoProcessesASplitRunsPageFramesAreTheOneProcessFrames) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  const std::string experiment = write_split_scene(dir, "");
  const fs::path out = dir / "run.out", err = dir / "run.err";
  const pid_t run = start_watched_run(experiment, out, err);
  const std::string url = view_url_or_stop(run, out, err);
  if (url.empty()) return;
  httplib::Client page("127.0.0.1", testing::view_url_port(url));
  std::map<double, std::string> seen;
  std::uint64_t frames = 0, version = 0;
  std::string state;
  for (int i = 0; i < 2000 && state != "ended"; ++i) {
    auto res = page.Get("/api/live?frames=" + std::to_string(frames) +
                        "&version=" + std::to_string(version));
    if (!res || res->status != 200) break;  // the server stopped: the run has ended
    const auto st = nlohmann::json::parse(res->body);
    frames = st["frames"];
    version = st["version"];
    state = st["state"];
    if (frames == 0) continue;
    if (auto f = page.Get("/api/frames?start=" + std::to_string(frames - 1) + "&count=1");
        f && f->status == 200)
      seen.merge(chunk_frames(f->body));
  }
  ASSERT_EQ(testing::wait_for(run, std::chrono::seconds(120)), 0) << slurp(err);
  // (The first and the last frame are whole anyway: those between came in blocks.)
  seen.erase(0.0);
  seen.erase(40.0);
  EXPECT_GE(seen.size(), 2u) << "no frame between the first and the last came";
  const std::string text = slurp(out);
  const auto report = nlohmann::json::parse(text.substr(text.rfind("\n{") + 1));
  EXPECT_LT(report["per_process"][0]["held_robots_max"], 30)
      << "the first process took in every robot";
  // The same ticks of a one-process run, through `fleetsim view` of its log (a frame a tick).
  auto one = run_command(
      kFleetsim + " run " + experiment + " --quiet --json --log " + (dir / "one.flog").string(),
      dir, 120);
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["state_hash"], report["state_hash"]);
  const std::string view_out = (dir / "view.out").string();
  const pid_t view =
      testing::spawn_with_output(kFleetsim, {"view", (dir / "one.flog").string(), "--port", "0"},
                                 view_out, (dir / "view.err").string());
  const std::regex printed(R"(http://127\.0\.0\.1:(\d+)/)");
  int port = 0;  // (read while the text it was found in lives)
  for (int i = 0; i < 1000 && port == 0; ++i) {
    const std::string said = slurp(view_out);
    if (std::smatch m; std::regex_search(said, m, printed)) {
      port = std::stoi(m[1].str());
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_NE(port, 0) << slurp(view_out);
  httplib::Client replay("127.0.0.1", port);
  for (const auto& [tick, bytes] : seen) {
    SCOPED_TRACE("tick " + std::to_string(tick));
    auto f = replay.Get("/api/frames?start=" + std::to_string(static_cast<int>(tick)) + "&count=1");
    ASSERT_TRUE(f && f->status == 200);
    const auto theirs = chunk_frames(f->body);
    ASSERT_EQ(theirs.count(tick), 1u);
    EXPECT_TRUE(theirs.at(tick) == bytes) << "the page's frame differs from one process's";
  }
  kill(view, SIGTERM);
  waitpid(view, nullptr, 0);
}

/// A TCP port of 127.0.0.1 free when asked (a network run's primary listens there, its links on
/// the next ports).
int free_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    return 0;
  close(s);
  return ntohs(a.sin_port);
}

// Gazebo's way: the primary of a network run (a primary and a secondary, here on one machine)
// serves the page and holds the secondary while paused. A page watching a split run gets
// whole frames as the run goes, with the one-process hash; with --view-steer a move and a
// global of the script of a robot whose controller the secondary runs land on both processes
// at the next tick boundary, and the recorded file replays on one process with the live log's
// bytes and hash.
TEST(LiveCli, TheNetworkPrimaryServesTheViewAndSteersTheSecondaries) {
  const fs::path dir = testing::fresh_test_dir("live_cli");
  const auto hash_of = [](const std::string& out) {
    return nlohmann::json::parse(out.substr(out.rfind("\n{") + 1))["state_hash"];
  };
  // Starts the primary with `view` options and a secondary; returns their pids and the URL.
  auto start = [&](const std::string& experiment, const std::vector<std::string>& view,
                   const std::string& name) {
    const std::string address = "tcp://127.0.0.1:" + std::to_string(free_port());
    std::vector<std::string> args = {
        "run", experiment, "--network-role", "primary", "--network-secondaries",
        "1",   "--listen", address,          "--view",  "--port",
        "0",   "--json"};
    args.insert(args.end(), view.begin(), view.end());
    const pid_t primary = testing::spawn_with_output(kFleetsim, args, (dir / (name + ".out")),
                                                     (dir / (name + ".err")));
    const pid_t secondary = testing::spawn_with_output(
        kFleetsim,
        {"run", experiment, "--network-role", "secondary", "--primary", address, "--quiet"},
        (dir / (name + ".secondary.out")), (dir / (name + ".secondary.err")));
    return std::make_tuple(primary, secondary,
                           testing::wait_for_view_url(dir / (name + ".out"), 6000));
  };
  auto stop = [](pid_t p) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  };
  {
    SCOPED_TRACE("a page watching a split run");
    std::ofstream(dir / "split.xml")
        << "<fleetsim><framework ticks_per_second=\"10\" length=\"4\" seed=\"5\"/>"
           "<controllers><controller id=\"c\" type=\"diffusion\"/></controllers>"
           "<arena size=\"8,8\"><distribute count=\"30\" kind=\"epuck\" controller=\"c\"/>"
           "</arena></fleetsim>\n";
    const std::string experiment = (dir / "split.xml").string();
    const auto [primary, secondary, url] = start(experiment, {"--view-speed", "1"}, "split");
    if (url.empty()) {
      stop(primary);
      stop(secondary);
      FAIL() << slurp(dir / "split.out") << slurp(dir / "split.err");
    }
    httplib::Client page("127.0.0.1", testing::view_url_port(url));
    std::uint64_t frames = 0, version = 0;
    int middle_robot_status = 0;
    std::string state;
    for (int i = 0; i < 2000 && state != "ended"; ++i) {
      auto res = page.Get("/api/live?frames=" + std::to_string(frames) +
                          "&version=" + std::to_string(version));
      if (!res || res->status != 200) break;  // the server stopped: the run has ended
      const auto st = nlohmann::json::parse(res->body);
      frames = st["frames"];
      version = st["version"];
      state = st["state"];
      if (frames > 6 && middle_robot_status == 0)
        if (auto r = page.Get("/api/robot?frame=" + std::to_string(frames / 2) + "&index=29"))
          middle_robot_status = r->status;
    }
    ASSERT_EQ(testing::wait_for(primary, std::chrono::seconds(120)), 0) << slurp(dir / "split.err");
    ASSERT_EQ(testing::wait_for(secondary, std::chrono::seconds(60)), 0)
        << slurp(dir / "split.secondary.err");
    EXPECT_GT(frames, 2u) << "only the first and the last frame came";
    EXPECT_EQ(middle_robot_status, 200) << "the last of the 30 robots is in the middle frame";
    auto one = run_command(kFleetsim + " run " + experiment + " --quiet --json", dir, 120);
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(hash_of(slurp(dir / "split.out")), hash_of(one.out));
  }
  {
    SCOPED_TRACE("interventions");
    const std::string experiment = testing::write_crossing_scene(dir, 3);
    const fs::path session = dir / "session.interventions";
    const auto [primary, secondary, url] =
        start(experiment,
              {"--view-steer", "--view-paused", "--log", (dir / "live.flog").string(),
               "--record-interventions", session.string()},
              "steer");
    if (url.empty()) {
      stop(primary);
      stop(secondary);
      FAIL() << slurp(dir / "steer.out") << slurp(dir / "steer.err");
    }
    for (const char* command : {" step", " param 2 speed 10", " move 0 -0.5 2.5 0", " step"}) {
      auto r = run_command(kFleetsim + " control " + url + command, dir, 30);
      EXPECT_EQ(r.status, 0) << command << ": " << r.err;
    }
    wait_for_text(session, "move 0");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // paused: the secondary waits
    auto r = run_command(kFleetsim + " control " + url + " play", dir, 30);
    EXPECT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(testing::wait_for(primary, std::chrono::seconds(120)), 0) << slurp(dir / "steer.err");
    ASSERT_EQ(testing::wait_for(secondary, std::chrono::seconds(60)), 0)
        << slurp(dir / "steer.secondary.err");
    EXPECT_TRUE(std::regex_search(slurp(session),
                                  std::regex(R"(\n2 param 2 speed 10\n2 move 0 -0\.5 2\.5 0\n$)")))
        << slurp(session);
    EXPECT_NE(slurp(dir / "steer.err").find("process 1 runs its controller and checks it"),
              std::string::npos)
        << slurp(dir / "steer.err");
    const std::string common = " run " + experiment + " --json --quiet --log ";
    auto still = run_command(kFleetsim + common + (dir / "still.flog").string(), dir, 120);
    ASSERT_EQ(still.status, 0) << still.err;
    EXPECT_NE(hash_of(still.out), hash_of(slurp(dir / "steer.out"))) << "they count";
    auto replay = run_command(kFleetsim + common + (dir / "replay.flog").string() +
                                  " --interventions " + session.string(),
                              dir, 120);
    ASSERT_EQ(replay.status, 0) << replay.err;
    EXPECT_EQ(hash_of(replay.out), hash_of(slurp(dir / "steer.out")));
    EXPECT_TRUE(slurp(dir / "replay.flog") == slurp(dir / "live.flog")) << "the replay differs";
  }
}
}  // namespace
}  // namespace fleetsim
