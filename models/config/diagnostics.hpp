// Diagnostics for user input, in the shape of compiler errors:
//
//   scenarios/x.yaml:14:9: fabric.radix: must be even, got 7 (did you mean 'radix: 8'?)
//
// Every problem found in a scenario is collected, then all are reported at once, in file
// order (the files as first named, each by line and column; the checks run stage by stage,
// not as the text runs); the command exits with code 2 and writes nothing else.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::config {

/// Where a value was written: file, 1-based line and column. Line 0: the whole file.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  Location where;
  std::string path;     ///< dotted key path, e.g. "cluster.nodes"; empty for the file itself
  std::string message;  ///< what is wrong and what was expected
  std::string hint;     ///< a suggestion, printed as "(did you mean ...?)"; may be empty

  /// "file:line:column: path: message (hint)".
  [[nodiscard]] std::string format() const;
};

/// The most bytes an input file (a scenario, catalog, calibration profile, cases file or
/// measurement log) may hold: far above any real one, it keeps a mistaken path (a device, a
/// disk image) from being read into memory without end.
inline constexpr long long kMaxInputBytes = 256LL << 20;

/// Reads a whole input file into `out`. False with the reason in `why` ("No such file or
/// directory", "is a directory", "is not a regular file", "is larger than 256 MiB", "is not
/// valid UTF-8 (byte 0xe9 on line 3, column 9)") when it cannot.
bool read_input_file(const std::string& path, std::string& out, std::string& why);

/// Whether read_input_file has read `path` (or the file it links to) in this
/// process: an output must not overwrite an input of its own run (--trace onto the
/// scenario, calibrate -o onto its measurements). Thread-safe.
bool is_input_file(const std::string& path);

/// The offset of the first byte of `text` that is not part of a well-formed UTF-8 character
/// (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF), npos when there is none.
std::size_t first_invalid_utf8(std::string_view text);

/// The 1-based column, in characters (UTF-8 code points, as editors count them), of the
/// byte `byte_column` (0-based, as yaml-cpp's marks count) of line `line` (0-based) of `text`;
/// yaml-cpp does not count a UTF-8 byte-order mark on the first line, nor does this. A column
/// past the line's end counts on from it one character a byte.
int character_column(std::string_view text, int line, int byte_column);

/// The first text between single quotes in `what` (nlohmann::json's messages quote the
/// token at fault: "number overflow parsing '1e400'"); empty when there is none.
std::string quoted_in(std::string_view what);

class Diagnostics {
 public:
  void add(Location where, std::string path, std::string message, std::string hint = {});

  [[nodiscard]] bool ok() const { return items_.empty(); }
  /// In file order: the files as first named, each by line and column (add() keeps it).
  [[nodiscard]] const std::vector<Diagnostic>& items() const { return items_; }
  /// All diagnostics, one per line, each ending in a newline.
  [[nodiscard]] std::string format() const;

 private:
  std::vector<Diagnostic> items_;
  std::set<std::string, std::less<>> files_;  // the files items_ names: a new one is appended
};

/// Thrown by a loader when it has collected errors; carries all of them.
/// `more_checks`: the loader stopped at a stage whose errors keep the next stages from
/// running (a scenario that does not decode cannot be built, so its jobs are not checked
/// against the cluster): fixing these may show more.
class InputError : public std::exception {
 public:
  explicit InputError(Diagnostics diagnostics, bool more_checks = false)
      : diagnostics_(std::move(diagnostics)), more_checks_(more_checks) {}
  [[nodiscard]] const Diagnostics& diagnostics() const { return diagnostics_; }
  [[nodiscard]] bool more_checks() const { return more_checks_; }
  [[nodiscard]] const char* what() const noexcept override { return "invalid input"; }

 private:
  Diagnostics diagnostics_;
  bool more_checks_ = false;
};

}  // namespace clustersim::config
