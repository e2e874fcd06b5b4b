// Releasing one of accordd's session-scoped handles over gRPC, for the daemon transport's
// handle types (daemon_objects.cpp, daemon_completion.cpp).
#pragma once

#include <grpcpp/grpcpp.h>

#include "client/src/daemon/daemon_runtime.h"

namespace accord::detail {

// Releases a handle; failures (the daemon already gone) are ignored on purpose: the
// session's end releases everything anyway.
template <class Request, class Response, class Call>
void release_handle(DaemonRuntime& runtime, const Request& request, Call call) {
  grpc::ClientContext context;
  runtime.connection().prepare(context);
  Response response;
  (void)(runtime.connection().stub().*call)(&context, request, &response);
}

}  // namespace accord::detail
