#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"

using namespace clustersim::sim;
using namespace clustersim::sim::time_literals;

namespace {

// Records (time, arg) of each event it receives.
struct Recorder {
  void on_event(Engine& e, std::uint64_t arg) { seen.push_back({e.now().ns(), arg}); }
  std::vector<std::pair<std::int64_t, std::uint64_t>> seen;
};

}  // namespace

TEST_CASE("events fire in time order; same-time events in insertion order") {
  Engine engine;
  Recorder rec;
  const HandlerId h = engine.add_handler<&Recorder::on_event>(rec);
  engine.schedule_at(30_ns, h, 1);
  engine.schedule_at(10_ns, h, 2);
  engine.schedule_at(20_ns, h, 3);
  engine.schedule_at(10_ns, h, 4);
  engine.schedule_at(10_ns, h, 5);
  engine.run();
  const std::vector<std::pair<std::int64_t, std::uint64_t>> expected{
      {10, 2}, {10, 4}, {10, 5}, {20, 3}, {30, 1}};
  CHECK(rec.seen == expected);
  CHECK(engine.events_processed() == 5);
  CHECK(engine.pending() == 0);
}

TEST_CASE("a cancelled event never fires; cancelling twice or after firing is refused") {
  Engine engine;
  Recorder rec;
  const HandlerId h = engine.add_handler<&Recorder::on_event>(rec);
  const EventHandle a = engine.schedule_at(10_ns, h, 1);
  const EventHandle b = engine.schedule_at(20_ns, h, 2);
  engine.schedule_at(30_ns, h, 3);
  CHECK(engine.pending() == 3);
  CHECK(engine.cancel(b));
  CHECK_FALSE(engine.cancel(b));
  CHECK(engine.pending() == 2);
  engine.run_until(15_ns);
  CHECK_FALSE(engine.cancel(a));  // already fired
  engine.run();
  CHECK(rec.seen.size() == 2);
  CHECK(rec.seen[0].second == 1);
  CHECK(rec.seen[1].second == 3);
  CHECK_FALSE(engine.cancel(EventHandle{}));
}

TEST_CASE("run_until stops at the horizon and advances the clock to it") {
  Engine engine;
  Recorder rec;
  const HandlerId h = engine.add_handler<&Recorder::on_event>(rec);
  engine.schedule_at(5_s, h, 1);
  engine.schedule_at(15_s, h, 2);
  engine.run_until(10_s);
  CHECK(rec.seen.size() == 1);
  CHECK(engine.now() == 10_s);
  CHECK(engine.pending() == 1);
  // An event exactly at the horizon fires.
  engine.run_until(15_s);
  CHECK(rec.seen.size() == 2);
}

namespace {

// Reschedules itself `remaining` times with a fixed period, then stops the engine.
struct Ticker {
  void on_tick(Engine& e, std::uint64_t remaining) {
    ++ticks;
    if (remaining == 0) {
      e.stop();
      return;
    }
    e.schedule_after(period, id, remaining - 1);
  }
  Time period = 3_ns;
  HandlerId id;
  int ticks = 0;
};

}  // namespace

TEST_CASE("handlers schedule follow-ups; stop() ends the run after the current event") {
  Engine engine;
  Ticker t;
  t.id = engine.add_handler<&Ticker::on_tick>(t);
  Recorder later;
  const HandlerId h = engine.add_handler<&Recorder::on_event>(later);
  engine.schedule_at(0_ns, t.id, 4);
  engine.schedule_at(1_s, h, 0);
  engine.run();
  // ticks at 0, 3, 6, 9, 12 ns, then stop: the event at 1 s stays pending.
  CHECK(t.ticks == 5);
  CHECK(engine.now() == 12_ns);
  CHECK(engine.pending() == 1);
  CHECK(later.seen.empty());
}

TEST_CASE("time never goes back: scheduling in the past is an internal error") {
  Engine engine;
  Recorder rec;
  const HandlerId h = engine.add_handler<&Recorder::on_event>(rec);
  engine.schedule_at(10_ns, h, 0);
  engine.run();
  CHECK_THROWS_AS(engine.schedule_at(5_ns, h, 0), InternalError);
  CHECK_THROWS_AS(engine.schedule_at(5_ns, HandlerId{7}, 0), InternalError);
}

TEST_CASE("QuadHeap pops a pseudo-random sequence in sorted order") {
  struct Less { bool operator()(std::uint64_t a, std::uint64_t b) const { return a < b; } };
  QuadHeap<std::uint64_t, Less> heap;
  std::uint64_t x = 88172645463325252ULL;  // xorshift64 sequence
  std::vector<std::uint64_t> in;
  for (int i = 0; i < 5000; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    in.push_back(x % 1000);
    heap.push(x % 1000);
  }
  std::uint64_t prev = 0;
  std::size_t n = 0;
  while (!heap.empty()) {
    const std::uint64_t v = heap.pop();
    CHECK(v >= prev);
    prev = v;
    ++n;
  }
  CHECK(n == in.size());
}

TEST_CASE("two engines run independently in one process") {
  Engine a;
  Engine b;
  Recorder ra;
  Recorder rb;
  const HandlerId ha = a.add_handler<&Recorder::on_event>(ra);
  const HandlerId hb = b.add_handler<&Recorder::on_event>(rb);
  a.schedule_at(1_ns, ha, 1);
  b.schedule_at(2_ns, hb, 2);
  b.schedule_at(3_ns, hb, 3);
  a.run();
  CHECK(ra.seen.size() == 1);
  CHECK(b.pending() == 2);
  b.run();
  CHECK(rb.seen.size() == 2);
}
