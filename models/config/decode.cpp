#include "models/config/decode.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <cmath>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

namespace clustersim::config {

Location LoadState::where_overridden(const std::string& path, const std::vector<std::string>& keys) const {
  const Location* last = nullptr;
  const auto consider = [&](const Location& at) {
    if (at.file == "<command line>" && (!last || at.line > last->line)) last = &at;
  };
  for (const std::string& key : keys.empty() ? std::vector<std::string>{path} : keys) {
    // The key or anything under it (a whole model mapping set on the command line).
    for (auto it = assigned.lower_bound(key); it != assigned.end() && it->first.compare(0, key.size(), key) == 0; ++it) {
      const char next = it->first.size() == key.size() ? '.' : it->first[key.size()];
      if (next == '.' || next == '[') consider(it->second);
    }
  }
  return last ? *last : where(path);
}

Location LoadState::where(const std::string& path) const {
  // A section no file wrote but a key below it did (--set failures.fleet_age=new makes the
  // failures section): where that key was written, not the nearest file mapping above.
  if (!path.empty() && !assigned.count(path) && !mappings.count(path)) {
    for (const char sep : {'.', '['}) {
      const std::string prefix = path + sep;
      if (const auto it = assigned.lower_bound(prefix);
          it != assigned.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
        return it->second;
      }
    }
  }
  std::string p = path;
  for (;;) {
    if (auto it = assigned.find(p); it != assigned.end()) return it->second;
    if (auto it = mappings.find(p); it != mappings.end()) return it->second;
    if (p.empty()) break;
    const auto cut = p.find_last_of(".[");
    p = cut == std::string::npos ? std::string() : p.substr(0, cut);
  }
  return Location{};
}

void LoadState::forget_below(const std::string& path) {
  const auto below = [&](const std::string& key) {
    return key.size() > path.size() && key.compare(0, path.size(), path) == 0 &&
           (key[path.size()] == '.' || key[path.size()] == '[');
  };
  std::erase_if(assigned, [&](const auto& kv) { return below(kv.first); });
  std::erase_if(mappings, [&](const auto& kv) { return below(kv.first); });
}

Context Context::for_set(LoadState& state, int value_column) {
  Context ctx(state, "<command line>");
  ctx.set_value_column_ = value_column;
  return ctx;
}

Context Context::child(std::string_view key) const {
  Context c = *this;
  c.path_ = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  return c;
}

Context Context::element(std::size_t index) const {
  Context c = *this;
  c.path_ = fmt::format("{}[{}]", path_, index);
  return c;
}

Location Context::locate(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  if (set_value_column_ > 0) {
    return Location{file_, state_->set_line, set_value_column_ + (mark.is_null() ? 0 : mark.column)};
  }
  if (mark.is_null()) return Location{file_, 0, 0};
  const auto source = state_->sources.find(file_);
  if (source == state_->sources.end()) return Location{file_, mark.line + 1, mark.column + 1};
  return Location{file_, mark.line + 1, character_column(source->second, mark.line, mark.column)};
}

bool Context::explicit_null(const YAML::Node& node) const {
  if (!node.IsNull()) return false;
  const YAML::Mark mark = node.Mark();
  const auto source = state_->sources.find(file_);
  // Without the text (a JSON profile, a built-in table: read whole, never overlaid), a null
  // is taken as written: `"key": null`.
  if (source == state_->sources.end()) return true;
  if (mark.is_null()) return false;
  const std::string& text = source->second;
  std::size_t at = 0;
  for (int line = 0; line < mark.line && at != std::string::npos; ++line) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at == std::string::npos) return false;
  // yaml-cpp's columns on the first line do not count a UTF-8 byte-order mark.
  if (mark.line == 0 && text.rfind("\xEF\xBB\xBF", 0) == 0) at += 3;
  at += static_cast<std::size_t>(mark.column);
  if (at >= text.size()) return false;
  std::string_view rest = std::string_view(text).substr(at);
  // The mark of `key: &anchor ~` or `key: !!null ~` is at the anchor or the tag.
  while (!rest.empty() && (rest.front() == '&' || rest.front() == '!')) {
    const std::size_t gap = rest.find_first_of(" \t\r\n");
    if (gap == std::string_view::npos) return rest.front() == '!';  // `key: !!null`
    rest.remove_prefix(gap);
    const std::size_t next = rest.find_first_not_of(" \t");
    rest.remove_prefix(next == std::string_view::npos ? rest.size() : next);
  }
  if (rest.empty() || rest.front() == '\n' || rest.front() == '\r' || rest.front() == '#') return false;
  for (const std::string_view word : {"~", "null", "Null", "NULL"}) {
    if (rest.substr(0, word.size()) != word) continue;
    const std::string_view after = rest.substr(word.size());
    if (after.empty() || std::string_view(" \t\r\n,}]#").find(after.front()) != std::string_view::npos) return true;
  }
  return false;
}

void Context::error(const YAML::Node& at, std::string message, std::string hint) const {
  error_at(locate(at), std::move(message), std::move(hint));
}

void Context::error_at(Location at, std::string message, std::string hint) const {
  state_->diagnostics.add(std::move(at), path_, std::move(message), std::move(hint));
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: {
      // A long text (a file that is not YAML, read as one scalar) is quoted by its start.
      constexpr std::size_t kQuoted = 60;
      const std::string& text = node.Scalar();
      if (text.size() <= kQuoted) return fmt::format("'{}'", text);
      std::size_t cut = kQuoted;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;  // not inside a UTF-8 character
      return fmt::format("'{}...' ({} bytes)", text.substr(0, cut), text.size());
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

namespace {

/// The marks of the quoted (and block) scalars under `node`, keys included.
void quoted_marks(const YAML::Node& node, std::vector<YAML::Mark>& out) {
  if (!node.IsDefined()) return;
  if (node.IsMap()) {
    for (const auto& kv : node) {
      quoted_marks(kv.first, out);
      quoted_marks(kv.second, out);
    }
  } else if (node.IsSequence()) {
    for (const auto& element : node) quoted_marks(element, out);
  } else if (node.IsScalar() && node.Tag() == "!") {
    out.push_back(node.Mark());
  }
}

}  // namespace

/// Quoted scalars that run past their line where YAML would not let them: a continuation
/// line of a flow scalar is indented deeper than the line it started on (YAML 1.2, 7.3:
/// flow scalars' continuation lines are indented more than their block), and the closing
/// quote comes before the end of the file. yaml-cpp reads both, so a missing closing quote
/// swallowed the rest of a file: `description: "oops` then `cluster:` ... `seed: 9` was one
/// string, and the run went on with the base's cluster and seed. Each such scalar is an
/// error at its opening quote. (Escapes: a backslash in a double-quoted scalar, '' in a
/// single-quoted one.)
bool reject_runaway_quotes(const YAML::Node& node, const std::string& text, const std::string& file,
                           LoadState& state) {
  std::vector<YAML::Mark> marks;
  quoted_marks(node, marks);
  if (marks.empty()) return true;
  std::vector<std::size_t> starts{0};  // of each line
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  bool ok = true;
  for (const YAML::Mark& m : marks) {
    if (m.line < 0 || m.column < 0 || static_cast<std::size_t>(m.line) >= starts.size()) continue;
    // From the mark's line and byte column (its stream position leaves out a byte-order mark).
    std::size_t line_start = starts[static_cast<std::size_t>(m.line)];
    if (m.line == 0 && text.starts_with("\xEF\xBB\xBF")) line_start += 3;
    const std::size_t open = line_start + static_cast<std::size_t>(m.column);
    if (open >= text.size()) continue;
    const char quote = text[open];
    if (quote != '"' && quote != '\'') continue;  // a block scalar (| or >)
    const std::size_t indent = text.find_first_not_of(' ', line_start) - line_start;
    std::size_t i = open + 1;
    std::size_t bad_line = 0;  // 1-based line of the first continuation not indented deeper; 0: none
    int line = m.line + 1;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quote == '"' && c == '\\') {
        ++i;
        continue;
      }
      if (c == quote) {
        if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
          ++i;
          continue;
        }
        break;
      }
      if (c == '\n') {
        ++line;
        const std::size_t first = text.find_first_not_of(" \r", i + 1);
        const bool blank = first == std::string::npos || text[first] == '\n';
        if (!blank && first - (i + 1) <= indent && bad_line == 0) bad_line = static_cast<std::size_t>(line);
      }
    }
    if (i < text.size() && bad_line == 0) continue;
    const std::string where =
        bad_line > 0 ? fmt::format("it runs on to line {}, which is not indented deeper than the line it starts on", bad_line)
                     : std::string("it runs on to the end of the file");
    state.diagnostics.add(Location{file, m.line + 1, config::character_column(text, m.line, m.column)}, "",
                          fmt::format("this quoted text is not closed on its line: {}, and YAML would read the lines "
                                      "between as part of the text",
                                      where),
                          fmt::format("close the {} quote; a text over several lines continues on lines indented deeper "
                                      "than its key",
                                      quote == '"' ? "double" : "single"));
    ok = false;
  }
  return ok;
}

bool reject_tags(const YAML::Node& node, const Context& ctx) {
  if (!node.IsDefined()) return true;
  bool ok = true;
  // yaml-cpp's tags: '?' for a plain node, '!' for a quoted scalar, empty for a null.
  // `key: !!null` (or `!!null ~`) is an explicit null, read as `~` is (explicit_null).
  const std::string& tag = node.Tag();
  const bool null_tag = tag == "tag:yaml.org,2002:null" && node.IsScalar() &&
                        (node.Scalar().empty() || node.Scalar() == "~" || node.Scalar() == "null" ||
                         node.Scalar() == "Null" || node.Scalar() == "NULL");
  if (!tag.empty() && tag != "?" && tag != "!" && !null_tag) {
    constexpr std::string_view kCore = "tag:yaml.org,2002:";
    const std::string shown = tag.rfind(kCore, 0) == 0 ? "!!" + tag.substr(kCore.size()) : tag;
    ctx.error(node, fmt::format("the YAML tag '{}' is not read: each key has its own type (clustersim describe)", shown),
              "remove the tag; quote a value to make it text");
    ok = false;
  }
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const Context child = kv.first.IsScalar() ? ctx.child(kv.first.Scalar()) : ctx;
      ok = reject_tags(kv.first, child) && ok;
      ok = reject_tags(kv.second, child) && ok;
    }
  } else if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& element : node) ok = reject_tags(element, ctx.element(i++)) && ok;
  }
  return ok;
}

namespace {

/// Counts, event by event, the nodes each anchored node expands to, and flags an alias to a
/// node still open (its own ancestor) or one that takes the total past the limit.
class AliasCheck : public YAML::EventHandler {
 public:
  struct Problem {
    YAML::Mark at;
    bool loop = false;
  };
  std::optional<Problem> problem;

  void OnDocumentStart(const YAML::Mark& /*mark*/) override {
    open_.clear();
    sizes_.clear();
    total_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t anchor,
                const std::string& /*value*/) override {
    leaf(anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (problem) return;
    if (std::any_of(open_.begin(), open_.end(), [&](const Frame& f) { return f.anchor == anchor; })) {
      problem = Problem{mark, true};
      return;
    }
    const auto it = sizes_.find(anchor);
    add(it == sizes_.end() ? 1 : it->second, mark);
  }
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open_.push_back(Frame{anchor, 1});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open_.push_back(Frame{anchor, 1});
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YAML::anchor_t anchor;
    std::uint64_t size;
  };
  void leaf(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
    if (!open_.empty()) open_.back().size += 1;
    ++total_;
  }
  void add(std::uint64_t n, const YAML::Mark& at) {
    if (!open_.empty()) open_.back().size = std::min(open_.back().size + n, kMaxExpandedNodes + 1);
    total_ = std::min(total_ + n, kMaxExpandedNodes + 1);
    if (total_ > kMaxExpandedNodes && !problem) problem = Problem{at, false};
  }
  void close() {
    const Frame f = open_.back();
    open_.pop_back();
    if (f.anchor != YAML::NullAnchor) sizes_[f.anchor] = f.size;
    if (!open_.empty()) open_.back().size = std::min(open_.back().size + f.size, kMaxExpandedNodes + 1);
    ++total_;
  }
  std::vector<Frame> open_;
  std::map<YAML::anchor_t, std::uint64_t> sizes_;
  std::uint64_t total_ = 0;
};

}  // namespace

std::string yaml_error_text(const YAML::Exception& e) {
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
    return fmt::format("nested {} levels deep by here, the YAML reader's limit (a few levels are usual: "
                       "brackets or braces opened many times over?)",
                       deep->depth());
  }
  return fmt::format("YAML syntax error: {}", e.msg);
}

bool check_aliases(const std::string& text, const std::string& file, LoadState& state, int value_column) {
  static_assert(kMaxExpandedNodes == 1'000'000, "the message says a million");
  if (text.find('*') == std::string::npos) return true;  // no alias: nothing to expand
  AliasCheck check;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (!check.problem && parser.HandleNextDocument(check)) {
    }
  } catch (const YAML::Exception&) {
    return true;  // the loader reports the syntax error, with its position
  }
  if (!check.problem) return true;
  const YAML::Mark at = check.problem->at;
  std::string name;
  const auto pos = static_cast<std::size_t>(std::max(0, at.pos));
  if (pos < text.size() && text[pos] == '*') {
    const std::size_t end = text.find_first_of(" \t\r\n,]}#", pos + 1);
    name = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  }
  const Location where = value_column > 0 ? Location{file, state.set_line, value_column + at.column}
                                          : Location{file, at.line + 1, character_column(text, at.line, at.column)};
  const std::string alias = name.empty() ? "an alias" : fmt::format("the alias '{}'", name);
  if (check.problem->loop) {
    state.diagnostics.add(where, "",
                          fmt::format("{} sits inside the node its anchor names: the value would hold itself, "
                                      "without end",
                                      alias),
                          "an alias can only repeat a node that is complete before it; write the value out");
  } else {
    state.diagnostics.add(where, "",
                          fmt::format("{} takes the document past a million nodes once its aliases are expanded "
                                      "(aliases of lists of aliases multiply)",
                                      alias),
                          "no scenario needs that many: write the values out");
  }
  return false;
}

bool decode_scalar_text(const YAML::Node& node, std::string& out, const Context& ctx, std::string_view expected) {
  if (!node.IsScalar()) {
    ctx.error(node, fmt::format("expected {}, got {}", expected, describe_node(node)),
              node.IsNull() ? "a key without a value (or ~) clears only optional keys, sections and lists: give it a "
                              "value, or leave the key out for its default"
                            : "");
    return false;
  }
  out = node.Scalar();
  return true;
}

/// A number or a boolean that parsed is refused when it was quoted: a quoted scalar is a string
/// in YAML ("32" is not 32), which the key took silently as its number.
bool unquoted(const YAML::Node& node, const std::string& text, const Context& ctx, std::string_view expected) {
  if (node.Tag() != "!") return true;  // yaml-cpp's tag of a quoted scalar (a plain one's is "?")
  ctx.error(node, fmt::format("expected {}, got the string \"{}\"", expected, text),
            fmt::format("write it without quotes: {}", text));
  return false;
}

bool printable_text(const YAML::Node& node, std::string_view text, const Context& ctx) {
  std::size_t character = 0;  // counted in code points, as a reader counts them
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) ++character;  // not a UTF-8 continuation byte
    // C0 (but tab and newline), DEL, and C1 (U+0080 to U+009F, in UTF-8 C2 80 to C2 9F).
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || c1) {
      const unsigned code = c1 ? static_cast<unsigned char>(text[i + 1]) : c;
      ctx.error(node, fmt::format("holds a control character (U+{:04X}, character {} of the text); a string holds "
                                  "printable text, tabs and newlines",
                                  code, character),
                "remove it; in a double-quoted string an escape such as \\a or \\x07 writes one");
      return false;
    }
  }
  return true;
}

namespace {

/// 1 when `text` starts with a '+' before a digit (YAML 1.2's core schema reads +64 as 64;
/// from_chars takes no '+'), else 0.
std::size_t explicit_plus(const std::string& text) {
  return text.size() > 1 && text[0] == '+' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.') ? 1 : 0;
}

template <class Int>
bool decode_int(const YAML::Node& n, Int& out, const Context& ctx, std::string_view expected) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, expected)) return false;
  Int value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data() + explicit_plus(text), end, value);
  if (ec == std::errc::result_out_of_range) {
    ctx.error(n, fmt::format("{} is out of range for {}", text, expected));
    return false;
  }
  if (ec != std::errc() || ptr != end) {
    // A whole number written as a real one (1e7, 16.0) or with separators (10_000): the
    // hint writes it as an integer.
    std::string hint;
    std::string digits = text;
    std::erase_if(digits, [](char c) { return c == '_'; });
    double real = 0.0;
    const char* dend = digits.data() + digits.size();
    const auto [dptr, dec] = std::from_chars(digits.data() + explicit_plus(digits), dend, real);
    const double whole = std::round(real) + 0.0;  // + 0.0: -0 is 0
    // Only a value the key can take (not -1 for a non-negative integer).
    if (dec == std::errc() && dptr == dend && std::isfinite(real) &&
        whole >= static_cast<double>(std::numeric_limits<Int>::min()) &&
        whole <= static_cast<double>(std::numeric_limits<Int>::max()) / 2) {
      // The integer it means where it wrote one (1e7, 16.0); else no guess at the one meant,
      // which the key's own bounds may not allow.
      hint = real == whole ? fmt::format("write it as an integer: {:.0f}", whole) : std::string("a whole number");
    }
    // A number past any integer (1e400, -1e30), said as an integer past its type is; one too
    // small for a double (1e-400) is no whole number, and said so below.
    const bool tiny = digits.find("e-") != std::string::npos || digits.find("E-") != std::string::npos;
    const double most = static_cast<double>(std::numeric_limits<Int>::max());
    const bool huge = dec == std::errc::result_out_of_range ? !tiny : dec == std::errc() && !(std::abs(real) <= most);
    if (dptr == dend && huge) {
      ctx.error(n, fmt::format("{} is out of range for {}", text, expected));
      return false;
    }
    ctx.error(n, fmt::format("expected {}, got '{}'", expected, text), hint);
    return false;
  }
  if (!unquoted(n, text, ctx, expected)) return false;
  out = value;
  return true;
}

}  // namespace

int past_integer_range(const YAML::Node& n, double least, double most) {
  if (!n.IsScalar()) return 0;
  std::string text = n.Scalar();
  text.erase(0, explicit_plus(text));
  // Digits first ('inf', 'nan' and hex are no plain number), then all of it a number.
  const std::size_t digit = text.find_first_not_of('-');
  if (digit != 1 && digit != 0) return 0;
  if (digit >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[digit])) || text[digit] == '.')) return 0;
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ptr != end) return 0;
  const bool tiny = text.find("e-") != std::string::npos || text.find("E-") != std::string::npos;
  if (ec == std::errc::result_out_of_range) return tiny ? 0 : text.front() == '-' ? -1 : 1;
  if (ec != std::errc()) return 0;
  return value > most ? 1 : value < least ? -1 : 0;
}

bool decode_integer(const YAML::Node& n, std::int64_t& out, const Context& ctx) {
  return decode_int(n, out, ctx, "an integer");
}

bool decode_unsigned(const YAML::Node& n, std::uint64_t& out, const Context& ctx) {
  return decode_int(n, out, ctx, "a non-negative integer");
}

bool decode_double(const YAML::Node& n, double& out, const Context& ctx) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, "a number")) return false;
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data() + explicit_plus(text), end, value);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    // (It read "expected a number, got '1e400'", which it is.)
    ctx.error(n, fmt::format("{} is out of range for a number (a magnitude of at most about 1.8e308, and at least "
                             "about 4.9e-324 unless 0)",
                             text));
    return false;
  }
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    ctx.error(n, fmt::format("expected a{} number, got '{}'", ec == std::errc() && ptr == end ? " finite" : "", text));
    return false;
  }
  if (!unquoted(n, text, ctx, "a number")) return false;
  out = value == 0.0 ? 0.0 : value;  // -0 is 0 (it printed as "-0.0%")
  return true;
}

bool decode_bool(const YAML::Node& n, bool& out, const Context& ctx) {
  std::string text;
  if (!decode_scalar_text(n, text, ctx, "true or false")) return false;
  if (text == "true" || text == "false") {
    if (!unquoted(n, text, ctx, "true or false")) return false;
    out = text == "true";
    return true;
  }
  ctx.error(n, fmt::format("expected true or false, got '{}'", text));
  return false;
}

void report_unknown_key(const YAML::Node& key_node, const std::string& key, const Context& parent,
                        const std::vector<std::string_view>& keys) {
  if (key == "<<") {  // YAML 1.1's merge key, which yaml-cpp reads as a plain key
    parent.child(key).error(key_node,
                            fmt::format("a YAML merge key ('<<') is not read; expected one of {}", fmt::join(keys, ", ")),
                            "write the keys out, or put the shared ones in a scenario this one extends (extends:)");
    return;
  }
  const auto near = sim::closest_match(key, keys);
  // An empty key leaves no path to read ("unknown key" named none).
  parent.child(key).error(key_node,
                          fmt::format("unknown key{}; expected one of {}", key.empty() ? " '' (empty)" : "",
                                      fmt::join(keys, ", ")),
                          near ? fmt::format("did you mean '{}'?", *near) : std::string());
}

std::size_t set_value_start(std::string_view set) {
  for (std::size_t i = 0, quoted = 0; i < set.size(); ++i) {
    if (set[i] == '"') quoted ^= 1U;
    if (set[i] == '=' && !quoted) return i + 1;
  }
  return std::string_view::npos;
}

/// A quoted key in a --set path, as the errors about one show it.
constexpr const char* kQuotedKeyExample = "e.g. --set 'failures.components.\"nic.cx7\".rate=0.001/node-day'";

bool split_set_argument(const std::string& arg, std::vector<PathSegment>& segments, std::string& value,
                        int& value_column, LoadState& state) {
  const std::size_t value_start = set_value_start(arg);  // one past the first '=' outside a quoted key
  const std::size_t eq = value_start == std::string::npos ? std::string::npos : value_start - 1;
  if (eq == std::string::npos && std::count(arg.begin(), arg.end(), '"') % 2 == 1) {
    // Its '=' inside the quote that does not close (it said only "expected key.path=value").
    const std::size_t quote = arg.rfind('"');
    state.diagnostics.add(Location{"<command line>", state.set_line, static_cast<int>(quote) + 1}, "",
                          fmt::format("--set '{}': this double quote is not closed; a quoted key is a name between "
                                      "double quotes, followed by '.' or '='",
                                      arg),
                          kQuotedKeyExample);
    return false;
  }
  if (eq == std::string::npos || eq == 0) {
    state.diagnostics.add(Location{"<command line>", state.set_line, 1}, "",
                          fmt::format("--set '{}': expected key.path=value", arg), "e.g. --set cluster.nodes=128");
    return false;
  }
  std::size_t start = 0;
  while (start <= eq) {
    // "a."b.c".d": a quoted key, a name that holds '.' (a component class, a catalog entry).
    if (arg[start] == '"') {
      const std::size_t close = arg.find('"', start + 1);
      if (close == std::string::npos || close > eq || close == start + 1 || (close + 1 != eq && arg[close + 1] != '.')) {
        state.diagnostics.add(Location{"<command line>", state.set_line, static_cast<int>(start) + 1}, "",
                              fmt::format("--set '{}': a quoted key is a non-empty name between double quotes, "
                                          "followed by '.' or '='",
                                          arg),
                              kQuotedKeyExample);
        return false;
      }
      segments.push_back(PathSegment{arg.substr(start + 1, close - start - 1), static_cast<int>(start) + 2});
      start = close + 2;
      continue;
    }
    std::size_t dot = arg.find('.', start);
    if (dot == std::string::npos || dot > eq) dot = eq;
    if (dot == start) {
      state.diagnostics.add(Location{"<command line>", state.set_line, static_cast<int>(start) + 1}, "",
                            fmt::format("--set '{}': empty key in the path", arg));
      return false;
    }
    // "jobs[2]" is the key "jobs" then the list index "[2]".
    std::size_t end = dot;
    std::vector<PathSegment> indices;
    while (end > start && arg[end - 1] == ']') {
      const std::size_t open = arg.rfind('[', end - 1);
      if (open != std::string::npos && open >= start && open + 2 == end) {  // "jobs[]" read as a key "jobs[]"
        state.diagnostics.add(Location{"<command line>", state.set_line, static_cast<int>(open) + 1}, "",
                              fmt::format("--set '{}': an empty index '[]'; a list element is given by its position",
                                          arg),
                              "e.g. [0], the first");
        return false;
      }
      if (open == std::string::npos || open < start) break;
      indices.insert(indices.begin(), PathSegment{arg.substr(open, end - open), static_cast<int>(open) + 1});
      end = open;
    }
    if (end == start) {
      state.diagnostics.add(Location{"<command line>", state.set_line, static_cast<int>(start) + 1}, "",
                            fmt::format("--set '{}': empty key in the path", arg));
      return false;
    }
    segments.push_back(PathSegment{arg.substr(start, end - start), static_cast<int>(start) + 1});
    segments.insert(segments.end(), indices.begin(), indices.end());
    start = dot + 1;
  }
  value = arg.substr(eq + 1);
  value_column = static_cast<int>(eq) + 2;
  return true;
}

bool parse_set_value(const std::string& text, int value_column, YAML::Node& out, LoadState& state) {
  state.sources["<command line>"] = text;
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
    state.diagnostics.add(Location{"<command line>", state.set_line, value_column + static_cast<int>(bad)}, "",
                          fmt::format("the value holds a byte that is not UTF-8 (0x{:02x})", static_cast<unsigned char>(text[bad])),
                          "write the value in UTF-8 (check the terminal's encoding)");
    return false;
  }
  if (!check_aliases(text, "<command line>", state, value_column)) return false;
  try {
    out = YAML::Load(text);
    // Text that YAML reads as no value at all (a leading % is a directive, # a comment):
    // said as such, not as "got nothing".
    const std::size_t first = text.find_first_not_of(" \t");
    if (out.IsNull() && first != std::string::npos && !Context::for_set(state, value_column).explicit_null(out) &&
        text.find_first_not_of(" \t~") != std::string::npos) {
      const char c = text[first];
      state.diagnostics.add(Location{"<command line>", state.set_line, value_column + static_cast<int>(first)}, "",
                            fmt::format("the value '{}' reads as no value in YAML ('{}' starts {})", text, c,
                                        c == '#'   ? "a comment"
                                        : c == '&' ? "an anchor"
                                        : c == '!' ? "a tag"
                                        : c == '%' ? "a directive"
                                                   : "a reserved token"),
                            "quote the value in YAML, inside the shell's quotes: --set 'KEY=\"...\"'");
      return false;
    }
    return true;
  } catch (const YAML::ParserException& e) {
    state.diagnostics.add(Location{"<command line>", state.set_line, value_column + std::max(0, e.mark.column)}, "",
                          fmt::format("cannot parse the value '{}': {}", text,
                                      dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr ? yaml_error_text(e) : e.msg));
    return false;
  }
}

}  // namespace clustersim::config
