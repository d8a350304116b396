#include "time/flow_node.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "transport/inproc_transport.hpp"

namespace fleetsim::time {
namespace {

using transport::FederationLayout;
using transport::InprocNetwork;
using transport::NodeLayout;

// x has inputs from a (flow 5) and b (flow 2), both starting at 0, and one output to a
// (flow 1) starting at 0.
FederationLayout fan_in(SimTime until = 100) {
  FederationLayout l;
  l.until = until;
  l.nodes = {
      {"a", "", {{1, "x_out", "x", 4, 0}}, {{5, "a_out", {"x"}, 0}}},
      {"b", "", {}, {{2, "b_out", {"x"}, 0}}},
      {"x", "", {{5, "a_out", "a", 4, 0}, {2, "b_out", "b", 4, 0}}, {{1, "x_out", {"a"}, 0}}},
  };
  return l;
}

Message msg(FlowId flow, SimTime t, SimTime period) {
  Message m;
  m.flow = flow;
  m.timestamp = t;
  m.period = period;
  return m;
}

TEST(FlowNode, TieOrderIsOutputsFirstThenInputsByFlowId) {
  auto layout = fan_in();
  InprocNetwork net(layout);
  auto a = net.port("a", {});
  auto b = net.port("b", {});
  auto xp = net.port("x", {});
  a->send(0, msg(5, 0, 10));
  b->send(0, msg(2, 0, 10));
  FlowNode x(layout.nodes[2], *xp, {.until = 100});

  // Output and inputs all at 0: the output emits first (consuming 0 would forbid emitting 0).
  auto s = x.next();
  ASSERT_EQ(s.kind, FlowNode::Step::Kind::kEmit);
  x.emit(0, {0, 10, {}});
  // Then the inputs at 0, flow 2 before flow 5 whatever the arrival order.
  s = x.next();
  ASSERT_EQ(s.kind, FlowNode::Step::Kind::kConsume);
  EXPECT_EQ(x.consume().flow, 2u);
  EXPECT_EQ(x.consume().flow, 5u);
  // Now every input is at 10 and the output too: the output again.
  EXPECT_EQ(x.next().kind, FlowNode::Step::Kind::kEmit);
  EXPECT_EQ(x.next().timestamp, 10);
}

TEST(FlowNode, EmittingAnotherTimestampThanAnnouncedNamesEverything) {
  auto layout = fan_in();
  InprocNetwork net(layout);
  auto xp = net.port("x", {});
  FlowNode x(layout.nodes[2], *xp, {.until = 100});
  try {
    x.emit(0, {3, 10, {}});
    FAIL() << "expected a contract violation";
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.node(), "x");
    EXPECT_EQ(e.flow(), "x_out");
    EXPECT_EQ(e.expected(), 0);
    EXPECT_EQ(e.offending(), 3);
    EXPECT_STREQ(e.what(),
                 "node 'x', flow 'x_out': emitted timestamp 3 ns, expected 0 ns (announced by "
                 "the previous message's period)");
  }
}

TEST(FlowNode, RefusesNonPositivePeriodsAndEmissionsThatBreakRule2) {
  auto layout = fan_in();
  InprocNetwork net(layout);
  auto a = net.port("a", {});
  auto b = net.port("b", {});
  auto xp = net.port("x", {});
  FlowNode x(layout.nodes[2], *xp, {.until = 100});
  EXPECT_THROW(x.emit(0, {0, 0, {}}), ContractViolation);
  x.emit(0, {0, 30, {}});
  // Inputs at 0 must be consumed before the output's 30: emitting now breaks rule 2.
  try {
    x.emit(0, {30, 10, {}});
    FAIL();
  } catch (const ContractViolation& e) {
    EXPECT_NE(std::string(e.what()).find("rule 2"), std::string::npos) << e.what();
  }
}

TEST(FlowNode, APeerBreakingItsPeriodContractIsNamed) {
  auto layout = fan_in();
  InprocNetwork net(layout);
  auto b = net.port("b", {});
  auto xp = net.port("x", {});
  FlowNode x(layout.nodes[2], *xp, {.until = 100});
  x.emit(0, {0, 50, {}});
  b->send(0, msg(2, 7, 10));  // announced 0
  try {
    x.consume();
    FAIL();
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.flow(), "b_out");
    EXPECT_EQ(e.expected(), 0);
    EXPECT_EQ(e.offending(), 7);
    EXPECT_NE(std::string(e.what()).find("from node 'b'"), std::string::npos);
  }
}

TEST(FlowNode, DescribesWhomItWaitsFor) {
  auto layout = fan_in();
  InprocNetwork net(layout);
  std::vector<std::string> lines;
  FlowNode* node = nullptr;
  transport::PortOptions o;
  o.wait_report_after = std::chrono::milliseconds(5);
  o.on_wait = [&](const transport::WaitReport& r) {
    lines.push_back(node->describe_wait(r));
    net.stop("test over");
  };
  auto xp = net.port("x", o);
  FlowNode x(layout.nodes[2], *xp, {.until = 100});
  node = &x;
  x.emit(0, {0, 50, {}});
  EXPECT_THROW(x.consume(), transport::FederationStopped);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("node 'x' has waited"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("for flow 'b_out' at 0 ns from node 'b'"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("last timestamp received from 'b': none yet"), std::string::npos);
}

// A producer and a slow consumer in a cycle, buffers of one message: the producer is held
// back, and every message still arrives, in order.
TEST(FlowNode, NoLossUnderBackPressureWithBuffersOfOne) {
  FederationLayout l;
  l.until = 2000;
  l.nodes = {{"fast", "", {{1, "ack", "slow", 1, 0}}, {{0, "data", {"slow"}, 0}}},
             {"slow", "", {{0, "data", "fast", 1, 0}}, {{1, "ack", {"fast"}, 0}}}};
  InprocNetwork net(l);

  struct Counter : NodeBehaviour {
    explicit Counter(SimTime period, bool slow) : period_(period), slow_(slow) {}
    void consume(std::size_t, const Message& m) override {
      if (slow_ && received.size() % 16 == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      received.push_back(m.timestamp);
    }
    Emission emit(std::size_t, SimTime t) override {
      return {t, period_, {static_cast<std::uint8_t>(t)}};
    }
    SimTime period_;
    bool slow_;
    std::vector<SimTime> received;
  };
  // The producer emits every 1 ns, the consumer acknowledges every 100 ns: the producer could
  // run 100 messages ahead but its buffer of one holds it back.
  Counter fast(1, false), slow(100, true);
  std::thread t1([&] {
    auto p = net.port("fast", {});
    FlowNode n(l.nodes[0], *p, {.until = l.until});
    n.run(fast);
  });
  auto p = net.port("slow", {});
  FlowNode n(l.nodes[1], *p, {.until = l.until});
  n.run(slow);
  t1.join();
  ASSERT_EQ(slow.received.size(), 2000u);
  for (SimTime i = 0; i < 2000; ++i) ASSERT_EQ(slow.received[static_cast<std::size_t>(i)], i);
  ASSERT_EQ(fast.received.size(), 20u);
}

}  // namespace
}  // namespace fleetsim::time
