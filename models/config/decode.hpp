// Typed configuration from YAML, through one field table per struct.
//
// A config struct is an aggregate with default member initialisers and a static
// `fields()` that lists its keys:
//
//   struct ClusterConfig {
//     std::string node = "dgx-h100";
//     std::int64_t nodes = 0;
//     static auto fields() {
//       return std::tuple{
//           field("node", &ClusterConfig::node, "node type from the catalog").require(),
//           field("nodes", &ClusterConfig::nodes, "number of nodes").require().at_least(1)};
//     }
//   };
//
// The same table decodes YAML (rejecting unknown and duplicate keys, with a near-miss
// suggestion), checks ranges, encodes the resolved value to JSON (so results carry the
// scenario exactly as it was understood), and generates `clustersim describe` and
// scenarios/REFERENCE.md. Member types are decoded by `Codec<T>` specialisations: integers,
// doubles, booleans, strings, enums (through `enum_names`), the quantities of sim/units.hpp,
// lists, string-keyed maps, optionals, `NameOr<T>` (a catalog name or an inline
// definition) and nested structs.
//
// Decoding is an overlay: keys present in the YAML replace the current values, absent keys
// keep theirs. That is how `extends:` and `--set` compose: the base file is decoded first,
// then each file that extends it, then each --set. A list or a NameOr replaces its whole
// value. Errors are collected in the LoadState, never thrown, so that one run reports all
// of them; a value with an error is left unchanged.
#pragma once

#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "models/config/diagnostics.hpp"
#include "sim/units.hpp"

namespace clustersim::config {

/// Key path `inner` names a key inside `outer` (cluster.nodes inside cluster;
/// workload.jobs[0] inside workload.jobs); a path is not inside itself.
inline bool key_inside(std::string_view outer, std::string_view inner) {
  return inner.size() > outer.size() && inner.substr(0, outer.size()) == outer &&
         (inner[outer.size()] == '.' || inner[outer.size()] == '[');
}

using Json = nlohmann::ordered_json;

/// `j` as JSON text. Bytes that are not UTF-8 in a string (a file name, a label given on the
/// command line: inputs read from files are checked) come out as U+FFFD, where dump() throws.
inline std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

/// What one load (a scenario with its extends chain and --set overrides) has learnt so far.
struct LoadState {
  Diagnostics diagnostics;
  std::map<std::string, Location> assigned;  ///< key path -> where its current value was written
  std::map<std::string, Location> mappings;  ///< path of a mapping -> where it was last written
  /// The text each file's YAML marks index (a --set value's under "<command line>"): tells an
  /// explicit `~` or `null` from a key with nothing after it, which yaml-cpp both reads as null.
  std::map<std::string, std::string> sources;
  /// Which --set is being applied, counted from 1 in the command's order: its errors are
  /// placed at "<command line>:N:C", the N-th --set at column C of its KEY=VALUE text.
  int set_line = 1;

  /// Where the value at `path` was written, else where its nearest written ancestor was.
  [[nodiscard]] Location where(const std::string& path) const;
  /// For an error about how keys go together (tp x pp x dp against gpus, a job that does
  /// not fit): the last --set that wrote one of `keys`, or when `keys` is empty one at or
  /// under `path`, the likeliest cause when there is one; else where(path).
  [[nodiscard]] Location where_overridden(const std::string& path, const std::vector<std::string>& keys = {}) const;
  /// Forgets every assignment strictly below `path` (its value is being replaced whole).
  void forget_below(const std::string& path);
};

/// Decoding position: the file (or --set argument) being read and the key path.
class Context {
 public:
  /// Decoding a YAML file.
  Context(LoadState& state, std::string file) : state_(&state), file_(std::move(file)) {}
  /// Decoding the value of a `--set path=value` argument: positions are columns in `arg`,
  /// the value starting at `value_column` (1-based).
  static Context for_set(LoadState& state, int value_column);

  [[nodiscard]] Context child(std::string_view key) const;
  [[nodiscard]] Context element(std::size_t index) const;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] LoadState& state() const { return *state_; }

  [[nodiscard]] Location locate(const YAML::Node& node) const;
  /// Whether `node` is a null written as `~` or `null` (not a key with nothing after it);
  /// any null when the state holds no text for this file.
  [[nodiscard]] bool explicit_null(const YAML::Node& node) const;
  void error(const YAML::Node& at, std::string message, std::string hint = {}) const;
  void error_at(Location at, std::string message, std::string hint = {}) const;
  void mark_assigned(const YAML::Node& at) const { state_->assigned[path_] = locate(at); }
  void mark_mapping(const YAML::Node& at) const { state_->mappings[path_] = locate(at); }

 private:
  LoadState* state_;
  std::string file_;
  std::string path_;
  int set_value_column_ = 0;  // > 0 when decoding a --set value
};

/// "a mapping", "a list", "'abc'" or "nothing": how a node reads in a message.
std::string describe_node(const YAML::Node& node);

/// Reports each explicit YAML tag under `node` (`!!str 16`, `!!float 3`, `!custom x`) at its
/// key: every key is read as its own type (clustersim describe), so a tag could only be
/// ignored. Returns whether there was none.
bool reject_tags(const YAML::Node& node, const Context& ctx);

/// Errors (into state) for each quoted scalar of `node` that runs past its line where YAML
/// would not let it: a continuation line not indented deeper than the line it started on,
/// or no closing quote before the end of `text` (which yaml-cpp reads, swallowing the rest
/// of a file into the string). `text` is what was parsed, `file` names it. False if any.
bool reject_runaway_quotes(const YAML::Node& node, const std::string& text, const std::string& file, LoadState& state);

/// The most nodes a YAML text may expand to through its aliases (a scenario holds hundreds).
inline constexpr std::uint64_t kMaxExpandedNodes = 1'000'000;

/// Reads `text`'s YAML events, before it is loaded as a tree, for what its aliases would make
/// of the tree: an alias inside the node its anchor names (`a: &x [*x]`, a tree that holds
/// itself, which every walk over it would follow forever) and aliases whose nesting
/// multiplies the document past kMaxExpandedNodes (ten lists of ten aliases to the list
/// before are 10^10 nodes). Each is reported at the alias, `file` and `value_column` (> 0 for
/// a --set value on the command line, whose line is LoadState::set_line) placing it. Returns whether there was
/// none. A syntax error is left to the loader, which says it with its position.
bool check_aliases(const std::string& text, const std::string& file, LoadState& state, int value_column = 0);

/// The message for a YAML text that yaml-cpp refused: "YAML syntax error: ..." with its
/// own words, except for nesting past its depth limit, which it calls a "bad file".
std::string yaml_error_text(const YAML::Exception& e);

// ---------------------------------------------------------------------------------------
// Codecs: decode (false and a diagnostic on error), encode to JSON, and describe the type.

template <class T, class = void>
struct Codec;

template <class T>
concept HasFields = requires { T::fields(); };

/// A name from a catalog, or an inline definition of the same kind of thing.
template <class T>
struct NameOr {
  std::string name;
  std::optional<T> inline_def;
  friend bool operator==(const NameOr&, const NameOr&) = default;
};

/// Enums provide, found by argument-dependent lookup:
///   constexpr std::array<std::pair<E, std::string_view>, N> enum_names(E);
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) { enum_names(e); };

template <class E>
  requires NamedEnum<E>
std::string_view enum_name(E value) {
  for (const auto& [v, name] : enum_names(E{})) {
    if (v == value) return name;
  }
  return "?";
}

bool decode_scalar_text(const YAML::Node& node, std::string& out, const Context& ctx, std::string_view expected);
/// False, with an error at `node`, when `text` holds a control character other than a tab or
/// a newline, C0 or C1 (a "\a" escape wrote a bell into a description, and the reports
/// printed it).
bool printable_text(const YAML::Node& node, std::string_view text, const Context& ctx);

template <>
struct Codec<std::string> {
  static bool decode(const YAML::Node& n, std::string& out, const Context& ctx) {
    return decode_scalar_text(n, out, ctx, "a string") && printable_text(n, out, ctx);
  }
  static Json encode(const std::string& v) { return v; }
  static std::string type_name() { return "string"; }
  static std::string text(const std::string& v) { return v; }
};

bool decode_integer(const YAML::Node& n, std::int64_t& out, const Context& ctx);
bool decode_unsigned(const YAML::Node& n, std::uint64_t& out, const Context& ctx);
bool decode_double(const YAML::Node& n, double& out, const Context& ctx);
bool decode_bool(const YAML::Node& n, bool& out, const Context& ctx);

template <>
struct Codec<std::int64_t> {
  static bool decode(const YAML::Node& n, std::int64_t& out, const Context& ctx) { return decode_integer(n, out, ctx); }
  static Json encode(std::int64_t v) { return v; }
  static std::string type_name() { return "integer"; }
  static std::string text(std::int64_t v) { return fmt::format("{}", v); }
};

template <>
struct Codec<std::uint64_t> {
  static bool decode(const YAML::Node& n, std::uint64_t& out, const Context& ctx) { return decode_unsigned(n, out, ctx); }
  static Json encode(std::uint64_t v) { return v; }
  static std::string type_name() { return "unsigned integer"; }
  static std::string text(std::uint64_t v) { return fmt::format("{}", v); }
};

template <>
struct Codec<double> {
  static bool decode(const YAML::Node& n, double& out, const Context& ctx) { return decode_double(n, out, ctx); }
  static Json encode(double v) { return v; }
  static std::string type_name() { return "number"; }
  static std::string text(double v) { return fmt::format("{}", v); }
};

template <>
struct Codec<bool> {
  static bool decode(const YAML::Node& n, bool& out, const Context& ctx) { return decode_bool(n, out, ctx); }
  static Json encode(bool v) { return v; }
  static std::string type_name() { return "boolean (true or false)"; }
  static std::string text(bool v) { return v ? "true" : "false"; }
};

/// Quantities with units, parsed and printed by sim/units.
template <class Q, sim::Parsed<Q> (*Parse)(std::string_view), std::string (*Format)(Q)>
struct QuantityCodec {
  static bool decode(const YAML::Node& n, Q& out, const Context& ctx) {
    std::string text;
    if (!decode_scalar_text(n, text, ctx, "a value with a unit")) return false;
    sim::Parsed<Q> parsed = Parse(text);
    if (!parsed) {
      ctx.error(n, parsed.error);
      return false;
    }
    out = *parsed.value;
    return true;
  }
  static Json encode(Q v) { return Format(v); }
  static std::string text(Q v) { return Format(v); }
};

template <>
struct Codec<sim::Time> : QuantityCodec<sim::Time, sim::parse_time, sim::format_time> {
  static std::string type_name() { return "time (e.g. 700ns, 1.5us, 10min, 54d)"; }
};
template <>
struct Codec<sim::Bytes> : QuantityCodec<sim::Bytes, sim::parse_bytes, sim::format_bytes> {
  static std::string type_name() { return "size (e.g. 80GiB, 1.5TB)"; }
};
template <>
struct Codec<sim::Bandwidth> : QuantityCodec<sim::Bandwidth, sim::parse_bandwidth, sim::format_bandwidth> {
  static std::string type_name() { return "bandwidth (e.g. 400Gbps, 50GB/s)"; }
};
template <>
struct Codec<sim::FlopRate> : QuantityCodec<sim::FlopRate, sim::parse_flop_rate, sim::format_flop_rate> {
  static std::string type_name() { return "FLOP rate (e.g. 989TFLOPS)"; }
};
template <>
struct Codec<sim::Power> : QuantityCodec<sim::Power, sim::parse_power, sim::format_power> {
  static std::string type_name() { return "power (e.g. 700W, 10.2kW)"; }
};
template <>
struct Codec<sim::Money> : QuantityCodec<sim::Money, sim::parse_money, sim::format_money> {
  static std::string type_name() { return "money (e.g. 30000USD, 1.5MUSD)"; }
};
template <>
struct Codec<sim::Count> : QuantityCodec<sim::Count, sim::parse_count, sim::format_count> {
  static std::string type_name() { return "count (e.g. 2048, 15.6T)"; }
};
template <>
struct Codec<sim::EnergyPrice> : QuantityCodec<sim::EnergyPrice, sim::parse_energy_price, sim::format_energy_price> {
  static std::string type_name() { return "energy price (e.g. 0.08USD/kWh, 80USD/MWh)"; }
};

template <class E>
struct Codec<E, std::enable_if_t<NamedEnum<E>>> {
  static std::vector<std::string_view> names() {
    std::vector<std::string_view> out;
    for (const auto& entry : enum_names(E{})) out.push_back(entry.second);
    return out;
  }
  static bool decode(const YAML::Node& n, E& out, const Context& ctx) {
    std::string text;
    if (!decode_scalar_text(n, text, ctx, "a name")) return false;
    for (const auto& [value, name] : enum_names(E{})) {
      if (name == text) {
        out = value;
        return true;
      }
    }
    const auto near = sim::closest_match(text, names());
    ctx.error(n, fmt::format("expected one of {}, got '{}'", fmt::join(names(), ", "), text),
              near ? fmt::format("did you mean '{}'?", *near) : std::string());
    return false;
  }
  static Json encode(E v) { return std::string(enum_name(v)); }
  static std::string type_name() { return fmt::format("one of {}", fmt::join(names(), ", ")); }
  static std::string text(E v) { return std::string(enum_name(v)); }
};

template <class T>
struct Codec<std::vector<T>> {
  static bool decode(const YAML::Node& n, std::vector<T>& out, const Context& ctx) {
    if (ctx.explicit_null(n)) {  // `list: ~` empties it
      ctx.state().forget_below(ctx.path());
      out.clear();
      return true;
    }
    if (!n.IsSequence()) {
      ctx.error(n, fmt::format("expected a list of {}, got {}", Codec<T>::type_name(), describe_node(n)));
      return false;
    }
    ctx.state().forget_below(ctx.path());
    std::vector<T> items(n.size());
    bool ok = true;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const Context at = ctx.element(i);
      if (Codec<T>::decode(n[i], items[i], at)) {
        at.mark_assigned(n[i]);
      } else {
        ok = false;
      }
    }
    // Kept even when an element failed: the checks that follow decoding see the other
    // elements, so that their errors come in the same pass (a load with errors stops before
    // using the values).
    out = std::move(items);
    return ok;
  }
  static Json encode(const std::vector<T>& v) {
    Json j = Json::array();
    for (const T& x : v) j.push_back(Codec<T>::encode(x));
    return j;
  }
  static std::string type_name() { return fmt::format("list of {}", Codec<T>::type_name()); }
};

/// Whether key node `key`, equal to an earlier key of its mapping, is a duplicate: reported at
/// it; one written again through an alias of the first (&k nodes: 16, then *k: 32) is the
/// same node, whose place is the first's: said so, as the alias has none of its own.
inline bool duplicate_key(const std::vector<std::pair<std::string, YAML::Node>>& seen, const std::string& key,
                          const YAML::Node& node, const Context& at) {
  const auto first = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
  if (first == seen.end()) return false;
  at.error(node, fmt::format("duplicate key '{}'{}", key,
                             first->second.is(node) ? ", written again later in this mapping through an alias of this one"
                                                    : ""));
  return true;
}

/// Walks the entries of mapping `n` in file order (the caller has checked it is one): marks
/// it, decodes each key as text (`what` names it in errors), reports a repeated key, and calls
/// `each(key, value, context of the key)` for the others, which returns whether the value
/// decoded. Returns whether every entry did.
template <class F>
bool decode_entries(const YAML::Node& n, const Context& ctx, std::string_view what, F&& each) {
  ctx.mark_mapping(n);
  bool ok = true;
  std::vector<std::pair<std::string, YAML::Node>> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key;
    if (!decode_scalar_text(it->first, key, ctx, what) || !printable_text(it->first, key, ctx)) {
      ok = false;
      continue;
    }
    const Context at = ctx.child(key);
    if (key == "<<" && it->first.Tag() != "!") {  // a plain '<<': YAML 1.1's merge key, not a name
      at.error(it->first, "a YAML merge key ('<<') is not read here, where each key is a name",
               "write the entries out, or put the shared ones in a scenario this one extends (extends:); "
               "quote it (\"<<\") if it is a name");
      ok = false;
      continue;
    }
    if (duplicate_key(seen, key, it->first, at)) {
      ok = false;
      continue;
    }
    seen.emplace_back(key, it->first);
    ok = each(key, YAML::Node(it->second), at) && ok;
  }
  return ok;
}

template <class T>
struct Codec<std::map<std::string, T>> {
  static bool decode(const YAML::Node& n, std::map<std::string, T>& out, const Context& ctx) {
    if (n.IsNull()) {  // `names: ~` empties the mapping; `names:` with nothing under it changes nothing
      if (ctx.explicit_null(n)) {
        ctx.state().forget_below(ctx.path());
        out.clear();
      }
      return true;
    }
    if (!n.IsMap()) {
      ctx.error(n, fmt::format("expected a mapping of names to {}, got {}", Codec<T>::type_name(), describe_node(n)));
      return false;
    }
    return decode_entries(n, ctx, "a name", [&](const std::string& key, const YAML::Node& node, const Context& at) {
      // `name: ~` removes the entry (a file that extends another drops one of its base's
      // failure components); it read as an entry back at its defaults, often invalid.
      if (node.IsNull() && at.explicit_null(node)) {
        at.state().forget_below(at.path());
        out.erase(key);
        return true;
      }
      T value = out.count(key) ? out[key] : T{};
      if (!Codec<T>::decode(node, value, at)) return false;
      out[key] = std::move(value);
      at.mark_assigned(node);
      return true;
    });
  }
  static Json encode(const std::map<std::string, T>& v) {
    Json j = Json::object();
    for (const auto& [k, x] : v) j[k] = Codec<T>::encode(x);
    return j;
  }
  static std::string type_name() { return fmt::format("mapping of names to {}", Codec<T>::type_name()); }
};

template <class T>
struct Codec<std::optional<T>> {
  static bool decode(const YAML::Node& n, std::optional<T>& out, const Context& ctx) {
    // `key: ~` removes it; `section:` with nothing under it changes nothing (it removed the
    // section). A value with nothing after it is an error, as a required one's.
    if (n.IsNull()) {
      if (ctx.explicit_null(n)) {
        ctx.state().forget_below(ctx.path());
        out.reset();
        return true;
      }
      if constexpr (HasFields<T>) return true;
      if constexpr (requires { typename T::mapped_type; }) return true;
    }
    T value = out.value_or(T{});
    const bool ok = Codec<T>::decode(n, value, ctx);
    // A section keeps what did decode, as decode_field() does.
    if (ok || HasFields<T>) out = std::move(value);
    return ok;
  }
  static Json encode(const std::optional<T>& v) { return v ? Codec<T>::encode(*v) : Json(nullptr); }
  static std::string type_name() { return Codec<T>::type_name() + " (optional)"; }
};

template <class T>
struct Codec<NameOr<T>> {
  static bool decode(const YAML::Node& n, NameOr<T>& out, const Context& ctx) {
    if (n.IsMap()) {
      ctx.state().forget_below(ctx.path());
      T def{};
      if (!Codec<T>::decode(n, def, ctx)) return false;
      out = NameOr<T>{{}, std::move(def)};
      return true;
    }
    std::string name;
    if (!decode_scalar_text(n, name, ctx, "a catalog name or an inline mapping") || !printable_text(n, name, ctx)) {
      return false;
    }
    ctx.state().forget_below(ctx.path());
    out = NameOr<T>{std::move(name), std::nullopt};
    return true;
  }
  static Json encode(const NameOr<T>& v) { return v.inline_def ? Codec<T>::encode(*v.inline_def) : Json(v.name); }
  static std::string type_name() { return "catalog name, or an inline mapping"; }
};

// ---------------------------------------------------------------------------------------
// Field tables.

/// Types whose fields can carry a range: ordered, with a text form for messages.
template <class M>
concept Bounded = std::totally_ordered<M> && requires(const M& m) { Codec<M>::text(m); };

/// An optional whose value type carries a range: the range applies to the value when set.
template <class M>
concept BoundedOptional = requires { typename M::value_type; } &&
                          std::is_same_v<M, std::optional<typename M::value_type>> && Bounded<typename M::value_type>;

template <class S, class M>
struct Field {
  using Struct = S;
  using Member = M;

  std::string_view key;
  M S::*member;
  std::string_view help;
  bool required = false;
  std::optional<M> min;
  std::optional<M> max;
  bool positive = false;  // above its zero value M{} (a bound at_least cannot say)

  Field require() && { required = true; return std::move(*this); }
  Field at_least(M v) && { min = std::move(v); return std::move(*this); }
  Field at_most(M v) && { max = std::move(v); return std::move(*this); }
  Field above_zero() && { positive = true; return std::move(*this); }
};

template <class S, class M>
Field<S, M> field(std::string_view key, M S::*member, std::string_view help) {
  return Field<S, M>{key, member, help, false, std::nullopt, std::nullopt, false};
}

template <class Tuple, class F>
void for_each_field(Tuple&& fields, F&& f) {
  std::apply([&](auto&... each) { (f(each), ...); }, fields);
}

template <HasFields S>
std::vector<std::string_view> field_keys() {
  std::vector<std::string_view> keys;
  for_each_field(S::fields(), [&](const auto& f) { keys.push_back(f.key); });
  return keys;
}

/// +1 when `n` is a plain number (digits, a sign, a fraction, an exponent) above `most`, -1
/// below `least`, else 0: an integer key past its type, said with the key's own bounds.
int past_integer_range(const YAML::Node& n, double least, double most);

/// Decodes `value` into `out.*f.member` at `ctx`, checking its range; records the
/// assignment. Returns false on error, leaving a scalar member unchanged; a section or a list
/// keeps what did decode (not marked assigned), so that the checks after decoding (required
/// keys, a cases file's metrics) see the rest of it and say their errors in the same pass.
template <class S, class M>
bool decode_field(const Field<S, M>& f, const YAML::Node& value, S& out, const Context& ctx) {
  M decoded = out.*(f.member);
  if constexpr (Bounded<M> && std::is_integral_v<M>) {
    // Past what the type holds (1e30 for a seed of at most 1e15): the key's bound, not the
    // type's ("out of range for an integer" named neither).
    if (f.min || f.max) {
      const int past = past_integer_range(value, static_cast<double>(std::numeric_limits<M>::lowest()),
                                          static_cast<double>(std::numeric_limits<M>::max()));
      if (past > 0 && f.max) {
        ctx.error(value, fmt::format("must be at most {}, got {}", Codec<M>::text(*f.max), value.Scalar()));
        return false;
      }
      if (past < 0 && f.min) {
        ctx.error(value, fmt::format("must be at least {}, got {}", Codec<M>::text(*f.min), value.Scalar()));
        return false;
      }
    }
  }
  if (!Codec<M>::decode(value, decoded, ctx)) {
    if constexpr (!Bounded<M> && !BoundedOptional<M>) out.*(f.member) = std::move(decoded);
    return false;
  }
  if constexpr (Bounded<M>) {
    if (f.positive && !(M{} < decoded)) {
      ctx.error(value, fmt::format("must be positive, got {}", Codec<M>::text(decoded)));
      return false;
    }
    if (f.min && decoded < *f.min) {
      ctx.error(value, fmt::format("must be at least {}, got {}", Codec<M>::text(*f.min), Codec<M>::text(decoded)));
      return false;
    }
    if (f.max && *f.max < decoded) {
      ctx.error(value, fmt::format("must be at most {}, got {}", Codec<M>::text(*f.max), Codec<M>::text(decoded)));
      return false;
    }
  } else if constexpr (BoundedOptional<M>) {
    using V = typename M::value_type;
    if (decoded && f.min && *f.min && *decoded < **f.min) {
      ctx.error(value, fmt::format("must be at least {}, got {}", Codec<V>::text(**f.min), Codec<V>::text(*decoded)));
      return false;
    }
    if (decoded && f.max && *f.max && **f.max < *decoded) {
      ctx.error(value, fmt::format("must be at most {}, got {}", Codec<V>::text(**f.max), Codec<V>::text(*decoded)));
      return false;
    }
  }
  out.*(f.member) = std::move(decoded);
  ctx.mark_assigned(value);
  return true;
}

void report_unknown_key(const YAML::Node& key_node, const std::string& key, const Context& parent,
                        const std::vector<std::string_view>& keys);

template <class S>
struct Codec<S, std::enable_if_t<HasFields<S>>> {
  static bool decode(const YAML::Node& n, S& out, const Context& ctx) {
    // `section: ~` puts it back to its defaults (its required keys must then be written
    // again); `section:` with nothing under it changes nothing.
    if (n.IsNull()) {
      if (ctx.explicit_null(n)) {
        ctx.state().forget_below(ctx.path());
        out = S{};
      }
      return true;
    }
    if (!n.IsMap()) {
      ctx.error(n, fmt::format("expected a mapping with keys {}, got {}", fmt::join(field_keys<S>(), ", "),
                               describe_node(n)));
      return false;
    }
    ctx.mark_mapping(n);
    const auto fields = S::fields();
    bool ok = true;
    std::vector<std::pair<std::string, YAML::Node>> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string key;
      if (!decode_scalar_text(it->first, key, ctx, "a key") || !printable_text(it->first, key, ctx)) {
        ok = false;
        continue;
      }
      if (duplicate_key(seen, key, it->first, ctx.child(key))) {
        ok = false;
        continue;
      }
      seen.emplace_back(key, it->first);
      bool known = false;
      for_each_field(fields, [&](const auto& f) {
        if (f.key != key) return;
        known = true;
        ok = decode_field(f, it->second, out, ctx.child(key)) && ok;
      });
      if (!known) {
        report_unknown_key(it->first, key, ctx, field_keys<S>());
        ok = false;
      }
    }
    return ok;
  }
  static Json encode(const S& v) {
    Json j = Json::object();
    for_each_field(S::fields(), [&](const auto& f) {
      using M = typename std::decay_t<decltype(f)>::Member;
      j[std::string(f.key)] = Codec<M>::encode(v.*(f.member));
    });
    return j;
  }
  static std::string type_name() { return "mapping"; }
};

/// Encodes any value with a codec to JSON.
template <class T>
Json to_json(const T& v) {
  return Codec<T>::encode(v);
}

// ---------------------------------------------------------------------------------------
// Required keys: checked once all layers are decoded.

template <class T>
void check_required(const T& value, const std::string& path, LoadState& state);

template <HasFields S>
void check_required_fields(const S& s, const std::string& path, LoadState& state) {
  for_each_field(S::fields(), [&](const auto& f) {
    const std::string child = path.empty() ? std::string(f.key) : path + "." + std::string(f.key);
    if (f.required && !state.assigned.count(child)) {
      state.diagnostics.add(state.where(path), child,
                            fmt::format("missing required key '{}': {} ({})", f.key, f.help,
                                        Codec<typename std::decay_t<decltype(f)>::Member>::type_name()));
      return;
    }
    check_required(s.*(f.member), child, state);
  });
}

template <class T>
void check_required(const T& value, const std::string& path, LoadState& state) {
  if constexpr (HasFields<T>) {
    check_required_fields(value, path, state);
  } else if constexpr (requires { value.inline_def; }) {
    if (value.inline_def) check_required(*value.inline_def, path, state);
  } else if constexpr (requires { value.has_value(); *value; }) {
    if (value) check_required(*value, path, state);
  } else if constexpr (requires { value.begin()->second; }) {
    for (const auto& [k, v] : value) check_required(v, path + "." + k, state);
  } else if constexpr (requires { value.begin(); value.size(); } && !std::is_same_v<T, std::string>) {
    std::size_t i = 0;
    for (const auto& v : value) check_required(v, fmt::format("{}[{}]", path, i++), state);
  }
}

// ---------------------------------------------------------------------------------------
// `--set a.b.c=value`: decodes `value` into the field at a dotted path.

/// One key of a --set path, with its 1-based column in the argument.
struct PathSegment {
  std::string key;
  int column = 0;
};

/// Splits "a.b.c=value" into segments and the value's text and column; a key between double
/// quotes is one segment whatever it holds ("a.\"b.c\".d=1": a, b.c, d). False (and a
/// diagnostic) when the argument has no '=', an empty key or an ill-formed quoted one.
/// Where the value of a --set starts: one past its first '=' outside double quotes (a
/// quoted key may hold '='); npos when there is none.
std::size_t set_value_start(std::string_view set);
bool split_set_argument(const std::string& arg, std::vector<PathSegment>& segments, std::string& value,
                        int& value_column, LoadState& state);
/// Parses the value of a --set as YAML (so `--set a={x: 1}` and lists work).
bool parse_set_value(const std::string& text, int value_column, YAML::Node& out, LoadState& state);

template <class T>
bool set_at_path(T& target, const std::vector<PathSegment>& segments, std::size_t next, const YAML::Node& value,
                 const Context& ctx) {
  if (next == segments.size()) {
    if (!reject_tags(value, ctx) || !Codec<T>::decode(value, target, ctx)) return false;
    ctx.mark_assigned(value);
    return true;
  }
  const PathSegment& seg = segments[next];
  const Location at{"<command line>", ctx.state().set_line, seg.column};
  if constexpr (HasFields<T>) {
    bool known = false;
    bool ok = false;
    for_each_field(T::fields(), [&](const auto& f) {
      if (f.key != seg.key) return;
      known = true;
      using M = typename std::decay_t<decltype(f)>::Member;
      const Context child = ctx.child(seg.key);
      if (next + 1 == segments.size()) {
        ok = reject_tags(value, child) && decode_field(f, value, target, child);
      } else {
        ok = set_at_path<M>(target.*(f.member), segments, next + 1, value, child);
      }
    });
    if (!known) {
      const auto near = sim::closest_match(seg.key, field_keys<T>());
      ctx.child(seg.key).error_at(at, fmt::format("unknown key; expected one of {}", fmt::join(field_keys<T>(), ", ")),
                                  near ? fmt::format("did you mean '{}'?", *near) : std::string());
    }
    return ok;
  } else if constexpr (requires { typename T::mapped_type; typename T::key_type; }) {
    // `--set section.map.NAME=~` removes the entry, as `NAME: ~` in a file does.
    if (next + 1 == segments.size() && value.IsNull() && ctx.child(seg.key).explicit_null(value)) {
      ctx.state().forget_below(ctx.child(seg.key).path());
      target.erase(seg.key);
      return true;
    }
    return set_at_path(target[seg.key], segments, next + 1, value, ctx.child(seg.key));
  } else if constexpr (requires { target.has_value(); target.emplace(); }) {
    // An optional section that the scenario does not have yet starts from its defaults.
    if (!target.has_value()) target.emplace();
    return set_at_path(*target, segments, next, value, ctx);
  } else if constexpr (requires { target.inline_def; }) {
    if (!target.inline_def) {
      ctx.error_at(at, fmt::format("is the catalog name '{}', which has no keys to set; set the whole value instead",
                                   target.name));
      return false;
    }
    return set_at_path(*target.inline_def, segments, next, value, ctx);
  } else if constexpr (requires { target.size(); target[0]; typename T::value_type; } &&
                       !std::is_same_v<T, std::string>) {
    // A list element by index: "workload.jobs[0].parallelism.tp=4".
    std::size_t index = 0;
    const bool is_index = seg.key.size() > 2 && seg.key.front() == '[' && seg.key.back() == ']' &&
                          seg.key.find_first_not_of("0123456789", 1) == seg.key.size() - 1;
    const std::string_view digits = is_index ? std::string_view(seg.key).substr(1, seg.key.size() - 2) : "";
    // An index too large for size_t is past the end like any other: no exception.
    const bool in_range =
        is_index && std::from_chars(digits.data(), digits.data() + digits.size(), index).ec == std::errc();
    if (!is_index || !in_range || index >= target.size()) {
      ctx.error_at(at, is_index ? fmt::format("has {} entr{}; there is no index {}", target.size(), target.size() == 1 ? "y" : "ies", digits)
                                : fmt::format("is a list; expected an index such as [0], got '{}'", seg.key));
      return false;
    }
    return set_at_path(target[index], segments, next + 1, value, ctx.element(index));
  } else {
    ctx.error_at(at, fmt::format("has no key '{}': it holds a value of type {}", seg.key, Codec<T>::type_name()));
    return false;
  }
}

/// Applies the override `arg` ("a.b.c=value") to `root`. Errors go to `state`.
template <HasFields S>
void apply_set(S& root, const std::string& arg, LoadState& state) {
  std::vector<PathSegment> segments;
  std::string text;
  int value_column = 0;
  if (!split_set_argument(arg, segments, text, value_column, state)) return;
  YAML::Node value;
  if (!parse_set_value(text, value_column, value, state)) return;
  set_at_path(root, segments, 0, value, Context::for_set(state, value_column));
}

// ---------------------------------------------------------------------------------------
// Reference documentation from the field tables.

struct FieldDoc {
  std::string path;  ///< "cluster.nodes", "workload.jobs[].name", "catalog.gpus.<name>.tdp"
  std::string type;
  std::string default_value;  ///< JSON text of the default; empty for sections
  bool required = false;
  bool section = false;
  std::string help;
  std::string default_note = {};  ///< where the default differs by case ("per GPU type in ..."); often empty
};

template <class T>
void describe_type(const std::string& path, std::vector<FieldDoc>& out);

template <HasFields S>
std::vector<FieldDoc> describe() {
  std::vector<FieldDoc> out;
  describe_type<S>("", out);
  return out;
}

template <class T>
void describe_type(const std::string& path, std::vector<FieldDoc>& out) {
  if constexpr (HasFields<T>) {
    const T defaults{};
    for_each_field(T::fields(), [&](const auto& f) {
      using M = typename std::decay_t<decltype(f)>::Member;
      const std::string child = path.empty() ? std::string(f.key) : path + "." + std::string(f.key);
      FieldDoc doc{child, Codec<M>::type_name(), {}, f.required, false, std::string(f.help)};
      if constexpr (HasFields<M>) {
        doc.section = true;
      } else {
        doc.default_value = Codec<M>::encode(defaults.*(f.member)).dump();
        if constexpr (Bounded<M>) {
          if (f.positive) doc.type += ", positive";
          if (f.min) doc.type += fmt::format(", at least {}", Codec<M>::text(*f.min));
          if (f.max) doc.type += fmt::format(", at most {}", Codec<M>::text(*f.max));
        } else if constexpr (BoundedOptional<M>) {
          using V = typename M::value_type;
          if (f.min && *f.min) doc.type += fmt::format(", at least {}", Codec<V>::text(**f.min));
          if (f.max && *f.max) doc.type += fmt::format(", at most {}", Codec<V>::text(**f.max));
        }
      }
      out.push_back(std::move(doc));
      describe_type<M>(child, out);
    });
  } else if constexpr (requires { std::declval<T>().inline_def; }) {
    describe_type<typename decltype(std::declval<T>().inline_def)::value_type>(path, out);
  } else if constexpr (requires { typename T::mapped_type; typename T::key_type; }) {
    describe_type<typename T::mapped_type>(path + ".<name>", out);
  } else if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
    if constexpr (!std::is_same_v<T, std::optional<typename T::value_type>>) {
      describe_type<typename T::value_type>(path + "[]", out);
    } else {
      describe_type<typename T::value_type>(path, out);
    }
  }
}

}  // namespace clustersim::config
