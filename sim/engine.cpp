#include "sim/engine.hpp"

#include <bit>
#include <memory>
#include <utility>
#include <vector>

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
  if (!cancelled_.insert(handle.seq)) return false;
  CLUSTERSIM_CHECK(cancelled_.size() <= queue_.size(),
                   "an event cancelled again after the queue was rebuilt (a handle kept once cancelled)");
  if (cancelled_.size() >= kCompactAt && 2 * cancelled_.size() >= queue_.size()) compact();
  return true;
}

void Engine::compact() {
  // Every event leaves the old queue in (time, key) order; the live ones enter a new one,
  // which orders them the same way (the key holds the sequence number).
  std::vector<Event> live;
  live.reserve(queue_.size() - cancelled_.size());
  Event ev;
  while (queue_.pop_not_after(~std::uint64_t{0}, ev)) {
    if (!cancelled_.erase(ev.key >> 16)) live.push_back(ev);
  }
  CLUSTERSIM_CHECK(cancelled_.empty(), "a cancelled event that was not in the queue");
  // A fresh queue: the old one's clock has passed the events going back in (it takes none
  // before its last pop).
  std::destroy_at(&queue_);
  std::construct_at(&queue_);
  queue_.reserve(live.size());
  for (const Event& e : live) queue_.push(e);
}

template <bool kBounded>
void Engine::run_loop(Time horizon) {
  stopped_ = false;
  // Every pending time is >= now() >= 0, so a negative horizon fires nothing (and the clock
  // stays, being past it).
  if (kBounded && horizon.ns() < 0) return;
  const std::uint64_t limit = kBounded ? static_cast<std::uint64_t>(horizon.ns()) : ~std::uint64_t{0};
  Event ev;
  while (!stopped_ && queue_.pop_not_after(limit, ev)) {
    last_time_ns_ = ev.time_ns;
    last_key_ = ev.key;
    if (!cancelled_.empty() && cancelled_.erase(ev.key >> 16)) continue;
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
  const std::size_t n = pending();
  if (n == 0) return 0.0;
  return static_cast<double>(queue_.allocated_bytes() + cancelled_.allocated_bytes()) / static_cast<double>(n);
}

bool Engine::SeqSet::insert(std::uint64_t key) {
  if (2 * (size_ + 1) > capacity_) grow();
  const std::size_t mask = capacity_ - 1;
  for (std::size_t i = home(key);; i = (i + 1) & mask) {
    if (slots_[i] == key) return false;
    if (slots_[i] == 0) {
      slots_[i] = key;
      ++size_;
      return true;
    }
  }
}

bool Engine::SeqSet::erase(std::uint64_t key) {
  if (size_ == 0) return false;
  const std::size_t mask = capacity_ - 1;
  std::size_t i = home(key);
  while (slots_[i] != key) {
    if (slots_[i] == 0) return false;
    i = (i + 1) & mask;
  }
  // Backward-shift deletion: a later member of the probe run moves into the hole when the
  // hole lies cyclically between its home slot and its slot, i.e. when its distance from
  // home is at least its distance from the hole.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask; slots_[j] != 0; j = (j + 1) & mask) {
    const std::size_t h = home(slots_[j]);
    if (((j - h) & mask) >= ((j - hole) & mask)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = 0;
  --size_;
  return true;
}

void Engine::SeqSet::grow() {
  const std::size_t old_capacity = capacity_;
  std::unique_ptr<std::uint64_t[]> old = std::move(slots_);
  capacity_ = old_capacity == 0 ? 16 : 2 * old_capacity;
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity_));
  slots_ = std::make_unique<std::uint64_t[]>(capacity_);
  size_ = 0;
  for (std::size_t i = 0; i < old_capacity; ++i) {
    if (old[i] != 0) insert(old[i]);
  }
}

}  // namespace clustersim::sim
