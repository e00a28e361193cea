// The discrete-event engine: a clock, a pending-event set, and dispatch to handlers.
//
// Usage:
//
//   struct Arrivals {
//     void on_arrival(sim::Engine& e, std::uint64_t customer) { ... e.schedule_after(d, id, next); }
//     sim::HandlerId id;
//   } model;
//   sim::Engine engine;
//   model.id = engine.add_handler<&Arrivals::on_arrival>(model);
//   engine.schedule_at(Time::zero(), model.id, 0);
//   engine.run_until(Time::from_ns(...));
//
// An event is a 24-byte trivially-copyable record (time, sequence number and handler id
// packed in one word, one 64-bit argument). There is no std::function, no virtual call and
// no heap allocation per event: a model registers a handler once (a plain function pointer
// and a context pointer), and its payloads live in the model's own arrays, indexed by the
// argument. Events at the same time fire in the order they were scheduled (time, then
// sequence number), so a run is deterministic.
//
// The pending events are a RadixQueue (sim/radix_queue.hpp): since no event is scheduled
// before now(), the queue files events by the leading digits in which their time differs
// from the clock, and schedule and dispatch are O(1) amortized whatever the number pending
// (about 25-30 bytes per pending event; bytes_per_pending_event() reports it).
//
// Cancellation is lazy: `cancel(handle)` records the event's sequence number in a hash set,
// and the event is dropped when it reaches the front of the queue. A model that cancels very
// often (a timer re-armed on every step) can instead keep a generation counter in its payload
// and ignore stale events; both are O(1) to issue. Cancelled events far in the future would
// sit in the queue without end (a job's completion re-armed at each of 10^8 interruptions
// took GBs), so once they are at least kCompactAt and half the queue, the queue is rebuilt
// from its live events: O(queue), at most once per kCompactAt cancels, O(1) amortized.
//
// LIMITATIONS: at most 65,536 handlers per engine and 2^48 (2.8e14) events per run; a
// handler must not call run() or run_until() re-entrantly. One Engine per simulation, no
// globals: two engines may run in one process (e.g. sweep points on threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/check.hpp"
#include "sim/radix_queue.hpp"
#include "sim/time.hpp"

namespace clustersim::sim {

class Engine;

/// A registered event handler. Typed so that it cannot be confused with an argument.
struct HandlerId {
  std::uint16_t value = 0;
};

/// Names one scheduled event, for cancel(). Default-constructed: no event.
struct EventHandle {
  Time time = Time::zero();
  std::uint64_t seq = 0;
};

using HandlerFn = void (*)(void* context, Engine& engine, std::uint64_t arg);

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Registers `fn(context, engine, arg)` as a handler. `context` must outlive the run.
  HandlerId add_handler(HandlerFn fn, void* context);

  /// Registers `object.*Method(engine, arg)` as a handler.
  template <auto Method, class T>
  HandlerId add_handler(T& object) {
    return add_handler([](void* ctx, Engine& e, std::uint64_t arg) { (static_cast<T*>(ctx)->*Method)(e, arg); },
                       &object);
  }

  /// Schedules `handler(arg)` at absolute time `t` >= now(). O(1) amortized.
  EventHandle schedule_at(Time t, HandlerId handler, std::uint64_t arg = 0) {
    CLUSTERSIM_CHECK(t >= now_, "event scheduled in the past");
    CLUSTERSIM_CHECK(handler.value < handlers_.size(), "unknown handler id");
    CLUSTERSIM_CHECK(next_seq_ < (std::uint64_t{1} << 48), "event sequence numbers exhausted");
    const std::uint64_t seq = next_seq_++;
    queue_.push(Event{t.ns(), (seq << 16) | handler.value, arg});
    return EventHandle{t, seq};
  }

  /// Schedules `handler(arg)` at now() + delay, delay >= 0.
  EventHandle schedule_after(Time delay, HandlerId handler, std::uint64_t arg = 0) {
    return schedule_at(now_ + delay, handler, arg);
  }

  /// Cancels a pending event. Returns false if it already fired or was already cancelled,
  /// as long as the queue has not been rebuilt since (kCompactAt cancels later, a cancelled
  /// event is forgotten): a caller clears a handle once it has cancelled it. O(1) expected
  /// (amortized, counting the rebuilds).
  bool cancel(EventHandle handle);

  /// Processes events until none is pending or stop() is called.
  void run();

  /// Processes the events at times <= horizon, in order, then advances the clock to the
  /// horizon (unless stop() was called, which leaves the clock at the last event).
  void run_until(Time horizon);

  /// Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }
  /// Whether the last run()/run_until() returned because of stop().
  [[nodiscard]] bool stopped() const { return stopped_; }

  [[nodiscard]] Time now() const { return now_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size() - cancelled_.size(); }
  /// Events in the queue, the cancelled ones not yet dropped included.
  [[nodiscard]] std::size_t queued() const { return queue_.size(); }
  /// Cancelled events that make the queue rebuild itself when they are half of it.
  static constexpr std::size_t kCompactAt = std::size_t{1} << 16;
  [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
  [[nodiscard]] std::uint64_t events_scheduled() const { return next_seq_ - 1; }

  /// Reserves room for n pending events so the queue does not allocate during a run.
  void reserve(std::size_t n) { queue_.reserve(n); }
  /// Bytes allocated by the pending-event set per pending (not cancelled) event: every
  /// buffer of the queue at its capacity, its fixed part, and the cancellation set. 0 when
  /// nothing is pending.
  [[nodiscard]] double bytes_per_pending_event() const;

  /// The size of one event record in the queue.
  static constexpr std::size_t kEventBytes = 24;

 private:
  struct Event {
    std::int64_t time_ns;
    std::uint64_t key;  // sequence number << 16 | handler id: orders same-time events
    std::uint64_t arg;
  };
  static_assert(sizeof(Event) == kEventBytes);
  struct EventTime {
    std::uint64_t operator()(const Event& e) const { return static_cast<std::uint64_t>(e.time_ns); }
  };
  struct EventLess {
    // Branch-free (bitwise & and |), so the heap's child selection uses conditional moves.
    bool operator()(const Event& a, const Event& b) const {
      return (a.time_ns < b.time_ns) | ((a.time_ns == b.time_ns) & (a.key < b.key));
    }
  };
  struct Handler {
    HandlerFn fn;
    void* context;
  };

  // The sequence numbers of cancelled pending events (never 0): open addressing with
  // linear probing, Fibonacci hashing, load <= 1/2 and deletion by backward shift (no
  // tombstones), so insert and erase are O(1) expected, nothing is allocated per event
  // (the table only doubles), and its memory is exactly capacity x 8 bytes.
  class SeqSet {
   public:
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] std::size_t allocated_bytes() const { return capacity_ * sizeof(std::uint64_t); }
    /// Returns false if `key` was already present. Precondition: key != 0.
    bool insert(std::uint64_t key);
    /// Returns false if `key` was absent.
    bool erase(std::uint64_t key);

   private:
    [[nodiscard]] std::size_t home(std::uint64_t key) const {
      return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
    }
    void grow();

    std::unique_ptr<std::uint64_t[]> slots_;  // 0: empty slot
    std::size_t capacity_ = 0;                // 0 or a power of two
    std::size_t size_ = 0;
    unsigned shift_ = 64;                     // 64 - log2(capacity)
  };

  template <bool kBounded>
  void run_loop(Time horizon);
  /// Rebuilds the queue from its live events (see the header).
  void compact();

  RadixQueue<Event, EventTime, EventLess> queue_;
  std::vector<Handler> handlers_;
  SeqSet cancelled_;
  Time now_ = Time::zero();
  std::int64_t last_time_ns_ = -1;  // (time, key) of the last event popped
  std::uint64_t last_key_ = 0;
  std::uint64_t next_seq_ = 1;
  std::uint64_t processed_ = 0;
  bool stopped_ = false;
};

}  // namespace clustersim::sim
