#include "models/config/diagnostics.hpp"

#include <fmt/format.h>

namespace clustersim::config {

std::string Diagnostic::format() const {
  std::string out = where.file;
  if (where.line > 0) out += fmt::format(":{}:{}", where.line, where.column);
  out += ": ";
  if (!path.empty()) out += path + ": ";
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

void Diagnostics::add(Location where, std::string path, std::string message, std::string hint) {
  items_.push_back(Diagnostic{std::move(where), std::move(path), std::move(message), std::move(hint)});
}

std::string Diagnostics::format() const {
  std::string out;
  for (const Diagnostic& d : items_) out += d.format() + "\n";
  return out;
}

}  // namespace clustersim::config
