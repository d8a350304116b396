// StringColumn stores names as an interned stem and a number: every string must come back
// exactly as it was set, whatever its shape.
#include "world/string_column.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/hash.hpp"
#include "world/column_store.hpp"

namespace fleetsim {
namespace {

const std::vector<std::string> kShapes = {"",
                                          "fb0",
                                          "fb7",
                                          "fb10",
                                          "fb07",
                                          "fb00",
                                          "0",
                                          "7",
                                          "42",
                                          "007",
                                          "robot",
                                          "a1b2",
                                          "ep3_1999",
                                          "x999999999",
                                          "x1000000000",
                                          "x4294967295",
                                          "x4294967296",
                                          "leader",
                                          "fb 12",
                                          "é12",
                                          std::string(70, 'z') + "5",
                                          std::string(300, 'q')};

TEST(StringColumn, GivesBackEveryStringItWasGiven) {
  StringColumn c;
  c.resize(kShapes.size());
  for (std::size_t i = 0; i < kShapes.size(); ++i) c.set(i, kShapes[i]);
  StringColumn::Buffer b;
  for (std::size_t i = 0; i < kShapes.size(); ++i) {
    EXPECT_EQ(c[i], kShapes[i]) << "row " << i;
    EXPECT_EQ(c.view(i, b), kShapes[i]) << "row " << i;
  }
  // Setting a row again replaces it, including with another shape.
  c.set(1, "leader");
  c.set(17, "fb8");
  EXPECT_EQ(c[1], "leader");
  EXPECT_EQ(c[17], "fb8");
  EXPECT_EQ(std::vector<std::string>(c.begin(), c.end()).size(), kShapes.size());
}

TEST(StringColumn, EraseKeepsTheOthersInOrderAndNewRowsAreEmpty) {
  StringColumn c;
  c.resize(5);
  for (std::size_t i = 0; i < 5; ++i) c.set(i, "r" + std::to_string(i));
  c.erase(1, 3);
  EXPECT_EQ(std::vector<std::string>(c.begin(), c.end()),
            (std::vector<std::string>{"r0", "r3", "r4"}));
  c.resize(4);
  EXPECT_EQ(c[3], "");
}

TEST(StringColumn, AMillionNumberedNamesTakeEightBytesEach) {
  StringColumn c;
  c.resize(1'000'000);
  for (std::size_t i = 0; i < c.size(); ++i)
    c.set(i, "ep" + std::to_string(i % 400) + "_" + std::to_string(i));
  EXPECT_EQ(c[999'999], "ep399_999999");
  EXPECT_LT(c.memory_bytes(), 8'000'000u + 400u * 100u);
}

// A store's hash of a string column is the hash of its strings, as it was when they were
// std::strings: state hashes in logs and benchmarks do not change.
TEST(StringColumn, AStoreHashesTheStringsThemselves) {
  ColumnStore s;
  const ColumnHandle h = s.add({"name", ColumnType::kString, 1, true, true, "", "test"});
  for (const auto& text : kShapes) s.strings(h).set(s.append_row(), text);
  Hasher a;
  s.hash_into(a);
  Hasher b;
  b.word(kShapes.size());
  for (const auto& text : kShapes) b.text(text);
  EXPECT_EQ(a.value(), b.value());
}

}  // namespace
}  // namespace fleetsim
