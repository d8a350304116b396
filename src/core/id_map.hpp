#pragma once
// A value per entity id: one slot per id of the world (dense), or, on a process that holds
// only its part of a partitioned run (docs/distributed.md, "What a process holds"), slots for
// the ids it holds only (paged: pages of 1,024 consecutive ids, made when an id of theirs gets
// a value and dropped by retain() once none has one). A process's robots come in runs of ids
// (a tile's robots have consecutive ids), so its pages are mostly full; and its passes visit
// rows in id order, so they read the pages in order. Both forms answer the same calls; an id
// without a value reads as `none`.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "fleetsim/types.hpp"

namespace fleetsim {

template <class V>
class IdMap {
 public:
  /// `none`: what an id without a value reads (a move-only V reads V{}).
  explicit IdMap(V none = V{}) : none_(std::move(none)) {}
  IdMap(const IdMap& o) : none_(o.none_), paged_(o.paged_), dense_(o.dense_) { copy_pages(o); }
  IdMap& operator=(const IdMap& o) {
    if (this != &o) {
      none_ = o.none_;
      paged_ = o.paged_;
      dense_ = o.dense_;
      copy_pages(o);
    }
    return *this;
  }
  IdMap(IdMap&&) noexcept = default;
  IdMap& operator=(IdMap&&) noexcept = default;

  /// Slots for the ids held only (make_sparse).
  bool sparse() const { return paged_; }
  /// Bytes of storage, for the memory figures.
  std::size_t bytes() const {
    std::size_t b = dense_.capacity() * sizeof(V) + pages_.capacity() * sizeof(pages_[0]);
    for (const auto& p : pages_) b += p ? kPage * sizeof(V) : 0;
    return b;
  }

  /// The value of `id`, or null when it has none.
  const V* find(EntityId id) const {
    const V* v = slot_of(id);
    return v && !(*v == none_) ? v : nullptr;
  }
  V* find(EntityId id) { return const_cast<V*>(std::as_const(*this).find(id)); }
  /// Where `id`'s value is kept (dense: any id covered; paged: any id of a page made), or
  /// null. Distinct ids' slots may be written from different threads.
  V* slot(EntityId id) { return const_cast<V*>(std::as_const(*this).slot_of(id)); }
  /// The value of `id` (a copy), `none` when it has none.
  V get(EntityId id) const {
    const V* v = slot_of(id);
    return v ? *v : none_;
  }
  /// The value of `id`, its slot made first if need be.
  V& at(EntityId id) {
    if (!paged_) {
      if (id >= dense_.size()) cover(static_cast<std::size_t>(id) + 1);
      return dense_[id];
    }
    const std::size_t p = id >> kPageBits;
    if (p >= pages_.size()) pages_.resize(p + 1);
    if (!pages_[p]) {
      pages_[p] = std::make_unique<V[]>(kPage);
      for (std::size_t k = 0; k < kPage; ++k) pages_[p][k] = fresh();
    }
    return pages_[p][id & (kPage - 1)];
  }
  void set(EntityId id, V v) { at(id) = std::move(v); }
  /// `id` has no value any more (its page stays until retain()).
  void erase(EntityId id) {
    if (V* v = slot(id)) *v = fresh();
  }
  /// Room for ids below `end` (dense; paged pages come as needed).
  void reserve_ids(std::size_t end) {
    if (!paged_) dense_.reserve(end);
  }
  /// Ids below `end` get a slot (dense), reading `none`.
  void cover(std::size_t end) {
    if (paged_ || dense_.size() >= end) return;
    if constexpr (std::is_copy_constructible_v<V>)
      dense_.resize(end, none_);
    else
      dense_.resize(end);
  }
  /// Every id reads `none`.
  void clear() {
    dense_.clear();
    pages_.clear();
  }
  /// From now on slots for the ids held only: those `keep(id)` accepts keep their values.
  template <class Keep>
  void make_sparse(Keep keep) {
    if (paged_) {
      retain(keep);
      return;
    }
    std::vector<V> old;
    old.swap(dense_);
    paged_ = true;
    for (std::size_t id = 0; id < old.size(); ++id)
      if (!(old[id] == none_) && keep(static_cast<EntityId>(id)))
        at(static_cast<EntityId>(id)) = std::move(old[id]);
  }
  /// Drops the values of the ids `keep` refuses; paged, the pages left without a value go.
  template <class Keep>
  void retain(Keep keep) {
    for_each([&](EntityId id, V& v) {
      if (!keep(id)) v = fresh();
    });
    if (!paged_) return;
    for (auto& page : pages_) {
      if (!page) continue;
      bool empty = true;
      for (std::size_t k = 0; k < kPage && empty; ++k) empty = page[k] == none_;
      if (empty) page.reset();
    }
    while (!pages_.empty() && !pages_.back()) pages_.pop_back();
  }
  /// Calls f(id, value) for every id with a value, in increasing id order.
  template <class F>
  void for_each(F f) {
    if (!paged_) {
      for (std::size_t id = 0; id < dense_.size(); ++id)
        if (!(dense_[id] == none_)) f(static_cast<EntityId>(id), dense_[id]);
      return;
    }
    for (std::size_t p = 0; p < pages_.size(); ++p)
      if (pages_[p])
        for (std::size_t k = 0; k < kPage; ++k)
          if (!(pages_[p][k] == none_))
            f(static_cast<EntityId>((p << kPageBits) | k), pages_[p][k]);
  }

 private:
  static constexpr unsigned kPageBits = 10;
  static constexpr std::size_t kPage = std::size_t{1} << kPageBits;
  const V* slot_of(EntityId id) const {
    if (!paged_) return id < dense_.size() ? &dense_[id] : nullptr;
    const std::size_t p = id >> kPageBits;
    return p < pages_.size() && pages_[p] ? &pages_[p][id & (kPage - 1)] : nullptr;
  }
  V fresh() const {
    if constexpr (std::is_copy_constructible_v<V>)
      return none_;
    else
      return V{};
  }
  void copy_pages(const IdMap& o) {
    if constexpr (std::is_copy_constructible_v<V>) {
      pages_.clear();
      pages_.resize(o.pages_.size());
      for (std::size_t p = 0; p < o.pages_.size(); ++p)
        if (o.pages_[p]) {
          pages_[p] = std::make_unique<V[]>(kPage);
          std::copy(o.pages_[p].get(), o.pages_[p].get() + kPage, pages_[p].get());
        }
    }
  }

  V none_;
  bool paged_ = false;
  std::vector<V> dense_;
  std::vector<std::unique_ptr<V[]>> pages_;  ///< paged: one per 1,024 ids, null when none held
};

}  // namespace fleetsim
