// The one table from accord::ErrorKind to gRPC status codes (STYLE.md rule 5), used by
// every handler, and its inverse, used by the client's daemon transport.
#pragma once

#include <grpcpp/support/status.h>

#include "accord/status.h"

namespace accord::service {

grpc::StatusCode to_grpc_code(ErrorKind kind) noexcept;
// An engine Status as a gRPC status; OK stays OK.
grpc::Status to_grpc(const Status& status);

}  // namespace accord::service
