// The emulator as a Level Zero driver, through the real loader: discovery, device
// properties, memory, command lists (copy, fill, barrier, events), queues and fences.
// The graph extension has its own file (npu_emulator_graph_test.cpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "tests/unit/devices/npu_emulator/npu_emulator_test_support.h"

namespace accord::npu_testing {

TEST_CASE("the loader finds the emulator: one driver, one VPU device", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  std::uint32_t drivers = 0;
  REQUIRE(zeDriverGet(&drivers, nullptr) == ZE_RESULT_SUCCESS);
  CHECK(drivers == 1);
  ze_device_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  REQUIRE(zeDeviceGetProperties(s.device, &p) == ZE_RESULT_SUCCESS);
  CHECK(p.type == ZE_DEVICE_TYPE_VPU);
  CHECK(std::string(p.name) == "Accord NPU emulator");
  ze_driver_properties_t dp{};
  dp.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  REQUIRE(zeDriverGetProperties(s.driver, &dp) == ZE_RESULT_SUCCESS);
  CHECK(dp.driverVersion != 0);
}

TEST_CASE("the driver advertises ZE_extension_graph 1.4 and returns its table", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  std::uint32_t count = 0;
  REQUIRE(zeDriverGetExtensionProperties(s.driver, &count, nullptr) == ZE_RESULT_SUCCESS);
  REQUIRE(count == 1);
  ze_driver_extension_properties_t e{};
  REQUIRE(zeDriverGetExtensionProperties(s.driver, &count, &e) == ZE_RESULT_SUCCESS);
  CHECK(std::string(e.name) == ZE_GRAPH_EXT_NAME);
  CHECK(e.version == ZE_GRAPH_EXT_VERSION_1_4);
  void* table = nullptr;
  CHECK(zeDriverGetExtensionFunctionAddress(s.driver, "ZE_extension_graph_1_9", &table) ==
        ZE_RESULT_ERROR_INVALID_ARGUMENT);
  ze_device_graph_properties_t gp{};
  gp.stype = ZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES;
  REQUIRE(s.graph->pfnDeviceGetGraphProperties(s.device, &gp) == ZE_RESULT_SUCCESS);
  CHECK(gp.graphExtensionVersion == ZE_GRAPH_EXT_VERSION_1_4);
  CHECK(gp.graphFormatsSupported == ZE_GRAPH_FORMAT_NATIVE);
}

TEST_CASE("host, device and shared allocations report their type and are freed", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  ze_host_mem_alloc_desc_t host{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  ze_device_mem_alloc_desc_t dev{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  void* h = nullptr;
  void* d = nullptr;
  void* sh = nullptr;
  REQUIRE(zeMemAllocHost(s.context, &host, 100, 0, &h) == ZE_RESULT_SUCCESS);
  REQUIRE(zeMemAllocDevice(s.context, &dev, 200, 256, s.device, &d) == ZE_RESULT_SUCCESS);
  REQUIRE(zeMemAllocShared(s.context, &dev, &host, 300, 0, s.device, &sh) == ZE_RESULT_SUCCESS);
  CHECK(reinterpret_cast<std::uintptr_t>(d) % 256 == 0);
  const struct {
    void* p;
    ze_memory_type_t type;
  } expected[] = {{h, ZE_MEMORY_TYPE_HOST}, {d, ZE_MEMORY_TYPE_DEVICE}, {sh, ZE_MEMORY_TYPE_SHARED}};
  for (const auto& e : expected) {
    ze_memory_allocation_properties_t p{};
    p.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    REQUIRE(zeMemGetAllocProperties(s.context, static_cast<char*>(e.p) + 50, &p, nullptr) == ZE_RESULT_SUCCESS);
    CHECK(p.type == e.type);
  }
  int on_stack = 0;
  ze_memory_allocation_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
  REQUIRE(zeMemGetAllocProperties(s.context, &on_stack, &p, nullptr) == ZE_RESULT_SUCCESS);
  CHECK(p.type == ZE_MEMORY_TYPE_UNKNOWN);
  CHECK(zeMemFree(s.context, &on_stack) == ZE_RESULT_ERROR_INVALID_ARGUMENT);
  for (const auto& e : expected) CHECK(zeMemFree(s.context, e.p) == ZE_RESULT_SUCCESS);
  void* zero = nullptr;
  CHECK(zeMemAllocHost(s.context, &host, 0, 0, &zero) == ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  CHECK(zeMemAllocHost(s.context, &host, 64, 3, &zero) == ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
}

TEST_CASE("a command list copies, fills and signals events in order", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  std::vector<std::uint8_t> src(1000), dst(1000, 0), filled(64, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7);
  ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 2};
  ze_event_pool_handle_t pool = nullptr;
  REQUIRE(zeEventPoolCreate(s.context, &pool_desc, 0, nullptr, &pool) == ZE_RESULT_SUCCESS);
  ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
  ze_event_handle_t copied = nullptr, gate = nullptr;
  REQUIRE(zeEventCreate(pool, &ed, &copied) == ZE_RESULT_SUCCESS);
  ed.index = 1;
  REQUIRE(zeEventCreate(pool, &ed, &gate) == ZE_RESULT_SUCCESS);
  ed.index = 2;
  ze_event_handle_t out_of_pool = nullptr;
  CHECK(zeEventCreate(pool, &ed, &out_of_pool) == ZE_RESULT_ERROR_INVALID_ARGUMENT);

  ze_command_queue_handle_t queue = s.make_queue();
  ze_command_list_handle_t list = s.make_list();
  ze_fence_handle_t fence = s.make_fence(queue);
  const std::uint32_t pattern = 0xA1B2C3D4;
  // The list waits for `gate`, which the host signals after submitting.
  REQUIRE(zeCommandListAppendWaitOnEvents(list, 1, &gate) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandListAppendMemoryCopy(list, dst.data(), src.data(), src.size(), copied, 0, nullptr) ==
          ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandListAppendBarrier(list, nullptr, 1, &copied) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandListAppendMemoryFill(list, filled.data(), &pattern, 4, filled.size(), nullptr, 0, nullptr) ==
          ZE_RESULT_SUCCESS);
  CHECK(zeCommandListAppendMemoryFill(list, filled.data(), &pattern, 3, 6, nullptr, 0, nullptr) ==
        ZE_RESULT_ERROR_INVALID_SIZE);
  REQUIRE(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence) == ZE_RESULT_ERROR_INVALID_ARGUMENT);  // open
  REQUIRE(zeCommandListClose(list) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence) == ZE_RESULT_SUCCESS);
  CHECK(zeFenceHostSynchronize(fence, 20'000'000) == ZE_RESULT_NOT_READY);  // still gated
  CHECK(zeEventQueryStatus(copied) == ZE_RESULT_NOT_READY);
  REQUIRE(zeEventHostSignal(gate) == ZE_RESULT_SUCCESS);
  REQUIRE(zeFenceHostSynchronize(fence, UINT64_MAX) == ZE_RESULT_SUCCESS);
  CHECK(zeFenceQueryStatus(fence) == ZE_RESULT_SUCCESS);
  CHECK(zeEventQueryStatus(copied) == ZE_RESULT_SUCCESS);
  CHECK(dst == src);
  for (std::size_t i = 0; i < filled.size(); i += 4) CHECK(std::memcmp(&filled[i], &pattern, 4) == 0);

  // Reset and run again: the fence and the event start unsignalled again.
  REQUIRE(zeFenceReset(fence) == ZE_RESULT_SUCCESS);
  CHECK(zeFenceQueryStatus(fence) == ZE_RESULT_NOT_READY);
  REQUIRE(zeEventHostReset(copied) == ZE_RESULT_SUCCESS);
  std::fill(dst.begin(), dst.end(), 0);
  REQUIRE(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandQueueSynchronize(queue, UINT64_MAX) == ZE_RESULT_SUCCESS);
  CHECK(zeFenceQueryStatus(fence) == ZE_RESULT_SUCCESS);
  CHECK(dst == src);

  REQUIRE(zeCommandListReset(list) == ZE_RESULT_SUCCESS);
  REQUIRE(zeFenceDestroy(fence) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandListDestroy(list) == ZE_RESULT_SUCCESS);
  REQUIRE(zeCommandQueueDestroy(queue) == ZE_RESULT_SUCCESS);
  REQUIRE(zeEventDestroy(copied) == ZE_RESULT_SUCCESS);
  REQUIRE(zeEventDestroy(gate) == ZE_RESULT_SUCCESS);
  REQUIRE(zeEventPoolDestroy(pool) == ZE_RESULT_SUCCESS);
}

TEST_CASE("a handle the driver did not make is refused, not dereferenced as its own", "[npu][npu_emulator]") {
  ZeSession& s = ZeSession::get();
  ze_command_list_handle_t list = s.make_list();
  // A context handle where a list is expected: right library, wrong kind.
  CHECK(zeCommandListClose(reinterpret_cast<ze_command_list_handle_t>(s.context)) ==
        ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  std::uint64_t fake[4] = {1, 2, 3, 4};
  CHECK(s.graph->pfnAppendGraphInitialize(reinterpret_cast<ze_command_list_handle_t>(fake),
                                          reinterpret_cast<ze_graph_handle_t>(fake), nullptr, 0, nullptr) ==
        ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
  REQUIRE(zeCommandListDestroy(list) == ZE_RESULT_SUCCESS);
}

}  // namespace accord::npu_testing
