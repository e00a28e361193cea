# The commit a build records is read at every build (cmake/WriteGitVersion.cmake): a new
# commit is seen without a new configure, an unchanged one leaves the generated source
# untouched (nothing recompiles), and edited tracked files mark it "-dirty".
# cmake -DGIT_EXECUTABLE=... -DSCRIPT=.../WriteGitVersion.cmake -DTEMPLATE=.../version.cpp.in -DTMP=... -P git_version.cmake
file(REMOVE_RECURSE "${TMP}")
file(MAKE_DIRECTORY "${TMP}/repo")
set(OUT "${TMP}/version.cpp")
# TMP lies inside the build tree, maybe inside a checkout: git must not look above it.
set(ENV{GIT_CEILING_DIRECTORIES} "${TMP}")

function(git)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -c user.name=test -c user.email=test@example.com
                          -c commit.gpgsign=false ${ARGN}
                  WORKING_DIRECTORY "${TMP}/repo" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ${ARGN} failed: ${err}")
  endif()
  set(git_out "${out}" PARENT_SCOPE)
endfunction()

function(write_version)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${TMP}/repo" "-DGIT_EXECUTABLE=${GIT_EXECUTABLE}"
                          -DPROJECT_VERSION=9.8.7 "-DIN=${TEMPLATE}" "-DOUT=${OUT}" -P "${SCRIPT}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "WriteGitVersion.cmake failed")
  endif()
endfunction()

function(expect_commit want)
  file(READ "${OUT}" text)
  if(NOT text MATCHES "kGitCommit = \"${want}\";")
    message(FATAL_ERROR "expected commit \"${want}\" in ${OUT}, got:\n${text}")
  endif()
  if(NOT text MATCHES "kVersion = \"9.8.7\";")
    message(FATAL_ERROR "expected version 9.8.7 in ${OUT}, got:\n${text}")
  endif()
endfunction()

# Outside a git checkout: unknown.
write_version()
expect_commit("unknown")

# Sources inside another repository (unpacked into its tree): unknown, not its commit.
file(MAKE_DIRECTORY "${TMP}/outer/src")
file(WRITE "${TMP}/outer/o.txt" "outer\n")
foreach(step "init -q" "add o.txt" "commit -q -m outer")
  separate_arguments(args UNIX_COMMAND "${step}")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -c user.name=test -c user.email=test@example.com -c commit.gpgsign=false
                          ${args} WORKING_DIRECTORY "${TMP}/outer" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ${step} failed in the outer repository")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${TMP}/outer/src" "-DGIT_EXECUTABLE=${GIT_EXECUTABLE}"
                        -DPROJECT_VERSION=9.8.7 "-DIN=${TEMPLATE}" "-DOUT=${OUT}" -P "${SCRIPT}")
expect_commit("unknown")

git(init -q)
file(WRITE "${TMP}/repo/a.txt" "one\n")
git(add a.txt)
git(commit -q -m one)
git(rev-parse --short=12 HEAD)
set(first "${git_out}")
write_version()
expect_commit("${first}")

# The same commit again: the file is not rewritten.
file(TIMESTAMP "${OUT}" before "%Y-%m-%dT%H:%M:%S")
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1.1)
write_version()
file(TIMESTAMP "${OUT}" after "%Y-%m-%dT%H:%M:%S")
if(NOT before STREQUAL after)
  message(FATAL_ERROR "the generated source was rewritten on an unchanged commit (${before} -> ${after})")
endif()

# A new commit, no new configure: the new commit.
file(WRITE "${TMP}/repo/a.txt" "two\n")
git(commit -q -a -m two)
git(rev-parse --short=12 HEAD)
set(second "${git_out}")
if(second STREQUAL first)
  message(FATAL_ERROR "two commits with one hash")
endif()
write_version()
expect_commit("${second}")

# A tracked file edited: dirty. An untracked one does not count.
file(WRITE "${TMP}/repo/b.txt" "untracked\n")
write_version()
expect_commit("${second}")
file(WRITE "${TMP}/repo/a.txt" "three\n")
write_version()
expect_commit("${second}-dirty")
message(STATUS "git version: ok")
