#!/bin/bash
# What waits for a GPU since session 23 (no GPU was lent then), in one call of about 8
# minutes on the lent H200, as root: every GPU check of the tree, then two A/B questions,
# alternately in two rounds so that drift touches both sides alike:
#   1. cuda.launcher = thread against the default (caller): 16 embedded runtimes (issue 7's
#      0.9x-of-MPS row), the latency table (its 10-kernel ratio), the noisy neighbour;
#   2. accordd at nice -10 against 0 (ACCORD_BENCH_ACCORDD_NICE, as a unit's Nice= would
#      set it): 16 client processes (issue 9's GPU row) and host submissions per second
#      for 1..64 processes (its 64/16 row);
# and MPS's 16 processes for the ratio. Writes OUT_DIR/rows.log and the checks' logs.
#   tests/bench/gpu_pending_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
[[ $# -eq 2 ]] || { echo "usage: gpu_pending_ab.sh BUILD_DIR OUT_DIR" >&2; exit 2; }
build=$1
out=$2
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
bench=$build/tests/bench
log=$out/rows.log
row() {  # row LABEL COMMAND...: appends the command's table to rows.log
  echo "=== $1" | tee -a "$log"
  shift
  timeout 120 "$@" 2>&1 | grep -v '^$' >> "$log"
}
nproc; date
timeout 240 "$here/tests/gpu/run_gpu_checks.sh" "$build" "$out/checks" 30
for round in 1 2; do
  row "round $round: 16 embedded runtimes, caller" "$bench/gpu_graph_bench" --config tenants:accord
  ACCORD_BENCH_CUDA_OPTIONS="cuda.launcher=thread" \
    row "round $round: 16 embedded runtimes, launcher thread" "$bench/gpu_graph_bench" --config tenants:accord
  row "round $round: 16 processes through accordd, nice 0" "$bench/gpu_graph_bench" --config processes:accordd
  ACCORD_BENCH_ACCORDD_NICE=-10 \
    row "round $round: 16 processes through accordd, nice -10" "$bench/gpu_graph_bench" --config processes:accordd
  row "round $round: host throughput, nice 0" "$bench/daemon_scale_bench" --config throughput --seconds 3
  ACCORD_BENCH_ACCORDD_NICE=-10 \
    row "round $round: host throughput, nice -10" "$bench/daemon_scale_bench" --config throughput --seconds 3
done
row "latency, caller" "$bench/gpu_graph_bench" --config latency --iterations 6000
ACCORD_BENCH_CUDA_OPTIONS="cuda.launcher=thread" \
  row "latency, launcher thread" "$bench/gpu_graph_bench" --config latency --iterations 6000
row "noisy neighbour, caller" "$bench/gpu_graph_bench" --config neighbour --iterations 3000
ACCORD_BENCH_CUDA_OPTIONS="cuda.launcher=thread" \
  row "noisy neighbour, launcher thread" "$bench/gpu_graph_bench" --config neighbour --iterations 3000
row "accordd 1/10 kernels, nice 0" "$bench/gpu_graph_bench" --config daemon --iterations 20000
ACCORD_BENCH_ACCORDD_NICE=-10 \
  row "accordd 1/10 kernels, nice -10" "$bench/gpu_graph_bench" --config daemon --iterations 20000
if [[ -x /usr/local/nvidia/bin/nvidia-cuda-mps-control ]]; then
  export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
  /usr/local/nvidia/bin/nvidia-cuda-mps-control -d && sleep 1
  row "16 processes under MPS" "$bench/gpu_graph_bench" --config processes:MPS
  echo quit | /usr/local/nvidia/bin/nvidia-cuda-mps-control
fi
grep -E "^===|16 processes|runtime per thread|inside|accord|^ +[0-9]+ +[0-9.]+ " "$log"
date
