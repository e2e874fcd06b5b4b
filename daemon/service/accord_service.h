// The accord.v1.Accord gRPC service: every handler looks up the caller's session and
// checks its uid, converts the request to an engine call and maps the Status back
// (STYLE.md rule 15). Handlers never block: WaitCompletion streams from the engine's
// completion listener, and a lease that waits is answered by the engine's lease queue.
#pragma once

#include <memory>

#include "accord/v1/accord.grpc.pb.h"
#include "daemon/engine/engine.h"
#include "daemon/service/access_policy.h"
#include "daemon/service/peer_registry.h"
#include "daemon/service/session_registry.h"

namespace accord::service {

class RingService;

struct ServiceOptions {
  bool allow_plugins = true;                 // kernel_policy = ClientModules
  std::vector<std::string> plugin_paths;     // allowlist; empty = any (ClientModules only)
  const RingService* rings = nullptr;        // its pollers are reported by GetStatistics; outlives the service
};

class AccordService final : public v1::Accord::CallbackService {
 public:
  AccordService(engine::Engine& engine, SessionRegistry& sessions, PeerRegistry& peers, const AccessPolicy& policy,
                ServiceOptions options);
  ~AccordService() override;

  using Ctx = grpc::CallbackServerContext;
  grpc::ServerUnaryReactor* ListDevices(Ctx*, const v1::ListDevicesRequest*, v1::ListDevicesResponse*) override;
  grpc::ServerUnaryReactor* GetSessionInfo(Ctx*, const v1::GetSessionInfoRequest*, v1::SessionInfo*) override;
  grpc::ServerUnaryReactor* Allocate(Ctx*, const v1::AllocateRequest*, v1::AllocateResponse*) override;
  grpc::ServerUnaryReactor* Free(Ctx*, const v1::FreeRequest*, v1::FreeResponse*) override;
  grpc::ServerUnaryReactor* LoadKernel(Ctx*, const v1::LoadKernelRequest*, v1::LoadKernelResponse*) override;
  grpc::ServerUnaryReactor* ReleaseKernel(Ctx*, const v1::ReleaseKernelRequest*, v1::ReleaseKernelResponse*) override;
  grpc::ServerUnaryReactor* PrepareGraph(Ctx*, const v1::PrepareGraphRequest*, v1::PrepareGraphResponse*) override;
  grpc::ServerUnaryReactor* ReleaseGraph(Ctx*, const v1::ReleaseGraphRequest*, v1::ReleaseGraphResponse*) override;
  grpc::ServerUnaryReactor* Submit(Ctx*, const v1::SubmitRequest*, v1::SubmitResponse*) override;
  grpc::ServerWriteReactor<v1::CompletionEvent>* WaitCompletion(Ctx*, const v1::WaitCompletionRequest*) override;
  grpc::ServerUnaryReactor* PollCompletion(Ctx*, const v1::PollCompletionRequest*, v1::CompletionEvent*) override;
  grpc::ServerUnaryReactor* Cancel(Ctx*, const v1::CancelRequest*, v1::CancelResponse*) override;
  grpc::ServerUnaryReactor* ReleaseCompletion(Ctx*, const v1::ReleaseCompletionRequest*,
                                              v1::ReleaseCompletionResponse*) override;
  grpc::ServerUnaryReactor* AcquireLease(Ctx*, const v1::AcquireLeaseRequest*, v1::AcquireLeaseResponse*) override;
  grpc::ServerUnaryReactor* ReleaseLease(Ctx*, const v1::ReleaseLeaseRequest*, v1::ReleaseLeaseResponse*) override;
  grpc::ServerUnaryReactor* GetStatistics(Ctx*, const v1::GetStatisticsRequest*, v1::GetStatisticsResponse*) override;
  grpc::ServerUnaryReactor* StartTrace(Ctx*, const v1::StartTraceRequest*, v1::StartTraceResponse*) override;
  grpc::ServerUnaryReactor* FinishTrace(Ctx*, const v1::FinishTraceRequest*, v1::FinishTraceResponse*) override;
  grpc::ServerUnaryReactor* ListSessions(Ctx*, const v1::ListSessionsRequest*, v1::ListSessionsResponse*) override;

 private:
  struct Caller {
    wire::PeerCredentials peer;
    std::shared_ptr<ServiceSession> session;  // empty for calls that need none
  };
  // PERMISSION_DENIED for a refused uid or a session of another uid; UNAUTHENTICATED
  // for a missing or unknown token.
  grpc::Status authenticate(Ctx* context, bool need_session, Caller& out) const;
  // Runs `handler` (returning grpc::Status) and finishes the unary call with it;
  // anything thrown becomes INTERNAL, never a crash.
  template <class Handler>
  grpc::ServerUnaryReactor* unary(Ctx* context, bool need_session, Handler&& handler);

  grpc::Status prepare_graph(ServiceSession& session, const v1::PrepareGraphRequest& request,
                             v1::PrepareGraphResponse& response);
  grpc::Status submit(ServiceSession& session, const v1::SubmitRequest& request, v1::SubmitResponse& response);
  // `statistics` with devices_lost filled in from the device registry. Thread-safe.
  Statistics with_devices_lost(Statistics statistics) const;

  engine::Engine& engine_;
  SessionRegistry& sessions_;
  PeerRegistry& peers_;
  const AccessPolicy& policy_;
  ServiceOptions options_;
};

}  // namespace accord::service
