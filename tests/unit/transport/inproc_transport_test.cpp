#include "transport/inproc_transport.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace fleetsim::transport {
namespace {

FederationLayout pair_layout(std::size_t capacity) {
  FederationLayout l;
  l.until = 1'000'000;
  NodeLayout a{"a", "", {}, {{0, "ab", {"b"}, 0}}};
  NodeLayout b{"b", "", {{0, "ab", "a", capacity, 0}}, {}};
  l.nodes = {a, b};
  return l;
}

TEST(InprocTransport, FullBufferBlocksTheSenderAndLosesNothing) {
  InprocNetwork net(pair_layout(1));
  auto a = net.port("a", {});
  auto b = net.port("b", {});
  std::atomic<int> sent{0};
  std::thread producer([&] {
    for (int i = 0; i < 50; ++i) {
      Message m;
      m.timestamp = i;
      m.period = 1;
      a->send(0, m);
      sent.store(i + 1);
    }
  });
  // With a buffer of one message, the producer cannot be more than 2 messages ahead (one in
  // the buffer, one being pushed).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_LE(sent.load(), 1);
  for (int i = 0; i < 50; ++i) {
    Message m = b->receive(0);
    EXPECT_EQ(m.timestamp, i);
  }
  producer.join();
  EXPECT_EQ(a->stats().messages_sent, 50u);
}

TEST(InprocTransport, StopWakesBlockedNodes) {
  InprocNetwork net(pair_layout(1));
  auto b = net.port("b", {});
  std::string what;
  std::thread waiter([&] {
    try {
      b->receive(0);
    } catch (const FederationStopped& e) {
      what = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  net.stop("node 'a' failed");
  waiter.join();
  EXPECT_EQ(what, "node 'a' failed");
}

TEST(InprocTransport, ReportsWhomItWaitsFor) {
  InprocNetwork net(pair_layout(1));
  std::vector<WaitReport> reports;
  PortOptions o;
  o.wait_report_after = std::chrono::milliseconds(10);
  o.on_wait = [&](const WaitReport& r) {
    reports.push_back(r);
    if (reports.size() == 2) net.stop("enough");
  };
  auto b = net.port("b", o);
  EXPECT_THROW(b->receive(0), FederationStopped);
  ASSERT_GE(reports.size(), 2u);
  EXPECT_FALSE(reports[0].sending);
  EXPECT_EQ(reports[0].peer, "a");
  EXPECT_EQ(reports[0].peer_last, -1);
}

}  // namespace
}  // namespace fleetsim::transport
