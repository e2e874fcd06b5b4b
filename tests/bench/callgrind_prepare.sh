#!/usr/bin/env bash
# Instructions per declared access of prepare and its parts, counted by callgrind: unlike
# times, these do not move with other load on a shared machine. Needs valgrind.
# Run: tests/bench/callgrind_prepare.sh [build-dir]   (default build-bench; about a minute)
set -euo pipefail

build=${1:-build-bench}
bench="$build/tests/bench/prepare_bench"
[[ -x $bench ]] || { echo "no $bench: ninja -C $build prepare_bench" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%8s | %9s | %10s | %10s | %10s | %10s | %10s\n' N accesses prepare frontier summary lower rest
printf -- '---------+-----------+------------+------------+------------+------------+-----------\n'
# Ir that callgrind collects while inside `pattern`, for one graph size.
collected() {
  valgrind --tool=callgrind --toggle-collect="$1" --callgrind-out-file="$work/cg" "$bench" \
      --config "$2" --iterations "$3" 2>&1 >/dev/null | awk '/Collected :/ {print $NF}'
}

for n in 100 1000 10000; do
  iterations=$((50000 / n))
  [[ $iterations -ge 3 ]] || iterations=3
  accesses=$("$bench" --config "$n" --iterations 1 | awk -F'|' -v n="$n" '$1+0 == n && NF == 6 {print $2+0; exit}')
  # With --iterations the bench warms up once, so Session::prepare runs iterations + 1
  # times; the frontier, summary and host lowering run that often inside it and as often
  # again timed alone.
  calls=$((iterations + 1))
  awk -v n="$n" -v a="$accesses" -v c="$calls" \
      -v p="$(collected 'accord::engine::Session::prepare*' "$n" "$iterations")" \
      -v f="$(collected 'accord::engine::infer_dependencies*' "$n" "$iterations")" \
      -v s="$(collected 'accord::engine::AccessSummary::build*' "$n" "$iterations")" \
      -v l="$(collected 'accord::devices::host::HostDevice::lower*' "$n" "$iterations")" 'BEGIN {
    p /= c * a; f /= 2 * c * a; s /= 2 * c * a; l /= 2 * c * a
    printf "%8d | %9d | %10.0f | %10.0f | %10.0f | %10.0f | %10.0f\n", n, a, p, f, s, l, p - f - s - l
  }'
done
echo "(instructions per access; rest = prepare - frontier - summary - lower)"
