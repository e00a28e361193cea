// Weighted max-min fair sharing: progressive filling with an incremental replay.
// The model, the algorithm and its invariants are described in maxmin.hpp.
#include "sim/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace clustersim::sim {

namespace {

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
    constraint_sweep_.emplace_back();
  }
  Constraint& k = constraints_[c];
  k.capacity = capacity;
  k.usage = 0.0;
  k.alive = true;  // `pending` is kept: the slot may still be listed from a former life
  constraint_sweep_[c] = ConstraintSweep{};
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
    variable_uses_.emplace_back();
    variable_sweep_.emplace_back();
  }
  Variable& x = variables_[v];
  x.weight = weight;
  x.bound = bound;
  x.value = 0.0;
  x.level = 0.0;
  x.bottleneck = kNone;
  x.alive = true;  // `pending` is kept: the slot may still be listed from a former life
  variable_sweep_[v] = VariableSweep{};
  ++variable_count_;
  mark_pending(v);
  return VariableId{v};
}

void MaxMinSystem::set_weight(VariableId v, double weight) {
  check(v, "set_weight");
  if (!positive_finite(weight)) fail_argument("set_weight", "weight must be finite and > 0", weight);
  variables_[v.index].weight = weight;
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
  std::vector<VariableUse>& uses = variable_uses_[v.index];
  for (VariableUse& u : uses) {
    if (u.constraint == c.index) {
      u.coefficient += coefficient;
      constraint_uses_[c.index][u.mirror].coefficient = u.coefficient;
      mark_pending(v.index);
      return;
    }
  }
  std::vector<ConstraintUse>& users = constraint_uses_[c.index];
  uses.push_back(VariableUse{c.index, to_u32(users.size()), coefficient});
  users.push_back(ConstraintUse{v.index, to_u32(uses.size() - 1), coefficient});
  mark_pending(v.index);
}

void MaxMinSystem::remove_variable(VariableId v) {
  check(v, "remove_variable");
  for (const VariableUse& u : variable_uses_[v.index]) {
    std::vector<ConstraintUse>& users = constraint_uses_[u.constraint];
    const ConstraintUse last = users.back();
    users.pop_back();
    if (u.mirror < users.size()) {  // fill the hole with the former last incidence
      users[u.mirror] = last;
      variable_uses_[last.variable][last.mirror].mirror = u.mirror;
    }
    mark_pending_constraint(u.constraint);
  }
  variable_uses_[v.index].clear();
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

void MaxMinSystem::solve() { sweep(false); }

void MaxMinSystem::solve_all() { sweep(true); }

void MaxMinSystem::begin_epoch() {
  if (++epoch_ == 0) {  // wrapped after 2^32 solves: forget every stale stamp
    for (ConstraintSweep& s : constraint_sweep_) s.epoch = 0;
    for (VariableSweep& s : variable_sweep_) s.epoch = 0;
    epoch_ = 1;
  }
}

// One filling. In a full solve every variable is free and every constraint opened at level
// 0. Otherwise only the modified variables are freed and only their constraints and the
// modified constraints are opened; the rest is reached, if at all, by open_constraint() and
// on_check() as the water rises.
void MaxMinSystem::sweep(bool full) {
  begin_epoch();
  stats_ = MaxMinSolveStats{};
  stats_.full = full;
  opened_.clear();
  heap_.clear();
  events_.clear();

  if (full) {
    for (std::uint32_t v = 0; v < variables_.size(); ++v) {
      if (variables_[v].alive) free_variable(v, 0.0);
    }
    for (std::uint32_t c = 0; c < constraints_.size(); ++c) {
      if (constraints_[c].alive) open_constraint(c, 0.0);
    }
  } else {
    // Free all modified variables first, so that opening their constraints counts them as
    // free rather than scheduling a check of their stale values.
    for (const std::uint32_t v : pending_variables_) {
      if (variables_[v].alive) free_variable(v, 0.0);
    }
    for (const std::uint32_t v : pending_variables_) {
      if (!variables_[v].alive) continue;
      for (const VariableUse& u : variable_uses_[v]) {
        if (constraint_sweep_[u.constraint].epoch != epoch_) open_constraint(u.constraint, 0.0);
      }
    }
    for (const std::uint32_t c : pending_constraints_) {
      if (constraints_[c].alive && constraint_sweep_[c].epoch != epoch_) open_constraint(c, 0.0);
    }
  }
  for (const std::uint32_t v : pending_variables_) variables_[v].pending = false;
  for (const std::uint32_t c : pending_constraints_) constraints_[c].pending = false;
  pending_variables_.clear();
  pending_constraints_.clear();

  // Raise the water: the next event is the lowest of a variable event (a check of an old
  // value, a bound) and a constraint running full. Variable events win ties, so that a
  // variable confirmed at its old level does not look changed.
  while (!heap_.empty() || !events_.empty()) {
    if (!events_.empty() &&
        (heap_.empty() || events_.front().level <= constraint_sweep_[heap_.front()].level)) {
      const VarEvent e = pop_event();
      const VariableSweep& s = variable_sweep_[e.variable];
      if (e.kind == EventKind::kCheck) {
        if (s.state == VarState::kPending) on_check(e.variable, e.level);
      } else if (s.state == VarState::kFree) {
        fix(e.variable, e.level, kNone, e.level);
      }
    } else {
      const std::uint32_t c = heap_.front();
      const double level = constraint_sweep_[c].level;
      heap_remove(c);
      saturate(c, level);
    }
  }

  // Usage is re-summed from the final values rather than accumulated, so it carries no
  // drift from one solve to the next.
  for (const std::uint32_t c : opened_) {
    double used = 0.0;
    for (const ConstraintUse& u : constraint_uses_[c]) used += u.coefficient * variables_[u.variable].value;
    constraints_[c].usage = used;
  }
}

// Variable v takes part in the filling from `level` on, whatever its old value.
void MaxMinSystem::free_variable(std::uint32_t v, double level) {
  VariableSweep& s = variable_sweep_[v];
  s.epoch = epoch_;
  s.state = VarState::kFree;
  Variable& x = variables_[v];
  if (variable_uses_[v].empty()) {  // nothing to share: it gets its bound
    x.value = x.bound;
    x.level = x.bound / x.weight;
    x.bottleneck = kNone;
    s.state = VarState::kFixed;
    ++stats_.variables;
    return;
  }
  if (std::isfinite(x.bound)) push_event(std::max(level, x.bound / x.weight), v, EventKind::kBound);
}

// Recompute constraint c's sums at water level `level`. Variables fixed in this solve count
// with their new values; untouched variables below `level` keep their values for good
// (fact 2 of the header); untouched ones at or above it get a check at their old level.
void MaxMinSystem::open_constraint(std::uint32_t c, double level) {
  ConstraintSweep& cs = constraint_sweep_[c];
  cs.epoch = epoch_;
  cs.finished = false;
  cs.heap_pos = kNone;
  opened_.push_back(c);
  ++stats_.constraints;

  double used = 0.0;
  double weight_sum = 0.0;
  std::uint32_t unfixed = 0;
  for (const ConstraintUse& u : constraint_uses_[c]) {
    const Variable& x = variables_[u.variable];
    VariableSweep& s = variable_sweep_[u.variable];
    if (s.epoch != epoch_) {
      if (x.level < level) {
        used += u.coefficient * x.value;
        continue;
      }
      s.epoch = epoch_;
      s.state = VarState::kPending;
      push_event(x.level, u.variable, EventKind::kCheck);
    }
    if (s.state == VarState::kFixed) {
      used += u.coefficient * x.value;
    } else {
      weight_sum += u.coefficient * x.weight;
      ++unfixed;
    }
  }
  cs.remaining = constraints_[c].capacity - used;
  cs.weight_sum = weight_sum;
  cs.weight_scale = weight_sum;
  cs.unfixed = unfixed;
  if (unfixed == 0) {
    cs.finished = true;
    return;
  }
  cs.level = std::max(level, cs.remaining / weight_sum);
  heap_push(c);
}

// The water reached the old level of pending variable v. If the event that fixed it then
// still stands (its bound, an unopened bottleneck, or an opened one about to run full at
// this very level), v keeps its value; otherwise v is freed and its constraints opened.
void MaxMinSystem::on_check(std::uint32_t v, double level) {
  const Variable& x = variables_[v];
  bool keep = true;
  if (x.bottleneck != kNone) {
    const ConstraintSweep& b = constraint_sweep_[x.bottleneck];
    if (b.epoch == epoch_ && !b.finished) keep = b.level <= level || same_level(b.level, level);
  }
  if (keep) {
    fix(v, x.level, x.bottleneck, level);
    return;
  }
  free_variable(v, level);
  for (const VariableUse& u : variable_uses_[v]) {
    if (constraint_sweep_[u.constraint].epoch != epoch_) open_constraint(u.constraint, level);
  }
}

// Fix variable v at `level` (x = level * w, or its bound when `bottleneck` is kNone) while
// the water is at `now`. A pending variable that lands on its old level keeps its old
// value exactly and its unopened constraints stay closed; otherwise the new value is
// subtracted from its opened constraints and its other constraints are opened.
void MaxMinSystem::fix(std::uint32_t v, double level, std::uint32_t bottleneck, double now) {
  Variable& x = variables_[v];
  VariableSweep& s = variable_sweep_[v];
  const bool was_pending = s.state == VarState::kPending;
  s.state = VarState::kFixed;
  ++stats_.variables;
  const bool changed = !(was_pending && same_level(level, x.level));
  if (changed) {
    x.level = level;
    x.value = bottleneck == kNone ? x.bound : level * x.weight;
    x.bottleneck = bottleneck;
  }
  for (const VariableUse& u : variable_uses_[v]) {
    const ConstraintSweep& cs = constraint_sweep_[u.constraint];
    if (cs.epoch == epoch_) {
      if (!cs.finished) subtract(u.constraint, u.coefficient * x.value, u.coefficient * x.weight, now);
    } else if (changed) {
      open_constraint(u.constraint, now);
    }
  }
}

// Constraint c runs full at `level`: every variable still unfixed on it is fixed there.
void MaxMinSystem::saturate(std::uint32_t c, double level) {
  constraint_sweep_[c].finished = true;
  for (const ConstraintUse& u : constraint_uses_[c]) {
    const VariableSweep& s = variable_sweep_[u.variable];
    if (s.epoch == epoch_ && s.state != VarState::kFixed) fix(u.variable, level, c, level);
  }
}

// A variable using opened constraint c got fixed: it leaves the sums; c's level rises.
void MaxMinSystem::subtract(std::uint32_t c, double used, double weight, double now) {
  ConstraintSweep& cs = constraint_sweep_[c];
  cs.remaining -= used;
  cs.weight_sum -= weight;
  if (--cs.unfixed == 0) {  // every variable fixed elsewhere: c stays below capacity
    cs.finished = true;
    heap_remove(c);
    return;
  }
  if (cs.weight_sum <= cs.weight_scale * kWeightSumRefresh) {
    double sum = 0.0;
    for (const ConstraintUse& u : constraint_uses_[c]) {
      const VariableSweep& s = variable_sweep_[u.variable];
      if (s.epoch == epoch_ && s.state != VarState::kFixed) sum += u.coefficient * variables_[u.variable].weight;
    }
    cs.weight_sum = sum;
    cs.weight_scale = sum;
  }
  const double level = cs.remaining > 0.0 ? cs.remaining / cs.weight_sum : 0.0;
  heap_update(c, std::max(level, now));
}

bool MaxMinSystem::same_level(double a, double b) const {
  return a == b || std::fabs(a - b) <= change_tolerance_ * std::max(std::fabs(a), std::fabs(b));
}

// --- Heaps -------------------------------------------------------------------------------

void MaxMinSystem::push_event(double level, std::uint32_t v, EventKind kind) {
  events_.push_back(VarEvent{level, v, kind});
  std::push_heap(events_.begin(), events_.end(),
                 [](const VarEvent& a, const VarEvent& b) { return a.level > b.level; });
}

MaxMinSystem::VarEvent MaxMinSystem::pop_event() {
  std::pop_heap(events_.begin(), events_.end(),
                [](const VarEvent& a, const VarEvent& b) { return a.level > b.level; });
  const VarEvent e = events_.back();
  events_.pop_back();
  return e;
}

void MaxMinSystem::heap_place(std::uint32_t pos, std::uint32_t c) {
  heap_[pos] = c;
  constraint_sweep_[c].heap_pos = pos;
}

void MaxMinSystem::sift_up(std::uint32_t pos) {
  const std::uint32_t c = heap_[pos];
  const double key = constraint_sweep_[c].level;
  while (pos > 0) {
    const std::uint32_t parent = (pos - 1) / 2;
    if (constraint_sweep_[heap_[parent]].level <= key) break;
    heap_place(pos, heap_[parent]);
    pos = parent;
  }
  heap_place(pos, c);
}

void MaxMinSystem::sift_down(std::uint32_t pos) {
  const std::uint32_t c = heap_[pos];
  const double key = constraint_sweep_[c].level;
  const std::uint32_t n = to_u32(heap_.size());
  for (;;) {
    std::uint32_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && constraint_sweep_[heap_[child + 1]].level < constraint_sweep_[heap_[child]].level) {
      ++child;
    }
    if (constraint_sweep_[heap_[child]].level >= key) break;
    heap_place(pos, heap_[child]);
    pos = child;
  }
  heap_place(pos, c);
}

void MaxMinSystem::heap_push(std::uint32_t c) {
  heap_.push_back(c);
  sift_up(to_u32(heap_.size() - 1));
}

void MaxMinSystem::heap_update(std::uint32_t c, double level) {
  ConstraintSweep& cs = constraint_sweep_[c];
  const double old = cs.level;
  cs.level = level;
  if (level < old) {
    sift_up(cs.heap_pos);
  } else {
    sift_down(cs.heap_pos);
  }
}

void MaxMinSystem::heap_remove(std::uint32_t c) {
  const std::uint32_t pos = constraint_sweep_[c].heap_pos;
  constraint_sweep_[c].heap_pos = kNone;
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (last == c) return;
  heap_place(pos, last);
  if (pos > 0 && constraint_sweep_[heap_[(pos - 1) / 2]].level > constraint_sweep_[last].level) {
    sift_up(pos);
  } else {
    sift_down(pos);
  }
}

}  // namespace clustersim::sim
