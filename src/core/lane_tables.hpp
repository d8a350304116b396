// Tables for the AVX2 kernels that keep some lanes of a 4-lane comparison: pack the kept
// lanes to the front of a vector (a left-packing shuffle), count them, and mask the lanes
// past the end of a short run for masked loads. Plain data: any translation unit may use
// them; only the kernels' own functions need the AVX2 target.
#pragma once

#include <cstdint>

namespace fleetsim::lanes {

/// kPack[bits]: the indices of the set bits of `bits` (4 lanes), in order, for
/// _mm_permutevar_ps; the lanes after them are don't-cares.
alignas(16) inline constexpr std::int32_t kPack[16][4] = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
/// kCount[bits]: how many of the 4 bits are set.
inline constexpr std::uint8_t kCount[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
/// kFirst64[n], kFirst32[n]: the first n of 4 lanes set (masks for masked loads of 64- and
/// 32-bit lanes).
alignas(32) inline constexpr std::int64_t kFirst64[5][4] = {
    {0, 0, 0, 0}, {-1, 0, 0, 0}, {-1, -1, 0, 0}, {-1, -1, -1, 0}, {-1, -1, -1, -1}};
alignas(16) inline constexpr std::int32_t kFirst32[5][4] = {
    {0, 0, 0, 0}, {-1, 0, 0, 0}, {-1, -1, 0, 0}, {-1, -1, -1, 0}, {-1, -1, -1, -1}};

}  // namespace fleetsim::lanes
