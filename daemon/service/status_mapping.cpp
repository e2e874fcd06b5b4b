#include "daemon/service/status_mapping.h"

namespace accord::service {

grpc::StatusCode to_grpc_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Invalid: return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorKind::Busy: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorKind::DeviceLost: return grpc::StatusCode::DATA_LOSS;
    case ErrorKind::Unsupported: return grpc::StatusCode::UNIMPLEMENTED;
    case ErrorKind::Cancelled: return grpc::StatusCode::CANCELLED;
    case ErrorKind::Execution: return grpc::StatusCode::ABORTED;
    case ErrorKind::Internal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::UNKNOWN;
}

grpc::Status to_grpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(to_grpc_code(status.kind()), std::string(status.message()));
}

}  // namespace accord::service
