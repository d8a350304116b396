#include "world/column_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include <sys/mman.h>

#include "core/hash.hpp"

namespace fleetsim {

namespace {
constexpr std::size_t kAlign = 64;
/// Buffers from this size on are mapped from the system: their pages are zeros that cost no
/// memory until written, so rows no one writes (a load's sensor columns for robots another
/// process will run, capacity reserved ahead) stay free.
constexpr std::size_t kMapFrom = std::size_t{1} << 20;

/// In the kAlign bytes before every buffer: the length of its mapping, or 0 (from the heap).
struct Header {
  std::size_t mapped;
};

/// A kAlign-aligned buffer of at least `bytes`; `zero` tells whether it is known to be zeros.
std::byte* allocate(std::size_t bytes, bool& zero) {
  const std::size_t n = std::max<std::size_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
  if (n + kAlign >= kMapFrom) {
    void* p = mmap(nullptr, n + kAlign, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    static_cast<Header*>(p)->mapped = n + kAlign;
    zero = true;
    return static_cast<std::byte*>(p) + kAlign;
  }
  void* p = std::aligned_alloc(kAlign, n + kAlign);
  if (!p) throw std::bad_alloc();
  static_cast<Header*>(p)->mapped = 0;
  zero = false;
  return static_cast<std::byte*>(p) + kAlign;
}
}  // namespace

void ColumnStore::Free::operator()(std::byte* p) const {
  if (!p) return;
  auto* h = reinterpret_cast<Header*>(p - kAlign);
  if (h->mapped)
    munmap(h, h->mapped);
  else
    std::free(h);
}

void ColumnStore::Column::replace(std::byte* fresh, bool zero, std::size_t written,
                                  std::size_t capacity) {
  bytes.reset(fresh);
  dirty = zero ? written : capacity;
}

void ColumnStore::Column::zero_rows(std::size_t from, std::size_t to, std::size_t row) {
  if (from < dirty) std::memset(bytes.get() + from * row, 0, (std::min(to, dirty) - from) * row);
  dirty = std::max(dirty, to);
}

ColumnStore::ColumnStore(const ColumnStore& other) {
  *this = other;
}

ColumnStore& ColumnStore::operator=(const ColumnStore& other) {
  if (this == &other) return *this;
  schema_ = other.schema_;
  rows_ = other.rows_;
  capacity_ = other.rows_;
  columns_.clear();
  columns_.resize(schema_.size());
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const std::size_t row = schema_[c].row_bytes();
    bool zero = false;
    columns_[c].replace(allocate(capacity_ * row, zero), zero, rows_, capacity_);
    if (rows_ * row > 0)
      std::memcpy(columns_[c].bytes.get(), other.columns_[c].bytes.get(), rows_ * row);
    columns_[c].strings = other.columns_[c].strings;
  }
  return *this;
}

ColumnHandle ColumnStore::add(const ColumnDesc& desc) {
  ColumnHandle existing = find(desc.name);
  if (existing != kNoColumn) {
    if (schema_[existing].type != desc.type)
      throw std::invalid_argument("column '" + desc.name + "' is declared as " +
                                  to_string(schema_[existing].type) + " by '" +
                                  schema_[existing].owner + "' and as " + to_string(desc.type) +
                                  " by '" + desc.owner + "'");
    if (desc.width > schema_[existing].width) widen(existing, desc.width);
    return existing;
  }
  if (desc.width == 0) throw std::invalid_argument("column '" + desc.name + "' has width 0");
  schema_.push_back(desc);
  Column col;
  if (desc.type == ColumnType::kString) {
    col.strings.resize(rows_ * desc.width);
  } else {
    bool zero = false;
    col.replace(allocate(capacity_ * desc.row_bytes(), zero), zero, 0, capacity_);
    col.zero_rows(0, rows_, desc.row_bytes());
  }
  columns_.push_back(std::move(col));
  return static_cast<ColumnHandle>(schema_.size() - 1);
}

ColumnHandle ColumnStore::find(const std::string& name) const {
  for (std::size_t c = 0; c < schema_.size(); ++c)
    if (schema_[c].name == name) return static_cast<ColumnHandle>(c);
  return kNoColumn;
}

void ColumnStore::widen(ColumnHandle c, std::uint32_t width) {
  ColumnDesc& d = schema_[c];
  const std::uint32_t old = d.width;
  if (d.type == ColumnType::kString) {
    StringColumn s;
    s.resize(rows_ * width);
    StringColumn::Buffer b;
    for (std::size_t r = 0; r < rows_; ++r)
      for (std::uint32_t k = 0; k < old; ++k)
        s.set(r * width + k, columns_[c].strings.view(r * old + k, b));
    columns_[c].strings = std::move(s);
  } else {
    const std::size_t e = d.element_bytes();
    bool zero = false;
    std::byte* fresh = allocate(capacity_ * e * width, zero);
    if (!zero) std::memset(fresh, 0, rows_ * e * width);
    for (std::size_t r = 0; r < rows_; ++r)
      std::memcpy(fresh + r * e * width, columns_[c].bytes.get() + r * e * old, e * old);
    columns_[c].replace(fresh, zero, rows_, capacity_);
  }
  d.width = width;
}

void ColumnStore::grow(std::size_t min_rows) {
  if (min_rows <= capacity_) return;
  std::size_t cap = std::max<std::size_t>({min_rows, capacity_ * 2, 16});
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    if (schema_[c].type == ColumnType::kString) {
      columns_[c].strings.reserve(cap * schema_[c].width);
      continue;
    }
    const std::size_t row = schema_[c].row_bytes();
    bool zero = false;
    std::byte* fresh = allocate(cap * row, zero);
    if (rows_ * row > 0) std::memcpy(fresh, columns_[c].bytes.get(), rows_ * row);
    if (keep_replaced_) replaced_.push_back(std::move(columns_[c].bytes));
    columns_[c].replace(fresh, zero, rows_, cap);
  }
  capacity_ = cap;
}

void ColumnStore::reserve(std::size_t rows) {
  grow(rows);
}

void ColumnStore::shrink_to_fit() {
  if (capacity_ == rows_ || keep_replaced_) return;
  const std::size_t cap = std::max<std::size_t>(rows_, 16);
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    if (schema_[c].type == ColumnType::kString) {
      columns_[c].strings.shrink_to_fit();
      continue;
    }
    const std::size_t row = schema_[c].row_bytes();
    bool zero = false;
    std::byte* fresh = allocate(cap * row, zero);
    if (rows_ * row > 0) std::memcpy(fresh, columns_[c].bytes.get(), rows_ * row);
    columns_[c].replace(fresh, zero, rows_, cap);
  }
  capacity_ = cap;
}

void ColumnStore::resize_rows(std::size_t n) {
  grow(n);
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (d.type == ColumnType::kString)
      columns_[c].strings.resize(n * d.width);
    else if (n > rows_)
      columns_[c].zero_rows(rows_, n, d.row_bytes());
  }
  rows_ = n;
}

std::size_t ColumnStore::append_row() {
  grow(rows_ + 1);
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (d.type == ColumnType::kString)
      columns_[c].strings.resize((rows_ + 1) * d.width);
    else
      columns_[c].zero_rows(rows_, rows_ + 1, d.row_bytes());
  }
  return rows_++;
}

void ColumnStore::erase_row(std::size_t r) {
  if (r >= rows_) return;
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (d.type == ColumnType::kString) {
      columns_[c].strings.erase(r * d.width, (r + 1) * d.width);
    } else {
      const std::size_t row = d.row_bytes();
      std::byte* p = columns_[c].bytes.get();
      std::memmove(p + r * row, p + (r + 1) * row, (rows_ - r - 1) * row);
    }
  }
  --rows_;
}

void ColumnStore::retain(std::span<const std::uint8_t> keep) {
  std::size_t kept = 0;
  for (std::size_t r = 0; r < rows_; ++r) kept += keep[r] ? 1 : 0;
  if (kept == rows_) return;
  const bool small = kept <= rows_ / 2 && !keep_replaced_;
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (d.type == ColumnType::kString) {
      columns_[c].strings.retain(keep.data(), d.width);
      continue;
    }
    // Runs of kept rows move down together: in place when most rows stay, else into a buffer
    // sized to them, the old one freed (the dropped rows' pages are never written, and go
    // back to the system).
    const std::size_t row = d.row_bytes();
    const std::byte* from = columns_[c].bytes.get();
    bool zero = false;
    std::byte* fresh = small ? allocate(std::max<std::size_t>(kept, 16) * row, zero) : nullptr;
    std::byte* p = small ? fresh : columns_[c].bytes.get();
    std::size_t to = 0;
    for (std::size_t r = 0; r < rows_;) {
      if (!keep[r]) {
        ++r;
        continue;
      }
      std::size_t e = r + 1;
      while (e < rows_ && keep[e]) ++e;
      if (p + to * row != from + r * row) std::memmove(p + to * row, from + r * row, (e - r) * row);
      to += e - r;
      r = e;
    }
    if (small) columns_[c].replace(fresh, zero, kept, std::max<std::size_t>(kept, 16));
  }
  if (small) capacity_ = std::max<std::size_t>(kept, 16);
  rows_ = kept;
}

void ColumnStore::copy_row(const ColumnStore& src, std::size_t from, std::size_t to) {
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (d.type == ColumnType::kString) {
      StringColumn::Buffer b;
      for (std::uint32_t k = 0; k < d.width; ++k)
        columns_[c].strings.set(to * d.width + k,
                                src.columns_[c].strings.view(from * d.width + k, b));
    } else {
      std::memcpy(columns_[c].bytes.get() + to * d.row_bytes(),
                  src.columns_[c].bytes.get() + from * d.row_bytes(), d.row_bytes());
    }
  }
}

namespace {
// Row copies with the row size known at compile time for the common sizes (a memcpy of a
// constant size is a move instruction, of a variable size a call).
template <std::size_t W>
void gather_fixed(const std::uint8_t* src, std::span<const std::uint32_t> rows, std::uint8_t* dst) {
  for (std::uint32_t r : rows) {
    std::memcpy(dst, src + std::size_t{r} * W, W);
    dst += W;
  }
}
template <std::size_t W>
void scatter_fixed(std::uint8_t* dst, std::span<const std::uint32_t> rows, const std::uint8_t* in) {
  for (std::uint32_t r : rows) {
    std::memcpy(dst + std::size_t{r} * W, in, W);
    in += W;
  }
}
}  // namespace

void ColumnStore::gather_rows(ColumnHandle c, std::span<const std::uint32_t> rows,
                              std::vector<std::uint8_t>& out) const {
  const std::size_t w = schema_[c].row_bytes();
  const std::size_t at = out.size();
  out.resize(at + rows.size() * w);
  std::uint8_t* dst = out.data() + at;
  const auto* src = reinterpret_cast<const std::uint8_t*>(columns_[c].bytes.get());
  switch (w) {
    case 1:
      return gather_fixed<1>(src, rows, dst);
    case 2:
      return gather_fixed<2>(src, rows, dst);
    case 4:
      return gather_fixed<4>(src, rows, dst);
    case 8:
      return gather_fixed<8>(src, rows, dst);
    case 16:
      return gather_fixed<16>(src, rows, dst);
    default:
      for (std::uint32_t r : rows) {
        std::memcpy(dst, src + std::size_t{r} * w, w);
        dst += w;
      }
  }
}

void ColumnStore::scatter_rows(ColumnHandle c, std::span<const std::uint32_t> rows,
                               const std::uint8_t* in) {
  const std::size_t w = schema_[c].row_bytes();
  auto* dst = reinterpret_cast<std::uint8_t*>(columns_[c].bytes.get());
  switch (w) {
    case 1:
      return scatter_fixed<1>(dst, rows, in);
    case 2:
      return scatter_fixed<2>(dst, rows, in);
    case 4:
      return scatter_fixed<4>(dst, rows, in);
    case 8:
      return scatter_fixed<8>(dst, rows, in);
    case 16:
      return scatter_fixed<16>(dst, rows, in);
    default:
      for (std::uint32_t r : rows) {
        std::memcpy(dst + std::size_t{r} * w, in, w);
        in += w;
      }
  }
}

void ColumnStore::hash_into(Hasher& h) const {
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (!d.hashed) continue;
    h.word(rows_ * d.width);
    if (d.type == ColumnType::kString) {
      const StringColumn& s = columns_[c].strings;
      StringColumn::Buffer b;
      for (std::size_t i = 0; i < s.size(); ++i) h.text(s.view(i, b));
    } else if (rows_ > 0) {
      h.bytes(columns_[c].bytes.get(), rows_ * d.row_bytes());
    }
  }
}

void ColumnStore::add_row_digests(std::span<const std::uint32_t> keys,
                                  std::span<const std::uint8_t> take,
                                  std::span<std::uint64_t> sums) const {
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    const ColumnDesc& d = schema_[c];
    if (!d.hashed) continue;
    std::uint64_t sum = 0;
    const bool text = d.type == ColumnType::kString;
    const std::size_t n = text ? 0 : d.row_bytes();
    const std::byte* base = columns_[c].bytes.get();
    StringColumn::Buffer b;
    for (std::size_t r = 0; r < rows_; ++r) {
      if (!take.empty() && !take[r]) continue;
      Hasher h;
      h.word(keys[r]);
      h.word(c);
      if (text)
        for (std::size_t k = 0; k < d.width; ++k)
          h.text(columns_[c].strings.view(r * d.width + k, b));
      else
        h.bytes(base + r * n, n);
      sum += h.value();
    }
    sums[c] += sum;
  }
}

std::size_t ColumnStore::memory_bytes() const {
  std::size_t n = 0;
  for (std::size_t c = 0; c < schema_.size(); ++c) {
    if (schema_[c].type == ColumnType::kString) {
      n += columns_[c].strings.memory_bytes();
    } else {
      n += capacity_ * schema_[c].row_bytes();
    }
  }
  return n;
}

}  // namespace fleetsim
