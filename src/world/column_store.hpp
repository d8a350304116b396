// A table of per-entity columns declared at run time (fleetsim/columns.hpp): the storage
// behind WorldState's robots and objects.
//
// Why this layout: every column is one contiguous array (structure of arrays), so the hot
// phases stream through x, y, theta and a sensor's readings; row r of a column of width w is
// elements [r*w, (r+1)*w). Columns are added before or between runs' rows (new columns start
// at zero for existing rows); rows are appended and erased in order (entities stay sorted by
// id). Which thread writes what is the phases' business: a phase writes only its own rows.
// Storage is 64-byte aligned raw memory holding implicit-lifetime element types (large buffers
// mapped from the system, so that rows never written cost no memory); strings
// (names) live beside it in StringColumns (8 bytes a row; world/string_column.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fleetsim/columns.hpp"
#include "fleetsim/parts.hpp"
#include "world/string_column.hpp"

namespace fleetsim {

class Hasher;

class ColumnStore {
 public:
  ColumnStore() = default;
  ColumnStore(const ColumnStore& other);
  ColumnStore& operator=(const ColumnStore& other);
  ColumnStore(ColumnStore&&) noexcept = default;
  ColumnStore& operator=(ColumnStore&&) noexcept = default;

  /// Declares a column; existing rows get zeros (empty strings). Returns its handle. A column
  /// of the same name and type is widened to the larger width instead (same handle).
  /// Throws std::invalid_argument on a name clash with another type.
  ColumnHandle add(const ColumnDesc& desc);
  ColumnHandle find(const std::string& name) const;
  const std::vector<ColumnDesc>& schema() const { return schema_; }
  const ColumnDesc& desc(ColumnHandle c) const { return schema_[c]; }

  std::size_t rows() const { return rows_; }
  /// Appends a row of zeros; returns its index.
  std::size_t append_row();
  /// Removes row r, keeping the others in order. O(rows).
  void erase_row(std::size_t r);
  /// Keeps the rows whose flag in `keep` (one per row) is set, in order: in place, or, when at
  /// most half of them stay, in buffers sized to them (the old ones given back).
  void retain(std::span<const std::uint8_t> keep);
  /// Copies row `from` of `src` (same schema) into row `to` of this store.
  void copy_row(const ColumnStore& src, std::size_t from, std::size_t to);
  /// Appends column c's bytes of each of `rows`, in that order (not for string columns).
  void gather_rows(ColumnHandle c, std::span<const std::uint32_t> rows,
                   std::vector<std::uint8_t>& out) const;
  /// The inverse: writes `rows.size() * row_bytes` bytes from `in` into those rows. The
  /// caller checks the rows exist and that `in` holds that many bytes.
  void scatter_rows(ColumnHandle c, std::span<const std::uint32_t> rows, const std::uint8_t* in);
  void reserve(std::size_t rows);
  /// Gives back the room beyond the rows there are (after many rows were removed).
  void shrink_to_fit();
  /// Sets the number of rows; rows added are zero (strings empty).
  void resize_rows(std::size_t rows);

  void* data(ColumnHandle c) { return columns_[c].bytes.get(); }
  const void* data(ColumnHandle c) const { return columns_[c].bytes.get(); }
  template <class T>
  std::span<T> span(ColumnHandle c) {
    return {static_cast<T*>(data(c)), rows_ * schema_[c].width};
  }
  template <class T>
  std::span<const T> span(ColumnHandle c) const {
    return {static_cast<const T*>(data(c)), rows_ * schema_[c].width};
  }
  std::span<const std::uint8_t> bytes(ColumnHandle c) const {
    return {static_cast<const std::uint8_t*>(data(c)), rows_ * schema_[c].row_bytes()};
  }
  StringColumn& strings(ColumnHandle c) { return columns_[c].strings; }
  const StringColumn& strings(ColumnHandle c) const { return columns_[c].strings; }

  /// Feeds every hashed column (schema order: sizes, then bytes or strings) to `h`.
  void hash_into(Hasher& h) const;
  /// Adds to sums[c], for each hashed column c, a digest of each row whose flag in `take` is
  /// set (every row if `take` is empty): a hash of the row's key (`keys[row]`, the entity's
  /// id), c and the row's bytes or strings, summed with wrap-around. A sum depends neither on
  /// the rows' order nor on how rows are spread over stores: the sums of a world's parts add up
  /// to the whole world's (a partitioned run's hash, distributed/tick_rounds.cpp). `sums` has
  /// one element per column; those of columns not hashed stay as they are.
  void add_row_digests(std::span<const std::uint32_t> keys, std::span<const std::uint8_t> take,
                       std::span<std::uint64_t> sums) const;
  /// Bytes held by the columns (capacity).
  std::size_t memory_bytes() const;
  /// Keeps the buffers growing replaces, until the store is destroyed, instead of freeing
  /// them: for bindings that hand out views of the columns (python/), which then read stale
  /// rows after robots are added, never freed memory.
  void keep_replaced_buffers() { keep_replaced_ = true; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  struct Column {
    std::unique_ptr<std::byte[], Free> bytes;
    StringColumn strings;
    /// Rows from `dirty` on are zeros (a mapped buffer never written there); rows before may
    /// hold anything. Never below rows(): rows in use are written freely.
    std::size_t dirty = 0;
    /// Takes a new buffer whose first `written` rows are copied in; `zero`: the rest is zeros.
    void replace(std::byte* fresh, bool zero, std::size_t written, std::size_t capacity);
    /// Makes rows [from, to) zeros (of `row` bytes each), writing only where they may not be.
    void zero_rows(std::size_t from, std::size_t to, std::size_t row);
  };
  void grow(std::size_t min_rows);
  void widen(ColumnHandle c, std::uint32_t width);

  std::vector<ColumnDesc> schema_;
  std::vector<Column> columns_;
  std::size_t rows_ = 0, capacity_ = 0;
  bool keep_replaced_ = false;
  std::vector<std::unique_ptr<std::byte[], Free>> replaced_;
};

}  // namespace fleetsim
