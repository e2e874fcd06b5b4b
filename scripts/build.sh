#!/usr/bin/env bash
# scripts/build.sh BUILD_TYPE [BUILD_DIR] [extra cmake args...]
# Configures (once) and builds one configuration with Ninja and ccache.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
type=${1:-Release}
dir=${2:-$here/build/$(echo "$type" | tr '[:upper:]' '[:lower:]')}
shift $(( $# >= 2 ? 2 : $# ))
export CCACHE_DIR=${CCACHE_DIR:-$here/.cache/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
jobs=${ACCORD_BUILD_JOBS:-$(nproc)}
cmake --build "$dir" -j "$jobs"
