#include "transport/zmq_transport.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <zmq.hpp>

#include "transport/wire.hpp"

namespace fleetsim::transport {
namespace {

struct TempDir {
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "fleetsim-zmq-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

FederationLayout pair_layout(const std::string& dir, std::size_t capacity, SimTime until) {
  FederationLayout l;
  l.until = until;
  NodeLayout a{"a", "ipc://" + dir + "/a", {}, {{3, "ab", {"b"}, 0}}};
  NodeLayout b{"b", "ipc://" + dir + "/b", {{3, "ab", "a", capacity, 0}}, {}};
  l.nodes = {a, b};
  return l;
}

TEST(ZmqTransport, LinkEndpointsAreDerivedFromTheSinkEndpoint) {
  FederationLayout l;
  l.nodes = {{"a", "tcp://127.0.0.1:5000", {}, {}},
             {"b", "ipc:///tmp/x/b", {}, {}},
             {"c", "tcp://host:6000", {{0, "f", "b", 1, 0}, {1, "g", "a", 1, 0}}, {}}};
  EXPECT_EQ(link_endpoint(l, "c", "a"), "tcp://host:6000");
  EXPECT_EQ(link_endpoint(l, "c", "b"), "tcp://host:6001");
}

TEST(ZmqTransport, BackPressureWithBuffersOfOneLosesNothing) {
  TempDir dir;
  const int count = 300;
  auto layout = pair_layout(dir.path, 1, count);
  std::vector<SimTime> got;
  std::thread consumer([&] {
    auto b = make_zmq_port(layout, "b", {});
    for (int i = 0; i < count; ++i) {
      if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // slow
      got.push_back(b->receive(0).timestamp);
    }
    b->close();
  });
  auto a = make_zmq_port(layout, "a", {});
  for (int i = 0; i < count; ++i) {
    Message m;
    m.flow = 3;
    m.timestamp = i;
    m.period = 1;
    m.payload.assign(static_cast<std::size_t>(i % 7), static_cast<std::uint8_t>(i));
    a->send(0, m);
  }
  a->close();
  consumer.join();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) EXPECT_EQ(got[i], i);
}

TEST(ZmqTransport, GarbageAndTruncatedMessagesAreRefusedAndLogged) {
  TempDir dir;
  auto layout = pair_layout(dir.path, 4, 5000);
  std::vector<std::string> logged;
  PortOptions o;
  o.log = [&](const std::string& s) { logged.push_back(s); };
  auto b = make_zmq_port(layout, "b", o);
  {
    // An intruder connects to b's link endpoint and sends rubbish before the real data.
    zmq::context_t ctx;
    zmq::socket_t intruder(ctx, zmq::socket_type::push);
    intruder.set(zmq::sockopt::linger, 1000);
    intruder.connect(link_endpoint(layout, "b", "a"));
    intruder.send(zmq::str_buffer("this is no fleetsim message, just 48 bytes of junk"),
                  zmq::send_flags::none);
    Message m;
    m.flow = 3;
    m.timestamp = 0;
    m.period = 1;
    auto bytes = encode(m);
    intruder.send(zmq::buffer(bytes.data(), 20), zmq::send_flags::none);  // truncated
    bytes[6] = 9;                                                         // an unknown kind
    intruder.send(zmq::buffer(bytes), zmq::send_flags::none);
    m.flow = 99;  // well-formed, but not a flow of this link
    intruder.send(zmq::buffer(encode(m)), zmq::send_flags::none);
    m.flow = 3;
    m.timestamp = 5;  // out of sequence
    intruder.send(zmq::buffer(encode(m)), zmq::send_flags::none);
  }
  // The real peer's messages flow on, unharmed, until the node has read the intruder's five.
  auto a = make_zmq_port(layout, "a", {});
  for (SimTime t = 0; t < 5000 && b->stats().refused < 5; ++t) {
    Message m;
    m.flow = 3;
    m.timestamp = t;
    m.period = 1;
    a->send(0, m);
    ASSERT_EQ(b->receive(0).timestamp, t);
  }
  EXPECT_EQ(b->stats().refused, 5u);
  ASSERT_EQ(logged.size(), 5u);
  std::string all;
  for (const auto& l : logged) all += l + "\n";
  EXPECT_NE(all.find("bad magic"), std::string::npos) << all;
  EXPECT_NE(all.find("truncated"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown message kind 9"), std::string::npos) << all;
  EXPECT_NE(all.find("flow 99"), std::string::npos) << all;
  EXPECT_NE(all.find("out of sequence"), std::string::npos) << all;
  b->close();
  a->close();
}

// Issue 13's fault matrix: messages of an earlier run (a process still sending, or a replay)
// and duplicates are refused, even when they carry exactly the timestamp the node expects
// next and arrive before the real one; the real peer's messages are the ones delivered.
TEST(ZmqTransport, MessagesOfAnotherRunAndDuplicatesAreRefusedAndTheRealOnesDelivered) {
  TempDir dir;
  auto layout = pair_layout(dir.path, 4, 4);
  std::vector<std::string> logged;
  PortOptions ob;
  ob.run_id = 0x1234;
  ob.log = [&](const std::string& s) { logged.push_back(s); };
  auto b = make_zmq_port(layout, "b", ob);
  zmq::context_t ctx;
  zmq::socket_t stale(ctx, zmq::socket_type::push);
  stale.set(zmq::sockopt::linger, 1000);
  stale.connect(link_endpoint(layout, "b", "a"));
  Message m;
  m.flow = 3;
  m.period = 1;
  m.payload = {0xEE};
  for (m.timestamp = 0; m.timestamp < 3; ++m.timestamp) {
    std::vector<std::uint8_t> bytes;
    encode(m, bytes, 0x9999);  // an earlier run's message, in perfect sequence
    stale.send(zmq::buffer(bytes), zmq::send_flags::none);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // they arrive first
  PortOptions oa;
  oa.run_id = 0x1234;
  auto a = make_zmq_port(layout, "a", oa);
  for (SimTime t = 0; t < 3; ++t) {
    Message real;
    real.flow = 3;
    real.timestamp = t;
    real.period = 1;
    real.payload = {static_cast<std::uint8_t>(t)};
    a->send(0, real);
    const Message got = b->receive(0);
    EXPECT_EQ(got.timestamp, t);
    EXPECT_EQ(got.payload, real.payload) << "a message of another run was delivered";
    std::vector<std::uint8_t> copy;
    encode(real, copy, 0x1234);  // the same message again, duplicated on the way
    stale.send(zmq::buffer(copy), zmq::send_flags::none);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the copies are there
  Message last;
  last.flow = 3;
  last.timestamp = 3;
  last.period = 1;
  a->send(0, last);
  EXPECT_EQ(b->receive(0).timestamp, 3);
  // receive() reads the link only until its message is there, and the link's two pipes (the
  // stale socket's and a's) are fair-queued: a copy may still be unread. Read what arrived.
  EXPECT_FALSE(b->poll(0)) << "a duplicate was delivered";
  b->close();
  a->close();
  EXPECT_EQ(b->stats().refused, 6u);
  std::string all;
  for (const auto& l : logged) all += l + "\n";
  EXPECT_NE(all.find("another run (run id 0000000000009999, this run's is 0000000000001234)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("out of sequence"), std::string::npos) << all;
}

// A peer of another release speaks another wire version: every message of it would be
// refused and the node would wait for ever, so the node stops, naming the peer and both
// versions.
TEST(ZmqTransport, APeerOfAnotherWireVersionStopsTheNodeNamingBoth) {
  TempDir dir;
  auto layout = pair_layout(dir.path, 4, 100);
  auto b = make_zmq_port(layout, "b", {});
  zmq::context_t ctx;
  zmq::socket_t old(ctx, zmq::socket_type::push);
  old.set(zmq::sockopt::linger, 1000);
  old.connect(link_endpoint(layout, "b", "a"));
  Message m;
  m.flow = 3;
  m.period = 1;
  auto bytes = encode(m);
  bytes[4] = 1;  // the first release's version
  old.send(zmq::buffer(bytes), zmq::send_flags::none);
  try {
    b->receive(0);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the link from 'a' carries wire version 1, this node speaks version " +
                        std::to_string(kWireVersion)),
              std::string::npos)
        << what;
  }
  b->close();
}

TEST(ZmqTransport, APeerThatLeavesEarlyIsNamed) {
  TempDir dir;
  auto layout = pair_layout(dir.path, 4, 100);
  auto b = make_zmq_port(layout, "b", {});
  {
    auto a = make_zmq_port(layout, "a", {});
    Message m;
    m.flow = 3;
    m.timestamp = 0;
    m.period = 1;
    a->send(0, m);
    EXPECT_EQ(b->receive(0).timestamp, 0);
  }  // a leaves (as if it crashed) after one message of the hundred it owes
  auto start = std::chrono::steady_clock::now();
  try {
    b->receive(0);
    FAIL() << "expected PeerLost";
  } catch (const PeerLost& e) {
    EXPECT_EQ(e.peer(), "a");
    std::string what = e.what();
    EXPECT_NE(what.find("lost peer 'a'"), std::string::npos) << what;
    EXPECT_NE(what.find("last timestamp received from it: 0 ns"), std::string::npos) << what;
    EXPECT_NE(what.find("'ab' (next timestamp 1 ns)"), std::string::npos) << what;
  }
  // Liveness bound of the issue (1 s), with a margin for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

// The threads of this process named `comm` (ZeroMQ's I/O thread names itself "ZMQbg/IO/0" once
// it runs: waits up to 2 s for one).
std::vector<pid_t> threads_named(const std::string& comm) {
  std::vector<pid_t> tids;
  for (int attempt = 0; attempt < 200 && tids.empty(); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::string name;
      std::getline(std::ifstream(task.path() / "comm"), name);
      if (name == comm) tids.push_back(std::stoi(task.path().filename().string()));
    }
  }
  return tids;
}

TEST(ZmqTransport, TheIoThreadCanBePinnedPerNodeAndMadeNotToPreempt) {
  TempDir dir;
  auto layout = pair_layout(dir.path, 4, 100);
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const bool other = sched_getscheduler(0) == SCHED_OTHER;
  {
    // Node "b" is the second of the file: the second CPU this process may use (or the first,
    // on one CPU).
    ZmqOptions dedicated;
    dedicated.io_thread_cpu = kIoThreadCpuByNode;
    dedicated.io_thread_batch = true;
    auto b = make_zmq_port(layout, "b", {}, dedicated);
    auto io = threads_named("ZMQbg/IO/0");
    ASSERT_EQ(io.size(), 1u);
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(io[0], sizeof set, &set), 0);
    EXPECT_EQ(CPU_COUNT(&set), 1);
    int k = 1 % CPU_COUNT(&allowed), expected = -1;
    for (int c = 0; c < CPU_SETSIZE && expected < 0; ++c)
      if (CPU_ISSET(c, &allowed) && k-- == 0) expected = c;
    EXPECT_TRUE(CPU_ISSET(expected, &set));
    if (other) {
      EXPECT_EQ(sched_getscheduler(io[0]), SCHED_BATCH);
    }
  }
  {
    auto b = make_zmq_port(layout, "b", {});  // the defaults: ZeroMQ's
    auto io = threads_named("ZMQbg/IO/0");
    ASSERT_EQ(io.size(), 1u);
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(io[0], sizeof set, &set), 0);
    EXPECT_TRUE(CPU_EQUAL(&set, &allowed));
    EXPECT_EQ(sched_getscheduler(io[0]), sched_getscheduler(0));
  }
  // A CPU the process may not use is an error, not ZeroMQ's abort in its I/O thread.
  ZmqOptions elsewhere;
  elsewhere.io_thread_cpu = CPU_SETSIZE - 1;
  try {
    make_zmq_port(layout, "b", {}, elsewhere);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot pin ZeroMQ's I/O thread to CPU"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fleetsim::transport
