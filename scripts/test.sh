#!/usr/bin/env bash
# All tests: install what is needed, then build and run each configuration once:
#   debug  - every suite
#   asan   - every suite under AddressSanitizer + UndefinedBehaviorSanitizer, built with
#            clang 16 so that the libFuzzer targets (tests/fuzz) build and run there too
#   tsan   - the engine (scheduler), the CUDA backend (on its stand-in driver) and the
#            conformance suites under ThreadSanitizer
# ACCORD_TEST_CONFIGS="debug asan tsan" selects configurations.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/install-deps.sh"
configs=${ACCORD_TEST_CONFIGS:-"debug asan tsan"}
jobs=${ACCORD_TEST_JOBS:-$(nproc)}
start=$SECONDS
failed=()

run_config() {
  local name=$1 type=$2; shift 2
  local dir="$here/build/$name"
  local t0=$SECONDS
  echo "== [$name] building ($type)"
  "$here/scripts/build.sh" "$type" "$dir" -DACCORD_WERROR=ON "$@"
  echo "== [$name] testing"
  if (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 300); then
    echo "== [$name] passed in $((SECONDS - t0)) s"
  else
    echo "== [$name] FAILED"
    failed+=("$name")
  fi
}

# CI keeps only the tail of this script's output, so the failures are told again at the
# end: each failed test's name and the last lines it printed.
report_failures() {
  local name=$1 dir="$here/build/$1/Testing/Temporary"
  [[ -f $dir/LastTestsFailed.log ]] || return 0
  echo "== [$name] failed tests:"
  sed 's/^/   /' "$dir/LastTestsFailed.log"
  while IFS=: read -r _ test; do
    echo "== [$name] the end of what '$test' printed:"
    awk -v t="$test" '
      /^[0-9]+\/[0-9]+ Testing: / { on = (substr($0, index($0, ": ") + 2) == t) }
      on { buf[n++ % 40] = $0 }
      END { for (i = (n > 40 ? n - 40 : 0); i < n; i++) print "   " buf[i % 40] }
    ' "$dir/LastTest.log"
  done < "$dir/LastTestsFailed.log"
}

for c in $configs; do
  case $c in
    debug) run_config debug Debug -DACCORD_BUILD_BENCHMARKS=ON ;;
    asan)
      ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
      UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        run_config asan Asan -DACCORD_BUILD_BENCHMARKS=OFF -DACCORD_BUILD_EXAMPLES=OFF \
          -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 ;;
    tsan)
      TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tests/tsan.supp} \
        run_config tsan Tsan -DACCORD_BUILD_BENCHMARKS=OFF -DACCORD_BUILD_EXAMPLES=OFF \
          "-DACCORD_TEST_SUITES=unit/engine;unit/devices/cuda;plugins;conformance" ;;
    *) echo "unknown configuration '$c' (debug, asan, tsan)"; exit 2 ;;
  esac
done

echo "== all configurations took $((SECONDS - start)) s"
if ((${#failed[@]})); then
  for c in "${failed[@]}"; do report_failures "$c"; done
  echo "== FAILED: ${failed[*]}"
  exit 1
fi
echo "== every configuration passed: $configs"
