#!/usr/bin/env bash
# Installs what is needed, builds the release preset and runs a scenario (default: the
# built-in quickstart). Extra arguments go to `clustersim run`.
# The README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j2
exec build/release/tools/clustersim/clustersim run "$@"
