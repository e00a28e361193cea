# Records the git commit the build came from, for results' provenance (`clustersim
# --version`, results' "clustersim" keys, sweep.base.json).
#
# The commit is read at every build, not once at configure time: a rebuild after a new
# commit (or a pull) without a new configure says the new commit. cmake/WriteGitVersion.cmake
# rewrites the generated source only when its text changes, so a build on the same commit
# recompiles nothing. "unknown" outside a git checkout; "-dirty" when tracked files differ
# from the commit.
find_package(Git QUIET)
set(CLUSTERSIM_VERSION_CPP "${PROJECT_BINARY_DIR}/generated/tools/clustersim/version.cpp")
set(_clustersim_version_args
    "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DGIT_EXECUTABLE=${GIT_EXECUTABLE}"
    "-DPROJECT_VERSION=${PROJECT_VERSION}" "-DIN=${PROJECT_SOURCE_DIR}/tools/clustersim/version.cpp.in"
    "-DOUT=${CLUSTERSIM_VERSION_CPP}")
# Once now, so that the file exists for the first build's dependency scan.
execute_process(COMMAND "${CMAKE_COMMAND}" ${_clustersim_version_args}
                -P "${PROJECT_SOURCE_DIR}/cmake/WriteGitVersion.cmake")
add_custom_target(clustersim_git_version
                  COMMAND "${CMAKE_COMMAND}" ${_clustersim_version_args}
                          -P "${PROJECT_SOURCE_DIR}/cmake/WriteGitVersion.cmake"
                  BYPRODUCTS "${CLUSTERSIM_VERSION_CPP}"
                  COMMENT "Reading the git commit"
                  VERBATIM)
