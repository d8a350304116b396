// Receive-order channels through the federate API (docs/federate-api.md): two federates linked
// by time-managed flows chat on a receive-order flow besides. The chat never holds anyone's
// time back, every message arrives once and in the order sent, the time-managed traces repeat
// byte for byte and hold no chat, and misuse is refused naming the node and the flow.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "federate_run.hpp"
#include "fleetsim/federate.hpp"
#include "support/test_files.hpp"
#include "time/trace.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using fleetsim::testing::slurp;

// 'talker' and 'listener' are federates; 'echo' is a built-in mixer. 'chat' is out of time.
const char* const kFederation = R"(<federation until="300ms" seed="3" buffer="2">
  <class name="Note"><attribute name="n" type="u32"/><attribute name="x" type="f64"/></class>
  <node name="talker" program="talker">
    <input name="back"/><output name="state"/><output name="chat" class="Note"/>
  </node>
  <node name="listener" program="listener">
    <input name="state"/><input name="chat" class="Note"/><output name="out"/>
  </node>
  <node name="echo" kind="mixer"><input name="in"/><output name="back"/></node>
  <flow name="state" from="talker.state" to="listener.state" period="10ms"/>
  <flow name="out" from="listener.out" to="echo.in" period="7ms"/>
  <flow name="back" from="echo.back" to="talker.back" period="5ms" initial="1ms"/>
  <flow name="chat" from="talker.chat" to="listener.chat" kind="receive-order"/>
</federation>
)";

constexpr SimTime kMs = 1'000'000;

using fleetsim::testing::word;

class ReceiveOrder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fleetsim::testing::fresh_test_dir("receive-order");
    file_ = (dir_ / "chat.xml").string();
    std::ofstream(file_) << kFederation;
  }

  /// The talker steps by 1 ms; at each step it sends `per_step` notes, numbered, unless
  /// `at_the_end`: then it sends all of them after its last grant, just before it resigns.
  /// The listener steps by 3 ms and asks what arrived at every grant, which never waits.
  void run(const fs::path& traces, const std::string& transport, int per_step, bool at_the_end) {
    sent_ = 0;
    got_.clear();
    auto talker = [&](Federate& fed) {
      fed.update("state", word(1));
      std::uint32_t n = 0;
      auto note = [&](SimTime t) {
        fed.send_receive_order(
            "chat", fed.attributes("chat").set("n", n++).set("x", static_cast<double>(t)));
      };
      for (SimTime t = 0; !fed.time_advance_request(t).done; t += kMs) {
        fed.update("state", word(static_cast<std::uint64_t>(t)));
        if (!at_the_end)
          for (int k = 0; k < per_step; ++k) note(t);
      }
      if (at_the_end)
        for (int k = 0; k < 300 * per_step; ++k) note(fed.granted());
      sent_ = n;
    };
    auto listener = [&](Federate& fed) {
      fed.update("out", word(2));
      auto take = [&](const std::vector<Delivered>& notes) {
        for (const auto& d : notes) {
          const auto v = fed.decode(d);
          got_.push_back(static_cast<std::uint32_t>(v.get_unsigned("n")));
          // The sender's time at the call.
          EXPECT_EQ(d.timestamp, static_cast<SimTime>(v.get("x")));
          EXPECT_EQ(d.flow, "chat");
        }
      };
      for (SimTime t = 0; !fed.time_advance_request(t).done; t += 3 * kMs)
        take(fed.arrived("chat"));
      fed.resign();
      take(fed.arrived("chat"));  // what came while it resigned
    };
    auto fed = fleetsim::testing::run_federates(
        file_, {"echo"}, {{"listener", listener}, {"talker", talker}}, traces, 50, transport);
    ASSERT_TRUE(fed);
    fleetsim::testing::expect_conformant_traces(*fed, traces, {"talker", "listener", "echo"});
  }

  /// Every note arrived once, in the order sent.
  void expect_all_in_order() const {
    ASSERT_EQ(got_.size(), sent_);
    for (std::uint32_t k = 0; k < got_.size(); ++k) ASSERT_EQ(got_[k], k);
  }

  fs::path dir_;
  std::string file_;
  std::uint32_t sent_ = 0;
  std::vector<std::uint32_t> got_;
};

TEST_F(ReceiveOrder, NotesArriveOnceInOrderAndTheTimeManagedTracesRepeat) {
  run(dir_ / "shm", "shm", 3, false);
  EXPECT_GE(sent_, 800u);  // 3 at each grant before the end
  expect_all_in_order();
  run(dir_ / "zmq", "zmq", 3, false);
  expect_all_in_order();
  // The chat is not in the traces (it does not repeat), and the rest is byte for byte equal.
  for (const char* n : {"talker.trace", "listener.trace", "echo.trace"}) {
    const std::string shm = slurp(dir_ / "shm" / n);
    EXPECT_FALSE(shm.empty());
    EXPECT_EQ(shm, slurp(dir_ / "zmq" / n)) << n;
    EXPECT_EQ(shm.find("chat"), std::string::npos) << n;
  }
}

// The listener asks for its notes at every grant while the talker sends none until it has
// finished its own time requests, which wait for the listener: were the chat time-managed,
// or did arrived() wait, neither would finish. And 1,200 notes in a row, beyond any buffer of
// the file (2), do not hold the talker back.
TEST_F(ReceiveOrder, TheChatNeverHoldsTimeBack) {
  run(dir_ / "end", "shm", 4, true);
  EXPECT_EQ(sent_, 1200u);
  expect_all_in_order();
}

TEST_F(ReceiveOrder, MisuseIsRefusedNamingTheNodeAndTheFlow) {
  const auto refused = fleetsim::testing::expect_refused;
  auto talker = [&](Federate& fed) {
    refused([&] { fed.update("chat", word(1)); },
            "node 'talker': update(\"chat\"): flow 'chat' is a receive-order flow (send its "
            "messages with send_receive_order)");
    refused([&] { fed.send_receive_order("state", word(1)); },
            "node 'talker': send_receive_order(\"state\"): flow 'state' is not a receive-order "
            "flow");
    refused([&] { fed.send_receive_order("chat", word(1)); },
            "node 'talker', flow 'chat' at 0 ns: a payload of 8 bytes is not a value of class "
            "'Note'");
    refused([&] { fed.send_event("chat", 0, word(1)); }, "flow 'chat' is not an event flow");
    EXPECT_EQ(fed.next_emission("chat"), fed.until());  // no schedule
    fed.update("state", word(1));
    fed.run([](const Delivered&) {});
  };
  auto listener = [&](Federate& fed) {
    refused([&] { fed.arrived("state"); },
            "node 'listener': arrived(\"state\"): flow 'state' is not a receive-order flow");
    refused([&] { fed.observe("chat"); },
            "node 'listener': observe(\"chat\"): flow 'chat' is not an observation flow");
    fed.update("out", word(2));
    fed.run([](const Delivered&) {});
  };
  ASSERT_TRUE(fleetsim::testing::run_federates(
      file_, {"echo"}, {{"listener", listener}, {"talker", talker}}, dir_ / "t", 0, "shm"));
}

// `fleetsim check` reports every misuse of a receive-order flow at its line, status 2.
TEST_F(ReceiveOrder, CheckRefusesMisusedReceiveOrderFlowsWithStatus2) {
  std::string bad = kFederation;
  bad.replace(bad.find(R"(kind="receive-order"/>)"), 22,
              R"(kind="receive-order" period="1ms"><noise attribute="x" sigma="1"/></flow>)");
  bad.replace(bad.find(R"(to="echo.in" period="7ms")"), 25, R"(to="echo.in" kind="receive-order")");
  const fs::path file = dir_ / "bad.xml";
  std::ofstream(file) << bad;
  const auto [status, text] = fleetsim::testing::check_federation(file, dir_ / "err.txt");
  EXPECT_EQ(status, 2);
  for (const char* expected :
       {"bad.xml:13: error: attribute 'period' of receive-order flow 'chat' means nothing",
        "bad.xml:13: error: <noise> on receive-order flow 'chat'",
        "bad.xml:11: error: receive-order flow 'out' links node 'echo', which is not a program"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

}  // namespace
}  // namespace fleetsim
