// The NPU graph extension of Level Zero ("ZE_extension_graph"), version 1.4, as Intel
// publishes it in ze_graph_ext.h (github.com/intel/level-zero-npu-extensions). Debian's
// libze-dev 1.8.12 does not ship that header, so this one restates the ABI: the names,
// the struct layouts and the order of the function table are Intel's, written anew.
//
// Both sides of the extension include it: the level_zero backend (the consumer) and
// the npu_emulator driver (a provider). It lives here, outside both code folders, as a
// vendor header would, and is reached as <accord_ze/ze_graph_ext.h> through the CMake
// target accord::ze_graph_ext. No Accord types: plain C declarations only.
//
// Version 1.4 is the smallest version with a build log (pfnBuildLogGetString), which is
// how a refused blob's reason reaches the caller. A driver that supports version 1.x
// (x >= 4) returns, for the name "ZE_extension_graph_1_4", a table whose first fields
// are the ones below; fields of later versions follow them and are not used. Entries of
// versions 1.1-1.3 that Accord never calls keep their slots (so the offsets stay right)
// with an opaque function type: ze_pfnGraphUnused_ext_t.
#pragma once

#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define ZE_GRAPH_EXT_NAME "ZE_extension_graph"
#define ZE_GRAPH_EXT_NAME_1_4 "ZE_extension_graph_1_4"

typedef enum _ze_graph_ext_version_t {
  ZE_GRAPH_EXT_VERSION_1_0 = ZE_MAKE_VERSION(1, 0),
  ZE_GRAPH_EXT_VERSION_1_1 = ZE_MAKE_VERSION(1, 1),
  ZE_GRAPH_EXT_VERSION_1_2 = ZE_MAKE_VERSION(1, 2),
  ZE_GRAPH_EXT_VERSION_1_3 = ZE_MAKE_VERSION(1, 3),
  ZE_GRAPH_EXT_VERSION_1_4 = ZE_MAKE_VERSION(1, 4),
  ZE_GRAPH_EXT_VERSION_FORCE_UINT32 = 0x7fffffff
} ze_graph_ext_version_t;

typedef struct _ze_graph_handle_t* ze_graph_handle_t;
typedef struct _ze_graph_profiling_query_handle_t* ze_graph_profiling_query_handle_t;

typedef enum _ze_graph_format_t {
  ZE_GRAPH_FORMAT_NATIVE = 0x1,       // a precompiled blob (here: the emulator's program format)
  ZE_GRAPH_FORMAT_NGRAPH_LITE = 0x2,  // IR compiled inside the driver
} ze_graph_format_t;

typedef struct _ze_graph_compiler_version_info_t {
  uint16_t major;
  uint16_t minor;
} ze_graph_compiler_version_info_t;

typedef enum _ze_structure_type_graph_ext_t {
  ZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES = 0x1,
  ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES = 0x2,
  ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES = 0x3,
  ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES = 0x4,
} ze_structure_type_graph_ext_t;

typedef struct _ze_device_graph_properties_t {
  ze_structure_type_graph_ext_t stype;
  void* pNext;
  ze_graph_ext_version_t graphExtensionVersion;
  ze_graph_compiler_version_info_t compilerVersion;
  ze_graph_format_t graphFormatsSupported;
  uint32_t maxOVOpsetVersionSupported;
} ze_device_graph_properties_t;

typedef enum _ze_graph_argument_precision_t {
  ZE_GRAPH_ARGUMENT_PRECISION_UNKNOWN = 0x00,
  ZE_GRAPH_ARGUMENT_PRECISION_FP32 = 0x01,
  ZE_GRAPH_ARGUMENT_PRECISION_FP16 = 0x02,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT16 = 0x03,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT8 = 0x04,
  ZE_GRAPH_ARGUMENT_PRECISION_INT32 = 0x05,
  ZE_GRAPH_ARGUMENT_PRECISION_INT16 = 0x06,
  ZE_GRAPH_ARGUMENT_PRECISION_INT8 = 0x07,
  ZE_GRAPH_ARGUMENT_PRECISION_BIN = 0x08,
  ZE_GRAPH_ARGUMENT_PRECISION_BF16 = 0x09,
} ze_graph_argument_precision_t;

typedef enum _ze_graph_argument_layout_t {
  ZE_GRAPH_ARGUMENT_LAYOUT_ANY = 0x00,
} ze_graph_argument_layout_t;

typedef struct _ze_graph_desc_t {
  ze_structure_type_graph_ext_t stype;
  void* pNext;
  ze_graph_format_t format;
  size_t inputSize;       // bytes at pInput
  const uint8_t* pInput;  // the blob; not NUL-terminated
  const char* pBuildFlags;
} ze_graph_desc_t;

typedef struct _ze_graph_properties_t {
  ze_structure_type_graph_ext_t stype;
  void* pNext;
  uint32_t numGraphArgs;
} ze_graph_properties_t;

typedef enum _ze_graph_argument_type_t {
  ZE_GRAPH_ARGUMENT_TYPE_INPUT,
  ZE_GRAPH_ARGUMENT_TYPE_OUTPUT
} ze_graph_argument_type_t;

#define ZE_MAX_GRAPH_ARGUMENT_NAME 256
#define ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE 5

// dims: unused trailing dimensions are 1 (as Intel's driver reports them).
typedef struct _ze_graph_argument_properties_t {
  ze_structure_type_graph_ext_t stype;
  void* pNext;
  char name[ZE_MAX_GRAPH_ARGUMENT_NAME];
  ze_graph_argument_type_t type;
  uint32_t dims[ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE];
  ze_graph_argument_precision_t networkPrecision;
  ze_graph_argument_layout_t networkLayout;
  ze_graph_argument_precision_t devicePrecision;
  ze_graph_argument_layout_t deviceLayout;
} ze_graph_argument_properties_t;

typedef ze_result_t(ZE_APICALL* ze_pfnDeviceGetGraphProperties_ext_t)(ze_device_handle_t hDevice,
                                                                      ze_device_graph_properties_t* pProperties);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphCreate_ext_t)(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                                         const ze_graph_desc_t* desc, ze_graph_handle_t* phGraph);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphDestroy_ext_t)(ze_graph_handle_t hGraph);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphGetNativeBinary_ext_t)(ze_graph_handle_t hGraph, size_t* pSize,
                                                                  uint8_t* pGraphNativeBinary);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphGetProperties_ext_t)(ze_graph_handle_t hGraph,
                                                                ze_graph_properties_t* pGraphProperties);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphGetArgumentProperties_ext_t)(
    ze_graph_handle_t hGraph, uint32_t argIndex, ze_graph_argument_properties_t* pGraphArgumentProperties);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphSetArgumentValue_ext_t)(ze_graph_handle_t hGraph, uint32_t argIndex,
                                                                   const void* pArgValue);
typedef ze_result_t(ZE_APICALL* ze_pfnAppendGraphInitialize_ext_t)(ze_command_list_handle_t hCommandList,
                                                                   ze_graph_handle_t hGraph,
                                                                   ze_event_handle_t hSignalEvent,
                                                                   uint32_t numWaitEvents,
                                                                   ze_event_handle_t* phWaitEvents);
typedef ze_result_t(ZE_APICALL* ze_pfnAppendGraphExecute_ext_t)(ze_command_list_handle_t hCommandList,
                                                                ze_graph_handle_t hGraph,
                                                                ze_graph_profiling_query_handle_t hProfilingQuery,
                                                                ze_event_handle_t hSignalEvent,
                                                                uint32_t numWaitEvents,
                                                                ze_event_handle_t* phWaitEvents);
// Version 1.4. `hGraph` may be null: the log of the last failed create.
typedef ze_result_t(ZE_APICALL* ze_pfnGraphBuildLogGetString_ext_t)(ze_graph_handle_t hGraph, uint32_t* pSize,
                                                                    char* pBuildLog);
// A slot of versions 1.1-1.3 (argument metadata, properties 2 and 3, query network)
// that Accord never calls. Same size as any function pointer.
typedef void(ZE_APICALL* ze_pfnGraphUnused_ext_t)(void);

typedef struct _ze_graph_dditable_ext_t {
  // version 1.0
  ze_pfnGraphCreate_ext_t pfnCreate;
  ze_pfnGraphDestroy_ext_t pfnDestroy;
  ze_pfnGraphGetProperties_ext_t pfnGetProperties;
  ze_pfnGraphGetArgumentProperties_ext_t pfnGetArgumentProperties;
  ze_pfnGraphSetArgumentValue_ext_t pfnSetArgumentValue;
  ze_pfnAppendGraphInitialize_ext_t pfnAppendGraphInitialize;
  ze_pfnAppendGraphExecute_ext_t pfnAppendGraphExecute;
  ze_pfnGraphGetNativeBinary_ext_t pfnGetNativeBinary;
  ze_pfnDeviceGetGraphProperties_ext_t pfnDeviceGetGraphProperties;
  // version 1.1
  ze_pfnGraphUnused_ext_t pfnGraphGetArgumentMetadata;
  ze_pfnGraphUnused_ext_t pfnGetArgumentProperties2;
  // version 1.2
  ze_pfnGraphUnused_ext_t pfnGetArgumentProperties3;
  // version 1.3
  ze_pfnGraphUnused_ext_t pfnQueryNetworkCreate;
  ze_pfnGraphUnused_ext_t pfnQueryNetworkDestroy;
  ze_pfnGraphUnused_ext_t pfnQueryNetworkGetSupportedLayers;
  // version 1.4
  ze_pfnGraphBuildLogGetString_ext_t pfnBuildLogGetString;
} ze_graph_dditable_ext_t;

#if defined(__cplusplus)
}  // extern "C"
#endif
