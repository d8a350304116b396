// The command line as a user meets it: examples run, bad input is reported as file:line with
// status 2, failures keep the log, and runs repeat bit for bit across thread counts.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "log/log_reader.hpp"
#include "plugins/builtins.hpp"
#include "robots/kinds.hpp"
#include "sim/simulation.hpp"
#include "support/test_files.hpp"

namespace fleetsim {
namespace {

using fleetsim::testing::slurp;

namespace fs = std::filesystem;
const std::string kSrc = FLEETSIM_SOURCE_DIR;
const std::string kBin = FLEETSIM_BINARY_DIR;
const std::string kFleetsim = kBin + "/fleetsim";

struct Result {
  int status = -1;
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fleetsim::testing::fresh_test_dir(); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  Result run(const std::string& args, const std::string& env = "") {
    std::string out = path("stdout.txt"), err = path("stderr.txt");
    std::string cmd = env + " " + fleetsim::testing::time_limited(kFleetsim + " " + args) + " >" +
                      out + " 2>" + err;
    int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  fs::path dir_;
};

const std::string kDiffusion = kSrc + "/examples/diffusion/diffusion.xml";

TEST_F(Cli, DiffusionExampleRunsAndItsLogReadsBack) {
  Result r = run("run " + kDiffusion + " --log " + path("d.flog") + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto last_line = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  auto j = nlohmann::json::parse(last_line);
  EXPECT_EQ(j["ticks"], 600);
  EXPECT_EQ(j["robots"], 1000);
  EXPECT_DOUBLE_EQ(j["sim_seconds"].get<double>(), 60.0);
  auto reader = log::LogReader::open(path("d.flog"));
  ASSERT_EQ(reader->frame_count(), 601u);
  const log::LogHeader& h = reader->header();
  auto f = reader->read_frame(600);
  EXPECT_EQ(f.tick, 600);
  EXPECT_EQ(f.robot<EntityId>("id", h).size(), 1000u);
  // Robots diffused: most moved away from where they started.
  auto f0 = reader->read_frame(0);
  auto x = f.robot<double>("x", h), y = f.robot<double>("y", h);
  auto x0 = f0.robot<double>("x", h), y0 = f0.robot<double>("y", h);
  int moved = 0;
  for (std::size_t i = 0; i < 1000; ++i) moved += std::hypot(x[i] - x0[i], y[i] - y0[i]) > 1.0;
  EXPECT_GT(moved, 500);
}

TEST_F(Cli, OneAndTwoThreadsGiveIdenticalLogsInBothFormats) {
  for (std::string fmt : {"frames", "deeco"}) {
    ASSERT_EQ(run("run " + kDiffusion + " --quiet --threads 1 --log-format " + fmt + " --log " +
                  path("a." + fmt))
                  .status,
              0);
    ASSERT_EQ(run("run " + kDiffusion + " --quiet --threads 2 --log-format " + fmt + " --log " +
                  path("b." + fmt))
                  .status,
              0);
    std::string a = slurp(path("a." + fmt)), b = slurp(path("b." + fmt));
    EXPECT_GT(a.size(), 100000u);
    EXPECT_TRUE(a == b) << fmt << " logs differ between 1 and 2 threads";
  }
}

// From 4,096 robots on, the run's workers transpose each logged frame, each its own robots,
// and from about 6,900 e-pucks on a frame's payload is compressed in parts, which the workers
// share (8,000: two parts; with one thread the log's own thread compresses them): the log
// must still be the same bytes on 1 and 2 threads.
TEST_F(Cli, ASwarmLargeEnoughForTheWorkersToShareTheLogGivesTheSameLogOnOneAndTwoThreads) {
  std::string xml = slurp(kDiffusion);
  const auto count = xml.find("count=\"1000\"");
  const auto bitmap = xml.find("file=\"rooms.png\"");
  ASSERT_NE(count, std::string::npos);
  ASSERT_NE(bitmap, std::string::npos);
  xml.replace(bitmap, 16, "file=\"" + kSrc + "/examples/diffusion/rooms.png\"");
  xml.replace(xml.find("count=\"1000\""), 12, "count=\"8000\"");
  const std::string file = write("swarm8000.xml", xml);
  for (const std::string threads : {"1", "2"}) {
    std::string log = "t";
    log += threads;
    log += ".flog";
    ASSERT_EQ(run("run " + file + " --quiet --length 1 --threads " + threads + " --log " + path(log))
                  .status,
              0);
  }
  auto reader = log::LogReader::open(path("t2.flog"));
  ASSERT_EQ(reader->frame_count(), 11u);
  EXPECT_EQ(reader->read_frame(10).robot_count, 8000u);
  EXPECT_TRUE(slurp(path("t1.flog")) == slurp(path("t2.flog")));
}

TEST_F(Cli, SameSeedSameBytesOtherSeedOtherBytes) {
  ASSERT_EQ(
      run("run " + kDiffusion + " --quiet --length 10 --seed 9 --log " + path("a.flog")).status, 0);
  ASSERT_EQ(
      run("run " + kDiffusion + " --quiet --length 10 --seed 9 --log " + path("b.flog")).status, 0);
  ASSERT_EQ(
      run("run " + kDiffusion + " --quiet --length 10 --seed 10 --log " + path("c.flog")).status,
      0);
  EXPECT_TRUE(slurp(path("a.flog")) == slurp(path("b.flog")));
  EXPECT_FALSE(slurp(path("a.flog")) == slurp(path("c.flog")));
}

TEST_F(Cli, DeecoExampleWritesTheTextLog) {
  fs::copy(kSrc + "/examples/deeco", dir_ / "deeco");
  Result r = run("run " + path("deeco/deeco.xml") + " --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = slurp(path("deeco/deeco.log"));
  // Header (the playground's grammar): field size in pixels, the encoding, then `---` and a
  // line per robot (its radius: 0.035 m in 0.05 m pixels), `---` and a line per object, `---`.
  EXPECT_EQ(text.rfind("80\n60\n", 0), 0u);
  EXPECT_NE(text.find("\n---\nepuck,0.7"), std::string::npos);
  EXPECT_NE(text.find("\n---\nBase\nBeacon\nBeacon\n---\n"), std::string::npos);
  // Tags with metacharacters are escaped.
  EXPECT_NE(text.find("worker\\,\\&\\;special"), std::string::npos);
  EXPECT_NE(text.find("tick 300: "), std::string::npos);
}

TEST_F(Cli, PluginLibraryExampleRuns) {
  Result r =
      run("run " + kSrc + "/examples/plugins/plugins.xml --quiet --json --log " + path("p.flog"),
          "FLEETSIM_PLUGIN_PATH=" + kBin + "/examples/plugins");
  ASSERT_EQ(r.status, 0) << r.err;
  auto reader = log::LogReader::open(path("p.flog"));
  auto f = reader->read_frame(reader->frame_count() - 1);
  EXPECT_EQ(f.status.rfind("centroid ", 0), 0u) << f.status;
  // The blinker flipped tags and LEDs.
  bool on = false;
  for (auto t : f.robot<std::uint32_t>("tag", reader->header())) on = on || f.tags[t] == "on";
  EXPECT_TRUE(on);
}

TEST_F(Cli, BadInputIsReportedAsFileLineWithStatus2AndNothingRuns) {
  std::string bad1 =
      write("bad1.xml",
            "<fleetsim>\n"
            "  <framework ticks_per_second=\"3\" length=\"-1\"/>\n"
            "  <arena size=\"4,4\"><robot id=\"a\" controler=\"x\" position=\"0,0\"/></arena>\n"
            "  <log path=\"" +
                path("never.flog") +
                "\"/>\n"
                "</fleetsim>\n");
  std::string bad2 = write("bad2.xml", "<fleetsim>\n  <arena size=\"4,4\">\n");
  Result r = run("run " + bad1 + " " + bad2);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bad1 + ":2: error: ticks_per_second=3 does not divide"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(bad1 + ":2: error: attribute 'length' of <framework> is -1"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(bad1 + ":3: error: unknown attribute 'controler' on <robot>"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("did you mean 'controller'?"), std::string::npos);
  EXPECT_NE(r.err.find(bad2 + ":2: error: malformed XML"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("never.flog")));
  EXPECT_EQ(run("check " + bad1).status, 2);
  EXPECT_EQ(run("check " + kDiffusion).status, 0);
  EXPECT_EQ(run("run /no/such/file.xml").status, 2);
}

// A file that is not well-formed XML is refused whole, with every problem at its line, even
// where pugixml alone would read it: here "--" in a comment (the examples' old command lines)
// and a second root element.
TEST_F(Cli, CheckRefusesAFileThatIsNotWellFormedXml) {
  std::string exp = write("dashes.xml",
                          "<fleetsim>\n"
                          "  <!-- run it with --processes 2 -->\n"
                          "  <framework/>\n"
                          "  <arena size=\"2,2\"/>\n"
                          "</fleetsim>\n"
                          "<fleetsim/>\n");
  Result r = run("check " + exp);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(exp + ":2: error: '--' inside a comment"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(exp + ":6: error: element <fleetsim> after the root element"),
            std::string::npos)
      << r.err;
  Result run_it = run("run " + exp + " --log ''");
  EXPECT_EQ(run_it.status, 2) << run_it.err;
}

TEST_F(Cli, AControllerThatThrowsStopsTheRunAndKeepsTheLog) {
  std::string xml = slurp(kSrc + "/examples/plugins/plugins.xml");
  xml.replace(xml.find("period=\"5\""), 10, "period=\"5\" fail_at_tick=\"15\"");
  xml.replace(xml.find("libexample_plugins.so"), 21,
              kBin + "/examples/plugins/libexample_plugins.so");
  std::string exp = write("fail.xml", xml);
  Result r = run("run " + exp + " --log " + path("f.flog"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("tick 15, robot '"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("controller 'blink' (type 'blinker'): blinker asked to fail"),
            std::string::npos)
      << r.err;
  auto reader = log::LogReader::open(path("f.flog"));
  ASSERT_EQ(reader->frame_count(), 16u);  // ticks 0..15 completed
  EXPECT_EQ(reader->read_frame(15).tick, 15);
}

// --log '' writes no log, not even the ones the file asks for; a log that cannot be created
// is named once, and not said to be complete.
TEST_F(Cli, AnEmptyLogPathWritesNoLogAndAnUncreatableLogIsNamedOnce) {
  fs::copy(kSrc + "/examples/diffusion", dir_ / "d");
  const std::string exp = path("d/diffusion.xml");
  Result none = run("run " + exp + " --length 1 --quiet --json --log ''");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_FALSE(fs::exists(dir_ / "d" / "diffusion.flog"));
  EXPECT_NE(none.out.find("\"logs\":[]"), std::string::npos) << none.out;
  Result bad = run("run " + exp + " --length 1 --quiet --log " + path("no/such/dir/x.flog"));
  EXPECT_EQ(bad.status, 1);
  const std::string once = "cannot create log '" + path("no/such/dir/x.flog") + "'";
  const auto at = bad.err.find(once);
  ASSERT_NE(at, std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find(once, at + 1), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("is complete up to the last frame"), std::string::npos) << bad.err;
}

TEST_F(Cli, APluginBuiltForAnotherAbiIsRefused) {
  std::string exp =
      write("abi.xml", "<fleetsim>\n  <framework/>\n  <plugins>\n    <library path=\"" +
                           std::string(FLEETSIM_BAD_ABI_PLUGIN) +
                           "\"/>\n  </plugins>\n  <arena size=\"2,2\"/>\n</fleetsim>\n");
  Result r = run("check " + exp);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(exp + ":4: error: plug-in library"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was built for plug-in ABI version"), std::string::npos) << r.err;
}

TEST_F(Cli, SeveralExperimentsRunOneAfterAnother) {
  fs::copy(kSrc + "/examples/deeco", dir_ / "deeco");
  Result r = run("run " + path("deeco/deeco.xml") + " " + kDiffusion +
                 " --length 1 --json --quiet --log " + path("x.flog"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["robots"], 1000);
}

// --time-mode paces a run against the wall clock and changes nothing in its results: a run
// of 2 simulated seconds at 10x takes at least 0.2 wall seconds (never less; how much more
// depends on the machine) and ends in the state of the unpaced run.
TEST_F(Cli, APacedRunFollowsTheWallClockAndGivesTheSameBits) {
  const std::string common = "run " + kDiffusion + " --length 2 --quiet --json --log ";
  Result fast = run(common + path("a.flog"));
  Result paced = run(common + path("b.flog") + " --time-mode linear --speedup 10");
  ASSERT_EQ(fast.status, 0) << fast.err;
  ASSERT_EQ(paced.status, 0) << paced.err;
  auto a = nlohmann::json::parse(fast.out), b = nlohmann::json::parse(paced.out);
  EXPECT_EQ(a["state_hash"], b["state_hash"]);
  EXPECT_TRUE(slurp(path("a.flog")) == slurp(path("b.flog")));
  EXPECT_FALSE(a.contains("time_mode")) << "as fast as possible: nothing to report";
  EXPECT_EQ(b["time_mode"], "linear");
  EXPECT_DOUBLE_EQ(b["speedup"].get<double>(), 10.0);
  EXPECT_GE(b["max_lag_seconds"].get<double>(), 0.0);
  EXPECT_GE(b["loop_wall_seconds"].get<double>(), 0.2);
  Result bad = run(common + path("c.flog") + " --time-mode slow");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--time-mode"), std::string::npos) << bad.err;
}

// `fleetsim list` shows every built-in robot kind with its body and its parts, as text and as
// JSON (the kinds a user names in <robot kind="..."> and <distribute kind="...">).
TEST_F(Cli, ListShowsTheBuiltInRobotKindsWithTheirParts) {
  Result text = run("list");
  ASSERT_EQ(text.status, 0) << text.err;
  const std::size_t kinds_at = text.out.find("\nrobot kinds:\n");
  ASSERT_NE(kinds_at, std::string::npos) << text.out;
  const std::string kinds = text.out.substr(kinds_at);
  Result json = run("list --json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto entries = nlohmann::json::parse(json.out);
  for (const RobotKind& k : builtin_kinds()) {
    SCOPED_TRACE(k.name);
    const std::size_t at = kinds.find("\n  " + k.name + " — ");
    ASSERT_NE(at, std::string::npos) << kinds;
    std::size_t next = at + 1;  // the next kind's line (its parts' lines are indented more)
    while ((next = kinds.find("\n  ", next)) != std::string::npos && kinds[next + 3] == ' ')
      ++next;
    const std::string block = kinds.substr(at, next - at);
    for (const PartDecl& p : k.sensors)
      EXPECT_NE(block.find("sensor " + p.name), std::string::npos) << block;
    for (const PartDecl& p : k.actuators)
      EXPECT_NE(block.find("actuator " + p.name), std::string::npos) << block;
    if (k.passive) EXPECT_NE(block.find("passive"), std::string::npos) << block;
    const auto e = std::find_if(entries.begin(), entries.end(), [&](const nlohmann::json& j) {
      return j.at("kind") == "robot kind" && j.at("name") == k.name;
    });
    ASSERT_NE(e, entries.end());
    EXPECT_EQ(e->at("radius_m").get<double>(), k.radius_m);
    ASSERT_EQ(e->at("sensors").size(), k.sensors.size());
    for (std::size_t i = 0; i < k.sensors.size(); ++i) {
      EXPECT_EQ(e->at("sensors")[i].at("type"), k.sensors[i].type);
      using Values = std::map<std::string, std::string>;
      EXPECT_EQ(e->at("sensors")[i].at("params").get<Values>(), k.sensors[i].params.values());
    }
    EXPECT_EQ(e->at("actuators").size(), k.actuators.size());
  }
}

TEST(Registry, EveryBuiltinIsDocumented) {
  PluginRegistry reg;
  register_builtins(reg);
  EXPECT_GE(reg.all().size(), 8u);
  for (const auto& i : reg.all()) {
    EXPECT_FALSE(i.description.empty()) << i.name;
    for (const auto& p : i.params) {
      EXPECT_FALSE(p.doc.empty()) << i.name << "." << p.name;
      EXPECT_FALSE(p.type.empty()) << i.name << "." << p.name;
    }
  }
  for (auto kind : {PluginKind::kSensor, PluginKind::kActuator, PluginKind::kController,
                    PluginKind::kPhysicsEngine, PluginKind::kLoopFunctions, PluginKind::kLogWriter})
    EXPECT_FALSE(reg.names(kind).empty()) << to_string(kind);
}

// Every option `fleetsim run --help` (and launch's, node's) lists is documented: in README.md
// or a page of docs/.
TEST_F(Cli, EveryRunOptionIsDocumented) {
  std::string docs = slurp(kSrc + "/README.md");
  for (const auto& page : fs::directory_iterator(kSrc + "/docs"))
    if (page.path().extension() == ".md") docs += slurp(page.path().string());
  for (const auto& [command, at_least] :
       std::vector<std::pair<std::string, int>>{{"run", 20}, {"launch", 10}, {"node", 10}}) {
    Result help = run(command + " --help");
    ASSERT_EQ(help.status, 0) << help.err;
    int options = 0;
    for (std::size_t at = help.out.find("--"); at != std::string::npos;
         at = help.out.find("--", at + 2)) {
      std::size_t end = at + 2;
      while (end < help.out.size() &&
             (std::isalnum(static_cast<unsigned char>(help.out[end])) || help.out[end] == '-'))
        ++end;
      const std::string option = help.out.substr(at, end - at);
      if (option.size() < 4 || option == "--help") continue;
      ++options;
      // In code (`--option`), or on a line that shows a fleetsim command line.
      bool documented = docs.find("`" + option) != std::string::npos;
      std::istringstream lines(docs);
      for (std::string line; !documented && std::getline(lines, line);)
        documented = line.find("fleetsim ") != std::string::npos &&
                     (line.find(" " + option + " ") != std::string::npos ||
                      line.find("[" + option) != std::string::npos);
      EXPECT_TRUE(documented) << "fleetsim " << command << ": " << option
                              << " is not documented in README.md or docs/";
    }
    EXPECT_GE(options, at_least) << help.out;
  }
}

}  // namespace
}  // namespace fleetsim
