#include "scenario/bitmap.hpp"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

Bitmap from_rows(const std::vector<std::string>& rows) {
  Bitmap b;
  b.height = static_cast<int>(rows.size());
  b.width = static_cast<int>(rows[0].size());
  for (const auto& r : rows)
    for (char c : r) b.black.push_back(c == '#' ? 1 : 0);
  return b;
}

TEST(Bitmap, ABlackRectangleIsFourSegments) {
  auto segs = bitmap_segments(from_rows({"......", ".####.", ".####.", "......"}), 1.0, {0, 0});
  EXPECT_EQ(segs.size(), 4u);
}

TEST(Bitmap, AnLShapeIsSixSegments) {
  auto segs = bitmap_segments(from_rows({"#..", "#..", "###"}), 0.5, {-1, 1});
  EXPECT_EQ(segs.size(), 6u);
  // Pixel (i, j) covers [left + i res, left + (i+1) res] x [top - (j+1) res, top - j res]:
  // the bottom edge of the L is y = 1 - 3 * 0.5 from x = -1 to x = 0.5.
  bool found = false;
  for (const auto& s : segs)
    if (s.a.y == -0.5 && s.b.y == -0.5 && std::min(s.a.x, s.b.x) == -1 && std::max(s.a.x, s.b.x) == 0.5)
      found = true;
  EXPECT_TRUE(found);
}

TEST(Bitmap, LoadsThePngOfTheTestData) {
  std::string error;
  auto b = load_png_bitmap(std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/rooms40.png", error);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(b->width, 40);
  EXPECT_EQ(b->height, 40);
  EXPECT_TRUE(b->at(20, 5));   // the vertical arm of the cross
  EXPECT_FALSE(b->at(5, 5));   // inside a room
}

}  // namespace
}  // namespace fleetsim
