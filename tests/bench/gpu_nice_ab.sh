#!/bin/bash
# accordd at nice -10 against nice 0 (ACCORD_BENCH_ACCORDD_NICE, as the unit's Nice= sets
# it) on a GPU machine, as root, in one call of about 8 minutes: every GPU check of the
# tree, then alternately in three rounds, so that drift touches both sides alike, issue
# 9's rows that share the CPUs between accordd and its clients: 16 client processes
# looping a 10-kernel graph, host submissions per second for 1..64 processes, and the
# 1- and 10-kernel graphs through accordd; then the same 16 processes under MPS for the
# ratio. Writes OUT_DIR/rows.log and the checks' logs.
#   tests/bench/gpu_nice_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_nice_ab.sh "$@"
bench=$build/tests/bench
nproc; date
timeout 240 "$here/tests/gpu/run_gpu_checks.sh" "$build" "$out/checks" 30
for round in 1 2 3; do
  for nice in 0 -10; do
    export ACCORD_BENCH_ACCORDD_NICE=$nice
    row "round $round: 16 processes through accordd, nice $nice" "$bench/gpu_graph_bench" --config processes:accordd
    row "round $round: host throughput, nice $nice" "$bench/daemon_scale_bench" --config throughput --seconds 3
    row "round $round: accordd 1/10 kernels, nice $nice" "$bench/gpu_graph_bench" --config daemon --iterations 10000
  done
done
rows_finish "$bench/gpu_graph_bench"
