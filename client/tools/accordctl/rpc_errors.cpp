#include "client/tools/accordctl/rpc_errors.h"

namespace accord::ctl {

std::string status_code_name(grpc::StatusCode code) {
  // grpc++ has no public name function; these are the names of grpc/status.h, which
  // grpcurl and every other gRPC tool print.
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: break;
  }
  return "CODE_" + std::to_string(static_cast<int>(code));
}

std::string describe_rpc_failure(const grpc::Status& status, std::string_view socket, std::string_view context) {
  const std::string message = status.error_message();
  // UNAVAILABLE is what a fail-fast call gets when nothing listens at the socket (or the
  // daemon went away mid-call); the operator's question then is "is accordd running?".
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE)
    return "cannot reach accordd at " + std::string(socket) + ": " + message;
  std::string line = status_code_name(status.error_code());
  line += ": ";
  if (!context.empty()) {
    line += context;
    line += ": ";
  }
  line += message;
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    line += " (accordd at " + std::string(socket) + " did not answer within --timeout)";
  return line;
}

}  // namespace accord::ctl
