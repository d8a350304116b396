#include "transport/shm_transport.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include "transport/wire.hpp"

namespace fleetsim::transport {
namespace {

using Clock = std::chrono::steady_clock;

// Each test its own run id: tests of several processes may run at once on this machine.
PortOptions with_run(std::uint64_t run) {
  PortOptions o;
  o.run_id = run;
  return o;
}

FederationLayout pair_layout(std::size_t capacity, SimTime until) {
  FederationLayout l;
  l.until = until;
  NodeLayout a{"a", "", {}, {{3, "ab", {"b"}, 0}}};
  NodeLayout b{"b", "", {{3, "ab", "a", capacity, 0}}, {}};
  l.nodes = {a, b};
  return l;
}

Message data(SimTime t, std::size_t bytes = 0) {
  Message m;
  m.flow = 3;
  m.timestamp = t;
  m.period = 1;
  m.payload.resize(bytes);
  for (std::size_t i = 0; i < bytes; ++i) m.payload[i] = static_cast<std::uint8_t>(t + i * 7);
  return m;
}

bool segment_exists(const FederationLayout& l, const std::string& node, std::uint64_t run) {
  return std::filesystem::exists("/dev/shm/" + shm_segment_name(l, node, run));
}

TEST(ShmTransport, BackPressureWithBuffersOfOneAndMessagesLargerThanTheRingLosesNothing) {
  const std::uint64_t run = new_run_id();
  const int count = 300;
  auto layout = pair_layout(1, count);
  ShmOptions small;
  small.ring_bytes = 4096;  // every 50th message below is 20 kB: streamed through in parts
  std::vector<Message> got;
  auto b = make_shm_port(layout, "b", with_run(run), small);
  std::thread consumer([&] {
    for (int i = 0; i < count; ++i) {
      if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // slow
      got.push_back(b->receive(0));
    }
  });
  auto a = make_shm_port(layout, "a", with_run(run), small);
  for (int i = 0; i < count; ++i) a->send(0, data(i, i % 50 == 1 ? 20000 : i % 7));
  a->close();
  consumer.join();
  b->close();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(got[i].timestamp, i);
    EXPECT_EQ(got[i].payload, data(i, i % 50 == 1 ? 20000 : i % 7).payload) << i;
  }
  EXPECT_EQ(b->stats().messages_received, static_cast<std::uint64_t>(count));
  // Both segments are gone from /dev/shm once their nodes left.
  EXPECT_FALSE(segment_exists(layout, "a", run));
  EXPECT_FALSE(segment_exists(layout, "b", run));
}

// Two nodes feeding each other with big messages on small rings: each keeps reading while it
// waits to write, so neither blocks the other for good.
TEST(ShmTransport, TwoNodesSendingEachOtherLargeMessagesDoNotDeadlock) {
  const std::uint64_t run = new_run_id();
  FederationLayout l;
  l.until = 50;
  l.nodes = {{"a", "", {{1, "ba", "b", 2, 0}}, {{0, "ab", {"b"}, 0}}},
             {"b", "", {{0, "ab", "a", 2, 0}}, {{1, "ba", {"a"}, 0}}}};
  ShmOptions small;
  small.ring_bytes = 4096;
  auto exchange = [&](const std::string& self, FlowId out, std::vector<SimTime>& seen) {
    auto p = make_shm_port(l, self, with_run(run), small);
    for (SimTime t = 0; t < l.until; ++t) {
      Message m = data(t, 30000);
      m.flow = out;
      p->send(0, m);
      seen.push_back(p->receive(0).timestamp);
    }
    p->close();
  };
  std::vector<SimTime> seen_a, seen_b;
  std::thread tb([&] { exchange("b", 1, seen_b); });
  exchange("a", 0, seen_a);
  tb.join();
  ASSERT_EQ(seen_a.size(), 50u);
  ASSERT_EQ(seen_b.size(), 50u);
  for (SimTime t = 0; t < 50; ++t) EXPECT_EQ(seen_a[t] + seen_b[t], 2 * t);
}

/// Writes raw frames into the ring from node `source` in `sink`'s segment, as an intruder (or
/// a broken peer) would, before the real source attaches. The layout is the one
/// docs/wire-format.md, "Shared memory", describes.
void write_frames(const FederationLayout& l, const std::string& sink, std::uint64_t run,
                  const std::vector<std::vector<std::uint8_t>>& frames) {
  const std::string path = "/dev/shm/" + shm_segment_name(l, sink, run);
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  auto* base = static_cast<std::uint8_t*>(mmap(nullptr, static_cast<std::size_t>(st.st_size),
                                               PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(base, MAP_FAILED);
  std::uint64_t ring_bytes = 0;
  std::memcpy(&ring_bytes, base + 24, 8);
  // Head, bell and life are 64 bytes each; ring 0's control (head at +0, tail at +64) next;
  // one ring here, so its bytes follow at 3 * 64 + 128.
  auto* head = reinterpret_cast<std::atomic<std::uint64_t>*>(base + 192);
  std::uint8_t* ring = base + 192 + 128;
  std::uint64_t h = head->load();
  for (const auto& f : frames) {
    std::uint32_t n = static_cast<std::uint32_t>(f.size());
    std::uint8_t len[4] = {static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8),
                           static_cast<std::uint8_t>(n >> 16), static_cast<std::uint8_t>(n >> 24)};
    for (std::uint8_t c : len) ring[h++ % ring_bytes] = c;
    for (std::uint8_t c : f) ring[h++ % ring_bytes] = c;
  }
  head->store(h);
  munmap(base, static_cast<std::size_t>(st.st_size));
  ::close(fd);
}

TEST(ShmTransport, GarbageMessagesOfAnotherRunAndDuplicatesAreRefusedAndLogged) {
  const std::uint64_t run = new_run_id();
  auto layout = pair_layout(4, 5000);
  std::vector<std::string> logged;
  PortOptions o = with_run(run);
  o.log = [&](const std::string& s) { logged.push_back(s); };
  auto b = make_shm_port(layout, "b", o);
  std::vector<std::vector<std::uint8_t>> frames;
  const std::string junk = "this is no fleetsim message, just 48 bytes of junk";
  frames.emplace_back(junk.begin(), junk.end());
  std::vector<std::uint8_t> bytes;
  encode(data(0), bytes, run);
  frames.emplace_back(bytes.begin(), bytes.begin() + 20);  // truncated
  bytes[6] = 9;                                            // an unknown kind
  frames.push_back(bytes);
  Message m = data(0);
  m.flow = 99;  // well-formed, but not a flow of this link
  encode(m, bytes, run);
  frames.push_back(bytes);
  encode(data(5), bytes, run);  // out of sequence
  frames.push_back(bytes);
  encode(data(0, 3), bytes, 0x9999);  // another run's, in perfect sequence
  frames.push_back(bytes);
  write_frames(layout, "b", run, frames);
  // The real peer's messages flow on, unharmed; the first six have gone by the first receive.
  auto a = make_shm_port(layout, "a", with_run(run));
  for (SimTime t = 0; t < 3; ++t) {
    a->send(0, data(t, 2));
    const Message got = b->receive(0);
    EXPECT_EQ(got.timestamp, t);
    EXPECT_EQ(got.payload, data(t, 2).payload) << "a refused message was delivered";
  }
  EXPECT_EQ(b->stats().refused, 6u);
  std::string all;
  for (const auto& l : logged) all += l + "\n";
  EXPECT_NE(all.find("bad magic"), std::string::npos) << all;
  EXPECT_NE(all.find("truncated"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown message kind 9"), std::string::npos) << all;
  EXPECT_NE(all.find("flow 99"), std::string::npos) << all;
  EXPECT_NE(all.find("out of sequence"), std::string::npos) << all;
  EXPECT_NE(all.find("another run (run id 0000000000009999"), std::string::npos) << all;
  a->close();
  b->close();
}

TEST(ShmTransport, ACorruptRingOrAnotherWireVersionStopsTheNodeNamingThePeer) {
  auto layout = pair_layout(4, 100);
  {
    const std::uint64_t run = new_run_id();
    auto b = make_shm_port(layout, "b", with_run(run));
    auto bytes = encode(data(0));
    bytes[4] = 1;  // the first release's version
    write_frames(layout, "b", run, {bytes});
    try {
      b->receive(0);
      FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("the link from 'a' carries wire version 1"),
                std::string::npos)
          << e.what();
    }
  }
  {
    const std::uint64_t run = new_run_id();
    auto b = make_shm_port(layout, "b", with_run(run));
    write_frames(layout, "b", run, {std::vector<std::uint8_t>(1, 0)});
    // A length that cannot be: the frame boundaries are lost, nothing after it can be read.
    const std::string path = "/dev/shm/" + shm_segment_name(layout, "b", run);
    int fd = ::open(path.c_str(), O_RDWR);
    auto* base =
        static_cast<std::uint8_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    base[320] = base[321] = base[322] = base[323] = 0xff;
    munmap(base, 4096);
    ::close(fd);
    try {
      b->receive(0);
      FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("the ring from 'a' is corrupt"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ShmTransport, APeerThatLeavesEarlyIsNamed) {
  const std::uint64_t run = new_run_id();
  auto layout = pair_layout(4, 100);
  auto b = make_shm_port(layout, "b", with_run(run));
  {
    auto a = make_shm_port(layout, "a", with_run(run));
    a->send(0, data(0));
    EXPECT_EQ(b->receive(0).timestamp, 0);
  }  // a leaves (as if it failed) after one message of the hundred it owes
  auto start = Clock::now();
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
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
}

// A node that fails at its start, before it has reached its sink (the sink was not there yet
// when it looked), still tells the sink that it left: the sink names it rather than waiting
// for its messages for ever.
TEST(ShmTransport, ANodeThatLeavesBeforeReachingItsSinkIsNamed) {
  const std::uint64_t run = new_run_id();
  auto layout = pair_layout(4, 100);
  auto a = make_shm_port(layout, "a", with_run(run));  // b's segment does not exist yet
  auto b = make_shm_port(layout, "b", with_run(run));
  a.reset();  // a fails without a message
  // b receives on a thread of its own: without the notice it would wait for ever, and the
  // test must fail rather than hang (the port and the thread are then left behind).
  std::promise<std::string> outcome;
  std::future<std::string> got = outcome.get_future();
  Port* sink = b.release();
  std::thread([sink, done = std::move(outcome)]() mutable {
    try {
      sink->receive(0);
      done.set_value("a message");
    } catch (const PeerLost& e) {
      done.set_value(std::string("PeerLost: ") + e.what());
    } catch (const std::exception& e) {
      done.set_value(std::string("another error: ") + e.what());
    }
  }).detach();
  ASSERT_EQ(got.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "b still waits for a, which left before reaching it";
  delete sink;
  const std::string what = got.get();
  EXPECT_EQ(what.rfind("PeerLost: ", 0), 0u) << what;
  EXPECT_NE(what.find("lost peer 'a'"), std::string::npos) << what;
}

// The other process of AKilledProcessIsNoticedAndItsSegmentCleared: this test binary run
// again with FLEETSIM_SHM_TEST_RUN set; node 'a' sends two messages and waits to be killed.
TEST(ShmTransport, HelperProcess) {
  const char* run_text = std::getenv("FLEETSIM_SHM_TEST_RUN");
  if (!run_text) GTEST_SKIP() << "only run by AKilledProcessIsNoticedAndItsSegmentCleared";
  auto layout = pair_layout(4, 100);
  auto a = make_shm_port(layout, "a", with_run(*parse_run_id(run_text)));
  a->send(0, data(0));
  a->send(0, data(1));
  std::this_thread::sleep_for(std::chrono::seconds(60));  // until killed
}

// A process killed outright (no destructor, no close) leaves its segment behind: its peer
// notices by the lock the kernel dropped, and remove_stale_shm_segments clears the leftover.
TEST(ShmTransport, AKilledProcessIsNoticedAndItsSegmentCleared) {
  const std::uint64_t run = new_run_id();
  auto layout = pair_layout(4, 100);
  auto b = make_shm_port(layout, "b", with_run(run));
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=ShmTransport.HelperProcess";
  std::string env = "FLEETSIM_SHM_TEST_RUN=" + run_id_text(run);
  char* argv[] = {exe.data(), filter.data(), nullptr};
  char* envp[] = {env.data(), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, exe.c_str(), nullptr, nullptr, argv, envp), 0);
  EXPECT_EQ(b->receive(0).timestamp, 0);
  EXPECT_EQ(b->receive(0).timestamp, 1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  auto start = Clock::now();
  try {
    b->receive(0);
    FAIL() << "expected PeerLost";
  } catch (const PeerLost& e) {
    EXPECT_NE(std::string(e.what()).find("last timestamp received from it: 1 ns"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));  // the bound is 1 s
  EXPECT_TRUE(segment_exists(layout, "a", run));
  remove_abandoned_shm_segments();  // (a's is too young to be taken for abandoned)
  EXPECT_TRUE(segment_exists(layout, "a", run));
  EXPECT_EQ(remove_stale_shm_segments(run), 1u);  // a's; b's is live and stays
  EXPECT_FALSE(segment_exists(layout, "a", run));
  EXPECT_TRUE(segment_exists(layout, "b", run));
}

TEST(ShmTransport, ASecondNodeOfTheSameNameAndRunIsRefused) {
  const std::uint64_t run = new_run_id();
  auto layout = pair_layout(4, 100);
  auto b = make_shm_port(layout, "b", with_run(run));
  try {
    auto again = make_shm_port(layout, "b", with_run(run));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a node of that name is already running"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShmTransport, OnlyLocalEndpointsAllowSharedMemory) {
  FederationLayout l = pair_layout(1, 1);
  EXPECT_TRUE(all_nodes_local(l));
  l.nodes[0].endpoint = "ipc:///tmp/x/a";
  l.nodes[1].endpoint = "tcp://127.0.0.1:5000";
  EXPECT_TRUE(all_nodes_local(l));
  l.nodes[1].endpoint = "tcp://robots.example.org:5000";
  EXPECT_FALSE(all_nodes_local(l));
}

}  // namespace
}  // namespace fleetsim::transport
