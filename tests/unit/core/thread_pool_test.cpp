#include "core/thread_pool.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace fleetsim {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (std::size_t n : {0u, 1u, 7u, 1000u, 100001u}) {
      std::vector<int> hits(n, 0);
      pool.parallel_for(n, 16, [&](std::size_t b, std::size_t e, int) {
        for (std::size_t i = b; i < e; ++i) hits[i]++;
      });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "threads " << threads;
    }
  }
}

TEST(ThreadPool, RethrowsTheLowestFailure) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 20; ++rep) {
    try {
      pool.parallel_for(10000, 1, [&](std::size_t b, std::size_t e, int) {
        for (std::size_t i = b; i < e; ++i)
          if (i == 5000 || i == 9000) throw std::runtime_error(std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "5000");
    }
  }
}

}  // namespace
}  // namespace fleetsim
