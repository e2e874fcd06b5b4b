#!/bin/bash
# One setting swept in one call: the 16-process row through accordd (at nice -10, as its
# unit runs it) for each value of one environment variable of gpu_graph_bench, the values
# alternately in two rounds, then MPS for the ratio. On a GPU machine, as root; about
# 25 s a value and round.
#   tests/bench/gpu_env_rows.sh BUILD_DIR OUT_DIR VARIABLE "VALUE ..."
# e.g. ACCORD_BENCH_RING_SPIN_US "20 50 100", ACCORD_BENCH_FORECAST_SLEEP "never daemon",
# ACCORD_BENCH_ACCORDD_ARGS "'--ring-pollers 4' '--ring-pollers 8'" (values are split
# as the shell splits words, so quote values with spaces).
set -uo pipefail
[[ $# -eq 4 ]] || { echo "usage: gpu_env_rows.sh BUILD_DIR OUT_DIR VARIABLE \"VALUE ...\"" >&2; exit 2; }
variable=$3
eval "values=($4)"
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_env_rows.sh "$1" "$2"
bench=$build/tests/bench/gpu_graph_bench
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
export ACCORD_BENCH_ACCORDD_NICE=-10
for round in 1 2; do
  for value in "${values[@]}"; do
    export "$variable=$value"
    row "round $round, $variable=$value: 16 processes through accordd" "$bench" --config processes:accordd
    unset "$variable"
  done
done
rows_finish "$bench"
