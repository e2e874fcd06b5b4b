#!/bin/bash
# Two builds side by side on a GPU machine, as root, in one call of about 3 minutes:
# BUILD_DIR holds the change (tests/bench/gpu_graph_bench, daemon/accordd) and the
# builds it is compared with, copied beside them as tests/bench/gpu_graph_bench.before
# and daemon/accordd.before. Alternately in two rounds, each build's bench with its own
# accordd (through ACCORD_BENCH_ACCORDD_BINARY): 16 embedded runtimes, 16 client
# processes through accordd at nice -10 as its unit runs it, and the 1- and 10-kernel
# latency rows embedded and through accordd; MPS last, for the ratio. Writes
# OUT_DIR/rows.log.
#   tests/bench/gpu_build_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_build_ab.sh "$@"
bench=$build/tests/bench/gpu_graph_bench
for f in "$bench.before" "$build/daemon/accordd.before"; do
  [[ -x $f ]] || { echo "no $f" >&2; exit 2; }
done
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
for round in 1 2; do
  for side in before after; do
    suffix=""
    [[ $side == before ]] && suffix=.before
    export ACCORD_BENCH_ACCORDD_BINARY=$build/daemon/accordd$suffix
    ab_rows "round $round, $side" "$bench$suffix"
    unset ACCORD_BENCH_ACCORDD_BINARY
  done
done
rows_finish "$bench"
