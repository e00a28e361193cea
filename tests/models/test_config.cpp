// The field-table decoder on small YAML snippets: good values land in the struct, bad ones
// produce the exact diagnostic and leave the struct unchanged.
#include <doctest/doctest.h>

#include <string>

#include "models/config/decode.hpp"
#include "models/config/diagnostics.hpp"

using namespace clustersim;
using config::field;

namespace {

enum class Shape { ring, tree };
constexpr std::array<std::pair<Shape, std::string_view>, 2> enum_names(Shape) {
  return {{{Shape::ring, "ring"}, {Shape::tree, "tree"}}};
}

struct Inner {
  sim::Bandwidth bandwidth = sim::Bandwidth::of(1e9);
  std::int64_t radix = 8;
  static auto fields() {
    return std::tuple{field("bandwidth", &Inner::bandwidth, "link speed"),
                      field("radix", &Inner::radix, "ports").at_least(2).at_most(256)};
  }
};

struct Outer {
  std::string name = "x";
  bool enabled = false;
  double ratio = 0.5;
  Shape shape = Shape::ring;
  sim::Time latency = sim::Time::from_ns(100);
  std::vector<std::int64_t> sizes;
  std::optional<sim::Bytes> limit;
  Inner inner;
  std::vector<Inner> many;
  static auto fields() {
    return std::tuple{field("name", &Outer::name, "a name").require(),
                      field("enabled", &Outer::enabled, "a flag"),
                      field("ratio", &Outer::ratio, "a number"),
                      field("shape", &Outer::shape, "an enum"),
                      field("latency", &Outer::latency, "a time"),
                      field("sizes", &Outer::sizes, "a list"),
                      field("limit", &Outer::limit, "an optional size"),
                      field("inner", &Outer::inner, "a section"),
                      field("many", &Outer::many, "a list of sections")};
  }
};

// Decodes `yaml` over `out` and returns the diagnostics, one per line.
std::string decode(const std::string& yaml, Outer& out, bool check_required = false) {
  config::LoadState state;
  config::Codec<Outer>::decode(YAML::Load(yaml), out, config::Context(state, "t.yaml"));
  if (check_required && state.diagnostics.ok()) config::check_required(out, "", state);
  return state.diagnostics.format();
}

}  // namespace

TEST_CASE("good values of every kind decode into the struct") {
  Outer o;
  const std::string errors = decode(
      "name: n\nenabled: true\nratio: 0.25\nshape: tree\nlatency: 1.5us\nsizes: [1, 2]\n"
      "limit: 80GiB\ninner: {bandwidth: 400Gbps, radix: 64}\nmany: [{radix: 4}, {}]\n",
      o);
  CHECK(errors.empty());
  CHECK(o.name == "n");
  CHECK(o.enabled);
  CHECK(o.ratio == 0.25);
  CHECK(o.shape == Shape::tree);
  CHECK(o.latency == sim::Time::from_ns(1500));
  CHECK(o.sizes == std::vector<std::int64_t>{1, 2});
  REQUIRE(o.limit.has_value());
  CHECK(o.limit->value() == 80.0 * (1 << 30));
  CHECK(o.inner.bandwidth.value() == 50e9);
  CHECK(o.inner.radix == 64);
  REQUIRE(o.many.size() == 2);
  CHECK(o.many[0].radix == 4);
  CHECK(o.many[1].radix == 8);  // default kept
}

TEST_CASE("decoding is an overlay: absent keys keep their values") {
  Outer o;
  CHECK(decode("name: a\ninner: {radix: 16}\n", o).empty());
  CHECK(decode("inner: {bandwidth: 1GB/s}\n", o).empty());
  CHECK(o.name == "a");
  CHECK(o.inner.radix == 16);
  CHECK(o.inner.bandwidth.value() == 1e9);
}

TEST_CASE("`~` or null puts a section, list or optional back to its default; nothing after the key changes nothing") {
  // The decoder tells the two apart from the text: yaml-cpp reads both as null.
  const auto decode_text = [](const std::string& yaml, Outer& out) {
    config::LoadState state;
    state.sources["t.yaml"] = yaml;
    config::Codec<Outer>::decode(YAML::Load(yaml), out, config::Context(state, "t.yaml"));
    return state.diagnostics.format();
  };
  const std::string base = "name: a\nsizes: [1, 2]\nlimit: 1GB\ninner: {radix: 16}\nmany: [{radix: 4}]\n";
  Outer o;
  REQUIRE(decode_text(base, o).empty());
  CHECK(decode_text("inner:\nsizes: [3]\n", o).empty());  // `inner:` then a key: no change
  CHECK(o.inner.radix == 16);
  CHECK(decode_text("inner:   # nothing yet\n", o).empty());
  CHECK(o.inner.radix == 16);
  CHECK(decode_text("{inner: }", o).empty());
  CHECK(o.inner.radix == 16);
  for (const char* null : {"~", "null", "Null", "NULL"}) {
    CAPTURE(null);
    Outer p;
    REQUIRE(decode_text(base, p).empty());
    CHECK(decode_text(fmt::format("inner: {}\nsizes: {}\nmany: {}  # reset\nlimit: {}\n", null, null, null, null), p)
              .empty());
    CHECK(p.inner.radix == 8);  // Inner's default
    CHECK(p.sizes.empty());
    CHECK(p.many.empty());
    CHECK_FALSE(p.limit.has_value());
    CHECK(p.name == "a");
  }
  Outer q;
  REQUIRE(decode_text(base, q).empty());
  CHECK(decode_text("{inner: ~, many: null}", q).empty());
  CHECK(q.inner.radix == 8);
  CHECK(q.many.empty());
  // A scalar cannot be reset that way: it is an error, as before, which says what ~ clears.
  CHECK(decode_text("ratio: ~\n", q) ==
        "t.yaml:1:8: ratio: expected a number, got nothing (a key without a value (or ~) clears only optional keys, "
        "sections and lists: give it a value, or leave the key out for its default)\n");
  // A key that starts like null is not one.
  CHECK(decode_text("inner: nullx\n", q) ==
        "t.yaml:1:8: inner: expected a mapping with keys bandwidth, radix, got 'nullx'\n");
}

TEST_CASE("`section: ~` in --set resets it too") {
  Outer o;
  o.inner.radix = 32;
  config::LoadState state;
  config::apply_set(o, "inner=~", state);
  CHECK(state.diagnostics.ok());
  CHECK(o.inner.radix == 8);
  o.inner.radix = 32;
  config::apply_set(o, "inner=", state);
  CHECK(state.diagnostics.ok());
  CHECK(o.inner.radix == 32);
}

TEST_CASE("each kind of bad value gives its exact diagnostic and leaves the value unchanged") {
  struct Row { const char* yaml; const char* diagnostic; };
  const Row rows[] = {
      {"enabled: yes\n", "t.yaml:1:10: enabled: expected true or false, got 'yes'\n"},
      {"ratio: half\n", "t.yaml:1:8: ratio: expected a number, got 'half'\n"},
      {"ratio: 1e400\n",
       "t.yaml:1:8: ratio: 1e400 is out of range for a number (a magnitude of at most about 1.8e308, and at "
       "least about 4.9e-324 unless 0)\n"},
      {"ratio: .inf\n", "t.yaml:1:8: ratio: expected a number, got '.inf'\n"},
      {"ratio: inf\n", "t.yaml:1:8: ratio: expected a finite number, got 'inf'\n"},
      {"shape: rign\n", "t.yaml:1:8: shape: expected one of ring, tree, got 'rign' (did you mean 'ring'?)\n"},
      {"latency: 5\n", "t.yaml:1:10: latency: '5' has no unit: expected a time such as 700ns, 1.5us, 10min or 54d\n"},
      {"sizes: 3\n", "t.yaml:1:8: sizes: expected a list of integer, got '3'\n"},
      {"inner: {radix: 1}\n", "t.yaml:1:16: inner.radix: must be at least 2, got 1\n"},
      {"inner: {radix: 1000}\n", "t.yaml:1:16: inner.radix: must be at most 256, got 1000\n"},
      {"inner: 5\n", "t.yaml:1:8: inner: expected a mapping with keys bandwidth, radix, got '5'\n"},
      {"inner: {radx: 4}\n", "t.yaml:1:9: inner.radx: unknown key; expected one of bandwidth, radix (did you mean 'radix'?)\n"},
      {"many: [{radix: x}]\n", "t.yaml:1:16: many[0].radix: expected an integer, got 'x'\n"},
      {"name: [a]\n", "t.yaml:1:7: name: expected a string, got a list\n"},
      {"ratio: 1\nratio: 2\n", "t.yaml:2:1: ratio: duplicate key 'ratio'\n"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.yaml);
    Outer o;
    const Outer before = o;
    CHECK(decode(r.yaml, o) == r.diagnostic);
    CHECK(o.enabled == before.enabled);
    CHECK(o.inner.radix == before.inner.radix);
    CHECK(o.sizes == before.sizes);
  }
}

TEST_CASE("all errors are reported, in file order") {
  Outer o;
  CHECK(decode("ratio: x\nbogus: 1\ninner: {radix: 0}\n", o) ==
        "t.yaml:1:8: ratio: expected a number, got 'x'\n"
        "t.yaml:2:1: bogus: unknown key; expected one of name, enabled, ratio, shape, latency, sizes, limit, inner, many\n"
        "t.yaml:3:16: inner.radix: must be at least 2, got 0\n");
}

TEST_CASE("a missing required key is reported at its parent mapping") {
  Outer o;
  CHECK(decode("ratio: 0.1\n", o, true) == "t.yaml:1:1: name: missing required key 'name': a name (string)\n");
}

TEST_CASE("--set decodes a value at a dotted path, with command-line columns") {
  Outer o;
  config::LoadState state;
  config::apply_set(o, "inner.radix=32", state);
  config::apply_set(o, "sizes=[4, 8]", state);
  config::apply_set(o, "limit=~", state);
  CHECK(state.diagnostics.ok());
  CHECK(o.inner.radix == 32);
  CHECK(o.sizes == std::vector<std::int64_t>{4, 8});
  CHECK_FALSE(o.limit.has_value());
  config::apply_set(o, "inner.radix=1", state);
  CHECK(state.diagnostics.format() == "<command line>:1:13: inner.radix: must be at least 2, got 1\n");
  CHECK(o.inner.radix == 32);
}

TEST_CASE("encoding writes every field with its unit, and decoding that reads it back") {
  Outer o;
  CHECK(decode("name: n\nlatency: 90s\ninner: {bandwidth: 400Gbps}\nlimit: 1.5TB\n", o).empty());
  const config::Json j = config::to_json(o);
  CHECK(j["latency"] == "1.5min");
  CHECK(j["inner"]["bandwidth"] == "50GB/s");
  CHECK(j["limit"] == "1.5TB");
  CHECK(j["shape"] == "ring");
  // Round trip through YAML text: JSON is a YAML subset.
  Outer back;
  CHECK(decode(j.dump(), back).empty());
  CHECK(config::to_json(back) == j);
}

TEST_CASE("describe lists every key with type, default and help") {
  const auto docs = config::describe<Outer>();
  REQUIRE(docs.size() == 13);  // 9 fields + inner's 2 + many[]'s 2
  CHECK(docs[0].path == "name");
  CHECK(docs[0].required);
  CHECK(docs[4].type == "time (e.g. 700ns, 1.5us, 10min, 54d)");
  CHECK(docs[4].default_value == "\"100ns\"");
  CHECK(docs[9].path == "inner.radix");
  CHECK(docs[9].type == "integer, at least 2, at most 256");
  CHECK(docs[12].path == "many[].radix");
}

TEST_CASE("--set refuses a YAML tag at the key it sets, and a value that is not UTF-8") {
  Outer o;
  config::LoadState state;
  config::apply_set(o, "inner={radix: !!str 16}", state);
  CHECK(state.diagnostics.format() ==
        "<command line>:1:15: inner.radix: the YAML tag '!!str' is not read: each key has its own type "
        "(clustersim describe) (remove the tag; quote a value to make it text)\n");
  CHECK(o.inner.radix == 8);
  config::LoadState latin1;
  config::apply_set(o, "name=caf\xe9", latin1);
  CHECK(latin1.diagnostics.format() ==
        "<command line>:1:9: the value holds a byte that is not UTF-8 (0xe9) (write the value in UTF-8 (check the "
        "terminal's encoding))\n");
  CHECK(o.name == "x");
}

TEST_CASE("first_invalid_utf8 follows RFC 3629") {
  CHECK(config::first_invalid_utf8("plain ascii") == std::string_view::npos);
  CHECK(config::first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == std::string_view::npos);  // é € 😀
  CHECK(config::first_invalid_utf8("caf\xe9") == 3);              // Latin-1
  CHECK(config::first_invalid_utf8("a\xc0\xaf") == 1);            // overlong '/'
  CHECK(config::first_invalid_utf8("a\xed\xa0\x80") == 1);        // a UTF-16 surrogate
  CHECK(config::first_invalid_utf8("\xf4\x90\x80\x80") == 0);     // past U+10FFFF
  CHECK(config::first_invalid_utf8("ab\xe2\x82") == 2);           // cut short
  CHECK(config::first_invalid_utf8("\xe2\x28\xa1") == 0);         // a bad continuation byte
}

TEST_CASE("character_column counts characters where yaml-cpp counts bytes") {
  const std::string text = "a: 1\nn\xc3\xb6" "des: 4, \xe2\x82\xac: 5\n";  // line 1: "nödes: 4, €: 5"
  CHECK(config::character_column(text, 0, 3) == 4);    // ASCII: byte + 1
  CHECK(config::character_column(text, 1, 0) == 1);
  CHECK(config::character_column(text, 1, 3) == 3);    // 'd' follows the two bytes of 'ö'
  CHECK(config::character_column(text, 1, 11) == 11);  // the three bytes of '€' start at byte 11
  CHECK(config::character_column(text, 1, 14) == 12);  // the ':' after it
  CHECK(config::character_column(text, 1, 30) == 28);  // past the line's end (17 bytes, 14 characters): a byte a column
  // A byte-order mark on the first line is no column, as for yaml-cpp.
  CHECK(config::character_column("\xef\xbb\xbf\xc3\xa9: 1", 0, 2) == 2);
  CHECK(config::character_column("", 3, 5) == 6);
}

TEST_CASE("split_set_argument: a quoted key is one segment, dots and '=' included") {
  config::LoadState state;
  std::vector<config::PathSegment> segments;
  std::string value;
  int column = 0;
  REQUIRE(config::split_set_argument("failures.components.\"nic.cx7\".rate=0.1/node-day", segments, value, column, state));
  REQUIRE(segments.size() == 4);
  CHECK(segments[2].key == "nic.cx7");
  CHECK(segments[2].column == 22);  // the name's first character, after the quote
  CHECK(segments[3].key == "rate");
  CHECK(value == "0.1/node-day");
  segments.clear();
  REQUIRE(config::split_set_argument("a.\"x=y\"=2", segments, value, column, state));
  REQUIRE(segments.size() == 2);
  CHECK(segments[1].key == "x=y");
  CHECK(value == "2");
  CHECK(column == 9);  // a."x=y"=2: the value is the 9th character
  // Unquoted, the dots split it (what the quotes are for).
  segments.clear();
  REQUIRE(config::split_set_argument("failures.components.nic.cx7.rate=1", segments, value, column, state));
  CHECK(segments.size() == 5);
  CHECK(state.diagnostics.ok());
  // Ill-formed: nothing after the closing quote but '.' or '='; an empty name.
  segments.clear();
  CHECK(!config::split_set_argument("a.\"b\"c=1", segments, value, column, state));
  CHECK(!config::split_set_argument("a.\"\".c=1", segments, value, column, state));
  CHECK(state.diagnostics.items().size() == 2);
  // A quote that does not close, said at the quote (it read "expected key.path=value"); an
  // empty index, said as one (it read "jobs[]" as an unknown key).
  segments.clear();
  CHECK(!config::split_set_argument("a.\"b.c=1", segments, value, column, state));
  REQUIRE(state.diagnostics.items().size() == 3);
  CHECK(state.diagnostics.items()[2].message.find("this double quote is not closed") != std::string::npos);
  CHECK(state.diagnostics.items()[2].where.column == 3);
  CHECK(!config::split_set_argument("jobs[].gpus=1", segments, value, column, state));
  REQUIRE(state.diagnostics.items().size() == 4);
  CHECK(state.diagnostics.items()[3].message.find("an empty index '[]'") != std::string::npos);
  CHECK(state.diagnostics.items()[3].where.column == 5);
}

TEST_CASE("an explicit '+' reads as YAML 1.2 reads it; an integer past its type is said with the key's bound") {
  Outer o;
  CHECK(decode("name: n\nratio: +0.25\ninner: {radix: +64}\n", o).empty());
  CHECK(o.ratio == 0.25);
  CHECK(o.inner.radix == 64);
  CHECK(decode("inner: {radix: 1e30}\n", o) == "t.yaml:1:16: inner.radix: must be at most 256, got 1e30\n");
  CHECK(decode("inner: {radix: -1e30}\n", o) == "t.yaml:1:16: inner.radix: must be at least 2, got -1e30\n");
  CHECK(decode("inner: {radix: +-5}\n", o) == "t.yaml:1:16: inner.radix: expected an integer, got '+-5'\n");
  CHECK(o.inner.radix == 64);
}

TEST_CASE("diagnostics are kept in file order: files as first named, each by line and column") {
  config::Diagnostics d;
  d.add({"f", 5, 1}, "a", "m");
  d.add({"f", 2, 3}, "b", "m");
  d.add({"g", 1, 1}, "c", "m");
  d.add({"f", 0, 0}, "d", "m");   // the whole file: first in it
  d.add({"f", 2, 3}, "e", "m");   // a tie keeps the order added
  d.add({"g", 1, 1}, "f", "m");
  std::string order;
  for (const config::Diagnostic& x : d.items()) order += x.path;
  CHECK(order == "dbeacf");
  CHECK(d.format().find("f:2:3: b: m\nf:2:3: e: m\n") != std::string::npos);
}
