// The Level Zero session the emulator tests share: the real loader (linked directly),
// with ZE_ENABLE_ALT_DRIVERS naming the emulator built in this tree, set before the
// process's first zeInit (the loader reads it there). Plus short ways to create and run
// a graph. Test code only.
#pragma once

#include <catch2/catch.hpp>
#include <level_zero/ze_api.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "accord_ze/ze_graph_ext.h"

namespace accord::npu_testing {

struct ZeSession {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  const ze_graph_dditable_ext_t* graph = nullptr;

  // Initialises once per process. Thread-safe (a function-local static).
  static ZeSession& get() {
    static ZeSession session = [] {
      ::setenv("ZE_ENABLE_ALT_DRIVERS", ACCORD_NPU_EMULATOR_PATH, 1);
      ZeSession s;
      REQUIRE(zeInit(ZE_INIT_FLAG_VPU_ONLY) == ZE_RESULT_SUCCESS);
      std::uint32_t count = 1;
      REQUIRE(zeDriverGet(&count, &s.driver) == ZE_RESULT_SUCCESS);
      count = 1;
      REQUIRE(zeDeviceGet(s.driver, &count, &s.device) == ZE_RESULT_SUCCESS);
      ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
      REQUIRE(zeContextCreate(s.driver, &desc, &s.context) == ZE_RESULT_SUCCESS);
      void* table = nullptr;
      REQUIRE(zeDriverGetExtensionFunctionAddress(s.driver, ZE_GRAPH_EXT_NAME_1_4, &table) == ZE_RESULT_SUCCESS);
      s.graph = static_cast<const ze_graph_dditable_ext_t*>(table);
      return s;
    }();
    return session;
  }

  ze_command_queue_handle_t make_queue() const {
    ze_command_queue_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_queue_handle_t queue = nullptr;
    REQUIRE(zeCommandQueueCreate(context, device, &desc, &queue) == ZE_RESULT_SUCCESS);
    return queue;
  }

  ze_command_list_handle_t make_list() const {
    ze_command_list_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
    ze_command_list_handle_t list = nullptr;
    REQUIRE(zeCommandListCreate(context, device, &desc, &list) == ZE_RESULT_SUCCESS);
    return list;
  }

  ze_fence_handle_t make_fence(ze_command_queue_handle_t queue) const {
    ze_fence_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
    ze_fence_handle_t fence = nullptr;
    REQUIRE(zeFenceCreate(queue, &desc, &fence) == ZE_RESULT_SUCCESS);
    return fence;
  }

  // pfnCreate on `text`; `log` receives the build log when it is refused.
  ze_result_t create_graph(const std::string& text, ze_graph_handle_t& out, std::string& log) const {
    ze_graph_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES;
    desc.format = ZE_GRAPH_FORMAT_NATIVE;
    desc.inputSize = text.size();
    desc.pInput = reinterpret_cast<const std::uint8_t*>(text.data());
    out = nullptr;
    const ze_result_t r = graph->pfnCreate(context, device, &desc, &out);
    log.clear();
    if (r != ZE_RESULT_SUCCESS) {
      std::uint32_t size = 0;
      REQUIRE(graph->pfnBuildLogGetString(nullptr, &size, nullptr) == ZE_RESULT_SUCCESS);
      log.resize(size);
      REQUIRE(graph->pfnBuildLogGetString(nullptr, &size, log.data()) == ZE_RESULT_SUCCESS);
      log.resize(std::strlen(log.c_str()));
    }
    return r;
  }

  // Runs `graph` once with `args` (argument order), in host allocations of the driver,
  // on a fresh queue: initialise + execute in one list, a fence, wait. Outputs are
  // copied back into `args`.
  void run(ze_graph_handle_t g, std::vector<std::vector<float>>& args) const {
    std::vector<void*> buffers;
    for (auto& a : args) {
      void* p = nullptr;
      ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
      REQUIRE(zeMemAllocHost(context, &desc, a.size() * sizeof(float), 64, &p) == ZE_RESULT_SUCCESS);
      std::memcpy(p, a.data(), a.size() * sizeof(float));
      buffers.push_back(p);
    }
    for (std::uint32_t i = 0; i < buffers.size(); ++i)
      REQUIRE(graph->pfnSetArgumentValue(g, i, buffers[i]) == ZE_RESULT_SUCCESS);
    ze_command_queue_handle_t queue = make_queue();
    ze_command_list_handle_t list = make_list();
    ze_fence_handle_t fence = make_fence(queue);
    REQUIRE(graph->pfnAppendGraphInitialize(list, g, nullptr, 0, nullptr) == ZE_RESULT_SUCCESS);
    REQUIRE(graph->pfnAppendGraphExecute(list, g, nullptr, nullptr, 0, nullptr) == ZE_RESULT_SUCCESS);
    REQUIRE(zeCommandListClose(list) == ZE_RESULT_SUCCESS);
    REQUIRE(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence) == ZE_RESULT_SUCCESS);
    REQUIRE(zeFenceHostSynchronize(fence, UINT64_MAX) == ZE_RESULT_SUCCESS);
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::memcpy(args[i].data(), buffers[i], args[i].size() * sizeof(float));
      REQUIRE(zeMemFree(context, buffers[i]) == ZE_RESULT_SUCCESS);
    }
    REQUIRE(zeFenceDestroy(fence) == ZE_RESULT_SUCCESS);
    REQUIRE(zeCommandListDestroy(list) == ZE_RESULT_SUCCESS);
    REQUIRE(zeCommandQueueDestroy(queue) == ZE_RESULT_SUCCESS);
  }
};

}  // namespace accord::npu_testing
