// The clustersim version and the git commit it was built from (results' provenance). The
// commit is read at every build (cmake/GitVersion.cmake), into a generated source of its own
// so that a new commit recompiles that one file.
#pragma once

namespace clustersim::tools {
extern const char* const kVersion;
extern const char* const kGitCommit;  ///< 12 hex digits, "-dirty" if edited, or "unknown"
}  // namespace clustersim::tools
