// Range-and-bearing and the camera in whole runs (experiment file -> Simulation): what a user
// sees through a controller, and the same bits for 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

/// What `listener` controllers heard: (tick, receiver, sender, first payload byte).
struct Heard {
  Tick tick;
  EntityId receiver, sender;
  std::uint8_t first;
  bool operator==(const Heard&) const = default;
};
std::mutex g_heard_mutex;
std::vector<Heard> g_heard;

/// `stamper`: broadcasts tick + 1 (low byte) every tick and records what it hears.
class Stamper final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    out_ = setup.actuator("range_and_bearing");
    in_ = setup.sensor("range_and_bearing");
  }
  void step(RobotIO& io) override {
    io.actuator(out_).data[0] = static_cast<std::uint8_t>(io.tick + 1);
    std::lock_guard lock(g_heard_mutex);
    for (const RabMessage& m : io.sensor(in_).messages)
      g_heard.push_back({io.tick, io.id, m.sender, m.data[0]});
  }
  std::size_t out_ = 0, in_ = 0;
};

/// `swarm`: every part of the foot-bot feeds back into its motion and its LEDs, so the state
/// hash depends on what range-and-bearing and the camera deliver, and on their order.
class Swarm final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    rab_in_ = setup.sensor("range_and_bearing");
    rab_out_ = setup.actuator("range_and_bearing");
    camera_ = setup.sensor("colored_blob_omnidirectional_camera");
    wheels_ = setup.actuator("differential_drive");
    leds_ = setup.actuator("leds");
  }
  void step(RobotIO& io) override {
    const SensorView& rab = io.sensor(rab_in_);
    const SensorView& cam = io.sensor(camera_);
    *cam.enabled = io.tick % 7 != 3;  // switched off now and then
    std::span<std::uint8_t> out = io.actuator(rab_out_).data;
    // The payload depends on the order of the messages heard (a running hash).
    std::uint32_t h = io.id;
    for (const RabMessage& m : rab.messages) h = h * 31 + m.data[0] + m.sender;
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<std::uint8_t>(h >> (i % 4 * 8));
    double turn = 0;
    if (!rab.messages.empty()) turn += rab.messages.front().horizontal_bearing * 0.3;
    if (!cam.blobs.empty()) turn -= cam.blobs.back().angle * 0.2 + cam.blobs.size() * 0.001;
    std::span<double> w = io.actuator(wheels_).values;
    w[0] = 0.2 - turn * 0.1;
    w[1] = 0.2 + turn * 0.1;
    std::span<Color> leds = io.actuator(leds_).colors;
    for (std::size_t i = 0; i < leds.size(); ++i)
      leds[i] =
          (h >> i) & 1 ? Color{static_cast<std::uint8_t>(h), 0, 200, 255} : Color{0, 0, 0, 255};
  }
  std::size_t rab_in_ = 0, rab_out_ = 0, camera_ = 0, wheels_ = 0, leds_ = 0;
};

PluginRegistry registry() {
  PluginRegistry r;
  register_builtins(r);
  r.add_controller({PluginKind::kController, "stamper", "test", {}},
                   [] { return std::make_unique<Stamper>(); });
  r.add_controller(
      {PluginKind::kController, "swarm", "test", {}}, [] { return std::make_unique<Swarm>(); },
      ControllerScope::kShared);
  return r;
}

std::unique_ptr<Simulation> load(PluginRegistry& reg, const std::string& xml) {
  Diagnostics d;
  auto ex = parse_experiment(xml, "parts_run.xml", reg, ExperimentOverrides{}, d);
  EXPECT_TRUE(ex) << d.str();
  if (!ex) return nullptr;
  return std::make_unique<Simulation>(std::move(*ex), reg);
}

TEST(PartsRun, AMessageSentInOneTickIsHeardInTheNext) {
  PluginRegistry reg = registry();
  auto sim = load(reg, R"(<fleetsim>
  <framework ticks_per_second="10" length="0.5"/>
  <controllers><controller id="s" type="stamper"/></controllers>
  <arena size="6,6">
    <robot id="a" kind="footbot" controller="s" position="0,0"/>
    <robot id="b" kind="footbot" controller="s" position="1,0"/>
    <robot id="far" kind="footbot" controller="s" position="2.5,2.5"/>
  </arena>
</fleetsim>)");
  ASSERT_TRUE(sim);
  g_heard.clear();
  sim->start();
  while (!sim->done()) sim->step();
  sim->finish();
  // 5 ticks; a and b hear each other; `far` (3.5 m from a, 2.9 m from b) only hears b. In
  // tick t each hears what was sent in tick t - 1, i.e. t (and zeros in tick 0).
  std::vector<Heard> expected;
  for (Tick t = 0; t < 5; ++t) {
    const auto sent = static_cast<std::uint8_t>(t);
    std::vector<Heard> tick = {{t, 0, 1, sent}, {t, 1, 0, sent}, {t, 1, 2, sent}, {t, 2, 1, sent}};
    expected.insert(expected.end(), tick.begin(), tick.end());
  }
  std::sort(g_heard.begin(), g_heard.end(), [](const Heard& x, const Heard& y) {
    return std::tie(x.tick, x.receiver, x.sender) < std::tie(y.tick, y.receiver, y.sender);
  });
  EXPECT_EQ(g_heard, expected);
}

std::string swarm_xml(int threads) {
  std::ostringstream x;
  x << R"(<fleetsim>
  <framework ticks_per_second="10" length="10" seed="11" threads=")"
    << threads << R"("/>
  <controllers>
    <controller id="c" type="swarm"/>
    <controller id="idle" type="idle"/>
  </controllers>
  <arena size="12,12">
    <box center="2,2" size="1,0.3" angle="20"/>
    <distribute count="300" kind="footbot" controller="c" id_prefix="f"/>
    <distribute count="40" kind="epuck" controller="idle" id_prefix="e"/>
  </arena>
</fleetsim>)";
  return x.str();
}

TEST(PartsRun, RangeAndBearingAndCameraGiveTheSameBitsOnOneAndTwoThreads) {
  std::vector<std::vector<std::uint64_t>> hashes;
  for (int threads : {1, 2}) {
    PluginRegistry reg = registry();
    auto sim = load(reg, swarm_xml(threads));
    ASSERT_TRUE(sim);
    ASSERT_EQ(sim->threads(), threads);
    std::vector<std::uint64_t> h;
    sim->start();
    while (!sim->done()) {
      sim->step();
      h.push_back(sim->state().hash());
    }
    sim->finish();
    hashes.push_back(h);
  }
  ASSERT_EQ(hashes[0].size(), 100u);
  EXPECT_EQ(hashes[0], hashes[1]);
  // The swarm did something: the state changed every tick.
  for (std::size_t t = 1; t < hashes[0].size(); ++t) EXPECT_NE(hashes[0][t], hashes[0][t - 1]);
}

}  // namespace
}  // namespace fleetsim
