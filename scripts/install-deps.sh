#!/usr/bin/env bash
# Installs every Debian package that building, testing and running Accord needs.
# Idempotent: packages already present are left as they are. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  # The asan configuration and its fuzz targets (tests/fuzz): clang 16 with its runtimes,
  # libclang_rt.fuzzer among them. Not Debian 12's default clang 14: it lacks
  # __builtin_source_location, so libstdc++ 12's std::source_location (accord/status.h)
  # does not compile with it.
  clang-16 libclang-rt-16-dev
  catch2 libbenchmark-dev
  libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsystemd-dev libze1 libze-dev
  python3 python3-grpcio python3-protobuf
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
