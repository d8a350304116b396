#include "world/string_column.hpp"

#include <charconv>
#include <cstring>

namespace fleetsim {

StringColumn::StringColumn() {
  stems_.emplace_back();
  stem_index_.emplace("", 0);
}

std::uint32_t StringColumn::intern(std::string_view stem) {
  auto it = stem_index_.find(std::string(stem));
  if (it != stem_index_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(stems_.size());
  stems_.emplace_back(stem);
  stem_index_.emplace(stems_.back(), index);
  return index;
}

void StringColumn::set(std::size_t i, std::string_view s) {
  // The trailing digits, if they are a number written the one way to_chars writes it.
  std::size_t d = s.size();
  while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9') --d;
  const std::size_t digits = s.size() - d;
  std::uint32_t number = kNoNumber;
  if (digits >= 1 && digits <= 9 && (s[d] != '0' || digits == 1)) {
    number = 0;
    std::from_chars(s.data() + d, s.data() + s.size(), number);
  } else {
    d = s.size();
  }
  rows_[i] = pack(intern(s.substr(0, d)), number);
}

std::string_view StringColumn::view(std::size_t i, Buffer& out) const {
  const std::uint64_t row = rows_[i];
  const std::string& stem = stems_[row >> 32];
  const auto number = static_cast<std::uint32_t>(row);
  if (number == kNoNumber) return stem;
  char digits[10];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  const auto nd = static_cast<std::size_t>(end - digits);
  if (stem.size() + nd <= sizeof out.text) {
    std::memcpy(out.text, stem.data(), stem.size());
    std::memcpy(out.text + stem.size(), digits, nd);
    return {out.text, stem.size() + nd};
  }
  out.heap.assign(stem).append(digits, nd);
  return out.heap;
}

std::string StringColumn::operator[](std::size_t i) const {
  Buffer b;
  return std::string(view(i, b));
}

void StringColumn::erase(std::size_t b, std::size_t e) {
  rows_.erase(rows_.begin() + static_cast<std::ptrdiff_t>(b),
              rows_.begin() + static_cast<std::ptrdiff_t>(e));
}

void StringColumn::retain(const std::uint8_t* keep, std::size_t width) {
  std::size_t to = 0;
  for (std::size_t g = 0; g * width < rows_.size(); ++g)
    if (keep[g])
      for (std::size_t k = 0; k < width; ++k) rows_[to++] = rows_[g * width + k];
  rows_.resize(to);
}

std::size_t StringColumn::memory_bytes() const {
  std::size_t n =
      rows_.capacity() * sizeof(std::uint64_t) + stems_.capacity() * sizeof(std::string);
  for (const auto& s : stems_) n += 2 * (s.capacity() > 15 ? s.capacity() : 0) + 48;
  return n;
}

}  // namespace fleetsim
