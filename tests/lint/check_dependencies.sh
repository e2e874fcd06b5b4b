#!/usr/bin/env bash
# Dependencies point one way (ARCHITECTURE.md): service -> engine -> devices, and only
# the service knows gRPC. Fails, listing the offending lines, on any back-edge.
set -u
root=${1:?usage: check_dependencies.sh SOURCE_DIR}
cd "$root" || exit 2
status=0
forbid() {  # forbid DIR PATTERN WHY
  local hits
  hits=$(grep -rnE "#include [<\"]($2)" "$1" --include='*.h' --include='*.cpp' 2>/dev/null)
  if [[ -n $hits ]]; then
    echo "back-edge: $3"
    echo "$hits"
    status=1
  fi
}
forbid daemon/engine 'daemon/service|grpc|accord/v1/|proto/|client/src' "the engine must not see the service, gRPC or the client"
forbid daemon/devices 'daemon/engine|daemon/service|grpc|accord/v1/|client/src' "devices must not see the engine, the service or the client"
forbid client/include 'daemon/|grpc|client/src|proto/' "the public API must not expose internals"
forbid client/api 'daemon/|grpc|client/src|proto/' "the vocabulary library must stay dependency-free"
forbid proto/wire 'daemon/engine|daemon/service|client/src|grpc' "the wire library is shared by both sides and sees neither"
forbid client/src/embedded 'daemon/service|grpc|accord/v1/' "the embedded transport uses the engine, not the service"
if ((status == 0)); then echo "dependencies point one way"; fi
exit $status
