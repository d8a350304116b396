#include "time/lockstep.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "transport/inproc_transport.hpp"

namespace fleetsim::time {
namespace {

TEST(Lockstep, PrimaryWaitsForEveryAckBeforeTheNextStep) {
  const SimTime step = 1'000'000;
  const int steps = 50;
  auto layout = make_lockstep_layout({"primary", "s1", "s2", "s3"}, steps * step);
  transport::InprocNetwork net(layout);
  std::vector<std::thread> secondaries;
  for (int j = 1; j <= 3; ++j)
    secondaries.emplace_back([&, j] {
      auto port = net.port(layout.nodes[static_cast<std::size_t>(j)].name, {});
      LockstepSecondary s(*port);
      for (int k = 0; k < steps; ++k) {
        StepOrder o = s.next_step();
        EXPECT_EQ(o.iteration, static_cast<std::uint64_t>(k));
        EXPECT_EQ(o.time, k * step);
        EXPECT_EQ(o.step_size, step);
        // Ack with (secondary, iteration, what the primary sent).
        std::vector<std::uint8_t> ack{static_cast<std::uint8_t>(j), static_cast<std::uint8_t>(k)};
        ack.insert(ack.end(), o.payload.begin(), o.payload.end());
        s.ack(ack);
      }
    });
  auto port = net.port("primary", {});
  LockstepPrimary p(*port, step);
  for (int k = 0; k < steps; ++k) {
    std::vector<std::vector<std::uint8_t>> orders{{1}, {2}, {3}};
    const auto& acks = p.step(orders);
    ASSERT_EQ(acks.size(), 3u);
    for (std::size_t j = 0; j < 3; ++j)
      EXPECT_EQ(acks[j], (std::vector<std::uint8_t>{static_cast<std::uint8_t>(j + 1),
                                                    static_cast<std::uint8_t>(k),
                                                    static_cast<std::uint8_t>(j + 1)}));
  }
  EXPECT_EQ(p.iteration(), static_cast<std::uint64_t>(steps));
  EXPECT_EQ(p.time(), steps * step);
  for (auto& t : secondaries) t.join();
}

}  // namespace
}  // namespace fleetsim::time
