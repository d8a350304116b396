// docs/architecture.md draws the modules as the code has them: its module list (the first code
// block: a name, then its folder) names every folder of src/, each once, under its own name,
// and no folder that is not there.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
const fs::path kSrc = FLEETSIM_SOURCE_DIR;

TEST(ArchitectureDocs, TheModuleListIsTheFoldersOfSrc) {
  std::ifstream in(kSrc / "docs/architecture.md");
  ASSERT_TRUE(in) << "docs/architecture.md";
  std::string line;
  while (std::getline(in, line) && line.rfind("```", 0) != 0) {
  }
  std::map<std::string, std::string> listed;  // folder -> module name
  while (std::getline(in, line) && line.rfind("```", 0) != 0) {
    std::istringstream words(line);
    std::string name, folder;
    if (!(words >> name >> folder) || folder.rfind("src/", 0) != 0) continue;
    EXPECT_TRUE(listed.emplace(folder, name).second) << folder << " is listed twice";
    EXPECT_EQ(name, folder.substr(4)) << "the module of " << folder << " is named otherwise";
  }
  std::set<std::string> folders;
  for (const auto& e : fs::directory_iterator(kSrc / "src"))
    if (e.is_directory()) folders.insert("src/" + e.path().filename().string());
  for (const auto& f : folders) EXPECT_TRUE(listed.count(f)) << f << " is not in the module list";
  for (const auto& [f, name] : listed)
    EXPECT_TRUE(folders.count(f)) << f << " (" << name << ") is listed but is not a folder of src/";
  EXPECT_GE(listed.size(), 15u);
}

}  // namespace
}  // namespace fleetsim
