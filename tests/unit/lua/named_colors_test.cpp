#include "lua/named_colors.hpp"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(NamedColors, ArgosNamesKeepTheirValues) {
  EXPECT_EQ(parse_color("orange"), (Color{255, 140, 0, 255}));
  EXPECT_EQ(parse_color("purple"), (Color{160, 32, 240, 255}));
  EXPECT_EQ(parse_color("gray90"), (Color{229, 229, 229, 255}));
  EXPECT_EQ(parse_color("off"), (Color{0, 0, 0, 255}));
}

TEST(NamedColors, NumbersAsText) {
  EXPECT_EQ(parse_color("1,2,3"), (Color{1, 2, 3, 255}));
  EXPECT_EQ(parse_color(" 1, 2 ,3 , 4"), (Color{1, 2, 3, 4}));
  EXPECT_FALSE(parse_color("1,2"));
  EXPECT_FALSE(parse_color("1,2,256"));
  EXPECT_FALSE(parse_color("1,2,3,4,5"));
  EXPECT_FALSE(parse_color("1,,3"));
  EXPECT_FALSE(parse_color("Red"));
  EXPECT_FALSE(parse_color(""));
}

TEST(NamedColors, NamesAreUnique) {
  auto all = named_colors();
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j) EXPECT_NE(all[i].name, all[j].name);
}

}  // namespace
}  // namespace fleetsim
