// Weighted max-min fair sharing: progressive filling with an incremental replay.
// The model, the algorithm and its invariants are described in maxmin.hpp.
#include "sim/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace clustersim::sim {

namespace {

/// A hint that *p will be read soon (GCC and Clang; nothing elsewhere).
inline void prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Below this fraction of its value when the constraint was opened, a running sum of
// weights is recomputed rather than trusted (cancellation in repeated subtractions).
constexpr double kWeightSumRefresh = 1e-9;

[[noreturn]] void fail_argument(const char* function, const char* message, double got,
                                const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  char text[320];
  std::snprintf(text, sizeof text, "%s:%d: MaxMinSystem::%s: %s, got %.17g", file, line, function,
                message, got);
  throw std::invalid_argument(text);
}

[[noreturn]] void fail_state(const char* function, const char* message, std::uint32_t index,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  char text[320];
  std::snprintf(text, sizeof text, "%s:%d: MaxMinSystem::%s: %s #%u", file, line, function, message,
                static_cast<unsigned>(index));
  throw std::logic_error(text);
}

bool positive_finite(double x) { return std::isfinite(x) && x > 0.0; }

std::uint32_t to_u32(std::size_t n) { return static_cast<std::uint32_t>(n); }

}  // namespace

MaxMinSystem::MaxMinSystem(double change_tolerance) : change_tolerance_(change_tolerance) {
  if (!(change_tolerance >= 0.0 && change_tolerance <= 1e-3)) {
    fail_argument("MaxMinSystem", "change_tolerance must be in [0, 1e-3]", change_tolerance);
  }
}

// --- Ids and validation ------------------------------------------------------------------

void MaxMinSystem::check(ConstraintId c, const char* what) const {
  if (!contains(c)) fail_state(what, "no such constraint", c.index);
}

void MaxMinSystem::check(VariableId v, const char* what) const {
  if (!contains(v)) fail_state(what, "no such variable", v.index);
}

void MaxMinSystem::Variable::add_use(VariableUse u) {
  if (use_count < kInlineUses) {
    inline_uses[use_count] = u;
  } else {
    if (use_count == kInlineUses) overflow.assign(inline_uses, inline_uses + kInlineUses);
    overflow.push_back(u);
  }
  ++use_count;
}

// All the lines of v's record, its uses included.
void MaxMinSystem::prefetch_variable(std::uint32_t v) const {
  const char* p = reinterpret_cast<const char*>(&variables_[v]);
  for (std::size_t line = 0; line < sizeof(Variable); line += 64) prefetch(p + line);
}

bool MaxMinSystem::contains(ConstraintId c) const {
  return c.index < constraints_.size() && constraints_[c.index].alive;
}

bool MaxMinSystem::contains(VariableId v) const {
  return v.index < variables_.size() && variables_[v.index].alive;
}

void MaxMinSystem::mark_pending(std::uint32_t v) {
  if (!variables_[v].pending) {
    variables_[v].pending = true;
    pending_variables_.push_back(v);
  }
}

void MaxMinSystem::mark_pending_constraint(std::uint32_t c) {
  if (!constraints_[c].pending) {
    constraints_[c].pending = true;
    pending_constraints_.push_back(c);
  }
}

// --- Constraints -------------------------------------------------------------------------

ConstraintId MaxMinSystem::add_constraint(double capacity) {
  if (!positive_finite(capacity)) fail_argument("add_constraint", "capacity must be finite and > 0", capacity);
  std::uint32_t c;
  if (!free_constraints_.empty()) {
    c = free_constraints_.back();
    free_constraints_.pop_back();
  } else {
    c = to_u32(constraints_.size());
    if (c == kNone) fail_state("add_constraint", "too many constraints", c);
    constraints_.emplace_back();
    constraint_uses_.emplace_back();
  }
  Constraint& k = constraints_[c];
  const bool listed = k.pending;  // the slot may still be listed from a former life
  k = Constraint{};
  k.capacity = capacity;
  k.alive = true;
  k.pending = listed;
  ++constraint_count_;
  return ConstraintId{c};
}

void MaxMinSystem::set_capacity(ConstraintId c, double capacity) {
  check(c, "set_capacity");
  if (!positive_finite(capacity)) fail_argument("set_capacity", "capacity must be finite and > 0", capacity);
  constraints_[c.index].capacity = capacity;
  mark_pending_constraint(c.index);
}

void MaxMinSystem::remove_constraint(ConstraintId c) {
  check(c, "remove_constraint");
  if (!constraint_uses_[c.index].empty()) {
    fail_state("remove_constraint", "variables still use constraint", c.index);
  }
  constraints_[c.index].alive = false;
  free_constraints_.push_back(c.index);
  --constraint_count_;
}

// --- Variables ---------------------------------------------------------------------------

VariableId MaxMinSystem::add_variable(double weight, double bound) {
  if (!positive_finite(weight)) fail_argument("add_variable", "weight must be finite and > 0", weight);
  if (!(bound >= 0.0)) fail_argument("add_variable", "bound must be >= 0 (+inf for none)", bound);
  std::uint32_t v;
  if (!free_variables_.empty()) {
    v = free_variables_.back();
    free_variables_.pop_back();
  } else {
    v = to_u32(variables_.size());
    if (v == kNone) fail_state("add_variable", "too many variables", v);
    variables_.emplace_back();
  }
  Variable& x = variables_[v];
  const bool listed = x.pending;  // the slot may still be listed from a former life
  std::vector<VariableUse> overflow = std::move(x.overflow);  // empty, but keeps its capacity
  x = Variable{};
  x.overflow = std::move(overflow);
  x.weight = weight;
  x.bound = bound;
  x.alive = true;
  x.pending = listed;
  ++variable_count_;
  mark_pending(v);
  return VariableId{v};
}

void MaxMinSystem::set_weight(VariableId v, double weight) {
  check(v, "set_weight");
  if (!positive_finite(weight)) fail_argument("set_weight", "weight must be finite and > 0", weight);
  variables_[v.index].weight = weight;
  for (const VariableUse& u : variables_[v.index].uses()) {
    constraint_uses_[u.constraint][u.mirror].weighted = u.coefficient * weight;
  }
  mark_pending(v.index);
}

void MaxMinSystem::set_bound(VariableId v, double bound) {
  check(v, "set_bound");
  if (!(bound >= 0.0)) fail_argument("set_bound", "bound must be >= 0 (+inf for none)", bound);
  variables_[v.index].bound = bound;
  mark_pending(v.index);
}

void MaxMinSystem::expand(VariableId v, ConstraintId c, double coefficient) {
  check(v, "expand");
  check(c, "expand");
  if (!positive_finite(coefficient)) fail_argument("expand", "coefficient must be finite and > 0", coefficient);
  Variable& x = variables_[v.index];
  if (!std::isfinite(x.value)) {  // it had no constraint and no bound: it restarts from 0
    x.value = 0.0;
    x.level = 0.0;
  }
  // Usage stays the sum over the uses of coefficient * value (open_light() relies on it).
  constraints_[c.index].usage += coefficient * x.value;
  mark_pending(v.index);
  for (VariableUse& u : x.uses()) {
    if (u.constraint == c.index) {
      u.coefficient += coefficient;
      constraint_uses_[c.index][u.mirror].coefficient = u.coefficient;
      constraint_uses_[c.index][u.mirror].weighted = u.coefficient * x.weight;
      return;
    }
  }
  std::vector<ConstraintUse>& users = constraint_uses_[c.index];
  x.add_use(VariableUse{c.index, to_u32(users.size()), coefficient});
  users.push_back(ConstraintUse{v.index, x.use_count - 1, coefficient, coefficient * x.weight});
}

void MaxMinSystem::remove_variable(VariableId v) {
  check(v, "remove_variable");
  const double value = variables_[v.index].value;
  for (const VariableUse& u : variables_[v.index].uses()) {
    constraints_[u.constraint].usage -= u.coefficient * value;
    std::vector<ConstraintUse>& users = constraint_uses_[u.constraint];
    const ConstraintUse last = users.back();
    users.pop_back();
    if (u.mirror < users.size()) {  // fill the hole with the former last incidence
      users[u.mirror] = last;
      variables_[last.variable].uses()[last.mirror].mirror = u.mirror;
    }
    mark_pending_constraint(u.constraint);
  }
  variables_[v.index].use_count = 0;
  variables_[v.index].overflow.clear();
  variables_[v.index].alive = false;
  free_variables_.push_back(v.index);
  --variable_count_;
}

// --- Results -----------------------------------------------------------------------------

double MaxMinSystem::value(VariableId v) const {
  check(v, "value");
  return variables_[v.index].value;
}

double MaxMinSystem::usage(ConstraintId c) const {
  check(c, "usage");
  return constraints_[c.index].usage;
}

bool MaxMinSystem::saturated(ConstraintId c) const {
  check(c, "saturated");
  const Constraint& k = constraints_[c.index];
  return k.usage >= k.capacity * (1.0 - kSaturationTolerance);
}

std::optional<ConstraintId> MaxMinSystem::bottleneck(VariableId v) const {
  check(v, "bottleneck");
  const std::uint32_t b = variables_[v.index].bottleneck;
  if (b == kNone) return std::nullopt;
  return ConstraintId{b};
}

double MaxMinSystem::capacity(ConstraintId c) const {
  check(c, "capacity");
  return constraints_[c.index].capacity;
}

double MaxMinSystem::weight(VariableId v) const {
  check(v, "weight");
  return variables_[v.index].weight;
}

double MaxMinSystem::bound(VariableId v) const {
  check(v, "bound");
  return variables_[v.index].bound;
}

// --- Solving -----------------------------------------------------------------------------

void MaxMinSystem::solve() {
  // When a large part of the system is new or modified (the first solve, say), replaying
  // it piecewise costs more than filling it once.
  const bool most_changed = 4 * pending_variables_.size() >= variable_count_ && !pending_variables_.empty();
  // A solve cut short (an allocation that threw) left the system half solved and its list of
  // modifications spent: only a full solve is sure to repair it.
  sweep(most_changed || interrupted_);
}

void MaxMinSystem::solve_all() { sweep(true); }

void MaxMinSystem::begin_epoch() {
  if (++epoch_ == 0) {  // wrapped after 2^32 solves: forget every stale stamp
    for (Constraint& k : constraints_) k.epoch = 0;
    for (Variable& x : variables_) x.epoch = 0;
    epoch_ = 1;
  }
}

// One filling. In a full solve every variable is free and every constraint opened full at
// level 0. Otherwise only the modified variables are freed and only their constraints and
// the modified constraints are opened; the rest is reached, if at all, as the water rises.
void MaxMinSystem::sweep(bool full) {
  interrupted_ = true;  // until the filling ends
  bulk_ = false;
  begin_epoch();
  stats_ = MaxMinSolveStats{};
  stats_.full = full;
  opened_.clear();
  changed_.clear();
  for (const HeapEntry& e : heap_) heap_pos_[e.constraint] = kNone;  // left by an interrupted solve
  heap_.clear();
  if (heap_pos_.size() < constraints_.size()) heap_pos_.resize(constraints_.size(), kNone);
  events_.clear();

  if (full) {
    // Every variable and constraint enters at level 0: append the heap entries, then
    // heapify once (O(n) rather than O(n log n)).
    bulk_ = true;
    for (std::uint32_t v = 0; v < variables_.size(); ++v) {
      if (variables_[v].alive) free_variable(v, 0.0);
    }
    for (std::uint32_t c = 0; c < constraints_.size(); ++c) {
      if (constraints_[c].alive) open_full(c, 0.0);
    }
    bulk_ = false;
    std::make_heap(events_.begin(), events_.end(), kEventAfter);
    std::make_heap(heap_.begin(), heap_.end(), kEntryAfter);
    for (std::uint32_t i = 0; i < heap_.size(); ++i) heap_pos_[heap_[i].constraint] = i;
  } else {
    // Free all modified variables first, so that a constraint opened in full counts them
    // all as free; then let each one's constraints know it grows.
    for (const std::uint32_t v : pending_variables_) {
      if (variables_[v].alive) free_variable(v, 0.0);
    }
    for (const std::uint32_t v : pending_variables_) {
      if (variables_[v].alive && variables_[v].state == VarState::kFree) start_growing(v, 0.0);
    }
    for (const std::uint32_t c : pending_constraints_) {
      if (constraints_[c].alive && constraints_[c].epoch != epoch_ && open(c, 0.0)) schedule(c, 0.0);
    }
  }
  for (const std::uint32_t v : pending_variables_) variables_[v].pending = false;
  for (const std::uint32_t c : pending_constraints_) constraints_[c].pending = false;
  pending_variables_.clear();
  pending_constraints_.clear();

  // Raise the water: the next event is the lowest of a variable event (a check of an old
  // value, a bound) and a constraint entry. Constraint keys are lower bounds (levels only
  // rise as variables get fixed), so the top entry's key is raised in place when its
  // constraint's level has risen meanwhile. Variable events win ties, so that a variable
  // confirmed at its old level does not look changed.
  while (!heap_.empty() || !events_.empty()) {
    if (!events_.empty() && (heap_.empty() || events_.front().level <= heap_.front().level)) {
      const VarEvent e = pop_event();
      const VarState state = variables_[e.variable].state;
      if (e.kind == EventKind::kCheck) {
        if (state == VarState::kPending) on_check(e.variable, e.level);
      } else if (state == VarState::kFree) {
        fix(e.variable, e.level, kNone, e.level);
      }
      continue;
    }
    const HeapEntry e = heap_.front();
    if (constraints_[e.constraint].finished) {  // (cannot happen: finished ones leave at once)
      pop_constraint();
      continue;
    }
    const double level = level_of(e.constraint, e.level);
    if (level > e.level && std::isfinite(level)) {
      raise_top(level);
      continue;
    }
    pop_constraint();
    if (level > e.level) {
      continue;  // nothing on it grows any more
    } else if (constraints_[e.constraint].mode == Mode::kLight) {
      open_full(e.constraint, e.level);
    } else {
      saturate(e.constraint, e.level);
    }
  }

  // A full constraint's usage is a fresh sum of its variables' final values (open_full()
  // summed the fixed ones, fix() added the others), so it carries no drift; a light one,
  // whose variables are all fixed now, has it in its running sum.
  for (const ConstraintId c : opened_) {
    Constraint& k = constraints_[c.index];
    if (k.mode == Mode::kLight) k.usage = k.capacity - k.remaining;
  }
  interrupted_ = false;
}

// Variable v grows with the water from level `now` on, whatever its old value. Telling its
// constraints is the caller's business.
void MaxMinSystem::free_variable(std::uint32_t v, double now) {
  Variable& x = variables_[v];
  x.epoch = epoch_;
  x.state = VarState::kFree;
  if (x.use_count == 0) {  // nothing to share: it gets its bound
    x.value = x.bound;
    x.level = x.bound / x.weight;
    x.bottleneck = kNone;
    x.state = VarState::kFixed;
    ++stats_.variables;
    changed_.push_back(VariableId{v});
    return;
  }
  if (std::isfinite(x.bound)) push_event(std::max(now, x.bound / x.weight), v, EventKind::kBound);
}

// Bring closed constraint c into this solve because one of its variables changes: a
// binding constraint is replayed in full; one that fixed nobody only matters if it runs
// full, which a light watch detects. Returns true when c is light: the caller then applies
// its variable's change to c's sums (a full one has counted it already).
bool MaxMinSystem::open(std::uint32_t c, double now) {
  if (constraints_[c].binding) {
    open_full(c, now);
    return false;
  }
  return open_light(c, now);
}

// Recompute constraint c's sums at water level `now` (c closed or light). Variables fixed
// in this solve count with their new values; untouched variables below `now` keep their
// values for good (fact 2 of the header); untouched ones at or above it get a check at
// their old level (fact 3). O(uses of c).
void MaxMinSystem::open_full(std::uint32_t c, double now) {
  Constraint& k = constraints_[c];
  if (k.epoch != epoch_) {
    k.epoch = epoch_;
    opened_.push_back(ConstraintId{c});
    ++stats_.constraints;
  }
  ++stats_.replayed;
  k.mode = Mode::kFull;
  k.finished = false;
  k.binding = false;

  double used = 0.0;
  double weight_sum = 0.0;
  std::uint32_t unfixed = 0;
  if (bulk_) {
    // The start of a full sweep: every variable on c is free (one without constraints
    // is on none), so c's sums need no look at the variables.
    for (const ConstraintUse& u : constraint_uses_[c]) weight_sum += u.weighted;
    k.remaining = k.capacity;
    k.usage = 0.0;
    k.weight_sum = weight_sum;
    k.weight_scale = weight_sum;
    k.unfixed = to_u32(constraint_uses_[c].size());
    k.finished = k.unfixed == 0;
    if (!k.finished) schedule(c, now);
    return;
  }
  for (const ConstraintUse& u : constraint_uses_[c]) prefetch(&variables_[u.variable]);
  for (const ConstraintUse& u : constraint_uses_[c]) {
    Variable& x = variables_[u.variable];
    if (x.epoch != epoch_) {
      if (x.level < now) {
        used += u.coefficient * x.value;
        if (x.bottleneck == c) k.binding = true;  // keep the invariant, even off by rounding
        continue;
      }
      x.epoch = epoch_;
      x.state = VarState::kPending;
      push_event(x.level, u.variable, EventKind::kCheck);
    }
    if (x.state == VarState::kFixed) {
      used += u.coefficient * x.value;
    } else {
      weight_sum += u.coefficient * x.weight;
      ++unfixed;
    }
  }
  k.remaining = k.capacity - used;
  k.usage = used;  // the fixed part; fix() adds the others as they are fixed
  k.weight_sum = weight_sum;
  k.weight_scale = weight_sum;
  k.unfixed = unfixed;
  if (unfixed == 0) {
    k.finished = true;
    erase_constraint(c);  // light until now, it may have an entry
    return;
  }
  schedule(c, now);
}

// Watch closed constraint c, which fixed nobody. Its sums start from its usage (kept equal
// to the sum over its uses by removals and expansions): every variable counts with its old
// value, an upper bound of its contribution at any level. The caller then applies the
// change that opened it, and later changes arrive the same way (fix(), start_growing()): a
// variable that grows moves from the fixed part to the weight sum. The level found is a
// lower bound of the level at which c could run full; reaching it opens c in full. If c
// never gets there, nobody on it was looked at: O(1) instead of a scan.
// Returns false when c had to be opened in full at once.
bool MaxMinSystem::open_light(std::uint32_t c, double now) {
  Constraint& k = constraints_[c];
  k.epoch = epoch_;
  opened_.push_back(ConstraintId{c});
  ++stats_.constraints;
  k.remaining = k.capacity - k.usage;
  if (k.remaining < 0.0) {  // already over capacity (a capacity cut): replay in full
    open_full(c, now);
    return false;
  }
  k.mode = Mode::kLight;
  k.finished = false;
  k.weight_sum = 0.0;
  k.weight_scale = 0.0;
  k.unfixed = 0;
  return true;
}

// Variable v, counted so far with its value of the last solve, grows from `now` on: its
// light constraints move it to their weight sums, closed ones are opened.
void MaxMinSystem::start_growing(std::uint32_t v, double now) {
  const Variable& x = variables_[v];
  // As in fix(): ask for the constraint records, and for their lists of uses (open_full()
  // reads them), before reading the first.
  for (const VariableUse& u : x.uses()) {
    prefetch(&constraints_[u.constraint]);
    prefetch(&constraint_uses_[u.constraint]);
  }
  for (const VariableUse& u : x.uses()) {
    Constraint& k = constraints_[u.constraint];
    if (k.epoch != epoch_) {
      if (!open(u.constraint, now)) continue;
    } else if (k.mode == Mode::kFull) {
      continue;  // a full constraint counts it as unfixed already
    }
    k.remaining += u.coefficient * x.value;
    k.weight_sum += u.coefficient * x.weight;
    k.weight_scale = std::max(k.weight_scale, k.weight_sum);
    ++k.unfixed;
    schedule(u.constraint, now);
  }
}

// The water reached the old level of pending variable v. If the event that fixed it then
// still stands (its bound, an unopened bottleneck, or an opened one about to run full at
// this very level), v keeps its value; otherwise v is freed and its constraints learn it.
void MaxMinSystem::on_check(std::uint32_t v, double now) {
  const Variable& x = variables_[v];
  bool keep = true;
  if (x.bottleneck != kNone) {
    Constraint& b = constraints_[x.bottleneck];
    if (b.epoch == epoch_) {
      if (b.mode == Mode::kLight) {
        keep = false;  // cannot happen (a bottleneck is binding); replaying is always safe
      } else if (!b.finished) {
        const double level = level_of(x.bottleneck, now);
        keep = level <= now || same_level(level, now);
        if (keep) b.binding = true;
      }
    }
  }
  if (keep) {
    fix(v, x.level, x.bottleneck, now);
    return;
  }
  free_variable(v, now);
  start_growing(v, now);
}

// Fix variable v at `level` (x = level * w, or its bound when `bottleneck` is kNone) while
// the water is at `now`. A pending variable that lands on its old level keeps its old
// value exactly, and its closed constraints stay closed; otherwise its constraints learn
// the new value, closed ones being opened.
void MaxMinSystem::fix(std::uint32_t v, double level, std::uint32_t bottleneck, double now) {
  Variable& x = variables_[v];
  const bool was_pending = x.state == VarState::kPending;
  x.state = VarState::kFixed;
  ++stats_.variables;
  const double old_value = x.value;
  const bool changed = !(was_pending && same_level(level, x.level));
  if (changed) {
    x.level = level;
    x.value = bottleneck == kNone ? x.bound : level * x.weight;
    changed_.push_back(VariableId{v});
  }
  x.bottleneck = bottleneck;
  // The constraint records are scattered: ask for all of them before reading the first, so
  // that their cache misses overlap instead of following one another.
  for (const VariableUse& u : x.uses()) prefetch(&constraints_[u.constraint]);
  for (const VariableUse& u : x.uses()) {
    Constraint& k = constraints_[u.constraint];
    if (k.epoch != epoch_) {
      // Closed: v counted there with its old value; unchanged, nothing to tell.
      if (!changed || !open(u.constraint, now)) continue;
    }
    if (k.mode == Mode::kLight && was_pending) {  // it counted with its old value
      if (!changed) continue;
      k.remaining -= u.coefficient * (x.value - old_value);
      if (k.remaining < 0.0) {
        open_full(u.constraint, now);  // cannot happen (a pending variable only drops)
      } else if (x.value > old_value) {
        schedule(u.constraint, now);
      }
      continue;
    }
    // A full constraint counted it as unfixed: its usage gains its final value.
    if (k.mode == Mode::kFull) k.usage += u.coefficient * x.value;
    if (k.finished) continue;
    // It counted as growing: it leaves the sums, and the level can only rise.
    k.remaining -= u.coefficient * x.value;
    k.weight_sum -= u.coefficient * x.weight;
    if (--k.unfixed == 0) {
      if (k.mode == Mode::kFull) k.finished = true;
      erase_constraint(u.constraint);  // no level any more
    } else if (k.weight_sum <= k.weight_scale * kWeightSumRefresh) {
      refresh_weight_sum(u.constraint);
    }
  }
}

// Constraint c runs full at `level`: every variable still unfixed on it is fixed there.
void MaxMinSystem::saturate(std::uint32_t c, double level) {
  constraints_[c].finished = true;
  constraints_[c].binding = true;
  // As in fix(), the cache misses are made to overlap: the variables' first lines (their
  // state), then the rest of the records of those still growing (their uses: in an
  // incremental solve most of c's variables are fixed already or untouched), then those
  // uses' constraints with the heads of their own lists of uses (which fix() reads when it
  // opens one in full).
  const std::vector<ConstraintUse>& users = constraint_uses_[c];
  for (const ConstraintUse& u : users) prefetch(&variables_[u.variable]);
  growing_.clear();
  for (const ConstraintUse& u : users) {
    const Variable& x = variables_[u.variable];
    if (x.epoch == epoch_ && x.state != VarState::kFixed) {
      growing_.push_back(u.variable);
      prefetch_variable(u.variable);
    }
  }
  for (const std::uint32_t v : growing_) {
    for (const VariableUse& w : variables_[v].uses()) {
      prefetch(&constraints_[w.constraint]);
      prefetch(&constraint_uses_[w.constraint]);
    }
  }
  // Fixing one variable leaves the others' states alone, and pulls none of c's other
  // variables in: c was opened full at a level no higher than this one, which pulled in
  // every variable of c at or above it, and those it left lie below that level, where no
  // later opening reaches them. So growing_ stays the list to fix.
  for (const std::uint32_t v : growing_) fix(v, level, c, level);
}

// Re-sum the weights of the variables counted growing on c, after cancellation.
void MaxMinSystem::refresh_weight_sum(std::uint32_t c) {
  Constraint& k = constraints_[c];
  double sum = 0.0;
  for (const ConstraintUse& u : constraint_uses_[c]) {
    const Variable& x = variables_[u.variable];
    if (x.epoch != epoch_) continue;
    const bool growing = k.mode == Mode::kFull ? x.state != VarState::kFixed : x.state == VarState::kFree;
    if (growing) sum += u.coefficient * x.weight;
  }
  k.weight_sum = sum;
  k.weight_scale = sum;
}

// The level at which opened constraint c runs full given what is fixed so far, never
// below `now`; +inf when nothing on it grows.
double MaxMinSystem::level_of(std::uint32_t c, double now) const {
  const Constraint& k = constraints_[c];
  if (k.unfixed == 0) return kInfinity;
  if (k.remaining <= 0.0 || k.weight_sum <= 0.0) return now;
  return std::max(now, k.remaining / k.weight_sum);
}

// Put c in the heap at its current level, or take it out when nothing on it grows.
void MaxMinSystem::schedule(std::uint32_t c, double now) {
  const double level = level_of(c, now);
  if (!std::isfinite(level)) {
    erase_constraint(c);
  } else if (heap_pos_[c] == kNone) {
    push_constraint(HeapEntry{level, c});
  } else {
    const std::uint32_t i = heap_pos_[c];
    const double old = heap_[i].level;
    heap_[i].level = level;
    if (level < old) {
      sift_up(i);
    } else if (level > old) {
      sift_down(i);
    }
  }
}

bool MaxMinSystem::same_level(double a, double b) const {
  return a == b || std::fabs(a - b) <= change_tolerance_ * std::max(std::fabs(a), std::fabs(b));
}

// --- Heaps -------------------------------------------------------------------------------

// While bulk_ (the start of a full sweep), entries are only appended; sweep() heapifies.
void MaxMinSystem::push_event(double level, std::uint32_t v, EventKind kind) {
  events_.push_back(VarEvent{level, v, kind});
  if (!bulk_) std::push_heap(events_.begin(), events_.end(), kEventAfter);
}

MaxMinSystem::VarEvent MaxMinSystem::pop_event() {
  std::pop_heap(events_.begin(), events_.end(), kEventAfter);
  const VarEvent e = events_.back();
  events_.pop_back();
  // The next events' variables are read soon: ask for the records of the next three (the
  // next one's and those of the children of the top) while this one is handled.
  for (std::size_t i = 0; i < std::min<std::size_t>(events_.size(), 3); ++i) prefetch_variable(events_[i].variable);
  return e;
}

// The constraint heap is indexed: heap_pos_[c] is c's entry, kNone when it has none, so a
// constraint has one entry at most and its key moves in place (no stale entries to pop).
void MaxMinSystem::push_constraint(HeapEntry e) {
  const auto i = to_u32(heap_.size());
  heap_.push_back(e);
  heap_pos_[e.constraint] = i;
  if (!bulk_) sift_up(i);
}

void MaxMinSystem::pop_constraint() { erase_at(0); }

void MaxMinSystem::erase_constraint(std::uint32_t c) {
  if (heap_pos_[c] != kNone) erase_at(heap_pos_[c]);
}

void MaxMinSystem::erase_at(std::uint32_t i) {
  heap_pos_[heap_[i].constraint] = kNone;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  const double old = heap_[i].level;
  heap_[i] = last;
  heap_pos_[last.constraint] = i;
  if (last.level < old) {
    sift_up(i);
  } else {
    sift_down(i);
  }
  // The next entries' constraints are read soon (sweep() computes their levels).
  for (std::size_t j = 0; j < std::min<std::size_t>(heap_.size(), 3); ++j) prefetch(&constraints_[heap_[j].constraint]);
}

void MaxMinSystem::raise_top(double level) {
  heap_.front().level = level;
  sift_down(0);
}

void MaxMinSystem::sift_up(std::uint32_t i) {
  const HeapEntry e = heap_[i];
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!(e.level < heap_[parent].level)) break;
    heap_[i] = heap_[parent];
    heap_pos_[heap_[i].constraint] = i;
    i = parent;
  }
  heap_[i] = e;
  heap_pos_[e.constraint] = i;
}

void MaxMinSystem::sift_down(std::uint32_t i) {
  const HeapEntry e = heap_[i];
  const auto n = to_u32(heap_.size());
  for (;;) {
    std::uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1].level < heap_[child].level) ++child;
    if (!(heap_[child].level < e.level)) break;
    heap_[i] = heap_[child];
    heap_pos_[heap_[i].constraint] = i;
    i = child;
  }
  heap_[i] = e;
  heap_pos_[e.constraint] = i;
}

}  // namespace clustersim::sim
