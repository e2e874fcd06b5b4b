#!/bin/bash
# One CUDA backend option swept in one call, on a GPU machine, as root, in about
# 4 minutes for two values: alternately in two rounds, with each value given both to the
# embedded rows (ACCORD_BENCH_CUDA_OPTIONS) and to accordd (--device-option, forwarded to
# its GPU executor): 16 embedded runtimes, 16 client processes through accordd at nice
# -10 as its unit runs it, accordd's 1- / 10-kernel rows and the embedded 1- / 10- /
# 100-kernel rows; then both noisy-neighbour rows with the last value, and MPS for the
# ratio.
#   [ACCORD_AB_ROUNDS=N] [ACCORD_AB_ROWS=tenants] tests/bench/gpu_option_ab.sh BUILD_DIR OUT_DIR cuda.KEY "VALUE ..."
# (ACCORD_AB_ROWS=tenants: only the 16 embedded runtimes, and no noisy-neighbour rows)
# e.g. cuda.flag_write "kernel early_kernel"
set -uo pipefail
[[ $# -eq 4 ]] || { echo "usage: gpu_option_ab.sh BUILD_DIR OUT_DIR cuda.KEY \"VALUE ...\"" >&2; exit 2; }
key=$3
read -r -a values <<< "$4"
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_option_ab.sh "$1" "$2"
bench=$build/tests/bench/gpu_graph_bench
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
use_value() {
  export ACCORD_BENCH_CUDA_OPTIONS="$key=$1"
  export ACCORD_BENCH_ACCORDD_ARGS="--device-option $key=$1"
}
for round in $(seq 1 "${ACCORD_AB_ROUNDS:-2}"); do
  for value in "${values[@]}"; do
    use_value "$value"
    ab_rows "round $round, $key=$value" "$bench"
  done
done
if [[ ${ACCORD_AB_ROWS:-all} != tenants ]]; then
  row "noisy neighbour, embedded, $key=${values[-1]}" "$bench" --config neighbour --iterations 3000
  row "noisy neighbour through accordd, $key=${values[-1]}" "$bench" --config neighbour-daemon --iterations 3000
fi
unset ACCORD_BENCH_CUDA_OPTIONS ACCORD_BENCH_ACCORDD_ARGS
rows_finish "$bench"
