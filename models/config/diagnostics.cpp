#include "models/config/diagnostics.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace clustersim::config {

std::string quoted_in(std::string_view what) {
  const std::size_t open = what.find('\'');
  if (open == std::string_view::npos) return {};
  const std::size_t close = what.find('\'', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(what.substr(open + 1, close - open - 1));
}

namespace {

std::mutex inputs_mutex;
std::set<std::filesystem::path>& inputs_read() {
  static std::set<std::filesystem::path> inputs;
  return inputs;
}

std::filesystem::path canonical_name(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::path(path) : p;
}

}  // namespace

bool is_input_file(const std::string& path) {
  const std::filesystem::path p = canonical_name(path);
  const std::lock_guard<std::mutex> lock(inputs_mutex);
  return inputs_read().count(p) > 0;
}

bool read_input_file(const std::string& path, std::string& out, std::string& why) {
  namespace fs = std::filesystem;
  std::error_code ec;
  {
    const fs::path p = canonical_name(path);
    const std::lock_guard<std::mutex> lock(inputs_mutex);
    inputs_read().insert(p);
  }
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    why = ec ? ec.message() : std::strerror(ENOENT);
    return false;
  }
  if (fs::is_directory(st)) {
    why = "is a directory";
    return false;
  }
  if (!fs::is_regular_file(st)) {
    why = "is not a regular file (a device, a pipe or a socket)";
    return false;
  }
  if (const auto size = fs::file_size(path, ec); !ec && size > static_cast<std::uintmax_t>(kMaxInputBytes)) {
    why = fmt::format("is larger than {} MiB ({} bytes): not an input file", kMaxInputBytes >> 20, size);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = std::strerror(errno);
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  out = buf.str();
  // Every input is text: a NUL byte means a binary file (an archive, a core dump), which
  // the parsers would report with that byte in their message.
  if (const std::size_t nul = out.find('\0'); nul != std::string::npos) {
    const bool utf32 = out.rfind(std::string("\xff\xfe\0\0", 4), 0) == 0 || out.rfind(std::string("\0\0\xfe\xff", 4), 0) == 0;
    const bool utf16 = out.size() >= 2 && ((out[0] == '\xff' && out[1] == '\xfe') || (out[0] == '\xfe' && out[1] == '\xff'));
    const auto line = 1 + std::count(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    why = utf32   ? std::string("is UTF-32 text; save it as UTF-8")
          : utf16 ? std::string("is UTF-16 text; save it as UTF-8")
                  : fmt::format("is not a text file (a NUL byte on line {}, at byte {} of the file)", line, nul + 1);
    out.clear();
    return false;
  }
  // Lines ended by CR alone (classic Mac OS): YAML reads the file as one line, and said
  // "illegal map value" at a column past the first line's end.
  if (out.find('\n') == std::string::npos && out.find('\r') != std::string::npos &&
      out.find('\r') + 1 < out.size()) {
    why = "ends its lines with CR alone (classic Mac OS line endings); save it with LF (or CRLF) line endings";
    out.clear();
    return false;
  }
  // Every input is UTF-8 text (YAML, JSON): other bytes would reach the outputs, where the
  // JSON writer cannot hold them.
  if (const std::size_t bad = first_invalid_utf8(out); bad != std::string::npos) {
    const auto newline = out.rfind('\n', bad == 0 ? 0 : bad - 1);
    const std::size_t line_start = newline == std::string::npos || bad == 0 ? 0 : newline + 1;
    const auto line = 1 + std::count(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    const int bom = line_start == 0 && out.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // not counted as a column
    why = fmt::format("is not valid UTF-8 (byte 0x{:02x} on line {}, column {}): save it as UTF-8", static_cast<unsigned char>(out[bad]),
                      line, character_column(out, static_cast<int>(line - 1), static_cast<int>(bad - line_start) - bom));
    out.clear();
    return false;
  }
  return true;
}

std::size_t first_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (RFC 3629, section 4)
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size() || b(i + 1) < lo || b(i + 1) > hi) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if ((b(i + k) & 0xC0U) != 0x80U) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

int character_column(std::string_view text, int line, int byte_column) {
  std::size_t at = 0;
  for (int l = 0; l < line && at < text.size(); ++l) {
    const std::size_t newline = text.find('\n', at);
    at = newline == std::string_view::npos ? text.size() : newline + 1;
  }
  if (line == 0 && text.substr(0, 3) == "\xEF\xBB\xBF") at = 3;
  const std::size_t end = std::min(text.find('\n', at), text.size());
  const std::size_t bytes = static_cast<std::size_t>(std::max(0, byte_column));
  const std::string_view before = text.substr(at, std::min(bytes, end - at));
  // Continuation bytes (10xxxxxx) belong to the character before them.
  const auto characters = std::count_if(before.begin(), before.end(),
                                        [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; });
  return static_cast<int>(characters) + static_cast<int>(bytes - before.size()) + 1;
}

namespace {

// Control characters of a message (a parser quoting a binary byte) as \xNN: a terminal
// would act on them, and a NUL cuts the line short.
std::string visible(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string Diagnostic::format() const {
  std::string out = visible(where.file);
  if (where.line > 0) out += fmt::format(":{}:{}", where.line, where.column);
  out += ": ";
  if (!path.empty()) out += visible(path) + ": ";
  out += visible(message);
  if (!hint.empty()) out += " (" + visible(hint) + ")";
  return out;
}

void Diagnostics::add(Location where, std::string path, std::string message, std::string hint) {
  // Kept in file order (the files as they were first named, each by line and column; one
  // without a line first): the checks run stage by stage, not in the order of the text, and
  // whoever reads the list, or only its first item, reads it as the text runs.
  // A new file, or a place after the last item's in its file (the common cases: a reader
  // going down its file), is appended without a search.
  const bool known = !files_.insert(where.file).second;
  const bool in_order = !items_.empty() && items_.back().where.file == where.file &&
                        std::pair(items_.back().where.line, items_.back().where.column) <= std::pair(where.line, where.column);
  if (!known || in_order) {
    items_.push_back(Diagnostic{std::move(where), std::move(path), std::move(message), std::move(hint)});
    return;
  }
  const auto file_end = std::find_if(items_.rbegin(), items_.rend(),
                                     [&](const Diagnostic& d) { return d.where.file == where.file; });
  auto at = items_.end();
  if (file_end != items_.rend()) {
    at = file_end.base();  // after the file's last item; then back over those that come later
    while (at != items_.begin() && std::prev(at)->where.file == where.file &&
           std::pair(std::prev(at)->where.line, std::prev(at)->where.column) > std::pair(where.line, where.column)) {
      --at;
    }
  }
  items_.insert(at, Diagnostic{std::move(where), std::move(path), std::move(message), std::move(hint)});
}

std::string Diagnostics::format() const {
  std::string out;
  for (const Diagnostic& d : items_) out += d.format() + "\n";
  return out;
}

}  // namespace clustersim::config
