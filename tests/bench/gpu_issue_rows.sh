#!/bin/bash
# Every GPU row of issues 7 ("CUDA backend") and 9 ("Submission ring") once, on a GPU
# machine, as root, in one call of about 6 minutes: every GPU check of the tree first,
# then the rows with the tree's defaults (accordd at nice -10, as its systemd unit runs
# it), and the same 16 tenants as processes under MPS last, for the ratios. Writes
# OUT_DIR/rows.log and the checks' logs; prints the rows.
#   tests/bench/gpu_issue_rows.sh BUILD_DIR OUT_DIR
set -uo pipefail
row_limit=150
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_issue_rows.sh "$@"
bench=$build/tests/bench/gpu_graph_bench
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
# ACCORD_ROWS_CHECKS=0: the rows alone, for a call that runs the checks after them.
[[ ${ACCORD_ROWS_CHECKS:-1} == 0 ]] || timeout 260 "$here/tests/gpu/run_gpu_checks.sh" "$build" "$out/checks" 30
row "issue 7: embedded latency, 1 / 10 / 100 kernels" "$bench" --config latency --iterations 6000
row "issue 7: noisy neighbour, embedded" "$bench" --config neighbour --iterations 3000
for round in 1 2; do row "issue 7: 16 embedded runtimes, round $round" "$bench" --config tenants:accord; done
export ACCORD_BENCH_ACCORDD_NICE=-10
row "issue 9: accordd 1 / 10 kernels" "$bench" --config daemon --iterations 10000
row "issue 9: noisy neighbour through accordd" "$bench" --config neighbour-daemon --iterations 3000
for round in 1 2; do row "issue 9: 16 processes through accordd, round $round" "$bench" --config processes:accordd; done
unset ACCORD_BENCH_ACCORDD_NICE
mps_row "$bench"
grep -E "^===|accord embedded|16 processes|inside|^ +[0-9]+ +[0-9.]+ |priorit|stream priorities" "$log"
date
