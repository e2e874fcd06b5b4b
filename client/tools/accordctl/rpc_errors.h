// How accordctl words a failed gRPC call: the status code's canonical name, then the
// daemon's message, which already names the object at fault ("INVALID_ARGUMENT: graph
// node 3 binding 1: ..."). An unreachable daemon is worded for an operator instead.
#pragma once

#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

namespace accord::ctl {

// The canonical name of `code` ("OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", ...);
// "CODE_N" for a number outside the 17 codes.
std::string status_code_name(grpc::StatusCode code);

// The line printed on stderr for a failed call to accordd at `socket`:
//   UNAVAILABLE        "cannot reach accordd at SOCKET: MESSAGE"
//   DEADLINE_EXCEEDED  "DEADLINE_EXCEEDED: [CONTEXT: ]MESSAGE (accordd at SOCKET did not
//                       answer within --timeout)"
//   anything else      "CODE: [CONTEXT: ]MESSAGE"
// `context` says what the tool was doing ("buffer 'x'") and is omitted when empty.
std::string describe_rpc_failure(const grpc::Status& status, std::string_view socket, std::string_view context = {});

}  // namespace accord::ctl
