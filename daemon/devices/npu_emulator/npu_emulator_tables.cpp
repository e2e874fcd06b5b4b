// The 46 DDI table getters the Level Zero loader requires of a driver library
// (reference/platform-notes.md, "Level Zero without hardware"): 17 ze, 12 zet, 17 zes.
// The only symbols the library exports. Any table version 1.x is accepted; only entry
// points of Level Zero 1.0 are filled, and they are the leading fields of each table,
// so a loader with older (smaller) tables is never written past their end.
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "daemon/devices/npu_emulator/npu_emulator_impl.h"

namespace npu = accord::npu_emulator;

namespace {

ze_result_t check(ze_api_version_t version, const void* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ZE_MAJOR_VERSION(version) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

#define ACCORD_NPU_EMPTY_TABLE(getter, table_type)                                   \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, \
                                                         table_type* table) {      \
    return check(version, table);                                                  \
  }

extern "C" {

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnInit = npu::init;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnGet = npu::driver_get;
  t->pfnGetApiVersion = npu::driver_get_api_version;
  t->pfnGetProperties = npu::driver_get_properties;
  t->pfnGetIpcProperties = npu::driver_get_ipc_properties;
  t->pfnGetExtensionProperties = npu::driver_get_extension_properties;
  t->pfnGetExtensionFunctionAddress = npu::driver_get_extension_function_address;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnGet = npu::device_get;
  t->pfnGetSubDevices = npu::device_get_sub_devices;
  t->pfnGetProperties = npu::device_get_properties;
  t->pfnGetComputeProperties = npu::device_get_compute_properties;
  t->pfnGetCommandQueueGroupProperties = npu::device_get_queue_group_properties;
  t->pfnGetMemoryProperties = npu::device_get_memory_properties;
  t->pfnGetStatus = npu::device_get_status;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = npu::context_create;
  t->pfnDestroy = npu::context_destroy;
  t->pfnGetStatus = npu::context_get_status;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandQueueProcAddrTable(ze_api_version_t version,
                                                                   ze_command_queue_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = npu::queue_create;
  t->pfnDestroy = npu::queue_destroy;
  t->pfnExecuteCommandLists = npu::queue_execute;
  t->pfnSynchronize = npu::queue_synchronize;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version,
                                                                  ze_command_list_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = npu::list_create;
  t->pfnDestroy = npu::list_destroy;
  t->pfnClose = npu::list_close;
  t->pfnReset = npu::list_reset;
  t->pfnAppendBarrier = npu::list_append_barrier;
  t->pfnAppendMemoryCopy = npu::list_append_copy;
  t->pfnAppendMemoryFill = npu::list_append_fill;
  t->pfnAppendSignalEvent = npu::list_append_signal_event;
  t->pfnAppendWaitOnEvents = npu::list_append_wait_on_events;
  t->pfnAppendEventReset = npu::list_append_event_reset;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetFenceProcAddrTable(ze_api_version_t version, ze_fence_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = npu::fence_create;
  t->pfnDestroy = npu::fence_destroy;
  t->pfnHostSynchronize = npu::fence_host_synchronize;
  t->pfnQueryStatus = npu::fence_query_status;
  t->pfnReset = npu::fence_reset;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version,
                                                                ze_event_pool_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = npu::event_pool_create;
  t->pfnDestroy = npu::event_pool_destroy;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = npu::event_create;
  t->pfnDestroy = npu::event_destroy;
  t->pfnHostSignal = npu::event_host_signal;
  t->pfnHostSynchronize = npu::event_host_synchronize;
  t->pfnQueryStatus = npu::event_query_status;
  t->pfnHostReset = npu::event_host_reset;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t* t) {
  if (ze_result_t r = check(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnAllocShared = npu::mem_alloc_shared;
  t->pfnAllocDevice = npu::mem_alloc_device;
  t->pfnAllocHost = npu::mem_alloc_host;
  t->pfnFree = npu::mem_free;
  t->pfnGetAllocProperties = npu::mem_get_alloc_properties;
  t->pfnGetAddressRange = npu::mem_get_address_range;
  return ZE_RESULT_SUCCESS;
}

}  // extern "C"

// What an NPU lacks (platform-notes.md): images, modules, kernels, samplers, physical and
// virtual memory. Their tables stay empty, and so do the tools and sysman tables.
ACCORD_NPU_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zeGetModuleProcAddrTable, ze_module_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)

ACCORD_NPU_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

ACCORD_NPU_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
ACCORD_NPU_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
