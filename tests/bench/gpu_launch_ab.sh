#!/bin/bash
# Who makes a launch (cuda.launch: the context's combiner, or each submitting thread)
# on a GPU machine, as root, in one call of about 8 minutes: every GPU check of the tree
# (with the default, combine), then alternately in three rounds, so that drift touches
# every variant alike, 16 embedded runtimes looping a 10-kernel graph with each variant;
# then issue 7's and 9's other rows with the default, and the same 16 tenants as
# processes under MPS for the ratio. Writes OUT_DIR/rows.log and the checks' logs.
#   tests/bench/gpu_launch_ab.sh BUILD_DIR OUT_DIR
set -uo pipefail
[[ $# -eq 2 ]] || { echo "usage: gpu_launch_ab.sh BUILD_DIR OUT_DIR" >&2; exit 2; }
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
timeout 260 "$here/tests/gpu/run_gpu_checks.sh" "$build" "$out/checks" 30
for round in 1 2 3; do
  for options in "" "cuda.launch=direct" "cuda.launch_stay_us=0" "cuda.launch_stay_us=10"; do
    ACCORD_BENCH_CUDA_OPTIONS=$options row "round $round: 16 embedded runtimes, ${options:-defaults}" \
      "$bench/gpu_graph_bench" --config tenants:accord
  done
done
row "embedded latency (1, 10, 100 kernels)" "$bench/gpu_graph_bench" --config latency --iterations 6000
row "noisy neighbour, embedded" "$bench/gpu_graph_bench" --config neighbour --iterations 3000
export ACCORD_BENCH_ACCORDD_NICE=-10
for round in 1 2; do
  row "round $round: 16 processes through accordd" "$bench/gpu_graph_bench" --config processes:accordd
  row "round $round: accordd 1/10 kernels" "$bench/gpu_graph_bench" --config daemon --iterations 10000
done
unset ACCORD_BENCH_ACCORDD_NICE
if [[ -x /usr/local/nvidia/bin/nvidia-cuda-mps-control ]]; then
  export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
  /usr/local/nvidia/bin/nvidia-cuda-mps-control -d && sleep 1
  row "16 processes under MPS" "$bench/gpu_graph_bench" --config processes:MPS
  echo quit | /usr/local/nvidia/bin/nvidia-cuda-mps-control
fi
grep -E "^===|accord embedded|16 processes|inside|^ +[0-9]+ +[0-9.]+ |priorit" "$log"
date
