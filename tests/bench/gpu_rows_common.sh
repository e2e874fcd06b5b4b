# What the GPU row scripts share (gpu_issue_rows.sh and the A/B scripts gpu_*_ab.sh): sourced, never run.

# rows_setup SCRIPT "$@": takes BUILD_DIR OUT_DIR (or says how to call SCRIPT and exits 2)
# and sets build, out (made), here (the source tree), log (OUT_DIR/rows.log) and
# row_limit (seconds per row, 150 unless set before).
rows_setup() {
  local script=$1
  shift
  [[ $# -eq 2 ]] || { echo "usage: $script BUILD_DIR OUT_DIR" >&2; exit 2; }
  build=$1
  out=$2
  mkdir -p "$out"
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  log=$out/rows.log
  row_limit=${row_limit:-150}
}

# row LABEL COMMAND...: appends the command's table to $log under "=== LABEL".
row() {
  echo "=== $1" | tee -a "$log"
  shift
  timeout "$row_limit" "$@" 2>&1 | grep -v '^$' >> "$log"
}

# ab_rows LABEL GPU_GRAPH_BENCH: one side of an A/B round, the rows every A/B script
# compares: 16 embedded runtimes, 16 client processes through accordd at nice -10 (as its
# unit runs it), accordd's 1- / 10-kernel rows and the embedded 1- / 10- / 100-kernel rows.
# ACCORD_AB_ROWS=tenants: the 16 embedded runtimes only (an option of in-process devices).
ab_rows() {
  local label=$1 bench=$2
  row "$label: 16 embedded runtimes" "$bench" --config tenants:accord
  [[ ${ACCORD_AB_ROWS:-all} == tenants ]] && return
  ACCORD_BENCH_ACCORDD_NICE=-10 row "$label: 16 processes through accordd" "$bench" --config processes:accordd
  row "$label: accordd 1 / 10 kernels" "$bench" --config daemon --iterations 10000
  row "$label: embedded 1 / 10 / 100 kernels" "$bench" --config latency --iterations 6000
}

# mps_row GPU_GRAPH_BENCH: the 16 tenant processes under an MPS control daemon started
# for the row and stopped after it (no GPU setting changes); says so when MPS is absent.
mps_row() {
  local mps
  mps=$(command -v nvidia-cuda-mps-control || echo /usr/local/nvidia/bin/nvidia-cuda-mps-control)
  if [[ ! -x $mps ]]; then
    echo "=== 16 processes under MPS: nvidia-cuda-mps-control not found, no MPS row" | tee -a "$log"
    return
  fi
  CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
  export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  "$mps" -d && sleep 1
  row "16 processes under MPS" "$1" --config processes:MPS
  echo quit | "$mps"
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

# rows_finish GPU_GRAPH_BENCH: accordd's nice value back to the default, sixteen threads
# launching directly from one process (the ceiling of one process on this machine: the
# 16-runtime rows are compared with it and with MPS in the same call, RESULTS.md session
# 33), the MPS row (mps_row), then every row's figures from $log and the time.
rows_finish() {
  unset ACCORD_BENCH_ACCORDD_NICE
  row "16 threads launching directly from one process" "$1" --config tenants:direct
  mps_row "$1"
  grep -E "^===|accord embedded|direct: one context|16 processes|inside|each tenant|^ +[0-9]+ +[0-9.]+ " "$log"
  date
}
