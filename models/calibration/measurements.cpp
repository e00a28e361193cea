#include "models/calibration/measurements.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/time.hpp"
#include "sim/units.hpp"

namespace clustersim::calibration {
namespace {

using config::Location;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

/// The 1-based column where each of tokens(line) starts.
std::vector<int> token_columns(const std::string& line) {
  std::vector<int> out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const bool space = std::isspace(static_cast<unsigned char>(line[i])) != 0;
    if (!space && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])) != 0)) {
      out.push_back(static_cast<int>(i + 1));
    }
  }
  return out;
}

/// The longest time a measurement may take: the simulated clock's range (sim/time.hpp,
/// int64 nanoseconds, 292 years). A longer one is no measurement, and fitting it would
/// only fail later, in a duration the clock cannot hold.
constexpr double kMaxSeconds = sim::Time::max().seconds();
constexpr double kMinSeconds = 1e-9;  // the clock's resolution (sim::Time counts nanoseconds)

/// A bandwidth in GB/s as nccl-tests prints it (two decimals), with enough digits that a
/// small one does not print as a false 0.00.
std::string gbps_text(double gbps) {
  return gbps >= 0.01 || gbps == 0.0 ? fmt::format("{:.2f} GB/s", gbps) : fmt::format("{:.3g} GB/s", gbps);
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// --- microbenchmark JSON lines ---------------------------------------------------------

class Line {
 public:
  Line(const nlohmann::json& j, Location at, config::Diagnostics& errors) : j_(j), at_(std::move(at)), errors_(errors) {}

  bool number(const char* key, double& out, double min_exclusive = 0.0) {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_number()) {
      fail(it == j_.end() ? fmt::format("'{}' record: missing number '{}'", record(), key)
                          : fmt::format("'{}' record: '{}' must be a number, got {}", record(), key, it->dump()));
      return false;
    }
    out = it->get<double>();
    if (!(out > min_exclusive) || !std::isfinite(out)) {
      fail(fmt::format("'{}' record: '{}' must be greater than {}, got {}", record(), key, min_exclusive, out));
      return false;
    }
    if (std::string_view(key) == "time_s" && out > kMaxSeconds) {
      fail(fmt::format("'{}' record: 'time_s' {} s is longer than the simulated clock's range ({:.3g} s, 292 years): "
                       "not a measured time",
                       record(), out, kMaxSeconds));
      return false;
    }
    if (std::string_view(key) == "time_s" && out < kMinSeconds) {
      fail(fmt::format("'{}' record: 'time_s' {:g} s is shorter than the simulated clock's 1 ns resolution: "
                       "not a measured time",
                       record(), out));
      return false;
    }
    return true;
  }
  bool integer(const char* key, std::int64_t& out) {
    double v = 0.0;
    if (!number(key, v)) return false;
    if (v > 9e15) {  // (1e30 is whole: it read "must be a whole number")
      fail(fmt::format("'{}' record: '{}' {:g} is too large for a count (at most 9e15)", record(), key, v));
      return false;
    }
    if (v != std::floor(v)) {
      fail(fmt::format("'{}' record: '{}' must be a whole number, got {}", record(), key, v));
      return false;
    }
    out = static_cast<std::int64_t>(v);
    return true;
  }
  /// An optional count that may be 0 (a version the microbenchmark could not read): absent
  /// leaves `out` as it is.
  bool optional_count(const char* key, std::int64_t& out) {
    const auto it = j_.find(key);
    if (it == j_.end()) return true;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0.0 ||
        it->get<double>() != std::floor(it->get<double>()) || it->get<double>() > 9e15) {
      fail(fmt::format("'{}' record: '{}' must be a whole number, 0 or more, got {}", record(), key, it->dump()));
      return false;
    }
    out = it->get<std::int64_t>();
    return true;
  }
  bool text(const char* key, std::string& out) {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_string()) {
      fail(it == j_.end() ? fmt::format("'{}' record: missing string '{}'", record(), key)
                          : fmt::format("'{}' record: '{}' must be a string, got {}", record(), key, it->dump()));
      return false;
    }
    out = it->get<std::string>();
    return true;
  }
  /// A rate printed for people beside the time (tflops, gbps: %.3f of what the record's own
  /// numbers give, `implied`, by `formula`): absent is fine; one they do not give was edited,
  /// and the time may have been too.
  bool printed(const char* key, double implied, const char* formula, const char* unit) {
    const auto it = j_.find(key);
    if (it == j_.end()) return true;
    if (!it->is_number() || std::abs(it->get<double>() - implied) > 0.0006 + 1e-6 * implied) {
      fail(fmt::format("'{}' record: '{}' {} is not what its time gives ({} = {:.3f} {})", record(), key, it->dump(),
                       formula, implied, unit),
           "fix the edited figure, or run the benchmark again");
      return false;
    }
    return true;
  }
  void fail(std::string message, std::string hint = {}) { errors_.add(at_, "", std::move(message), std::move(hint)); }
  [[nodiscard]] std::string record() const { return j_.value("record", std::string("?")); }

 private:
  const nlohmann::json& j_;
  Location at_;
  config::Diagnostics& errors_;
};

/// The keys tools/microbench writes in each record (the values fitted, and those printed for
/// people: tflops, gbps, the timing's spread), and `note`. Any other key is an error rather
/// than ignored: "bacth": 8 had fitted a batched GEMM as one of batch 1.
bool known_keys(const nlohmann::json& j, const std::string& record, Line& l) {
  static const std::map<std::string, std::set<std::string>> kKeys = {
      {"device",
       {"bench", "name", "sm_count", "compute_capability", "sm_clock_mhz", "mem_clock_mhz", "mem_bus_bits",
        "memory_bytes", "driver_version", "cuda_version", "device_count"}},
      {"gemm", {"dtype", "shape", "m", "n", "k", "batch", "tflops"}},
      {"memory", {"kind", "bytes", "moved_bytes", "gbps"}},
      {"elementwise", {"kind", "rows", "cols", "bytes", "gbps"}},
      {"launch", {"kind", "kernels"}},
      {"collective", {"op", "ranks", "ranks_per_node", "nodes", "bytes", "algbw_gbps", "busbw_gbps"}},
      {"skipped", {"bench", "reason", "dtype", "m", "n", "k"}},
      {"attention",
       {"backend", "dtype", "batch_heads", "q_len", "kv_len", "head_dim", "causal", "pass", "tflops"}},
      {"sustained",
       {"dtype", "m", "n", "k", "t_s", "window_s", "tflops", "sm_clock_mhz", "power_w", "temperature_c",
        "clock_event_reasons"}}};
  static const std::set<std::string> kEvery = {"record", "note", "time_s", "min_s", "max_s", "repeats", "calls"};
  const auto keys = kKeys.find(record);
  if (keys == kKeys.end()) return true;  // an unknown record is reported as such
  bool ok = true;
  for (const auto& [key, value] : j.items()) {
    if (kEvery.count(key) || keys->second.count(key)) continue;
    std::vector<std::string_view> expected(keys->second.begin(), keys->second.end());
    expected.insert(expected.end(), kEvery.begin(), kEvery.end());
    const auto near = sim::closest_match(key, expected);
    l.fail(fmt::format("'{}' record: unknown key '{}'{}", record, key,
                       near ? fmt::format(" (did you mean '{}'?)", *near) : std::string()));
    ok = false;
  }
  return ok;
}

/// The timing's spread and counts tools/microbench prints beside time_s (common.cuh: the
/// median, fastest and slowest of `repeats` timings of `calls` calls each). Not fitted, but
/// figures that contradict one another make no measurement (a hand edit, a paste): a median
/// outside its own range, a slowest run faster than the fastest, no repeat at all.
bool consistent_timing(const nlohmann::json& j, Line& l) {
  for (const char* key : {"repeats", "calls"}) {
    std::int64_t n = 0;
    if (j.contains(key) && !l.integer(key, n)) return false;  // a whole number above 0
  }
  if (!j.contains("min_s") && !j.contains("max_s")) return true;
  double lo = 0.0;
  double hi = 0.0;
  if (!l.number("min_s", lo) || !l.number("max_s", hi)) return false;  // one without the other: said
  if (lo > hi) {
    l.fail(fmt::format("'{}' record: 'min_s' {:g} s is above 'max_s' {:g} s (the fastest and slowest repeats)",
                       l.record(), lo, hi));
    return false;
  }
  const auto t = j.find("time_s");
  if (t == j.end() || !t->is_number()) return true;  // said by the record's own parse
  const double median = t->get<double>();
  // (The three are printed with 10 significant digits: a median equal to an end may round
  // past it by 1 part in 10^9.)
  if (median < lo * (1.0 - 1e-8) || median > hi * (1.0 + 1e-8)) {
    l.fail(fmt::format("'{}' record: 'time_s' {:g} s lies outside [min_s, max_s] = [{:g}, {:g}] s, and it is the "
                       "median of those repeats",
                       l.record(), median, lo, hi));
    return false;
  }
  return true;
}

template <class E>
bool enum_from(const std::string& name, E& out) {
  for (const auto& [v, n] : enum_names(E{})) {
    if (n == name) {
      out = v;
      return true;
    }
  }
  return false;
}

// --- nccl-tests -----------------------------------------------------------------------

struct PerfBinary {
  const char* binary;
  std::optional<network::Op> op;
};

constexpr PerfBinary kBinaries[] = {
    {"all_reduce_perf", network::Op::all_reduce},     {"all_gather_perf", network::Op::all_gather},
    {"reduce_scatter_perf", network::Op::reduce_scatter}, {"alltoall_perf", network::Op::all_to_all},
    {"broadcast_perf", network::Op::broadcast},       {"sendrecv_perf", network::Op::send_recv},
    {"hypercube_perf", std::nullopt},                 {"gather_perf", std::nullopt},
    {"scatter_perf", std::nullopt},                   {"reduce_perf", std::nullopt},
};

/// The binary named earliest in `text`, else in `file`; nullptr if none.
const PerfBinary* find_binary(const std::string& text, const std::string& file) {
  for (const std::string* where : {&text, &file}) {
    const PerfBinary* best = nullptr;
    std::size_t best_at = std::string::npos;
    for (const PerfBinary& b : kBinaries) {
      std::size_t at = where->find(b.binary);
      // "reduce_perf" is inside "all_reduce_perf": take a match that does not continue a longer name.
      while (at != std::string::npos && at > 0 && (std::isalnum(static_cast<unsigned char>((*where)[at - 1])) ||
                                                   (*where)[at - 1] == '_')) {
        at = where->find(b.binary, at + 1);
      }
      if (at < best_at) {
        best_at = at;
        best = &b;
      }
    }
    if (best) return best;
    // File names written without "_perf": all_reduce.log, allreduce-8gpu.txt.
    if (where == &file) {
      const std::string name = file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
      const std::pair<const char*, std::size_t> stems[] = {{"all_reduce", 0}, {"allreduce", 0}, {"all_gather", 1},
                                                           {"allgather", 1},  {"reduce_scatter", 2},
                                                           {"reducescatter", 2}, {"alltoall", 3}, {"all_to_all", 3}};
      for (const auto& [stem, index] : stems) {
        if (name.find(stem) != std::string::npos) return &kBinaries[index];
      }
    }
  }
  return nullptr;
}

}  // namespace

bool read_results(const std::string& file, const std::string& text, Measurements& out, config::Diagnostics& errors) {
  const std::size_t before = errors.items().size();
  const std::vector<std::string> lines = split_lines(text);
  std::size_t records = 0;
  bool first_line = true;
  std::map<std::string, std::size_t> seen_lines;  // each measurement's text, at its line
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& raw = lines[i];
    const std::size_t start = raw.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    const Location at{file, static_cast<int>(i + 1), 1};
    // A file whose first line is no JSON object is not JSON lines at all (a YAML scenario, a
    // log given as results): one error, not one per line, each "truncated?".
    // (A UTF-8 byte-order mark before it is no content: the JSON parser skips it too.)
    const bool bom = i == 0 && raw.compare(start, 3, "\xEF\xBB\xBF") == 0;
    if (std::exchange(first_line, false) && raw.size() > start + (bom ? 3 : 0) && raw[start + (bom ? 3 : 0)] != '{') {
      errors.add(Location{file, static_cast<int>(i + 1), static_cast<int>(start + 1)}, "",
                 "not microbenchmark results: the first line is no JSON object (expected JSON lines from "
                 "tools/microbench)",
                 raw.find("_perf") != std::string::npos || raw.find("nccl") != std::string::npos
                     ? "an nccl-tests log goes after --nccl-tests"
                     : "");
      return false;
    }
    nlohmann::json j;
    // A key given twice in one object: nlohmann keeps the last without a word (a record's
    // second time_s replaced its first), so the parse watches the keys of each object.
    std::vector<std::vector<std::string>> keys;  // the open objects' keys, innermost last
    std::string twice;
    const nlohmann::json::parser_callback_t watch = [&](int, nlohmann::json::parse_event_t event,
                                                        nlohmann::json& parsed) {
      using Event = nlohmann::json::parse_event_t;
      if (event == Event::object_start) keys.emplace_back();
      if (event == Event::object_end && !keys.empty()) keys.pop_back();
      if (event == Event::key && !keys.empty() && twice.empty()) {
        const std::string key = parsed.get<std::string>();
        std::vector<std::string>& seen = keys.back();
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) twice = key;
        seen.push_back(key);
      }
      return true;
    };
    try {
      j = nlohmann::json::parse(raw, watch);
    } catch (const nlohmann::json::parse_error& e) {
      // Truncated: an object left open (not "{...} x", a whole object with text after it).
      const bool truncated = std::count(raw.begin(), raw.end(), '{') > std::count(raw.begin(), raw.end(), '}');
      // The parser's own words, without its prefix and its position within the line (it said
      // "line 1" of the file's line 16): "[json.exception.parse_error.101] parse error at line
      // 1, column 54: syntax error ..." reads "syntax error ...".
      std::string why = e.what();
      if (const std::size_t column = why.find(", column "); column != std::string::npos) {
        if (const std::size_t colon = why.find(": ", column); colon != std::string::npos) why = why.substr(colon + 2);
      }
      errors.add(Location{file, static_cast<int>(i + 1), static_cast<int>(std::min<std::size_t>(e.byte, raw.size() + 1))},
                 "", fmt::format("not a JSON object{}: {}", truncated ? " (truncated line?)" : "", why));
      continue;
    } catch (const nlohmann::json::out_of_range& e) {  // a number past a double's range: 1e400
      const std::string number = config::quoted_in(e.what());
      const std::size_t col = number.empty() ? std::string::npos : raw.find(number);
      errors.add(Location{file, static_cast<int>(i + 1), col == std::string::npos ? 1 : static_cast<int>(col + 1)}, "",
                 fmt::format("a number past the range of a double (about 1.8e308): {}", number.empty() ? e.what() : number),
                 "write a finite number, in the unit the record's key names");
      continue;
    }
    if (!twice.empty()) {
      const std::string quoted = "\"" + twice + "\"";
      const std::size_t first = raw.find(quoted);
      const std::size_t second = first == std::string::npos ? first : raw.find(quoted, first + 1);
      errors.add(Location{file, static_cast<int>(i + 1), second == std::string::npos ? 1 : static_cast<int>(second + 1)},
                 "", fmt::format("the key \"{}\" is given twice in one object, and only one value can count", twice),
                 "keep one of them");
      continue;
    }
    if (!j.is_object() || !j.contains("record") || !j["record"].is_string()) {
      errors.add(at, "", "expected a JSON object with a \"record\" key (device, gemm, memory, launch, elementwise, "
                         "collective, attention, sustained, skipped)");
      continue;
    }
    Line l(j, at, errors);
    const std::string record = j["record"].get<std::string>();
    ++records;
    if (!known_keys(j, record, l) || !consistent_timing(j, l)) continue;
    // A measurement repeated byte for byte is a paste (two runs never time alike to ten
    // digits), and would count twice in the fit. Device and skipped records repeat by design;
    // a second launch record of a kind is refused whatever its figures (below).
    if (record != "device" && record != "skipped" && record != "launch") {
      const auto [earlier, fresh] = seen_lines.emplace(raw.substr(start), i + 1);
      if (!fresh) {
        l.fail(fmt::format("'{}' record: the same as line {}, byte for byte; a measurement counts once", record,
                           earlier->second));
        continue;
      }
    }
    if (record == "device") {
      DeviceInfo d;
      double clock = 0.0;
      if (!l.text("name", d.name) || !l.integer("sm_count", d.sm_count)) continue;
      if (j.contains("sm_clock_mhz") && l.number("sm_clock_mhz", clock)) d.sm_clock_mhz = clock;
      const bool driver_ok = l.optional_count("driver_version", d.driver_version);
      if (!l.optional_count("cuda_version", d.cuda_version) || !driver_ok) continue;
      if (out.device && (out.device->name != d.name || out.device->sm_count != d.sm_count)) {
        l.fail(fmt::format("results from another GPU: '{}' ({} SMs), earlier lines are from '{}' ({} SMs); "
                           "calibrate one GPU type at a time",
                           d.name, d.sm_count, out.device->name, out.device->sm_count));
        continue;
      }
      d.where = out.device ? out.device->where : fmt::format("{}:{}", file, i + 1);
      // A version of 0 is one the program could not read: it does not replace a known one
      // (the profile's device read 0 or not by the order of the files).
      if (out.device) {
        if (d.driver_version == 0) d.driver_version = out.device->driver_version;
        if (d.cuda_version == 0) d.cuda_version = out.device->cuda_version;
        if (d.sm_clock_mhz == 0.0) d.sm_clock_mhz = out.device->sm_clock_mhz;
      }
      out.device = d;
    } else if (record == "gemm") {
      GemmPoint p;
      std::string dtype;
      if (!l.text("dtype", dtype) || !l.integer("m", p.shape.m) || !l.integer("n", p.shape.n) ||
          !l.integer("k", p.shape.k) || !l.number("time_s", p.seconds)) {
        continue;
      }
      if (j.contains("batch") && !l.integer("batch", p.shape.batch)) continue;
      if (!enum_from(dtype, p.dtype)) {
        l.fail(fmt::format("'gemm' record: unknown dtype '{}' (fp32, tf32, bf16, fp16, fp8)", dtype));
        continue;
      }
      const double flops = 2.0 * static_cast<double>(p.shape.m) * static_cast<double>(p.shape.n) *
                           static_cast<double>(p.shape.k) * static_cast<double>(p.shape.batch);
      if (!l.printed("tflops", flops / p.seconds / 1e12, "2 m n k batch / time_s", "TFLOP/s")) continue;
      p.where = fmt::format("{}:{}", file, i + 1);
      out.gemm.push_back(p);
    } else if (record == "memory" || record == "elementwise") {
      MemoryPoint p;
      if (!l.text("kind", p.kind) || !l.number("time_s", p.seconds)) continue;
      // The kinds tools/microbench writes: another (a typo) was read and then ignored.
      const std::vector<std::string_view> kinds = record == "memory"
                                                      ? std::vector<std::string_view>{"d2d_copy", "triad", "h2d", "d2h"}
                                                      : std::vector<std::string_view>{"softmax", "layernorm"};
      if (std::find(kinds.begin(), kinds.end(), p.kind) == kinds.end()) {
        l.fail(fmt::format("'{}' record: unknown kind '{}' ({})", record, p.kind, fmt::join(kinds, ", ")));
        continue;
      }
      // A memory record's bandwidth is over the bytes its kernel moves (a copy reads and
      // writes its buffer: 2 x bytes), which only moved_bytes says: without it the buffer's
      // size was taken, and a copy's bandwidth read half.
      if (!l.number(record == "memory" ? "moved_bytes" : "bytes", p.moved)) continue;
      // What a kernel moves follows from its buffer (tools/microbench/memory.cu): a copy reads
      // and writes it (2 x bytes), a triad reads two and writes one (3x), a host copy crosses
      // once. moved_bytes 1 beside a 1 GiB copy was fitted as 3.9 TB/s of HBM.
      if (record == "memory" && j.contains("bytes")) {
        double bytes = 0.0;
        if (!l.number("bytes", bytes)) continue;
        const double times = p.kind == "d2d_copy" ? 2.0 : p.kind == "triad" ? 3.0 : 1.0;
        if (std::abs(p.moved - times * bytes) > 1e-9 * times * bytes) {
          l.fail(fmt::format("'memory' record: a {} of a {:.0f} B buffer moves {:.0f} B ({:g} x bytes), not 'moved_bytes' "
                             "{:.0f}",
                             p.kind, bytes, times * bytes, times, p.moved));
          continue;
        }
      }
      if (!l.printed("gbps", p.moved / p.seconds / 1e9,
                     record == "memory" ? "moved_bytes / time_s" : "bytes / time_s", "GB/s")) {
        continue;
      }
      p.where = fmt::format("{}:{}", file, i + 1);
      out.memory.push_back(p);
    } else if (record == "launch") {
      LaunchPoint p;
      if (!l.text("kind", p.kind) || !l.number("time_s", p.seconds)) continue;
      // The kinds tools/microbench/launch.cu writes (a typo was read and ignored, as memory's were).
      if (p.kind != "stream" && p.kind != "graph" && p.kind != "roundtrip") {
        l.fail(fmt::format("'launch' record: unknown kind '{}' (stream, graph, roundtrip)", p.kind));
        continue;
      }
      // (A count of kernels, as gemm's batch: 0 was accepted; integer() refuses it.)
      std::int64_t kernels = 1;
      if (j.contains("kernels") && !l.integer("kernels", kernels)) continue;
      p.where = fmt::format("{}:{}", file, i + 1);
      out.launch.push_back(p);
    } else if (record == "collective") {
      CollectivePoint p;
      std::string op;
      if (!l.text("op", op) || !l.integer("ranks", p.ranks) || !l.number("bytes", p.bytes) ||
          !l.number("time_s", p.seconds)) {
        continue;
      }
      if (j.contains("nodes") && !l.integer("nodes", p.nodes)) continue;
      if (p.bytes != std::floor(p.bytes)) {
        l.fail(fmt::format("'collective' record: 'bytes' must be a whole number, got {}", p.bytes));
        continue;
      }
      // The ranks split evenly over the nodes (ranks 8 on nodes 16 was written, read 16x0).
      if (j.contains("nodes") && (p.nodes < 1 || p.ranks % p.nodes != 0)) {
        l.fail(fmt::format("'collective' record: 'nodes' {} does not divide 'ranks' {} (each node runs ranks / nodes)",
                           p.nodes, p.ranks));
        continue;
      }
      if (j.contains("ranks_per_node")) {
        std::int64_t per_node = 0;
        if (!l.integer("ranks_per_node", per_node)) continue;
        if (!j.contains("nodes")) {  // the nodes follow: ranks / ranks_per_node
          if (p.ranks % per_node != 0) {
            l.fail(fmt::format("'collective' record: 'ranks_per_node' {} does not divide 'ranks' {}", per_node, p.ranks));
            continue;
          }
          p.nodes = p.ranks / per_node;
        } else if (per_node != p.ranks / p.nodes) {  // (nodes divides ranks, checked above)
          l.fail(fmt::format("'collective' record: 'ranks_per_node' {} on {} node{} is not 'ranks' {}", per_node,
                             p.nodes, p.nodes == 1 ? "" : "s", p.ranks));
          continue;
        }
      }
      if (p.ranks < 2) {  // a profile of it would not load (collectives[].ranks: at least 2)
        l.fail(fmt::format("'collective' record: 'ranks' must be at least 2 (a collective joins two ranks or more), "
                           "got {}",
                           p.ranks));
        continue;
      }
      if (!enum_from(op, p.op)) {
        l.fail(fmt::format("'collective' record: unknown op '{}' (all_reduce, all_gather, reduce_scatter, all_to_all, "
                           "broadcast, send_recv)",
                           op));
        continue;
      }
      // As nccl-tests defines them (tools/microbench/collectives.cu prints both): algbw = bytes
      // / time, busbw = algbw x the op's bus factor on its ranks.
      const double algbw = p.bytes / p.seconds / 1e9;
      if (!l.printed("algbw_gbps", algbw, "bytes / time_s", "GB/s") ||
          !l.printed("busbw_gbps", algbw * network::bus_factor(p.op, p.ranks),
                     "bytes / time_s x the op's bus factor", "GB/s")) {
        continue;
      }
      p.where = fmt::format("{}:{}", file, i + 1);
      out.collectives.push_back(p);
    } else if (record == "attention") {
      AttentionPoint p;
      std::string dtype, pass;
      if (!l.text("backend", p.backend) || !l.text("dtype", dtype) || !l.integer("batch_heads", p.shape.batch_heads) ||
          !l.integer("q_len", p.shape.q_len) || !l.integer("kv_len", p.shape.kv_len) ||
          !l.integer("head_dim", p.shape.head_dim) || !l.text("pass", pass) || !l.number("time_s", p.seconds)) {
        continue;
      }
      const auto causal = j.find("causal");
      if (causal == j.end() || !causal->is_boolean()) {
        l.fail(causal == j.end() ? std::string("'attention' record: missing true or false 'causal'")
                                 : fmt::format("'attention' record: 'causal' must be true or false, got {}",
                                               causal->dump()));
        continue;
      }
      p.shape.causal = causal->get<bool>();
      if (pass != "forward" && pass != "backward") {
        l.fail(fmt::format("'attention' record: unknown pass '{}' (forward, backward)", pass));
        continue;
      }
      p.backward = pass == "backward";
      if (p.backend != "cudnn" && p.backend != "flash") {
        l.fail(fmt::format("'attention' record: unknown backend '{}' (cudnn, flash: the kernels attention.py times)",
                           p.backend));
        continue;
      }
      // The fit takes self-attention calls, as attention.py times them: a decode call (one
      // query against a long cache) is bound by memory and launch, not by the kernel's rate.
      if (p.shape.q_len != p.shape.kv_len) {
        l.fail(fmt::format("'attention' record: q_len {} and kv_len {} differ; the fit takes self-attention calls "
                           "(q_len = kv_len), as attention.py times them",
                           p.shape.q_len, p.shape.kv_len));
        continue;
      }
      if (!enum_from(dtype, p.dtype)) {
        l.fail(fmt::format("'attention' record: unknown dtype '{}' (fp32, tf32, bf16, fp16, fp8)", dtype));
        continue;
      }
      // attention.py's FLOPs: 4 bh q kv h, halved when causal, x 2.5 for the backward pass.
      const double flops = 4.0 * static_cast<double>(p.shape.batch_heads) * static_cast<double>(p.shape.q_len) *
                           static_cast<double>(p.shape.kv_len) * static_cast<double>(p.shape.head_dim) *
                           (p.shape.causal ? 0.5 : 1.0) * (p.backward ? 2.5 : 1.0);
      if (!l.printed("tflops", flops / p.seconds / 1e12,
                     "4 batch_heads q_len kv_len head_dim (/2 causal, x2.5 backward) / time_s", "TFLOP/s")) {
        continue;
      }
      p.where = fmt::format("{}:{}", file, i + 1);
      out.attention.push_back(p);
    } else if (record == "sustained") {
      SustainedPoint p;
      std::string dtype;
      if (!l.text("dtype", dtype) || !l.integer("m", p.shape.m) || !l.integer("n", p.shape.n) ||
          !l.integer("k", p.shape.k) || !l.number("t_s", p.t_s) || !l.number("window_s", p.window_s) ||
          !l.integer("calls", p.calls)) {
        continue;
      }
      if (!enum_from(dtype, p.dtype)) {
        l.fail(fmt::format("'sustained' record: unknown dtype '{}' (fp32, tf32, bf16, fp16, fp8)", dtype));
        continue;
      }
      // The GPU's state: a number, -1 where NVML could not read it.
      bool state_ok = true;
      for (auto [key, slot] : {std::pair{"sm_clock_mhz", &p.sm_clock_mhz}, std::pair{"power_w", &p.power_w},
                               std::pair{"temperature_c", &p.temperature_c}}) {
        const auto it = j.find(key);
        if (it == j.end()) continue;
        if (!it->is_number() || !std::isfinite(it->get<double>()) ||
            (it->get<double>() < 0.0 && it->get<double>() != -1.0)) {
          l.fail(fmt::format("'sustained' record: '{}' must be a number, 0 or more (-1: not read), got {}", key,
                             it->dump()));
          state_ok = false;
          break;
        }
        *slot = it->get<double>();
      }
      if (!state_ok) continue;
      // A window ends at t_s, after the run began: it cannot have lasted longer than that,
      // and a run's windows follow each other (gemm --sustained writes them so, t_s to the
      // millisecond: 1 ms of slack).
      constexpr double kSlackS = 1e-3;
      if (p.window_s > p.t_s + kSlackS) {
        l.fail(fmt::format("'sustained' record: a window of {:g} s cannot end {:g} s into the run (window_s <= t_s)",
                           p.window_s, p.t_s));
        continue;
      }
      const auto previous = std::find_if(out.sustained.rbegin(), out.sustained.rend(), [&](const SustainedPoint& q) {
        return q.dtype == p.dtype && q.shape.m == p.shape.m && q.shape.n == p.shape.n && q.shape.k == p.shape.k &&
               q.where.rfind(file + ":", 0) == 0;
      });
      if (previous != out.sustained.rend() && p.t_s - p.window_s < previous->t_s - kSlackS) {
        l.fail(fmt::format("'sustained' record: this window ({:g} s to {:g} s) starts before the previous one of the "
                           "run ended ({:g} s, {}): windows follow each other in time",
                           p.t_s - p.window_s, p.t_s, previous->t_s, previous->where));
        continue;
      }
      p.where = fmt::format("{}:{}", file, i + 1);
      out.sustained.push_back(p);
    } else if (record == "skipped") {
      std::string bench = "?";
      std::string reason = "?";
      if ((j.contains("bench") && !l.text("bench", bench)) || (j.contains("reason") && !l.text("reason", reason))) continue;
      out.skipped.push_back(fmt::format("{}: {}", bench, reason));
    } else {
      --records;
      l.fail(fmt::format("unknown record '{}' (device, gemm, memory, launch, elementwise, collective, attention, "
                         "sustained, skipped)",
                         record));
    }
  }
  if (records == 0 && errors.items().size() == before) {
    errors.add(Location{file, 0, 0}, "", "no microbenchmark records (expected JSON lines from tools/microbench)");
  }
  return errors.items().size() == before;
}

bool read_nccl_tests(const std::string& file, const std::string& text, Measurements& out,
                     config::Diagnostics& errors) {
  const std::size_t before = errors.items().size();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    errors.add(Location{file, 0, 0}, "", "the nccl-tests log is empty: no result rows");
    return false;
  }
  const PerfBinary* binary = find_binary(text, file);
  if (!binary) {
    errors.add(Location{file, 0, 0}, "",
               "cannot tell which collective this nccl-tests log measured: it names no *_perf binary",
               "keep the command line in the log, or name the file after the binary, e.g. all_reduce_perf.log");
    return false;
  }
  if (!binary->op) {
    errors.add(Location{file, 0, 0}, "", fmt::format("{}: clustersim does not model this collective", binary->binary));
    return false;
  }
  const network::Op op = *binary->op;
  const std::vector<std::string> lines = split_lines(text);
  // Several tests run into one file (a script's output): every row of the second was read as
  // the first's and said garbled (or a second row of its size), one error per row. Each test
  // prints its own header, "# nThread N nGpus G minBytes ...": one error, at the second.
  for (std::size_t i = 0, headers = 0; i < lines.size(); ++i) {
    const std::vector<std::string> t = tokens(lines[i]);
    if (t.size() < 2 || t[0] != "#" || t[1] != "nThread" || ++headers < 2) continue;
    const PerfBinary* next = nullptr;  // named on the command line just above it, if any
    for (std::size_t j = i; j-- > 0 && i - j <= 3 && !next;) next = find_binary(lines[j], "");
    errors.add(Location{file, static_cast<int>(i + 1), 1}, "",
               next ? fmt::format("a second test begins here ({} after {}): one test per log", next->binary, binary->binary)
                    : fmt::format("a second test begins here (a second nccl-tests header after {}'s): one test per log",
                                  binary->binary),
               "split the log where the second test's output begins");
    return false;
  }
  std::int64_t ranks = 0;
  std::set<std::string> hosts;
  std::map<std::string, std::int64_t> per_host;  // ranks on each host, to check they split evenly
  int devices_line = 0;
  bool uneven_said = false;
  bool in_devices = false;
  bool other_gpu = false;
  std::size_t rows = 0;
  std::map<double, int> sizes_seen;  // size in bytes -> the line of its row
  static const std::map<std::string, double> kTypeBytes{
      {"int8", 1}, {"uint8", 1}, {"f8e4m3", 1}, {"f8e5m2", 1}, {"half", 2}, {"bfloat16", 2}, {"int32", 4},
      {"uint32", 4}, {"float", 4}, {"int64", 8}, {"uint64", 8}, {"double", 8}};
  bool one_rank_said = false;
  std::size_t zero_rows = 0;  // rows of 0 bytes, left out
  std::size_t odd_rows = 0;   // data rows of another column count: the first's place, and the
  Location odd_at;            // counts and lines of all
  std::set<std::size_t> odd_counts;
  std::vector<int> odd_lines;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const int line_no = static_cast<int>(i + 1);
    const std::vector<std::string> t = tokens(line);
    if (t.empty()) continue;
    if (t[0] == "#" || t[0][0] == '#') {
      std::vector<std::string> h = t;
      if (h[0] == "#") h.erase(h.begin());
      else h[0] = h[0].substr(1);
      if (h.size() >= 2 && h[0] == "Using" && h[1] == "devices") {
        ranks = 0;
        hosts.clear();
        per_host.clear();
        devices_line = line_no;
        uneven_said = false;
        in_devices = true;
      } else if (in_devices && !h.empty() && h[0] == "Rank") {
        const auto on = std::find(h.begin(), h.end(), "on");
        if (on == h.end() || on + 1 == h.end()) {
          errors.add(Location{file, line_no, 1}, "", "a '# Rank' line without 'on HOST': cannot tell the node");
          continue;
        }
        ++ranks;
        hosts.insert(*(on + 1));
        ++per_host[*(on + 1)];
        // "... device 0 [0x0f] NVIDIA A100-SXM4-40GB": the GPU the log ran on, so that a
        // profile for another GPU type is refused (calibrate --node or --gpu).
        if (const std::size_t bus = line.find("] "); bus != std::string::npos) {
          std::string name = line.substr(bus + 2);
          while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
          if (!name.empty() && out.device && out.device->name != name) {
            if (other_gpu) continue;  // said once per log
            other_gpu = true;
            errors.add(Location{file, line_no, static_cast<int>(bus) + 3}, "",
                       fmt::format("results from another GPU: '{}', while other results are from '{}'", name,
                                   out.device->name),
                       "calibrate one GPU type at a time");
          } else if (!name.empty() && !out.device) {
            out.device = DeviceInfo{.name = name, .where = fmt::format("{}:{}", file, line_no)};
          }
        }
      }
      continue;
    }
    // NCCL INFO lines, warnings, mpirun output; but a row shaped as nccl-tests prints them
    // (a count and a type after it) whose size is not a number is a garbled row (it was
    // dropped without a word).
    if (!all_digits(t[0])) {
      if ((t.size() == 12 || t.size() == 13) && all_digits(t[1]) && kTypeBytes.count(t[2]) != 0) {
        errors.add(Location{file, line_no, token_columns(line)[0]}, "",
                   fmt::format("garbled row: '{}' is not a size in bytes", t[0]));
      }
      continue;
    }
    const Location at{file, line_no, 1};
    const std::vector<int> columns = token_columns(line);
    const auto at_token = [&](std::size_t index) { return Location{file, line_no, columns[index]}; };
    if (ranks == 0) {
      errors.add(at, "", "a data row before the '# Using devices' list of ranks: cannot tell the rank count");
      continue;
    }
    if (ranks < 2) {  // nothing crosses a link: no rate to fit (the profile would not load)
      if (!one_rank_said) {
        one_rank_said = true;
        errors.add(Location{file, devices_line, 1}, "", "the test ran on 1 rank: a collective needs 2 or more",
                   "calibrate from a run on the GPUs of a node (-g 8) or of several nodes");
      }
      continue;
    }
    if (t.size() != 12 && t.size() != 13) {
      // Said once, after the rows (a log in another format had an error per row).
      if (odd_rows++ == 0) odd_at = at;
      odd_counts.insert(t.size());
      odd_lines.push_back(line_no);
      continue;
    }
    double size = 0.0;
    double count = 0.0;
    const std::size_t base = t.size() - 8;
    double v[8] = {};
    bool ok = parse_double(t[0], size) && all_digits(t[1]) && parse_double(t[1], count);
    std::size_t bad = 0;  // the index of the token that is not a number (or is negative), if any
    for (std::size_t c = 0; c < 8 && ok; ++c) {
      const std::string& s = t[base + c];
      if (c == 3 || c == 7) {  // #wrong: a count, an error magnitude, or N/A
        if (s != "N/A" && !parse_double(s, v[c])) bad = base + c;
      } else if (!parse_double(s, v[c]) || v[c] < 0.0) {
        bad = base + c;
      }
      if (bad != 0) ok = false;
    }
    if (!ok) {
      if (bad == 0) {
        errors.add(at, "", fmt::format("garbled row: '{}' / '{}' is not a size and element count", t[0], t[1]));
      } else {
        errors.add(at_token(bad), "",
                   fmt::format("garbled row: '{}' is {}", t[bad], v[bad - base] < 0.0 ? "negative" : "not a number"));
      }
      continue;
    }
    // The element count is the size in the row's type (per rank for the collectives whose
    // size counts every rank's part, as nccl-tests prints them): a row whose count says
    // otherwise is garbled, whatever its times.
    {
      const auto type = kTypeBytes.find(t[2]);
      const bool per_rank = op == network::Op::all_gather || op == network::Op::reduce_scatter ||
                            op == network::Op::all_to_all;
      if (type != kTypeBytes.end() && ranks > 0) {
        const double expected = std::floor(size / type->second / (per_rank ? static_cast<double>(ranks) : 1.0));
        if (count != expected) {
          errors.add(at_token(1), "",
                     fmt::format("garbled row: count {} does not match size / {} B per {}{} = {:.0f}", t[1],
                                 type->second, t[2], per_rank ? fmt::format(" / {} ranks", ranks) : std::string(),
                                 expected));
          continue;
        }
      }
    }
    // nccl-tests counts the elements its data check found wrong (-c 1): a row with any is
    // the timing of a broken run. (Older versions print the largest error instead, a
    // rounding-level fraction well below 1.)
    bool checked = true;
    for (int half = 0; half < 2 && checked; ++half) {
      const std::size_t wrong_at = base + 3 + 4 * static_cast<std::size_t>(half);
      if (t[wrong_at] == "N/A" || v[3 + 4 * half] < 1.0) continue;
      errors.add(at_token(wrong_at), "",
                 fmt::format("the {} run failed nccl-tests' data check: #wrong {} (elements with a wrong result), so "
                             "its time is not one of a correct {}",
                             half == 0 ? "out-of-place" : "in-place", t[wrong_at], config::enum_name(op)),
                 "fix the run (driver, NCCL, network) and measure again, or delete the row");
      checked = false;
    }
    if (!checked) continue;
    const double factor = network::bus_factor(op, ranks);
    bool consistent = true;
    for (int half = 0; half < 2 && consistent; ++half) {
      const std::size_t time_at = base + 4 * static_cast<std::size_t>(half);
      const char* const where = half == 0 ? "out-of-place" : "in-place";
      const double time_us = v[4 * half];
      const double algbw = v[4 * half + 1];
      const double busbw = v[4 * half + 2];
      if (time_us <= 0.0) {
        errors.add(at_token(time_at), "", fmt::format("garbled row: {} time {} us is not positive", where, t[time_at]));
        consistent = false;
        break;
      }
      if (time_us * 1e-6 < kMinSeconds) {
        errors.add(at_token(time_at), "",
                   fmt::format("{} time {} us is shorter than the simulated clock's 1 ns resolution: not a measured "
                               "time",
                               where, t[time_at]));
        consistent = false;
        break;
      }
      if (time_us * 1e-6 > kMaxSeconds) {
        errors.add(at_token(time_at), "",
                   fmt::format("{} time {} us ({:.3g} s) is longer than the simulated clock's range ({:.3g} s, 292 "
                               "years): not a measured time",
                               where, t[time_at], time_us * 1e-6, kMaxSeconds),
                   "nccl-tests prints times in microseconds; is the row garbled?");
        consistent = false;
        break;
      }
      const double expected_alg = size / time_us / 1e3;
      if (std::abs(algbw - expected_alg) > 0.011 + 0.01 * expected_alg) {
        errors.add(at_token(time_at + 1), "",
                   fmt::format("garbled row: {} algbw {} GB/s does not match size / time = {} B / {} us = {}", where,
                               t[time_at + 1], t[0], t[time_at], gbps_text(expected_alg)));
        consistent = false;
      } else if (algbw >= 0.5 && std::abs(busbw - algbw * factor) > 0.011 + 0.01 * busbw) {
        errors.add(at, "",
                   fmt::format("busbw / algbw = {:.3f}, but {} on {} ranks (from the '# Rank' lines) has factor {:.3f}",
                               busbw / algbw, config::enum_name(op), ranks, factor),
                   "is the list of ranks complete, and the collective the one named?");
        consistent = false;
      }
    }
    if (!consistent) continue;
    // NCCL returns at once from a collective of 0 elements: such a row (nccl-tests -b 0) times
    // the test's own loop, no transfer, and is left out of the fit.
    if (size <= 0.0) {
      ++zero_rows;
      continue;
    }
    // One row per size: a second (two logs pasted together, another run) would be fitted
    // as if both were the same measurement, times that disagree averaged into the fit.
    if (const auto [it, added] = sizes_seen.try_emplace(size, line_no); !added) {
      errors.add(at, "",
                 fmt::format("a second row for {:.0f} B (the first at line {}): one row per size", size, it->second),
                 "keep one run's rows: split logs of several runs into files, one fit each");
      continue;
    }
    // A profile's collective is ranks = nodes x ranks per node (an 8 + 4 + 4 split was
    // written as 16 ranks on 3 nodes, "3x5").
    if (per_host.size() > 1) {
      const auto [fewest, most] = std::minmax_element(per_host.begin(), per_host.end(),
                                                      [](const auto& a, const auto& b) { return a.second < b.second; });
      if (fewest->second != most->second) {
        if (!uneven_said) {
          uneven_said = true;
          errors.add(Location{file, devices_line, 1}, "",
                     fmt::format("the {} ranks are not split evenly over the {} hosts ({} on {}, {} on {}): a "
                                 "collective profile is nodes x ranks per node",
                                 ranks, per_host.size(), most->second, most->first, fewest->second, fewest->first),
                     "calibrate from a run with the same number of ranks on every host");
        }
        continue;
      }
    }
    for (int half = 0; half < 2; ++half) {
      CollectivePoint p;
      p.op = op;
      p.ranks = ranks;
      p.nodes = static_cast<std::int64_t>(hosts.size());
      p.bytes = size;
      p.seconds = v[4 * half] * 1e-6;
      p.where = fmt::format("{}:{}", file, line_no);
      out.collectives.push_back(p);
    }
    ++rows;
  }
  if (odd_rows > 0) {
    // One count on every such row: a format (an older nccl-tests'); several: damaged rows.
    const std::size_t shown = std::min<std::size_t>(odd_lines.size(), 6);
    const std::string lines_text =
        odd_rows == 1 ? std::string()
                      : fmt::format(" on {} rows (lines {}{})", odd_rows,
                                    fmt::join(odd_lines.begin(), odd_lines.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                                    odd_lines.size() > shown ? ", ..." : "");
    const bool one_count = odd_counts.size() == 1;
    const std::size_t first = *odd_counts.begin();
    errors.add(odd_at, "",
               fmt::format("expected 12 or 13 columns (size count type redop [root] time algbw busbw #wrong time "
                           "algbw busbw #wrong), got {}{}{}",
                           fmt::join(odd_counts, " or "), lines_text,
                           one_count && first < 12 && odd_rows == 1 ? ": truncated line?" : ""),
               odd_rows > 1 && one_count ? "an nccl-tests version whose rows have other columns? rerun with a current one"
               : odd_rows > 1            ? "damaged rows? rerun the test, or delete them"
                                         : std::string());
  }
  if (rows == 0 && errors.items().size() == before) {
    errors.add(Location{file, 0, 0}, "",
               zero_rows > 0 ? "only rows of 0 bytes (nccl-tests -b 0), which time no transfer: nothing to fit"
                             : "no data rows: is this an nccl-tests log?");
  }
  return errors.items().size() == before;
}

bool check_series_across_files(const Measurements& m, config::Diagnostics& errors) {
  // The file of a point's "file:line".
  const auto file_of = [](const std::string& where) { return where.substr(0, where.rfind(':')); };
  std::map<std::tuple<network::Op, std::int64_t, std::int64_t, double>, const CollectivePoint*> first;
  std::set<std::pair<std::string, std::string>> said;  // (earlier file, later file)
  const std::size_t before = errors.items().size();
  for (const CollectivePoint& p : m.collectives) {
    const auto [it, added] = first.try_emplace({p.op, p.ranks, p.nodes, p.bytes}, &p);
    if (added) continue;
    const std::string earlier = file_of(it->second->where);
    const std::string later = file_of(p.where);
    if (earlier == later || !said.emplace(earlier, later).second) continue;  // a file's own repeats are its timing
    const std::string::size_type colon = p.where.rfind(':');
    const int line = colon == std::string::npos ? 0 : std::atoi(p.where.c_str() + colon + 1);
    errors.add(Location{later, line, 1}, "",
               fmt::format("{} on {} ranks ({} node{}): {:.0f} B was measured in {} already (at {}); a size of a "
                           "series in two files would be averaged into one fit",
                           config::enum_name(p.op), p.ranks, p.nodes, p.nodes == 1 ? "" : "s", p.bytes, earlier,
                           it->second->where),
               "give each size of a series from one run: drop the file given twice, or the other run's rows");
  }
  return errors.items().size() == before;
}

}  // namespace clustersim::calibration
