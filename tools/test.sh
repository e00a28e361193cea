#!/usr/bin/env bash
# Installs what is needed, builds the release preset and runs every test.
# The README's second command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset release
cmake --build --preset release -j2
ctest --preset release -j2
