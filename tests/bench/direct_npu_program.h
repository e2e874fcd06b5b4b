// An NPU program run directly through Level Zero, the baseline npu_graph_bench measures
// Accord against: one command list holding the program's graph execute (graph extension,
// buffers bound when the execute is appended), closed once; each run executes it on an
// asynchronous command queue with a fence, waits on the fence from the calling thread and
// resets it. Discovery (loader, driver, context, extension table, handle translation)
// reuses the level_zero backend's LevelZeroRuntime; nothing of the backend runs per call.
// Owner thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "daemon/devices/level_zero/level_zero_handles.h"
#include "daemon/devices/level_zero/level_zero_runtime.h"
#include "daemon/devices/level_zero/level_zero_status.h"
#include "tests/bench/npu_bench_programs.h"

namespace accord::bench {

class DirectNpuProgram {
 public:
  // Creates the program on the runtime's first NPU, initialises it, binds freshly filled
  // inputs and records the execute. Errors name the Level Zero call that failed.
  static Result<std::unique_ptr<DirectNpuProgram>> create(
      std::shared_ptr<const devices::level_zero::LevelZeroRuntime> runtime, const NpuBenchProgram& program) {
    namespace l0 = devices::level_zero;
    std::unique_ptr<DirectNpuProgram> p(new DirectNpuProgram());
    p->runtime_ = runtime;
    p->program_ = program;
    const l0::ZeSymbols& ze = runtime->ze();
    const l0::NpuHandle& npu = runtime->npus()[0];
    const l0::NpuDriver& driver = runtime->drivers()[npu.driver];
    const ze_graph_dditable_ext_t& table = *driver.graph;
    const std::string what = "direct " + program.label;

    ze_command_queue_desc_t queue_desc{};
    queue_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    queue_desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_queue_handle_t queue = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("zeCommandQueueCreate",
                              ze.zeCommandQueueCreate(driver.context.get(), npu.device, &queue_desc, &queue), what);
    p->queue_ = l0::UniqueZeCommandQueue(queue, ze.zeCommandQueueDestroy);

    ze_graph_desc_t graph_desc{};
    graph_desc.stype = ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES;
    graph_desc.format = ZE_GRAPH_FORMAT_NATIVE;
    graph_desc.inputSize = program.text.size();
    graph_desc.pInput = reinterpret_cast<const std::uint8_t*>(program.text.data());
    graph_desc.pBuildFlags = "";
    ze_graph_handle_t graph = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("pfnCreate",
                              table.pfnCreate(runtime->translate(ZEL_HANDLE_CONTEXT, driver.context.get()),
                                              runtime->translate(ZEL_HANDLE_DEVICE, npu.device), &graph_desc, &graph),
                              what);
    p->graph_ = l0::UniqueZeGraph(graph, table.pfnDestroy);

    ze_fence_desc_t fence_desc{};
    fence_desc.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
    ze_fence_handle_t fence = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR("zeFenceCreate", ze.zeFenceCreate(queue, &fence_desc, &fence), what);
    p->fence_ = l0::UniqueZeFence(fence, ze.zeFenceDestroy);

    // Initialise once, as the backend's load() does: its own list, run and waited for.
    {
      ACCORD_ASSIGN_OR_RETURN(l0::UniqueZeCommandList init, p->create_list());
      ACCORD_ZE_RETURN_IF_ERROR("pfnAppendGraphInitialize",
                                table.pfnAppendGraphInitialize(runtime->translate(ZEL_HANDLE_COMMAND_LIST, init.get()),
                                                               graph, nullptr, 0, nullptr),
                                what);
      ACCORD_ZE_RETURN_IF_ERROR("zeCommandListClose", ze.zeCommandListClose(init.get()), what);
      ze_command_list_handle_t lists[] = {init.get()};
      ACCORD_ZE_RETURN_IF_ERROR("zeCommandQueueExecuteCommandLists",
                                ze.zeCommandQueueExecuteCommandLists(queue, 1, lists, fence), what);
      ACCORD_ZE_RETURN_IF_ERROR("zeFenceHostSynchronize", ze.zeFenceHostSynchronize(fence, UINT64_MAX), what);
      ACCORD_ZE_RETURN_IF_ERROR("zeFenceReset", ze.zeFenceReset(fence), what);
    }

    p->a_.assign(program.elements, program.a_value);
    p->b_.assign(program.elements, program.b_value);
    p->c_.assign(program.elements, 0.0f);
    ACCORD_ASSIGN_OR_RETURN(p->list_, p->create_list());
    void* arguments[] = {p->a_.data(), p->b_.data(), p->c_.data()};
    for (std::uint32_t i = 0; i < 3; ++i)
      ACCORD_ZE_RETURN_IF_ERROR("pfnSetArgumentValue", table.pfnSetArgumentValue(graph, i, arguments[i]), what);
    ACCORD_ZE_RETURN_IF_ERROR("pfnAppendGraphExecute",
                              table.pfnAppendGraphExecute(runtime->translate(ZEL_HANDLE_COMMAND_LIST, p->list_.get()),
                                                          graph, nullptr, nullptr, 0, nullptr),
                              what);
    ACCORD_ZE_RETURN_IF_ERROR("zeCommandListClose", ze.zeCommandListClose(p->list_.get()), what);
    return p;
  }

  // Execute with the fence, wait on it here, reset it: what a program without Accord
  // does per inference. Returns the first failing call's result.
  ze_result_t run_once() const noexcept {
    const devices::level_zero::ZeSymbols& ze = runtime_->ze();
    ze_command_list_handle_t list = list_.get();
    if (ze_result_t r = ze.zeCommandQueueExecuteCommandLists(queue_.get(), 1, &list, fence_.get()); r != ZE_RESULT_SUCCESS)
      return r;
    if (ze_result_t r = ze.zeFenceHostSynchronize(fence_.get(), UINT64_MAX); r != ZE_RESULT_SUCCESS) return r;
    return ze.zeFenceReset(fence_.get());
  }

  // Whether every output element holds the program's expected value.
  bool verify() const {
    for (float x : c_)
      if (x != program_.expected) return false;
    return true;
  }
  void clear_output() { std::fill(c_.begin(), c_.end(), 0.0f); }

 private:
  DirectNpuProgram() = default;

  Result<devices::level_zero::UniqueZeCommandList> create_list() const {
    const devices::level_zero::NpuHandle& npu = runtime_->npus()[0];
    ze_command_list_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
    ze_command_list_handle_t list = nullptr;
    ACCORD_ZE_RETURN_IF_ERROR(
        "zeCommandListCreate",
        runtime_->ze().zeCommandListCreate(runtime_->drivers()[npu.driver].context.get(), npu.device, &desc, &list),
        "direct " + program_.label);
    return devices::level_zero::UniqueZeCommandList(list, runtime_->ze().zeCommandListDestroy);
  }

  // Declaration order is teardown order reversed: the fence, lists and graph go before
  // the queue that used them, and the runtime (context, loader) last.
  std::shared_ptr<const devices::level_zero::LevelZeroRuntime> runtime_;
  NpuBenchProgram program_;
  std::vector<float> a_, b_, c_;
  devices::level_zero::UniqueZeCommandQueue queue_;
  devices::level_zero::UniqueZeGraph graph_;
  devices::level_zero::UniqueZeFence fence_;
  devices::level_zero::UniqueZeCommandList list_;
};

}  // namespace accord::bench
