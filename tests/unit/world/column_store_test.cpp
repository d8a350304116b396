// ColumnStore's promises about zeros: memory is reserved ahead without being cleared, so every
// way a row or an element comes into being must clear it.
#include "world/column_store.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <vector>

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

// Large buffers come from the system as pages of zeros, and rows are cleared only where they
// may have been written: every way of writing rows, then dropping them, then adding rows
// again must still give zeros.
TEST(ColumnStore, LargeStoresGiveZeroRowsAfterRowsWereWrittenAndDropped) {
  ColumnStore s;
  const ColumnHandle a = s.add(f64("a", 4));  // 32 bytes a row: mapped from 32,768 rows on
  for (int i = 0; i < 100000; ++i) s.append_row();
  fill(s, a, 3);
  std::vector<std::uint8_t> keep(s.rows(), 0);
  for (std::size_t r = 0; r < keep.size(); r += 3) keep[r] = 1;
  s.retain(keep);  // rows above the kept ones still hold 3s
  ASSERT_EQ(s.rows(), 33334u);
  for (int i = 0; i < 50000; ++i) s.append_row();
  s.erase_row(0);
  s.resize_rows(60000);
  s.resize_rows(120000);
  const auto v = s.span<double>(a);
  for (std::size_t e = 0; e < v.size(); ++e) ASSERT_EQ(v[e], e < 33333 * 4 ? 3.0 : 0.0) << e;
  ColumnStore copy;
  copy = s;
  copy.resize_rows(200000);
  const ColumnHandle b = copy.add(f64("b", 2));
  const auto w = copy.span<double>(a);
  for (std::size_t e = 0; e < w.size(); ++e) ASSERT_EQ(w[e], e < 33333 * 4 ? 3.0 : 0.0) << e;
  for (double x : copy.span<double>(b)) ASSERT_EQ(x, 0.0);
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

// What a partitioned load relies on: a million rows of which only one narrow column is ever
// written cost that column, not the whole row (the other columns' pages are never touched).
TEST(ColumnStore, RowsOnlyPartlyWrittenCostOnlyTheColumnsWritten) {
  const std::size_t before = resident_bytes();
  {
    ColumnStore s;
    const ColumnHandle wide = s.add(f64("wide", 16));  // 128 bytes a row, never written
    const ColumnHandle narrow = s.add({"narrow", ColumnType::kU8, 1, true, false, "", "test"});
    s.reserve(1000000);
    for (std::size_t i = 0; i < 1000000; ++i) {
      const std::size_t r = s.append_row();
      s.span<std::uint8_t>(narrow)[r] = 1;
    }
    const std::size_t grown = resident_bytes() - before;
    EXPECT_LT(grown, std::size_t{24} << 20) << "the untouched 128 MB column became resident";
    EXPECT_EQ(s.span<double>(wide)[16 * 999999], 0.0);
  }
}

}  // namespace
}  // namespace fleetsim
