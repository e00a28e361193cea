// A 4-ary min-heap over small trivially-copyable records. The engine's RadixQueue uses it
// for the few events scheduled into the range it is currently sorting (its side heap), and
// bench_engine runs it bare as the reference an event loop is measured against.
//
// Why a 4-ary implicit heap: it keeps records contiguous in one array (no node per event,
// no pointer chasing), a node's four children share one or two cache lines, and the tree
// is half as deep as a binary heap's, so pop (the dominant cost in a hold workload) touches
// fewer cache lines. Sifting moves a hole instead of swapping, writing each record once.
//
//   operation  cost                      notes
//   push       O(log4 n), O(1) expected  when new times are later than most pending ones
//   pop        O(log4 n)                 bottom-up: log4(n) levels x 3 branch-free comparisons,
//                                        then a short sift-up
//   top        O(1)
//   memory     sizeof(Record) per slot   the vector grows geometrically; reserve() to pin it
//
// `Less` must be a strict weak order, ideally branch-free (compare with & and |, not && and
// ||) so that the child selection compiles to conditional moves, that never ties for distinct records (the engine breaks
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
    if (!items_.empty()) sift_down_bottom_up(last);
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

  // The index of the smaller of two records, without a branch (a conditional move).
  // Written as a mask rather than `?:` because compilers otherwise emit a branch here, and
  // these comparisons are unpredictable (a misprediction per level doubled the pop cost).
  std::size_t min_index(std::size_t a, std::size_t b) const {
    const std::size_t take_b = std::size_t{0} - static_cast<std::size_t>(less_(items_[b], items_[a]));
    return a ^ ((a ^ b) & take_b);
  }

  // Floyd's bottom-up deletion: walk the hole from the root down to a leaf, always through
  // the smallest child (three branch-free comparisons per full level, none against `r`),
  // then sift `r` (the former last record) up from there. In an event queue `r` is late and
  // belongs near the bottom, so the sift-up is short and the walk down costs fewer
  // comparisons than a classic sift-down.
  void sift_down_bottom_up(const Record& r) {
    const std::size_t n = items_.size();
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = 4 * hole + 1;
      if (first + 3 < n) {
        const std::size_t best = min_index(min_index(first, first + 1), min_index(first + 2, first + 3));
        items_[hole] = items_[best];
        hole = best;
        continue;
      }
      if (first < n) {
        std::size_t best = first;
        for (std::size_t c = first + 1; c < n; ++c) best = min_index(best, c);
        items_[hole] = items_[best];
        hole = best;
      }
      break;
    }
    sift_up(hole, r);
  }

  std::vector<Record> items_;
  [[no_unique_address]] Less less_{};
};

}  // namespace clustersim::sim
