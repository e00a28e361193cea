// bench_engine: the classic hold model on the event engine, against the practical limit.
//
// Hold model (Vaucher & Duval 1975; the standard pending-event-set benchmark): N events are
// pending; each step pops the earliest and schedules one new event at now + Exp(mean), so
// the pending count stays N. Two loops run the same model in one process:
//
//   engine  sim::Engine: 24-byte event records in its RadixQueue (sim/radix_queue.hpp),
//           dispatch through the handler table, the handler draws the increment and calls
//           schedule_after (the full API cost);
//   limit   a bare sim::QuadHeap of 16-byte (time, sequence) records, same draws, no
//           dispatch, no checks: the best any event loop on a 4-ary heap could do. The
//           engine's queue is O(1) amortized, so it can beat this limit, by more the more
//           events are pending.
//
// Each case prints one JSON line:
//   {"case":"hold","pending":N,"events_per_s":X,"limit_events_per_s":Y,"ratio":X/Y,
//    "bytes_per_event":B,"events":M}
// where bytes_per_event is Engine::bytes_per_pending_event(): every buffer of the engine's
// pending-event set at its allocated capacity, per pending event. Each figure is the median
// of 5 alternating timed runs of about `events` events after a warm-up. The increments are
// RandomStream::exponential draws (a ziggurat, about 6 ns) rounded to whole nanoseconds.
// Targets (release build, 2-core machine): >= 20 M events/s at 1e3 pending, >= 5 M at 1e6,
// ratio >= 0.6, bytes_per_event <= 32.
//
// Usage: bench_engine [--quick]   (--quick: fewer events, for a smoke test)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "sim/random.hpp"

namespace {

using clustersim::sim::Engine;
using clustersim::sim::HandlerId;
using clustersim::sim::QuadHeap;
using clustersim::sim::RandomStream;
using clustersim::sim::Time;

constexpr double kMeanIncrementNs = 1000.0;

std::int64_t draw_ns(RandomStream& rng) {
  return static_cast<std::int64_t>(std::llround(rng.exponential(kMeanIncrementNs)));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The model on the engine: every event schedules its successor.
struct Hold {
  void on_event(Engine& e, std::uint64_t arg) { e.schedule_after(Time::from_ns(draw_ns(rng)), id, arg); }
  RandomStream rng;
  HandlerId id;
};

struct EngineRun {
  double events_per_s;
  double bytes_per_event;
};

// Runs about `events` hold steps on a fresh engine holding `pending` events.
EngineRun run_engine(std::size_t pending, std::uint64_t events) {
  Engine engine;
  Hold hold{clustersim::sim::make_stream(1, "hold"), {}};
  hold.id = engine.add_handler<&Hold::on_event>(hold);
  for (std::size_t i = 0; i < pending; ++i) engine.schedule_at(Time::from_ns(draw_ns(hold.rng)), hold.id, i);
  // In steady state events fire at pending / mean per ns; warm up for a tenth of the run.
  const double rate_per_ns = static_cast<double>(pending) / kMeanIncrementNs;
  engine.run_until(Time::from_ns(static_cast<std::int64_t>(static_cast<double>(events) / 10 / rate_per_ns)));
  const std::uint64_t before = engine.events_processed();
  const Time horizon = engine.now() + Time::from_ns(static_cast<std::int64_t>(static_cast<double>(events) / rate_per_ns));
  const auto start = std::chrono::steady_clock::now();
  engine.run_until(horizon);
  const double wall = seconds_since(start);
  return {static_cast<double>(engine.events_processed() - before) / wall, engine.bytes_per_pending_event()};
}

struct Bare {
  std::int64_t time_ns;
  std::uint64_t seq;
};
struct BareLess {
  bool operator()(const Bare& a, const Bare& b) const {
    return (a.time_ns < b.time_ns) | ((a.time_ns == b.time_ns) & (a.seq < b.seq));
  }
};

double run_limit(std::size_t pending, std::uint64_t events) {
  QuadHeap<Bare, BareLess> heap;
  RandomStream rng = clustersim::sim::make_stream(1, "hold");
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < pending; ++i) heap.push(Bare{draw_ns(rng), seq++});
  const auto steps = [&](std::uint64_t n) {
    for (std::uint64_t k = 0; k < n; ++k) {
      const Bare e = heap.pop();
      heap.push(Bare{e.time_ns + draw_ns(rng), seq++});
    }
  };
  steps(events / 10);
  const auto start = std::chrono::steady_clock::now();
  steps(events);
  return static_cast<double>(events) / seconds_since(start);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::uint64_t events = quick ? 200'000 : 4'000'000;
  const int repeats = quick ? 1 : 5;
  for (std::size_t pending : {std::size_t{1'000}, std::size_t{100'000}, std::size_t{1'000'000}}) {
    std::vector<double> engine_rates;
    std::vector<double> limit_rates;
    double bytes = 0.0;
    for (int r = 0; r < repeats; ++r) {
      const EngineRun run = run_engine(pending, events);
      engine_rates.push_back(run.events_per_s);
      bytes = run.bytes_per_event;
      limit_rates.push_back(run_limit(pending, events));
    }
    const double x = median(engine_rates);
    const double y = median(limit_rates);
    fmt::print(R"({{"case":"hold","pending":{},"events_per_s":{:.0f},"limit_events_per_s":{:.0f},"ratio":{:.3f},"bytes_per_event":{:.1f},"events":{}}})"
               "\n",
               pending, x, y, x / y, bytes, events);
    std::fflush(stdout);
  }
  return 0;
}
