#include "tools/clustersim/sweep.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "models/calibration/profile.hpp"
#include "sim/check.hpp"
#include "sim/random.hpp"
#include "sim/time.hpp"
#include "tools/clustersim/report.hpp"
#include "tools/clustersim/version.hpp"

#ifdef CLUSTERSIM_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only; the C++ bindings are deprecated
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace clustersim::tools {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxValues = 100'000;
constexpr std::int64_t kMaxPoints = 10'000'000;
constexpr std::string_view kCommandLine = "<command line>";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Splits at commas outside {}, [] and () and outside quoted strings ("a,b" is one value:
/// it was cut in two, each half an unterminated string). The text after the last such comma is a part
/// even where a bracket is left open ("[1,2": one value, which the key's decoding refuses;
/// dropping it left no value, and the sweep read the first of none).
std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  std::size_t start = 0;
  char quote = 0;  // inside a YAML quoted string: its commas and brackets are its own
  char last = 0;   // the last character but spaces since the part began (0: none yet)
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (quote != 0 && i < text.size()) {
      if (quote == '"' && c == '\\' && i + 1 < text.size()) {
        ++i;  // an escaped character, a quote included (a final backslash is one: the end stays)
      } else if (quote == '\'' && c == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' inside single quotes: one quote, the string goes on
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    // A quote opens a string where a YAML scalar starts: a part's start, or after [ { , :
    // (an apostrophe inside a plain word, O'Brien, is a character).
    if ((c == '"' || c == '\'') && (last == 0 || std::string_view("[{,:").find(last) != std::string_view::npos)) {
      quote = c;
      last = c;
      continue;
    }
    if (c != ' ' && c != '\t') last = c;
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (c == ',' && (depth <= 0 || i == text.size())) {
      parts.emplace_back(trim(text.substr(start, i - start)));
      start = i + 1;
      last = 0;
    }
  }
  return parts;
}

/// A number with an optional unit suffix: "1024", "1.5e3", "8GiB".
bool split_number(std::string_view text, double& value, std::string& suffix) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno != 0 || !std::isfinite(value)) return false;
  suffix = std::string(end);
  return true;
}

bool is_integral(double v) { return std::abs(v) < 9e15 && v == std::floor(v); }

std::string number_text(double v) {
  // 12 significant digits: 0.1:0.3:+0.1 gives 0.3, not 0.30000000000000004.
  return is_integral(v) ? fmt::format("{}", static_cast<std::int64_t>(v)) : fmt::format("{:.12g}", v);
}

/// "a:b:xF" or "a:b:+S"; false when the text is not of that shape (then it is one value).
bool expand_range(std::string_view text, std::vector<std::string>& out, std::string& why, bool& is_range) {
  is_range = false;
  const auto c1 = text.find(':');
  const auto c2 = c1 == std::string_view::npos ? c1 : text.find(':', c1 + 1);
  if (c2 == std::string_view::npos || text.find(':', c2 + 1) != std::string_view::npos) return true;
  const std::string_view step = trim(text.substr(c2 + 1));
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) {
    // Two numbers and a third part: a range whose step is spelt wrong (8:64:-8, 8:64:y2), not
    // a value (it was tried as one: "expected an integer, got '8:64:-8'").
    double a = 0, b = 0;
    std::string sa, sb;
    if (split_number(trim(text.substr(0, c1)), a, sa) && split_number(trim(text.substr(c1 + 1, c2 - c1 - 1)), b, sb)) {
      is_range = true;
      // The ends in rising order, and the step's own size where it has one (-8 or 8: +8).
      std::string_view lo = trim(text.substr(0, c1)), hi = trim(text.substr(c1 + 1, c2 - c1 - 1));
      if (b < a) std::swap(lo, hi);
      double size = 0.0;
      std::string size_unit;
      const std::string_view magnitude = !step.empty() && step[0] == '-' ? step.substr(1) : step;
      const std::string add = split_number(magnitude, size, size_unit) && size > 0.0 && size_unit.empty()
                                  ? std::string(magnitude)
                                  : std::string("1");
      why = fmt::format("'{}': a range's step is xF (multiply by F > 1) or +S (add S > 0), got '{}' (e.g. {}:{}:+{} or "
                        "{}:{}:x2; a range goes up from its first value)",
                        text, step, lo, hi, add, lo, hi);
      return false;
    }
    return true;
  }
  is_range = true;
  double a = 0, b = 0, s = 0;
  std::string sa, sb, ss;
  if (!split_number(trim(text.substr(0, c1)), a, sa) || !split_number(trim(text.substr(c1 + 1, c2 - c1 - 1)), b, sb) ||
      !split_number(step.substr(1), s, ss) || !ss.empty()) {
    why = fmt::format("'{}': expected a range a:b:xF or a:b:+S of numbers (e.g. 1024:8192:x2)", text);
    return false;
  }
  if (sa != sb) {
    why = fmt::format("'{}': the range's ends have different units ('{}' and '{}')", text, sa, sb);
    return false;
  }
  const bool multiply = step[0] == 'x';
  // Say which condition fails, with the range that would have meant what was likely meant.
  const std::string ends = fmt::format("{}{}:{}{}", number_text(std::min(a, b)), sa, number_text(std::max(a, b)), sb);
  if (b < a) {
    // The step that goes up: a factor above 1, a positive step (x0.5 read down is x2).
    const std::string up = multiply ? (s > 0.0 && s < 1.0 ? fmt::format("x{}", number_text(1.0 / s))
                                                            : s > 1.0 ? std::string(step) : std::string("x2"))
                                    : (s != 0.0 ? fmt::format("+{}", number_text(std::abs(s))) : std::string("+1"));
    why = fmt::format("'{}': the range descends ({} > {}); a range goes up from its first value (e.g. {}:{})", text,
                      number_text(a), number_text(b), ends, up);
    return false;
  }
  if (multiply && s <= 1.0) {
    why = fmt::format("'{}': the factor {} does not grow the values; expected a factor above 1 (e.g. {}:x2)", text,
                      number_text(s), ends);
    return false;
  }
  if (multiply && a <= 0.0) {
    why = fmt::format("'{}': a range stepped by a factor cannot start at {}; start it above 0, or step by adding (e.g. {}:+1)",
                      text, number_text(a), ends);
    return false;
  }
  if (!multiply && s <= 0.0) {
    why = fmt::format("'{}': the step {} does not grow the values; expected a step above 0 (e.g. {}:+1)", text,
                      number_text(s), ends);
    return false;
  }
  const double tolerance = 1e-9 * std::max(std::abs(a), std::abs(b));
  for (std::size_t i = 0;; ++i) {
    // Each value from a, not by accumulation, so that 0.1 steps do not drift.
    const double v = multiply ? a * std::pow(s, static_cast<double>(i)) : a + s * static_cast<double>(i);
    if (v > b + tolerance) break;
    if (out.size() == kMaxValues) {
      why = fmt::format("'{}': more than {} values (a coarser step, such as x2)", text, kMaxValues);
      return false;
    }
    out.push_back(number_text(is_integral(a) && is_integral(s) ? std::round(v) : v) + sa);
  }
  return true;
}

config::Json number(double v) { return std::isfinite(v) ? config::Json(v) : config::Json(nullptr); }

std::string diagnostics_text(const config::Diagnostics& d) {
  std::string out;
  for (const config::Diagnostic& item : d.items()) {
    if (!out.empty()) out += " | ";
    if (item.where.file != kCommandLine && !item.where.file.empty()) {
      out += item.where.file;
      if (item.where.line > 0) out += fmt::format(":{}:{}", item.where.line, item.where.column);
      out += ": ";
    }
    if (!item.path.empty()) out += item.path + ": ";
    out += item.message;
    if (!item.hint.empty()) out += " (" + item.hint + ")";
  }
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

/// The key results of a point (base units: s, B, USD, W, B/s, fractions).
config::Json results_json(const scenario::LoadedScenario& loaded, const RunResult& r) {
  config::Json res = config::Json::object();
  res["gpus"] = r.inventory.gpus;  // the cluster's; job_gpus, the first job's (the columns below are its)
  res["job_gpus"] = loaded.jobs.empty() ? config::Json() : config::Json(loaded.jobs[0].config.gpus);
  res["it_power_w"] = r.cost.peak.it.value();  // GPUs, hosts, network, spares at full load (as compare)
  res["fabric_capex_usd"] = r.fabric && r.fabric->capex ? config::Json(r.fabric->capex->value()) : config::Json();
  res["fabric_power_w"] = r.fabric && r.fabric->power ? config::Json(r.fabric->power->value()) : config::Json();
  res["bisection_bandwidth_Bps"] = r.fabric ? config::Json(r.fabric->bisection_bandwidth.value()) : config::Json();
  // The economics (spares, prices, energy are keys a study sweeps): the cluster's capex and
  // $/GPU-hour, the first job's cost of training.
  res["capex_usd"] = r.cost.capex ? config::Json(r.cost.capex->value()) : config::Json();
  res["usd_per_gpu_hour"] = r.cost.usd_per_gpu_hour ? config::Json(*r.cost.usd_per_gpu_hour) : config::Json();
  const bool trained = !r.training.empty() && r.training[0];
  res["total_cost_usd"] = trained && r.training[0]->cost_usd ? number(*r.training[0]->cost_usd) : config::Json();
  res["usd_per_million_tokens"] =
      trained && r.training[0]->usd_per_million_tokens ? number(*r.training[0]->usd_per_million_tokens) : config::Json();
  config::Json jobs = config::Json::array();
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const workload::StepResult& st = r.jobs[i];
    const scenario::ResolvedJob& job = loaded.jobs[i];
    config::Json j = config::Json::object();
    j["name"] = job.config.name;
    j["gpus"] = job.config.gpus;
    j["step_time_s"] = number(st.step_time_s);
    j["tokens_per_s"] = number(st.tokens_per_s);
    j["mfu"] = number(st.mfu);
    j["memory_per_gpu_bytes"] = number(st.memory.total);
    j["time_to_train_s"] = job.config.train_tokens && st.tokens_per_s > 0
                               ? number(workload::ideal_time_to_train_s(job.config, st))
                               : config::Json();
    if (r.reliability) {
      const reliability::JobSummary& s = r.reliability->jobs[i];
      j["ettr"] = number(s.ettr.mean);
      j["ettr_ci95"] = number(s.ettr.ci95);  // the half-width of its 95% interval over replications
      j["goodput_tokens_per_s"] = number(s.goodput_tokens_per_s.mean);
      j["time_to_train_s"] = number(s.time_to_train_s.mean);
      j["interruptions"] = number(s.interruptions.mean);
      j["lost_gpu_hours"] = number(reliability::total_lost_gpu_hours(s));
      j["checkpoint_gpu_hours"] = number(s.checkpoint_gpu_hours.mean);
      // The queue: means over the replications where the job started (finished, for end_s);
      // null where it never did.
      j["started_share"] = s.started_share;
      j["queue_wait_s"] = number(s.queue_wait_s.mean);
      j["start_s"] = number(s.start_s.mean);
      j["end_s"] = number(s.end_s.mean);
    }
    jobs.push_back(std::move(j));
  }
  for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "memory_per_gpu_bytes", "time_to_train_s", "ettr",
                          "ettr_ci95", "goodput_tokens_per_s", "interruptions", "lost_gpu_hours",
                          "checkpoint_gpu_hours", "queue_wait_s"}) {
    if (!jobs.empty() && jobs[0].contains(key)) res[key] = jobs[0][key];
  }
  if (r.reliability) {
    // The schedule: every job's, for a shared cluster's policy or spares (the columns above
    // are the first job's).
    res["utilisation"] = number(r.reliability->utilisation.mean);
    res["mean_queue_wait_s"] = number(reliability::mean_queue_wait_s(*r.reliability));
    res["jobs_never_started"] = reliability::jobs_never_started(*r.reliability);
  }
  res["jobs"] = std::move(jobs);
  return res;
}

constexpr std::string_view kResultColumns[] = {"gpus",
                                               "job_gpus",
                                               "step_time_s",
                                               "tokens_per_s",
                                               "mfu",
                                               "memory_per_gpu_bytes",
                                               "time_to_train_s",
                                               "fabric_capex_usd",
                                               "fabric_power_w",
                                               "bisection_bandwidth_Bps",
                                               "it_power_w",
                                               "capex_usd",
                                               "usd_per_gpu_hour",
                                               "total_cost_usd",
                                               "usd_per_million_tokens"};
constexpr std::string_view kFailureColumns[] = {"ettr",           "goodput_tokens_per_s", "ettr_ci95",
                                                "interruptions",  "lost_gpu_hours",       "checkpoint_gpu_hours",
                                                "queue_wait_s",   "mean_queue_wait_s",    "jobs_never_started",
                                                "utilisation"};

std::string csv_cell(const config::Json& v) {
  if (v.is_number_integer()) return v.is_number_unsigned() ? fmt::format("{}", v.get<std::uint64_t>())
                                                            : fmt::format("{}", v.get<std::int64_t>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_string()) return csv_quote(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return {};
}

config::InputError input_error(const std::string& file, int line, std::string path, std::string message,
                               std::string hint = {}) {
  config::Diagnostics d;
  d.add(config::Location{file, line, line > 0 ? 1 : 0}, std::move(path), std::move(message), std::move(hint));
  return config::InputError(std::move(d));
}

scenario::LoadedScenario load_with(const SweepSpec& spec, const scenario::LoadOptions& options) {
  return spec.scenario.empty() ? scenario::load_default_scenario(options)
                               : scenario::load_scenario(spec.scenario, options);
}

/// Appends whole lines to a file: one write(2) on an O_APPEND descriptor per line, so a
/// kill leaves at most a partial last line, never an interleaved one.
class AppendFile {
 public:
  explicit AppendFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw input_error(path_, 0, "", fmt::format("cannot open for appending: {}", std::strerror(errno)));
  }
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  void append(std::string_view line) {
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw input_error(path_, 0, "", fmt::format("cannot write: {}", std::strerror(errno)));
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

/// A bar with an ETA on a terminal; otherwise a plain line at each tenth and every 10 s.
class Progress {
 public:
  Progress(std::ostream& log, bool enabled, std::int64_t total, std::int64_t resumed)
      : log_(log), enabled_(enabled && total > resumed), tty_(::isatty(STDERR_FILENO) == 1), total_(total),
        resumed_(resumed), start_(Clock::now()), last_(start_) {}

  void update(std::int64_t done, std::int64_t errors, bool final = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double elapsed = seconds_since(start_);
    const double since_last = std::chrono::duration<double>(now - last_).count();
    const std::int64_t decile = total_ > 0 ? done * 10 / total_ : 10;
    if (!final && (tty_ ? since_last < 0.1 : decile == last_decile_ && since_last < 10.0)) return;
    if (final && !tty_ && done == last_done_) return;  // the last line said it already
    last_ = now;
    last_done_ = done;
    last_decile_ = decile;
    const std::int64_t run = done - resumed_;
    const double eta = run > 0 ? elapsed / static_cast<double>(run) * static_cast<double>(total_ - done) : 0.0;
    const double pct = total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
    const std::string err = errors ? fmt::format(", {} error{}", errors, errors == 1 ? "" : "s") : std::string();
    if (tty_) {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(pct / 100.0 * kWidth);
      log_ << fmt::format("\rsweep [{}{}] {}/{} {:5.1f}%{}  {} {}   ", std::string(static_cast<std::size_t>(filled), '#'),
                          std::string(static_cast<std::size_t>(kWidth - filled), '-'), done, total_, pct, err,
                          final ? "in" : "ETA", final ? clock_text(elapsed) : run > 0 ? clock_text(eta) : "-:--");
      if (final) log_ << "\n";
    } else {
      log_ << fmt::format("sweep: {}/{} point{} ({:.0f}%){}, {:.1f} s elapsed{}\n", done, total_, total_ == 1 ? "" : "s",
                          pct, err, elapsed,
                          final   ? std::string()
                          : run > 0 ? fmt::format(", ETA {:.1f} s", eta)
                                    : std::string(", ETA not known before a point is done"));
    }
    log_.flush();
  }

 private:
  static std::string clock_text(double s) {
    const auto t = static_cast<std::int64_t>(std::ceil(s));
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
  }

  std::ostream& log_;
  bool enabled_;
  bool tty_;
  std::int64_t total_;
  std::int64_t resumed_;
  Clock::time_point start_;
  Clock::time_point last_;
  std::int64_t last_decile_ = -1;
  std::int64_t last_done_ = -1;
};

/// The MPI world when the process was started by mpirun or srun; a world of one otherwise.
class World {
 public:
  World() {
#ifdef CLUSTERSIM_HAVE_MPI
    static constexpr const char* kLauncherVars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    const bool launched = std::any_of(std::begin(kLauncherVars), std::end(kLauncherVars),
                                      [](const char* v) { return std::getenv(v) != nullptr; });
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!launched || initialized) return;
    int provided = 0;
    // Worker threads never call MPI: the main thread alone sends and receives.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    active_ = true;
#endif
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  ~World() {
#ifdef CLUSTERSIM_HAVE_MPI
    if (!active_) return;
    // Unwinding from an error (a write that failed): the other ranks may wait for us forever.
    if (std::uncaught_exceptions() > 0) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Finalize();
#endif
  }

  /// Ends MPI here rather than at destruction (where an exception in flight aborts the job).
  void finalize() {
#ifdef CLUSTERSIM_HAVE_MPI
    if (active_) MPI_Finalize();
#endif
    active_ = false;
  }

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  /// Rank 0's status and point list to every rank.
  void broadcast(std::int64_t& status, std::vector<std::int64_t>& points) {
#ifdef CLUSTERSIM_HAVE_MPI
    if (!active_) return;
    std::int64_t header[2] = {status, static_cast<std::int64_t>(points.size())};
    MPI_Bcast(header, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    status = header[0];
    points.resize(static_cast<std::size_t>(header[1]));
    if (!points.empty()) MPI_Bcast(points.data(), static_cast<int>(points.size()), MPI_INT64_T, 0, MPI_COMM_WORLD);
#else
    (void)status;
    (void)points;
#endif
  }

  void send_to_root(const std::string& line) {
#ifdef CLUSTERSIM_HAVE_MPI
    MPI_Send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kTag, MPI_COMM_WORLD);
#else
    (void)line;
#endif
  }

  /// A record from another rank, if one has arrived.
  bool try_receive(std::string& line) {
#ifdef CLUSTERSIM_HAVE_MPI
    if (!active_) return false;
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return false;
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    line.resize(static_cast<std::size_t>(n));
    MPI_Recv(line.data(), n, MPI_CHAR, st.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return true;
#else
    (void)line;
    return false;
#endif
  }

 private:
  [[maybe_unused]] static constexpr int kTag = 8;
  int rank_ = 0;
  int size_ = 1;
  bool active_ = false;
};

/// A finished point: its sweep.jsonl line and its sweep.csv row (each with the newline).
struct Record {
  std::int64_t point = 0;
  std::string jsonl;
  std::string csv;
};

/// What rank 0 knows before running: the columns, the files, the finished points' records
/// and the missing points.
struct Prepared {
  SweepColumns columns;
  std::vector<Record> records;
  std::vector<std::int64_t> pending;
  std::int64_t resumed = 0;
  std::int64_t resumed_errors = 0;
  std::int64_t renumbered = 0;  // of the resumed, those the grown grid numbers anew
  std::string jsonl_path;
  std::string csv_path;
};

/// Rewrites both files from the records, in point order (each atomically: a temporary file
/// renamed over the old one, so a kill leaves the old file or the new one, never a mix).
/// The bytes depend only on the records, not on the order in which the points finished.
/// `also`: files written with them, all or none (the base record, when a sweep starts).
void write_in_point_order(Prepared& p, std::vector<std::pair<std::string, std::string>> also = {}) {
  std::sort(p.records.begin(), p.records.end(),
            [](const Record& a, const Record& b) { return a.point < b.point; });
  std::string jsonl;
  std::string csv = p.columns.header();
  for (const Record& r : p.records) {
    jsonl += r.jsonl;
    csv += r.csv;
  }
  also.emplace_back(p.jsonl_path, std::move(jsonl));
  also.emplace_back(p.csv_path, std::move(csv));
  // Said at the --out folder: the message names the file that failed.
  if (const std::string err = write_files_atomically(also); !err.empty()) {
    throw input_error(std::filesystem::path(p.jsonl_path).parent_path().string(), 0, "", err);
  }
}

/// Whether a value of `outer` writes `inner`, a key inside it (whole values merge into their
/// section, so a key they leave out keeps what was set before).
bool param_writes(const SweepParam& outer, const std::string& inner) {
  const std::string rest = inner.substr(outer.key.size() + (inner[outer.key.size()] == '.' ? 1 : 0));
  return std::any_of(outer.values.begin(), outer.values.end(), [&](const std::string& v) { return value_writes(v, rest, true); });
}

}  // namespace

bool value_writes(const std::string& text, std::string_view rest, bool if_unreadable) {
  YAML::Node n;
  try {
    n = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return if_unreadable;
  }
  while (!rest.empty()) {
    if (rest.front() == '[') return true;
    const std::size_t end = rest.find_first_of(".[");
    const std::string part(rest.substr(0, end));
    if (!n.IsMap() || !n[part]) return false;
    n = n[part];
    if (end == std::string_view::npos) return true;
    rest = rest.substr(rest[end] == '.' ? end + 1 : end);
  }
  return true;
}

void check_sets_against_params(const SweepSpec& spec, config::Diagnostics& bad) {
  // --seed and --replications are overrides of simulation.seed and .replications too (the
  // seed applied after the grid: rows labelled seed 1 and 2 ran the same seed).
  std::vector<std::pair<std::string, std::string>> sets;  // (the option as given, its key)
  for (const std::string& set : spec.sets) sets.emplace_back("--set " + set, scenario::set_key(set));
  if (spec.seed) sets.emplace_back(fmt::format("--seed {}", *spec.seed), "simulation.seed");
  if (spec.replications) sets.emplace_back(fmt::format("--replications {}", *spec.replications), "simulation.replications");
  // An option and a --set of the same key: the option wins without a word.
  for (std::size_t i = spec.sets.size(); i < sets.size(); ++i) {
    for (std::size_t k = 0; k < spec.sets.size(); ++k) {
      const std::string& key = sets[k].second;
      if (key != sets[i].second) continue;
      bad.add(config::Location{std::string(kCommandLine), 0, 0}, key,
              fmt::format("set twice, by {} and by {}: one of the two would be lost", sets[i].first, sets[k].first),
              fmt::format("give one of {} and --set {}", sets[i].first.substr(0, sets[i].first.find(' ')), key));
      break;
    }
  }
  for (const auto& [given, key] : sets) {
    for (const SweepParam& p : spec.params) {
      // The same key, or one inside a grid key whose values write it.
      if (key != p.key && !(config::key_inside(p.key, key) && param_writes(p, key))) continue;
      bad.add(config::Location{std::string(kCommandLine), 0, 0}, key,
              fmt::format("{}: the {} {} also sets it at every point, and one of the two would be lost", given,
                          p.origin, p.key),
              fmt::format("drop {}, or give {} its values in the grid", given.substr(0, given.find(' ')), key));
      break;
    }
  }
}

bool looks_like_range_without_step(std::string_view v) {
  const std::size_t colon = v.find(':');
  if (colon == std::string_view::npos || v.find(':', colon + 1) != std::string_view::npos) return false;
  const auto number = [](std::string_view t) {
    if (!t.empty() && (t.front() == '-' || t.front() == '+')) t.remove_prefix(1);
    return !t.empty() && t.find_first_not_of("0123456789.") == std::string_view::npos &&
           t.find_first_of("0123456789") != std::string_view::npos;
  };
  return number(v.substr(0, colon)) && number(v.substr(colon + 1));
}

namespace {

/// Checks the parameters against the scenario's keys: a misspelt key, or a value its key
/// does not take (any of a --param's; a sweep block's are checked as the scenario loads), is
/// an input error, not a grid of error rows; so is a key the grid's first point makes inert
/// (its other problems are its error row, as at any point).
void check_params(const SweepSpec& spec, const scenario::LoadOptions& base, const scenario::Scenario& loaded) {
  config::Diagnostics bad;
  check_sets_against_params(spec, bad);
  // Every --param value must be one its key takes, as the sweep block's are (scenario.cpp,
  // check_sweep): each applied alone to the scenario, as `--set KEY=VALUE` would be. Only the
  // first point was loaded before, so `cluster.nodes=8,abc` ran and left `abc` an error row.
  for (const SweepParam& p : spec.params) {
    if (p.origin != "--param") continue;
    std::set<std::string> said;  // a misspelt key is one error, not one per value
    for (std::size_t k = 0; k < p.values.size(); ++k) {
      const std::string& value = p.values[k];
      scenario::Scenario copy = loaded;
      copy.sweep.reset();
      config::LoadState trial;
      config::apply_set(copy, p.key + "=" + value, trial);
      // A range's values are said once, at the first its key refuses (a fractional step on a
      // whole-number key gave one error per value, none naming the step).
      if (!p.range.empty() && !trial.diagnostics.ok()) {
        const config::Diagnostic& d = trial.diagnostics.items().front();
        bad.add(config::Location{std::string(kCommandLine), 0, 0}, "",
                fmt::format("--param {}={} gives {} (value {} of {}): {}{}{}", p.key, p.range, value, k + 1,
                            p.values.size(), d.path.empty() ? "" : d.path + ": ", d.message,
                            d.hint.empty() ? "" : " (" + d.hint + ")"));
        break;
      }
      for (const config::Diagnostic& d : trial.diagnostics.items()) {
        if (!said.insert(d.path + ": " + d.message).second) continue;
        // `a:b` is a value (an oversubscription ratio is one); where the key refuses it, it
        // was most likely meant as a range without its step.
        std::string hint = d.hint;
        if (value.size() > 1 && value.front() == '{' && d.message.find("got a mapping") != std::string::npos) {
          hint = fmt::format("a --param's values are separated by commas, without braces: {}={}", p.key,
                             value.substr(1, value.size() - (value.back() == '}' ? 2 : 1)));
        } else if (hint.empty() && looks_like_range_without_step(value)) {
          // Only the steps that range takes (expand_range): from a to b >= a; doubling from a > 0.
          const std::size_t colon = value.find(':');
          const double a = std::strtod(value.substr(0, colon).c_str(), nullptr);
          const double b = std::strtod(value.substr(colon + 1).c_str(), nullptr);
          if (b >= a) {
            hint = a > 0 ? fmt::format("a range needs its step: {}:+1 (steps of 1) or {}:x2 (doubling)", value, value)
                         : fmt::format("a range needs its step: {}:+1 (steps of 1)", value);
          }
        }
        // An unknown key is the key's error, whatever the value: said without one of them
        // (quoting "cluster.nodez=4" of "cluster.nodez=4,8" read as a part of the option).
        const bool key_error = d.message.find("unknown key") != std::string::npos;
        bad.add(config::Location{std::string(kCommandLine), 0, 0}, "",
                fmt::format("--param {}{}: {}{}{}", p.key, key_error ? "" : "=" + value,
                            d.path.empty() ? "" : d.path + ": ", d.message, hint.empty() ? "" : " (" + hint + ")"));
      }
    }
  }
  std::set<std::string> keys;
  for (const SweepParam& p : spec.params) {
    const config::Location at =
        !p.where.empty() ? p.where.front()
                         : config::Location{p.origin == "--param" || spec.scenario.empty() ? std::string(kCommandLine)
                                                                                           : spec.scenario,
                                            0, 0};
    if (!keys.insert(p.key).second) {
      bad.add(at, "", fmt::format("{} {}: given twice (by the scenario's sweep block or --param)", p.origin, p.key),
              "vary each key once");
      continue;
    }
    // A key inside another (cluster.nodes and cluster) whose values write it: both would
    // set it, and each row's label would name a value of the one that lost. Where the outer
    // key's values leave it out (fabric designs without tiers, and a fabric.tiers axis), the
    // inner one refines them (whole values merge into their section).
    const auto writes = [&](const std::string& outer, const std::string& inner) {
      const auto it = std::find_if(spec.params.begin(), spec.params.end(),
                                   [&](const SweepParam& q) { return q.key == outer; });
      return it == spec.params.end() || param_writes(*it, inner);
    };
    const auto other = std::find_if(keys.begin(), keys.end(), [&](const std::string& k) {
      return k != p.key && ((config::key_inside(k, p.key) && writes(k, p.key)) || (config::key_inside(p.key, k) && writes(p.key, k)));
    });
    if (other != keys.end()) {
      const bool outer = config::key_inside(p.key, *other);
      bad.add(at, "",
              fmt::format("{} {}: overlaps {} ({} holds {}): both would set it", p.origin, p.key, *other,
                          outer ? p.key : *other, outer ? *other : p.key),
              fmt::format("vary {} alone, or write its values inside those of {}", outer ? *other : p.key,
                          outer ? p.key : *other));
      continue;
    }
  }
  // The first point, every parameter at its first value at once: a key that matters only
  // with another axis's value (sequence_parallel with a tp axis, dims with a torus) is
  // judged with it, an input error ("does not apply"). Misspelt keys and bad values were
  // said above, value by value. Any other problem (a tp that does not divide the heads, a
  // job larger than the cluster) is the point's, an error row as at any other point (at the
  // first one it had stopped the whole sweep: tp=3,2 ran nothing where tp=2,3 ran a row).
  if (bad.ok() && !spec.params.empty()) {
    scenario::LoadOptions o = base;
    o.check_memory = false;
    for (const SweepParam& p : spec.params) o.sets.push_back(p.key + "=" + p.values.front());
    o.point_sets = spec.params.size();
    try {
      (void)load_with(spec, o);
    } catch (const config::InputError& e) {
      const auto related = [](const std::string& a, const std::string& b) {  // one holds or is the other
        const auto holds = [](const std::string& outer, const std::string& inner) {
          return inner.size() >= outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
                 (inner.size() == outer.size() || inner[outer.size()] == '.' || inner[outer.size()] == '[');
        };
        return holds(a, b) || holds(b, a);
      };
      const std::size_t user_sets = o.sets.size() - o.point_sets;
      for (const config::Diagnostic& d : e.diagnostics().items()) {
        if (d.where.file != kCommandLine || d.message.rfind("does not apply", 0) != 0) continue;
        // The user's own --set made inert by another of theirs: said as it is (it was put on a
        // --param it has nothing to do with).
        if (d.where.line >= 1 && static_cast<std::size_t>(d.where.line) <= user_sets) {
          bad.add(d.where, d.path, d.message, d.hint);
          continue;
        }
        const auto owner = std::find_if(spec.params.begin(), spec.params.end(),
                                        [&](const SweepParam& p) { return related(p.key, d.path); });
        const SweepParam& p = owner != spec.params.end() ? *owner : spec.params.front();
        const config::Location at =
            !p.where.empty() ? p.where.front()
                             : config::Location{p.origin == "--param" || spec.scenario.empty() ? std::string(kCommandLine)
                                                                                               : spec.scenario,
                                                0, 0};
        bad.add(at, "",
                fmt::format("{} {}={}: {}{}{}", p.origin, p.key, p.values.front(), d.path.empty() ? "" : d.path + ": ",
                            d.message, d.hint.empty() ? "" : " (" + d.hint + ")"));
      }
    }
  }
  if (spec.points() > kMaxPoints) {
    // points() stops counting past the limit: the whole product, for the message.
    double product = 1.0;
    std::string factors;
    for (const auto& axis : spec.axes()) {
      const std::size_t n = spec.params[axis.front()].values.size();
      product *= static_cast<double>(n);
      factors += fmt::format("{}{}", factors.empty() ? "" : " x ", n);
    }
    bad.add(config::Location{std::string(kCommandLine), 0, 0}, "",
            fmt::format("--param: the grid has {} points ({}); at most {} are allowed",
                        product < 1e15 ? fmt::format("{:.0f}", product) : fmt::format("{:.3g}", product), factors,
                        kMaxPoints),
            "split the study into several sweeps, or take fewer values per axis");
  }
  if (!bad.ok()) throw config::InputError(std::move(bad));
}

/// What every point's results depend on besides its parameters, as written to sweep.base.json:
/// the base scenario as loaded (its files merged, with the command's --set, --seed and
/// --replications; the sweep block left out, since the grid is checked point by point), the
/// node and GPU it resolved to, its calibration profile, and the clustersim computing them.
/// "fingerprint" is FNV-1a 64 of all that; the other keys say it for people. "grid" is the
/// grid's axes (each key, its values, whether zipped), so that a rerun on another grid whose
/// points hold the finished ones says so (prepare()).
config::Json base_record(const SweepSpec& spec, const scenario::LoadedScenario& loaded) {
  config::Json scenario = config::to_json(loaded.config);
  scenario.erase("sweep");
  config::Json all = {{"scenario", scenario},
                      {"node", config::to_json(loaded.node.spec)},
                      {"gpu", config::to_json(loaded.node.gpu)},
                      {"calibration", loaded.calibration ? calibration::to_json(*loaded.calibration) : config::Json()},
                      {"clustersim", fmt::format("{} ({})", kVersion, kGitCommit)}};
  config::Json sets = config::Json::array();
  for (const std::string& set : spec.sets) sets.push_back(set);
  config::Json grid = config::Json::array();
  for (const SweepParam& p : spec.params) grid.push_back({{"key", p.key}, {"values", p.values}, {"zipped", p.zipped}});
  return {{"fingerprint", fmt::format("{:016x}", sim::fnv1a64(config::json_text(all)))},
          {"scenario", spec.scenario.empty() ? std::string("(built-in quickstart)") : spec.scenario},
          {"sets", std::move(sets)},
          {"seed", loaded.config.simulation.seed},
          {"replications", loaded.config.simulation.replications},
          {"clustersim", all["clustersim"]},
          {"grid", std::move(grid)}};
}

/// How the grid of an earlier run (its sweep.base.json's "grid") differs from this one's.
std::string grid_difference(const config::Json& was, const config::Json& now) {
  const auto axis_text = [](const config::Json& a) {
    std::vector<std::string> values;
    for (const config::Json& v : a["values"]) values.push_back(v.get<std::string>());
    return fmt::format("{}={}{}", a["key"].get<std::string>(), fmt::join(values, ","), a["zipped"].get<bool>() ? " (zipped)" : "");
  };
  std::vector<std::string> then, today;
  for (const config::Json& a : was) then.push_back(axis_text(a));
  for (const config::Json& a : now) today.push_back(axis_text(a));
  return fmt::format("the grid was {}, it is {} now", then.empty() ? "empty" : fmt::format("{}", fmt::join(then, " x ")),
                     today.empty() ? "empty" : fmt::format("{}", fmt::join(today, " x ")));
}

/// Whether `g` reads as a grid record of base_record() (an older folder has none).
bool is_grid_record(const config::Json& g) {
  if (!g.is_array()) return false;
  for (const config::Json& a : g) {
    if (!a.is_object() || !a.contains("key") || !a["key"].is_string() || !a.contains("values") ||
        !a["values"].is_array() || !a.contains("zipped") || !a["zipped"].is_boolean()) {
      return false;
    }
    for (const config::Json& v : a["values"]) {
      if (!v.is_string()) return false;
    }
  }
  return true;
}

/// Why the base of an earlier run (`was`, from its sweep.base.json) is not this one's.
std::string base_difference(const config::Json& was, const config::Json& now) {
  std::vector<std::string> parts;
  for (const char* key : {"scenario", "sets", "seed", "replications", "clustersim"}) {
    if (!was.contains(key) || was[key] != now[key]) {
      parts.push_back(fmt::format("{} {} then, {} now", key, was.contains(key) ? config::json_text(was[key]) : "unknown",
                                  config::json_text(now[key])));
    }
  }
  if (parts.empty()) return "the scenario's files, or the node, GPU or calibration they name, changed since";
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

/// Reads the records of an earlier run of the same sweep (complete, valid lines of
/// sweep.jsonl, first of each point), rewrites both files from them in point order and lists
/// the missing points.
Prepared prepare(const SweepSpec& spec, const SweepOptions& options, std::ostream& log) {
  Prepared p;
  scenario::LoadOptions base = spec.options_of(-1);
  base.check_memory = false;
  base.check_inert = false;  // judged at the grid's first point (check_params)
  // The base is never run, only its points: one that does not hold by itself (a job larger
  // than its cluster) but where a point does (cluster.nodes a parameter) is swept, its points
  // judged one by one (error rows). It was refused though every point held. When none of
  // the first kMaxTried points holds either, the base's own errors are the input error.
  constexpr std::int64_t kMaxTried = 64;  // loading a point builds its fabric
  scenario::LoadedScenario loaded;
  std::optional<scenario::LoadedScenario> held;  // a point that holds, when the base does not
  try {
    loaded = load_with(spec, base);
  } catch (const config::InputError&) {
    if (spec.params.empty()) throw;
    scenario::LoadOptions unresolved = base;
    unresolved.resolve = false;
    loaded = load_with(spec, unresolved);  // throws on a scenario that does not even decode
    for (std::int64_t i = 0; i < std::min(spec.points(), kMaxTried) && !held; ++i) {
      scenario::LoadOptions o = spec.options_of(i);
      o.check_memory = false;
      o.check_inert = false;
      try {
        held = load_with(spec, o);
      } catch (const config::InputError&) {
      }
    }
    if (!held) (void)load_with(spec, base);  // throws the base's own errors again
  }
  base.check_inert = true;
  check_params(spec, base, loaded.config);
  for (const SweepParam& param : spec.params) p.columns.params.push_back(param.key);
  // ETTR and goodput where a point may run the long run: the base does (failures, a queue,
  // a fixed checkpoint interval, a horizon), or a parameter can make it.
  p.columns.failures =
      scenario::long_run(held ? *held : loaded) || std::any_of(spec.params.begin(), spec.params.end(), [](const SweepParam& q) {
        for (const char* k : {"failures", "checkpoint", "simulation.horizon", "scheduler"}) {
          if (q.key.rfind(k, 0) == 0) return true;
        }
        if (q.key == "simulation") return true;  // a whole section may carry a horizon
        // Jobs that may come to queue: the workload, its jobs, their sizes, counts or submits.
        const auto ends = [&](std::string_view tail) {
          return q.key.size() >= tail.size() && q.key.compare(q.key.size() - tail.size(), tail.size(), tail) == 0;
        };
        return q.key == "workload" || q.key == "workload.jobs" || q.key == "cluster" || q.key == "cluster.nodes" ||
               ends(".gpus") || ends(".count") || ends(".submit") || ends("]");
      });

  const fs::path dir(options.out_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::error_code is;
    if (fs::exists(options.out_dir, is) && !fs::is_directory(options.out_dir, is)) {
      throw input_error(options.out_dir, 0, "", "--out names a file, not a folder (name a folder, new or existing)");
    }
    throw input_error(options.out_dir, 0, "", fmt::format("cannot create the folder: {}", ec.message()));
  }
  p.jsonl_path = (dir / "sweep.jsonl").string();
  p.csv_path = (dir / "sweep.csv").string();
  const std::string base_path = (dir / "sweep.base.json").string();
  const config::Json base_now = base_record(spec, loaded);

  std::vector<bool> done(static_cast<std::size_t>(spec.points()), false);
  if (fs::exists(p.jsonl_path)) {
    std::ifstream in(p.jsonl_path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    config::Diagnostics bad;
    std::size_t start = 0;
    int line_no = 0;
    // The points of this grid by their values, built when a record is not where it was.
    std::unordered_map<std::string, std::int64_t> point_of;
    // Records that are not points of this grid, said once per kind with how many there are.
    struct Strangers {
      int count = 0;
      int line = 0;
      std::string why;  // the first's
    };
    struct {
      Strangers other_keys;    // records over other keys than this grid's
      Strangers other_values;  // records with a value this grid lacks
    } strangers;
    const auto values_key = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, "\x1f")); };
    while (start < text.size()) {
      ++line_no;
      const std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) {
        log << fmt::format("sweep: {}:{}: ignoring a partial last line (an interrupted write)\n", p.jsonl_path,
                           line_no);
        break;
      }
      const std::string line = text.substr(start, nl - start);
      start = nl + 1;
      if (line.empty()) continue;
      config::Json rec = config::Json::parse(line, nullptr, false);
      const auto fail = [&](const std::string& why) {
        bad.add(config::Location{p.jsonl_path, line_no, 1}, "", why,
                "this folder holds another sweep's results: use another --out, or delete it");
      };
      if (rec.is_discarded() || !rec.is_object() || !rec.contains("point") || !rec["point"].is_number_integer() ||
          !rec.contains("params") || !rec["params"].is_object() || !rec.contains("status")) {
        fail("not a sweep record");
        continue;
      }
      // The record's values in this sweep's order of axes; its point is the one of this grid
      // with those values, wherever the grid holds it now (an axis grown by values in the
      // middle or at the end moves the points after them).
      std::vector<std::string> values;
      bool complete = rec["params"].size() == spec.params.size();
      for (std::size_t i = 0; complete && i < spec.params.size(); ++i) {
        const auto it = rec["params"].find(spec.params[i].key);
        complete = it != rec["params"].end() && it->is_string();
        if (complete) values.push_back(it->get<std::string>());
      }
      const auto was = rec["point"].get<std::int64_t>();
      std::int64_t index = was;
      if (complete && (index < 0 || index >= spec.points() || spec.values_of(index) != values)) {
        if (point_of.empty()) {
          for (std::int64_t i = 0; i < spec.points(); ++i) point_of.emplace(values_key(spec.values_of(i)), i);
        }
        const auto found = point_of.find(values_key(values));
        index = found == point_of.end() ? -1 : found->second;
      }
      if (!complete || index < 0) {
        // Said once, with what differs: the keys varied (an axis added or removed), or a value
        // that no axis of this grid holds (spelt otherwise: 08 for 8). One line per record
        // said the same thing over and over.
        if (!complete) {
          if (++strangers.other_keys.count == 1) {
            strangers.other_keys.line = line_no;
            std::vector<std::string> here, now;
            for (const auto& [key, v] : rec["params"].items()) here.push_back(key);
            for (const SweepParam& sp : spec.params) now.push_back(sp.key);
            strangers.other_keys.why =
                fmt::format("point {} varies {{{}}}, and this sweep {{{}}}: a sweep resumes over the same keys (an "
                            "axis cannot be added or removed)",
                            was, fmt::join(here, ", "), fmt::join(now, ", "));
          }
        } else if (++strangers.other_values.count == 1) {
          strangers.other_values.line = line_no;
          std::string what;
          for (std::size_t i = 0; i < spec.params.size() && what.empty(); ++i) {
            const std::vector<std::string>& takes = spec.params[i].values;
            if (std::find(takes.begin(), takes.end(), values[i]) == takes.end()) {
              what = fmt::format("{} = {}, which this sweep's {} does not hold ({})", spec.params[i].key, values[i],
                                 spec.params[i].key, fmt::join(takes, ", "));
            }
          }
          strangers.other_values.why =
              fmt::format("point {} has {}", was,
                          what.empty() ? fmt::format("the parameters {}, not a point of this sweep's grid of {}",
                                                     config::json_text(rec["params"]), spec.points())
                                       : what);
        }
        continue;
      }
      if (done[static_cast<std::size_t>(index)]) continue;  // a duplicate: keep the first
      done[static_cast<std::size_t>(index)] = true;
      ++p.resumed;
      if (rec["status"] != "ok") ++p.resumed_errors;
      // Written again where the grid moved it, or reordered its axes: under its new number,
      // its parameters in this grid's order, as a fresh run writes it.
      config::Json params = config::Json::object();
      for (std::size_t i = 0; i < spec.params.size(); ++i) params[spec.params[i].key] = values[i];
      if (index != was || rec["params"] != params) {
        rec["point"] = index;
        rec["params"] = std::move(params);
        p.records.push_back({index, rec.dump(-1, ' ', false, config::Json::error_handler_t::replace) + "\n",
                             p.columns.row(rec)});
        if (index != was) ++p.renumbered;
        continue;
      }
      p.records.push_back({index, line + "\n", p.columns.row(rec)});
    }
    // Records of another base scenario (another --set, seed, number of replications, an
    // edited file, another clustersim) would be mixed in silently: the grid alone does not
    // tell them apart.
    std::string reused;  // said once the folder is known to resume (not before a refusal)
    if (bad.ok() && !p.records.empty()) {
      std::ifstream base_in(base_path, std::ios::binary);
      std::stringstream base_text;
      base_text << base_in.rdbuf();
      const config::Json was = base_in ? config::Json::parse(base_text.str(), nullptr, false) : config::Json();
      const bool same = was.is_object() && was.contains("fingerprint") && was["fingerprint"] == base_now["fingerprint"];
      if (!same) {
        bad.add(config::Location{p.jsonl_path, 0, 0}, "",
                fmt::format("its {} finished point{} computed from another base scenario: {}", p.records.size(),
                            p.records.size() == 1 ? " was" : "s were",
                            was.is_object() ? base_difference(was, base_now)
                                            : fmt::format("{} is missing or unreadable", base_path)),
                "rerun with what the first run had, or start over in another --out folder, or after deleting this one");
      } else if (was.contains("grid") && is_grid_record(was["grid"]) && was["grid"] != base_now["grid"]) {
        // Every finished point is a point of this grid (checked above), so the folder becomes
        // this sweep (a grid grown by an axis's values reuses what was done): said, not
        // silent, as the folder no longer holds the first run's grid.
        reused = fmt::format("sweep: note: {} ({}); the earlier run's {} finished point{} of this grid reused{}\n",
                           grid_difference(was["grid"], base_now["grid"]), base_path, p.records.size(),
                           p.records.size() == 1 ? "" : "s",
                           p.renumbered > 0 ? fmt::format(", {} of them under a new point number", p.renumbered)
                                            : std::string());
      }
    }
    for (const Strangers* kind : {&strangers.other_keys, &strangers.other_values}) {
      if (kind->count == 0) continue;
      bad.add(config::Location{p.jsonl_path, kind->line, 1}, "",
              kind->count == 1 ? kind->why
                               : fmt::format("{} (and {} more record{} like it)", kind->why, kind->count - 1,
                                             kind->count == 2 ? "" : "s"),
              "this folder holds another sweep's results: use another --out, or delete it");
    }
    if (!bad.ok()) throw config::InputError(std::move(bad));
    log << reused;
  }
  write_in_point_order(p, {{base_path, config::json_text(base_now, 2) + "\n"}});
  for (std::int64_t i = 0; i < spec.points(); ++i) {
    if (!done[static_cast<std::size_t>(i)]) p.pending.push_back(i);
  }
  return p;
}

}  // namespace

bool parse_sweep_param(std::string_view text, SweepParam& out, std::string& why) {
  // The key up to the first '=' outside quotes, as a --set reads it, written as set_key
  // writes it ('"cluster".nodes' is cluster.nodes, to compare with the --set keys).
  const std::string whole(text);
  const std::size_t start = config::set_value_start(whole);
  const auto eq = start == std::string::npos ? std::string_view::npos : start - 1;
  const std::string key = eq == std::string_view::npos ? std::string() : scenario::set_key(whole);
  if (key.empty() || eq + 1 >= text.size()) {
    why = fmt::format("'{}': expected KEY=v1,v2,... or KEY=a:b:x2 (e.g. --param cluster.nodes=16,32,64)", text);
    return false;
  }
  out.key = key;
  out.values.clear();
  const std::vector<std::string> parts = split_top_level(text.substr(eq + 1));
  if (parts.size() == 1) {
    bool is_range = false;
    if (!expand_range(parts[0], out.values, why, is_range)) {
      why = fmt::format("{}={}", key, why);  // "cluster.nodes='1:1e15:+1': more than ..." names its key
      return false;
    }
    if (is_range) {
      out.range = parts[0];
      return true;
    }
  }
  for (const std::string& v : parts) {
    if (v.empty()) {
      why = fmt::format("'{}': an empty value (a comma too many?)", text);
      return false;
    }
  }
  if (parts.size() > kMaxValues) {
    why = fmt::format("'{}': more than {} values", text, kMaxValues);
    return false;
  }
  out.values = parts;
  return true;
}

std::int64_t sweep_block_points(const scenario::Scenario& sc) {
  if (!sc.sweep) return 0;
  SweepSpec spec;
  spec.params = sweep_block_params(sc);
  return spec.points();
}

std::vector<SweepParam> sweep_block_params(const scenario::Scenario& sc) {
  std::vector<SweepParam> out;
  if (!sc.sweep) return out;
  // Keys as a --set of them writes them (set_key): '"cluster".nodes' is cluster.nodes.
  for (const scenario::SweepAxis& a : sc.sweep->zip.axes) {
    out.push_back({scenario::set_key(a.key), a.values, true, "sweep.zip", a.where, {}});
  }
  for (const scenario::SweepAxis& a : sc.sweep->grid.axes) {
    out.push_back({scenario::set_key(a.key), a.values, false, "sweep.grid", a.where, {}});
  }
  return out;
}

std::vector<std::vector<std::size_t>> SweepSpec::axes() const {
  std::vector<std::vector<std::size_t>> out;
  std::optional<std::size_t> zip_axis;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].zipped && zip_axis) {
      out[*zip_axis].push_back(i);
      continue;
    }
    if (params[i].zipped) zip_axis = out.size();
    out.push_back({i});
  }
  return out;
}

std::int64_t SweepSpec::points() const {
  std::int64_t n = 1;
  for (const auto& axis : axes()) {
    n *= static_cast<std::int64_t>(params[axis.front()].values.size());
    if (n > kMaxPoints) return kMaxPoints + 1;  // too many: rejected by check_params
  }
  return n;
}

std::vector<std::size_t> SweepSpec::value_indices(std::int64_t index) const {
  std::vector<std::size_t> indices(params.size());
  const auto all = axes();
  for (std::size_t a = all.size(); a-- > 0;) {
    const auto n = static_cast<std::int64_t>(params[all[a].front()].values.size());
    for (std::size_t i : all[a]) {
      CLUSTERSIM_CHECK(static_cast<std::int64_t>(params[i].values.size()) == n, "zipped parameters have one length");
      indices[i] = static_cast<std::size_t>(index % n);
    }
    index /= n;
  }
  return indices;
}

std::vector<std::string> SweepSpec::values_of(std::int64_t index) const {
  const std::vector<std::size_t> indices = value_indices(index);
  std::vector<std::string> values(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) values[i] = params[i].values[indices[i]];
  return values;
}

config::Diagnostics locate_point_errors(const SweepSpec& spec, std::int64_t index, const config::Diagnostics& errors) {
  const std::vector<std::size_t> indices = spec.value_indices(index);
  config::Diagnostics out;
  for (const config::Diagnostic& d : errors.items()) {
    const SweepParam* owner = nullptr;
    std::size_t owner_index = 0;
    if (d.where.file == kCommandLine) {
      for (std::size_t i = 0; i < spec.params.size(); ++i) {
        const std::string& key = spec.params[i].key;
        // At the key, under it, or at a section above it that the point's value made wrong
        // (failures.heterogeneity, of --param failures.heterogeneity.kind=power_law).
        const bool under = d.path == key || config::key_inside(key, d.path) || config::key_inside(d.path, key);
        if (under && (!owner || key.size() > owner->key.size())) {
          owner = &spec.params[i];
          owner_index = i;
        }
      }
    }
    if (!owner) {
      out.add(d.where, d.path, d.message, d.hint);
      continue;
    }
    const std::size_t v = indices[owner_index];
    const config::Location at =
        v < owner->where.size() ? owner->where[v] : config::Location{std::string(kCommandLine), 0, 0};
    out.add(at, "",
            fmt::format("{} {}={}: {}{}", owner->origin, owner->key, owner->values[v], d.path.empty() ? "" : d.path + ": ",
                        d.message),
            d.hint);
  }
  return out;
}

scenario::LoadOptions SweepSpec::options_of(std::int64_t index) const {
  scenario::LoadOptions o;
  o.sets = sets;
  o.seed = seed;
  o.check_memory = true;
  if (replications) o.sets.push_back(fmt::format("simulation.replications={}", *replications));
  if (index >= 0) {
    const std::vector<std::string> values = values_of(index);
    for (std::size_t i = 0; i < params.size(); ++i) o.sets.push_back(params[i].key + "=" + values[i]);
    o.point_sets = params.size();
  }
  return o;
}

config::Json run_point(const SweepSpec& spec, std::int64_t index) {
  const auto start = Clock::now();
  config::Json rec = config::Json::object();
  rec["point"] = index;
  config::Json params = config::Json::object();
  const std::vector<std::string> values = spec.values_of(index);
  for (std::size_t i = 0; i < values.size(); ++i) params[spec.params[i].key] = values[i];
  rec["params"] = std::move(params);
  try {
    const scenario::LoadedScenario loaded = load_with(spec, spec.options_of(index));
    const RunResult result = compute_run(loaded);
    config::Json res = results_json(loaded, result);
    rec["jobs"] = std::move(res["jobs"]);
    res.erase("jobs");
    rec["results"] = std::move(res);
    rec["status"] = "ok";
  } catch (const config::InputError& e) {
    rec["status"] = "error";
    rec["error"] = diagnostics_text(locate_point_errors(spec, index, e.diagnostics()));
  } catch (const sim::TimeRangeError& e) {
    rec["status"] = "error";
    rec["error"] = e.what();
  } catch (const std::exception& e) {
    rec["status"] = "error";
    rec["error"] = fmt::format("internal error (a bug in clustersim): {}", e.what());
  }
  rec["wall_s"] = seconds_since(start);
  return rec;
}

std::string SweepColumns::header() const {
  std::string out = "point";
  for (const std::string& p : params) {
    out += ',';
    out += csv_quote(p);
  }
  out += ",status";
  for (std::string_view c : kResultColumns) out += fmt::format(",{}", c);
  if (failures) {
    for (std::string_view c : kFailureColumns) out += fmt::format(",{}", c);
  }
  return out + ",error,wall_s\n";
}

std::string SweepColumns::row(const config::Json& record) const {
  // Appends ",cell" (GCC 12 warns falsely on `"," + std::string` under -Wrestrict).
  std::string out = csv_cell(record.at("point"));
  const auto add = [&](const config::Json& object, const std::string& key) {
    out += ',';
    if (object.is_object() && object.contains(key)) out += csv_cell(object[key]);
  };
  for (const std::string& p : params) add(record.at("params"), p);
  add(record, "status");
  static const config::Json kNull;
  const config::Json& res = record.contains("results") ? record["results"] : kNull;
  for (std::string_view c : kResultColumns) add(res, std::string(c));
  if (failures) {
    for (std::string_view c : kFailureColumns) add(res, std::string(c));
  }
  add(record, "error");
  add(record, "wall_s");
  out += '\n';
  return out;
}

namespace {

// What the interrupt handler writes: made before it is installed (a handler may only call
// async-signal-safe functions: write, signal, raise).
char g_resume_message[1024];
std::size_t g_resume_length = 0;

extern "C" void say_resume_and_die(int sig) {
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, g_resume_message, g_resume_length);
  std::signal(sig, SIG_DFL);
  std::raise(sig);  // the default action: the exit status a shell expects of an interrupt
}

/// While alive, SIGINT and SIGTERM say that the sweep resumes, then end the process as
/// they would have.
class ResumeHint {
 public:
  explicit ResumeHint(const std::string& out_dir) {
    const std::string text = fmt::format(
        "\nsweep interrupted: the rows written in {}/ stand; run the same command again to resume\n", out_dir);
    g_resume_length = std::min(text.size(), sizeof g_resume_message);
    std::memcpy(g_resume_message, text.data(), g_resume_length);
    // A signal the sweep was started ignoring (SIGINT under `cmd &` in a script) stays ignored.
    previous_int_ = std::signal(SIGINT, say_resume_and_die);
    if (previous_int_ == SIG_IGN) std::signal(SIGINT, SIG_IGN);
    previous_term_ = std::signal(SIGTERM, say_resume_and_die);
    if (previous_term_ == SIG_IGN) std::signal(SIGTERM, SIG_IGN);
  }
  ~ResumeHint() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }
  ResumeHint(const ResumeHint&) = delete;
  ResumeHint& operator=(const ResumeHint&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

}  // namespace

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options, std::ostream& log) {
  const auto start = Clock::now();
  World world;
  SweepSummary summary;
  summary.ranks = world.size();
  summary.writer = world.rank() == 0;

  Prepared prep;
  std::optional<config::InputError> failure;
  if (world.rank() == 0) {
    try {
      prep = prepare(spec, options, log);
    } catch (const config::InputError& e) {
      failure = e;
    }
  }
  std::int64_t status = failure ? -1 : 0;
  world.broadcast(status, prep.pending);
  if (status < 0) {
    world.finalize();
    if (failure) throw *failure;
    summary.writer = false;
    summary.aborted = true;
    return summary;  // rank 0 reports the error
  }
  summary.points = spec.points();
  summary.resumed = prep.resumed;
  summary.run = static_cast<std::int64_t>(prep.pending.size());
  summary.errors = prep.resumed_errors;

  // This rank's share: every size()-th missing point.
  std::vector<std::int64_t> mine;
  for (std::size_t k = static_cast<std::size_t>(world.rank()); k < prep.pending.size();
       k += static_cast<std::size_t>(world.size())) {
    mine.push_back(prep.pending[k]);
  }
  int threads = options.jobs > 0 ? options.jobs
                                 : world.size() > 1 ? 1 : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min(threads, static_cast<int>(std::max<std::size_t>(mine.size(), 1))));
  summary.threads = threads;

  std::optional<AppendFile> jsonl_file;
  std::optional<AppendFile> csv_file;
  if (world.rank() == 0) {
    jsonl_file.emplace(prep.jsonl_path);
    csv_file.emplace(prep.csv_path);
  }
  // Ctrl-C (or a scheduler's SIGTERM) ends the process where it is; every row written stands
  // (each is one appended line), and the message says how to go on.
  std::optional<ResumeHint> resume_hint;
  if (world.rank() == 0) resume_hint.emplace(options.out_dir);
  Progress progress(log, options.progress && world.rank() == 0, summary.points, summary.resumed);
  std::int64_t finished = summary.resumed;
  const auto write = [&](const std::string& line) {
    const config::Json rec = config::Json::parse(line);
    Record r{rec.at("point").get<std::int64_t>(), line + "\n", prep.columns.row(rec)};
    jsonl_file->append(r.jsonl);
    csv_file->append(r.csv);
    prep.records.push_back(std::move(r));
    if (rec["status"] != "ok") ++summary.errors;
    ++finished;
  };

  std::mutex mutex;
  std::condition_variable ready_cv;
  std::vector<std::string> ready;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads && !mine.empty(); ++t) {
      workers.emplace_back([&] {
        for (;;) {
          const std::size_t k = next.fetch_add(1);
          if (k >= mine.size() || stop.load()) return;
          // Invalid UTF-8 (from a parameter's bytes, echoed in a message) is replaced, not thrown.
          std::string line = run_point(spec, mine[k]).dump(-1, ' ', false, config::Json::error_handler_t::replace);
          {
            const std::lock_guard lock(mutex);
            ready.push_back(std::move(line));
          }
          ready_cv.notify_one();
        }
      });
    }
    struct StopOnExit {
      std::atomic<bool>& stop;
      ~StopOnExit() { stop.store(true); }
    } stop_on_exit{stop};  // an exception below stops the workers before they are joined

    const std::size_t remote = world.rank() == 0 ? prep.pending.size() - mine.size() : 0;
    std::size_t local_done = 0;
    std::size_t remote_done = 0;
    const auto poll = world.size() > 1 ? std::chrono::milliseconds(2) : std::chrono::milliseconds(100);
    while (local_done < mine.size() || remote_done < remote) {
      std::vector<std::string> batch;
      {
        std::unique_lock lock(mutex);
        ready_cv.wait_for(lock, poll, [&] { return !ready.empty(); });
        batch.swap(ready);
      }
      for (const std::string& line : batch) {
        ++local_done;
        if (world.rank() == 0) {
          write(line);
        } else {
          world.send_to_root(line);
        }
      }
      std::string line;
      while (remote_done < remote && world.try_receive(line)) {
        ++remote_done;
        write(line);
      }
      progress.update(finished, summary.errors);
    }
  }
  progress.update(finished, summary.errors, true);
  if (world.rank() == 0 && !prep.pending.empty()) {
    // Every point is done: the files in point order, as one thread would have written them.
    jsonl_file.reset();
    csv_file.reset();
    write_in_point_order(prep);
  }
  summary.wall_s = seconds_since(start);
  return summary;
}

}  // namespace clustersim::tools
