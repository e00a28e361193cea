// The long horizon: rates and laws parse, checkpoint/restart matches its renewal equation,
// Young/Daly's optimum is recovered by a sweep, spares and retirement do what they say; the
// queue starts jobs in FIFO or EASY-backfill order and places them by pods; shared storage
// follows its fixed point; burn-in catches infant mortality.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "models/reliability/longrun.hpp"
#include "sim/random.hpp"

using namespace clustersim;
using clustersim::test::Rel;
using namespace clustersim::reliability;

namespace {

constexpr double kDay = 86400.0;

/// One 64-GPU job (8 nodes of 8) whose only failures are `software` at one per `mtbf_days`
/// per job (no node swaps), a checkpoint of `ckpt_bytes` at 1 TB/s.
struct Fixture {
  FailuresConfig failures;
  LongRunInputs in;

  explicit Fixture(double mtbf_days, double ckpt_bytes = 60e12) {
    ComponentConfig c;
    c.mtbf = sim::Time::from_seconds(mtbf_days * kDay);
    c.per = Per::job;
    failures.components["software"] = c;
    in.failures = &failures;
    in.nodes = 8;
    in.gpus_per_node = 8;
    in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
    JobProfile j;
    j.name = "job";
    j.nodes = 8;
    j.gpus = 64;
    j.tokens_per_s = 1e6;
    j.checkpoint_bytes = ckpt_bytes;
    in.jobs.push_back(j);
  }
};

/// Least-squares quadratic y = a x^2 + b x + c through the points: a and b.
void fit_parabola(const std::vector<double>& xs, const std::vector<double>& ys, double& a, double& b) {
  double s[5] = {0, 0, 0, 0, 0}, t[3] = {0, 0, 0};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double p = 1.0;
    for (int e = 0; e < 5; ++e, p *= xs[i]) s[e] += p;
    t[0] += ys[i];
    t[1] += ys[i] * xs[i];
    t[2] += ys[i] * xs[i] * xs[i];
  }
  // Normal equations [s4 s3 s2; s3 s2 s1; s2 s1 s0] [a b c] = [t2 t1 t0], by Cramer's rule.
  const auto det3 = [](double a11, double a12, double a13, double a21, double a22, double a23, double a31,
                       double a32, double a33) {
    return a11 * (a22 * a33 - a23 * a32) - a12 * (a21 * a33 - a23 * a31) + a13 * (a21 * a32 - a22 * a31);
  };
  const double D = det3(s[4], s[3], s[2], s[3], s[2], s[1], s[2], s[1], s[0]);
  a = det3(t[2], s[3], s[2], t[1], s[2], s[1], t[0], s[1], s[0]) / D;
  b = det3(s[4], t[2], s[2], s[3], t[1], s[1], s[2], t[0], s[0]) / D;
}

/// The checkpoint interval of the best ETTR for a job of Fixture(1.0, ckpt_bytes) (MTBF one
/// day): fixed intervals k x `around` for k from `from` to `to` by factors of `step`, the same
/// failures for each (same seed), over 20,000 days; a parabola through ETTR against log(k)
/// locates the maximum.
double swept_optimum(double ckpt_bytes, double around, double from, double to, double step) {
  std::vector<double> xs, ys;
  for (double k = from; k <= to; k *= step) {
    Fixture f(1.0, ckpt_bytes);
    f.in.checkpoint.interval = {false, sim::Time::from_seconds(k * around)};
    f.in.horizon_s = 20000 * kDay;
    const LongRunResult r = simulate_long_run(f.in);
    xs.push_back(std::log(k));
    ys.push_back(r.jobs[0].ettr.mean);
  }
  double a = 0.0, b = 0.0;
  fit_parabola(xs, ys, a, b);
  REQUIRE(a < 0.0);
  return around * std::exp(-b / (2.0 * a));
}

}  // namespace

TEST_CASE("failure rates and duration laws parse, and say what is wrong") {
  FailureRate r;
  std::string why;
  REQUIRE(parse_rate("0.0002/gpu-day", r, why));
  CHECK(r.per_day == Rel(0.0002));
  CHECK(r.per == Per::gpu);
  REQUIRE(parse_rate("1/switch-day", r, why));
  CHECK(r.per == Per::switch_);
  CHECK_FALSE(parse_rate("0.0002/gpu", r, why));
  CHECK_FALSE(parse_rate("0.0002/rack-day", r, why));
  CHECK(why.find("unknown unit 'rack'") != std::string::npos);
  CHECK_FALSE(parse_rate("-1/gpu-day", r, why));
  // Another period: the same rate per day is suggested (0.01 per hour = 0.24 per day).
  std::string hint;
  CHECK_FALSE(parse_rate("0.01/gpu-hour", r, why, &hint));
  CHECK(hint == "did you mean '0.24/gpu-day'?");
  CHECK_FALSE(parse_rate("3/node-year", r, why, &hint));
  CHECK(hint == "did you mean '0.008219/node-day'?");
  CHECK_FALSE(parse_rate("3/rack-year", r, why, &hint));
  CHECK(hint.empty());

  DurationLaw d;
  REQUIRE(parse_duration_law("lognormal(4h, 1.0)", d, why));
  CHECK(d.kind == DurationLaw::Kind::lognormal);
  CHECK(d.mean.seconds() == Rel(4 * 3600));
  CHECK(d.shape == Rel(1.0));
  REQUIRE(parse_duration_law("10min", d, why));
  CHECK(d.kind == DurationLaw::Kind::fixed);
  REQUIRE(parse_duration_law("exponential(2h)", d, why));
  CHECK(d.kind == DurationLaw::Kind::exponential);
  CHECK_FALSE(parse_duration_law("weibull(4h)", d, why));
  CHECK_FALSE(parse_duration_law("gamma(4h, 2)", d, why));
  CHECK_FALSE(parse_duration_law("lognormal(4h, 1.0", d, why));
  CHECK(format_duration_law(DurationLaw{DurationLaw::Kind::weibull, sim::Time::from_seconds(3600), 0.7}) ==
        "weibull(1h, 0.7)");
}

TEST_CASE("power law: the top p of a Pareto population holds p^(1 - 1/alpha) of it") {
  Heterogeneity h;
  h.kind = HeterogeneityKind::power_law;
  h.top_fraction = 0.01;
  h.failure_share = 0.5;
  // 0.5 = 0.01^(1 - 1/alpha)  =>  alpha = 1 / (1 - ln 0.5 / ln 0.01) = 1.1772
  CHECK(pareto_alpha(h) == Rel(1.0 / (1.0 - std::log(0.5) / std::log(0.01))));
  CHECK(pareto_alpha(h) == Rel(1.1772).epsilon(1e-3));
  // The identity itself, on a large sample with a light enough tail to converge (alpha 2:
  // the top 1% hold 0.01^0.5 = 10%).
  sim::RandomStream rng = sim::make_stream(1, "pareto");
  std::vector<double> x(400'000);
  for (double& v : x) v = rng.pareto(2.0, 0.5);
  std::sort(x.begin(), x.end(), std::greater<>());
  const double total = std::accumulate(x.begin(), x.end(), 0.0);
  const double top = std::accumulate(x.begin(), x.begin() + 4000, 0.0);
  CHECK(top / total == Rel(0.1).epsilon(0.1));
  CHECK(total / static_cast<double>(x.size()) == Rel(1.0).epsilon(0.02));
}

TEST_CASE("checkpoint/restart follows its renewal equation: ETTR = tau / ((M + D)(e^((tau + delta)/M) - 1))") {
  // Poisson failures at mean M while running; each attempt at a segment of tau + delta
  // succeeds with probability p = e^(-(tau + delta)/M) and costs M (1 - p) on average; a
  // failed one adds the downtime D. Per committed tau: (M + D)(1 - p) / p.
  Fixture f(1.0);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.horizon_s = 4000 * kDay;
  f.in.replications = 4;
  const LongRunResult r = simulate_long_run(f.in);
  const double M = kDay, tau = 7200, delta = 60, D = 300 + 600 + 60;
  const double expected = tau / ((M + D) * (std::exp((tau + delta) / M) - 1.0));
  CHECK(r.jobs[0].ettr.mean == Rel(expected).epsilon(0.005));
  CHECK(r.jobs[0].checkpoint_write_s == Rel(delta));
  // Interruptions: one per failure while running, ETTR-ish of the time.
  CHECK(r.jobs[0].interruptions.mean < 4000.0);
  CHECK(r.jobs[0].interruptions.mean > 3500.0);
}

TEST_CASE("a job's own failures run on its running time: the rate holds whatever the law") {
  // Software failures at mean M = 6 h, detection 5 min, no diagnosis, a 10 min restart.
  // The job's failure clock stops while it is down and starts again with its restart (a
  // failure during the relaunch aborts it): each cycle is a life L (from the restart's
  // start) plus the detection, a renewal process of mean M + 5 min whatever L's law, so
  // 100 days hold 2,400 / 6.083 = 394.5 interruptions. Running from the failure, the clock
  // spent the detection in a life's first minutes, where a Weibull of shape 0.5 fails most
  // (P(L < 5 min) = 15%): those failures joined the one being handled, 15% fewer.
  for (const auto& [law, shape] : {std::pair{Distribution::exponential, 1.0}, std::pair{Distribution::weibull, 0.5}}) {
    CAPTURE(shape);
    Fixture f(0.25);
    f.failures.components["software"].distribution = law;
    f.failures.components["software"].shape = shape;
    f.failures.repair.detect = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(300), 1.0};
    f.failures.repair.diagnose = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(0), 1.0};
    f.failures.repair.restart = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(600), 1.0};
    f.in.horizon_s = 100 * kDay;
    f.in.replications = 20;
    const JobSummary j = simulate_long_run(f.in).jobs[0];
    CHECK(j.interruptions.mean == Rel(100.0 * 24.0 / (6.0 + 5.0 / 60.0)).epsilon(0.03));
  }
}

TEST_CASE("an announced stop writes a last checkpoint and is not detected: D = delta + restart + read") {
  // Maintenance announced at mean M = 1 day: no work is lost (the job checkpoints first),
  // the stop waits for that write (delta = 60 s) and skips the 1 h watchdog, then restarts
  // (600 s) and reads (60 s). Per stop the job ran ~M, a share tau / (tau + delta) of it
  // useful: ETTR = M tau / (tau + delta) / (M + delta + 660 s) = 0.9835; charged the
  // detection and not the write, it was 0.951.
  Fixture f(1.0);
  f.failures.components["software"].planned = true;
  f.failures.repair.detect = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(3600), 1.0};
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.horizon_s = 2000 * kDay;
  f.in.replications = 2;
  const LongRunResult r = simulate_long_run(f.in);
  const double M = kDay, tau = 7200, delta = 60;
  CHECK(r.jobs[0].ettr.mean == Rel(M * tau / (tau + delta) / (M + delta + 660)).epsilon(0.001));
}

TEST_CASE("a failure during a restart aborts it: the restart is exposed, D' = M (e^(D/M) - 1)") {
  // Failures at mean M = 3 h whatever the job does; no detection or diagnosis, a fixed 1 h
  // restart plus the 60 s checkpoint read: D = 3,660 s, during which a failure starts the
  // restart over. The time to get D failure-free is M (e^(D/M) - 1) = 4,357 s (the expected
  // wait for a gap of D in a Poisson process), which replaces D in the renewal equation:
  // ETTR = tau / ((M + D') (e^((tau + delta)/M) - 1)) = 0.589 at tau = 1 h, delta = 60 s
  // (0.617 with failures in the restart ignored). Every failure interrupts: running, or
  // restarting.
  Fixture f(3.0 / 24.0);
  f.failures.repair.detect = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(0), 1.0};
  f.failures.repair.diagnose = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(0), 1.0};
  f.failures.repair.restart = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(3600), 1.0};
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  f.in.horizon_s = 2000 * kDay;
  f.in.replications = 4;
  const LongRunResult r = simulate_long_run(f.in);
  const double M = 3 * 3600.0, tau = 3600, delta = 60, D = 3600 + 60;
  const double exposed = M * (std::exp(D / M) - 1.0);
  const double expected = tau / ((M + exposed) * (std::exp((tau + delta) / M) - 1.0));
  CHECK(expected == Rel(0.589).epsilon(0.002));
  CHECK(r.jobs[0].ettr.mean == Rel(expected).epsilon(0.01));
  CHECK(r.jobs[0].interruptions.mean == Rel(r.failures_by_cause.at("software").mean).epsilon(1e-9));
}

TEST_CASE("detection, diagnosis and restart laws enter the renewal equation by their means") {
  // As above with D = detect + diagnose + restart + read, each drawn: exponential(300 s),
  // a fixed 1200 s, lognormal(600 s, 1.0); the reward-renewal ratio takes E[D] = 2160 s.
  Fixture f(1.0);
  f.failures.repair.detect = DurationLaw{DurationLaw::Kind::exponential, sim::Time::from_seconds(300), 1.0};
  f.failures.repair.diagnose = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(1200), 1.0};
  f.failures.repair.restart = DurationLaw{DurationLaw::Kind::lognormal, sim::Time::from_seconds(600), 1.0};
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.horizon_s = 4000 * kDay;
  f.in.replications = 4;
  const LongRunResult r = simulate_long_run(f.in);
  const double M = kDay, tau = 7200, delta = 60, D = 300 + 1200 + 600 + 60;
  const double expected = tau / ((M + D) * (std::exp((tau + delta) / M) - 1.0));
  CHECK(r.jobs[0].ettr.mean == Rel(expected).epsilon(0.01));
}

TEST_CASE("training no checkpoint saved counts for nothing: an interval past the horizon projects no time to train") {
  // MTBF 3 hours, a checkpoint every 30 days, a horizon of 1 day: the job trains between
  // failures and no checkpoint ever saves it. Counting the stretch since the last restart
  // made its ETTR ~19% and projected a finite time to train from work a failure would take
  // back; it counts at the share expected saved, exp(-(30 d - t) / 3 h), under 1e-100.
  Fixture f(0.125);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(30 * kDay)};
  f.in.jobs[0].train_tokens = 64 * kDay * f.in.jobs[0].tokens_per_s;
  f.in.horizon_s = kDay;
  f.in.replications = 3;
  const LongRunResult r = simulate_long_run(f.in);
  const JobSummary& j = r.jobs[0];
  REQUIRE(j.interruptions.mean > 0.0);
  CHECK(j.ettr.mean < 1e-100);
  CHECK(std::isnan(j.time_to_train_s.mean));
  // Nor did it block on a checkpoint: none was due.
  CHECK(j.checkpoint_gpu_hours.mean == 0.0);
}

TEST_CASE("a job that barely fails keeps the training since its last checkpoint at the horizon") {
  // MTBF 10,000 days, 30 days simulated. Every 12 h the job writes 60 s: ETTR is
  // tau / (tau + delta) to the partial cycle at the horizon. Counting none of the training
  // since the last checkpoint made it 59 x 12 h / 30 d = 98.3%, and a 1000-day interval 0,
  // on a job that never failed. The 1000-day one keeps its 30 days at exp(-970 / 1e4).
  Fixture f(1e4);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(12 * 3600.0)};
  f.in.jobs[0].train_tokens = 1e4 * kDay * f.in.jobs[0].tokens_per_s;
  f.in.horizon_s = 30 * kDay;
  f.in.replications = 3;
  LongRunResult r = simulate_long_run(f.in);
  REQUIRE(r.jobs[0].interruptions.mean == 0.0);
  CHECK(r.jobs[0].ettr.mean == Rel(43200.0 / 43260.0).epsilon(1e-4));
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(1000 * kDay)};
  r = simulate_long_run(f.in);
  REQUIRE(r.jobs[0].interruptions.mean == 0.0);
  CHECK(r.jobs[0].ettr.mean == Rel(std::exp(-970.0 / 1e4)).epsilon(1e-6));
  CHECK(std::isfinite(r.jobs[0].time_to_train_s.mean));
  // What a failure would take back is lost, past the horizon: ETTR and lost GPU-hours share
  // the job's 30 days.
  REQUIRE(r.jobs[0].lost_gpu_hours.count(std::string(kUnsavedAtHorizon)) == 1);
  CHECK(r.jobs[0].ettr.mean + r.jobs[0].lost_gpu_hours.at(std::string(kUnsavedAtHorizon)).mean / (64 * 30 * 24.0) ==
        Rel(1.0).epsilon(1e-9));
  // With 40 days of work, the end of training, 10 days on, saves it before the checkpoint.
  f.in.jobs[0].train_tokens = 40 * kDay * f.in.jobs[0].tokens_per_s;
  r = simulate_long_run(f.in);
  REQUIRE(r.jobs[0].interruptions.mean == 0.0);
  CHECK(r.jobs[0].ettr.mean == Rel(std::exp(-10.0 / 1e4)).epsilon(1e-6));
}

TEST_CASE("asynchronous writes: the training under way while the last write runs counts too") {
  // A 100-minute background write (60 TB at 10 GB/s) raises the interval to it; at 150 min the
  // first cycle's write still runs, so the job has trained 100 min saved by nothing yet and
  // 50 min more. Counting the first alone dropped the 50 (ETTR 0.67) on a job that never failed.
  Fixture f(1e4);
  f.in.checkpoint.async = true;
  f.in.checkpoint.snapshot_bandwidth = sim::Bandwidth::of(1e12);
  f.in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e10);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  f.in.jobs[0].train_tokens = 1e3 * kDay * f.in.jobs[0].tokens_per_s;
  f.in.horizon_s = 150 * 60.0;
  f.in.replications = 2;
  const LongRunResult r = simulate_long_run(f.in);
  REQUIRE(r.jobs[0].interruptions.mean == 0.0);
  CHECK(r.jobs[0].ettr.mean > 0.999);
  // Lost (expected, past the horizon) and counted training add up to the time trained.
  double lost = 0.0;
  for (const auto& [cause, e] : r.jobs[0].lost_gpu_hours) lost += e.mean;
  CHECK(r.jobs[0].ettr.mean + lost / (64 * 2.5) + r.jobs[0].checkpoint_gpu_hours.mean / (64 * 2.5) ==
        Rel(1.0).epsilon(1e-9));
}

TEST_CASE("checkpoint GPU-hours are the writes that took place: none before the first is due") {
  // A write of 60 s every 2 hours, no failure in 1 hour and 30 minutes: nothing written; in
  // 2 h 0 min 30 s, half of the first write: 30 s x 64 GPUs.
  for (const auto& [horizon, expected] : {std::pair{5400.0, 0.0}, std::pair{7230.0, 30.0 * 64 / 3600}}) {
    Fixture f(1e4);
    f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
    f.in.jobs[0].train_tokens = 100 * kDay * f.in.jobs[0].tokens_per_s;
    f.in.horizon_s = horizon;
    const LongRunResult r = simulate_long_run(f.in);
    REQUIRE(r.jobs[0].interruptions.mean == 0.0);
    CHECK(r.jobs[0].checkpoint_gpu_hours.mean == Rel(expected).epsilon(1e-9));
  }
}

TEST_CASE("a horizon before the end projects the time to train at the pooled ETTR: work / ETTR, not its mean inverse") {
  // 100 days of work, a horizon of 3: no replication finishes. Every replication ran the
  // same 3 days from the start, so the pooled ETTR is their mean, and each projection,
  // elapsed + (work - useful) / ETTR, averages to work / ETTR exactly. Projecting each at its
  // own ETTR averaged work x mean(1 / ETTR), larger by Jensen's inequality (29 days for a
  // 5-day job whose ETTR said 10). The projection's pace also charges the checkpoint the
  // last cycle owes for its training (at most the 60 s write), which the ETTR does not yet
  // hold: the mean is work / ETTR times 1 to 1 + 60 s / 3 days.
  Fixture f(1.0);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.jobs[0].train_tokens = 100 * kDay * f.in.jobs[0].tokens_per_s;
  f.in.horizon_s = 3 * kDay;
  f.in.replications = 20;
  const LongRunResult r = simulate_long_run(f.in);
  const JobSummary& j = r.jobs[0];
  REQUIRE(j.finished_share == 0.0);
  REQUIRE(j.ettr.mean > 0.5);
  REQUIRE(j.ettr.ci95 > 0.0);
  const double ratio = j.time_to_train_s.mean / (100 * kDay / j.ettr.mean);
  CHECK(ratio >= 1.0 - 1e-12);
  CHECK(ratio <= 1.0 + 60.0 / (3 * kDay));
  // Its interval is mostly the ETTR's, relative: the projected 97 days carry it.
  CHECK(j.time_to_train_s.ci95 / j.time_to_train_s.mean == Rel(j.ettr.ci95 / j.ettr.mean).epsilon(0.1));
}

TEST_CASE("no projection from under a millionth of the work per replication, nor past 292 years") {
  // 20 replications of 3 days on a job of 1e7 days: each trains at most 3 days, 3e-7 of the
  // work, so none is projectable, though their sum (6e-6 of it) passed the old test, which
  // compared the pooled work with one job's.
  Fixture f(1.0);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.jobs[0].train_tokens = 1e7 * kDay * f.in.jobs[0].tokens_per_s;
  f.in.horizon_s = 3 * kDay;
  f.in.replications = 20;
  JobSummary j = simulate_long_run(f.in).jobs[0];
  REQUIRE(j.ettr.mean > 0.0);
  CHECK(std::isnan(j.time_to_train_s.mean));
  CHECK_FALSE(j.projection_past_clock);
  // 2e5 days of work: 1.5e-5 of it each, projectable, but 2e5 / ETTR days is past the clock.
  f.in.jobs[0].train_tokens = 2e5 * kDay * f.in.jobs[0].tokens_per_s;
  j = simulate_long_run(f.in).jobs[0];
  CHECK(std::isnan(j.time_to_train_s.mean));
  CHECK(j.projection_past_clock);
  // 1e4 days (27 years) is projected, at work / ETTR (to the last cycle's owed write, above).
  f.in.jobs[0].train_tokens = 1e4 * kDay * f.in.jobs[0].tokens_per_s;
  j = simulate_long_run(f.in).jobs[0];
  const double ratio = j.time_to_train_s.mean / (1e4 * kDay / j.ettr.mean);
  CHECK(ratio >= 1.0 - 1e-12);
  CHECK(ratio <= 1.0 + 60.0 / (3 * kDay));
  CHECK_FALSE(j.projection_past_clock);
}

TEST_CASE("without failures a job loses only its checkpoints: ETTR = tau / (tau + delta)") {
  Fixture f(1.0);
  f.failures.components.clear();
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  f.in.horizon_s = 10 * kDay;
  const LongRunResult r = simulate_long_run(f.in);
  CHECK(r.jobs[0].ettr.mean == Rel(3600.0 / 3660.0).epsilon(1e-4));
  CHECK(r.jobs[0].interruptions.mean == 0.0);
  CHECK(std::isinf(r.jobs[0].mtbf_s));
}

TEST_CASE("a horizon shorter than the checkpoint interval projects the time to train with its checkpoints") {
  // No failures, tau = 2 h, delta = 60 s (the fixture's write), a horizon of 1 h: no
  // checkpoint is written within it and the ETTR seen is 1, but the steady pace is
  // tau / (tau + delta): 10 days of training take 10 (tau + delta) / tau days. Before, the
  // projection said 10 days.
  Fixture f(1.0);
  f.failures.components.clear();
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.jobs[0].train_tokens = 10 * kDay * f.in.jobs[0].tokens_per_s;
  f.in.horizon_s = 3600;
  const JobSummary j = simulate_long_run(f.in).jobs[0];
  CHECK(j.ettr.mean == Rel(1.0).epsilon(1e-9));
  CHECK(j.time_to_train_s.mean == Rel(10 * kDay * 7260.0 / 7200.0).epsilon(1e-6));
  // Past several intervals the window's own checkpoints set the pace, and the uncommitted
  // tail's share keeps it exact: 10.5 h; also when the horizon ends inside a write (the
  // write's rest is owed, not a whole one more: 1.5% more at 2 h 30 s before).
  for (const double horizon : {10.5 * 3600, 7200.0 + 30.0, 7200.0 + 59.0, 7260.0}) {
    CAPTURE(horizon);
    f.in.horizon_s = horizon;
    const JobSummary k = simulate_long_run(f.in).jobs[0];
    CHECK(k.time_to_train_s.mean == Rel(10 * kDay * 7260.0 / 7200.0).epsilon(1e-6));
  }
}

TEST_CASE("Young/Daly: a sweep of the interval finds the optimum (about sqrt(2 delta M) - delta) within 5%") {
  const double M = kDay, delta = 60.0;
  const double daly = daly_interval(delta, M);
  const double best = swept_optimum(60e12, daly, 0.4, 2.51, 1.1);
  CHECK(best / daly == Rel(1.0).epsilon(0.05));
}

TEST_CASE("auto interval is Daly's higher-order optimum from the job's MTBF") {
  Fixture f(0.5);
  f.in.horizon_s = 5 * kDay;
  const LongRunResult r = simulate_long_run(f.in);
  CHECK(r.jobs[0].mtbf_s == Rel(0.5 * kDay));
  // delta = 60 s, M = 43,200 s: x = delta / 2M = 1/1440; sqrt(2 delta M) = 2,276.8 s;
  // tau = 2,276.8 (1 + sqrt(x) / 3 + x / 9) - 60 = 2,236.8 s (first order: 2,216.8).
  const double x = 60.0 / (2.0 * 0.5 * kDay);
  CHECK(r.jobs[0].checkpoint_interval_s ==
        Rel(std::sqrt(2.0 * 60.0 * 0.5 * kDay) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - 60.0));
  CHECK(r.jobs[0].checkpoint_interval_s == Rel(2236.8).epsilon(1e-4));
  // A write at least twice the MTBF: tau = M (Daly's eq. 37).
  CHECK(daly_interval(3.0 * kDay, kDay) == kDay);
  CHECK(daly_interval(2.0 * kDay, kDay) == kDay);
}

TEST_CASE("training, lost and checkpoint GPU-hours add up to the job's GPU-hours") {
  // A software failure a day on average, a 10-minute blocking write every 2 hours: about 7.7%
  // of the running time is spent writing (600 / 7,800), which lost_gpu_hours does not hold.
  Fixture f(1.0, 600e12);
  f.in.checkpoint.interval = {false, sim::Time::from_seconds(7200)};
  f.in.horizon_s = 400 * kDay;
  f.in.replications = 4;
  const JobSummary s = simulate_long_run(f.in).jobs[0];
  const double lost = total_lost_gpu_hours(s);
  const double total = 400.0 * 24.0 * 64.0;
  CHECK(s.checkpoint_gpu_hours.mean > 0.06 * total);
  CHECK(s.checkpoint_gpu_hours.mean < 0.08 * total);
  CHECK(lost + s.checkpoint_gpu_hours.mean + s.ettr.mean * total == Rel(total).epsilon(0.01));
}

TEST_CASE("GPU-hours add up exactly when writes outlast the interval: a write cut short is checkpoint time, not lost work") {
  // A failure every 6 hours, a 2-hour blocking write (7.2e15 B at 1 TB/s) after every
  // 30 minutes of training (asynchronous: the interval grows to the write, and a background
  // write is under way most of the time): most failures fall in a write. The time written before one is
  // checkpoint GPU-hours (it took place); the lost work is only the training since the last
  // committed checkpoint. Both had counted it: the parts summed to 107% of the horizon.
  for (const bool async : {false, true}) {
    CAPTURE(async);
    Fixture f(0.25, 7.2e15);
    f.in.checkpoint.interval = {false, sim::Time::from_seconds(1800)};
    f.in.checkpoint.async = async;
    f.in.checkpoint.snapshot_bandwidth = sim::Bandwidth::of(5e12);
    f.in.horizon_s = 20 * kDay;
    f.in.replications = 4;
    const JobSummary s = simulate_long_run(f.in).jobs[0];
    const double lost = total_lost_gpu_hours(s);
    const double total = 20.0 * 24.0 * 64.0;
    if (!async) CHECK(s.checkpoint_gpu_hours.mean > 0.5 * total);
    CHECK(lost > 0.0);
    CHECK(lost + s.checkpoint_gpu_hours.mean + s.ettr.mean * total == Rel(total).epsilon(1e-9));
  }
}

TEST_CASE("Daly's higher order finds a long write's optimum where the first order undershoots") {
  // delta = M / 4: the first order gives sqrt(2 M^2 / 4) - M / 4 = 0.457 M, the higher order
  // 0.707 M (1 + sqrt(1/8) / 3 + 1/72) - M / 4 = 0.550 M. A sweep of fixed intervals (a
  // parabola through ETTR against log tau) must land nearer the higher order.
  const double M = kDay, delta = M / 4.0;
  const double first = std::sqrt(2.0 * delta * M) - delta;
  const double higher = daly_interval(delta, M);
  CHECK(higher / M == Rel(0.5503).epsilon(1e-3));
  const double best = swept_optimum(delta * 1e12, higher, 0.5, 2.01, 1.15);  // written at 1 TB/s
  CAPTURE(best / M);
  CHECK(std::fabs(std::log(best / higher)) < std::fabs(std::log(best / first)));
  CHECK(best / higher == Rel(1.0).epsilon(0.10));
}

TEST_CASE("hardware failures: without spares the job waits for repairs; spares keep it going") {
  const auto run = [](std::int64_t spares) {
    FailuresConfig failures;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.01, Per::gpu};  // 64 GPUs: 0.64 failures a day
    failures.components["gpu"] = gpu;
    failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(2 * kDay), 1.0};
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 8;
    in.gpus_per_node = 8;
    in.scheduler.spare_nodes = spares;
    in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
    in.jobs.push_back({"job", 0, 8, 64, 8, 1e6, std::nullopt, 1e12});
    in.horizon_s = 200 * kDay;
    in.replications = 3;
    return simulate_long_run(in);
  };
  const LongRunResult none = run(0);
  const LongRunResult some = run(4);
  CHECK(some.jobs[0].ettr.mean > none.jobs[0].ettr.mean + 0.2);
  CHECK(some.failures_by_cause.at("gpu").mean == Rel(0.64 * 200).epsilon(0.15));
}

TEST_CASE("a job waiting for a repair runs nothing: its GPUs and its software do not fail meanwhile") {
  // 64 GPUs at 0.01 a day (0.64 a day for the job while it runs), no spares, 2-day repairs:
  // each cycle is a run of mean 1/0.64 d and a 2 d wait, so over 200 d there are
  // 200 / (1/0.64 + 2) = 56 GPU failures, not the 128 of GPUs failing through the waits; the
  // job's software (1 a day) fails only in the running share, 0.44, of the 200 days.
  FailuresConfig failures;
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.01, Per::gpu};
  failures.components["gpu"] = gpu;
  ComponentConfig software;
  software.rate = FailureRate{1.0, Per::job};
  software.per = Per::job;
  failures.components["software"] = software;
  failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(2 * kDay), 1.0};
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 8;
  in.gpus_per_node = 8;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.jobs.push_back({"job", 0, 8, 64, 8, 1e6, std::nullopt, 1e12});
  in.horizon_s = 200 * kDay;
  in.replications = 10;
  const LongRunResult r = simulate_long_run(in);
  const double cycles = 200.0 / (1.0 / 0.64 + 2.0);
  CHECK(r.failures_by_cause.at("gpu").mean == Rel(cycles).epsilon(0.15));
  const double running_share = (1.0 / 0.64) / (1.0 / 0.64 + 2.0);
  CHECK(r.failures_by_cause.at("software").mean == Rel(200.0 * running_share).epsilon(0.15));
  CHECK(r.jobs[0].ettr.mean < running_share);
  CHECK(r.jobs[0].ettr.mean > 0.8 * running_share);
}

TEST_CASE("a spare replacing a failed node runs nothing before the restart: it cannot fail while the failure is detected") {
  // A one-node job on a 4-node cluster, its 8 GPUs at 1 failure a day each (8 a day for the
  // job), a 1-hour detection: the free nodes are spares. Each failure of the node serving the
  // job interrupts it (no other node of its runs), a failure during the restart aborts it
  // (an interruption too), and a spare that took the failed node's place starts its clocks
  // with the restart. So every GPU failure is an interruption. When the spare served from
  // the failure on, its failures in the hour before anyone knew of the first joined it and
  // interrupted nothing: 158 failures for 121 interruptions.
  FailuresConfig failures;
  ComponentConfig gpu;
  gpu.rate = FailureRate{1.0, Per::gpu};
  failures.components["gpu"] = gpu;
  failures.repair.detect = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(3600), 1.0};
  failures.repair.restart = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(600), 1.0};
  failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(7200), 1.0};
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 4;
  in.gpus_per_node = 8;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.jobs.push_back({"job", 0, 1, 8, 8, 1e6, std::nullopt, 1e12});
  in.horizon_s = 20 * kDay;
  in.replications = 4;
  const LongRunResult r = simulate_long_run(in);
  // About one failure per (3 h up + 1 h 10 min down): ~115 in 20 days.
  CHECK(r.failures_by_cause.at("gpu").mean > 80.0);
  CHECK(r.jobs[0].interruptions.mean == r.failures_by_cause.at("gpu").mean);
}

TEST_CASE("heterogeneity concentrates failures on a few GPUs; retirement removes the worst nodes") {
  const auto run = [](HeterogeneityKind kind, std::int64_t retire_after) {
    FailuresConfig failures;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.001, Per::gpu};
    failures.components["gpu"] = gpu;
    failures.heterogeneity.kind = kind;
    failures.heterogeneity.top_fraction = 0.01;
    failures.heterogeneity.failure_share = 0.5;
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 256;
    in.gpus_per_node = 8;
    in.scheduler.spare_nodes = 16;
    in.scheduler.retire_after = retire_after;
    in.jobs.push_back({"job", 0, 256, 2048, 256, 1e6, std::nullopt, 1e12});
    in.horizon_s = 365 * kDay;
    in.replications = 5;
    in.seed = 3;
    return simulate_long_run(in);
  };
  const LongRunResult flat = run(HeterogeneityKind::none, 0);
  const LongRunResult heavy = run(HeterogeneityKind::power_law, 0);
  CHECK(heavy.top1_failure_share.mean > flat.top1_failure_share.mean + 0.1);
  CHECK(heavy.heterogeneity_alpha == Rel(1.1772).epsilon(1e-3));
  const LongRunResult retiring = run(HeterogeneityKind::power_law, 2);
  CHECK(retiring.retired_nodes.mean > 0.0);
  CHECK(flat.retired_nodes.mean == 0.0);
}

TEST_CASE("retire_window counts back from the failure, not from the end of its repair") {
  // retire_after 1: every failure retires its node when its window holds it. A window of
  // one second is shorter than the 4 h repair: counted back from the repair's end it held
  // no failure, and no node was ever retired.
  const auto run = [](double window_s) {
    FailuresConfig failures;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.01, Per::gpu};  // 64 GPUs: 0.64 failures a day
    failures.components["gpu"] = gpu;
    failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(4 * 3600), 1.0};
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 8;
    in.gpus_per_node = 8;
    in.scheduler.spare_nodes = 2;
    in.scheduler.retire_after = 1;
    in.scheduler.retire_window = sim::Time::from_seconds(window_s);
    in.jobs.push_back({"job", 0, 8, 64, 8, 1e6, std::nullopt, 1e12});
    in.horizon_s = 30 * kDay;
    in.replications = 3;
    return simulate_long_run(in);
  };
  const LongRunResult second = run(1.0);
  const LongRunResult month = run(30 * kDay);
  // Failures of repaired nodes only end in repair; all of them retire here.
  CHECK(second.retired_nodes.mean > 0.0);
  CHECK(second.retired_nodes.mean == Rel(month.retired_nodes.mean).epsilon(1e-9));
  CHECK(second.retired_nodes.mean == Rel(second.failures_by_cause.at("gpu").mean).epsilon(0.1));
}

TEST_CASE("the same seed gives the same run; another seed another") {
  Fixture f(0.2);
  f.in.horizon_s = 30 * kDay;
  f.in.replications = 3;
  const LongRunResult a = simulate_long_run(f.in);
  const LongRunResult b = simulate_long_run(f.in);
  CHECK(a.jobs[0].ettr.mean == b.jobs[0].ettr.mean);
  CHECK(a.timeline.size() == b.timeline.size());
  f.in.seed = 2;
  const LongRunResult c = simulate_long_run(f.in);
  CHECK(c.jobs[0].ettr.mean != a.jobs[0].ettr.mean);
}

TEST_CASE("check_failures: each inconsistency names its key") {
  FailuresConfig f;
  ComponentConfig both;
  both.rate = FailureRate{0.1, Per::gpu};
  both.mtbf = sim::Time::from_seconds(kDay);
  f.components["gpu"] = both;
  ComponentConfig unknown;
  unknown.mtbf = sim::Time::from_seconds(kDay);
  f.components["fan"] = unknown;
  ComponentConfig clash;
  clash.rate = FailureRate{0.1, Per::node};
  clash.per = Per::gpu;
  f.components["psu"] = clash;
  f.heterogeneity.kind = HeterogeneityKind::power_law;
  const auto problems = check_failures(f);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0].path == "components.fan");
  CHECK(problems[1].path == "components.gpu");
  CHECK(problems[2].path == "components.psu.per");
  CHECK(problems[3].path == "heterogeneity");
}

namespace {

/// ETTR of a job on all `nodes` nodes of 8 GPUs in `dp` replicas, GPUs failing at
/// 0.01 a day each, 3-day repairs, no spares, with or without shrinking (100 days, 3
/// replications).
JobSummary shrink_run(bool shrink, std::int64_t dp, std::int64_t nodes = 16) {
  FailuresConfig failures;
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.01, Per::gpu};
  failures.components["gpu"] = gpu;
  failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(3 * kDay), 1.0};
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = nodes;
  in.gpus_per_node = 8;
  in.scheduler.shrink = shrink;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.jobs.push_back(JobProfile{"job", 0, nodes, 8 * nodes, dp, 1e6, std::nullopt, 1e12});
  in.horizon_s = 100 * kDay;
  in.replications = 3;
  return simulate_long_run(in).jobs[0];
}

double shrink_ettr(bool shrink, std::int64_t dp, std::int64_t nodes = 16) { return shrink_run(shrink, dp, nodes).ettr.mean; }

}  // namespace

TEST_CASE("shrinking: without spares a job restarts on its whole replicas instead of waiting for repairs") {
  const double wait = shrink_ettr(false, 8);  // 8 replicas of 2 nodes
  const double shrink = shrink_ettr(true, 8);
  // Waiting: ~1.3 failures a day and 3-day repairs leave the job down most of the time.
  CHECK(wait < 0.3);
  // Shrinking keeps most replicas busy: the throughput share is the ETTR's main loss.
  CHECK(shrink > wait + 0.2);
  CHECK(shrink < 0.95);
}

TEST_CASE("shrinking: the missing replicas' throughput counts in the lost GPU-hours") {
  // ETTR and the lost GPU-hours share the job's GPU-time (checkpoint writes apart): running
  // on 6 of 8 replicas loses 2/8 of it. It was left out (the two summed to 0.92 on a Llama 3
  // run), and the work lost at a failure counted whole where the job ran on 6/8 (1.01 here).
  const auto accounted = [](const JobSummary& j) {
    double lost = 0.0;
    for (const auto& [cause, e] : j.lost_gpu_hours) lost += e.mean;
    return j.ettr.mean + lost / (16.0 * 8.0 * 100.0 * 24.0);  // over 128 GPUs x 100 days
  };
  const JobSummary wait = shrink_run(false, 8);
  const JobSummary shrink = shrink_run(true, 8);
  MESSAGE("ETTR + lost share: waiting ", accounted(wait), ", shrinking ", accounted(shrink));
  CHECK(accounted(wait) == doctest::Approx(accounted(shrink)).epsilon(0.01));
  CHECK(accounted(shrink) == doctest::Approx(1.0).epsilon(0.005));
  // Charged to the cause that took the nodes (gpu, the only one here), not to a key of its own
  // (beside the training at the horizon a failure is expected to take back).
  CHECK(shrink.lost_gpu_hours.count("shrink") == 0);
  CHECK(shrink.lost_gpu_hours.count("") == 0);
  CHECK(shrink.lost_gpu_hours.size() - shrink.lost_gpu_hours.count(std::string(kUnsavedAtHorizon)) == 1);
  CHECK(shrink.lost_gpu_hours.count("gpu") == 1);
}

TEST_CASE("a finished job's time to train is its training, checkpoint writes and lost time, the final write included") {
  // 8 GPUs, 100 GB checkpoints at 1 GB/s (100 s writes) every 30 minutes, no failure:
  // 20.5 hours of training are 41 whole cycles; 20.25 and 20.1 hours end part way through
  // the last, whose write follows. That final write was in the time to train but not in the
  // checkpoint GPU-hours (one write short of the time to train).
  for (const double hours : {20.5, 20.25, 20.1}) {
    CAPTURE(hours);
    FailuresConfig failures;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.0, Per::gpu};
    failures.components["gpu"] = gpu;
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 1;
    in.gpus_per_node = 8;
    in.checkpoint.interval = {false, sim::Time::from_seconds(1800)};
    in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e9);
    in.jobs.push_back(JobProfile{"job", 0, 1, 8, 1, 1.0, hours * 3600.0, 100e9});
    in.horizon_s = 30 * kDay;
    in.replications = 1;
    const LongRunResult r = simulate_long_run(in);
    const JobSummary& j = r.jobs[0];
    const double writes = std::ceil(hours * 2.0 - 1e-9);
    CHECK(j.time_to_train_s.mean == Rel(hours * 3600.0 + writes * 100.0));
    CHECK(j.checkpoint_gpu_hours.mean * 3600.0 / 8.0 == Rel(writes * 100.0));
  }
}

TEST_CASE("a failed node's repair starts once the failure is detected and diagnosed") {
  // One node, no spare: the job restarts after detect (5 h) + diagnose (1 h) + replace (1 h)
  // + restart (10 min) + checkpoint read. The repair started at the failure, so the job waited
  // max(6 h, 1 h) + 10 min instead.
  FailuresConfig failures;
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.05, Per::gpu};
  failures.components["gpu"] = gpu;
  const auto fixed = [](double s) { return DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(s), 1.0}; };
  failures.repair.detect = fixed(5 * 3600);
  failures.repair.diagnose = fixed(3600);
  failures.repair.replace = fixed(3600);
  failures.repair.restart = fixed(600);
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 1;
  in.gpus_per_node = 8;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.jobs.push_back(JobProfile{"job", 0, 1, 8, 1, 1e6, std::nullopt, 1e12});
  in.horizon_s = 30 * kDay;
  in.replications = 1;
  const LongRunResult r = simulate_long_run(in);
  int checked = 0;
  for (std::size_t i = 0; i < r.timeline.size(); ++i) {
    if (r.timeline[i].kind != "interruption") continue;
    const double failed = r.timeline[i].time_s;
    const auto restart = std::find_if(r.timeline.begin() + static_cast<std::ptrdiff_t>(i), r.timeline.end(),
                                      [](const TimelineEvent& e) { return e.kind == "restart"; });
    const auto repaired = std::find_if(r.timeline.begin() + static_cast<std::ptrdiff_t>(i), r.timeline.end(),
                                       [](const TimelineEvent& e) { return e.kind == "repaired"; });
    if (restart == r.timeline.end() || repaired == r.timeline.end()) break;
    // Failures during the downtime join it: check only a failure followed by its own repair.
    if (repaired->time_s > restart->time_s) continue;
    CHECK(repaired->time_s == doctest::Approx(failed + 7 * 3600.0).epsilon(1e-12));
    // Then the restart and the checkpoint read (the default checkpoint: about a second).
    CHECK(restart->time_s - repaired->time_s >= 600.0);
    CHECK(restart->time_s - repaired->time_s < 610.0);
    ++checked;
  }
  CHECK(checked >= 3);
}

TEST_CASE("shrinking: a shrunk job grows back when its node returns from repair") {
  // 4 nodes, one replica each, no spares, 4-hour repairs: 0.32 failures a day. Shrinking
  // runs on 3 of 4 replicas for the 4 hours of a repair, then grows back (a checkpoint, a
  // restart). It grew only at its next restart, when (no spares) the next failure's node was
  // in repair: it ran on 3 of 4 to the end, ETTR 77% against 94% for waiting.
  const auto run = [](bool shrink) {
    FailuresConfig failures;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.01, Per::gpu};
    failures.components["gpu"] = gpu;
    failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(4 * 3600), 1.0};
    failures.repair.restart = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(600), 1.0};
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 4;
    in.gpus_per_node = 8;
    in.scheduler.shrink = shrink;
    in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
    in.jobs.push_back(JobProfile{"job", 0, 4, 32, 4, 1e6, std::nullopt, 1e12});
    in.horizon_s = 30 * kDay;
    in.replications = 20;
    return simulate_long_run(in);
  };
  const LongRunResult wait = run(false);
  const LongRunResult shrink = run(true);
  MESSAGE("ETTR waiting ", wait.jobs[0].ettr.mean, ", shrinking ", shrink.jobs[0].ettr.mean);
  CHECK(shrink.jobs[0].ettr.mean > wait.jobs[0].ettr.mean + 0.01);
  // Each regrow is followed by the job's restart, and follows a repair: the job is back to
  // its whole size, not shrunk for the rest of the run.
  int regrows = 0;
  const auto& t = shrink.timeline;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != "regrow") continue;
    ++regrows;
    CHECK(t[i].cause == "gpu");
    CHECK(i > 0);
    if (i > 0) CHECK(t[i - 1].kind == "repaired");
    const auto next = std::find_if(t.begin() + static_cast<std::ptrdiff_t>(i) + 1, t.end(),
                                   [](const TimelineEvent& e) { return e.job == 0 && e.kind != "failure"; });
    // (or a failure during that restart: an interruption, then the restart)
    CHECK((next == t.end() || next->kind == "restart" || next->kind == "interruption"));
  }
  CHECK(regrows >= 1);
  // Growing back is not an interruption: the counts are the failures'.
  CHECK(shrink.jobs[0].interruptions.mean == doctest::Approx(wait.jobs[0].interruptions.mean).epsilon(0.15));
}

TEST_CASE("shrinking with replicas smaller than a node: a lost node takes only the replicas on it") {
  // 32 replicas of 4 GPUs on 16 nodes of 8: a node holds two, so one failed node leaves 30
  // of 32 running. Before, a replica smaller than a node never shrank (ETTR as waiting).
  const double wait = shrink_ettr(false, 32);
  const double half_node = shrink_ettr(true, 32);
  const double two_nodes = shrink_ettr(true, 8);
  CHECK(wait < 0.3);
  CHECK(half_node > wait + 0.2);
  // A failed node costs 2 of 32 replicas there and 1 of 8 (2 nodes each) here: it keeps more.
  CHECK(half_node > two_nodes);
  // 10 replicas of 12 GPUs on 15 nodes: replica 1 (GPUs 12-23) spans nodes 1 and 2, sharing
  // each with a neighbour. It shrinks too, keeping less than whole-node replicas would.
  const double wait15 = shrink_ettr(false, 10, 15);
  const double straddling = shrink_ettr(true, 10, 15);
  CHECK(straddling > wait15 + 0.1);
  CHECK(straddling < shrink_ettr(true, 15, 15));
}

TEST_CASE("Weibull lives: a unit keeps its age when its node leaves service; counts follow the renewal function") {
  // Renewal theory: the expected failures of one unit in (0, t] from new is
  // m(t) ~ t / mu + (CV^2 - 1) / 2; Weibull shape 0.5 has CV^2 = Gamma(5) / Gamma(3)^2 - 1 = 5,
  // so 64 GPUs over 20 mean lives fail about 64 x (20 + 2) times. Were the clocks of a node's
  // other GPUs reset whenever the node is swapped out, infant mortality would repeat and the
  // count would be several times higher. A fleet in service (the default) starts each unit
  // at the residual of a life, the equilibrium renewal process: its count is exactly t / mu,
  // 64 x 20, whatever the law.
  const auto run = [](Distribution law, double shape, FleetAge age = FleetAge::new_) {
    FailuresConfig failures;
    failures.fleet_age = age;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.01, Per::gpu};
    gpu.distribution = law;
    gpu.shape = shape;
    failures.components["gpu"] = gpu;
    failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(60), 1.0};
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 8;
    in.gpus_per_node = 8;
    in.scheduler.spare_nodes = 8;
    in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
    in.jobs.push_back({"job", 0, 8, 64, 8, 1e6, std::nullopt, 1e12});
    in.horizon_s = 2000 * kDay;
    in.replications = 20;
    return simulate_long_run(in).failures_by_cause.at("gpu").mean;
  };
  CHECK(run(Distribution::exponential, 1.0) == Rel(64 * 20.0).epsilon(0.05));
  CHECK(run(Distribution::weibull, 0.5) == Rel(64 * 22.0).epsilon(0.1));
  CHECK(run(Distribution::weibull, 0.5, FleetAge::in_service) == Rel(64 * 20.0).epsilon(0.05));
  CHECK(run(Distribution::lognormal, 1.5, FleetAge::in_service) == Rel(64 * 20.0).epsilon(0.05));
}

TEST_CASE("a fleet in service fails at the configured rate from the start; a new one with infant mortality far more") {
  // 1,024 GPUs at 0.0002 per GPU-day over 30 days: 1024 x 0.0002 x 30 = 6.14 failures
  // expected in service, whatever the law (the equilibrium renewal process's rate is 1 / mu).
  // New at t = 0, a Weibull of shape 0.7 and mean mu = 5,000 d (scale s = mu / Gamma(1 +
  // 1/0.7) = 5,000 / 1.2657 = 3,950 d) fails with probability F(30 d) = 1 - exp(-(30 /
  // 3,950)^0.7) = 0.0323 in 30 days (second failures are negligible): 33.1, 5.4x the rate.
  const auto run = [](Distribution law, double shape, FleetAge age) {
    FailuresConfig failures;
    failures.fleet_age = age;
    ComponentConfig gpu;
    gpu.rate = FailureRate{0.0002, Per::gpu};
    gpu.distribution = law;
    gpu.shape = shape;
    failures.components["gpu"] = gpu;
    failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(3600), 1.0};
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 128;
    in.gpus_per_node = 8;
    in.scheduler.spare_nodes = 16;
    in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
    in.jobs.push_back({"job", 0, 128, 1024, 8, 1e6, std::nullopt, 1e12});
    in.horizon_s = 30 * kDay;
    in.replications = 200;
    return simulate_long_run(in).failures_by_cause.at("gpu").mean;
  };
  // 200 replications of a Poisson-like count of mean ~6: a standard error of ~0.18 (3%); 10%
  // bands are three of them.
  const double expected = 1024 * 0.0002 * 30;
  CHECK(run(Distribution::exponential, 1.0, FleetAge::in_service) == Rel(expected).epsilon(0.1));
  CHECK(run(Distribution::weibull, 0.7, FleetAge::in_service) == Rel(expected).epsilon(0.1));
  CHECK(run(Distribution::lognormal, 2.0, FleetAge::in_service) == Rel(expected).epsilon(0.1));
  CHECK(run(Distribution::weibull, 2.0, FleetAge::in_service) == Rel(expected).epsilon(0.1));
  const double scale = 5000.0 / std::tgamma(1.0 + 1.0 / 0.7);
  const double new_fleet = 1024 * (1.0 - std::exp(-std::pow(30.0 / scale, 0.7)));
  CHECK(new_fleet == Rel(33.1).epsilon(0.01));
  CHECK(run(Distribution::weibull, 0.7, FleetAge::new_) == Rel(new_fleet).epsilon(0.05));
  // Memoryless: an exponential fleet is the same new or in service.
  CHECK(run(Distribution::exponential, 1.0, FleetAge::new_) == run(Distribution::exponential, 1.0, FleetAge::in_service));
}

TEST_CASE("a finished job's nodes become spares; a job down at the end counts its downtime as lost") {
  FailuresConfig failures;
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.01, Per::gpu};  // 16 GPUs: a failure every 6.25 days
  failures.components["gpu"] = gpu;
  failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(300 * kDay), 1.0};
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 4;
  in.gpus_per_node = 8;
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  // A short job on nodes 0-1 and a long one on nodes 2-3; no spares, repairs take 300 days.
  in.jobs.push_back({"short", 0, 2, 16, 2, 1e6, 1e6 * 600.0, 1e9});
  in.jobs.push_back({"long", 2, 2, 16, 2, 1e6, std::nullopt, 1e9});
  in.horizon_s = 20 * kDay;
  in.replications = 40;
  const LongRunResult r = simulate_long_run(in);
  // The long job gets the short job's two nodes: it stops for good only at its third failure
  // (18.75 days on average), not at its first (6.25 days: ETTR about 0.3).
  CHECK(r.jobs[1].ettr.mean > 0.5);
  double lost = 0.0;
  for (const auto& [k, e] : r.jobs[1].lost_gpu_hours) lost += e.mean;
  // Whatever it lost, lost GPU-hours and training time add up to its GPU-hours.
  CHECK(lost + r.jobs[1].ettr.mean * 20 * 24 * 16 == Rel(20 * 24 * 16).epsilon(0.05));
}

namespace {

/// A cluster of `nodes` nodes of 8 GPUs without failures or checkpoints; jobs train at one
/// token per second, so train_tokens is their run time in seconds.
struct QueueFixture {
  FailuresConfig failures;
  LongRunInputs in;

  QueueFixture(std::int64_t nodes, QueuePolicy policy) {
    in.failures = &failures;
    in.nodes = nodes;
    in.gpus_per_node = 8;
    in.scheduler.policy = policy;
  }
  void job(const char* name, std::int64_t nodes, double hours, double submit_h = 0.0, std::int64_t first = 0) {
    JobProfile p{name, first, nodes, 8 * nodes, nodes, 1.0, hours * 3600.0, 0.0};
    p.submit_s = submit_h * 3600.0;
    in.jobs.push_back(p);
  }
};

std::vector<double> starts_h(const LongRunResult& r) {
  std::vector<double> out;
  for (const JobSummary& j : r.jobs) out.push_back(j.start_s.mean / 3600.0);
  return out;
}

}  // namespace

TEST_CASE("queue: FIFO starts in order; EASY backfill starts a later job early only if the head is not delayed") {
  SUBCASE("a backfilled job may end after the reservation on nodes the head job will not need") {
    // 4 nodes. A (3 nodes, 10 h) starts; B (2 nodes, 5 h) waits for A. Backfill: B's
    // reservation is at 10 h, when 1 + 3 nodes are free, 2 more than it needs (extra = 2).
    // C (1 node, 4 h) ends before 10 h: starts at 0. At 4 h C's node is free again: D (1
    // node, 20 h) ends after 10 h but fits in the extra nodes: starts at 4 h. B starts at
    // 10 h either way.
    const auto run = [](QueuePolicy policy) {
      QueueFixture f(4, policy);
      f.job("A", 3, 10);
      f.job("B", 2, 5);
      f.job("C", 1, 4);
      f.job("D", 1, 20);
      return simulate_long_run(f.in);
    };
    const LongRunResult fifo = run(QueuePolicy::fifo);
    const LongRunResult backfill = run(QueuePolicy::backfill);
    CHECK(starts_h(fifo) == std::vector<double>{0, 10, 10, 10});
    CHECK(starts_h(backfill) == std::vector<double>{0, 10, 0, 4});
    CHECK(backfill.jobs[3].queue_wait_s.mean == Rel(4 * 3600.0));
    CHECK(fifo.jobs[3].end_s.mean == Rel(30 * 3600.0));
    CHECK(backfill.jobs[3].end_s.mean == Rel(24 * 3600.0));
    // Utilisation = busy / available GPU-hours: (3 x 10 + 2 x 5 + 1 x 4 + 1 x 20) node-h x 8
    // = 512 GPU-h, over 4 nodes x 8 GPUs until the last job ends (30 h FIFO, 24 h backfill).
    CHECK(fifo.utilisation.mean == Rel(512.0 / (32 * 30)));
    CHECK(backfill.utilisation.mean == Rel(512.0 / (32 * 24)));
    CHECK(backfill.busy_gpu_hours.mean == Rel(512.0));
    // Without failures every job trains all the time it runs.
    CHECK(backfill.jobs[3].ettr.mean == Rel(1.0));
  }
  SUBCASE("a job that would take nodes the head job needs at its reservation waits") {
    // 4 nodes. A (2 nodes, 10 h) runs; B (4 nodes, 5 h) needs all of them at 10 h: no extra.
    // C (1 node, 20 h) fits now but would still run at 10 h: it waits for B (starts at 15 h).
    // D (1 node, 5 h) ends before 10 h: backfilled at 0.
    const auto run = [](QueuePolicy policy) {
      QueueFixture f(4, policy);
      f.job("A", 2, 10);
      f.job("B", 4, 5);
      f.job("C", 1, 20);
      f.job("D", 1, 5);
      return simulate_long_run(f.in);
    };
    CHECK(starts_h(run(QueuePolicy::fifo)) == std::vector<double>{0, 10, 15, 15});
    CHECK(starts_h(run(QueuePolicy::backfill)) == std::vector<double>{0, 10, 15, 0});
  }
  SUBCASE("jobs submitted later queue from their submit time; the queue keeps the hot spares free") {
    // 2 nodes and 1 spare. A (2 nodes, 10 h) at 0; B (1 node, 1 h) submitted at 3 h finds
    // the spare idle but may not take it: it starts when A ends.
    QueueFixture f(2, QueuePolicy::backfill);
    f.in.scheduler.spare_nodes = 1;
    f.job("A", 2, 10);
    f.job("B", 1, 1, 3);
    const LongRunResult r = simulate_long_run(f.in);
    CHECK(starts_h(r) == std::vector<double>{0, 10});
    CHECK(r.jobs[1].queue_wait_s.mean == Rel(7 * 3600.0));
    // The spare is not the cluster's: utilisation (2 x 10 + 1 x 1) node-h / (2 nodes x 11 h).
    CHECK(r.utilisation.mean == Rel(21.0 / 22.0));
  }
}

TEST_CASE("placement: the nominal range when free, else a contiguous range inside one pod, else fragmented") {
  const auto first_nodes = [](const LongRunResult& r) {
    std::vector<std::int64_t> out;
    for (const TimelineEvent& e : r.timeline) {
      if (e.kind == "start") out.push_back(e.node);
    }
    return out;
  };
  // 8 nodes in pods of 4. A takes nodes 0-2 (its nominal range). B (2 nodes) was simulated
  // on nodes 0-1, which A holds: the free run is 3-7; starting at 3 would straddle pods 0
  // and 1, starting at 4 keeps it in pod 1 (the lowest such start).
  QueueFixture f(8, QueuePolicy::fifo);
  f.job("A", 3, 10);
  f.job("B", 2, 10);
  f.in.block_nodes = 4;
  CHECK(first_nodes(simulate_long_run(f.in)) == std::vector<std::int64_t>{0, 4});
  f.in.block_nodes = 0;  // no pods (a torus): the tightest fit, then the lowest start
  CHECK(first_nodes(simulate_long_run(f.in)) == std::vector<std::int64_t>{0, 3});
  // 4 nodes: A on node 0 and B on node 2 leave nodes 1 and 3: C (2 nodes) starts fragmented.
  QueueFixture g(4, QueuePolicy::fifo);
  g.job("A", 1, 10);
  g.job("B", 1, 10, 0, 2);
  g.job("C", 2, 10, 0, 0);
  const LongRunResult r = simulate_long_run(g.in);
  CHECK(first_nodes(r) == std::vector<std::int64_t>{0, 2, 1});
  CHECK(r.jobs[2].fragmented_starts.mean == 1.0);
  CHECK(r.jobs[0].fragmented_starts.mean == 0.0);
}

TEST_CASE("shared storage: jobs checkpointing together share the write bandwidth in proportion to their duty cycles") {
  // Sync checkpoints of S = 60 TB at 1 TB/s: w0 = 60 s alone, every tau = 600 s. Two such
  // jobs: w = w0 (1 + d), d = w / (tau + w)  =>  w^2 + (tau - 2 w0) w - w0 tau = 0.
  const double w0 = 60.0, tau = 600.0;
  const double w = (-(tau - 2 * w0) + std::sqrt((tau - 2 * w0) * (tau - 2 * w0) + 4 * w0 * tau)) / 2;
  const auto run = [&](int jobs, double second_work) {
    FailuresConfig failures;
    LongRunInputs in;
    in.failures = &failures;
    in.nodes = 4;
    in.gpus_per_node = 8;
    in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
    in.checkpoint.interval = {false, sim::Time::from_seconds(tau)};
    in.jobs.push_back({"first", 0, 2, 16, 2, 1.0, 20 * tau, 60e12});
    if (jobs > 1) in.jobs.push_back({"second", 2, 2, 16, 2, 1.0, second_work, 60e12});
    return simulate_long_run(in);
  };
  const LongRunResult alone = run(1, 0);
  CHECK(alone.jobs[0].checkpoint_blocking_s.mean == Rel(w0));
  CHECK(alone.jobs[0].storage_slowdown.mean == Rel(1.0));
  CHECK(alone.jobs[0].end_s.mean == Rel(20 * (tau + w0)));
  const LongRunResult both = run(2, 20 * tau);
  CHECK(w / w0 == Rel(1.0991).epsilon(1e-3));  // 65.95 s: 10% longer per checkpoint
  for (const JobSummary& j : both.jobs) {
    CHECK(j.checkpoint_blocking_s.mean == Rel(w).epsilon(1e-9));
    CHECK(j.storage_slowdown.mean == Rel(w / w0).epsilon(1e-9));
    CHECK(j.end_s.mean == Rel(20 * (tau + w)).epsilon(1e-9));
    CHECK(j.ettr.mean == Rel(tau / (tau + w)).epsilon(1e-9));
  }
  // The second job trains 10 intervals: it ends at 10 (tau + w); the first then writes
  // alone for its last 10 intervals: 10 (tau + w) + 10 (tau + w0).
  const LongRunResult staggered = run(2, 10 * tau);
  CHECK(staggered.jobs[1].end_s.mean == Rel(10 * (tau + w)).epsilon(1e-9));
  CHECK(staggered.jobs[0].end_s.mean == Rel(10 * (tau + w) + 10 * (tau + w0)).epsilon(1e-9));
}

namespace {

/// 64 single-GPU nodes and 64 spares (so that a failure swaps only the failed GPU, and a
/// spare is always there); GPUs fail on a Weibull law of shape 0.5 (infant mortality: a
/// falling hazard) with a mean life of 100 days; a 1-hour repair.
LongRunResult burn_in_run(double burn_in_days, double horizon_days, std::int64_t replications) {
  FailuresConfig failures;
  failures.fleet_age = FleetAge::new_;  // a new fleet, which burn-in is for
  ComponentConfig gpu;
  gpu.rate = FailureRate{0.01, Per::gpu};
  gpu.distribution = Distribution::weibull;
  gpu.shape = 0.5;
  failures.components["gpu"] = gpu;
  failures.repair.replace = DurationLaw{DurationLaw::Kind::fixed, sim::Time::from_seconds(3600), 1.0};
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 64;
  in.gpus_per_node = 1;
  in.scheduler.spare_nodes = 64;
  in.scheduler.burn_in = sim::Time::from_seconds(burn_in_days * kDay);
  in.checkpoint.interval = {false, sim::Time::from_seconds(3600)};
  in.jobs.push_back({"job", 0, 64, 64, 64, 1e6, std::nullopt, 1e12});
  in.horizon_s = horizon_days * kDay;
  in.replications = replications;
  in.seed = 5;
  return simulate_long_run(in);
}

}  // namespace

TEST_CASE("burn-in catches infant mortality before service and its time is accounted") {
  // Weibull shape 0.5, mean 100 d: scale lambda = 100 d / Gamma(3) = 50 d. Each of the job's
  // 64 GPU slots holds a unit from its start; when the unit fails, a spare node's takes its
  // place at once. With a burn-in of b every unit entering service, installed or repaired,
  // is a new one run through b (failures in it renewed): its life in service is the
  // residual life R_b of a renewal process at age b; without, R_0 is a whole new life. The
  // failures in service per slot over T are then the renewal count of i.i.d. R_b, drawn
  // here directly (the model's node swaps, spares and repairs are not in this oracle).
  const double b = 7.0, lambda = 50.0, T = 30.0;
  sim::RandomStream rng = sim::make_stream(99, "renewal");
  const auto residual = [&](double age, double& caught) {
    double t = rng.weibull(0.5, lambda);
    for (; t < age; t += rng.weibull(0.5, lambda)) caught += 1.0;
    return t - age;
  };
  const int paths = 200'000;
  double caught = 0.0, fresh = 0.0, aged = 0.0, unused = 0.0;
  for (int i = 0; i < paths; ++i) {
    for (double t = residual(b, caught); t < T; t += residual(b, unused)) aged += 1.0;
    for (double t = residual(0, unused); t < T; t += residual(0, unused)) fresh += 1.0;
  }
  const double m_b = caught / paths;  // failures caught per unit in one burn-in
  // Sampling: 40 replications x 64 slots; the count per slot has a variance of about twice
  // its mean (the law's CV^2 is 5), so each mean below has a relative standard error of
  // sqrt(2 / (m 2560)) < 4% for m > 0.5; 12% bands are three of them.
  const LongRunResult with = burn_in_run(b, T, 40);
  const LongRunResult without = burn_in_run(0, T, 40);
  CHECK(aged / paths == Rel(0.54).epsilon(0.05));   // vs 0.96 for new units
  CHECK(fresh / paths == Rel(0.96).epsilon(0.05));
  CHECK(with.failures_by_cause.at("gpu").mean == Rel(64 * aged / paths).epsilon(0.12));
  CHECK(without.failures_by_cause.at("gpu").mean == Rel(64 * fresh / paths).epsilon(0.12));
  // Every failure interrupts the job unless it strikes while the job is already down
  // (minutes out of days): burn-in cuts the interruptions by the same ratio, about 0.56.
  const double ratio = with.jobs[0].interruptions.mean / without.jobs[0].interruptions.mean;
  CHECK(ratio == Rel(aged / fresh).epsilon(0.15));
  CHECK(ratio < 0.7);
  // The installed fleet's burn-in (64 + 64 spares, before the start) catches 128 m(b).
  CHECK(m_b > 1.0 - std::exp(-std::sqrt(b / lambda)));  // at least the first failures: 31%
  CHECK(with.burn_in_failures_installed.mean == Rel(128 * m_b).epsilon(0.12));
  CHECK(without.burn_in_failures_installed.mean == 0.0);
  CHECK(without.burn_in_node_hours.mean == 0.0);

  // Accounting, one replication against its timeline: every repaired (or replacing) node
  // burns in for b; the node-hours count each burn-in up to the horizon.
  const LongRunResult one = burn_in_run(2, 60, 1);
  double hours = 0.0, started = 0.0, back = 0.0;
  for (const TimelineEvent& e : one.timeline) {
    if (e.kind == "burn_in") {
      ++started;
      hours += std::min(2 * kDay, one.elapsed_s - e.time_s) / 3600.0;
    }
    if (e.kind == "repaired" || e.kind == "retired") ++back;
  }
  REQUIRE(started > 5.0);
  CHECK(started == back);
  CHECK(one.burn_ins.mean == started);
  CHECK(one.burn_in_node_hours.mean == Rel(hours));
}

TEST_CASE("the renewal function: t for an exponential life, t + (CV^2 - 1) / 2 far out, a simulated count near 0") {
  // M(t) = t exactly for a memoryless life of mean 1.
  CHECK(expected_renewals(Distribution::exponential, 1.0, 3.5) == 3.5);
  CHECK(expected_renewals(Distribution::weibull, 1.0, 2.0) == Rel(2.0).epsilon(1e-3));
  // Far out, M(t) -> t + (CV^2 - 1) / 2 (Cox, Renewal Theory, 1962, section 4.5). Weibull of
  // shape 0.5: CV^2 = Gamma(5) / Gamma(3)^2 - 1 = 5, M(t) -> t + 2; of shape 2: CV^2 =
  // 1 / Gamma(1.5)^2 - 1 = 0.2732, M(t) -> t - 0.3634; lognormal of sigma 1: CV^2 = e - 1.
  CHECK(expected_renewals(Distribution::weibull, 0.5, 40.0) == Rel(42.0).epsilon(0.01));
  CHECK(expected_renewals(Distribution::weibull, 2.0, 20.0) == Rel(20.0 - 0.3634).epsilon(0.002));
  CHECK(expected_renewals(Distribution::lognormal, 1.0, 30.0) == Rel(30.0 + (std::exp(1.0) - 2.0) / 2.0).epsilon(0.005));
  // Hundreds of lives out (a grid of t / 2000 steps there under-counted, 36% at 4,000).
  CHECK(expected_renewals(Distribution::weibull, 0.5, 400.0) == Rel(402.0).epsilon(0.002));
  CHECK(expected_renewals(Distribution::weibull, 2.0, 4000.0) == Rel(4000.0 - 0.3634).epsilon(1e-4));
  // Near 0 a shape-0.5 life fails early: counted by drawing lives (each part new).
  sim::RandomStream rng = sim::make_stream(5, "renewals");
  const double t = 0.05;
  const double scale = 1.0 / std::tgamma(3.0);
  constexpr int kUnits = 200000;
  std::int64_t failures = 0;
  for (int u = 0; u < kUnits; ++u) {
    for (double at = rng.weibull(0.5, scale); at <= t; at += rng.weibull(0.5, scale)) ++failures;
  }
  const double simulated = static_cast<double>(failures) / kUnits;
  CHECK(simulated > 4.0 * t);  // about 6 times the in-service rate's
  CHECK(expected_renewals(Distribution::weibull, 0.5, t) == Rel(simulated).epsilon(0.02));
  // Every life burned in first (b = 0.04 mean lives, as 2 days of a 50-day life): a Weibull
  // life past b is scale ((b / scale)^k + E)^(1/k) - b, E exponential of mean 1. Far fewer
  // failures than new parts have (the early ones were caught in the burn-in).
  const double b = 0.04, run = 0.6;
  std::int64_t burned_failures = 0;
  const auto burned_life = [&] {
    return scale * std::pow(std::pow(b / scale, 0.5) + rng.exponential(1.0), 2.0) - b;
  };
  constexpr int kBurnedUnits = 100000;
  for (int u = 0; u < kBurnedUnits; ++u) {
    for (double at = burned_life(); at <= run; at += burned_life()) ++burned_failures;
  }
  const double burned = static_cast<double>(burned_failures) / kBurnedUnits;
  CHECK(expected_renewals(Distribution::weibull, 0.5, run, b) == Rel(burned).epsilon(0.02));
  CHECK(burned < 0.9 * expected_renewals(Distribution::weibull, 0.5, run));
  // Far out, one failure a burned-in mean life, longer than a new part's (the survivors of
  // an early-failing law live longer): drawn here.
  double lived = 0.0;
  constexpr int kLives = 400000;
  for (int u = 0; u < kLives; ++u) lived += burned_life();
  const double burned_mean = lived / kLives;
  CHECK(burned_mean > 1.2);
  CHECK(expected_renewals(Distribution::weibull, 0.5, 400.0, b) - expected_renewals(Distribution::weibull, 0.5, 200.0, b) ==
        Rel(200.0 / burned_mean).epsilon(0.02));
}

TEST_CASE("a new fleet of early-failing parts checkpoints for the failures it expects over the run") {
  // 64 GPUs of mean life 2,000 days, Weibull of shape 0.5, new at the start of a 20-day run:
  // they fail far more often than the in-service rate says, and the job's MTBF and interval
  // come from the failures expected over the run (the simulated ones), not from the mean.
  FailuresConfig failures;
  ComponentConfig c;
  c.mtbf = sim::Time::from_seconds(2000.0 * kDay);
  c.per = Per::gpu;
  c.distribution = Distribution::weibull;
  c.shape = 0.5;
  c.hardware = false;
  failures.components["gpu"] = c;
  LongRunInputs in;
  in.failures = &failures;
  in.nodes = 8;
  in.gpus_per_node = 8;
  in.checkpoint.write_bandwidth = sim::Bandwidth::of(1e12);
  in.jobs.push_back(JobProfile{"a", 0, 8, 64, 8, 1e6, std::nullopt, 6e12});
  in.horizon_s = 20.0 * kDay;
  in.replications = 400;
  in.seed = 2;
  const LongRunResult in_service = simulate_long_run(in);
  failures.fleet_age = FleetAge::new_;
  const LongRunResult fresh = simulate_long_run(in);
  CHECK(in_service.jobs[0].mtbf_s == Rel(2000.0 * kDay / 64.0).epsilon(1e-9));
  const double expected = 64.0 * expected_renewals(Distribution::weibull, 0.5, 0.01);
  CHECK(fresh.jobs[0].mtbf_s == Rel(20.0 * kDay / expected).epsilon(1e-9));
  CHECK(fresh.jobs[0].mtbf_s < in_service.jobs[0].mtbf_s / 5.0);
  // The simulated failures match (a GPU's clock stops while the job is down: a little fewer).
  CHECK(fresh.failures_by_cause.at("gpu").mean == Rel(expected).epsilon(0.1));
  CHECK(fresh.jobs[0].checkpoint_interval_s < in_service.jobs[0].checkpoint_interval_s / 2.0);
}
