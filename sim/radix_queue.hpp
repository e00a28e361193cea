// RadixQueue: the engine's pending-event set. A priority queue on integer times that
// never go back, with O(1) amortized push and pop.
//
// Usage:
//
//   RadixQueue<Event, EventTime, EventLess> q;  // EventTime(e): uint64 time; EventLess: (time, seq)
//   q.push(e);                                   // precondition: e's time >= the clock (below)
//   Event e;
//   while (q.pop_not_after(horizon, e)) { ... }  // earliest first, ties in insertion order
//
// Model. A discrete-event simulation never schedules before its clock, so the queue keeps a
// cursor c, a lower bound of every time it holds and will be given, and files a record of
// time t by the highest base-16 digit in which t differs from c:
//
//   level(t) = floor(log16(t XOR c))  (0 when t = c),    list(t) = (level(t), digit level(t) of t).
//
// This is a radix heap (Ahuja et al. 1990) with 16-way digits, or a hierarchical timing wheel
// (Varghese & Lauck 1987) that cascades lazily. Unlike a calendar queue (Brown 1988) or a
// ladder queue (Tang et al. 2005), it has no bucket width to fit to the event density (no
// resizing, no sampling): buckets are aligned blocks of 16^l ns at every scale at once, so
// a burst, a failure 54 days ahead and nanosecond steps cost the same. Invariants:
//
//   (I1) every record of list (l, j) agrees with c on the digits above l, and its digit l is
//        j >= digit l of c; j equals it only for c's own block of 16 times, which is filed
//        at level 1 (list digit 1 of c) unless level 0 is being drained (see push);
//   (I2) hence (l, j) before (l', j') in (level, digit) order implies every time in (l, j) is
//        smaller than every time in (l', j'): the earliest record is in the first non-empty
//        list, found with two count-trailing-zeros on bit masks;
//   (I3) filing depends on t and c only, and lists are FIFO, so same-time records share a
//        list in insertion order, and leave in insertion order.
//
// To pop when the front is empty, take the first non-empty list (l, j) and move c to its base
// b (digits of c above l, then j, then zeros), which by (I1) changes the filing of no other
// record. Then, by the list's size:
//   - a level-1 list (16 consecutive times) of at most kWindowMax records is counting-sorted
//     on digit 0 (stable, so ties keep their order) into the window, an array popped in order;
//   - a list of at most one chunk, at any level, is insertion-sorted by Less into the window
//     (a sparse list goes to the front at once instead of falling level by level);
//   - any other list is split: its records refiled relative to b, each at least one level
//     lower. A dense level-1 list goes to level 0, one time per list, popped FIFO, so a burst
//     of same-time events is never copied into the window.
// While the window covers the list's range [b, b + 16^l), a push into that range goes to a
// 4-ary side heap (QuadHeap, ordered by Less); pop takes the smaller of the window's front and
// the heap's top.
//
// Storage: each list is a circular singly-linked list of kChunkRecords-record chunks, named by
// its tail (whose link is the head); chunks come from one pool with a free list. Walking a list
// prefetches 32 records ahead, so long lists stream from memory.
//
// Time complexity (n pending records; times of w bits, w = 63 for the engine's int64 >= 0):
//
//   operation        amortized cost   reason
//   push             O(1)             one append to the tail chunk of list(t); O(log h) into a
//                                     side heap of h records if t falls in the window's range
//   pop_not_after    O(1)             each record is refiled at most ceil(w/4) - 1 times (each
//                                     split lowers it a level), then sorted once: the hold model
//                                     refiles about once per event. A call that returns false
//                                     leaves c at or below the horizon
//   size, empty      O(1)
//
// Memory (measured by allocated_bytes(); bench_engine prints it per pending event):
//
//   category          bytes                               reason
//   fixed             ~1.5 KB                             16 levels x 16 lists x (4 B tail + 1 B fill),
//                                                         masks, cursors, side heap header
//   per record        24 x (1 + 1/24) = 25                a record in a 4-record chunk + a 4 B link
//   per list          < 76                                the unfilled part of its tail chunk
//   high water        pool + 1/32, window, side heap      none of the buffers ever shrinks
//
// The hold benchmark (exponential increments) measures 30.0 B per event at 1e3 pending, 25.4
// at 1e5 and 25.5 at 1e6.
//
// LIMITATIONS:
//   - Less must order records by time, then by insertion order (the engine's sequence number):
//     the window's counting sort and level 0 keep insertion order, the side heap and the
//     insertion sort use Less, and the two must agree.
//   - Memory is the high-water mark: chunks of a burst return to the free list, not the system.
//   - Pushes landing in the window's range go to the side heap: a burst of many such pushes
//     (say, zero-delay events while the window holds a sparse list spanning a long range) costs
//     O(log h) each, as a plain heap would.
//   - At most 2^32 - 1 chunks (1.7e10 records).
//   - push() is strongly exception-safe; pop_not_after() may grow the pool while splitting a
//     list, and if that allocation fails (std::bad_alloc) the queue is left unusable.
//
// Validation: tests/sim/test_event_queue.cpp pops random workloads (ties, bursts, far-future
// and sparse times, bounded pops) and compares the order with std::priority_queue on
// (time, sequence), for several chunk and digit sizes; tools/bench/bench_engine.cpp measures
// the hold model against a bare 4-ary heap.
//
// References:
//   R. K. Ahuja, K. Mehlhorn, J. B. Orlin, R. E. Tarjan, "Faster algorithms for the shortest
//     path problem", J. ACM 37(2), 1990 (the radix heap).
//   G. Varghese, A. Lauck, "Hashed and hierarchical timing wheels: data structures for the
//     efficient implementation of a timer facility", SOSP 1987.
//   W. T. Tang, R. S. M. Goh, I. L.-J. Thng, "Ladder queue: an O(1) priority queue structure
//     for large-scale discrete event simulation", ACM TOMACS 15(3), 2005 (sort a small bucket
//     to the front rather than split it; the side heap plays the role of its Bottom inserts).
//   R. Brown, "Calendar queues: a fast O(1) priority queue implementation for the simulation
//     event set problem", CACM 31(10), 1988.
//   J. G. Vaucher, P. Duval, "A comparison of simulation event list algorithms", CACM 18(4),
//     1975 (the hold model).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "sim/check.hpp"
#include "sim/event_queue.hpp"

namespace clustersim::sim {

/// `TimeOf(record)` returns the record's time as std::uint64_t; `Less` is a strict order by
/// time, then insertion order (see LIMITATIONS). The defaults of the three sizes are the
/// engine's; the tests also run small ones, which exercise every path on small inputs.
template <class Record, class TimeOf, class Less, unsigned kChunkRecords = 4, unsigned kDigitBitsP = 4,
          unsigned kWindowMax = 256>
class RadixQueue {
  static_assert(std::is_trivially_copyable_v<Record>, "queue records must be trivially copyable");
  static_assert(std::is_trivially_default_constructible_v<Record>, "queue records must be trivial");
  static_assert(kChunkRecords >= 1 && kChunkRecords <= 65535);
  static_assert(kDigitBitsP >= 1 && kDigitBitsP <= 4, "list masks are 16 bits");

 public:
  static constexpr unsigned kDigitBits = kDigitBitsP;
  static constexpr unsigned kListsPerLevel = 1u << kDigitBits;
  static constexpr unsigned kLevels = (64 + kDigitBits - 1) / kDigitBits;

  RadixQueue() {
    for (auto& level : tails_) level.fill(kNil);
  }
  RadixQueue(const RadixQueue&) = delete;
  RadixQueue& operator=(const RadixQueue&) = delete;
  ~RadixQueue() {
    std::free(pool_);
    std::free(next_);
    std::free(window_);
  }

  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  /// Grows the chunk pool to hold n records in lists (plus a partly filled chunk per list),
  /// so that pushing up to n records allocates nothing.
  void reserve(std::size_t n) {
    const std::size_t want = (n + kChunkRecords - 1) / kChunkRecords + kLevels * kListsPerLevel;
    if (chunk_capacity_ < want) grow_pool(want);
  }

  /// Bytes allocated by the queue: the object itself (list tails, masks, cursors) plus the
  /// chunk pool and its links (chunks in use and free), the window and the side heap's buffer.
  [[nodiscard]] std::size_t allocated_bytes() const {
    return sizeof(*this) + chunk_capacity_ * (sizeof(Chunk) + sizeof(std::uint32_t)) +
           window_capacity_ * sizeof(Record) + side_.capacity() * sizeof(Record);
  }

  /// Inserts r. O(1). Precondition: TimeOf(r) >= every time popped so far and every horizon
  /// of a pop_not_after() that returned false (a simulation clock that never goes back);
  /// violating it is an internal error (the record would be filed before the cursor).
  void push(const Record& r) {
    const std::uint64_t t = time_of_(r);
    CLUSTERSIM_CHECK(t >= cursor_, "RadixQueue: push before the cursor");
    // Level 0 holds lists only while a dense level-1 list is drained; otherwise records of
    // the cursor's 16-time block go to that block's level-1 list (min_level 1).
    if (t < window_end_) {
      side_.push(r);
    } else {
      place(r, t, lists_mask_[0] != 0 ? 0u : 1u);
    }
    ++size_;
  }

  /// If the earliest record's time is <= horizon, removes it into `out` and returns true;
  /// otherwise returns false. Same-time records leave in insertion order. O(1) amortized.
  bool pop_not_after(std::uint64_t horizon, Record& out) {
    for (;;) {
      if (window_pos_ < window_size_) {
        const Record& w = window_[window_pos_];
        if (side_.empty() || less_(w, side_.top())) {
          if (time_of_(w) > horizon) return false;
          out = w;
          ++window_pos_;
          --size_;
          return true;
        }
        return pop_side(horizon, out);
      }
      if (!side_.empty()) return pop_side(horizon, out);
      if (lists_mask_[0] != 0) {
        const unsigned j = static_cast<unsigned>(std::countr_zero(lists_mask_[0]));
        if ((cursor_ | j) > horizon) return false;
        pop_front(j, out);
        --size_;
        return true;
      }
      if (!take(horizon)) return false;
    }
  }

 private:
  static constexpr std::uint32_t kNil = 0xFFFFFFFFu;

  // A list is a circular singly-linked list of chunks, named by its tail (next_[tail] is
  // the head). Every chunk but the tail is full; fills_ holds the tail's record count.
  struct Chunk {
    Record items[kChunkRecords];
  };
  using Fill = std::conditional_t<(kChunkRecords < 256), std::uint8_t, std::uint16_t>;

  // Grows the pool to at least n chunks, and by at least 1/32 (amortized O(1) per chunk;
  // realloc remaps large blocks rather than copying them). Chunk ids stay valid,
  // references into the pool do not.
  void grow_pool(std::size_t n) {
    std::size_t cap = chunk_capacity_ + std::max<std::size_t>(4, chunk_capacity_ / 32);
    if (cap < n) cap = n;
    CLUSTERSIM_CHECK(cap < kNil, "RadixQueue: more than 2^32 - 1 chunks");
    void* p = std::realloc(static_cast<void*>(pool_), cap * sizeof(Chunk));
    if (p == nullptr) throw std::bad_alloc();
    pool_ = static_cast<Chunk*>(p);
    p = std::realloc(static_cast<void*>(next_), cap * sizeof(std::uint32_t));
    if (p == nullptr) throw std::bad_alloc();
    next_ = static_cast<std::uint32_t*>(p);
    chunk_capacity_ = cap;
  }

  std::uint32_t acquire() {
    if (free_head_ != kNil) {
      const std::uint32_t id = free_head_;
      free_head_ = next_[id];
      return id;
    }
    if (chunk_count_ == chunk_capacity_) grow_pool(chunk_count_ + 1);
    return static_cast<std::uint32_t>(chunk_count_++);
  }

  void release(std::uint32_t id) {
    next_[id] = free_head_;
    free_head_ = id;
  }

  // Walks a list from its head, calling f(record) for each record in order, then releases
  // the list's chunks. A second cursor runs kAhead chunks in front and prefetches them,
  // so that walking a long list is not a chain of cache misses.
  template <class F>
  void consume(std::uint32_t tail, unsigned tail_fill, F&& f) {
    constexpr unsigned kAhead = std::max(2u, 32u / kChunkRecords);
    std::uint32_t ahead = next_[tail];
    for (unsigned k = 0; k < kAhead && ahead != tail; ++k) ahead = next_[ahead];
    for (std::uint32_t id = next_[tail];;) {
      if (ahead != tail) ahead = next_[ahead];
      __builtin_prefetch(&next_[ahead]);
      const char* p = reinterpret_cast<const char*>(&pool_[ahead]);
      for (std::size_t off = 0; off < sizeof(Chunk); off += 64) __builtin_prefetch(p + off);
      const unsigned n = id == tail ? tail_fill : kChunkRecords;
      for (unsigned i = 0; i < n; ++i) {
        const Record r = pool_[id].items[i];  // a copy: f may move the pool
        f(r);
      }
      const std::uint32_t next = next_[id];
      release(id);
      if (id == tail) break;
      id = next;
    }
  }

  bool pop_side(std::uint64_t horizon, Record& out) {
    if (time_of_(side_.top()) > horizon) return false;
    out = side_.pop();
    --size_;
    return true;
  }

  // Appends r to list(t) relative to the cursor, at level min_level or above.
  void place(const Record& r, std::uint64_t t, unsigned min_level) {
    const std::uint64_t x = t ^ cursor_;
    unsigned level = static_cast<unsigned>(std::bit_width(x | 1) - 1) / kDigitBits;
    level += static_cast<unsigned>(level < min_level);
    const unsigned shift = kDigitBits * level;
    const unsigned j = shift >= 64 ? 0u : static_cast<unsigned>(t >> shift) & (kListsPerLevel - 1);
    std::uint32_t& tail = tails_[level][j];
    Fill& fill = fills_[level][j];
    if (tail == kNil) {
      const std::uint32_t id = acquire();
      next_[id] = id;
      pool_[id].items[0] = r;
      tail = id;
      fill = 1;
      lists_mask_[level] = static_cast<std::uint16_t>(lists_mask_[level] | (1u << j));
      levels_mask_ |= std::uint64_t{1} << level;
      return;
    }
    if (fill == kChunkRecords) {
      const std::uint32_t id = acquire();
      next_[id] = next_[tail];
      next_[tail] = id;
      tail = id;
      fill = 0;
    }
    pool_[tail].items[fill++] = r;
  }

  void pop_front(unsigned j, Record& out) {
    std::uint32_t& tail = tails_[0][j];
    const std::uint32_t head = next_[tail];
    out = pool_[head].items[head_pos_[j]++];
    if (head_pos_[j] != (head == tail ? fills_[0][j] : kChunkRecords)) return;
    head_pos_[j] = 0;
    if (head == tail) {
      tail = kNil;
      lists_mask_[0] = static_cast<std::uint16_t>(lists_mask_[0] & ~(1u << j));
      if (lists_mask_[0] == 0) levels_mask_ &= ~std::uint64_t{1};
    } else {
      next_[tail] = next_[head];
    }
    release(head);
  }

  // The window, the side heap and level 0 are empty. Takes the earliest list into the
  // window, or splits it (see the header). Returns false, changing nothing, if there is
  // none or its range starts after `horizon`.
  bool take(std::uint64_t horizon) {
    if (levels_mask_ == 0) return false;
    const unsigned level = static_cast<unsigned>(std::countr_zero(levels_mask_));
    const unsigned j = static_cast<unsigned>(std::countr_zero(lists_mask_[level]));
    const unsigned shift = kDigitBits * level;
    const unsigned above_shift = shift + kDigitBits;
    const std::uint64_t above = above_shift >= 64 ? 0 : (cursor_ >> above_shift) << above_shift;
    const std::uint64_t base = above | (std::uint64_t{j} << shift);
    if (base > horizon) return false;
    cursor_ = base;
    const std::uint32_t tail = tails_[level][j];
    const unsigned tail_fill = fills_[level][j];
    tails_[level][j] = kNil;
    lists_mask_[level] = static_cast<std::uint16_t>(lists_mask_[level] & ~(1u << j));
    if (lists_mask_[level] == 0) levels_mask_ &= ~(std::uint64_t{1} << level);
    if (level == 1 ? sort_into_window(tail, tail_fill) : insert_into_window(tail, tail_fill)) {
      const std::uint64_t span = std::uint64_t{1} << shift;
      window_end_ = base + std::min(span, ~base);  // saturates at 2^64 - 1
      return true;
    }
    const unsigned min_level = level == 1 ? 0u : 1u;
    consume(tail, tail_fill, [&](const Record& r) { place(r, time_of_(r), min_level); });
    return true;
  }

  // A list of at most one chunk, from any level: insertion-sorted by Less into the window. Saves splitting a sparse list down level by level. Returns
  // false, changing nothing, if the list has more than one chunk.
  bool insert_into_window(std::uint32_t tail, unsigned tail_fill) {
    if (next_[tail] != tail) return false;
    if (window_capacity_ < tail_fill) grow_window(tail_fill);
    const Chunk& c = pool_[tail];
    for (unsigned i = 0; i < tail_fill; ++i) {
      unsigned k = i;
      while (k > 0 && less_(c.items[i], window_[k - 1])) {
        window_[k] = window_[k - 1];
        --k;
      }
      window_[k] = c.items[i];
    }
    release(tail);
    window_size_ = tail_fill;
    window_pos_ = 0;
    return true;
  }

  void grow_window(std::size_t n) {
    void* p = std::realloc(static_cast<void*>(window_), n * sizeof(Record));
    if (p == nullptr) throw std::bad_alloc();
    window_ = static_cast<Record*>(p);
    window_capacity_ = n;
  }

  // Stable counting sort of a level-1 list on the low digit (its records differ only
  // there), into the window. Returns false, changing nothing, if it has more than
  // kWindowMax records.
  bool sort_into_window(std::uint32_t tail, unsigned tail_fill) {
    std::array<std::uint32_t, kListsPerLevel> start{};
    std::size_t total = 0;
    for (std::uint32_t id = next_[tail];;) {
      const unsigned n = id == tail ? tail_fill : kChunkRecords;
      total += n;
      if (total > kWindowMax) return false;
      for (unsigned i = 0; i < n; ++i) ++start[time_of_(pool_[id].items[i]) & (kListsPerLevel - 1)];
      if (id == tail) break;
      id = next_[id];
    }
    std::uint32_t sum = 0;
    for (std::uint32_t& s : start) {
      const std::uint32_t count = s;
      s = sum;
      sum += count;
    }
    if (window_capacity_ < total) grow_window(total);
    consume(tail, tail_fill, [&](const Record& r) { window_[start[time_of_(r) & (kListsPerLevel - 1)]++] = r; });
    window_size_ = total;
    window_pos_ = 0;
    return true;
  }

  std::array<std::array<std::uint32_t, kListsPerLevel>, kLevels> tails_;
  std::array<std::array<Fill, kListsPerLevel>, kLevels> fills_{};
  std::array<std::uint16_t, kLevels> lists_mask_{};
  std::array<std::uint16_t, kListsPerLevel> head_pos_{};
  QuadHeap<Record, Less> side_;
  Chunk* pool_ = nullptr;
  std::uint32_t* next_ = nullptr;
  Record* window_ = nullptr;
  std::size_t chunk_capacity_ = 0;
  std::size_t chunk_count_ = 0;
  std::size_t window_capacity_ = 0;
  std::size_t window_size_ = 0;
  std::size_t window_pos_ = 0;
  std::uint64_t cursor_ = 0;
  std::uint64_t window_end_ = 0;
  std::size_t size_ = 0;
  std::uint32_t free_head_ = kNil;
  std::uint64_t levels_mask_ = 0;  // bit l: level l has a non-empty list
  [[no_unique_address]] TimeOf time_of_{};
  [[no_unique_address]] Less less_{};
};

}  // namespace clustersim::sim
