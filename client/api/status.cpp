#include "accord/status.h"

namespace accord {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Busy: return "Busy";
    case ErrorKind::DeviceLost: return "DeviceLost";
    case ErrorKind::Cancelled: return "Cancelled";
    case ErrorKind::Execution: return "Execution";
    case ErrorKind::Invalid: return "Invalid";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::Internal: return "Internal";
  }
  return "Unknown";
}

Status Status::error(ErrorKind kind, std::string message, std::source_location where) {
  Status status;
  status.rep_ = std::make_unique<Error>(Error{kind, std::move(message), where});
  return status;
}

Status&& Status::annotate(std::string_view context) && {
  if (rep_) rep_->message = std::string(context) + ": " + rep_->message;
  return std::move(*this);
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(accord::to_string(rep_->kind)) + ": " + rep_->message;
}

Status busy_error(std::string m, std::source_location w) { return Status::error(ErrorKind::Busy, std::move(m), w); }
Status device_lost_error(std::string m, std::source_location w) { return Status::error(ErrorKind::DeviceLost, std::move(m), w); }
Status cancelled_error(std::string m, std::source_location w) { return Status::error(ErrorKind::Cancelled, std::move(m), w); }
Status execution_error(std::string m, std::source_location w) { return Status::error(ErrorKind::Execution, std::move(m), w); }
Status invalid_error(std::string m, std::source_location w) { return Status::error(ErrorKind::Invalid, std::move(m), w); }
Status unsupported_error(std::string m, std::source_location w) { return Status::error(ErrorKind::Unsupported, std::move(m), w); }
Status internal_error(std::string m, std::source_location w) { return Status::error(ErrorKind::Internal, std::move(m), w); }

}  // namespace accord
