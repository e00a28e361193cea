#include "sim/engine.hpp"

namespace clustersim::sim {

HandlerId Engine::add_handler(HandlerFn fn, void* context) {
  CLUSTERSIM_CHECK(fn != nullptr, "null handler");
  CLUSTERSIM_CHECK(handlers_.size() < 65536, "more than 65,536 handlers");
  handlers_.push_back(Handler{fn, context});
  return HandlerId{static_cast<std::uint16_t>(handlers_.size() - 1)};
}

bool Engine::cancel(EventHandle handle) {
  if (handle.seq == 0 || handle.seq >= next_seq_) return false;
  // Events leave the heap in (time, sequence) order, so an event at or before the last one
  // popped has already fired (or was dropped as cancelled).
  const std::int64_t t = handle.time.ns();
  if (t < last_time_ns_ || (t == last_time_ns_ && (handle.seq << 16) <= (last_key_ & ~std::uint64_t{0xFFFF}))) {
    return false;
  }
  return cancelled_.insert(handle.seq).second;
}

template <bool kBounded>
void Engine::run_loop(Time horizon) {
  stopped_ = false;
  while (!queue_.empty() && !stopped_) {
    if constexpr (kBounded) {
      if (queue_.top().time_ns > horizon.ns()) break;
    }
    const Event ev = queue_.pop();
    last_time_ns_ = ev.time_ns;
    last_key_ = ev.key;
    if (!cancelled_.empty() && cancelled_.erase(ev.key >> 16) > 0) continue;
    now_ = Time::from_ns(ev.time_ns);
    ++processed_;
    const Handler& h = handlers_[ev.key & 0xFFFF];
    h.fn(h.context, *this, ev.arg);
  }
  if constexpr (kBounded) {
    if (!stopped_ && horizon > now_) now_ = horizon;
  }
}

void Engine::run() { run_loop<false>(Time::max()); }

void Engine::run_until(Time horizon) { run_loop<true>(horizon); }

double Engine::bytes_per_pending_event() const {
  const std::size_t n = queue_.size();
  if (n == 0) return 0.0;
  return static_cast<double>(queue_.capacity() * kEventBytes) / static_cast<double>(n);
}

}  // namespace clustersim::sim
