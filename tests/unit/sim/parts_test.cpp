// Robots made of parts: kinds composed in the experiment file, parts from the registry
// (built-in and a test plug-in), their columns in the state and its hash, and the errors a
// user gets at load.
#include <gtest/gtest.h>

#include <cstring>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

/// A test plug-in sensor that counts its robot's ticks in a column of its own.
class TickCounter final : public Sensor {
 public:
  void setup(PartSetup& setup) override {
    column_ = setup.column({"test_count", ColumnType::kU32, 2, true, true, "ticks seen", ""});
  }
  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    auto* c = ctx.world->column<std::uint32_t>(column_) + 2 * std::size_t{robot.row};
    c[0] += 1;
    c[1] = robot.id;
    out.scalar = static_cast<float>(c[0]);
  }

 private:
  ColumnHandle column_ = kNoColumn;
};

/// The same counter, called by batch (its views point into its column), under another name.
class BatchedTickCounter final : public BatchedSensor<BatchedTickCounter> {
 public:
  void setup(PartSetup& setup) override {
    column_ = setup.column({"test_count_b", ColumnType::kU32, 1, true, false, "ticks seen", ""});
  }
  void sense(const PartContext& ctx, RobotRef robot, SensorView& out) override {
    std::uint32_t* c = ctx.world->column<std::uint32_t>(column_) + robot.row;
    *c += 1;
    out.scalar = static_cast<float>(*c);
    out.values = {};
  }

 private:
  ColumnHandle column_ = kNoColumn;
};

/// A controller that needs the counter and drives straight.
class NeedsCounter final : public Controller {
 public:
  void init(const Params&, const ControllerSetup& setup) override {
    counter_ = setup.sensor("counter");
    wheels_ = setup.actuator("differential_drive");
  }
  void step(RobotIO& io) override {
    if (io.sensor(counter_).scalar != static_cast<float>(io.tick + 1))
      throw std::runtime_error("counter out of step");
    if (io.sensor(counter_).name != "counter" || io.actuator(wheels_).values.size() != 2 ||
        (io.kind->name == "batch" && io.sensors.size() != 2) ||
        (io.kind->name == "single" && io.sensors.size() != 1))
      throw std::runtime_error("views of another robot or kind");
    io.actuator(wheels_).values[0] = io.actuator(wheels_).values[1] = 0.05;
  }

 private:
  std::size_t counter_ = 0, wheels_ = 0;
};

struct Loaded {
  PluginRegistry reg;
  Diagnostics diags;
  std::optional<Experiment> ex;
};

std::unique_ptr<Loaded> load(const std::string& xml, int threads = 1) {
  auto l = std::make_unique<Loaded>();
  register_builtins(l->reg);
  l->reg.add_sensor({PluginKind::kSensor, "tick_counter", "test", {}},
                    [] { return std::make_unique<TickCounter>(); });
  l->reg.add_sensor({PluginKind::kSensor, "batched_tick_counter", "test", {}},
                    [] { return std::make_unique<BatchedTickCounter>(); });
  l->reg.add_controller({PluginKind::kController, "needs_counter", "test", {}},
                        [] { return std::make_unique<NeedsCounter>(); });
  ExperimentOverrides ov;
  ov.threads = threads;
  l->ex = parse_experiment(xml, "exp.xml", l->reg, ov, l->diags);
  return l;
}

std::string experiment(const std::string& kinds, const std::string& controller,
                       const std::string& kind = "counted") {
  return "<fleetsim>\n"
         "  <framework ticks_per_second=\"10\" length=\"3\" seed=\"9\"/>\n"
         "  <kinds>\n" + kinds + "  </kinds>\n"
         "  <controllers><controller id=\"c\" type=\"" + controller + "\"/></controllers>\n"
         "  <arena size=\"4,4\">\n"
         "    <distribute count=\"30\" kind=\"" + kind + "\" controller=\"c\"/>\n"
         "  </arena>\n"
         "</fleetsim>\n";
}

const std::string kCounted =
    "    <kind name=\"counted\">\n"
    "      <sensor type=\"tick_counter\" name=\"counter\"/>\n"
    "      <actuator type=\"differential_drive\"/>\n"
    "    </kind>\n";

std::uint64_t run(std::unique_ptr<Loaded> l) {
  Simulation sim(std::move(*l->ex), l->reg);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
  return sim.state().hash();
}

TEST(Parts, APlugInColumnIsStoredHashedAndReadByItsController) {
  auto l = load(experiment(kCounted, "needs_counter"));
  ASSERT_TRUE(l->ex) << l->diags.str();
  const ColumnStore& cols = l->ex->state.robots;
  ColumnHandle h = cols.find("test_count");
  ASSERT_NE(h, kNoColumn);
  EXPECT_EQ(cols.desc(h).width, 2u);
  EXPECT_TRUE(cols.desc(h).logged);
  EXPECT_EQ(cols.desc(h).owner, "tick_counter");
  // The kind lists no proximity sensor: its column does not exist.
  EXPECT_EQ(cols.find("proximity"), kNoColumn);

  Simulation sim(std::move(*l->ex), l->reg);
  sim.start();
  while (!sim.done()) sim.step();  // the controller throws if the counter is not its own
  const WorldState& st = sim.state();
  auto counts = st.robots.span<std::uint32_t>(st.robots.find("test_count"));
  for (std::size_t r = 0; r < st.robot_count(); ++r) {
    EXPECT_EQ(counts[2 * r], 30u);  // 3 s at 10 ticks/s
    EXPECT_EQ(counts[2 * r + 1], st.robot_id()[r]);
  }
  // The column enters the state hash: change one value, the hash changes.
  WorldState copy = st;
  const std::uint64_t before = copy.hash();
  copy.robots.span<std::uint32_t>(copy.robots.find("test_count"))[5] += 1;
  EXPECT_NE(copy.hash(), before);
}

TEST(Parts, MixedKindsGetTheirOwnViewsWhetherPartsRunByBatchOrOneByOne) {
  // Two kinds scattered together (so slot order interleaves them): one whose counter runs
  // robot by robot, one whose counter and proximity run by batch. Each robot's controller
  // checks that its views are its own kind's and its counter its own robot's.
  const std::string xml =
      "<fleetsim>\n"
      "  <framework ticks_per_second=\"10\" length=\"3\" seed=\"2\"/>\n"
      "  <kinds>\n"
      "    <kind name=\"single\"><sensor type=\"tick_counter\" name=\"counter\"/>\n"
      "      <actuator type=\"differential_drive\"/></kind>\n"
      "    <kind name=\"batch\"><sensor type=\"proximity\"/>\n"
      "      <sensor type=\"batched_tick_counter\" name=\"counter\"/>\n"
      "      <actuator type=\"leds\"/><actuator type=\"differential_drive\"/></kind>\n"
      "  </kinds>\n"
      "  <controllers><controller id=\"c\" type=\"needs_counter\"/></controllers>\n"
      "  <arena size=\"6,6\">\n"
      "    <distribute count=\"300\" kind=\"single\" controller=\"c\"/>\n"
      "    <distribute count=\"300\" kind=\"batch\" controller=\"c\"/>\n"
      "  </arena>\n"
      "</fleetsim>\n";
  auto one = load(xml, 1);
  auto two = load(xml, 2);
  ASSERT_TRUE(one->ex && two->ex) << one->diags.str();
  const std::uint64_t h1 = run(std::move(one)), h2 = run(std::move(two));
  EXPECT_EQ(h1, h2);
}

TEST(Parts, UnknownPartTypeIsFileLineWithDidYouMean) {
  auto l = load(experiment("    <kind name=\"counted\">\n"
                           "      <sensor type=\"proximty\"/>\n"
                           "      <actuator type=\"diferential_drive\"/>\n"
                           "    </kind>\n",
                           "idle"));
  EXPECT_FALSE(l->ex);
  const std::string text = l->diags.str();
  EXPECT_NE(text.find("exp.xml:5: error: unknown sensor type 'proximty' in kind 'counted'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("did you mean 'proximity'?"), std::string::npos) << text;
  EXPECT_NE(text.find("exp.xml:6: error: unknown actuator type 'diferential_drive'"),
            std::string::npos)
      << text;
}

TEST(Parts, BadPartParametersNameTheKindThePartAndTheParameter) {
  auto l = load(experiment("    <kind name=\"counted\">\n"
                           "      <sensor type=\"proximity\" rays=\"0\"/>\n"
                           "      <sensor type=\"proximity_noisy\" name=\"p2\" range=\"far\"/>\n"
                           "      <actuator type=\"differential_drive\"/>\n"
                           "    </kind>\n",
                           "idle"));
  EXPECT_FALSE(l->ex);
  const std::string text = l->diags.str();
  EXPECT_NE(text.find("exp.xml:5: error: kind 'counted': sensor 'proximity': rays=0 is out of "
                      "range"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("exp.xml:6: error: attribute 'range' of <sensor>"), std::string::npos)
      << text;
}

TEST(Parts, AControllerAskingForAMissingPartIsAnErrorAtLoad) {
  // diffusion needs a proximity sensor; this kind has none.
  auto l = load(experiment("    <kind name=\"blind\">\n"
                           "      <actuator type=\"differential_drive\"/>\n"
                           "    </kind>\n",
                           "diffusion", "blind"));
  EXPECT_FALSE(l->ex);
  const std::string text = l->diags.str();
  EXPECT_NE(text.find("exp.xml:10: error: controller 'c' (type 'diffusion'): robot kind 'blind' "
                      "has no sensor 'proximity'"),
            std::string::npos)
      << text;
}

TEST(Parts, NoisyProximityRepeatsOnOneAndTwoThreadsAndDiffersFromExact) {
  const std::string noisy =
      "    <kind name=\"n\">\n"
      "      <sensor type=\"proximity_noisy\" noise=\"0.2\"/>\n"
      "      <actuator type=\"differential_drive\"/>\n"
      "    </kind>\n";
  const std::string exact =
      "    <kind name=\"n\">\n"
      "      <sensor type=\"proximity\"/>\n"
      "      <actuator type=\"differential_drive\"/>\n"
      "    </kind>\n";
  auto a = load(experiment(noisy, "diffusion", "n"), 1);
  auto b = load(experiment(noisy, "diffusion", "n"), 2);
  auto c = load(experiment(exact, "diffusion", "n"), 1);
  ASSERT_TRUE(a->ex && b->ex && c->ex) << a->diags.str();
  const std::uint64_t ha = run(std::move(a)), hb = run(std::move(b)), hc = run(std::move(c));
  EXPECT_EQ(ha, hb);
  EXPECT_NE(ha, hc);
}

TEST(Parts, LegacyKindShorthandsStillSetTheParts) {
  auto l = load(experiment("    <kind name=\"fast\" max_wheel_speed=\"0.3\" wheel_distance=\"0.1\" "
                           "proximity_range=\"0.2\"/>\n",
                           "idle", "fast"));
  ASSERT_TRUE(l->ex) << l->diags.str();
  const RobotKind* fast = nullptr;
  for (const auto& k : l->ex->model->kinds)
    if (k.name == "fast") fast = &k;
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->actuators[0].params.real("max_wheel_speed", 0), 0.3);
  EXPECT_EQ(fast->actuators[0].params.real("axle_length", 0), 0.1);
  EXPECT_EQ(fast->sensors[0].params.real("range", 0), 0.2);
}

}  // namespace
}  // namespace fleetsim
