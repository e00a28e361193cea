// Weighted max-min fair sharing of capacities among variables (a linear max-min solver).
//
// This is the generic fluid-sharing kernel of clustersim: it knows constraints and
// variables, nothing else. A model turns its resources into constraints (a link direction,
// a memory bus) and its activities into variables (a transfer, a kernel), and reads back
// the rate each variable gets. The model is the one of SimGrid's lmm solver (Casanova et
// al.), restricted to shared constraints.
//
// Model. Constraints j have a capacity c_j > 0, variables i a weight w_i > 0 and a bound
// b_i >= 0 (+inf when none). Variable i uses constraint j with a coefficient a_ij > 0:
//
//     sum_i a_ij * x_i <= c_j      for every constraint j
//     0 <= x_i <= b_i              for every variable i
//
// Among the feasible x, the solver returns the weighted max-min fair one: the vector of
// levels x_i / w_i, sorted increasingly, is lexicographically maximal. Equivalently
// (Bertsekas & Gallager, section 6.5.2) every variable has a certificate: either
// x_i = b_i, or x_i uses a saturated constraint j (sum_k a_kj x_k = c_j) on which its level
// x_i / w_i is the largest of all the variables using j. That allocation exists and is
// unique.
//
// Algorithm: progressive filling (water-filling). All unfixed variables grow together,
// x_i = t * w_i, as the water level t rises from 0. Constraint j runs full at
//
//     t_j = (c_j - sum_{fixed k} a_kj x_k) / (sum_{unfixed k} a_kj w_k),
//
// and variable i meets its bound at b_i / w_i. The smallest such level is the next event:
// the variables it concerns are fixed (x_i = t w_i, or b_i), they leave the sums of their
// other constraints, and the filling goes on. Fixing variables at the current level can
// only raise the t_j of the other constraints, so the candidate levels sit in a binary
// heap as lower bounds: an entry is checked when it reaches the top and its key raised in
// place if its constraint's level has risen meanwhile. Fixing a variable is then O(1) per
// constraint it uses (O(log C) for one it leaves with nothing growing, which leaves the
// heap). The heap is indexed (each constraint knows its entry), so a
// constraint has one entry at most: one whose level a change lowers or raises moves in
// place, and one on which nothing grows any more leaves at once, with no stale entries to
// pop later (an incremental solve re-levels the same constraint several times).
//
// Incremental re-solving ("selective update", refined). A modification (a variable added,
// removed, reweighted, rebounded or expanded; a capacity changed) is only recorded; solve()
// then revisits only the part of the system the modification can reach, and every other
// variable keeps its value without being looked at. SimGrid's selective update re-solves
// every constraint reachable from a modified one, i.e. the connected components (variables
// linked through shared constraints) holding a modification. We go further and replay the
// filling over the region whose allocation changes, using four facts about the filling:
//   1. A constraint's trajectory (its usage as a function of the level t) depends only on
//      its capacity and its variables. It is "opened" when one of them changes; until then
//      the events it caused last time stand.
//   2. When a constraint is opened at level t, a variable on it whose old level is below t
//      was fixed before the change could reach it: it keeps its value, for good.
//   3. Any other variable on an opened constraint is re-checked when the water reaches its
//      old level: if the event that fixed it (its bottleneck constraint or its bound) is
//      untouched, it keeps its old value and nothing spreads; otherwise it becomes free
//      again, and its constraints are opened in turn.
//   4. A constraint that fixed no variable last time ("not binding", most links of a
//      fabric) only matters if it now runs full. It is opened "light": its variables count
//      with their old values, an upper bound of their contribution at any level, except
//      those the replay frees, which grow. Its level so computed is a lower bound of the
//      true one; only if the water reaches it is the constraint opened in full. A light
//      opening is O(1) (it starts from the constraint's usage) and looks at nobody.
// A variable whose re-computed level equals its old one (within `change_tolerance`,
// relative) is treated as unchanged and stops the spreading. Untouched connected components
// are never visited; inside a component, the work follows the variables whose values
// actually change, not the size of the component. solve_all() re-solves everything, and
// solve() does so too when at least a quarter of the variables are new or modified.
//
// Complexity (V variables, C constraints, E = sum of the variables' constraint counts, R
// the variables revisited by an incremental solve and E_R their incidences):
//   solve_all():  O(E + (C + V) log(C + V)) time, O(V + C) scratch, no allocation once
//                 the arrays have grown.
//   solve():      O(E_R + S + R log R) where S sums the use counts of the constraints opened
//                 in full; R is at most the variables of the modified components, and in
//                 practice a small multiple of the variables whose value changes.
//   add/remove/expand:  O(number of constraints of the variable); set_*: O(1).
// Measured (tools/bench/bench_maxmin.cpp: 100,000 flows on a 16,384-endpoint fat tree,
// 57,344 constraints, 596,796 incidences; a shared, busy 2-core x86 VM, g++ 12 -O3; three
// runs each): solve_all() 39-40 ms (mean of 5; 44-55 ms in the same runs before the inline
// uses and the incremental path's prefetches, 66-100 ms before the saturation's
// prefetches); removing one variable then
// solve() 0.66-0.72 ms on average, median 0.59-0.65 ms (0.98-1.09 ms on average before the
// incremental path's prefetches and the inline uses), revisiting ~1,130 variables of which
// ~750 really change by more than 1e-9. On another 2-core VM (AMD EPYC, its fast cache
// ~4-8 MB: a dependent load costs 28 ns over 4 MB, 175 ns over 16 MB), two runs each,
// before and after the indexed heap and saturate()'s two-stage prefetch: solve_all()
// 23-25 ms both; the removal 0.58 ms -> 0.39-0.44 ms on average.
// Under full load a change legitimately moves hundreds of rates. Without the 2:1 taper
// (98,304 constraints) the median is 0.13 ms but the mean 1.3-1.4 ms: a few changes cascade
// through up to ~24,000 variables revisited.
//
// tools/bench/bench_network.cpp (the fabric model's own constraints: 100,000 flows, 98,040
// constraints, 587,178 incidences, every link at the same 47 GB/s): solve_all() 59-67 ms
// (median of 5, three runs; 68-81 ms in the same runs before the inline uses and the
// incremental path's prefetches, 100-136 ms before the saturation's prefetches); an
// incremental solve after one removal 1.35-1.54 ms on average (2.0-2.1 ms before the
// incremental prefetches and the inline uses), median 0.15-0.16 ms, 99th percentile
// 14-17 ms; on the AMD VM above, six runs alternating with the former solver
// (`bench_network maxmin`): solve_all() 35-46 ms (the former 39-52), the update 0.69-0.98 ms
// on average (the former 1.00-1.34 ms), median 78-108 us (109-146), 99th percentile 7-11
// ms (11-15); the whole program 0.74 of the former's time (median of 5 pairs). An update
// revisits ~1,500 variables of which ~1,050 change by more than 1e-9 (relative; counted
// in an instrumented copy): with every link equally loaded, one
// change re-balances a large part of the fabric, and an exact re-solve must write each of
// those values. The cost is skewed: half the removals revisit at most ~200 variables, the
// 9% that revisit 5,000 or more (up to ~22,000) take 61% of the time.
// Issue 4 asks for 50 us on average there; an exact update does not get near it on this
// load. Per removal ~1,050 values really change, each on ~6 constraints whose usage changes
// too, in ~40 MB of records scattered over a 32 MiB L3: a dependent random load costs
// ~0.18 us on this VM (pointer chase over 64 MiB), so one miss per changed value is ~190 us
// unless the misses overlap, and 50 us leaves under 50 ns per changed value with its
// constraints. A full solve, whose accesses are more regular, spends ~0.6 us per variable;
// the incremental one ~0.5 us per variable revisited on the AMD VM (~0.9 us before the
// indexed heap).
// A full solve opens every constraint from its incidences alone (ConstraintUse::weighted),
// heapifies once, and sums usages as it goes. Most of a solve's time is cache misses on
// records scattered by the variables' routes: saturating a constraint first asks for the
// records of its variables (their first lines; then, for those still growing, the rest
// with their uses), then those uses' constraints and the heads of their lists of uses
// (prefetches), so that the misses overlap. The incremental
// path does likewise where it walks a variable's uses or a constraint's, and each heap pop
// asks for the records of the next entries.
//
// Storage is data-oriented: one record per constraint (one cache line: capacity, usage
// and the scratch of a solve) and per variable (three cache lines: its scalars and up to
// kInlineUses = 7 of its uses, so that reading them follows no pointer) in vectors, each
// incidence stored at both ends with its mirror's position for O(1) removal; ids are
// indices recycled through free lists; per-solve scratch is invalidated by bumping an epoch
// rather than cleared.
//
// Assumptions: shared constraints only (the sum, never a max: no SimGrid "fatpipe"), a
// variable's weight is strictly positive (there is no "paused" zero-weight variable:
// remove it or bound it to 0), coefficients are strictly positive.
//
// LIMITATIONS.
//   - Rates are doubles. Capacities hold within a relative 1e-12-ish rounding error
//     (tested at 1e-9); saturated() uses the relative tolerance kSaturationTolerance.
//   - With change_tolerance > 0, a variable may keep a value off by about that relative
//     amount from the exact max-min one, a few times that after many incremental solves
//     (errors do not vanish until the variable is re-solved), and a constraint may end
//     that much (relative) above its capacity. The default, 1e-12, is rounding level: in
//     the benchmark, 4,000 incremental solves stay within 1e-12 of a full solve, well below
//     the 1e-9 the tests ask for. A coarse tolerance buys little: 1e-3 saves ~30% there,
//     because the rates that change move by more than that.
//   - A variable without constraints gets its bound, which may be +inf.
//   - A variable record takes 192 bytes whatever its number of uses; a variable with more
//     than 7 uses keeps them all in a separate array (one more cache miss to reach them).
//   - Worst case, the incremental replay is a full re-solve of the component: a change can
//     legitimately shift every rate of a fully loaded fabric by a little. It is then slower
//     than solve_all() by its bookkeeping (2-3x when every rate changes).
//   - usage() reads the last solve, minus the share of the variables removed since.
//   - Not thread-safe; two systems in one process are independent.
//
// Validation (tests/sim/test_maxmin.cpp): hand-solved systems with their equations
// (single constraint, weights, bounds, the three-link chain, coefficients), and random
// systems checked against a naive reference filling, against the optimality certificate
// above and for capacity; incremental solves after random modifications equal a full solve
// within 1e-9, and a change in one component does not visit another. Speed:
// tools/bench/bench_maxmin.cpp on a 16,384-endpoint three-tier fat tree.
//
// References:
//   D. Bertsekas, R. Gallager, Data Networks, 2nd ed., Prentice Hall 1992, section 6.5.2
//     (max-min fairness, the filling algorithm and its optimality condition).
//   H. Casanova, A. Giersch, A. Legrand, M. Quinson, F. Suter, "Versatile, Scalable, and
//     Accurate Simulation of Distributed Applications and Platforms", JPDC 74(10), 2014
//     (SimGrid; the lmm solver, src/kernel/lmm/System.hpp, and its selective update).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace clustersim::sim {

/// A constraint of a MaxMinSystem. Valid from add_constraint() to remove_constraint();
/// the index is recycled afterwards.
struct ConstraintId {
  std::uint32_t index = 0;
  friend constexpr bool operator==(ConstraintId, ConstraintId) = default;
};

/// A variable of a MaxMinSystem. Valid from add_variable() to remove_variable(); the
/// index is recycled afterwards.
struct VariableId {
  std::uint32_t index = 0;
  friend constexpr bool operator==(VariableId, VariableId) = default;
};

/// What the last solve() or solve_all() revisited.
struct MaxMinSolveStats {
  std::size_t variables = 0;    ///< variables whose value was recomputed or re-confirmed
  std::size_t constraints = 0;  ///< constraints opened: watched or replayed
  std::size_t replayed = 0;     ///< of which replayed in full (their variables scanned)
  bool full = false;            ///< a full solve (solve_all(), or solve() deciding so)
};

class MaxMinSystem {
 public:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  /// saturated(j) holds when usage(j) >= capacity(j) * (1 - kSaturationTolerance).
  static constexpr double kSaturationTolerance = 1e-9;

  /// `change_tolerance`: relative difference under which a re-solved variable counts as
  /// unchanged and its change stops spreading (see the header comment). In [0, 1e-3].
  explicit MaxMinSystem(double change_tolerance = 1e-12);

  // --- Constraints -------------------------------------------------------------------

  /// A new constraint; `capacity` finite and > 0, in the unit of the variables' values.
  ConstraintId add_constraint(double capacity);
  /// New capacity (finite, > 0); takes effect at the next solve.
  void set_capacity(ConstraintId c, double capacity);
  /// Precondition: no variable uses `c` any more (remove those variables first).
  void remove_constraint(ConstraintId c);

  // --- Variables ---------------------------------------------------------------------

  /// A new variable using no constraint yet. `weight` finite and > 0: the share of a
  /// variable is proportional to it. `bound` >= 0, +inf for none. Its value reads 0 until
  /// the next solve.
  VariableId add_variable(double weight = 1.0, double bound = kInfinity);
  /// O(number of constraints of v).
  void set_weight(VariableId v, double weight);
  void set_bound(VariableId v, double bound);
  /// Variable `v` uses constraint `c` with `coefficient` (finite, > 0): adds
  /// coefficient * x_v to the constraint's usage. Using the same constraint twice adds the
  /// coefficients. O(number of constraints of v).
  void expand(VariableId v, ConstraintId c, double coefficient = 1.0);
  /// O(number of constraints of v). The values of the others change at the next solve.
  void remove_variable(VariableId v);

  // --- Solving -----------------------------------------------------------------------

  /// Brings every value up to date with the modifications made since the last solve,
  /// revisiting only the region they can affect (see the header comment); a full solve
  /// when at least a quarter of the variables are new or modified. Nothing to do, O(1).
  void solve();
  /// Re-solves the whole system from scratch, whatever was modified.
  void solve_all();

  // --- Results (as of the last solve) ------------------------------------------------

  /// x_v; 0 for a variable added since; +inf for one without constraint nor bound.
  [[nodiscard]] double value(VariableId v) const;
  /// sum_i a_ij x_i over the variables using `c` (less those removed since the solve).
  [[nodiscard]] double usage(ConstraintId c) const;
  /// usage(c) >= capacity(c) * (1 - kSaturationTolerance).
  [[nodiscard]] bool saturated(ConstraintId c) const;
  /// The constraint whose saturation fixed v's value, or nullopt when v sits at its bound.
  [[nodiscard]] std::optional<ConstraintId> bottleneck(VariableId v) const;
  [[nodiscard]] const MaxMinSolveStats& last_solve() const { return stats_; }
  /// The variables whose value the last solve wrote, each once (every variable after a full
  /// solve); the value of any other variable is the same as before that solve, bit for bit.
  /// A caller that keeps state per variable (a flow's finish time) updates only these.
  /// Valid until the next solve; it may name variables removed since.
  [[nodiscard]] std::span<const VariableId> changed() const { return changed_; }
  /// The constraints the last solve opened: any other constraint's usage is the same as
  /// before that solve, less the variables removed since.
  [[nodiscard]] std::span<const ConstraintId> opened() const { return opened_; }

  // --- Inspection ----------------------------------------------------------------------

  [[nodiscard]] double capacity(ConstraintId c) const;
  [[nodiscard]] double weight(VariableId v) const;
  [[nodiscard]] double bound(VariableId v) const;
  [[nodiscard]] bool contains(ConstraintId c) const;
  [[nodiscard]] bool contains(VariableId v) const;
  [[nodiscard]] std::size_t constraint_count() const { return constraint_count_; }
  [[nodiscard]] std::size_t variable_count() const { return variable_count_; }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  // An incidence seen from the constraint: which variable, with what coefficient, and at
  // which position of that variable's list the mirror incidence lives.
  struct ConstraintUse {
    std::uint32_t variable;
    std::uint32_t mirror;
    double coefficient;
    double weighted;  // coefficient x the variable's weight: a full sweep opens c from these alone
  };
  struct VariableUse {
    std::uint32_t constraint;
    std::uint32_t mirror;
    double coefficient;
  };

  // Per-solve state of a constraint: closed (stale epoch), light or full. Full: the
  // filling's sums, where "unfixed" are the free and the pending variables. Light: only
  // the free variables grow; every other variable counts with its current value, an upper
  // bound of its trajectory, so the level found is a lower bound of the true one; reaching
  // it turns the constraint full.
  enum class Mode : std::uint8_t { kLight, kFull };
  // kPending: untouched so far, its old value checked when the water reaches its old
  // level; kFree: growing with the water; kFixed: final for this solve.
  enum class VarState : std::uint8_t { kPending, kFree, kFixed };

  // One cache line per constraint: what persists, then the scratch of the current solve
  // (valid when `epoch` equals epoch_).
  struct Constraint {
    double capacity = 0.0;
    double usage = 0.0;          // sum of coefficient * value over its uses, always
    double remaining = 0.0;      // capacity minus the usage of the variables counted fixed
    double weight_sum = 0.0;     // sum a_ij w_i over the variables counted growing
    double weight_scale = 0.0;   // weight_sum when opened, to detect cancellation
    std::uint32_t unfixed = 0;   // how many variables are counted growing
    std::uint32_t epoch = 0;
    Mode mode = Mode::kFull;
    bool finished = false;       // full and every variable fixed
    bool alive = false;
    bool pending = false;        // listed in pending_constraints_
    // Some variable's value may have been fixed by this constraint running full, as of the
    // last solve that opened it. Invariant: a variable's bottleneck has this flag. A
    // constraint without it can be opened light (see open_light()).
    bool binding = false;
  };
  static_assert(sizeof(Constraint) <= 64, "a constraint record should fit a cache line");
  // Three cache lines per variable: its scalars, then its uses, up to kInlineUses of them
  // in the record itself (reading them follows no pointer, so the lines can be asked for
  // together), all of them in `overflow` when there are more.
  static constexpr std::uint32_t kInlineUses = 7;
  struct alignas(64) Variable {
    double weight = 1.0;
    double bound = kInfinity;
    double value = 0.0;
    double level = 0.0;                // value / weight as fixed by the filling
    std::uint32_t bottleneck = kNone;  // constraint that fixed it; kNone: its bound
    std::uint32_t epoch = 0;           // `state` is valid when it equals epoch_
    VarState state = VarState::kPending;
    bool alive = false;
    bool pending = false;              // listed in pending_variables_
    std::uint32_t use_count = 0;
    std::vector<VariableUse> overflow;  // every use when use_count > kInlineUses
    VariableUse inline_uses[kInlineUses];

    [[nodiscard]] std::span<VariableUse> uses() {
      return use_count <= kInlineUses ? std::span<VariableUse>(inline_uses, use_count)
                                      : std::span<VariableUse>(overflow);
    }
    [[nodiscard]] std::span<const VariableUse> uses() const {
      return use_count <= kInlineUses ? std::span<const VariableUse>(inline_uses, use_count)
                                      : std::span<const VariableUse>(overflow);
    }
    void add_use(VariableUse u);
  };
  static_assert(sizeof(Variable) <= 192, "a variable record should take three cache lines at most");
  enum class EventKind : std::uint8_t { kCheck, kBound };
  struct VarEvent {
    double level;
    std::uint32_t variable;
    EventKind kind;
  };
  struct HeapEntry {
    double level;  // a lower bound of the constraint's level
    std::uint32_t constraint;
  };

  void prefetch_variable(std::uint32_t v) const;
  void check(ConstraintId c, const char* what) const;
  void check(VariableId v, const char* what) const;
  void mark_pending(std::uint32_t v);
  void mark_pending_constraint(std::uint32_t c);

  void sweep(bool full);
  void begin_epoch();
  void free_variable(std::uint32_t v, double now);
  bool open(std::uint32_t c, double now);
  void open_full(std::uint32_t c, double now);
  bool open_light(std::uint32_t c, double now);
  void start_growing(std::uint32_t v, double now);
  void on_check(std::uint32_t v, double now);
  void fix(std::uint32_t v, double level, std::uint32_t bottleneck, double now);
  void saturate(std::uint32_t c, double level);
  void refresh_weight_sum(std::uint32_t c);
  [[nodiscard]] double level_of(std::uint32_t c, double now) const;
  void schedule(std::uint32_t c, double now);
  [[nodiscard]] bool same_level(double a, double b) const;

  void push_event(double level, std::uint32_t v, EventKind kind);
  VarEvent pop_event();
  void push_constraint(HeapEntry e);
  void pop_constraint();
  void erase_constraint(std::uint32_t c);
  void erase_at(std::uint32_t i);
  void raise_top(double level);
  void sift_up(std::uint32_t i);
  void sift_down(std::uint32_t i);

  // Heap orders (min-heaps on level).
  static constexpr auto kEventAfter = [](const VarEvent& a, const VarEvent& b) { return a.level > b.level; };
  static constexpr auto kEntryAfter = [](const HeapEntry& a, const HeapEntry& b) { return a.level > b.level; };

  double change_tolerance_;
  bool bulk_ = false;  // appending heap entries at the start of a full sweep, heapified after
  bool interrupted_ = false;  // a sweep began and did not end (it threw): the next solve is full

  std::vector<Constraint> constraints_;
  std::vector<std::vector<ConstraintUse>> constraint_uses_;
  std::vector<std::uint32_t> free_constraints_;
  std::size_t constraint_count_ = 0;

  std::vector<Variable> variables_;
  std::vector<std::uint32_t> free_variables_;
  std::size_t variable_count_ = 0;

  std::vector<std::uint32_t> pending_variables_;
  std::vector<std::uint32_t> pending_constraints_;

  std::uint32_t epoch_ = 0;
  std::vector<HeapEntry> heap_;             // binary min-heap on level, indexed by heap_pos_
  std::vector<std::uint32_t> heap_pos_;     // per constraint: its entry in heap_, kNone if none
  std::vector<VarEvent> events_;            // binary min-heap on level
  std::vector<ConstraintId> opened_;        // constraints opened in this solve
  std::vector<VariableId> changed_;         // variables whose value this solve wrote
  std::vector<std::uint32_t> growing_;      // saturate()'s scratch: the variables it fixes
  MaxMinSolveStats stats_;
};

}  // namespace clustersim::sim
