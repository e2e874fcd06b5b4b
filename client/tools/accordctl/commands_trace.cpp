// trace: a trace is per session, so accordctl cannot record other clients' work; it
// traces a probe workload of its own instead, which checks the daemon end to end
// (session channel, allocation, kernel load, prepare, submit, completion) and shows
// how long each lane's regions take on this box.
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

#include "accord/builtin_kernels.h"
#include "client/tools/accordctl/commands.h"
#include "client/tools/accordctl/proto_text.h"

namespace accord::ctl {
namespace {

// 16 KiB per operand: large enough for a measurable kernel, small enough to keep the
// probe's footprint negligible on a busy box.
constexpr std::uint32_t kProbeElements = 4096;
constexpr std::uint64_t kOperandBytes = std::uint64_t{kProbeElements} * sizeof(float);

v1::BufferView view(std::uint64_t buffer, std::uint64_t offset, std::uint64_t length) {
  v1::BufferView out;
  out.set_buffer(buffer);
  out.set_offset(offset);
  out.set_length(length);
  return out;
}

// Two buffers: `inputs` holds a then b, `out` the sum. Fill a and fill b write disjoint
// halves, so they need no edge; the add follows both.
Result<std::uint64_t> prepare_probe(Connection& connection) {
  v1::AllocateRequest allocate;
  allocate.mutable_placement()->set_kind(v1::PLACEMENT_KIND_HOST_VISIBLE);
  allocate.set_bytes(2 * kOperandBytes);
  ACCORD_ASSIGN_OR_RETURN(const v1::AllocateResponse inputs,
                          connection.call(&v1::Accord::Stub::Allocate, allocate, "probe buffer 'inputs'"));
  allocate.set_bytes(kOperandBytes);
  ACCORD_ASSIGN_OR_RETURN(const v1::AllocateResponse out,
                          connection.call(&v1::Accord::Stub::Allocate, allocate, "probe buffer 'out'"));

  const builtin::KernelSpec add = builtin::add_f32(kProbeElements);
  v1::LoadKernelRequest load;
  load.set_name(add.name);
  *load.mutable_contract() = to_proto(add.contract);
  ACCORD_ASSIGN_OR_RETURN(const v1::LoadKernelResponse kernel,
                          connection.call(&v1::Accord::Stub::LoadKernel, load, "probe kernel " + add.name));

  const v1::BufferView a = view(inputs.buffer(), 0, kOperandBytes);
  const v1::BufferView b = view(inputs.buffer(), kOperandBytes, kOperandBytes);
  v1::PrepareGraphRequest graph;
  // 0x3f and 0x40 bytes read as ordinary floats (about 0.75 and 3.0), never NaN.
  v1::FillOp* fill_a = graph.add_nodes()->mutable_fill();
  *fill_a->mutable_destination() = a;
  fill_a->set_value(0x3f);
  v1::FillOp* fill_b = graph.add_nodes()->mutable_fill();
  *fill_b->mutable_destination() = b;
  fill_b->set_value(0x40);
  v1::KernelOp* sum = graph.add_nodes()->mutable_host_kernel();
  sum->set_kernel(kernel.kernel());
  *sum->add_bindings() = a;
  *sum->add_bindings() = b;
  *sum->add_bindings() = view(out.buffer(), 0, kOperandBytes);
  ACCORD_ASSIGN_OR_RETURN(const v1::PrepareGraphResponse prepared,
                          connection.call(&v1::Accord::Stub::PrepareGraph, graph, "probe graph"));
  return prepared.graph();
}

// One submit, wait and release. The release matters: an observed completion keeps its
// graph slot reserved (ARCHITECTURE.md engine item 6), and the probe reuses one graph.
Status run_once(Connection& connection, std::uint64_t graph) {
  v1::SubmitRequest submit;
  submit.set_graph(graph);
  ACCORD_ASSIGN_OR_RETURN(const v1::SubmitResponse submitted, connection.call(&v1::Accord::Stub::Submit, submit));
  auto event = connection.wait_completion(submitted.completion());
  v1::ReleaseCompletionRequest release;
  release.set_completion(submitted.completion());
  (void)connection.call(&v1::Accord::Stub::ReleaseCompletion, release);
  if (!event.ok()) return std::move(event).status();
  if (event->state() != v1::COMPLETION_STATE_SUCCEEDED)
    return invalid_error("probe submission " + completion_state_name(event->state()) + ": " + event->error());
  return Status();
}

// Opened before the probe runs, so a bad --out fails at once rather than after it.
Result<std::ofstream> open_output(const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return invalid_error("cannot write " + path + ": " + std::strerror(errno));
  return file;
}

Status write_output(std::ofstream& file, const std::string& path, const std::string& text) {
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) return invalid_error("cannot write " + path + ": " + std::strerror(errno));
  return Status();
}

}  // namespace

Status run_trace(Connection& connection, const TraceOptions& options) {
  ACCORD_ASSIGN_OR_RETURN(std::ofstream file, open_output(options.out));
  ACCORD_RETURN_IF_ERROR(connection.open_session("accordctl trace"));
  ACCORD_ASSIGN_OR_RETURN(const std::uint64_t graph, prepare_probe(connection));
  v1::StartTraceRequest start;
  start.set_event_capacity(options.capacity);
  ACCORD_RETURN_IF_ERROR(connection.call(&v1::Accord::Stub::StartTrace, start, "start trace").status());

  // The workload's failure is reported after the trace is saved: a trace of a failing
  // daemon is exactly what the operator wants to look at.
  Status workload;
  std::uint64_t submissions = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.seconds);
  do {
    workload = run_once(connection, graph);
    if (workload.ok()) ++submissions;
  } while (workload.ok() && std::chrono::steady_clock::now() < until);

  ACCORD_ASSIGN_OR_RETURN(const v1::FinishTraceResponse trace,
                          connection.call(&v1::Accord::Stub::FinishTrace, v1::FinishTraceRequest(), "finish trace"));
  ACCORD_RETURN_IF_ERROR(write_output(file, options.out, trace.chrome_json()));
  if (connection.options().json) {
    print_json({{"path", options.out},
                {"events", trace.events_size()},
                {"dropped", trace.dropped()},
                {"submissions", submissions},
                {"host_observed", true}});
  } else {
    std::cout << "traced " << submissions << " probe submissions: " << trace.events_size() << " events, "
              << trace.dropped() << " dropped (host-observed)\n"
              << "wrote " << options.out << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
  }
  return workload;
}

}  // namespace accord::ctl
