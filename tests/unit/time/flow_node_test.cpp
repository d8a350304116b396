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

// y has one periodic input from a (flow 3) and three outputs to a, all first at 0: flow 0 an
// event flow with lookahead 0, flow 1 an event flow with lookahead 2 ns, flow 4 periodic.
FederationLayout reactor() {
  using transport::FlowKind;
  FederationLayout l;
  l.until = 100;
  l.nodes = {
      {"a",
       "",
       {{0, "zero", "y", 4, 0, FlowKind::kEvent, 0},
        {1, "two", "y", 4, 0, FlowKind::kEvent, 2},
        {4, "tick", "y", 4, 0}},
       {{3, "a_out", {"y"}, 0}}},
      {"y",
       "",
       {{3, "a_out", "a", 4, 0}},
       {{0, "zero", {"a"}, 0, FlowKind::kEvent, 0},
        {1, "two", {"a"}, 0, FlowKind::kEvent, 2},
        {4, "tick", {"a"}, 0}}},
  };
  return l;
}

// The tie order with zero lookahead: at equal timestamps, outputs with a lookahead emit, then
// the inputs are consumed, then the zero-lookahead output emits (it may react to them).
TEST(FlowNode, AZeroLookaheadOutputEmitsAfterTheInputsOfItsTimestamp) {
  auto layout = reactor();
  InprocNetwork net(layout);
  auto a = net.port("a", {});
  auto yp = net.port("y", {});
  a->send(0, msg(3, 0, 10));
  FlowNode y(layout.nodes[1], *yp, {.until = 100});
  // Flow 0 has the smallest id but waits: first flow 1 and flow 4 (lookahead > 0) at 0.
  auto s = y.next();
  ASSERT_EQ(s.kind, FlowNode::Step::Kind::kEmit);
  EXPECT_EQ(s.index, 1u);
  y.emit(1, {0, 5, {}, true});  // a null message: nothing to say before 5
  EXPECT_EQ(y.next().index, 2u);
  y.emit(2, {0, 10, {1}});
  // Then the input at 0, then the reaction at 0 on flow 0.
  ASSERT_EQ(y.next().kind, FlowNode::Step::Kind::kConsume);
  EXPECT_EQ(y.consume().timestamp, 0);
  s = y.next();
  ASSERT_EQ(s.kind, FlowNode::Step::Kind::kEmit);
  EXPECT_EQ(s.index, 0u);
  EXPECT_EQ(s.timestamp, 0);
  y.emit(0, {0, 10, {7}});
  // Flow 1 next at 5, before the input at 10.
  EXPECT_EQ(y.next().timestamp, 5);
  EXPECT_EQ(y.next().index, 1u);
}

// An event output refuses a next timestamp within its lookahead, and a null message with a
// payload; a periodic output refuses null messages.
TEST(FlowNode, EventOutputsKeepTheirLookaheadAndNullsTheirPlace) {
  auto layout = reactor();
  InprocNetwork net(layout);
  auto yp = net.port("y", {});
  FlowNode y(layout.nodes[1], *yp, {.until = 100});
  try {
    y.emit(1, {0, 1, {}, true});
    FAIL() << "expected a contract violation";
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.flow(), "two");
    EXPECT_STREQ(e.what(),
                 "node 'y', flow 'two': emitted timestamp 0 ns announcing the next at 1 ns, "
                 "below its lookahead bound 2 ns (timestamp + lookahead 2 ns)");
  }
  EXPECT_THROW(y.emit(1, {0, 2, {1}, true}), ContractViolation);
  y.emit(1, {0, 2, {}, true});
  try {
    y.emit(2, {0, 10, {}, true});
    FAIL() << "expected a contract violation";
  } catch (const ContractViolation& e) {
    EXPECT_EQ(e.flow(), "tick");
    EXPECT_NE(std::string(e.what()).find("null message"), std::string::npos) << e.what();
  }
}

// An observation input: the latest message stamped <= the time asked, whatever arrived
// after; the older ones are gone; time never goes back.
TEST(FlowNode, ObservationReadsTheLatestValueAtOrBeforeItsTime) {
  using transport::FlowKind;
  FederationLayout l;
  l.until = 100;
  l.nodes = {{"s", "", {}, {{0, "level", {"r"}, 0}}},
             {"r", "", {{0, "level", "s", 64, 0, FlowKind::kObservation, 0}}, {}}};
  InprocNetwork net(l);
  auto sp = net.port("s", {});
  auto rp = net.port("r", {});
  // The source runs ahead: nothing of the sink holds it back (its buffer is large).
  for (SimTime t = 0; t < 100; t += 10) sp->send(0, msg(0, t, 10));
  FlowNode r(l.nodes[1], *rp, {.until = 100});
  EXPECT_EQ(r.next().kind, FlowNode::Step::Kind::kDone);  // not an input to consume in order
  EXPECT_EQ(r.observe(0, 15)->timestamp, 10);
  EXPECT_EQ(r.observe(0, 15)->timestamp, 10);
  EXPECT_EQ(r.observe(0, 30)->timestamp, 30);
  EXPECT_EQ(r.observe(0, 39)->timestamp, 30);
  EXPECT_THROW(r.observe(0, 20), std::logic_error);
  r.finish();
  EXPECT_EQ(r.input_next()[0], 100);
  EXPECT_EQ(r.consumed(), 10u);
}

}  // namespace
}  // namespace fleetsim::time
