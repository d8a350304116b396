#include "federation/federation_file.hpp"

#include <gtest/gtest.h>

namespace fleetsim::federation {
namespace {

// A well-formed ring of three nodes; tests replace pieces of it.
const char* kRing = R"(<federation until="1s" buffer="3">
  <node name="a"><input name="in"/><output name="out"/></node>
  <node name="b"><input name="in"/><output name="out"/></node>
  <node name="c" kind="camera"><input name="in" buffer="1"/><output name="out"/></node>
  <flow name="ab" from="a.out" to="b.in" period="10ms"/>
  <flow name="bc" from="b.out" to="c.in" period="1ms 2ms" initial="500us"/>
  <flow name="ca" from="c.out" to="a.in" period="33ms"/>
</federation>
)";

std::string errors_of(const std::string& text) {
  Diagnostics d;
  auto fed = parse_federation(text, "fed.xml", d);
  EXPECT_FALSE(fed.has_value()) << "expected errors in:\n" << text;
  return d.str();
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(FederationFile, ReadsAWellFormedFile) {
  Diagnostics d;
  auto fed = parse_federation(kRing, "fed.xml", d);
  ASSERT_TRUE(fed) << d.str();
  EXPECT_EQ(d.str(), "");
  EXPECT_EQ(fed->until, kNanosPerSecond);
  ASSERT_EQ(fed->flows.size(), 3u);
  EXPECT_EQ(fed->flows[1].periods, (std::vector<SimTime>{1'000'000, 2'000'000}));
  EXPECT_EQ(fed->flows[1].initial, 500'000);
  EXPECT_EQ(fed->nodes[2].kind, NodeKind::kCamera);
  auto layout = fed->layout();
  ASSERT_EQ(layout.nodes.size(), 3u);
  EXPECT_EQ(layout.nodes[1].inputs[0].flow_name, "ab");
  EXPECT_EQ(layout.nodes[1].inputs[0].source, "a");
  EXPECT_EQ(layout.nodes[1].inputs[0].capacity, 3u);
  EXPECT_EQ(layout.nodes[2].inputs[0].capacity, 1u);
  EXPECT_EQ(layout.nodes[2].inputs[0].initial, 500'000);
  EXPECT_EQ(layout.nodes[0].outputs[0].sinks, (std::vector<std::string>{"b"}));
}

TEST(FederationFile, InputFedTwiceOrNotAtAll) {
  auto twice = replace(kRing, R"(to="c.in")", R"(to="c.in a.in")");
  EXPECT_NE(errors_of(twice).find("fed.xml:7: error: input 'a.in' is already fed by flow 'bc'"),
            std::string::npos)
      << errors_of(twice);
  auto unfed = replace(kRing, R"(<flow name="ab" from="a.out" to="b.in" period="10ms"/>)",
                       R"(<flow name="ab" from="a.out" to="c.in" period="10ms"/>)");
  auto e = errors_of(unfed);
  EXPECT_NE(e.find("fed.xml:3: error: input 'b.in' is fed by no flow"), std::string::npos) << e;
}

TEST(FederationFile, NodeFeedingItself) {
  auto e = errors_of(replace(kRing, R"(to="b.in")", R"(to="a.in")"));
  EXPECT_NE(e.find("fed.xml:5: error: node 'a' feeds itself through flow 'ab'"), std::string::npos)
      << e;
}

// Found by the federation fuzzer (tests/fuzz/regressions/federation/flows-without-nodes.xml):
// the checks over the flow graph (optional nodes, zero-lookahead circuits) read the source
// node of flows whose source names no node, and with no node at all that was a crash.
TEST(FederationFile, FlowsWhoseSourceNamesNoNodeAreReportedNotFollowed) {
  const std::string e = errors_of(R"(<federation until="1s">
  <flow name="chat" from="radar.chat" to="north.chat" kind="receive-order"/>
  <flow name="ev" from="a.out" to="b.in" kind="event" lookahead="0"/>
</federation>
)");
  EXPECT_NE(e.find("fed.xml:2: error:"), std::string::npos) << e;
  EXPECT_NE(e.find("fed.xml:3: error:"), std::string::npos) << e;
  EXPECT_NE(e.find("the federation has no <node>"), std::string::npos) << e;
  // With nodes, an unresolved source is not taken for the first node (an optional one here).
  const std::string f = errors_of(R"(<federation until="1s">
  <node name="viewer" program="v" optional="true"><input name="in"/></node>
  <node name="a" kind="mixer"><input name="in"/><output name="out"/></node>
  <flow name="x" from="nowhere.out" to="a.in" period="1ms"/>
  <flow name="y" from="a.out" to="viewer.in" period="1ms" kind="observation"/>
</federation>
)");
  EXPECT_NE(f.find("fed.xml:4: error:"), std::string::npos) << f;
  EXPECT_EQ(f.find("goes from optional node"), std::string::npos) << f;
}

TEST(FederationFile, UnknownNamesWithSuggestions) {
  auto e = errors_of(replace(kRing, R"(to="b.in")", R"(to="bb.in")"));
  EXPECT_NE(e.find("fed.xml:5: error: unknown node 'bb' in 'bb.in' (did you mean 'b'?)"),
            std::string::npos)
      << e;
  e = errors_of(replace(kRing, R"(from="a.out")", R"(from="a.outt")"));
  EXPECT_NE(e.find("fed.xml:5: error: node 'a' has no output 'outt' (did you mean 'out'?)"),
            std::string::npos)
      << e;
  e = errors_of(replace(kRing, R"(period="33ms")", R"(perod="33ms")"));
  EXPECT_NE(e.find("fed.xml:7: error:"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'period'"), std::string::npos) << e;
  e = errors_of(replace(kRing, R"(kind="camera")", R"(kind="camra")"));
  EXPECT_NE(e.find("fed.xml:4: error:"), std::string::npos) << e;
  EXPECT_NE(e.find("camera"), std::string::npos) << e;
}

// processes="N" spreads a swarm node's experiment over N processes (1..255); on any other node
// it is refused. Every such error at once, at its node's line.
TEST(FederationFile, ProcessesBelongToSwarmNodesAndAreCounted) {
  Diagnostics d;
  auto fed = parse_federation(replace(kRing, R"(<node name="a">)",
                                      R"(<node name="a" experiment="swarm.xml" processes="3">)"),
                              "fed.xml", d);
  ASSERT_TRUE(fed) << d.str();
  EXPECT_EQ(fed->nodes[0].processes, 3);
  EXPECT_EQ(fed->nodes[1].processes, 1);
  std::string text =
      replace(kRing, R"(<node name="a">)", R"(<node name="a" experiment="s.xml" processes="0">)");
  text = replace(text, R"(<node name="b">)", R"(<node name="b" processes="2">)");
  text = replace(text, R"(kind="camera")", R"(kind="camera" processes="256")");
  auto e = errors_of(text);
  EXPECT_NE(e.find("fed.xml:2: error: attribute 'processes' of <node> is 0 (expected an integer "
                   "between 1 and 255)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fed.xml:3: error: attribute 'processes' is for swarm nodes only (expected a "
                   "node with an 'experiment', whose run it spreads over processes; node 'b' is a "
                   "built-in simulator)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fed.xml:4: error: attribute 'processes' of <node> is 256"), std::string::npos)
      << e;
  e = errors_of(replace(kRing, R"(<node name="a">)", R"(<node name="a" processes="two">)"));
  EXPECT_NE(e.find("fed.xml:2: error: attribute 'processes' of <node> is 'two' (expected an "
                   "integer)"),
            std::string::npos)
      << e;
}

TEST(FederationFile, BadNumbers) {
  auto e = errors_of(replace(kRing, R"(period="10ms")", R"(period="10")"));
  EXPECT_NE(e.find("fed.xml:5: error: period '10' of flow 'ab' is not a positive duration"),
            std::string::npos)
      << e;
  e = errors_of(replace(kRing, R"(period="10ms")", R"(period="0ms")"));
  EXPECT_NE(e.find("period '0ms' of flow 'ab' is not a positive duration"), std::string::npos);
  e = errors_of(replace(kRing, R"(period="10ms")", R"(period="-5ms")"));
  EXPECT_NE(e.find("period '-5ms'"), std::string::npos) << e;
  e = errors_of(replace(kRing, R"(initial="500us")", R"(initial="soon")"));
  EXPECT_NE(e.find("fed.xml:6: error: attribute 'initial' of <flow> is 'soon'"), std::string::npos)
      << e;
  e = errors_of(replace(kRing, R"(buffer="1")", R"(buffer="0")"));
  EXPECT_NE(e.find("fed.xml:4: error:"), std::string::npos) << e;
  e = errors_of(replace(kRing, R"(until="1s")", R"(until="1.5")"));
  EXPECT_NE(e.find("fed.xml:1: error: attribute 'until' of <federation> is '1.5'"),
            std::string::npos)
      << e;
  e = errors_of(
      replace(kRing, R"(<node name="a">)", R"(<node name="a" endpoint="tcp://127.0.0.1:99999">)"));
  EXPECT_NE(e.find("fed.xml:2: error: endpoint 'tcp://127.0.0.1:99999' of node 'a'"),
            std::string::npos)
      << e;
}

TEST(FederationFile, DuplicatesAndUnconnectedOutputs) {
  auto e = errors_of(replace(kRing, R"(<node name="b">)", R"(<node name="a">)"));
  EXPECT_NE(e.find("fed.xml:3: error: a node called 'a' already exists"), std::string::npos) << e;
  e = errors_of(replace(kRing, R"(<output name="out"/></node>
  <node name="b">)",
                        R"(<output name="out"/><output name="spare"/></node>
  <node name="b">)"));
  EXPECT_NE(e.find("output 'a.spare' is the source of no flow"), std::string::npos) << e;
}

TEST(FederationFile, WarnsWhenNotStronglyConnected) {
  // c no longer feeds a: a only emits, nothing returns to it.
  std::string text = replace(kRing, R"(<node name="a"><input name="in"/>)", R"(<node name="a">)");
  text = replace(text, R"(<flow name="ca" from="c.out" to="a.in" period="33ms"/>)",
                 R"(<flow name="ca" from="c.out" to="b.in2" period="33ms"/>)");
  text = replace(text, R"(<node name="b"><input name="in"/>)",
                 R"(<node name="b"><input name="in"/><input name="in2"/>)");
  Diagnostics d;
  auto fed = parse_federation(text, "fed.xml", d);
  ASSERT_TRUE(fed) << d.str();
  EXPECT_NE(d.str().find("fed.xml:1: warning: the flow graph is not strongly connected"),
            std::string::npos)
      << d.str();
}

TEST(FederationFile, Durations) {
  EXPECT_EQ(parse_duration("10ms"), 10'000'000);
  EXPECT_EQ(parse_duration("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration("250us"), 250'000);
  EXPECT_EQ(parse_duration("40ns"), 40);
  EXPECT_EQ(parse_duration("0"), 0);
  EXPECT_EQ(parse_duration("33.3333ms"), 33'333'300);
  EXPECT_FALSE(parse_duration("1.5ns"));  // not a whole number of ns
  EXPECT_FALSE(parse_duration("10"));
  EXPECT_FALSE(parse_duration("ms"));
  EXPECT_FALSE(parse_duration("1e3ms"));
  EXPECT_FALSE(parse_duration("99999999999999s"));
}

TEST(FederationFile, MissingAndMalformedFiles) {
  Diagnostics d;
  EXPECT_FALSE(load_federation("/nonexistent/fed.xml", d));
  EXPECT_NE(d.str().find("/nonexistent/fed.xml"), std::string::npos);
  EXPECT_NE(errors_of("<federation until=\"1s\"><node name=\"a\">").find("fed.xml"),
            std::string::npos);
  EXPECT_NE(errors_of("<experiment/>").find("expected <federation>"), std::string::npos);
}

// Event and observation flows (docs/federation-format.md, <flow>): their kind and lookahead
// reach the layout; an observation input gets the large buffer that keeps its source free.
TEST(FederationFile, ReadsEventAndObservationFlows) {
  auto text = replace(kRing, R"(<flow name="ab" from="a.out" to="b.in" period="10ms"/>)",
                      R"(<flow name="ab" from="a.out" to="b.in" kind="event" lookahead="2.5ms"/>)");
  text = replace(text, R"(period="33ms")", R"(period="33ms" kind="observation")");
  Diagnostics d;
  auto fed = parse_federation(text, "fed.xml", d);
  ASSERT_TRUE(fed) << d.str();
  EXPECT_EQ(fed->flows[0].kind, transport::FlowKind::kEvent);
  EXPECT_EQ(fed->flows[0].lookahead, 2'500'000);
  EXPECT_TRUE(fed->flows[0].periods.empty());
  EXPECT_EQ(fed->flows[1].kind, transport::FlowKind::kPeriodic);
  EXPECT_EQ(fed->flows[2].kind, transport::FlowKind::kObservation);
  auto layout = fed->layout();
  EXPECT_EQ(layout.nodes[0].outputs[0].kind, transport::FlowKind::kEvent);
  EXPECT_EQ(layout.nodes[0].outputs[0].lookahead, 2'500'000);
  EXPECT_FALSE(layout.nodes[0].outputs[0].zero_lookahead());
  EXPECT_EQ(layout.nodes[1].inputs[0].lookahead, 2'500'000);
  EXPECT_EQ(layout.nodes[0].inputs[0].kind, transport::FlowKind::kObservation);
  EXPECT_EQ(layout.nodes[0].inputs[0].capacity, kObservationBuffer);
}

// Every mistake in flow kinds and lookaheads at once, each at its line.
TEST(FederationFile, BadFlowKindsAndLookaheadsAreAllReportedAtOnce) {
  auto text = replace(kRing, R"(period="10ms"/>)", R"(kind="evnt" period="10ms"/>)");
  text = replace(text, R"(period="1ms 2ms")", R"(kind="event" lookahead="-5ms")");
  text = replace(text, R"(period="33ms")", R"(period="33ms" lookahead="5ms")");
  auto e = errors_of(text);
  EXPECT_NE(e.find("fed.xml:5: error: attribute 'kind' of <flow> is 'evnt' (expected one of: "
                   "periodic, event, observation, receive-order) (did you mean 'event'?)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fed.xml:6: error: lookahead '-5ms' of flow 'bc' is negative"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fed.xml:7: error: attribute 'lookahead' of flow 'ca' means nothing on a "
                   "periodic flow"),
            std::string::npos)
      << e;
  // An event flow without a lookahead, or with a period.
  e = errors_of(replace(kRing, R"(period="1ms 2ms")", R"(kind="event")"));
  EXPECT_NE(e.find("fed.xml:6: error: event flow 'bc' needs attribute 'lookahead'"),
            std::string::npos)
      << e;
  e = errors_of(
      replace(kRing, R"(period="1ms 2ms")", R"(period="1ms" kind="event" lookahead="0")"));
  EXPECT_NE(e.find("fed.xml:6: error: event flow 'bc' has a 'period'"), std::string::npos) << e;
  e = errors_of(replace(kRing, R"(period="1ms 2ms")", R"(kind="event" lookahead="soon")"));
  EXPECT_NE(e.find("fed.xml:6: error: lookahead 'soon' of flow 'bc' is not a duration"),
            std::string::npos)
      << e;
}

// Zero-lookahead flows round a circuit would deadlock: refused before the start, naming the
// circuit's nodes and flows in order, at the line of its first flow; with another error in
// the file, both are reported. Two separate circuits are two errors.
TEST(FederationFile, ACircuitOfZeroLookaheadFlowsIsRefusedNamingIt) {
  const char* circuit = R"(<federation until="1s">
  <node name="a"><input name="in"/><output name="out"/></node>
  <node name="b"><input name="in"/><output name="out"/></node>
  <node name="c"><input name="in"/><output name="out"/></node>
  <node name="d"><input name="in"/><output name="out"/></node>
  <node name="e"><input name="in"/><output name="out"/><output name="spare"/></node>
  <flow name="ab" from="a.out" to="b.in" kind="event" lookahead="0"/>
  <flow name="bc" from="b.out" to="c.in" kind="event" lookahead="0"/>
  <flow name="ca" from="c.out" to="a.in" kind="event" lookahead="0"/>
  <flow name="de" from="d.out" to="e.in" kind="event" lookahead="0"/>
  <flow name="ed" from="e.out" to="d.in" kind="event" lookahead="0"/>
</federation>
)";
  auto e = errors_of(circuit);
  EXPECT_NE(e.find("fed.xml:7: error: a circuit of zero-lookahead flows would deadlock: node "
                   "'a', flow 'ab', node 'b', flow 'bc', node 'c', flow 'ca', back to node 'a'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fed.xml:10: error: a circuit of zero-lookahead flows would deadlock: node "
                   "'d', flow 'de', node 'e', flow 'ed', back to node 'd'"),
            std::string::npos)
      << e;
  // The other error of the file, reported with them.
  EXPECT_NE(e.find("fed.xml:6: error: output 'e.spare' is the source of no flow"),
            std::string::npos)
      << e;
  // One flow of each circuit with a lookahead: no circuit, no error.
  std::string fixed = replace(circuit, R"(to="a.in" kind="event" lookahead="0")",
                              R"(to="a.in" kind="event" lookahead="1us")");
  fixed = replace(fixed, R"(to="d.in" kind="event" lookahead="0")", R"(to="d.in" period="1ms")");
  fixed = replace(fixed, R"(<output name="spare"/>)", "");
  Diagnostics d;
  EXPECT_TRUE(parse_federation(fixed, "fed.xml", d)) << d.str();
  EXPECT_EQ(d.str().find("error"), std::string::npos) << d.str();
}

// Two federates with a receive-order channel beside a time-managed ring.
const char* const kChat = R"(<federation until="1s">
  <class name="Note"><attribute name="x" type="f64"/></class>
  <node name="a" program="a"><input name="in"/><output name="out"/><output name="chat" class="Note"/></node>
  <node name="b" program="b"><input name="in"/><output name="out"/><input name="chat"/></node>
  <flow name="ab" from="a.out" to="b.in" period="10ms"/>
  <flow name="ba" from="b.out" to="a.in" period="10ms"/>
  <flow name="chat" from="a.chat" to="b.chat" kind="receive-order"/>
</federation>
)";

TEST(FederationFile, ReadsAReceiveOrderFlowOutsideTimeManagement) {
  Diagnostics d;
  auto fed = parse_federation(kChat, "fed.xml", d);
  ASSERT_TRUE(fed) << d.str();
  EXPECT_EQ(d.str(), "");
  EXPECT_EQ(fed->flows[2].kind, transport::FlowKind::kReceiveOrder);
  EXPECT_TRUE(fed->flows[2].periods.empty());
  auto layout = fed->layout();
  EXPECT_EQ(layout.nodes[1].inputs[1].kind, transport::FlowKind::kReceiveOrder);
  // Its source never waits for the sink (unless this far behind), whatever `buffer` says.
  EXPECT_EQ(layout.nodes[1].inputs[1].capacity, kObservationBuffer);
  // A receive-order flow carries no time: it does not make a graph strongly connected.
  auto one_way = replace(kChat, R"(<flow name="ba" from="b.out" to="a.in" period="10ms"/>)",
                         R"(<flow name="ba" from="b.out" to="a.in" kind="receive-order"/>)");
  Diagnostics w;
  ASSERT_TRUE(parse_federation(one_way, "fed.xml", w)) << w.str();
  EXPECT_NE(w.str().find("warning: the flow graph is not strongly connected"), std::string::npos)
      << w.str();
}

TEST(FederationFile, MisusedReceiveOrderFlowsAreAllReportedAtOnce) {
  std::string bad = replace(kChat, R"(kind="receive-order"/>)",
                            R"(kind="receive-order" period="5ms" initial="1ms">
    <noise attribute="x" sigma="1"/><downsample every="2"/>
  </flow>
  <node name="m"><input name="chat"/><output name="out"/></node>
  <flow name="mchat" from="b.out2" to="m.chat" kind="receive-order" lookahead="0"/>)");
  bad = replace(bad, R"(<output name="out"/><input name="chat"/>)",
                R"(<output name="out"/><output name="out2"/><input name="chat"/>)");
  const std::string e = errors_of(bad);
  for (const char* expected :
       {"fed.xml:7: error: attribute 'period' of receive-order flow 'chat' means nothing",
        "fed.xml:7: error: attribute 'initial' of receive-order flow 'chat' means nothing",
        "fed.xml:8: error: <noise> on receive-order flow 'chat' (noise is drawn by the "
        "message's timestamp, and its messages have none",
        "fed.xml:8: error: <downsample> on receive-order flow 'chat'",
        "fed.xml:11: error: attribute 'lookahead' of receive-order flow 'mchat' means nothing",
        "fed.xml:11: error: receive-order flow 'mchat' links node 'm', which is not a program"})
    EXPECT_NE(e.find(expected), std::string::npos) << expected << "\n" << e;
}

}  // namespace
}  // namespace fleetsim::federation
