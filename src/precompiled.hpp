// The headers nearly every library source of fleetsim includes, compiled once for the build
// (CMakeLists.txt, FLEETSIM_PCH): in C++20 the standard library's headers alone are 90,000
// lines that each source would otherwise parse again. Only standard and external headers, so
// a source compiles the same with or without it; a source still includes what it uses.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <pugixml.hpp>
