// Internal errors: a broken invariant of our own code, as opposed to bad user input.
//
// User input errors are collected as diagnostics by the scenario loader and reported
// together; an internal error is a bug in clustersim, thrown with our file and line so
// that the report points at the code, and caught only in main().
#pragma once

#include <stdexcept>
#include <string>

namespace clustersim::sim {

class InternalError : public std::logic_error {
 public:
  InternalError(const std::string& what, const char* file, int line)
      : std::logic_error(std::string(file) + ":" + std::to_string(line) + ": internal error: " + what) {}
};

/// The input asks for more than clustersim simulates (more flows at once than the flow model
/// holds, more node replacements than a fleet could see): not a bug, an input error that the
/// commands report as such (exit 2), with what to change.
class LimitError : public std::runtime_error {
 public:
  explicit LimitError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace clustersim::sim

/// Throws sim::InternalError naming this file and line when `cond` is false.
#define CLUSTERSIM_CHECK(cond, message)                                          \
  do {                                                                           \
    if (!(cond)) [[unlikely]]                                                    \
      throw ::clustersim::sim::InternalError((message), __FILE__, __LINE__);     \
  } while (false)
