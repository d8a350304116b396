// Bitmap fields: load_png_bitmap on the input as a file, then the obstacle outline the
// experiment builds from it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_support.hpp"
#include "scenario/bitmap.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fleetsim::fuzz::MemoryFile file;
  std::string error;
  auto bitmap = fleetsim::load_png_bitmap(file.write(data, size), error);
  if (!bitmap) {
    if (error.empty()) {
      std::fprintf(stderr, "fuzz: bitmap refused without a reason\n");
      std::abort();
    }
    return 0;
  }
  // Outlines of large bitmaps are slow and not what this harness is about.
  if (static_cast<std::size_t>(bitmap->width) * static_cast<std::size_t>(bitmap->height) <=
      (1u << 16))
    (void)fleetsim::bitmap_segments(*bitmap, 0.1, {-1, 1});
  return 0;
}
