#!/bin/bash
# The 16-tenant comparison of gpu_graph_bench in one run: 16 threads through Accord
# (a runtime each) and launching directly on one context, then 16 processes launching
# directly, time-sliced and under MPS. Starts the MPS control daemon only for its row
# and stops it afterwards; changes no GPU setting.
#   tests/bench/gpu_tenants.sh [path/to/gpu_graph_bench]
set -euo pipefail
bench=${1:-build/gpu/tests/bench/gpu_graph_bench}
# Each row in a process of its own. Accord's default of 32 hardware work queues per
# context (cuda.max_connections) first, then the driver's default of 8 for the one-context
# direct row and Accord.
for row in direct flag event green accord accord-event accord-memop; do
  "$bench" --config "tenants:$row" || echo "gpu_tenants.sh: row $row failed (status $?)"
done
# The launch ceiling of 1 and 16 threads keeping the 16 graphs in flight, by what writes
# the flag (table 2b).
for spec in 1:kernel 16:kernel 1:flag 16:flag; do
  "$bench" --config "launchers:$spec" || echo "gpu_tenants.sh: launchers:$spec failed (status $?)"
done
for row in direct accord accord-event; do
  CUDA_DEVICE_MAX_CONNECTIONS=8 "$bench" --config "tenants:$row" || echo "gpu_tenants.sh: row $row failed (status $?)"
done
"$bench" --config processes:time-sliced
mps=$(command -v nvidia-cuda-mps-control || echo /usr/local/nvidia/bin/nvidia-cuda-mps-control)
if [[ ! -x $mps ]]; then
  echo "gpu_tenants.sh: nvidia-cuda-mps-control not found: no MPS row"
  exit 0
fi
CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
"$mps" -d
trap 'echo quit | "$mps" || true' EXIT
"$bench" --config processes:MPS
# Accord with each runtime's GPU in an executor process: sixteen MPS clients, beside the
# sixteen processes launching directly under the same server.
"$bench" --config tenants:accord-executor || echo "gpu_tenants.sh: row accord-executor failed (status $?)"
"$bench" --config processes:MPS
