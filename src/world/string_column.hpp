// The storage of a string column (names of robots and objects): 8 bytes per row instead of a
// std::string's 32.
//
// Why: a swarm's names are a few stems followed by numbers ("fb0", "fb1", ... from
// <distribute id_prefix="fb">), and at a million robots a std::string per name was the largest
// single item of the world's memory. A row holds the index of its stem in a table of interned
// stems and the number after it, if any. A name is split into a stem and a number only when
// splitting and joining give it back exactly: 1 to 9 trailing digits without a leading zero
// ("fb7", "r0"; not "fb07", which is kept whole as a stem). Any other string is a stem alone.
// Reading a row builds the string; the column's contents, hashes and files are those of the
// strings.
//
// Stems are never removed (like tags): a run that keeps adding robots with unique names that
// end in no number grows the table by one stem each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fleetsim {

class StringColumn {
 public:
  StringColumn();

  std::size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  /// Row i's string.
  std::string operator[](std::size_t i) const;
  /// Row i's string without allocating when it fits `out` (valid until the next call with
  /// the same buffer). Reading is safe from several threads, each with its own buffer.
  struct Buffer {
    char text[64];
    std::string heap;  ///< names longer than `text` holds
  };
  std::string_view view(std::size_t i, Buffer& out) const;
  void set(std::size_t i, std::string_view s);

  /// Rows added are "".
  void resize(std::size_t n) { rows_.resize(n, kEmpty); }
  void reserve(std::size_t n) { rows_.reserve(n); }
  void shrink_to_fit() { rows_.shrink_to_fit(); }
  /// Removes rows [b, e), keeping the others in order.
  void erase(std::size_t b, std::size_t e);
  /// Keeps the rows whose flag in `keep` (one per `width` rows) is set, in order.
  void retain(const std::uint8_t* keep, std::size_t width);

  /// Bytes held (rows and stems).
  std::size_t memory_bytes() const;

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string;
    const_iterator(const StringColumn* c, std::size_t i) : c_(c), i_(i) {}
    std::string operator*() const { return (*c_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++i_;
      return t;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const StringColumn* c_;
    std::size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  static constexpr std::uint32_t kNoNumber = 0xffffffffu;
  static constexpr std::uint64_t kEmpty = kNoNumber;  ///< stem 0 (""), no number
  static std::uint64_t pack(std::uint32_t stem, std::uint32_t number) {
    return (static_cast<std::uint64_t>(stem) << 32) | number;
  }
  std::uint32_t intern(std::string_view stem);

  std::vector<std::uint64_t> rows_;  ///< stem index << 32 | number (kNoNumber: none)
  std::vector<std::string> stems_;   ///< stems_[0] is ""
  std::unordered_map<std::string, std::uint32_t> stem_index_;
};

}  // namespace fleetsim
