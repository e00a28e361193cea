#!/usr/bin/env bash
# Installs the Debian packages clustersim needs to build and test.
# Idempotent: packages already present are skipped, `apt-get update` runs only when needed.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config ccache
  libboost-graph-dev libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev doctest-dev
  libopenmpi-dev openmpi-bin
  python3 python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
