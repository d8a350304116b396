// The exchange of a swarm run over the ports (docs/distributed.md, "Routed rounds"): a routed
// round sends each process the common bytes and only the part made for it, on every transport.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "distributed/exchanges.hpp"
#include "transport/inproc_transport.hpp"

namespace fleetsim::distributed {
namespace {

namespace fs = std::filesystem;

constexpr int kProcesses = 3;
constexpr SimTime kTick = 1'000'000;
constexpr std::size_t kPart = 20'000;  // bytes of each part: far above the common bytes

// Processes 0 and 2 are not peers; 1 is a peer of both (a row of three domains).
std::vector<int> peers_of(int p) {
  if (p == 1) return {0, 2};
  return {1};
}

std::vector<std::uint8_t> bytes(int from, int to, std::size_t n) {
  std::vector<std::uint8_t> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(from * 31 + to * 7 + i);
  return b;
}

struct Outcome {
  std::vector<RoutedReceived> rounds;
  transport::PortStats stats;
};

// Process `p`: two routed rounds (the second in two parts), then the end.
Outcome run_process(transport::Port& port, int p) {
  auto exchange = make_exchange(SyncMode::kDsaam, port, p, kProcesses, kTick);
  Outcome out;
  for (int part = 0; part < 3; ++part) {
    RoutedMessage m;
    m.common = {static_cast<std::uint8_t>('C'), static_cast<std::uint8_t>(p),
                static_cast<std::uint8_t>(part)};
    m.to.resize(kProcesses);
    for (int q : peers_of(p)) m.to[static_cast<std::size_t>(q)] = bytes(p, q + 10 * part, kPart);
    const auto peers = peers_of(p);
    out.rounds.push_back(exchange->routed(std::move(m), p, peers, /*more=*/part == 1));
  }
  exchange->close();
  out.stats = port.stats();
  return out;
}

void expect_routed(const std::vector<Outcome>& outcomes) {
  for (int p = 0; p < kProcesses; ++p) {
    const Outcome& o = outcomes[static_cast<std::size_t>(p)];
    ASSERT_EQ(o.rounds.size(), 3u);
    const auto peers = peers_of(p);
    for (int part = 0; part < 3; ++part) {
      const RoutedReceived& got = o.rounds[static_cast<std::size_t>(part)];
      for (int q = 0; q < kProcesses; ++q) {
        const auto sq = static_cast<std::size_t>(q);
        EXPECT_EQ(got.common[sq], (std::vector<std::uint8_t>{'C', static_cast<std::uint8_t>(q),
                                                             static_cast<std::uint8_t>(part)}))
            << "process " << p << " from " << q;
        const bool peer = std::find(peers.begin(), peers.end(), q) != peers.end();
        EXPECT_EQ(got.from[sq], peer ? bytes(q, p + 10 * part, kPart) : std::vector<std::uint8_t>{})
            << "process " << p << " from " << q;
      }
    }
    // What a process sends is its common bytes to everyone and each part to its peer only:
    // process 0 sends its 20 kB part once a round, not to process 2 as well.
    const std::uint64_t parts_sent = 3 * peers.size() * kPart;
    EXPECT_GE(o.stats.bytes_sent, parts_sent) << "process " << p;
    EXPECT_LT(o.stats.bytes_sent, parts_sent + 3 * kProcesses * 64) << "process " << p;
  }
}

TEST(Exchanges, ARoutedRoundSendsEachProcessOnlyItsPartInProcess) {
  const auto layout = make_swarm_layout(SyncMode::kDsaam, kProcesses, kTick);
  transport::InprocNetwork net(layout);
  std::vector<std::unique_ptr<transport::Port>> ports;
  for (int p = 0; p < kProcesses; ++p) ports.push_back(net.port(process_name(p), {}));
  std::vector<std::future<Outcome>> running;
  for (int p = 0; p < kProcesses; ++p)
    running.push_back(std::async(std::launch::async, [&, p] {
      return run_process(*ports[static_cast<std::size_t>(p)], p);
    }));
  std::vector<Outcome> outcomes;
  for (auto& r : running) outcomes.push_back(r.get());
  expect_routed(outcomes);
}

// Shared memory and ZeroMQ carry each sink's message on its own link.
class ExchangesOnACarrier : public ::testing::TestWithParam<transport::Carrier> {};

TEST_P(ExchangesOnACarrier, ARoutedRoundSendsEachProcessOnlyItsPart) {
  auto layout = make_swarm_layout(SyncMode::kDsaam, kProcesses, kTick);
  const fs::path dir =
      fs::temp_directory_path() / ("fleetsim-exchange-" + std::to_string(::getpid()) + "-" +
                                   std::to_string(static_cast<int>(GetParam())));
  fs::create_directories(dir);
  for (auto& node : layout.nodes) node.endpoint = "ipc://" + (dir / node.name).string();
  transport::PortOptions options;
  options.run_id = transport::new_run_id();
  std::vector<std::future<Outcome>> running;
  for (int p = 0; p < kProcesses; ++p)
    running.push_back(std::async(std::launch::async, [&, p] {
      auto port = open_process_port(layout, p, GetParam(), options);
      return run_process(*port, p);
    }));
  std::vector<Outcome> outcomes;
  for (auto& r : running) outcomes.push_back(r.get());
  fs::remove_all(dir);
  expect_routed(outcomes);
}

INSTANTIATE_TEST_SUITE_P(Carriers, ExchangesOnACarrier,
                         ::testing::Values(transport::Carrier::kShm, transport::Carrier::kZmq),
                         [](const auto& info) {
                           return std::string(info.param == transport::Carrier::kShm ? "Shm"
                                                                                     : "Zmq");
                         });

}  // namespace
}  // namespace fleetsim::distributed
