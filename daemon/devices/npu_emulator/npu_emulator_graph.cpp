// The graph extension ("ZE_extension_graph" 1.4) of the emulator: a graph is a parsed
// program (npu_program.h); arguments are bound by pointer and captured when an execute
// is appended, as Intel's driver does, so rebinding later does not change a recorded
// command list.
#include <algorithm>
#include <cstring>

#include "daemon/devices/npu_emulator/npu_emulator_impl.h"

namespace accord::npu_emulator {
namespace {

ze_result_t ZE_APICALL device_graph_properties(ze_device_handle_t device, ze_device_graph_properties_t* properties) {
  if (object_of<Device>(device) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->graphExtensionVersion = ZE_GRAPH_EXT_VERSION_1_4;
  properties->compilerVersion = {1, 0};
  properties->graphFormatsSupported = ZE_GRAPH_FORMAT_NATIVE;
  properties->maxOVOpsetVersionSupported = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_create(ze_context_handle_t context, ze_device_handle_t device, const ze_graph_desc_t* desc,
                                    ze_graph_handle_t* graph) {
  if (object_of<Context>(context) == nullptr || object_of<Device>(device) == nullptr) {
    set_build_log("the context or device handle is not one of this driver's (an untranslated loader handle?)");
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (desc == nullptr || graph == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->format != ZE_GRAPH_FORMAT_NATIVE) {
    set_build_log("only ZE_GRAPH_FORMAT_NATIVE (an accord-npu-program blob) is supported");
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (desc->pInput == nullptr && desc->inputSize != 0) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::string error;
  std::optional<Program> program =
      parse_program(std::span<const std::uint8_t>(desc->pInput, desc->pInput ? desc->inputSize : 0), error);
  if (!program) {
    set_build_log("accord-npu-program: " + error);
    return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
  }
  *graph = reinterpret_cast<ze_graph_handle_t>(new Graph(std::move(*program)));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_destroy(ze_graph_handle_t graph) {
  Graph* g = object_of<Graph>(graph);
  if (g == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete g;  // recorded executes keep the program alive through their shared_ptr
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_get_properties(ze_graph_handle_t graph, ze_graph_properties_t* properties) {
  Graph* g = object_of<Graph>(graph);
  if (g == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->numGraphArgs = static_cast<uint32_t>(g->program->arguments.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_get_argument_properties(ze_graph_handle_t graph, uint32_t index,
                                                     ze_graph_argument_properties_t* properties) {
  Graph* g = object_of<Graph>(graph);
  if (g == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (index >= g->program->arguments.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const Tensor& t = g->program->tensors[g->program->arguments[index]];
  std::memset(properties->name, 0, sizeof(properties->name));
  std::memcpy(properties->name, t.name.data(), std::min(t.name.size(), sizeof(properties->name) - 1));
  properties->type = t.role == TensorRole::Input ? ZE_GRAPH_ARGUMENT_TYPE_INPUT : ZE_GRAPH_ARGUMENT_TYPE_OUTPUT;
  for (std::size_t i = 0; i < ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE; ++i)
    properties->dims[i] = i < t.dims.size() ? t.dims[i] : 1;
  properties->networkPrecision = properties->devicePrecision = ZE_GRAPH_ARGUMENT_PRECISION_FP32;
  properties->networkLayout = properties->deviceLayout = ZE_GRAPH_ARGUMENT_LAYOUT_ANY;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL graph_set_argument_value(ze_graph_handle_t graph, uint32_t index, const void* value) {
  Graph* g = object_of<Graph>(graph);
  if (g == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (value == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (index >= g->bound.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(g->mutex);
  g->bound[index] = const_cast<void*>(value);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL append_graph_initialize(ze_command_list_handle_t list, ze_graph_handle_t graph,
                                               ze_event_handle_t signal, uint32_t wait_count,
                                               ze_event_handle_t* waits) {
  if (object_of<Graph>(graph) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command command;
  command.op = Command::Op::GraphInitialize;  // nothing to upload: the "device" is the CPU
  return append_command(list, std::move(command), signal, wait_count, waits);
}

ze_result_t ZE_APICALL append_graph_execute(ze_command_list_handle_t list, ze_graph_handle_t graph,
                                            ze_graph_profiling_query_handle_t profiling, ze_event_handle_t signal,
                                            uint32_t wait_count, ze_event_handle_t* waits) {
  Graph* g = object_of<Graph>(graph);
  if (g == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (profiling != nullptr) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  Command command;
  command.op = Command::Op::GraphExecute;
  command.program = g->program;
  {
    std::lock_guard lock(g->mutex);
    // Every argument must be bound: the program writes its outputs unconditionally.
    if (std::find(g->bound.begin(), g->bound.end(), nullptr) != g->bound.end())
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    command.arguments = g->bound;
  }
  return append_command(list, std::move(command), signal, wait_count, waits);
}

ze_result_t ZE_APICALL graph_get_native_binary(ze_graph_handle_t graph, size_t* size, uint8_t*) {
  if (object_of<Graph>(graph) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;  // the blob is the caller's own
}

ze_result_t ZE_APICALL build_log_get_string(ze_graph_handle_t graph, uint32_t* size, char* log) {
  if (graph != nullptr && object_of<Graph>(graph) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (size == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // A created graph has an empty log; a null graph asks for the driver's last refusal.
  const std::string text = graph == nullptr ? build_log() : std::string();
  const auto needed = static_cast<uint32_t>(text.size() + 1);
  if (*size == 0 || log == nullptr) {
    *size = needed;
    return ZE_RESULT_SUCCESS;
  }
  const std::size_t n = std::min<std::size_t>(*size - 1, text.size());
  std::memcpy(log, text.data(), n);
  log[n] = '\0';
  *size = static_cast<uint32_t>(n + 1);
  return ZE_RESULT_SUCCESS;
}

}  // namespace

namespace {
struct BuildLog {
  std::mutex mutex;
  std::string text;
};
BuildLog& the_build_log() {
  static BuildLog log;
  return log;
}
}  // namespace

void set_build_log(std::string log) {
  std::lock_guard lock(the_build_log().mutex);
  the_build_log().text = std::move(log);
}

std::string build_log() {
  std::lock_guard lock(the_build_log().mutex);
  return the_build_log().text;
}

const ze_graph_dditable_ext_t& graph_table() noexcept {
  static const ze_graph_dditable_ext_t table = [] {
    ze_graph_dditable_ext_t t{};
    t.pfnCreate = graph_create;
    t.pfnDestroy = graph_destroy;
    t.pfnGetProperties = graph_get_properties;
    t.pfnGetArgumentProperties = graph_get_argument_properties;
    t.pfnSetArgumentValue = graph_set_argument_value;
    t.pfnAppendGraphInitialize = append_graph_initialize;
    t.pfnAppendGraphExecute = append_graph_execute;
    t.pfnGetNativeBinary = graph_get_native_binary;
    t.pfnDeviceGetGraphProperties = device_graph_properties;
    t.pfnBuildLogGetString = build_log_get_string;
    return t;
  }();
  return table;
}

}  // namespace accord::npu_emulator
