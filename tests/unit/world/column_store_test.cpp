// ColumnStore's promises about zeros: memory is reserved ahead without being cleared, so every
// way a row or an element comes into being must clear it.
#include "world/column_store.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace fleetsim {
namespace {

ColumnDesc f64(const char* name, std::uint32_t width = 1) {
  return {name, ColumnType::kF64, width, true, false, "", "test"};
}

void fill(ColumnStore& s, ColumnHandle c, double v) {
  for (double& x : s.span<double>(c)) x = v;
}

TEST(ColumnStore, RowsAddedAfterAReserveAreZero) {
  ColumnStore s;
  const ColumnHandle a = s.add(f64("a", 3));
  s.reserve(1000);
  for (int i = 0; i < 600; ++i) s.append_row();
  for (double x : s.span<double>(a)) ASSERT_EQ(x, 0.0);
  fill(s, a, 7);
  s.resize_rows(100);  // shrink, then grow again past the old rows
  s.resize_rows(900);
  const auto v = s.span<double>(a);
  for (std::size_t i = 0; i < 300; ++i) ASSERT_EQ(v[i], 7.0);
  for (std::size_t i = 300; i < v.size(); ++i) ASSERT_EQ(v[i], 0.0) << i;
}

TEST(ColumnStore, GrowingKeepsTheRows) {
  ColumnStore s;
  const ColumnHandle a = s.add(f64("a"));
  for (int i = 0; i < 5000; ++i) {
    const std::size_t r = s.append_row();
    s.span<double>(a)[r] = i;
  }
  const auto v = s.span<double>(a);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], i);
}

TEST(ColumnStore, AColumnAddedOrWidenedLaterIsZeroForExistingRows) {
  ColumnStore s;
  const ColumnHandle a = s.add(f64("a", 2));
  s.reserve(4096);
  for (int i = 0; i < 3000; ++i) s.append_row();
  fill(s, a, 5);
  const ColumnHandle b = s.add(f64("b", 4));
  for (double x : s.span<double>(b)) ASSERT_EQ(x, 0.0);
  EXPECT_EQ(s.add(f64("a", 3)), a);  // widened
  const auto v = s.span<double>(a);
  for (std::size_t r = 0; r < 3000; ++r) {
    ASSERT_EQ(v[r * 3], 5.0);
    ASSERT_EQ(v[r * 3 + 1], 5.0);
    ASSERT_EQ(v[r * 3 + 2], 0.0) << "row " << r;
  }
}

}  // namespace
}  // namespace fleetsim
