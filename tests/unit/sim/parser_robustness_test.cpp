// Nothing a user writes may crash the parser: thousands of random mutations of a valid
// experiment (bytes flipped, deleted, duplicated, numbers replaced by extreme values) each
// either load or give errors with a file:line location.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "plugins/builtins.hpp"
#include "sim/simulation.hpp"

namespace fleetsim {
namespace {

TEST(ParserRobustness, RandomMutationsNeverCrash) {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/examples/deeco/deeco.xml");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string base = ss.str();
  const char* tokens[] = {"nan", "-inf", "1e308", "-1", "0", "99999999999999999999", "\"", "<",
                          "&", "]]>", "<!--", "&#0;", "\xff\xfe", "", "4,4,4", ",", "1e-320"};
  int loaded = 0, rejected = 0;
  for (int k = 0; k < 3000; ++k) {
    CounterRng rng(1, static_cast<EntityId>(k), 0, RandomStream::kUser);
    std::string text = base;
    int edits = 1 + static_cast<int>(rng.below(4));
    for (int e = 0; e < edits; ++e) {
      std::size_t at = rng.below(text.size());
      switch (rng.below(4)) {
        case 0: text[at] = static_cast<char>(rng.below(256)); break;
        case 1: text.erase(at, rng.below(20)); break;
        case 2: text.insert(at, tokens[rng.below(std::size(tokens))]); break;
        case 3: text = text.substr(0, at); break;
      }
    }
    PluginRegistry reg;
    register_builtins(reg);
    Diagnostics d;
    // Paths in the file resolve next to the example (the bitmap).
    auto ex = parse_experiment(text, std::string(FLEETSIM_SOURCE_DIR) + "/examples/deeco/m.xml",
                               reg, {}, d);
    if (ex) {
      ++loaded;
    } else {
      ++rejected;
      ASSERT_TRUE(d.has_errors()) << "rejected without a message:\n" << text;
      for (const auto& item : d.items())
        ASSERT_FALSE(item.where.file.empty()) << item.message;
    }
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(loaded, 10);
}

}  // namespace
}  // namespace fleetsim
