#!/bin/bash
# A client that spins while accordd runs at a lower nice value, against the tree before
# (a client spinning at most 8 us on a machine with no spare core), on a GPU machine, as
# root, in one call of about 7 minutes. BUILD_DIR/tests/bench holds gpu_graph_bench (the
# change) and gpu_graph_bench.before (built from the parent commit; the client library
# is linked in statically). Alternately in two rounds, accordd at nice -10 as its unit
# runs it: 16 client processes looping a 10-kernel graph, with the default ring spin and
# with 200 us, and the 1- and 10-kernel graphs through accordd; then MPS for the ratio.
#   tests/bench/gpu_spin_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_spin_ab.sh "$@"
bench=$build/tests/bench
[[ -x $bench/gpu_graph_bench.before ]] || { echo "no $bench/gpu_graph_bench.before" >&2; exit 2; }
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
export ACCORD_BENCH_ACCORDD_NICE=-10
for round in 1 2; do
  for side in before after; do
    binary=$bench/gpu_graph_bench
    [[ $side == before ]] && binary=$bench/gpu_graph_bench.before
    row "round $round, $side: 16 processes through accordd" "$binary" --config processes:accordd
    ACCORD_BENCH_RING_SPIN_US=200 row "round $round, $side: 16 processes through accordd, spin 200 us" \
      "$binary" --config processes:accordd
    row "round $round, $side: accordd 1 / 10 kernels" "$binary" --config daemon --iterations 10000
  done
done
rows_finish "$bench/gpu_graph_bench"
