#!/usr/bin/env bash
# check_package.sh BUILD_DIR SOURCE_DIR: installs the build into a temporary prefix,
# then configures, builds and runs tests/package/consumer against it.
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d /tmp/accord-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/tests/package/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
