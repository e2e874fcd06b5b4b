#!/usr/bin/env bash
# The main job: install what is needed, build, and run the example pipeline on the
# embedded runtime (the engine and host device in process).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/install-deps.sh"
echo "== building (Release)"
"$here/scripts/build.sh" Release "$here/build/release" -DACCORD_BUILD_TESTS=OFF -DACCORD_BUILD_BENCHMARKS=OFF
trace=${ACCORD_TRACE_OUT:-$here/build/accord-trace.json}
echo "== running the example pipeline"
"$here/build/release/client/examples/accord_pipeline_example" --trace "$trace"
echo "== done: open $trace in https://ui.perfetto.dev to see the lanes"
