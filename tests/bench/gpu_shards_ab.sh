#!/bin/bash
# Whether launching from several processes lifts the 16-process row through accordd: the
# row with one accordd (as deployed), against 2 and 4 accordds whose GPU executors are
# clients of one MPS server (the sixteen tenants split between them), before building
# executor shards into accordd. Each accordd at nice -10 as its unit runs it; alternately
# in two rounds; then MPS for the ratio. On a GPU machine, as root, about 6 minutes.
# ACCORD_SHARDS_ROUNDS (default 2) and ACCORD_SHARDS_COUNTS (default "1 2 4") shorten it;
# ACCORD_SHARDS_EXTRA=0 leaves out the two 4-accordd variants.
#   tests/bench/gpu_shards_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
row_limit=120
source "$(dirname "$0")/gpu_rows_common.sh"
rows_setup gpu_shards_ab.sh "$@"
bench=$build/tests/bench/gpu_graph_bench
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
mps=$(command -v nvidia-cuda-mps-control || echo /usr/local/nvidia/bin/nvidia-cuda-mps-control)
[[ -x $mps ]] || { echo "gpu_shards_ab.sh: nvidia-cuda-mps-control not found" >&2; exit 2; }
export ACCORD_BENCH_ACCORDD_NICE=-10
# An MPS server bounds its clients' work queues: 8 each leaves room for 16 clients.
queues="--device-option cuda.max_connections=8"
under_mps() {
  CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
  export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  "$mps" -d && sleep 1
  "$@"
  echo quit | "$mps"
  sleep 1
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
shard_rows() {
  local round=$1
  for count in ${ACCORD_SHARDS_COUNTS:-1 2 4}; do
    ACCORD_BENCH_ACCORDD_COUNT=$count ACCORD_BENCH_ACCORDD_ARGS="$queues" \
      row "round $round, MPS: 16 processes through $count accordd(s)" "$bench" --config processes:accordd
  done
  [[ ${ACCORD_SHARDS_EXTRA:-1} == 1 ]] || return 0
  ACCORD_BENCH_ACCORDD_COUNT=4 ACCORD_BENCH_ACCORDD_ARGS="$queues --ring-pollers 1" \
    row "round $round, MPS: 16 processes through 4 accordds, one poller each" "$bench" --config processes:accordd
  ACCORD_BENCH_ACCORDD_COUNT=4 ACCORD_BENCH_ACCORDD_ARGS="$queues --gpu-executors=false" \
    row "round $round, MPS: 16 processes through 4 accordds launching in process" "$bench" --config processes:accordd
}
for round in $(seq "${ACCORD_SHARDS_ROUNDS:-2}"); do
  row "round $round, no MPS: 16 processes through one accordd" "$bench" --config processes:accordd
  under_mps shard_rows "$round"
done
rows_finish "$bench"
