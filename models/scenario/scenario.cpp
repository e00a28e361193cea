#include "models/scenario/scenario.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/cost/cost.hpp"
#include "models/workload/costs.hpp"
#include "models/reliability/longrun.hpp"
#include "models/workload/step.hpp"

namespace clustersim::scenario {
namespace {

namespace fs = std::filesystem;
using config::Context;
using config::Diagnostics;
using config::InputError;
using config::Location;
using config::LoadState;

constexpr std::string_view kBuiltinPrefix = "<built-in>/";

/// One YAML document and the name its positions are reported under. Copy-construct only:
/// never assign (YAML::Node's assignment writes through to the node it refers to).
struct Document {
  std::string file;  ///< as printed in diagnostics
  fs::path dir;      ///< where its relative paths point
  YAML::Node root;
  bool builtin = false;  ///< compiled in: relative paths resolve to built-ins only
  std::string text;      ///< what yaml-cpp parsed (its marks index it)
};

bool read_text(const std::string& path, std::string& out, std::string& why) {
  return config::read_input_file(path, out, why);
}

/// The fix of a job larger than its cluster, naming where the node count was written (it may
/// be another file than the job's: an extending scenario, or --set), if it was written.
std::string nodes_hint(const LoadState& state, std::int64_t needed) {
  std::string where;
  if (const auto it = state.assigned.find("cluster.nodes"); it != state.assigned.end()) {
    const Location& at = it->second;
    if (at.file == "<command line>") {
      where = ", set by --set or a sweep point";
    } else if (at.line > 0) {
      where = fmt::format(", written at {}:{}:{}", at.file, at.line, at.column);
    }
  }
  return fmt::format("cluster.nodes: {} at least{}; or fewer GPUs for the job", needed, where);
}

/// The innermost '{' (or '[') still open at the end of line `last_line` (0-based) of `text`,
/// outside quotes and comments: where a flow that yaml-cpp finds unclosed was opened (it
/// reports where it gave up, often the next line). Its 0-based line and byte column, or
/// nullopt.
std::optional<std::pair<std::size_t, std::size_t>> unclosed_flow(const std::string& text, char open,
                                                                 std::size_t last_line) {
  struct Opened {
    char c;
    std::size_t line, column;
  };
  std::vector<Opened> stack;
  std::size_t line = 0;
  std::size_t start = 0;  // of the line
  char quote = 0;
  char last = 0;  // the line's last character but spaces (0: none yet)
  for (std::size_t i = 0; i < text.size() && line <= last_line; ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      start = i + 1;
      last = 0;
      if (quote == '\'') quote = 0;  // a plain reading: quotes do not run on past a line here
      continue;
    }
    if (quote != 0) {
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '#' && (i == start || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    // A quote opens a string only where a scalar starts (19" rack, O'Brien: characters).
    if ((c == '"' || c == '\'') && (last == 0 || std::string_view("[{,:-?").find(last) != std::string_view::npos)) {
      quote = c;
    } else if (c == '{' || c == '[') {
      stack.push_back({c, line, i - start});
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    }
    if (c != ' ' && c != '\t') last = c;
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    if (it->c == open) return std::pair{it->line, it->column};
  }
  return std::nullopt;
}

/// Quotes duration laws written as values, "replace: lognormal(4h, 1.0)", so that the comma
/// inside the parentheses does not split a flow mapping ({detect: 5min, replace: ...}) in
/// two. Line numbers are unchanged; later columns on such a line shift by two.

std::string quote_laws(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    out += text[i];
    if (text[i++] != ':') continue;
    std::size_t j = i;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
    if (j == i) continue;  // "key:value" is not a YAML mapping value
    std::size_t name_end = j;
    for (const std::string_view law : {"lognormal(", "weibull(", "exponential("}) {
      if (text.compare(j, law.size(), law) == 0) name_end = j + law.size();
    }
    if (name_end == j) continue;
    std::size_t close = name_end;
    while (close < text.size() && std::string_view("()\"'\n").find(text[close]) == std::string_view::npos) ++close;
    if (close >= text.size() || text[close] != ')') continue;
    out.append(text, i, j - i);  // the blanks after ':'
    out += '"';
    out.append(text, j, close + 1 - j);
    out += '"';
    i = close + 1;
  }
  return out;
}

std::optional<Document> parse_document(const std::string& file, fs::path dir, const std::string& text,
                                       LoadState& state) {
  try {
    std::string parsed = quote_laws(text);
    if (!config::check_aliases(parsed, file, state)) return std::nullopt;
    std::vector<YAML::Node> documents = YAML::LoadAll(parsed);
    // Empty documents (a trailing '---', or one of comments only) hold nothing to ignore.
    while (documents.size() > 1 && documents.back().IsNull()) documents.pop_back();
    if (documents.size() > 1) {
      const YAML::Mark at = documents[1].Mark();
      state.diagnostics.add(Location{file, at.line + 1, config::character_column(parsed, at.line, at.column)}, "",
                            "a second YAML document (after '---' or '...'): a scenario is one document, and "
                            "the second would be ignored",
                            "merge its keys into the first document, or put them in a file that extends this one");
      return std::nullopt;
    }
    YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
    if (!root.IsMap() && !root.IsNull()) {
      state.diagnostics.add(Location{file, 1, 1}, "",
                            fmt::format("expected a mapping of sections at the top of the file, got {}",
                                        config::describe_node(root)));
      return std::nullopt;
    }
    if (!config::reject_tags(root, Context(state, file))) return std::nullopt;
    if (!config::reject_runaway_quotes(root, parsed, file, state)) return std::nullopt;
    return Document{file, std::move(dir), root, false, std::move(parsed)};
  } catch (const YAML::Exception& e) {
    // A tab in an indentation is the usual cause of yaml-cpp's "illegal map value".
    std::string hint;
    std::size_t line = 1;
    for (std::size_t i = 0, start = 0; i <= text.size() && line <= static_cast<std::size_t>(e.mark.line) + 1; ++i) {
      if (i < text.size() && text[i] != '\n') continue;
      const std::string_view l(text.data() + start, i - start);
      const std::size_t indent = l.find_first_not_of(" \t\r");
      // A tab before a line's first character (not on a blank line, where it is harmless).
      if (indent != std::string_view::npos && l.substr(0, indent).find('\t') != std::string_view::npos) {
        hint = fmt::format("line {} is indented with a tab: YAML indents with spaces only", line);
        break;
      }
      ++line;
      start = i + 1;
    }
    // An unclosed flow: yaml-cpp gives up where it looked for the end (the next line, often).
    for (const auto& [what, open, close] : {std::tuple{"end of map flow not found", '{', '}'},
                                            std::tuple{"end of sequence flow not found", '[', ']'}}) {
      if (!hint.empty() || e.msg != what) continue;
      if (const auto at = unclosed_flow(text, open, static_cast<std::size_t>(e.mark.line))) {
        hint = fmt::format("the '{}' at line {}, column {} is not closed: end it with '{}'", open, at->first + 1,
                           config::character_column(text, static_cast<int>(at->first), static_cast<int>(at->second)),
                           close);
      }
    }
    // Else, a key indented deeper than its neighbours, or an unquoted value holding ': '.
    if (hint.empty() && e.msg == "illegal map value") {
      hint = fmt::format("check line {}'s indentation: the keys of one mapping line up; quote a value that holds ': '",
                         e.mark.line + 1);
    }
    state.diagnostics.add(Location{file, e.mark.line + 1, config::character_column(quote_laws(text), e.mark.line, e.mark.column)},
                          "", config::yaml_error_text(e), hint);
    return std::nullopt;
  }
}

std::optional<Document> read_document(const std::string& path, LoadState& state, const Location& from,
                                      const std::string& from_path) {
  std::string text;
  std::string why;
  if (!read_text(path, text, why)) {
    state.diagnostics.add(from.file.empty() ? Location{path, 0, 0} : from, from_path,
                          fmt::format("cannot read '{}': {}", path, why));
    return std::nullopt;
  }
  const fs::path parent = fs::path(path).parent_path();
  return parse_document(path, parent.empty() ? fs::path(".") : parent, text, state);
}

/// Reads `first` and the chain of files it extends; returns them base first.
std::vector<Document> read_extends_chain(Document first, LoadState& state) {
  std::vector<Document> chain{std::move(first)};
  // A file's identity is its path with links resolved: through a link to a folder above
  // (sub -> .), "sub/x.yaml" is the x.yaml that extends it, a cycle (compared by spelling,
  // the chain went 40 links deep, to the system's limit, and said the file was missing).
  const auto identity = [](const Document& d) {
    if (d.builtin) return d.file;
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(fs::path(d.file), ec);
    return ec ? d.file : real.string();
  };
  std::vector<std::string> seen{chain.back().file};
  std::vector<std::string> seen_identity{identity(chain.back())};
  for (;;) {
    const Document& doc = chain.back();
    const YAML::Node ext = doc.root.IsMap() ? doc.root["extends"] : YAML::Node();
    if (!ext || ext.IsNull()) break;
    const Context ctx = Context(state, doc.file).child("extends");
    // Not a text: the `extends` field reports it when the file is decoded (once, not twice).
    if (!ext.IsScalar()) break;
    const std::string target = ext.Scalar();
    if (target.empty()) {
      ctx.error(ext, "expected a file name, got an empty string", "extends: quickstart.yaml, or remove the key");
      break;
    }
    const fs::path candidate = doc.builtin ? fs::path() : doc.dir / target;
    std::optional<Document> base;
    std::error_code exists_error;  // a name the file system rejects (too long, ...) is not found
    if (!candidate.empty() && fs::exists(candidate, exists_error)) {
      base = read_document(candidate.lexically_normal().string(), state, ctx.locate(ext), "extends");
    } else if (std::string_view text = builtin_scenario_text(fs::path(target).filename().string());
               !text.empty() && fs::path(target).filename() == fs::path(target)) {
      const std::string name = std::string(kBuiltinPrefix) + target;
      base = parse_document(name, {}, std::string(text), state);
      if (base) base->builtin = true;
    } else {
      ctx.error(ext, fmt::format("cannot find the scenario '{}' (looked in {}, and among the built-ins: "
                                 "quickstart.yaml)",
                                 target, doc.builtin ? std::string("the built-ins only") : doc.dir.string()));
      break;
    }
    if (!base) break;
    const std::string id = identity(*base);
    if (std::find(seen_identity.begin(), seen_identity.end(), id) != seen_identity.end()) {
      ctx.error(ext, fmt::format("'{}' extends itself through a cycle: {} -> {}", target,
                                 fmt::join(seen, " -> "), base->file));
      break;
    }
    seen.push_back(base->file);
    seen_identity.push_back(id);
    chain.push_back(std::move(*base));
  }
  // Copy-constructed in reverse, not std::reverse: assigning a YAML::Node rebinds the node
  // it refers to rather than the handle, so swapping Documents would corrupt them.
  return std::vector<Document>(chain.rbegin(), chain.rend());
}

std::vector<std::string_view> names_of(const auto& map) {
  std::vector<std::string_view> names;
  for (const auto& entry : map) names.push_back(entry.first);
  return names;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string_view>& names) {
  const auto near = sim::closest_match(word, names);
  return near ? fmt::format("did you mean '{}'?", *near) : std::string();
}

/// A compiled-in document decoded once per process (its text never changes, and parsing it
/// is most of a small scenario's load time: sweeps load one scenario per point): the value
/// and the diagnostics decoding gave (none unless the build itself is broken).
template <class T>
struct Builtin {
  T value;
  config::Diagnostics diagnostics;
};

template <class T>
Builtin<T> decode_builtin(std::string_view file, std::string_view text) {
  LoadState state;
  Builtin<T> out;
  if (auto doc = parse_document(std::string(file), {}, std::string(text), state)) {
    config::Codec<T>::decode(doc->root, out.value, Context(state, doc->file));
    if (state.diagnostics.ok()) config::check_required(out.value, "", state);
  }
  out.diagnostics = std::move(state.diagnostics);
  return out;
}

void report_builtin(const config::Diagnostics& d, LoadState& scenario_state) {
  for (const auto& item : d.items()) scenario_state.diagnostics.add(item.where, item.path, item.message, item.hint);
}

/// The built-in catalog, then each of `files`; entries of later files override earlier ones.
hardware::Catalog load_catalog(const std::vector<std::string>& files, const fs::path& base_dir,
                               const Location& files_at, LoadState& scenario_state) {
  static const Builtin<hardware::Catalog> builtin =
      decode_builtin<hardware::Catalog>(hardware::kBuiltinCatalogFile, hardware::builtin_catalog_text());
  report_builtin(builtin.diagnostics, scenario_state);
  hardware::Catalog catalog = builtin.value;
  LoadState state;
  std::vector<Document> docs;
  std::map<std::string, std::size_t> listed;  // file -> its first entry
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& f = files[i];
    const fs::path p = fs::path(f).is_absolute() ? fs::path(f) : base_dir / f;
    // An entry's error at the entry (each was at the list's start).
    const std::string entry = fmt::format("catalogs[{}]", i);
    const auto at = scenario_state.assigned.find(entry);
    const Location entry_at = at != scenario_state.assigned.end() ? at->second : files_at;
    // A file listed twice was read twice, each of its errors said twice.
    const auto [first, fresh] = listed.emplace(p.lexically_normal().string(), i);
    if (!fresh) {
      state.diagnostics.add(entry_at, entry, fmt::format("lists {} again (catalogs[{}] lists it already)", f, first->second),
                            "list each catalog once");
      continue;
    }
    if (auto doc = read_document(p.lexically_normal().string(), state, entry_at, entry)) {
      docs.push_back(std::move(*doc));
    }
  }
  // Each file is decoded and checked on its own; its entries then replace same-name ones.
  for (const Document& doc : docs) {
    hardware::Catalog part;
    LoadState file_state;
    const Context file_ctx(file_state, doc.file);
    config::Codec<hardware::Catalog>::decode(doc.root, part, file_ctx);
    // `name: ~` (or `nodes: ~`) removes an entry in a scenario's mappings, but a catalog file
    // only adds and replaces: it read as nothing, and the built-in entry stayed.
    if (doc.root.IsMap()) {
      for (const char* section : {"gpus", "nodes"}) {
        const YAML::Node entries = doc.root[section];
        if (!entries) continue;  // not written
        const Context at = file_ctx.child(section);
        if (entries.IsNull() && at.explicit_null(entries)) {
          at.error(entries, "a catalog file cannot remove entries: the built-in catalog's and earlier files' stay",
                   fmt::format("leave '{}' out, or give it entries", section));
        } else if (entries.IsMap()) {
          for (auto it = entries.begin(); it != entries.end(); ++it) {
            if (!it->first.IsScalar()) continue;  // said by the decoding
            const Context entry = at.child(it->first.as<std::string>());
            if (it->second.IsNull() && entry.explicit_null(it->second)) {
              entry.error(it->second,
                          "a catalog file cannot remove an entry: the built-in catalog's or an earlier file's stays",
                          "give the entry its keys to replace it, or leave it out");
            }
          }
        }
      }
    }
    if (file_state.diagnostics.ok()) config::check_required(part, "", file_state);
    for (const auto& d : file_state.diagnostics.items()) state.diagnostics.add(d.where, d.path, d.message, d.hint);
    // Where each entry was written, for the errors found when the node is resolved (an
    // unknown GPU type was reported at the scenario's first line). A later file's entry
    // replaces an earlier one whole, its locations too.
    for (const auto& [name, gpu] : part.gpus) scenario_state.forget_below("gpus." + name);
    for (const auto& [name, node] : part.nodes) scenario_state.forget_below("nodes." + name);
    for (const auto& [path, where] : file_state.assigned) scenario_state.assigned[path] = where;
    for (const auto& [path, where] : file_state.mappings) {
      if (!path.empty()) scenario_state.mappings[path] = where;
    }
    for (auto& [name, gpu] : part.gpus) catalog.gpus[name] = std::move(gpu);
    for (auto& [name, node] : part.nodes) catalog.nodes[name] = std::move(node);
  }
  for (const auto& d : state.diagnostics.items()) scenario_state.diagnostics.add(d.where, d.path, d.message, d.hint);
  return catalog;
}

/// Keys that belong to another topology family than fabric.topology (ecmp_seed: to a fabric
/// whose routing hashes a choice, Clos or a non-minimal dragonfly): an error when they
/// were written where the topology was (the same file or the command line), and dropped
/// when they come from an earlier layer, so that a scenario can extend one with a Clos and
/// switch to a torus without undoing the Clos keys one by one.
void reconcile_fabric(Scenario& sc, LoadState& state) {
  if (!sc.fabric) return;
  fabric::FabricConfig& f = *sc.fabric;
  using fabric::Topology;
  const bool clos = f.topology == Topology::fat_tree || f.topology == Topology::rail_clos;
  const fabric::FabricConfig defaults;
  struct Key {
    const char* name;
    bool applies;
    std::function<void()> reset;
    std::string why = {};   ///< what the message says it does not apply to; default: the topology
    std::string hint = "remove it";
    std::string decided_by = "fabric.topology";  ///< the key that makes it inert
  };
  const bool dragonfly = f.topology == Topology::dragonfly;
  // The flow hash picks Clos uplinks and Valiant groups; a torus and a minimally routed
  // dragonfly have no hashed choice for a seed to change.
  const bool by_destination = clos && f.path_selection == fabric::PathSelection::destination;
  const bool hashed = (clos && !by_destination) || (dragonfly && f.routing != fabric::Routing::minimal);
  const std::vector<Key> keys = {
      {"radix", clos, [&] { f.radix = 0; }},
      {"tiers", clos, [&] { f.tiers = 0; }},
      {"oversubscription", clos, [&] { f.oversubscription = {}; }},
      {"dims", f.topology == Topology::torus, [&] { f.dims.clear(); }},
      {"routers_per_group", dragonfly, [&] { f.routers_per_group = 0; }},
      {"hosts_per_router", dragonfly, [&] { f.hosts_per_router = 0; }},
      {"global_links_per_router", dragonfly, [&] { f.global_links_per_router = 0; }},
      {"groups", dragonfly, [&] { f.groups = 0; }},
      {"routing", dragonfly, [&] { f.routing = defaults.routing; }},
      {"path_selection", clos, [&] { f.path_selection = defaults.path_selection; }},
      {"ecmp_seed", hashed, [&] { f.ecmp_seed = defaults.ecmp_seed; },
       dragonfly        ? "a dragonfly with minimal routing, which hashes no choice"
       : by_destination ? "a Clos routed by destination, which hashes no choice"
                        : std::string(),
       dragonfly        ? "remove it, or use routing: valiant or ugal"
       : by_destination ? "remove it, or use path_selection: hash"
                        : "remove it",
       by_destination && state.assigned.count("fabric.path_selection") ? "fabric.path_selection" : "fabric.topology"},
  };
  for (const Key& k : keys) {
    const std::string path = std::string("fabric.") + k.name;
    if (k.applies || !state.assigned.count(path)) continue;
    const Location at = state.where(path);
    // Written beside the key that makes it inert (or on the command line): a mistake. In a
    // file extending the one that set that key: a value for the base's design, dropped.
    if (at.file == state.where(k.decided_by).file || at.file == "<command line>") {
      const std::string what =
          k.why.empty() ? fmt::format("a {} fabric", config::enum_name(f.topology)) : k.why;
      state.diagnostics.add(at, path, fmt::format("does not apply to {}", what), k.hint);
    } else {
      k.reset();
      state.assigned.erase(path);
    }
  }
}

/// The built-in price table (errors in it are reported like any input's).
fabric::PricingTable load_pricing(LoadState& scenario_state) {
  static const Builtin<fabric::PricingTable> builtin =
      decode_builtin<fabric::PricingTable>(fabric::kBuiltinPricingFile, fabric::builtin_pricing_text());
  report_builtin(builtin.diagnostics, scenario_state);
  return builtin.value;
}

/// The catalogs of a file of the chain that the list in force replaced (a list in a file that
/// extends another replaces the other's, as every list does): said beside a type the catalog
/// lacks where one of them defines it (it read as a typo, the extended file's catalog gone
/// without a word).
struct ReplacedCatalogs {
  std::string file;                 ///< the extended file whose list was replaced; empty if none
  std::string by;                   ///< the file whose list is in force
  std::vector<fs::path> catalogs;   ///< the replaced list's files
  /// The note for a `section` ("nodes", "gpus") entry `name`, if a replaced file defines it.
  [[nodiscard]] std::string note(const char* section, const std::string& name) const {
    for (const fs::path& f : catalogs) {
      try {
        const YAML::Node root = YAML::LoadFile(f.string());
        if (root.IsMap() && root[section] && root[section].IsMap() && root[section][name]) {
          return fmt::format("{}'s catalogs, which define it, are not read: the catalogs list of {} replaces "
                             "theirs, so list them there too",
                             file, by);
        }
      } catch (const YAML::Exception&) {  // unreadable: no note (its errors are said where it is read)
      }
    }
    return {};
  }
};

ReplacedCatalogs replaced_catalogs(const std::vector<Document>& chain, const Location& catalogs_at) {
  if (std::none_of(chain.begin(), chain.end(), [&](const Document& d) { return d.file == catalogs_at.file; })) return {};
  for (const Document& doc : chain) {
    if (doc.file == catalogs_at.file || !doc.root.IsMap() || doc.builtin) continue;
    const YAML::Node listed = doc.root["catalogs"];
    if (!listed || !listed.IsSequence() || listed.size() == 0) continue;
    ReplacedCatalogs r{doc.file, catalogs_at.file, {}};
    for (const YAML::Node& entry : listed) {
      if (!entry.IsScalar()) continue;
      const fs::path f(entry.Scalar());
      r.catalogs.push_back((f.is_absolute() ? f : doc.dir / f).lexically_normal());
    }
    return r;
  }
  return {};
}

/// Looks up the node type and its GPU type in the catalog. `replaced`: replaced_catalogs().
std::optional<cluster::ResolvedNode> resolve_node(const cluster::ClusterConfig& cfg, const hardware::Catalog& catalog,
                                                  LoadState& state, const ReplacedCatalogs& replaced = {}) {
  const auto hint = [&](std::string guess, const char* section, const std::string& name) {
    const std::string note = replaced.note(section, name);
    return note.empty() ? guess : guess.empty() ? note : guess + "; " + note;
  };
  cluster::ResolvedNode node;
  if (cfg.node.inline_def) {
    node.name = "inline";
    node.spec = *cfg.node.inline_def;
  } else {
    const auto it = catalog.nodes.find(cfg.node.name);
    if (it == catalog.nodes.end()) {
      state.diagnostics.add(state.where("cluster.node"), "cluster.node",
                            fmt::format("unknown node type '{}'; the catalog has {}", cfg.node.name,
                                        fmt::join(names_of(catalog.nodes), ", ")),
                            hint(did_you_mean(cfg.node.name, names_of(catalog.nodes)), "nodes", cfg.node.name));
      return std::nullopt;
    }
    node.name = it->first;
    node.spec = it->second;
  }
  if (node.spec.gpu.inline_def) {
    node.gpu_name = "inline";
    node.gpu = *node.spec.gpu.inline_def;
  } else {
    const auto it = catalog.gpus.find(node.spec.gpu.name);
    if (it == catalog.gpus.end()) {
      const std::string path = cfg.node.inline_def ? "cluster.node.gpu" : "nodes." + node.name + ".gpu";
      state.diagnostics.add(state.where(path), path,
                            fmt::format("unknown GPU type '{}'; the catalog has {}", node.spec.gpu.name,
                                        fmt::join(names_of(catalog.gpus), ", ")),
                            hint(did_you_mean(node.spec.gpu.name, names_of(catalog.gpus)), "gpus", node.spec.gpu.name));
      return std::nullopt;
    }
    node.gpu_name = it->first;
    node.gpu = it->second;
  }
  if (node.spec.nics > 0 && node.spec.nic_bandwidth.value() <= 0.0) {
    // At the catalog entry that wrote it, when the node comes from a catalog.
    const std::string at = cfg.node.inline_def ? "cluster.node" : "nodes." + node.name;
    state.diagnostics.add(state.where(at + ".nics"), at + ".nic_bandwidth",
                          fmt::format("the node has {} NICs but no nic_bandwidth", node.spec.nics),
                          "add e.g. 'nic_bandwidth: 400Gbps'");
    return std::nullopt;
  }
  // (A node without NICs is said so where the fabric needs them.)
  // Each GPU sends through one NIC (GPU i through NIC i x nics / gpus; fabric.hpp,
  // endpoint_of_gpu): NICs beyond one per GPU would be built, priced and counted in the
  // bisection, yet carry nothing.
  if (node.spec.nics > node.spec.gpus) {
    const std::string at = cfg.node.inline_def ? "cluster.node" : "nodes." + node.name;
    state.diagnostics.add(state.where(at + ".nics"), at + ".nics",
                          fmt::format("{} NICs for {} GPUs: each GPU sends through one NIC, so NICs beyond one per "
                                      "GPU would carry nothing",
                                      node.spec.nics, node.spec.gpus),
                          fmt::format("at most {} NICs; k NICs per GPU act as one of k times the line rate: "
                                      "nics: {}, nic_bandwidth: {} for two per GPU",
                                      node.spec.gpus, node.spec.gpus, sim::format_bandwidth(node.spec.nic_bandwidth * 2.0)));
    return std::nullopt;
  }
  if (node.spec.rails > 0 && node.spec.nics > 0 && node.spec.nics % node.spec.rails != 0) {
    const std::string at = cfg.node.inline_def ? "cluster.node" : "nodes." + node.name;
    state.diagnostics.add(state.where(at + ".rails"), at + ".rails",
                          fmt::format("{} rails do not divide the node's {} NICs: every tray (rail unit) must hold "
                                      "one NIC of each rail",
                                      node.spec.rails, node.spec.nics),
                          "the NICs of one tray, 4 for GB200 NVL72's compute trays; or remove rails: one rail per NIC");
    return std::nullopt;
  }
  // Without a scale-up fabric the node's GPUs reach each other through its NICs: a scale-up
  // rate or latency written on it was silently ignored (the GPU's own, a property of the
  // part that other nodes may join, is not the node's to refuse).
  if (node.spec.scaleup == hardware::ScaleUp::none) {
    const std::string at = cfg.node.inline_def ? "cluster.node" : "nodes." + node.name;
    for (const char* key : {"scaleup_bandwidth", "scaleup_latency"}) {
      const std::string path = at + "." + key;
      const bool written = std::string_view(key) == "scaleup_bandwidth" ? node.spec.scaleup_bandwidth.has_value()
                                                                        : state.assigned.count(path) > 0;
      // As reconcile_fabric's keys: a mistake where written with the scaleup that makes it
      // inert (the same file, or the command line), not where a later layer (a file extending
      // this one, --set, a grid's point) turned scale-up off under a base's rate.
      if (!written || state.where(path).file != state.where(at + ".scaleup").file) continue;
      state.diagnostics.add(state.where(path), path,
                            "does not apply: scaleup is none, so the node's GPUs reach each other through its NICs",
                            "scaleup: nvswitch for a scale-up fabric, or remove it");
    }
  }
  node.scaleup_bandwidth = node.spec.scaleup_bandwidth.value_or(node.gpu.scaleup_bandwidth);
  return node;
}

workload::ModelCatalog load_models(LoadState& scenario_state) {
  static const Builtin<workload::ModelCatalog> builtin =
      decode_builtin<workload::ModelCatalog>(workload::kBuiltinModelsFile, workload::builtin_models_text());
  report_builtin(builtin.diagnostics, scenario_state);
  return builtin.value;
}

/// Says each relation of `model` that does not hold at its key (under `at`, the job's model),
/// or at the model itself for a catalog model; whether there was one.
bool report_model_problems(const workload::ModelSpec& model, const std::string& at, LoadState& state) {
  const std::vector<workload::ModelProblem> problems = workload::model_problems(model);
  for (const workload::ModelProblem& p : problems) {
    const std::string key = at + "." + p.key;
    const bool written = state.assigned.count(key) > 0;
    state.diagnostics.add(state.where(written ? key : at), written ? key : at, p.message, p.hint);
  }
  return !problems.empty();
}

/// An inline model's relations, with the scenario's own checks (they hold whatever the
/// cluster, so they need not wait for the fabric and the placement).
void check_inline_models(const Scenario& sc, LoadState& state) {
  for (std::size_t i = 0; i < sc.workload.jobs.size(); ++i) {
    const auto& model = sc.workload.jobs[i].model;
    if (model.inline_def) report_model_problems(*model.inline_def, fmt::format("workload.jobs[{}].model", i), state);
  }
}

/// Says each way the job at `path` does not hold together (its degrees against its GPUs, its
/// batch against its micro-batches, ...) at the key most likely to blame; whether there was one.
bool report_job_problems(const workload::JobConfig& job, const workload::ModelSpec& model, std::int64_t gpus_per_node,
                         const std::string& path, LoadState& state) {
  const auto problems = workload::validate_job(job, model, gpus_per_node);
  for (const workload::JobProblem& e : problems) {
    const std::string at = path + "." + e.path;
    std::vector<std::string> keys;
    for (const std::string& k : e.keys) keys.push_back(path + "." + k);
    state.diagnostics.add(state.where_overridden(at, keys), at, e.message, e.hint);
  }
  return !problems.empty();
}

/// The jobs' own relations, said with the scenario's first errors rather than after their
/// fix: they need the node's GPUs per node only, for the tp they suggest, resolved here on
/// the side (its own errors are said where the load resolves it; a node that does not
/// resolve leaves the suggestion to the job's GPUs alone). A job whose model is unknown or
/// in error waits.
void check_jobs_early(const Scenario& sc, const hardware::Catalog& catalog, LoadState& state) {
  if (sc.workload.jobs.empty()) return;
  LoadState probe = state;
  probe.diagnostics = config::Diagnostics{};
  const std::optional<cluster::ResolvedNode> node = resolve_node(sc.cluster, catalog, probe);
  const std::int64_t gpus_per_node = node && probe.diagnostics.ok() ? std::max<std::int64_t>(0, node->spec.gpus) : 0;
  probe.diagnostics = config::Diagnostics{};
  const workload::ModelCatalog models = load_models(probe);
  for (std::size_t i = 0; i < sc.workload.jobs.size(); ++i) {
    const workload::JobConfig& job = sc.workload.jobs[i];
    const workload::ModelSpec* model = nullptr;
    if (job.model.inline_def) {
      model = &*job.model.inline_def;
    } else if (const auto it = models.models.find(job.model.name); it != models.models.end()) {
      model = &it->second;
    }
    if (model == nullptr || !workload::model_problems(*model).empty()) continue;
    report_job_problems(job, *model, gpus_per_node, fmt::format("workload.jobs[{}]", i), state);
  }
}

}  // namespace

std::optional<std::pair<std::string, workload::ModelSpec>> job_model(const workload::JobConfig& job) {
  if (job.model.inline_def) {
    return std::pair{job.model.inline_def->name.empty() ? std::string("inline") : job.model.inline_def->name,
                     *job.model.inline_def};
  }
  LoadState state;
  const workload::ModelCatalog catalog = load_models(state);
  const auto it = catalog.models.find(job.model.name);
  if (it == catalog.models.end()) return std::nullopt;
  return *it;
}

namespace {

/// Resolves each job's model, checks its parallelism, places it after the previous job
/// and checks that it fits in HBM.
std::vector<ResolvedJob> resolve_jobs(const LoadedScenario& loaded, bool check_memory, LoadState& state) {
  std::vector<ResolvedJob> out;
  const auto& jobs = loaded.config.workload.jobs;
  if (jobs.empty()) return out;
  const workload::ModelCatalog catalog = load_models(state);
  const std::int64_t gpus_per_node = loaded.node.spec.gpus;
  const std::int64_t cluster_gpus = loaded.config.cluster.nodes * gpus_per_node;
  // (A fabric in error is said where it is built: the jobs are checked beside it.)
  if (!loaded.config.fabric) {
    state.diagnostics.add(state.where("workload"), "workload",
                          "the jobs' collectives need a network: the scenario has no fabric section",
                          loaded.config.cluster.nodes == 1
                              ? "add one: it holds the node's NVLink too, and on one node no traffic leaves it, e.g. "
                                "fabric: {topology: rail_clos, radix: 64, link_latency: 700ns}"
                              : "add one, e.g. fabric: {topology: rail_clos, radix: 64, link_latency: 700ns}");
    return out;
  }
  // Every copy of a `count` job is a job of its own in the long run and the results (~13 KB
  // each): 400,000 of them ran out of memory. Each entry holds at most 100,000; so do all.
  constexpr std::int64_t kMaxJobs = 100'000;
  std::int64_t total = 0;
  for (const auto& j : jobs) total += j.count;
  if (total > kMaxJobs) {
    state.diagnostics.add(state.where("workload.jobs"), "workload.jobs",
                          fmt::format("{} jobs in all (counting each copy of a count: job); clustersim runs at most {}",
                                      total, kMaxJobs),
                          "fewer copies: a sample of a hyperparameter search behaves as the whole");
    return out;
  }
  std::int64_t next_gpu = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string path = fmt::format("workload.jobs[{}]", i);
    ResolvedJob job;
    job.config = jobs[i];
    if (jobs[i].model.inline_def) {
      job.model = *jobs[i].model.inline_def;
      job.model_name = job.model.name.empty() ? "inline" : job.model.name;
    } else {
      const auto it = catalog.models.find(jobs[i].model.name);
      if (it == catalog.models.end()) {
        state.diagnostics.add(state.where(path + ".model"), path + ".model",
                              fmt::format("unknown model '{}'; the catalog has {}", jobs[i].model.name,
                                          fmt::join(names_of(catalog.models), ", ")),
                              did_you_mean(jobs[i].model.name, names_of(catalog.models)));
        continue;
      }
      job.model_name = it->first;
      job.model = it->second;
    }
    if (report_model_problems(job.model, path + ".model", state)) continue;
    if (report_job_problems(job.config, job.model, gpus_per_node, path, state)) continue;
    // Jobs that do not all fit at once queue; each must fit the cluster on its own.
    if (job.config.gpus > cluster_gpus) {
      state.diagnostics.add(state.where(path + ".gpus"), path + ".gpus",
                            fmt::format("the job needs {} GPUs, but the cluster has {} ({} node{} of {} GPUs)", job.config.gpus,
                                        cluster_gpus, loaded.config.cluster.nodes,
                                        loaded.config.cluster.nodes == 1 ? "" : "s", gpus_per_node),
                            nodes_hint(state, (job.config.gpus + gpus_per_node - 1) / gpus_per_node));
      continue;
    }
    job.profile = loaded.calibration ? calibration::compute_profile(*loaded.calibration, loaded.node.gpu_name, loaded.node.gpu)
                                     : compute::default_profile(loaded.node.gpu_name, loaded.node.gpu);
    if (compute::peak_flops(job.config.precision, job.profile) <= 0.0) {
      const std::string dtype(config::enum_name(job.config.precision));
      state.diagnostics.add(state.where(path + ".precision"), path + ".precision",
                            fmt::format("the GPU type '{}' has no {} peak FLOP rate (peak_flops.{} is missing or 0)",
                                        loaded.node.gpu_name, dtype, dtype),
                            fmt::format("give the GPU a peak_flops.{}, or the job a precision the GPU has", dtype));
      continue;
    }
    // An fp8 job runs its attention in bf16 (workload::chunk_costs): the GPU needs that peak too.
    if (job.config.precision == compute::Dtype::fp8 && compute::peak_flops(compute::Dtype::bf16, job.profile) <= 0.0) {
      state.diagnostics.add(state.where(path + ".precision"), path + ".precision",
                            fmt::format("the GPU type '{}' has no bf16 peak FLOP rate (peak_flops.bf16 is missing or 0), "
                                        "which an fp8 job needs: its attention runs in bf16",
                                        loaded.node.gpu_name),
                            "give the GPU a peak_flops.bf16 as well as its fp8 one");
      continue;
    }
    const auto chunks = workload::chunk_costs(job.config, job.model, job.profile);
    const auto order = workload::pipeline_order(job.config.parallelism.pp, job.config.parallelism.virtual_stages,
                                                workload::micro_batches(job.config));
    const workload::MemoryBreakdown m = workload::memory_per_gpu(job.config, chunks, order);
    const double hbm = loaded.node.gpu.hbm_capacity.value();
    if (check_memory && m.total > hbm) {
      const auto gb = [](double b) { return sim::human(sim::Bytes::of(b)); };
      const auto& p = job.config.parallelism;
      std::string hint;
      if (job.config.recompute != workload::Recompute::full && m.activations > 0.3 * m.total) {
        hint = job.config.recompute == workload::Recompute::none ? "recompute: selective (or full) stores fewer activations"
                                                                 : "recompute: full stores only each layer's input";
      } else if (p.zero < 3 && p.dp * p.cp > 1) {  // ZeRO shards over the data- and context-parallel ranks
        hint = p.cp > 1 ? fmt::format("zero: {} shards more of the training state over the {} data- and context-parallel "
                                      "ranks (dp {} x cp {})",
                                      p.zero + 1, p.dp * p.cp, p.dp, p.cp)
                        : fmt::format("zero: {} shards more of the training state over the {} data-parallel ranks",
                                      p.zero + 1, p.dp);
      } else {
        hint = fmt::format("a larger pp (now {}) or tp (now {}) spreads the model over more GPUs", p.pp, p.tp);
      }
      // The keys the memory depends on: a renamed job does not make it not fit.
      std::vector<std::string> memory_keys;
      for (const char* key : {"parallelism", "micro_batch", "seq_len", "model", "recompute", "precision", "attention",
                              "grad_dtype", "gpus"}) {
        memory_keys.push_back(path + "." + key);
      }
      state.diagnostics.add(
          state.where_overridden(path, memory_keys), path,
          fmt::format("does not fit: stage {} needs {} per GPU (weights {}, gradients {}, optimizer {}, activations "
                      "{}), more than the {} of HBM of one {} (the capacity as written: a datasheet's GB are "
                      "decimal, a few GB under the driver's total, left for the CUDA context and NCCL's buffers)",
                      m.stage, gb(m.total), gb(m.weights), gb(m.gradients), gb(m.optimizer), gb(m.activations),
                      gb(hbm), loaded.node.gpu_name),
          hint);
      continue;
    }
    // `count` copies, placed one after another (back to GPU 0 when the cluster is full).
    job.entry = i;
    job.where = state.where(path);
    for (std::int64_t c = 0; c < jobs[i].count; ++c) {
      ResolvedJob copy = job;
      copy.copy = c;
      if (jobs[i].count > 1) copy.config.name = fmt::format("{}-{}", jobs[i].name, c);
      if (next_gpu + copy.config.gpus > cluster_gpus) next_gpu = 0;
      copy.first_gpu = next_gpu;
      next_gpu += copy.config.gpus;
      out.push_back(std::move(copy));
    }
  }
  // Names identify jobs in the results and the failure timeline. Checked on every entry,
  // those in error too (a duplicate waited for the other errors' fix).
  std::map<std::string, std::size_t> names;
  for (std::size_t entry = 0; entry < jobs.size(); ++entry) {
    const std::int64_t n = jobs[entry].count;
    for (std::int64_t c = 0; c < n; ++c) {
      const std::string name = n > 1 ? fmt::format("{}-{}", jobs[entry].name, c) : jobs[entry].name;
      const auto [it, fresh] = names.emplace(name, entry);
      if (fresh) continue;
      const std::string at = fmt::format("workload.jobs[{}].name", entry);
      const std::string mine = n > 1 ? fmt::format("count: {} names its copies {}-0 .. {}-{}, and '{}'", n,
                                                   jobs[entry].name, jobs[entry].name, n - 1, name)
                                     : fmt::format("'{}'", name);
      state.diagnostics.add(state.where(at), at,
                            fmt::format("{} is already the name of {}workload.jobs[{}]", mine,
                                        jobs[it->second].count > 1 ? "a copy of " : "", it->second),
                            "give each job its own name");
      break;  // one error per entry
    }
  }
  return out;
}

/// The size tables a calibration supplies (network.yaml, a profile): a --set that indexes
/// into one ("network.scaleup_size_factors[3].factor=0.9") addresses the table in force, so
/// it is applied after the calibration, once the node (hence the GPU type) is known.
bool indexes_size_table(const std::string& set) {
  const std::string key = set_key(set);
  for (const char* list : {"network.scaleup_size_factors[", "network.scaleout_size_factors["}) {
    if (key.rfind(list, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::string set_key(const std::string& set) {
  const std::size_t value = config::set_value_start(set);
  const std::string text = set.substr(0, value == std::string::npos ? set.size() : value - 1);
  // Segment by segment (a '.' outside quotes ends one): spaces dropped, quotes dropped but
  // around a name that holds '.' or '=' (a component "nic.cx7"), which only they keep whole.
  std::string key;
  std::string segment;
  bool quoted = false;
  bool was_quoted = false;
  const auto flush = [&] {
    const bool keep = was_quoted && segment.find_first_of(".=") != std::string::npos;
    key += keep ? "\"" + segment + "\"" : segment;
    segment.clear();
    was_quoted = false;
  };
  for (const char c : text) {
    if (c == '"') {
      quoted = !quoted;
      was_quoted = true;
    } else if (c == '.' && !quoted) {
      flush();
      key += '.';
    } else if (c != ' ' || quoted) {
      segment += c;
    }
  }
  flush();
  return key;
}

namespace {

/// Whether `other` (a --set) writes the whole table that `set` indexes into.
bool writes_whole_table(const std::string& set, const std::string& other) {
  const std::string indexed = set_key(set);
  const std::string table = indexed.substr(0, indexed.find('['));  // "network.scaleup_size_factors"
  const std::string key = set_key(other);
  if (key == table) return true;
  // A whole network mapping writes the table only if it holds it.
  const std::size_t value = config::set_value_start(other);
  return key == "network" && value != std::string::npos &&
         other.find(table.substr(table.find('.') + 1), value) != std::string::npos;
}

/// What becomes of the point edit sets[i] of a size table. The last --set wins: after a
/// --set of the whole table it edits that table, in order; before one, the later table
/// replaces it; with none, it edits the table in force once the calibration is known.
enum class TablePoint { in_order, replaced, after_calibration };

TablePoint table_point(std::size_t i, const std::vector<std::string>& sets) {
  for (std::size_t k = i + 1; k < sets.size(); ++k) {
    if (writes_whole_table(sets[i], sets[k])) return TablePoint::replaced;
  }
  for (std::size_t k = 0; k < i; ++k) {
    if (writes_whole_table(sets[i], sets[k])) return TablePoint::in_order;
  }
  return TablePoint::after_calibration;
}

void check_sweep_values(const Scenario& sc, bool size_tables, LoadState& state);

/// The sweep block's shape: the zipped lists vary together, so they must have one length,
/// and a key is either zipped or a grid axis. It needs only the lists themselves, so it is
/// said even where other keys did not decode.
void check_sweep_shape(const Scenario& sc, LoadState& state) {
  if (!sc.sweep) return;
  const std::vector<SweepAxis>& zip = sc.sweep->zip.axes;
  for (const SweepAxis& axis : zip) {
    if (axis.values.size() == zip.front().values.size()) continue;
    const std::string at = "sweep.zip." + axis.key;
    state.diagnostics.add(state.where(at), at,
                          fmt::format("{} values, but {} has {}: zipped lists vary together and need one length",
                                      axis.values.size(), zip.front().key, zip.front().values.size()),
                          "give every zipped key as many values, or move this key under sweep.grid");
  }
  for (const SweepAxis& axis : sc.sweep->grid.axes) {
    if (std::none_of(zip.begin(), zip.end(), [&](const SweepAxis& z) { return z.key == axis.key; })) continue;
    const std::string at = "sweep.grid." + axis.key;
    state.diagnostics.add(state.where(at), at, "this key is also under sweep.zip", "keep it in one of the two");
  }
}

/// The sweep block: its shape, and every value against its key.
void check_sweep(const Scenario& sc, LoadState& state) {
  check_sweep_shape(sc, state);
  check_sweep_values(sc, false, state);
}

/// Every value of the sweep's axes must be one the key takes: each is applied, as `--set
/// KEY=VALUE` would be, to a copy of the scenario (a key that does not exist, a value of the
/// wrong type or out of range). What only a whole point can tell (a fabric too small) is
/// that point's error row in the sweep. `size_tables`: the axes that index into a size table
/// (indexes_size_table), checked once the calibration has supplied it; else the others.
void check_sweep_values(const Scenario& sc, bool size_tables, LoadState& state) {
  if (!sc.sweep) return;
  for (const auto& [section, axes] : {std::pair{"zip", &sc.sweep->zip.axes}, {"grid", &sc.sweep->grid.axes}}) {
    for (const SweepAxis& axis : *axes) {
      if (indexes_size_table(axis.key + "=") != size_tables) continue;
      std::set<std::string> said;  // a misspelt key is one error, not one per value
      for (std::size_t i = 0; i < axis.values.size(); ++i) {
        Scenario copy = sc;
        copy.sweep.reset();
        LoadState trial;
        config::apply_set(copy, axis.key + "=" + axis.values[i], trial);
        const std::string at = fmt::format("sweep.{}.{}[{}]", section, axis.key, i);
        for (const config::Diagnostic& d : trial.diagnostics.items()) {
          // A key that does not exist is the axis's error, once, at its key (it was said at
          // the first value, "[0]", as if that value were wrong).
          // (Only an unknown key of the axis's own path: one inside a value's mapping is that
          // value's error.)
          if (d.message.find("unknown key") != std::string::npos &&
              (d.path == axis.key || config::key_inside(d.path, axis.key))) {
            if (!said.insert(d.path + ": " + d.message).second) continue;
            const std::string key_at = fmt::format("sweep.{}.{}", section, axis.key);
            state.diagnostics.add(state.where(key_at), key_at,
                                  d.path.empty() ? d.message : d.path + ": " + d.message, d.hint);
            continue;
          }
          state.diagnostics.add(i < axis.where.size() ? axis.where[i] : state.where(at), at,
                                d.path.empty() ? d.message : d.path + ": " + d.message, d.hint);
        }
      }
    }
  }
}

/// Whether `path` (assigned at `at`) was set by one of compare's shared overrides: on the
/// command line, at or under one of `shared` (LoadOptions::shared_keys).
bool set_shared(const std::string& path, const Location& at, const std::vector<std::string>& shared) {
  if (at.file != "<command line>") return false;
  return std::any_of(shared.begin(), shared.end(),
                     [&](const std::string& key) { return path == key || config::key_inside(key, path); });
}

/// The order in which the keys were written, to tell which of two came later: the files of
/// the chain (base first), then the user's --set overrides, one layer (two of them are
/// written together, as two keys of one file are), then a grid point's values
/// (LoadOptions::point_sets: sweep's and plan's), which decide whether another key is inert
/// and are never the mistake themselves (tp 1 beside the file's sequence_parallel is a point
/// of the grid). Before, every --set counted as a grid's: `--set parallelism.zero=3 --set
/// overlap_param_gather=true` ran, the overlap silently ignored.
class WriteOrder {
 public:
  WriteOrder(std::vector<std::string> files, std::size_t user_sets) : files_(std::move(files)), user_sets_(user_sets) {}
  /// 0 .. files-1: a file of the chain; files: a user's --set (or a file outside the
  /// chain); files + 1: a grid point's value.
  [[nodiscard]] std::size_t rank(const Location& at) const {
    if (at.file == "<command line>" && at.line > static_cast<int>(user_sets_)) return files_.size() + 1;
    const auto it = std::find(files_.begin(), files_.end(), at.file);
    return it == files_.end() ? files_.size() : static_cast<std::size_t>(it - files_.begin());
  }
  /// Written by a grid point.
  [[nodiscard]] bool grid(const Location& at) const { return rank(at) > files_.size(); }

 private:
  std::vector<std::string> files_;
  std::size_t user_sets_;
};

/// Keys written where they change nothing are errors, as the fabric's are ("does not
/// apply"): a Weibull shape on an exponential law, Pareto parameters without heterogeneity
/// (or both of its ways of setting it at once), a parameter gather's overlap without the
/// ZeRO stages that have one, sequence parallelism without tensor parallelism. A key is
/// inert only if the key that makes it so was not written after it (a file that extends
/// another, or --set, may turn off what its base set up: kind: none over a base's Pareto
/// parameters).
void check_inert_keys(const Scenario& sc, const WriteOrder& order, const std::vector<std::string>& shared,
                      LoadState& state, config::Diagnostics& shared_inert) {
  const auto given = [&](const std::string& path) { return state.assigned.count(path) > 0; };
  const auto rank = [&](const std::string& path) { return order.rank(state.assigned.at(path)); };
  const auto grid = [&](const std::string& path) { return order.grid(state.assigned.at(path)); };
  // `key` written, and `because` (the key that makes it inert) not written after it, nor by
  // a grid's point (tp 1 for a scenario with sequence parallelism is a point, not a mistake).
  const auto stale = [&](const std::string& key, const std::string& because) {
    return given(key) && (!given(because) || (rank(because) <= rank(key) && !grid(because)));
  };
  // The same, where what makes `key` inert is anything under `section` (the failure
  // components, whose keys a later file or a grid's point may change one by one).
  const auto stale_under = [&](const std::string& key, const std::string& section) {
    if (!given(key)) return false;
    return std::none_of(state.assigned.begin(), state.assigned.end(), [&](const auto& kv) {
      const std::string& path = kv.first;
      const bool under = path != key && (path == section || config::key_inside(section, path));
      return under && (rank(path) > rank(key) || grid(path));
    });
  };
  // compare's shared --set applies to every scenario compared: inert here, it may matter in
  // another, and is set aside (compare refuses one inert in all of them).
  const auto inert = [&](const std::string& path, std::string why, std::string hint) {
    const Location at = state.where(path);
    (set_shared(path, at, shared) ? shared_inert : state.diagnostics).add(at, path, "does not apply: " + why, std::move(hint));
  };
  if (!sc.failures && sc.workload.jobs.empty()) {
    for (const char* key : {"checkpoint.interval", "simulation.horizon"}) {
      if (std::string_view(key) == "checkpoint.interval" && sc.checkpoint.interval.automatic) continue;
      if (stale(key, "workload.jobs")) {
        inert(key, "the scenario has no job and nothing fails: nothing runs over time", "add a job, or remove it");
      }
    }
  }
  for (const char* key : {"network.nvls_efficiency", "network.nvls_latency"}) {
    if (!sc.network.nvls && stale(key, "network.nvls")) inert(key, "network.nvls is off", "network.nvls: true, or remove it");
  }
  for (const char* key : {"network.sharp_efficiency", "network.sharp_latency"}) {
    if (!sc.network.sharp && stale(key, "network.sharp")) inert(key, "network.sharp is off", "network.sharp: true, or remove it");
  }
  if (!sc.failures && sc.simulation.replications > 1 && stale("simulation.replications", "failures")) {
    inert("simulation.replications", "nothing is drawn at random without failures: every replication is the same",
          "add failures, or remove it");
  }
  if (!sc.failures) {
    for (const char* key : {"retire_after", "retire_window", "shrink", "burn_in", "nic_loss"}) {
      const std::string at = fmt::format("scheduler.{}", key);
      if (stale(at, "failures")) inert(at, "nothing fails: the scenario has no failures section", "add failures, or remove it");
    }
  }
  // Queue pairs spread a connection over paths only where paths are hashed.
  if (sc.network.qps_per_connection > 1) {
    const bool clos = sc.fabric && (sc.fabric->topology == fabric::Topology::fat_tree ||
                                    sc.fabric->topology == fabric::Topology::rail_clos);
    const bool minimal = sc.fabric && sc.fabric->topology == fabric::Topology::dragonfly &&
                         sc.fabric->routing == fabric::Routing::minimal;
    if (!sc.fabric && stale("network.qps_per_connection", "fabric")) {
      inert("network.qps_per_connection", "the scenario has no fabric: no connection crosses one",
            "add a fabric, or remove it");
    } else if (sc.cluster.nodes <= 1 && stale("network.qps_per_connection", "cluster.nodes")) {
      inert("network.qps_per_connection", "the cluster is one node: no connection crosses the fabric",
            "add nodes, or remove it");
    } else if (clos && sc.fabric->path_selection == fabric::PathSelection::destination &&
               stale("network.qps_per_connection", "fabric.path_selection")) {
      inert("network.qps_per_connection",
            "fabric.path_selection is destination: every queue pair of a connection takes the same path",
            "path_selection: hash (ECMP), or remove it");
    } else if (minimal && stale("network.qps_per_connection", "fabric.routing")) {
      inert("network.qps_per_connection", "minimal routing gives each pair of GPUs one path",
            "routing: valiant or ugal, or remove it");
    }
  }
  // Backfill lets a later job start before one that waits for nodes: one job has no other.
  std::int64_t jobs = 0;
  for (const auto& job : sc.workload.jobs) jobs += job.count;
  // (A job count written after the policy, or on the command line as a sweep's point, decides.)
  if (sc.scheduler.policy == reliability::QueuePolicy::backfill && jobs <= 1 &&
      stale_under("scheduler.policy", "workload.jobs")) {
    inert("scheduler.policy",
          fmt::format("backfill reorders a queue of jobs, and the scenario has {}", jobs == 0 ? "none" : "one"),
          "policy: fifo (the default), or add jobs");
  }
  if (sc.failures && sc.scheduler.retire_after == 0 && stale("scheduler.retire_window", "scheduler.retire_after")) {
    inert("scheduler.retire_window", "retire_after is 0: no node is retired, so no failures are counted",
          "retire_after: 3, or remove it");
  }
  if (sc.failures && !sc.failures->components.empty()) {
    using reliability::Effect;
    using reliability::Per;
    const auto& components = sc.failures->components;
    // The exponential law is memoryless: a unit new and one long in service fail alike.
    const bool memoryless = std::all_of(components.begin(), components.end(), [](const auto& kv) {
      return kv.second.distribution == reliability::Distribution::exponential;
    });
    if (memoryless && sc.failures->fleet_age == reliability::FleetAge::new_ &&
        stale_under("failures.fleet_age", "failures.components")) {
      inert("failures.fleet_age",
            "every component fails on the exponential law, which is memoryless: a new unit fails as one long in service",
            "a Weibull law with shape below 1, for units failing early; or remove it");
    }
    // Rate multipliers are drawn per GPU: they only touch components counted per GPU.
    const bool per_gpu = std::any_of(components.begin(), components.end(), [](const auto& kv) {
      return reliability::unit_of(kv.first, kv.second) == Per::gpu;
    });
    if (!per_gpu && sc.failures->heterogeneity.kind == reliability::HeterogeneityKind::power_law &&
        stale_under("failures.heterogeneity.kind", "failures.components")) {
      inert("failures.heterogeneity.kind", "no component fails per GPU, and heterogeneity spreads per-GPU failures",
            "add a component counted per GPU, e.g. gpu: {rate: 0.0002/gpu-day}, or remove it");
    }
    // What the components do with nodes (longrun.cpp, on_failure): a GPU or node failure
    // that restarts the job sends hardware to repair (repair.replace), where retire_after
    // counts it; a switch or cable down cuts nodes off, and is replaced if hardware. Only
    // nodes leaving service make a job wait for spares or shrink.
    bool repairs_nodes = false, replaces = false, elements = false, cuts_nics = false;
    for (const auto& [name, c] : components) {
      const Per per = reliability::unit_of(name, c);
      const bool hardware = c.hardware.value_or(reliability::default_hardware(name));
      const bool node_unit = per == Per::gpu || per == Per::node;
      repairs_nodes |= node_unit && hardware && c.effect == Effect::restart;
      elements |= per == Per::switch_ || per == Per::link;
      replaces |= (per == Per::switch_ || per == Per::link) && hardware;
      // As longrun.cpp's Klass::fences: an element that stays down cuts off the NICs it holds.
      cuts_nics |= (per == Per::switch_ || per == Per::link) &&
                   (c.effect == Effect::reroute || (c.effect == Effect::restart && hardware));
      const std::string at = fmt::format("failures.components.{}.hardware", name);
      if (per == Per::job && stale_under(at, fmt::format("failures.components.{}", name))) {
        inert(at, "a failure of the whole job (per: job) takes no node out of service", "remove it");
      } else if (node_unit && c.effect == Effect::none && stale_under(at, fmt::format("failures.components.{}", name))) {
        inert(at, "effect: none lets the unit fail and run on: no node is swapped or repaired",
              "effect: restart, or remove it");
      }
      // With burn-in, planned still matters: a planned unit's clock does not run in it.
      const std::string planned = fmt::format("failures.components.{}.planned", name);
      if (c.planned && c.effect == Effect::none && sc.scheduler.burn_in == sim::Time::zero() &&
          stale_under(planned, fmt::format("failures.components.{}", name))) {
        inert(planned, "effect: none stops no job, so there is no stop to announce; nor is there a burn-in, where a "
                       "planned unit's clock would stop",
              "effect: restart, or remove it");
      }
    }
    if (!cuts_nics && stale_under("scheduler.nic_loss", "failures.components")) {
      inert("scheduler.nic_loss",
            "no switch or cable stays down when it fails (per switch or link, with hardware and effect restart, or "
            "effect reroute), so no node is ever cut off from its NICs",
            "add a component per switch or link, e.g. switch: {rate: 0.0007/switch-day}; or remove it");
    }
    if (!repairs_nodes && !replaces && stale_under("failures.repair.replace", "failures.components")) {
      inert("failures.repair.replace",
            "no component sends hardware to repair (a GPU or node failure with hardware and effect: restart, or a "
            "switch or cable with hardware)",
            "add such a component, or remove it");
    }
    // The window counts the failures of the last retire_window before the latest one
    // (longrun.cpp, on_node_repaired): a window of 0s holds that one failure alone. (Without
    // a component that sends nodes to repair, retire_after is said below.)
    // The key set last is the one said: a window of 0s given after retire_after (a --set, a
    // later file) is wrong itself (it switched retirement off without a word).
    if (repairs_nodes && sc.scheduler.retire_after >= 2 && sc.scheduler.retire_window == sim::Time::zero()) {
      if (stale("scheduler.retire_after", "scheduler.retire_window")) {
        inert("scheduler.retire_after",
              fmt::format("retire_window is 0s, which holds one failure, and {} are needed: no node is ever retired",
                          sc.scheduler.retire_after),
              "a window such as retire_window: 30d, or retire_after: 1");
      } else if (given("scheduler.retire_window") && !grid("scheduler.retire_window")) {  // a grid's 0s: a baseline
        state.diagnostics.add(state.where("scheduler.retire_window"), "scheduler.retire_window",
                              fmt::format("0s holds one failure, and retire_after: {} needs {} in the window: no node "
                                          "would ever be retired",
                                          sc.scheduler.retire_after, sc.scheduler.retire_after),
                              "a window such as retire_window: 30d; or retire_after: 0 to retire no node");
      }
    }
    if (!repairs_nodes) {
      for (const char* key : {"retire_after", "retire_window"}) {
        const std::string at = fmt::format("scheduler.{}", key);
        // (retire_after 0, never, changes nothing anyway; a window beside it is said above.)
        if (sc.scheduler.retire_after > 0 && stale_under(at, "failures.components")) {
          inert(at, "no GPU or node failure sends its node to repair, where failures are counted for retirement",
                "add a component such as gpu: {rate: 0.0002/gpu-day}, whose failures send the node to repair; or remove it");
        }
      }
      if (!elements && sc.scheduler.shrink && stale_under("scheduler.shrink", "failures.components")) {
        inert("scheduler.shrink", "no failure takes a node out of service, so no job ever misses one",
              "add a component such as gpu: {rate: 0.0002/gpu-day}, whose failures send the node to repair; or remove it");
      }
    }
    // A job shrinks by whole data-parallel replicas and keeps at least one.
    const bool one_replica = std::all_of(sc.workload.jobs.begin(), sc.workload.jobs.end(),
                                         [](const workload::JobConfig& j) { return j.parallelism.dp < 2; });
    if (sc.scheduler.shrink && one_replica && stale_under("scheduler.shrink", "workload")) {
      inert("scheduler.shrink",
            sc.workload.jobs.empty() ? "the scenario has no job to shrink"
                                     : "every job runs one data-parallel replica (dp 1), and a job shrinks by whole "
                                       "replicas, keeping one",
            sc.workload.jobs.empty() ? "add a job, or remove it" : "give a job dp 2 or more, or remove it");
    }
  }
  if (sc.failures && sc.failures->components.empty()) {
    inert("failures", "no component fails (failures.components is empty), so its repair, heterogeneity and the "
                      "scheduler's failure keys change nothing",
          "add a component, e.g. components: {gpu: {rate: 0.0002/gpu-day}}, or remove the section");
  }
  if (sc.failures) {
    for (const auto& [name, c] : sc.failures->components) {
      const std::string at = fmt::format("failures.components.{}.shape", name);
      if (c.distribution == reliability::Distribution::exponential &&
          stale(at, fmt::format("failures.components.{}.distribution", name))) {
        inert(at, "the exponential law has no shape (it is Weibull's shape or lognormal's sigma)",
              "remove it, or set distribution: weibull or lognormal");
      }
    }
    const reliability::Heterogeneity& h = sc.failures->heterogeneity;
    for (const char* key : {"shape", "top_fraction", "failure_share"}) {
      const std::string at = fmt::format("failures.heterogeneity.{}", key);
      if (h.kind == reliability::HeterogeneityKind::none && stale(at, "failures.heterogeneity.kind")) {
        inert(at, "heterogeneity kind none (every GPU alike) has no Pareto parameters", "kind: power_law, or remove it");
      }
    }
    // A shape above 0 sets the Pareto law alone: top_fraction and failure_share written with
    // it, or after it, change nothing (a shape written after them replaces them).
    for (const char* key : {"top_fraction", "failure_share"}) {
      const std::string at = fmt::format("failures.heterogeneity.{}", key);
      if (h.kind == reliability::HeterogeneityKind::power_law && h.shape > 0.0 &&
          stale(at, "failures.heterogeneity.shape")) {
        inert(at, fmt::format("the shape ({:g}) alone sets the Pareto law", h.shape),
              "give shape, or top_fraction and failure_share with shape: 0, not both");
        break;
      }
    }
  }
  for (std::size_t i = 0; i < sc.workload.jobs.size(); ++i) {
    const workload::JobConfig& j = sc.workload.jobs[i];
    const std::string opg = fmt::format("workload.jobs[{}].overlap_param_gather", i);
    if (j.overlap_param_gather && (j.parallelism.zero == 0 || j.parallelism.zero == 3) &&
        stale(opg, fmt::format("workload.jobs[{}].parallelism.zero", i))) {
      inert(opg,
            j.parallelism.zero == 0 ? "zero 0 all-reduces the gradients and gathers no parameters"
                                    : "zero 3 gathers the parameters layer by layer, before each pass (hidden already)",
            "zero: 1 or 2, or remove it");
    }
    const std::string sp = fmt::format("workload.jobs[{}].parallelism.sequence_parallel", i);
    if (j.parallelism.sequence_parallel && j.parallelism.tp == 1 &&
        stale(sp, fmt::format("workload.jobs[{}].parallelism.tp", i))) {
      inert(sp, "sequence parallelism splits the tensor-parallel group's activations, and tp is 1",
            "tp: 2 or more, or remove it");
    }
    // One data-parallel rank (dp x cp = 1): nothing to shard the training state over, no
    // gradient to reduce. (zero: 3 on tp 8 pp 4 dp 1 ran as zero 0, its table saying zero 3.)
    if (j.parallelism.dp * j.parallelism.cp == 1) {
      const std::string dp = fmt::format("workload.jobs[{}].parallelism.dp", i);
      const std::string cp = fmt::format("workload.jobs[{}].parallelism.cp", i);
      const std::string zero = fmt::format("workload.jobs[{}].parallelism.zero", i);
      const std::string ogr = fmt::format("workload.jobs[{}].overlap_grad_reduce", i);
      if (j.parallelism.zero > 0 && stale(zero, dp) && stale(zero, cp)) {
        inert(zero, "ZeRO shards the training state over the data- and context-parallel ranks, and dp x cp is 1",
              "dp: 2 or more, or remove it");
      }
      if (stale(ogr, dp) && stale(ogr, cp)) {
        inert(ogr, "there is no gradient reduction to overlap: dp x cp is 1", "dp: 2 or more, or remove it");
      }
    }
  }
}

/// The checkpoint's storage keys only matter in the long run (failures, a queue, a fixed
/// interval or a horizon); without it they were silently ignored. As for the other inert
/// keys (check_inert_keys), a key is judged only if none of the keys that decide the long
/// run was written after it (in a later file or --set, or by a grid's point: WriteOrder): a file that turns the long run off does not have to undo the
/// storage keys of the one it extends. compare's shared --set is set aside (shared_inert).
void check_inert_checkpoint(LoadedScenario& loaded, const WriteOrder& order, const std::vector<std::string>& shared,
                            LoadState& state) {
  const auto rank = [&](const Location& at) { return order.rank(at); };
  if (long_run(loaded)) {
    // Only an asynchronous checkpoint copies to host memory first.
    const auto snapshot = state.assigned.find("checkpoint.snapshot_bandwidth");
    const auto async = state.assigned.find("checkpoint.async");
    if (!loaded.config.checkpoint.async && snapshot != state.assigned.end()) {
      // Not when async was turned off after it (a file extending another), nor by a grid's
      // point, as for check_inert_keys.
      if (async == state.assigned.end() ||
          (rank(async->second) <= rank(snapshot->second) && !order.grid(async->second))) {
        config::Diagnostics& to =
            set_shared("checkpoint.snapshot_bandwidth", snapshot->second, shared) ? loaded.shared_inert : state.diagnostics;
        to.add(snapshot->second, "checkpoint.snapshot_bandwidth",
               "does not apply: checkpoint.async is false, so the job writes its checkpoint to storage itself, with no "
               "copy to host memory",
               "async: true, or remove it");
      }
    }
    return;
  }
  const auto decides = [](const std::string& path) {
    for (const std::string_view key : {"failures", "checkpoint.interval", "simulation.horizon", "workload", "cluster",
                                       "scheduler"}) {
      if (path == key || config::key_inside(key, path)) return true;
    }
    return false;
  };
  for (const char* key : {"write_bandwidth", "read_bandwidth", "size", "async", "snapshot_bandwidth"}) {
    const std::string path = fmt::format("checkpoint.{}", key);
    const auto written = state.assigned.find(path);
    if (written == state.assigned.end()) continue;
    const std::size_t when = rank(written->second);
    const bool overtaken = std::any_of(state.assigned.begin(), state.assigned.end(), [&](const auto& kv) {
      return decides(kv.first) && (rank(kv.second) > when || order.grid(kv.second));
    });
    if (overtaken) continue;
    config::Diagnostics& to = set_shared(path, written->second, shared) ? loaded.shared_inert : state.diagnostics;
    to.add(written->second, path,
                          loaded.jobs.empty()
                              ? "does not apply: the scenario has no job, so nothing checkpoints"
                              : "does not apply: without failures, a queue, a fixed checkpoint.interval or a "
                                "simulation.horizon the jobs' step is timed alone, and nothing checkpoints",
                          "add failures (or checkpoint.interval: 1h to count checkpoints alone), or remove it");
  }
}

/// Queue pairs spread a connection over paths only where the fabric gives a pair of GPUs
/// more than one, and fabric.ecmp_seed salts only the choices among them
/// (Fabric::flows_spread(), Fabric::seed_matters()). What decides it here is known once the
/// fabric is built (its switches and groups follow from the nodes): a Clos whose leaves have
/// one uplink each, or none (one leaf); a torus whose dimensions are all odd (a tie, the
/// destination half way round, is the only choice it hashes, and unsalted); a dragonfly of at
/// most three groups (Valiant has no intermediate group to draw, or one). The rest
/// (the topology, the routing, path_selection, one node, no fabric) is check_inert_keys'.
void check_inert_hashing(LoadedScenario& loaded, const WriteOrder& order, const std::vector<std::string>& shared,
                         LoadState& state) {
  if (!loaded.fabric) return;
  const fabric::Fabric& f = *loaded.fabric;
  // Why a pair of GPUs has one path on this fabric, and what would give it more.
  std::string why;
  std::string hint;
  if (const auto* c = std::get_if<fabric::ClosLayout>(&f.layout)) {
    if (!f.route_by_destination && c->u1 <= 1 && c->u2 <= 1) {
      why = c->u1 == 0 ? fmt::format("the Clos is one leaf switch{}: no route goes up, so each pair of GPUs has one path",
                                     c->rail ? " per rail" : "")
                       : "each leaf of the Clos has one uplink: each pair of GPUs has one path";
      hint = "remove it, or add nodes: it matters once a leaf has two uplinks or more";
    }
  } else if (const auto* t = std::get_if<fabric::TorusLayout>(&f.layout)) {
    if (!f.flows_spread()) {
      const bool odd = std::all_of(t->dims.begin(), t->dims.end(), [](std::int64_t k) { return k % 2 == 1; });
      why = odd ? "the torus's dimensions are all odd: dimension-order routing gives each pair of GPUs one shortest path"
                : "no two of the torus's nodes are half way round an even dimension (its routers are not all "
                  "occupied): dimension-order routing gives each pair of GPUs one shortest path";
      hint = odd ? "make a dimension even, where a tie goes either way round, or remove it" : "remove it";
    }
  } else if (const auto* d = std::get_if<fabric::DragonflyLayout>(&f.layout)) {
    if (d->g <= 3 && d->routing != fabric::Routing::minimal) {
      why = d->g <= 2 ? fmt::format("the dragonfly has {} group{}: Valiant has no intermediate group, so every route "
                                    "is minimal and each pair of GPUs has one path",
                                    d->g, d->g == 1 ? "" : "s")
                      : std::string("the dragonfly has 3 groups: Valiant's intermediate group is the one left, so each "
                                    "pair of GPUs has one path");
      hint = "more groups, or remove it";
    }
  }
  if (why.empty()) return;
  const auto flag = [&](const std::string& key) {
    const auto written = state.assigned.find(key);
    if (written == state.assigned.end()) return;
    // Said already (check_inert_keys: one node, say), for this key.
    for (const config::Diagnostics* said : {&state.diagnostics, &loaded.shared_inert}) {
      for (const config::Diagnostic& d : said->items()) {
        if (d.path == key) return;
      }
    }
    // Not when the fabric or the cluster was set after it (a file extending another, or a
    // grid's point), as for check_inert_checkpoint.
    const auto rank = [&](const Location& at) { return order.rank(at); };
    const std::size_t when = rank(written->second);
    const bool overtaken = std::any_of(state.assigned.begin(), state.assigned.end(), [&](const auto& kv) {
      if (kv.first == key) return false;
      const bool decides = kv.first == "fabric" || config::key_inside("fabric", kv.first) || kv.first == "cluster" ||
                           config::key_inside("cluster", kv.first);
      return decides && (rank(kv.second) > when || order.grid(kv.second));
    });
    if (overtaken) return;
    config::Diagnostics& to = set_shared(key, written->second, shared) ? loaded.shared_inert : state.diagnostics;
    to.add(written->second, key, "does not apply: " + why, hint);
  };
  if (loaded.config.network.qps_per_connection > 1) flag("network.qps_per_connection");
  // A torus's ties are unsalted: check_inert_keys says so for any torus.
  if (!std::holds_alternative<fabric::TorusLayout>(f.layout)) flag("fabric.ecmp_seed");
}

/// The failure section's own relations (a rate's unit against per, a law's shape, a
/// component's unit, reroute on a node part). Said last (check_reliability()), or with the
/// errors of any stage that stops the load before (the inert keys, the catalog, the fabric,
/// the jobs): they were said only once those held.
void check_failure_relations(const Scenario& sc, LoadState& state) {
  if (!sc.failures) return;
  for (const reliability::ConfigProblem& p : reliability::check_failures(*sc.failures)) {
    const std::string at = "failures." + p.path;
    // Both rate and mtbf: said at the one set on the command line when the other is the
    // file's (a --set mtbf over a file's rate was said at the file's line, with no word of
    // how to drop the file's), with the --set that removes the other.
    const std::string name = p.path.rfind("components.", 0) == 0 ? p.path.substr(11) : std::string();
    const auto c = sc.failures->components.find(name);
    if (c != sc.failures->components.end() && c->second.rate && c->second.mtbf) {
      const auto rate = state.assigned.find(at + ".rate");
      const auto mtbf = state.assigned.find(at + ".mtbf");
      if (rate != state.assigned.end() && mtbf != state.assigned.end() &&
          (rate->second.file == "<command line>") != (mtbf->second.file == "<command line>")) {
        const bool rate_set = rate->second.file == "<command line>";
        const auto& [key, where] = rate_set ? *rate : *mtbf;
        const std::string other = rate_set ? at + ".mtbf" : at + ".rate";
        const Location& file = rate_set ? mtbf->second : rate->second;
        state.diagnostics.add(where, key,
                              fmt::format("give either rate or mtbf: {}:{} gives {} too", file.file, file.line,
                                          rate_set ? "mtbf" : "rate"),
                              fmt::format("also --set {}=~ to drop the file's", other));
        continue;
      }
    }
    state.diagnostics.add(state.where(at), at, p.message, p.hint);
  }
}

void check_reliability(const LoadedScenario& loaded, LoadState& state) {
  const Scenario& sc = loaded.config;
  if (!long_run(loaded)) return;
  check_failure_relations(sc, state);
  const std::string_view with = long_run_label(loaded);
  if (!sc.simulation.horizon) {
    for (const ResolvedJob& job : loaded.jobs) {
      if (!job.config.train_tokens && job.copy == 0) {
        const std::string at = fmt::format("workload.jobs[{}]", job.entry);
        state.diagnostics.add(state.where(at), at,
                              fmt::format("{}, a job needs train_tokens, or the scenario a simulation.horizon", with),
                              "train_tokens: 15.6T, or simulation: {horizon: 54d}");
      }
    }
  }
  // Failures strike nodes and the scheduler hands out nodes: each job must have whole nodes
  // of its own (not for checkpoints or a horizon alone, which place nothing).
  const std::int64_t gpn = loaded.node.spec.gpus;
  std::vector<bool> reported(sc.workload.jobs.size(), false);
  const bool places = sc.failures || jobs_queue(loaded);
  for (const ResolvedJob& job : loaded.jobs) {
    if (places && (job.first_gpu % gpn != 0 || job.config.gpus % gpn != 0) && !reported[job.entry]) {
      reported[job.entry] = true;
      const std::string at = fmt::format("workload.jobs[{}].gpus", job.entry);
      state.diagnostics.add(state.where(at), at,
                            fmt::format("{}, jobs need whole nodes of their own: {} GPU{} from GPU {} share "
                                        "a node of {} with another job or leave part of one",
                                        with, job.config.gpus, job.config.gpus == 1 ? "" : "s", job.first_gpu, gpn),
                            fmt::format("gpus: {}", std::max<std::int64_t>(gpn, job.config.gpus / gpn * gpn)));
    }
  }
  if (sc.checkpoint.read_bandwidth && sc.checkpoint.read_bandwidth->value() < 1.0) {
    state.diagnostics.add(state.where("checkpoint.read_bandwidth"), "checkpoint.read_bandwidth", "must be positive",
                          "read_bandwidth: 2TB/s");
  }
  if (sc.simulation.horizon && sc.simulation.horizon->seconds() <= 0.0) {
    state.diagnostics.add(state.where("simulation.horizon"), "simulation.horizon", "must be positive", "a duration such as horizon: 54d");
  }
  // A job submitted when the run has ended would never start (before, it was reported as
  // still queued): past the horizon, or past the 100 years a run without one stops at.
  // (A horizon that is not positive has its own error above: no second one per job.)
  const double end_s = sc.simulation.horizon ? sc.simulation.horizon->seconds() : reliability::kLongestRun_s;
  for (std::size_t i = 0; i < sc.workload.jobs.size() && end_s > 0.0; ++i) {
    const sim::Time submit = sc.workload.jobs[i].submit;
    if (submit.seconds() < end_s) continue;
    const std::string at = fmt::format("workload.jobs[{}].submit", i);
    state.diagnostics.add(state.where(at), at,
                          fmt::format("{} is at or past the end of the run ({}), so the job would never start",
                                      sim::human(submit),
                                      sc.simulation.horizon ? fmt::format("simulation.horizon {}", sim::human(*sc.simulation.horizon))
                                                            : std::string("100 years: a run without a horizon stops there")),
                          "an earlier submit, or a longer simulation.horizon");
  }
  // A checkpoint's write, read or snapshot must fit the clock (before, a 1 B/s storage was
  // run with checkpoints of 3,563 years blocking each).
  for (const ResolvedJob& job : loaded.jobs) {
    if (job.copy != 0) continue;
    const reliability::CheckpointConfig& c = sc.checkpoint;
    const double bytes = checkpoint_bytes(loaded, job);
    const std::pair<const char*, double> times[] = {
        {"write_bandwidth", bytes / c.write_bandwidth.value()},
        {c.read_bandwidth ? "read_bandwidth" : "write_bandwidth",
         bytes / c.read_bandwidth.value_or(c.write_bandwidth).value()},
        {c.async ? "snapshot_bandwidth" : "write_bandwidth",
         c.async ? bytes / static_cast<double>(std::max<std::int64_t>(1, job.config.gpus)) / c.snapshot_bandwidth.value()
                 : 0.0}};
    for (const auto& [key, seconds] : times) {
      if (seconds <= sim::Time::max().seconds()) continue;
      const std::string at = fmt::format("checkpoint.{}", key);
      state.diagnostics.add(state.where(at), at,
                            fmt::format("job '{}': a checkpoint of {} would take {:.3g} years at this rate, past "
                                        "the clock's range (292 years)",
                                        job.config.name, sim::human(sim::Bytes::of(bytes)), seconds / 3.15576e7),
                            c.size ? "a storage bandwidth such as 2TB/s, or a smaller checkpoint.size"
                                   : "a storage bandwidth such as 2TB/s");
      break;
    }
  }
}

/// The default rollups (Thanos' 5min after 40h, 1h after 10d) fit the default sampling and
/// retention; beside a sampling interval as coarse as one of them, or a retention that ends
/// before one starts, that one would keep nothing (it was refused, pointing at a rollup the
/// user never wrote): it is left out. Rollups the user wrote are checked, not adapted.
void adapt_default_rollups(Scenario& sc, const LoadState& state) {
  const auto it = state.assigned.lower_bound("monitoring.rollups");
  const bool written = it != state.assigned.end() &&
                       (it->first == "monitoring.rollups" || it->first.starts_with("monitoring.rollups[") ||
                        it->first.starts_with("monitoring.rollups."));
  if (written) return;
  cost::MonitoringConfig& m = sc.monitoring;
  std::vector<cost::Rollup> kept;
  sim::Time finer = m.interval;
  for (const cost::Rollup& r : m.rollups) {
    if (r.interval <= finer || r.after >= m.retention) continue;
    kept.push_back(r);
    finer = r.interval;
  }
  m.rollups = std::move(kept);
}

/// The monitoring section's relations (rollups by increasing age, each coarser).
void check_monitoring(const Scenario& sc, LoadState& state) {
  for (const cost::ConfigProblem& p : cost::check_monitoring(sc.monitoring)) {
    const std::string at = "monitoring." + p.path;
    state.diagnostics.add(state.where(at), at, p.message, p.hint);
  }
}

/// The network section's relations: the size-factor tables' sizes increase.
void check_network(const Scenario& sc, LoadState& state) {
  const auto sorted = [&](const char* key, const std::vector<network::SizeFactor>& table) {
    const std::size_t i = network::first_unsorted(table);
    if (i == 0) return;
    const std::string at = fmt::format("network.{}[{}].size", key, i);
    // A --set may have moved the point before it in a calibration's table: point at the
    // one the scenario wrote.
    const auto written = [&](std::size_t k) {
      const std::string prefix = fmt::format("network.{}[{}]", key, k);
      const auto it = state.assigned.lower_bound(prefix);
      return it != state.assigned.end() && it->first.rfind(prefix, 0) == 0 ? std::optional(it->second) : std::nullopt;
    };
    const auto exact = state.assigned.find(at);
    const std::optional<Location> here = exact != state.assigned.end() ? std::optional(exact->second) : written(i);
    const std::optional<Location> before = here ? here : written(i - 1);
    state.diagnostics.add(before ? *before : state.where(at), at,
                          fmt::format("sizes must increase from point to point: {} follows {}",
                                      sim::format_bytes(table[i].size), sim::format_bytes(table[i - 1].size)),
                          "list the points by increasing size");
  };
  sorted("scaleup_size_factors", sc.network.scaleup_size_factors);
  sorted("scaleout_size_factors", sc.network.scaleout_size_factors);
}

/// In-network reduction the scenario turns on must be hardware the cluster has: NVLink SHARP
/// (network.nvls) in a Hopper-or-later NVSwitch (A100's NVSwitch has no reduction engine),
/// InfiniBand SHARP (network.sharp) in the switches of a Clos. Else it would be silently
/// unused, or (NVLS on A100) report a bus bandwidth above the NVLink's.
void check_in_network(const LoadedScenario& out, LoadState& state) {
  const network::NetworkConfig& n = out.config.network;
  if (n.nvls) {
    const std::string why = cluster::nvls_unavailable(out.node);
    if (!why.empty()) {
      state.diagnostics.add(state.where("network.nvls"), "network.nvls", "the cluster has no NVLink SHARP: " + why,
                            "remove network.nvls, or set it to false");
    }
  }
  if (n.sharp && (!out.config.fabric || (out.config.fabric->topology != fabric::Topology::fat_tree &&
                                         out.config.fabric->topology != fabric::Topology::rail_clos))) {
    state.diagnostics.add(
        state.where("network.sharp"), "network.sharp",
        out.config.fabric ? fmt::format("SHARP reduces in the switches of a Clos (fat_tree, rail_clos), not of a {}",
                                        config::enum_name(out.config.fabric->topology))
                          : std::string("SHARP reduces in the fabric's switches, and the scenario has no fabric"),
        "remove network.sharp, or set it to false");
  }
}

/// The network keys the scenario wrote (under `network:` or with --set), without the
/// prefix: a calibration, built-in or named, leaves them as written.
std::vector<std::string> network_keys_written(const LoadState& state) {
  std::vector<std::string> keys;
  for (const auto& [key, where] : state.assigned) {
    if (key.rfind("network.", 0) == 0) keys.push_back(key.substr(8));
  }
  return keys;
}

/// Overlays the GPU type's built-in network calibration (models/calibration/network.yaml)
/// on the network model's generic defaults, except the keys the scenario wrote.
void apply_builtin_network(LoadedScenario& out, const LoadState& state) {
  if (const auto builtin = calibration::builtin_network(out.node.gpu_name)) {
    calibration::apply_network(builtin->network, out.config.network, network_keys_written(state));
  }
}

/// Reads the profile named by `calibration:` (relative to the file that named it). Read
/// with the scenario's own checks, so that its errors come out with the scenario's (they
/// came only once the scenario was clean).
std::optional<calibration::CalibrationProfile> read_calibration(const Scenario& config,
                                                                const std::vector<Document>& chain,
                                                                const fs::path& top_dir, LoadState& state) {
  const Location at = state.where("calibration");
  fs::path dir = top_dir;
  for (const Document& doc : chain) {
    if (doc.file == at.file) dir = doc.dir;
  }
  const fs::path p = fs::path(config.calibration).is_absolute() ? fs::path(config.calibration) : dir / config.calibration;
  return calibration::load_profile(p.lexically_normal().string(), state, at, "calibration");
}

/// A profile to use for `gpu`: the one validation/calibration/ ships for a built-in GPU type;
/// none for another (it named validation/calibration/xg.json, which does not exist).
std::string calibration_hint(const std::string& gpu) {
  static const Builtin<hardware::Catalog> builtin =
      decode_builtin<hardware::Catalog>(hardware::kBuiltinCatalogFile, hardware::builtin_catalog_text());
  if (builtin.value.gpus.count(gpu) > 0) return "use a profile for that GPU, e.g. validation/calibration/" + gpu + ".json";
  return "calibration: \"\" for the GPU type's built-in calibration, or a profile fitted for " + gpu +
         " with clustersim calibrate";
}

/// Checks that the profile read is for the cluster's GPU type, and overlays its network
/// parameters on the scenario's, except those the scenario set explicitly.
void load_calibration(LoadedScenario& out, std::optional<calibration::CalibrationProfile> profile, LoadState& state) {
  const Location at = state.where("calibration");
  if (!profile) return;
  if (profile->gpu != out.node.gpu_name) {
    state.diagnostics.add(at, "calibration",
                          fmt::format("the profile '{}' is for GPU type '{}', but the cluster's GPUs are '{}'",
                                      out.config.calibration, profile->gpu, out.node.gpu_name),
                          calibration_hint(out.node.gpu_name));
    return;
  }
  // A profile carries what the GPU achieves; its peaks and SM count are the GPU type's, copied
  // by `calibrate`. One edited (or fitted for another part) changed every step time while the
  // table printed the catalog's peak: 2,000 TFLOP/s in an H200's profile ran at 117% of the
  // 989.4 it printed, MFU taken against the 2,000.
  bool hardware_differs = false;
  if (profile->compute) {
    const compute::ComputeProfile& c = *profile->compute;
    const hardware::GpuSpec& gpu = out.node.gpu;
    const auto where = [&](const std::string& key) {
      const auto it = profile->compute_locations.find(key);
      return it != profile->compute_locations.end() ? it->second : at;
    };
    const auto written = [&](const std::string& key) { return profile->compute_locations.count(key) != 0; };
    const auto differs = [](double a, double b) { return std::fabs(a - b) > 1e-6 * std::max(std::fabs(a), std::fabs(b)); };
    const std::string hint =
        "a profile carries what the GPU achieves; to model another part, give it a GPU type of its own (a catalog "
        "entry or an inline gpu) and fit a profile for that";
    if (written("compute.sms") && c.sms != gpu.sms) {
      state.diagnostics.add(where("compute.sms"), "compute.sms",
                            fmt::format("{} SMs, but the GPU type '{}' has {} (the catalog's sms)", c.sms, out.node.gpu_name,
                                        gpu.sms),
                            hint);
      hardware_differs = true;
    }
    const auto check_peak = [&](std::string_view dtype, const std::optional<sim::FlopRate>& mine,
                                const std::optional<sim::FlopRate>& catalog) {
      const std::string key = fmt::format("compute.peak_flops.{}", dtype);
      if (!written(key)) return;  // (the others keep the catalog's: compute_profile overlays key by key)
      const double a = mine ? mine->value() : 0.0;
      const double b = catalog ? catalog->value() : 0.0;
      if (!differs(a, b)) return;
      state.diagnostics.add(where(key), key,
                            fmt::format("{}, but the GPU type '{}' peaks at {} (the catalog's peak_flops.{})",
                                        mine ? sim::human(*mine) : std::string("none"), out.node.gpu_name,
                                        catalog ? sim::human(*catalog) : std::string("none"), dtype),
                            hint);
      hardware_differs = true;
    };
    config::for_each_field(hardware::PeakFlops::fields(), [&](const auto& f) {
      check_peak(f.key, c.peak_flops.*(f.member), gpu.peak_flops.*(f.member));
    });
  }
  if (hardware_differs) return;
  if (profile->network) calibration::apply_network(*profile->network, out.config.network, network_keys_written(state));
  out.calibration = std::move(profile);
}

/// The calibration keys among the network keys the scenario wrote: "scaleup_size_factors"
/// for "scaleup_size_factors[3].factor".
std::vector<std::string> calibration_overrides(const LoadState& state) {
  std::vector<std::string> keys;
  for (const std::string& written : network_keys_written(state)) {
    const std::string key = written.substr(0, written.find_first_of(".["));
    bool is_calibration = false;
    config::for_each_field(calibration::NetworkCalibration::fields(),
                           [&](const auto& f) { is_calibration = is_calibration || f.key == key; });
    if (is_calibration) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

LoadedScenario load_from(Document top, const LoadOptions& options) {
  LoadState state;
  LoadedScenario out;
  out.file = top.file;
  const fs::path top_dir = top.dir;
  std::vector<Document> chain = read_extends_chain(std::move(top), state);
  for (const Document& doc : chain) {
    state.sources[doc.file] = doc.text;
    config::Codec<Scenario>::decode(doc.root, out.config, Context(state, doc.file));
    if (doc.root.IsMap() && doc.root["description"]) out.description_from = doc.file;
  }
  if (options.sweep_block) {
    const auto& sweep = out.config.sweep;
    *options.sweep_block = sweep && (!sweep->zip.axes.empty() || !sweep->grid.axes.empty());
  }
  if (out.description_from == out.file) out.description_from.clear();
  for (const std::string& set : options.sets) {  // written on the command line: its own
    if (set_key(set) == "description") out.description_from.clear();
  }
  // An empty file (or one of comments only) records no mapping: errors about its missing
  // keys point at its first line rather than at no file at all.
  state.mappings.try_emplace("", Location{out.file, 1, 1});
  std::vector<std::size_t> table_sets;  // indexes into options.sets
  for (std::size_t i = 0; i < options.sets.size(); ++i) {
    const std::string& set = options.sets[i];
    state.set_line = static_cast<int>(i) + 1;
    if (indexes_size_table(set)) {
      const TablePoint point = table_point(i, options.sets);
      if (point == TablePoint::replaced) continue;
      if (point == TablePoint::after_calibration) {
        table_sets.push_back(i);
        continue;
      }
    }
    // The chain of files is read before the overrides: a new `extends` would be ignored.
    if (set_key(set) == "extends") {
      state.diagnostics.add(Location{"<command line>", state.set_line, 1}, "extends",
                            "cannot be overridden with --set: the files a scenario extends are read before "
                            "the overrides",
                            "edit the file's extends: key, or run a scenario that extends the one you want");
      continue;
    }
    config::apply_set(out.config, set, state);
  }
  out.sets = options.sets;
  if (options.seed) {
    // --seed is an override of simulation.seed: with a --set of it too, one would be lost.
    for (std::size_t i = 0; i < options.sets.size(); ++i) {
      const std::string& set = options.sets[i];
      if (set_key(set) != "simulation.seed") continue;
      state.diagnostics.add(Location{"<command line>", static_cast<int>(i) + 1, 1}, "simulation.seed",
                            fmt::format("set twice, by --seed {} and by --set {}: one of the two would be lost",
                                        *options.seed, set),
                            "give one of --seed and --set simulation.seed");
      break;
    }
    out.config.simulation.seed = *options.seed;
  }
  std::optional<calibration::CalibrationProfile> named;
  // The errors the profile's reading adds (the list is kept in file order: told by content).
  std::multiset<std::string> profile_errors;
  if (!out.config.calibration.empty()) {
    std::multiset<std::string> earlier;
    for (const config::Diagnostic& d : state.diagnostics.items()) earlier.insert(d.format());
    named = read_calibration(out.config, chain, top_dir, state);
    for (const config::Diagnostic& d : state.diagnostics.items()) {
      const std::string text = d.format();
      if (const auto it = earlier.find(text); it != earlier.end()) {
        earlier.erase(it);
      } else {
        profile_errors.insert(text);
      }
    }
  }
  if (!state.diagnostics.ok()) {
    // Every error at once: the required keys missing too, but for a key in error or under
    // one (a value that did not decode is not marked written, a section that did not decode
    // misses all its keys), those beside an unknown key or under a mapping beside one
    // (cluster.nodse is likely the missing nodes, a merge key '<<' the missing rest, clustr:
    // the missing cluster), and any when the chain of files is broken (the base may hold them).
    const auto& said = state.diagnostics.items();
    const bool chain_broken =
        std::any_of(said.begin(), said.end(), [](const config::Diagnostic& d) { return d.path == "extends"; });
    LoadState probe = state;
    probe.diagnostics = config::Diagnostics{};
    if (!chain_broken) config::check_required(out.config, "", probe);
    // The sweep block's shape, from the lists that decoded (a zip of two lengths beside an empty
    // grid list), unless a zipped list is in error: its base's list stands in for it, and the
    // lengths would blame the base for the override that failed.
    const bool zip_in_error = std::any_of(said.begin(), said.end(), [](const config::Diagnostic& d) {
      return d.path == "sweep.zip" || config::key_inside("sweep.zip", d.path);
    });
    if (!zip_in_error) check_sweep_shape(out.config, state);
    const auto parent = [](const std::string& path) {
      const std::size_t dot = path.rfind('.');
      return dot == std::string::npos ? std::string() : path.substr(0, dot);
    };
    // An unknown key beside the missing one or beside a mapping above it (clustr: for the
    // missing cluster.nodes).
    const auto beside = [&](const std::string& unknown, std::string path) {
      for (;;) {
        if (parent(unknown) == parent(path)) return true;
        if (path.find('.') == std::string::npos) return false;
        path = parent(path);
      }
    };
    for (const config::Diagnostic& missing : probe.diagnostics.items()) {
      const bool covered = std::any_of(said.begin(), said.end(), [&](const config::Diagnostic& d) {
        return d.path.empty() || d.path == missing.path || config::key_inside(d.path, missing.path) ||
               config::key_inside(missing.path, d.path) ||
               ((d.message.starts_with("unknown key") || d.message.find("merge key") != std::string::npos) &&
                beside(d.path, missing.path));
      });
      if (!covered) state.diagnostics.add(missing.where, missing.path, missing.message, missing.hint);
    }
    // The sections' own relations too (a monitoring interval of 0s, a failure law's mean,
    // the network's size tables), which were said only after a fix; not where the chain of
    // files is broken (the base may hold what they miss), nor beside an error in the same
    // part (a failure component, the monitoring or the network section), whose value that
    // did not decode left a default for them to judge.
    if (!chain_broken) {
      LoadState relations = state;
      relations.diagnostics = config::Diagnostics{};
      adapt_default_rollups(out.config, relations);
      check_monitoring(out.config, relations);
      check_network(out.config, relations);
      check_failure_relations(out.config, relations);
      const auto owner = [](const std::string& path) {
        const std::size_t depth = path.starts_with("failures.components.") ? 3 : path.starts_with("failures.") ? 2 : 1;
        std::size_t end = 0;
        for (std::size_t i = 0; i < depth && end != std::string::npos; ++i) end = path.find('.', end == 0 ? 0 : end + 1);
        return end == std::string::npos ? path : path.substr(0, end);
      };
      const std::vector<config::Diagnostic> before = state.diagnostics.items();
      // An error of a whole file (a scenario's, a base's that did not parse, the command line's)
      // leaves anything unknown; one of the calibration profile's own file (not valid JSON)
      // leaves the scenario's keys as read.
      const auto whole_scenario = [&](const config::Diagnostic& d) {
        return d.path.empty() && profile_errors.count(d.format()) == 0;
      };
      for (const config::Diagnostic& r : relations.diagnostics.items()) {
        const std::string part = owner(r.path);
        const bool covered = std::any_of(before.begin(), before.end(), [&](const config::Diagnostic& d) {
          return whole_scenario(d) || d.path == part || config::key_inside(part, d.path) || config::key_inside(d.path, part);
        });
        if (!covered) state.diagnostics.add(r.where, r.path, r.message, r.hint);
      }
      // The keys of another topology family (dims on a Clos), said only once an unknown key
      // elsewhere was fixed; not beside any error in the fabric section, whose topology may
      // not have decoded.
      {
        LoadState topology = state;
        topology.diagnostics = config::Diagnostics{};
        Scenario copy = out.config;
        reconcile_fabric(copy, topology);
        // (Nor where the topology was not written: judged against the default, while its own
        // missing key may be set aside beside an unknown one.)
        const bool fabric_in_error =
            state.assigned.count("fabric.topology") == 0 ||
            std::any_of(before.begin(), before.end(), [&](const config::Diagnostic& d) {
              return whole_scenario(d) || d.path == "fabric" || config::key_inside("fabric", d.path);
            });
        if (!fabric_in_error) {
          for (const config::Diagnostic& r : topology.diagnostics.items()) state.diagnostics.add(r.where, r.path, r.message, r.hint);
        }
      }
      // The cluster's node type and the jobs' relations too (an unknown node beside a
      // missing fabric key was said only after its fix), where the catalogs, the node and the
      // job at hand decoded: a value in error leaves a default for them to judge.
      const auto in_error = [&](const std::string& part) {
        return std::any_of(before.begin(), before.end(), [&](const config::Diagnostic& d) {
          return whole_scenario(d) || d.path == part || config::key_inside(part, d.path) || config::key_inside(d.path, part);
        });
      };
      if (!in_error("catalogs") && !in_error("nodes") && !in_error("gpus") && !in_error("models")) {
        LoadState side = state;
        side.diagnostics = config::Diagnostics{};
        const Location catalogs_at = state.where("catalogs");
        fs::path catalogs_dir = top_dir;
        for (const Document& doc : chain) {
          if (doc.file == catalogs_at.file) catalogs_dir = doc.dir;
        }
        const hardware::Catalog catalog = load_catalog(out.config.catalogs, catalogs_dir, catalogs_at, side);
        if (side.diagnostics.ok()) {
          // (A node never written is a missing key, said or set aside above.)
          if (!in_error("cluster.node") && state.assigned.count("cluster.node") > 0) {
            (void)resolve_node(out.config.cluster, catalog, side, replaced_catalogs(chain, catalogs_at));
          }
          if (options.resolve) check_jobs_early(out.config, catalog, side);
        }
        // (The list itself in error, or the workload: its entries may have shifted.)
        const bool list_in_error = std::any_of(before.begin(), before.end(), [](const config::Diagnostic& d) {
          return d.path == "workload.jobs" || d.path == "workload";
        });
        for (const config::Diagnostic& r : side.diagnostics.items()) {
          const bool job = r.path.starts_with("workload.jobs[");
          const std::string part = job ? r.path.substr(0, r.path.find(']') + 1) : r.path;
          if (!in_error(part) && !(job && list_in_error)) {
            state.diagnostics.add(r.where, r.path, r.message, r.hint);
          }
        }
      }
    }
    throw InputError(std::move(state.diagnostics), true);
  }

  // From here the scenario has decoded: a stage that stops the load says the failure
  // section's relations too (check_failure_relations()), rather than after a fix.
  // (Every stop but the last leaves checks for after the fix: InputError::more_checks().)
  const auto stop_if_errors = [&] {
    if (state.diagnostics.ok()) return;
    check_failure_relations(out.config, state);
    throw InputError(std::move(state.diagnostics), true);
  };
  reconcile_fabric(out.config, state);
  config::check_required(out.config, "", state);
  adapt_default_rollups(out.config, state);
  check_monitoring(out.config, state);
  check_network(out.config, state);
  check_sweep(out.config, state);
  // (After the sweep block's check: its axes may name the jobs left out.)
  if (options.first_job_only && out.config.workload.jobs.size() > 1) {
    for (std::size_t i = 1; i < out.config.workload.jobs.size(); ++i) {
      const workload::JobConfig& j = out.config.workload.jobs[i];
      out.dropped_jobs.push_back(j.count > 1 ? fmt::format("{} x{}", j.name, j.count) : j.name);
    }
    out.config.workload.jobs.resize(1);
  }
  // (Not for the base of a grid, whose points may set the model's keys; as resolve_jobs.)
  if (options.resolve) check_inline_models(out.config, state);
  std::vector<std::string> files;
  for (const Document& doc : chain) files.push_back(doc.file);
  const WriteOrder order(std::move(files), options.sets.size() - std::min(options.point_sets, options.sets.size()));
  if (options.check_inert) check_inert_keys(out.config, order, options.shared_keys, state, out.shared_inert);
  // The catalogs' own errors need nothing above: said with these (they waited for their fix).

  // Catalog paths are relative to the file that listed them.
  const Location catalogs_at = state.where("catalogs");
  fs::path catalogs_dir = top_dir;
  for (const Document& doc : chain) {
    if (doc.file == catalogs_at.file) catalogs_dir = doc.dir;
  }
  const std::size_t errors_before_catalog = state.diagnostics.items().size();
  out.catalog = load_catalog(out.config.catalogs, catalogs_dir, catalogs_at, state);
  // Where the first checks found errors, the cluster's node is resolved with them (an unknown
  // node type beside a missing fabric key was said only after its fix), if the catalogs
  // loaded and it decoded; resolve_node() says it once, as the load stops here.
  const auto said_at = [&](const std::string& part) {
    const auto& items = state.diagnostics.items();
    return std::any_of(items.begin(), items.end(), [&](const config::Diagnostic& d) {
      return d.path == part || config::key_inside(part, d.path) || config::key_inside(d.path, part);
    });
  };
  if (!state.diagnostics.ok() && state.diagnostics.items().size() == errors_before_catalog && !said_at("cluster.node") &&
      state.assigned.count("cluster.node") > 0) {
    (void)resolve_node(out.config.cluster, out.catalog, state, replaced_catalogs(chain, catalogs_at));
  }
  // Where the first checks found errors, the jobs' relations come with them (else they are
  // checked as the jobs are placed, with the rest), and so where the node does not resolve.
  bool jobs_checked = false;
  const auto check_jobs_now = [&] {
    if (!options.resolve || state.diagnostics.ok() || jobs_checked) return;
    jobs_checked = true;
    check_jobs_early(out.config, out.catalog, state);
  };
  check_jobs_now();
  stop_if_errors();
  // Every node type, not only the one the cluster uses: a catalog entry that names a GPU it
  // lacks, or holds more NICs than GPUs, is wrong whichever node a --set or a sweep picks
  // later. (The cluster's own node is said once, by resolve_node below.)
  for (const auto& [name, spec] : out.catalog.nodes) {
    if (!out.config.cluster.node.inline_def && out.config.cluster.node.name == name) continue;
    cluster::ClusterConfig probe;
    probe.node.name = name;
    (void)resolve_node(probe, out.catalog, state);
  }
  check_jobs_now();
  stop_if_errors();

  if (auto node = resolve_node(out.config.cluster, out.catalog, state, replaced_catalogs(chain, state.where("catalogs")))) {
    out.node = std::move(*node);
    // (With a fabric, said by the fabric's build with its NICs.)
    const std::int64_t gpus = out.config.cluster.nodes * out.node.spec.gpus;
    if (!out.config.fabric && gpus > cluster::kMaxGpus) {
      state.diagnostics.add(state.where("cluster.nodes"), "cluster.nodes",
                            fmt::format("the cluster has {} GPUs ({} nodes of {} GPUs); clustersim models at most {}",
                                        gpus, out.config.cluster.nodes, out.node.spec.gpus, cluster::kMaxGpus),
                            fmt::format("nodes: {} or fewer", cluster::kMaxGpus / out.node.spec.gpus));
    }
  }
  check_jobs_now();
  stop_if_errors();
  check_in_network(out, state);

  apply_builtin_network(out, state);
  load_calibration(out, std::move(named), state);
  check_jobs_now();
  stop_if_errors();
  for (const std::size_t i : table_sets) {
    const std::string& set = options.sets[i];
    state.set_line = static_cast<int>(i) + 1;
    const bool scaleup = set.rfind("network.scaleup_size_factors[", 0) == 0;
    const char* key = scaleup ? "scaleup_size_factors" : "scaleout_size_factors";
    if ((scaleup ? out.config.network.scaleup_size_factors : out.config.network.scaleout_size_factors).empty()) {
      state.diagnostics.add(
          // At the index, as an index past a list's end is.
          Location{"<command line>", state.set_line, static_cast<int>(set.find('[')) + 1}, fmt::format("network.{}", key),
          fmt::format("is empty in {}: neither the scenario nor its calibration ({}) has a size table, so there "
                      "is no point to index",
                      out.file,
                      out.calibration ? out.config.calibration
                      : calibration::builtin_network(out.node.gpu_name)
                          ? "built-in for " + out.node.gpu_name
                          : "generic network defaults"),
          fmt::format("set the whole table, e.g. --set 'network.{}=[{{size: 1MiB, factor: 0.5}}, {{size: 64MiB, "
                      "factor: 1.0}}]'",
                      key));
      continue;
    }
    config::apply_set(out.config, set, state);
  }
  if (!table_sets.empty()) check_network(out.config, state);
  check_sweep_values(out.config, true, state);
  out.calibration_overrides = calibration_overrides(state);
  stop_if_errors();
  out.pricing = load_pricing(state);  // (the built-in table: a base that stops here prices its node too)
  if (!options.resolve) return out;

  if (out.config.fabric) {
    std::vector<fabric::FabricError> errors;
    // Which cables leave a rack (torus, dragonfly): the rack packing the cost model uses.
    fabric::FabricConfig built = *out.config.fabric;
    built.nodes_per_rack = cost::price_node(out.node.name, out.node.gpu_name, out.node.spec.gpus, out.pricing,
                                            out.config.economics)
                               .nodes_per_rack;
    out.fabric = fabric::build_fabric(built, out.node, out.config.cluster.nodes, errors);
    for (fabric::FabricError& e : errors) {
      state.diagnostics.add(state.where(e.path), e.path, std::move(e.message), std::move(e.hint));
    }
  }
  // A fabric in error stops nothing yet: the jobs' errors (one that does not fit in HBM) need
  // the node alone, and are said with it rather than after its fix.
  out.jobs = resolve_jobs(out, options.check_memory, state);
  stop_if_errors();
  if (options.check_inert) {
    check_inert_checkpoint(out, order, options.shared_keys, state);
    check_inert_hashing(out, order, options.shared_keys, state);
  }
  check_reliability(out, state);
  if (!state.diagnostics.ok()) throw InputError(std::move(state.diagnostics));
  return out;
}

}  // namespace

bool jobs_queue(const LoadedScenario& loaded) {
  std::int64_t gpus = 0;
  for (const ResolvedJob& job : loaded.jobs) {
    gpus += job.config.gpus;
    if (job.config.submit.seconds() > 0.0) return true;
  }
  return gpus > loaded.config.cluster.nodes * loaded.node.spec.gpus;
}

double checkpoint_bytes(const LoadedScenario& loaded, const ResolvedJob& job) {
  const std::optional<sim::Bytes>& size = loaded.config.checkpoint.size;
  return size ? size->value() : 14.0 * workload::parameters(job.model).total;
}

bool long_run(const LoadedScenario& loaded) {
  const Scenario& sc = loaded.config;
  return sc.failures || jobs_queue(loaded) ||
         (!loaded.jobs.empty() && (!sc.checkpoint.interval.automatic || sc.simulation.horizon));
}

std::string_view long_run_label(const LoadedScenario& loaded) {
  if (loaded.config.failures) return "with failures";
  if (jobs_queue(loaded)) return "in the queue";
  if (!loaded.config.checkpoint.interval.automatic) return "with checkpoints";
  return "over the horizon";
}

LoadedScenario load_scenario(const std::string& path, const LoadOptions& options) {
  LoadState state;
  std::optional<Document> doc = read_document(path, state, Location{}, "");
  if (!doc) throw InputError(std::move(state.diagnostics), true);
  return load_from(std::move(*doc), options);
}

LoadedScenario load_default_scenario(const LoadOptions& options) {
  LoadState state;
  std::optional<Document> doc = parse_document(std::string(kBuiltinPrefix) + "quickstart.yaml", {},
                                               std::string(builtin_scenario_text("quickstart.yaml")), state);
  if (!doc) throw InputError(std::move(state.diagnostics), true);
  doc->builtin = true;
  return load_from(std::move(*doc), options);
}

bool describe(std::string_view section, std::vector<config::FieldDoc>& out) {
  if (section == "catalog") {
    out = config::describe<hardware::Catalog>();
    return true;
  }
  std::vector<config::FieldDoc> all = config::describe<Scenario>();
  // The network keys a GPU type's built-in calibration sets have that as their default.
  const std::vector<std::string> per_gpu = calibration::builtin_network_keys();
  for (config::FieldDoc& doc : all) {
    if (doc.path.rfind("network.", 0) == 0 &&
        std::find(per_gpu.begin(), per_gpu.end(), doc.path.substr(8)) != per_gpu.end()) {
      doc.default_note = fmt::format("generic; per GPU type in {}", calibration::kBuiltinNetworkFile);
    }
  }
  if (section.empty()) {
    out = std::move(all);
    return true;
  }
  for (config::FieldDoc& doc : all) {
    const std::string_view p = doc.path;
    if (p == section || (p.size() > section.size() && p.substr(0, section.size()) == section &&
                         (p[section.size()] == '.' || p[section.size()] == '['))) {
      out.push_back(std::move(doc));
    }
  }
  return !out.empty();
}

}  // namespace clustersim::scenario

namespace clustersim::config {

bool Codec<scenario::SweepAxes>::decode(const YAML::Node& n, scenario::SweepAxes& out, const Context& ctx) {
  if (n.IsNull()) {  // `grid: ~` empties it, as any mapping of names; `grid:` changes nothing
    if (ctx.explicit_null(n)) {
      ctx.state().forget_below(ctx.path());
      out.axes.clear();
    }
    return true;
  }
  if (!n.IsMap()) {
    ctx.error(n, fmt::format("expected a mapping of scenario keys to lists of values, got {}", describe_node(n)),
              "e.g. cluster.nodes: [1024, 2048, 4096]");
    return false;
  }
  return decode_entries(n, ctx, "a scenario key", [&](const std::string& key, const YAML::Node& list, const Context& at) {
    if (!list.IsSequence() || list.size() == 0) {
      at.error(list,
               fmt::format("expected a non-empty list of values, got {}",
                           list.IsSequence() ? std::string("an empty list") : describe_node(list)),
               fmt::format("{}: [a, b, c]", key));
      return false;
    }
    scenario::SweepAxis axis{key, {}, {}};
    for (std::size_t i = 0; i < list.size(); ++i) {
      axis.where.push_back(at.locate(list[i]));
      YAML::Emitter e;
      e.SetMapFormat(YAML::Flow);
      e.SetSeqFormat(YAML::Flow);
      // A quoted number or boolean stays quoted, so that its key refuses it as it does at the
      // top level (emitted plain, "0.8" ran as 0.8); other quoted text is emitted as before.
      const YAML::Node& v = list[i];
      double number = 0.0;
      const bool quoted_literal =
          v.IsScalar() && v.Tag() == "!" &&
          (v.Scalar() == "true" || v.Scalar() == "false" ||
           (!v.Scalar().empty() &&
            std::from_chars(v.Scalar().data(), v.Scalar().data() + v.Scalar().size(), number).ptr ==
                v.Scalar().data() + v.Scalar().size()));
      if (quoted_literal) {
        e << YAML::DoubleQuoted << v.Scalar();
      } else {
        e << v;
      }
      axis.values.emplace_back(e.c_str());
    }
    at.mark_assigned(list);
    const auto same = std::find_if(out.axes.begin(), out.axes.end(),
                                   [&](const scenario::SweepAxis& a) { return a.key == key; });
    if (same != out.axes.end()) {
      *same = std::move(axis);
    } else {
      out.axes.push_back(std::move(axis));
    }
    return true;
  });
}

Json Codec<scenario::SweepAxes>::encode(const scenario::SweepAxes& v) {
  Json j = Json::object();
  for (const scenario::SweepAxis& a : v.axes) j[a.key] = a.values;
  return j;
}

}  // namespace clustersim::config
