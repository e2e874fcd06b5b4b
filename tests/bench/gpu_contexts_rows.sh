#!/bin/bash
# Does one process with a CUDA context per tenant, each a client of an MPS server, reach
# what sixteen processes under MPS reach? Side by side in one call, in ROUNDS rounds: the
# 16 threads on one context (no MPS), then under one MPS server started for the call
# (no GPU setting changed): sixteen processes, sixteen threads of one process each with a
# context of its own, the same threads on one context, 16 embedded Accord runtimes on
# the primary context and with cuda.context = auto (a context each under MPS); and
# table 5 (whether contexts of one process share memory) without and with MPS; and 16
# client processes through one accordd whose sessions share one context or are spread
# over sixteen (cuda.tenant_contexts). ACCORD_CONTEXTS_SHORT leaves out the rows with two
# work queues a context; ACCORD_CONTEXTS_CHECKS adds gpu_embedded under MPS.
#   tests/bench/gpu_contexts_rows.sh BUILD_DIR OUT_DIR
set -uo pipefail
. "$(dirname "$0")/gpu_rows_common.sh"
rows_setup "$0" "$@"
bench=$build/tests/bench/gpu_graph_bench
row "table 5 without MPS" "$bench" --config contexts
row "no MPS: 16 threads on one context" "$bench" --config tenants:direct
mps=$(command -v nvidia-cuda-mps-control || echo /usr/local/nvidia/bin/nvidia-cuda-mps-control)
[[ -x $mps ]] || { echo "no nvidia-cuda-mps-control: no MPS rows" | tee -a "$log"; exit 0; }
CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
"$mps" -d && sleep 1
trap 'echo quit | "$mps"' EXIT
row "MPS: table 5" "$bench" --config contexts
for round in $(seq 1 "${ACCORD_CONTEXTS_ROUNDS:-2}"); do
  row "round $round MPS: 16 processes" "$bench" --config processes:MPS
  # Every client's work queues come out of the server's device connections: at the
  # bench's 32 a context the server takes about four (daemon/devices/cuda/README.md); the
  # sixteen processes above use the driver's default, 8.
  CUDA_DEVICE_MAX_CONNECTIONS=8 row "round $round MPS: 16 threads, a context each, 8 work queues each" "$bench" --config tenants:ctx
  [[ -n ${ACCORD_CONTEXTS_SHORT:-} ]] ||
    CUDA_DEVICE_MAX_CONNECTIONS=2 row "round $round MPS: 16 threads, a context each, 2 work queues each" "$bench" --config tenants:ctx
  row "round $round MPS: 16 threads on one context" "$bench" --config tenants:direct
  ACCORD_BENCH_CUDA_OPTIONS=cuda.context=primary row "round $round MPS: 16 embedded runtimes, one primary context" "$bench" --config tenants:accord
  CUDA_DEVICE_MAX_CONNECTIONS=8 ACCORD_BENCH_CUDA_OPTIONS=cuda.context=auto row "round $round MPS: 16 embedded runtimes, cuda.context=auto (a context each), 8 work queues" "$bench" --config tenants:accord
  [[ -n ${ACCORD_CONTEXTS_SHORT:-} ]] ||
    CUDA_DEVICE_MAX_CONNECTIONS=2 ACCORD_BENCH_CUDA_OPTIONS=cuda.context=auto row "round $round MPS: 16 embedded runtimes, cuda.context=auto (a context each), 2 work queues" "$bench" --config tenants:accord
  # Sixteen client processes through one accordd (at nice -10), its executor an MPS
  # client: every session in one context, then spread over sixteen (cuda.tenant_contexts).
  ACCORD_BENCH_ACCORDD_NICE=-10 ACCORD_BENCH_ACCORDD_ARGS="--device-option cuda.max_connections=2" \
    row "round $round MPS: 16 processes through accordd, one context" "$bench" --config processes:accordd
  ACCORD_BENCH_ACCORDD_NICE=-10 \
    ACCORD_BENCH_ACCORDD_ARGS="--device-option cuda.max_connections=2 --device-option cuda.tenant_contexts=16" \
    row "round $round MPS: 16 processes through accordd, cuda.tenant_contexts=16" "$bench" --config processes:accordd
done
# The embedded GPU tests with every runtime in a context of its own (cuda.context = auto
# under MPS): results against a CPU reference, random graphs, faults.
if [[ -n ${ACCORD_CONTEXTS_CHECKS:-} ]]; then
  echo "=== MPS: gpu_embedded [gpu] with a context per runtime" | tee -a "$log"
  ACCORD_CONFORMANCE_DEVICE_OPTIONS=cuda.context=auto CUDA_DEVICE_MAX_CONNECTIONS=2 \
    timeout 240 "$build/tests/gpu/gpu_embedded" "[gpu]" 2>&1 | tail -4 | tee -a "$log"
fi
grep -E "^===|direct:|accord embedded|16 processes|MPS enabled|memory|each tenant" "$log"
date
