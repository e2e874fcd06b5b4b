#!/bin/bash
# Waiters that sleep through most of a graph's forecast (RuntimeOptions::forecast_sleep
# Always: embedded and through accordd) against waiters that spin from the start (Never),
# one build, on a GPU machine, as root, in one call of about 4 minutes. Alternately in two
# rounds: 16 embedded runtimes, 16 client processes through accordd at nice -10 as its
# unit runs it, and the 1- / 10- / 100-kernel latency rows embedded and through accordd;
# then both noisy-neighbour rows with the default, and MPS for the ratio.
#   tests/bench/gpu_forecast_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_forecast_ab.sh "$@"
bench=$build/tests/bench/gpu_graph_bench
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
for round in 1 2; do
  for sleep in 0 1; do
    export ACCORD_BENCH_FORECAST_SLEEP=$sleep
    ab_rows "round $round, forecast sleep $([[ $sleep == 1 ]] && echo on || echo off)" "$bench"
  done
done
unset ACCORD_BENCH_FORECAST_SLEEP
row "noisy neighbour, embedded" "$bench" --config neighbour --iterations 3000
row "noisy neighbour through accordd" "$bench" --config neighbour-daemon --iterations 3000
rows_finish "$bench"
