#!/usr/bin/env bash
# The main job: install what is needed, build, start accordd (the host device, and the
# NPU emulator as npu:0 through --npu-emulator) on sockets in a temporary directory, run
# the example pipeline and the host -> NPU -> host example against it as a client, show
# what happened, and stop the daemon cleanly.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/install-deps.sh"
echo "== building (Release)"
"$here/scripts/build.sh" Release "$here/build/release" -DACCORD_BUILD_TESTS=OFF -DACCORD_BUILD_BENCHMARKS=OFF
bin=$here/build/release
run=$(mktemp -d /tmp/accord-example.XXXXXX)
log=$run/accordd.log
trace=${ACCORD_TRACE_OUT:-$here/build/accord-trace.json}
daemon_pid=""
cleanup() {
  if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then kill -KILL "$daemon_pid" 2>/dev/null || true; fi
  rm -rf "$run"
}
trap cleanup EXIT

# npu:0 is the NPU emulator (a Level Zero driver computing on the CPU), built whenever
# the Level Zero headers (libze-dev) were found.
npu_flag=()
if [[ -n $(find "$bin/daemon/devices" -name libaccord_npu_emulator.so -print -quit 2>/dev/null) ]]; then
  npu_flag=(--npu-emulator)
else
  echo "(this build has no NPU emulator: Level Zero headers missing; accordd runs without an NPU)"
fi
echo "== starting accordd (sockets in $run)"
"$bin/daemon/accordd" --config /dev/null --grpc-socket "$run/accord.sock" --session-socket "$run/session.sock" \
  "${npu_flag[@]}" --log-level info >"$log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  [[ -S $run/accord.sock && -S $run/session.sock ]] && break
  kill -0 "$daemon_pid" 2>/dev/null || { echo "accordd exited early:"; cat "$log"; exit 1; }
  sleep 0.05
done

echo "== accordctl devices"
"$bin/client/tools/accordctl/accordctl" --socket "$run/accord.sock" devices
echo "== running the example pipeline against accordd"
"$bin/client/examples/accord_pipeline_example" --connect "$run/accord.sock" --trace "$trace"
echo "== running the host -> NPU -> host example against accordd"
"$bin/client/examples/accord_npu_pipeline_example" --connect "$run/accord.sock"
echo "== accordctl stats"
"$bin/client/tools/accordctl/accordctl" --socket "$run/accord.sock" stats

echo "== stopping accordd (SIGTERM)"
kill -TERM "$daemon_pid"
status=0
wait "$daemon_pid" || status=$?
daemon_pid=""
echo "== accordd log"
cat "$log"
if ((status != 0)); then echo "accordd exited with status $status"; exit 1; fi
echo "== done: accordd stopped cleanly; open $trace in https://ui.perfetto.dev to see the lanes"
