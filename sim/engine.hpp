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
// Cancellation is lazy: `cancel(handle)` records the event's sequence number, and the event
// is dropped when it reaches the top of the heap. A model that cancels very often (a timer
// re-armed on every step) can instead keep a generation counter in its payload and ignore
// stale events; both are O(1) to issue.
//
// LIMITATIONS: at most 65,536 handlers per engine and 2^48 (2.8e14) events per run; a
// handler must not call run() or run_until() re-entrantly. One Engine per simulation, no
// globals: two engines may run in one process (e.g. sweep points on threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "sim/check.hpp"
#include "sim/event_queue.hpp"
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

  /// Schedules `handler(arg)` at absolute time `t` >= now(). O(log n).
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

  /// Cancels a pending event. Returns false if it already fired or was already cancelled.
  /// O(1) expected.
  bool cancel(EventHandle handle);

  /// Processes events until none is pending or stop() is called.
  void run();

  /// Processes the events at times <= horizon, in order, then advances the clock to the
  /// horizon (unless stop() was called, which leaves the clock at the last event).
  void run_until(Time horizon);

  /// Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }

  [[nodiscard]] Time now() const { return now_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size() - cancelled_.size(); }
  [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
  [[nodiscard]] std::uint64_t events_scheduled() const { return next_seq_ - 1; }

  /// Reserves room for n pending events so the heap does not reallocate during a run.
  void reserve(std::size_t n) { queue_.reserve(n); }
  /// Bytes the pending-event set occupies per pending event (allocated capacity / pending).
  [[nodiscard]] double bytes_per_pending_event() const;

  /// The size of one event record in the heap.
  static constexpr std::size_t kEventBytes = 24;

 private:
  struct Event {
    std::int64_t time_ns;
    std::uint64_t key;  // sequence number << 16 | handler id: orders same-time events
    std::uint64_t arg;
  };
  static_assert(sizeof(Event) == kEventBytes);
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

  template <bool kBounded>
  void run_loop(Time horizon);

  QuadHeap<Event, EventLess> queue_;
  std::vector<Handler> handlers_;
  std::unordered_set<std::uint64_t> cancelled_;
  Time now_ = Time::zero();
  std::int64_t last_time_ns_ = -1;  // (time, key) of the last event popped
  std::uint64_t last_key_ = 0;
  std::uint64_t next_seq_ = 1;
  std::uint64_t processed_ = 0;
  bool stopped_ = false;
};

}  // namespace clustersim::sim
