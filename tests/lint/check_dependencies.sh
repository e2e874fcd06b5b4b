#!/usr/bin/env bash
# Dependencies point one way (ARCHITECTURE.md): service -> engine -> devices, and only
# the service knows gRPC. Fails, listing the offending lines, on any back-edge.
set -u
root=${1:?usage: check_dependencies.sh SOURCE_DIR}
cd "$root" || exit 2
status=0
forbid() {  # forbid DIR PATTERN WHY [pcre]
  local hits mode=-E
  [[ ${4:-} == pcre ]] && mode=-P
  hits=$(grep -rn $mode "#include [<\"]($2)" "$1" --include='*.h' --include='*.cpp' --include='*.c' 2>/dev/null)
  if [[ -n $hits ]]; then
    echo "back-edge: $3"
    echo "$hits"
    status=1
  fi
}
forbid daemon/engine 'daemon/service|grpc|accord/v1/|proto/|client/src|daemon/devices/[a-z0-9_]+/' "the engine must not see the service, gRPC, the client or any backend"
forbid daemon/devices 'daemon/engine|daemon/service|grpc|accord/v1/|client/src' "devices must not see the engine, the service or the client"
forbid client/include 'daemon/|grpc|client/src|proto/' "the public API must not expose internals"
forbid client/api 'daemon/|grpc|client/src|proto/' "the vocabulary library must stay dependency-free"
forbid proto 'daemon/|client/src' "the wire library and protocol are shared by both sides and see neither"
forbid proto/wire 'grpc' "the wire library does not use gRPC"
# A backend sees only the device interface, the helpers in devices/common and the
# vocabulary library, never another backend; the composition root
# (daemon/devices/composition) is the one place that knows them all.
for backend in daemon/devices/*/; do
  name=$(basename "$backend")
  [[ $name == composition ]] && continue
  if [[ $name == common ]]; then
    forbid "$backend" "daemon/devices/(?!common/)[a-z0-9_]+/" "devices/common must not include a backend" pcre
    continue
  fi
  forbid "$backend" "daemon/devices/(?!$name/|common/)[a-z0-9_]+/" "backend '$name' must not include another backend" pcre
done
# GPU executors sit beside the device layer: they see devices and proto/wire, never the
# engine, the service or gRPC; and the device layer (the composition root included) gets
# them only through DeviceSettings::gpu_executor_factory, set by accordd's main.cpp.
forbid daemon/executor 'daemon/engine|daemon/service|grpc|accord/v1/|client/src' "GPU executors must not see the engine, the service or the client"
forbid daemon/devices 'daemon/executor' "the device layer must not include the executor (accordd injects its factory)"
forbid client/src/embedded 'daemon/service|grpc|accord/v1/' "the embedded transport uses the engine, not the service"
if ((status == 0)); then echo "dependencies point one way"; fi
exit $status
