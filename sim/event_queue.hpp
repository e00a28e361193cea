// A 4-ary min-heap over small trivially-copyable records: the engine's pending-event set.
//
// Why a 4-ary implicit heap: it keeps records contiguous in one array (no node per event,
// no pointer chasing), a node's four children share one or two cache lines, and the tree
// is half as deep as a binary heap's, so pop (the dominant cost in a hold workload) touches
// fewer cache lines. Sifting moves a hole instead of swapping, writing each record once.
//
//   operation  cost                      notes
//   push       O(log4 n), O(1) expected  when new times are later than most pending ones
//   pop        O(log4 n)                 ~log4(n) levels x (3 + 1) comparisons
//   top        O(1)
//   memory     sizeof(Record) per slot   the vector grows geometrically; reserve() to pin it
//
// `Less` must be a strict weak order that never ties for distinct records (the engine breaks
// time ties by a sequence number), so the pop order is fully deterministic.
// Measured against a bare copy of itself in tools/bench/bench_engine.cpp.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace clustersim::sim {

template <class Record, class Less>
class QuadHeap {
  static_assert(std::is_trivially_copyable_v<Record>, "heap records must be trivially copyable");

 public:
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  [[nodiscard]] std::size_t capacity() const { return items_.capacity(); }
  void reserve(std::size_t n) { items_.reserve(n); }
  void clear() { items_.clear(); }

  [[nodiscard]] const Record& top() const { return items_.front(); }

  void push(const Record& r) {
    items_.push_back(r);
    sift_up(items_.size() - 1, r);
  }

  /// Removes and returns the smallest record. Precondition: !empty().
  Record pop() {
    const Record result = items_.front();
    const Record last = items_.back();
    items_.pop_back();
    if (!items_.empty()) sift_down(0, last);
    return result;
  }

 private:
  void sift_up(std::size_t hole, const Record& r) {
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 4;
      if (!less_(r, items_[parent])) break;
      items_[hole] = items_[parent];
      hole = parent;
    }
    items_[hole] = r;
  }

  void sift_down(std::size_t hole, const Record& r) {
    const std::size_t n = items_.size();
    for (;;) {
      const std::size_t first = 4 * hole + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (less_(items_[c], items_[best])) best = c;
      }
      if (!less_(items_[best], r)) break;
      items_[hole] = items_[best];
      hole = best;
    }
    items_[hole] = r;
  }

  std::vector<Record> items_;
  [[no_unique_address]] Less less_{};
};

}  // namespace clustersim::sim
