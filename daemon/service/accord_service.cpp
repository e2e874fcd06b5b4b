#include "daemon/service/accord_service.h"

#include <unistd.h>

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "daemon/service/convert.h"
#include "daemon/service/ring_service.h"
#include "daemon/service/status_mapping.h"
#include "proto/wire/session_messages.h"

namespace accord::service {
namespace {

grpc::Status not_found(const std::string& what) { return grpc::Status(grpc::StatusCode::NOT_FOUND, what); }
grpc::Status invalid(const std::string& what) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, what); }

std::string handle_name(const char* kind, std::uint64_t handle) {
  return std::string("unknown ") + kind + " handle " + std::to_string(handle) + " in this session";
}

// Resolves a protocol view to an engine view, naming the node and binding on failure.
grpc::Status to_view(ServiceSession& session, const v1::BufferView& view, const std::string& where,
                     engine::ViewSpec& out) {
  out.allocation = session.buffer(view.buffer());
  if (!out.allocation) return not_found(where + ": " + handle_name("buffer", view.buffer()));
  out.offset = static_cast<std::size_t>(view.offset());
  out.length = static_cast<std::size_t>(view.length());
  return grpc::Status::OK;
}

// An AcquireLease that waits for device work: queued in the engine (the same queue as
// the ring's waiting leases) and finished from the thread whose work ended, so no gRPC
// or pool thread sleeps on it and one session's waiting leases never hold up another's.
// Owns itself, the session and the allocation until told.
class LeaseWaitReactor final : public engine::LeaseWaiter {
 public:
  LeaseWaitReactor(grpc::ServerUnaryReactor* reactor, std::shared_ptr<ServiceSession> session,
                   engine::Ref<engine::Allocation> allocation, std::uint64_t handle, bool write)
      : reactor_(reactor), session_(std::move(session)), allocation_(std::move(allocation)), handle_(handle),
        write_(write) {}

  // Queues the lease, or finishes the call when it is granted or refused now.
  static void start(std::unique_ptr<LeaseWaitReactor> self) {
    LeaseWaitReactor& r = *self;
    auto held = r.session_->acquire_lease_or_wait(r.handle_, *r.allocation_, r.write_, r);
    if (held.ok() && !held.value()) {
      static_cast<void>(self.release());  // the engine tells it; on_lease deletes it
      return;
    }
    r.finish(held.ok() ? Status() : std::move(held).status());
  }

  void on_lease(Status outcome) noexcept override {
    if (outcome.ok()) outcome = session_->lease_granted(handle_, *allocation_, write_);
    finish(std::move(outcome));
    delete this;
  }

 private:
  void finish(Status status) {
    reactor_->Finish(to_grpc(std::move(status).annotate("buffer handle " + std::to_string(handle_))));
  }

  grpc::ServerUnaryReactor* reactor_;
  std::shared_ptr<ServiceSession> session_;
  engine::Ref<engine::Allocation> allocation_;
  std::uint64_t handle_;
  bool write_;
};

// Streams a completion's terminal event when the engine reports it; owns one observer
// of the submission until gRPC is done with the call.
class WaitReactor final : public grpc::ServerWriteReactor<v1::CompletionEvent>, public engine::TerminalListener {
 public:
  WaitReactor(engine::Scheduler& scheduler, engine::Submission* submission, std::uint64_t handle)
      : scheduler_(scheduler), submission_(submission), handle_(handle) {
    if (!scheduler_.add_listener(*submission_, *this)) on_terminal(*submission_);
  }

  void on_terminal(engine::Submission& submission) noexcept override {
    if (finished_.exchange(true)) return;
    to_proto(submission, handle_, event_);
    // Let go of the slot before the client hears the outcome: a client that drops its
    // completion and submits again at once must find the slot free (graph_slots = 1).
    release_observer();
    StartWriteAndFinish(&event_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnCancel() override {
    // A deadline or a client that went away: a timed wait never cancels the submission.
    if (!finished_.exchange(true)) {
      scheduler_.remove_listener(*submission_, *this);
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "wait abandoned"));
    }
  }
  void OnDone() override {
    if (submission_ != nullptr) scheduler_.remove_listener(*submission_, *this);
    release_observer();
    delete this;
  }

 private:
  // Exactly once: after on_terminal, or at OnDone for an abandoned wait.
  void release_observer() noexcept {
    if (engine::Submission* s = std::exchange(submission_, nullptr)) s->release_observer();
  }

  engine::Scheduler& scheduler_;
  engine::Submission* submission_;
  std::uint64_t handle_;
  v1::CompletionEvent event_;
  std::atomic<bool> finished_{false};
};

}  // namespace

Statistics AccordService::with_devices_lost(Statistics statistics) const {
  // The engine's counters do not know about device state; the registry does. A loss
  // touches every session, so the session's counters carry the daemon's count too.
  statistics.devices_lost = engine_.devices().losses();
  return statistics;
}

AccordService::AccordService(engine::Engine& engine, SessionRegistry& sessions, PeerRegistry& peers,
                             const AccessPolicy& policy, ServiceOptions options)
    : engine_(engine), sessions_(sessions), peers_(peers), policy_(policy), options_(std::move(options)) {}

AccordService::~AccordService() = default;

grpc::Status AccordService::authenticate(Ctx* context, bool need_session, Caller& out) const {
  auto peer = peers_.find(context->peer());
  if (!peer) return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "unknown peer " + context->peer());
  if (!policy_.allowed(*peer)) return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, policy_.refusal(*peer));
  out.peer = *peer;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(grpc::string_ref(wire::kSessionMetadataKey.data(), wire::kSessionMetadataKey.size()));
  if (it == metadata.end()) {
    if (!need_session) return grpc::Status::OK;
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing 'accord-session' metadata: open a session on the session channel first");
  }
  const std::string token(it->second.data(), it->second.size());
  out.session = sessions_.find_by_token(token);
  if (!out.session) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown or closed session token");
  if (out.session->peer().uid != peer->uid)
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "session " + std::to_string(out.session->id()) + " belongs to uid " +
                            std::to_string(out.session->peer().uid) + "; this call came from uid " +
                            std::to_string(peer->uid));
  return grpc::Status::OK;
}

template <class Handler>
grpc::ServerUnaryReactor* AccordService::unary(Ctx* context, bool need_session, Handler&& handler) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  grpc::Status status;
  try {
    Caller caller;
    status = authenticate(context, need_session, caller);
    if (status.ok()) status = handler(caller);
  } catch (const std::exception& e) {
    spdlog::error("handler failed: {}", e.what());
    status = grpc::Status(grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what());
  }
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* AccordService::ListDevices(Ctx* ctx, const v1::ListDevicesRequest*,
                                                     v1::ListDevicesResponse* response) {
  return unary(ctx, false, [&](Caller& c) {
    to_proto(engine_.devices(), *response,
             c.session != nullptr ? c.session->engine_session().limits().isolation : std::string());
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::GetSessionInfo(Ctx* ctx, const v1::GetSessionInfoRequest*,
                                                        v1::SessionInfo* response) {
  return unary(ctx, true, [&](Caller& c) {
    const ServiceSession& s = *c.session;
    response->set_session_id(s.id());
    response->set_uid(s.peer().uid);
    response->set_gid(s.peer().gid);
    response->set_pid(s.peer().pid);
    response->set_label(s.label());
    const engine::SessionLimits& limits = s.engine_session().limits();
    response->set_priority(limits.priority);
    response->mutable_limits()->set_max_submissions(limits.max_submissions);
    response->mutable_limits()->set_graph_slots(limits.graph_slots);
    response->mutable_limits()->set_memory_budget(limits.memory_budget.value_or(0));
    response->mutable_limits()->set_max_objects(s.max_objects());
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::Allocate(Ctx* ctx, const v1::AllocateRequest* request,
                                                  v1::AllocateResponse* response) {
  return unary(ctx, true, [&](Caller& c) {
    auto placement = from_proto(request->placement(), request->has_placement());
    if (!placement.ok()) return to_grpc(placement.status());
    auto allocation = c.session->engine_session().allocate(static_cast<std::size_t>(request->bytes()), *placement);
    if (!allocation.ok()) return to_grpc(allocation.status());
    const bool mapped = allocation.value()->host_address() != nullptr;
    auto handle = c.session->add_buffer(std::move(allocation).value());
    if (!handle.ok()) return to_grpc(handle.status());
    response->set_buffer(handle.value());
    response->set_bytes(request->bytes());
    response->set_host_mapped(mapped);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::Free(Ctx* ctx, const v1::FreeRequest* request, v1::FreeResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    if (!c.session->remove_buffer(request->buffer())) return not_found(handle_name("buffer", request->buffer()));
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::LoadKernel(Ctx* ctx, const v1::LoadKernelRequest* request,
                                                    v1::LoadKernelResponse* response) {
  return unary(ctx, true, [&](Caller& c) {
    auto contract = from_proto(request->contract());
    if (!contract.ok()) return to_grpc(contract.status());
    auto device = from_proto(request->device(), request->has_device());
    if (!device.ok()) return to_grpc(device.status());
    devices::CodeImage image;
    image.device = device.value();
    image.name = request->name();
    const bool client_code = !request->image().empty() || request->image_upload() != 0;
    if (client_code) {
      // The upload is consumed whatever happens next, so a refused load leaves nothing.
      std::optional<std::vector<std::byte>> uploaded;
      if (request->image_upload() != 0) {
        uploaded = c.session->take_upload(request->image_upload());
        if (!uploaded) return not_found("unknown code image upload " + std::to_string(request->image_upload()));
      }
      if (!options_.allow_plugins)
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                            "client-supplied device code ('" + request->name() + "' for " +
                                image.device.to_string() + ") is refused: kernel_policy = catalog");
      if (!request->plugin_path().empty()) return invalid("a LoadKernel request names a plugin or an image, not both");
      if (image.device.kind == DeviceKind::Host)
        return invalid("kernel '" + request->name() + "': images load onto a GPU or an NPU, not the host");
      if (uploaded) {
        image.image = std::move(*uploaded);
      } else {
        const std::string& bytes = request->image();
        const auto* begin = reinterpret_cast<const std::byte*>(bytes.data());
        image.image.assign(begin, begin + bytes.size());
      }
      const auto dims = [&](const auto& field, const char* what, std::array<std::uint32_t, 3>& out) -> grpc::Status {
        if (field.empty()) return grpc::Status::OK;
        if (field.size() != 3) return invalid(std::string(what) + " needs 3 dimensions, got " + std::to_string(field.size()));
        for (int i = 0; i < 3; ++i) {
          if (field.Get(i) == 0) return invalid(std::string(what) + " dimensions must be >= 1");
          out[static_cast<std::size_t>(i)] = field.Get(i);
        }
        return grpc::Status::OK;
      };
      if (auto s = dims(request->grid(), "grid", image.grid); !s.ok()) return s;
      if (auto s = dims(request->block(), "block", image.block); !s.ok()) return s;
      image.shared_bytes = request->shared_bytes();
    } else if (!request->plugin_path().empty()) {
      const auto& allowed = options_.plugin_paths;
      const bool listed = std::find(allowed.begin(), allowed.end(), request->plugin_path()) != allowed.end();
      if (!listed && (!options_.allow_plugins || !allowed.empty()))
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                            "plugin '" + request->plugin_path() + "' is not in accordd's plugin_paths" +
                                (options_.allow_plugins ? "" : " (kernel_policy = catalog)"));
      image.kind = devices::CodeImage::Kind::Plugin;
      image.plugin_path = request->plugin_path();
    }
    auto kernel = c.session->engine_session().load_kernel(image, contract.value());
    if (!kernel.ok()) return to_grpc(kernel.status());
    auto handle = c.session->add_kernel(std::move(kernel).value());
    if (!handle.ok()) return to_grpc(handle.status());
    response->set_kernel(handle.value());
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::ReleaseKernel(Ctx* ctx, const v1::ReleaseKernelRequest* request,
                                                       v1::ReleaseKernelResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    if (!c.session->remove_kernel(request->kernel())) return not_found(handle_name("kernel", request->kernel()));
    return grpc::Status::OK;
  });
}

grpc::Status AccordService::prepare_graph(ServiceSession& session, const v1::PrepareGraphRequest& request,
                                          v1::PrepareGraphResponse& response) {
  engine::GraphSpec spec;
  spec.ops.reserve(static_cast<std::size_t>(request.nodes_size()));
  for (int i = 0; i < request.nodes_size(); ++i) {
    const v1::Node& node = request.nodes(i);
    const std::string where = "graph node " + std::to_string(i);
    engine::OperationSpec op;
    switch (node.op_case()) {
      case v1::Node::kFill: {
        op.kind = devices::OpKind::Fill;
        if (node.fill().value() > 255) return invalid(where + ": fill value " + std::to_string(node.fill().value()) + " is not a byte");
        op.fill_value = static_cast<std::uint8_t>(node.fill().value());
        op.bindings.emplace_back();
        if (auto s = to_view(session, node.fill().destination(), where + " binding 0", op.bindings[0]); !s.ok()) return s;
        break;
      }
      case v1::Node::kCopy: {
        op.kind = devices::OpKind::Copy;
        op.lane = from_proto_lane(node.copy().lane());
        op.bindings.resize(2);
        if (auto s = to_view(session, node.copy().destination(), where + " binding 0", op.bindings[0]); !s.ok()) return s;
        if (auto s = to_view(session, node.copy().source(), where + " binding 1", op.bindings[1]); !s.ok()) return s;
        break;
      }
      case v1::Node::kHostKernel:
      case v1::Node::kKernel: {
        // The same operation: the engine runs the kernel on its device's lane.
        const v1::KernelOp& k = node.op_case() == v1::Node::kKernel ? node.kernel() : node.host_kernel();
        op.kind = devices::OpKind::Kernel;
        op.kernel = session.kernel(k.kernel());
        if (!op.kernel) return not_found(where + ": " + handle_name("kernel", k.kernel()));
        op.allow_aliasing = k.allow_aliasing();
        const int count = k.bindings_size();
        op.bindings.resize(static_cast<std::size_t>(count));
        for (int b = 0; b < count; ++b)
          if (auto s = to_view(session, k.bindings(b), where + " binding " + std::to_string(b),
                               op.bindings[static_cast<std::size_t>(b)]);
              !s.ok())
            return s;
        break;
      }
      default: return invalid(where + ": no operation set (fill, copy, host_kernel or kernel)");
    }
    spec.ops.push_back(std::move(op));
  }
  auto prepared = session.engine_session().prepare(std::move(spec));
  if (!prepared.ok()) return to_grpc(prepared.status());
  engine::PreparedGraph& graph = *prepared.value();
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    v1::NodeDependencies* deps = response.add_dependencies();
    for (engine::OpIndex d : graph.dependencies().of(static_cast<engine::OpIndex>(i))) deps->add_after(d);
  }
  for (const engine::PreparedRegion& r : graph.regions()) {
    v1::Region* region = response.add_regions();
    region->set_lane(to_proto(r.lane));
    for (std::uint32_t op : r.ops) region->add_nodes(op);
    for (std::uint32_t p : r.predecessors) region->add_predecessors(p);
  }
  auto handle = session.add_graph(std::move(prepared).value());
  if (!handle.ok()) return to_grpc(handle.status());
  response.set_graph(handle.value());
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* AccordService::PrepareGraph(Ctx* ctx, const v1::PrepareGraphRequest* request,
                                                      v1::PrepareGraphResponse* response) {
  return unary(ctx, true, [&](Caller& c) { return prepare_graph(*c.session, *request, *response); });
}

grpc::ServerUnaryReactor* AccordService::ReleaseGraph(Ctx* ctx, const v1::ReleaseGraphRequest* request,
                                                      v1::ReleaseGraphResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    if (!c.session->remove_graph(request->graph())) return not_found(handle_name("graph", request->graph()));
    return grpc::Status::OK;
  });
}

grpc::Status AccordService::submit(ServiceSession& session, const v1::SubmitRequest& request,
                                   v1::SubmitResponse& response) {
  engine::Ref<engine::PreparedGraph> graph = session.graph(request.graph());
  if (!graph) return not_found(handle_name("graph", request.graph()));
  if (static_cast<std::size_t>(request.after_size()) > engine::kMaxProducers)
    return invalid("submit accepts at most " + std::to_string(engine::kMaxProducers) + " producers, got " +
                   std::to_string(request.after_size()));
  std::array<engine::Submission*, engine::kMaxProducers> producers{};
  std::size_t count = 0;
  grpc::Status status = grpc::Status::OK;
  for (int i = 0; i < request.after_size() && status.ok(); ++i) {
    producers[count] = session.retain_completion(request.after(i));
    if (producers[count] == nullptr) status = not_found("producer " + std::to_string(i) + ": " + handle_name("completion", request.after(i)));
    else ++count;
  }
  if (status.ok()) {
    auto reserved = session.reserve_completion();
    if (!reserved.ok()) {
      status = to_grpc(reserved.status());
    } else {
      auto slot = session.engine_session().submit(*graph, std::span(producers.data(), count));
      if (!slot.ok()) {
        session.cancel_reservation(reserved.value());
        status = to_grpc(std::move(slot).status().annotate("graph handle " + std::to_string(request.graph())));
      } else {
        session.fill_completion(reserved.value(), slot.value());
        response.set_completion(reserved.value());
      }
    }
  }
  for (std::size_t i = 0; i < count; ++i) producers[i]->release_observer();
  return status;
}

grpc::ServerUnaryReactor* AccordService::Submit(Ctx* ctx, const v1::SubmitRequest* request,
                                                v1::SubmitResponse* response) {
  return unary(ctx, true, [&](Caller& c) { return submit(*c.session, *request, *response); });
}

grpc::ServerWriteReactor<v1::CompletionEvent>* AccordService::WaitCompletion(Ctx* ctx,
                                                                              const v1::WaitCompletionRequest* request) {
  Caller caller;
  grpc::Status status = authenticate(ctx, true, caller);
  engine::Submission* submission = nullptr;
  if (status.ok()) {
    submission = caller.session->retain_completion(request->completion());
    if (!submission) status = not_found(handle_name("completion", request->completion()));
  }
  if (!status.ok()) {
    // A reactor that only reports the error.
    class Refusal final : public grpc::ServerWriteReactor<v1::CompletionEvent> {
     public:
      explicit Refusal(const grpc::Status& s) { Finish(s); }
      void OnDone() override { delete this; }
    };
    return new Refusal(status);
  }
  return new WaitReactor(engine_.scheduler(), submission, request->completion());
}

grpc::ServerUnaryReactor* AccordService::PollCompletion(Ctx* ctx, const v1::PollCompletionRequest* request,
                                                        v1::CompletionEvent* response) {
  return unary(ctx, true, [&](Caller& c) {
    engine::Submission* s = c.session->retain_completion(request->completion());
    if (!s) return not_found(handle_name("completion", request->completion()));
    // "Ended" only once its listeners (a ring ticket, a WaitCompletion stream) were told:
    // they let go of the slot first, so a client that hears it here, drops the completion
    // and submits again at once finds the slot free, whatever channel told it first.
    if (s->terminal()) s->wait_until_told();
    to_proto(*s, request->completion(), *response);
    s->release_observer();
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::Cancel(Ctx* ctx, const v1::CancelRequest* request, v1::CancelResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    engine::Submission* s = c.session->retain_completion(request->completion());
    if (!s) return not_found(handle_name("completion", request->completion()));
    s->cancel();
    s->release_observer();
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::ReleaseCompletion(Ctx* ctx, const v1::ReleaseCompletionRequest* request,
                                                           v1::ReleaseCompletionResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    if (!c.session->remove_completion(request->completion()))
      return not_found(handle_name("completion", request->completion()));
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::AcquireLease(Ctx* ctx, const v1::AcquireLeaseRequest* request,
                                                      v1::AcquireLeaseResponse*) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  Caller caller;
  grpc::Status status = authenticate(ctx, true, caller);
  engine::Ref<engine::Allocation> allocation;
  if (status.ok()) {
    allocation = caller.session->buffer(request->buffer());
    if (!allocation) status = not_found(handle_name("buffer", request->buffer()));
  }
  if (!status.ok()) {
    reactor->Finish(status);
    return reactor;
  }
  if (!request->wait()) {
    Status now = caller.session->acquire_lease(request->buffer(), *allocation, request->write(), false);
    reactor->Finish(to_grpc(std::move(now).annotate("buffer handle " + std::to_string(request->buffer()))));
    return reactor;
  }
  // A lease that must wait for device work is answered when the engine grants it (a
  // conflicting lease is Busy at once either way): the handler never blocks.
  LeaseWaitReactor::start(std::make_unique<LeaseWaitReactor>(reactor, caller.session, std::move(allocation),
                                                             request->buffer(), request->write()));
  return reactor;
}

grpc::ServerUnaryReactor* AccordService::ReleaseLease(Ctx* ctx, const v1::ReleaseLeaseRequest* request,
                                                      v1::ReleaseLeaseResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    if (!c.session->buffer(request->buffer())) return not_found(handle_name("buffer", request->buffer()));
    return to_grpc(c.session->release_lease(request->buffer(), request->write()));
  });
}

grpc::ServerUnaryReactor* AccordService::GetStatistics(Ctx* ctx, const v1::GetStatisticsRequest*,
                                                       v1::GetStatisticsResponse* response) {
  return unary(ctx, true, [&](Caller& c) {
    to_proto(with_devices_lost(c.session->engine_session().statistics()), *response->mutable_session());
    to_proto(with_devices_lost(engine_.statistics()), *response->mutable_daemon());
    if (options_.rings != nullptr) {
      response->set_ring_pollers_serving(static_cast<std::uint32_t>(options_.rings->pollers_serving()));
      response->set_ring_pollers_most(static_cast<std::uint32_t>(options_.rings->pollers_most()));
    }
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::StartTrace(Ctx* ctx, const v1::StartTraceRequest* request,
                                                    v1::StartTraceResponse*) {
  return unary(ctx, true, [&](Caller& c) {
    if (request->event_capacity() > (1u << 24)) return invalid("trace event capacity is at most 16777216");
    return to_grpc(c.session->engine_session().start_trace(static_cast<std::size_t>(request->event_capacity())));
  });
}

grpc::ServerUnaryReactor* AccordService::FinishTrace(Ctx* ctx, const v1::FinishTraceRequest*,
                                                     v1::FinishTraceResponse* response) {
  return unary(ctx, true, [&](Caller& c) {
    auto trace = c.session->engine_session().finish_trace();
    if (trace) to_proto(*trace, *response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* AccordService::ListSessions(Ctx* ctx, const v1::ListSessionsRequest*,
                                                      v1::ListSessionsResponse* response) {
  return unary(ctx, false, [&](Caller& c) {
    const bool admin = c.peer.uid == 0 || c.peer.uid == getuid();
    const auto now = std::chrono::steady_clock::now();
    for (const auto& s : sessions_.list()) {
      if (!admin && s->peer().uid != c.peer.uid) continue;
      v1::SessionSummary* out = response->add_sessions();
      v1::SessionInfo* info = out->mutable_info();
      info->set_session_id(s->id());
      info->set_uid(s->peer().uid);
      info->set_gid(s->peer().gid);
      info->set_pid(s->peer().pid);
      info->set_label(s->label());
      const engine::SessionLimits& limits = s->engine_session().limits();
      info->set_priority(limits.priority);
      info->mutable_limits()->set_max_submissions(limits.max_submissions);
      info->mutable_limits()->set_graph_slots(limits.graph_slots);
      info->mutable_limits()->set_memory_budget(limits.memory_budget.value_or(0));
      info->mutable_limits()->set_max_objects(s->max_objects());
      const ServiceSession::Counts counts = s->counts();
      out->set_buffers(counts.buffers);
      out->set_graphs(counts.graphs);
      const Statistics st = with_devices_lost(s->engine_session().statistics());
      out->set_pending(st.submissions - st.completions);
      to_proto(st, *out->mutable_statistics());
      out->set_age_seconds(std::chrono::duration<double>(now - s->created()).count());
    }
    return grpc::Status::OK;
  });
}

}  // namespace accord::service
