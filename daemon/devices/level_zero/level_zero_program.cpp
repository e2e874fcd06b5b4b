// Creating an NPU program through the graph extension and checking its contract. Every
// handle handed to the extension is translated first (platform-notes.md: the extension
// table bypasses the loader, which wraps handles once two drivers are loaded).
#include "daemon/devices/level_zero/level_zero_program.h"

#include <limits>

#include "daemon/devices/level_zero/level_zero_status.h"

namespace accord::devices::level_zero {
namespace {

std::string argument_label(std::size_t i, const NpuArgument& a) {
  return "argument " + std::to_string(i) + " ('" + a.name + "', " + (a.output ? "output" : "input") + ")";
}

// The driver's explanation of the last refused create, or "" when it has none.
std::string build_log(const ze_graph_dditable_ext_t& table) {
  std::uint32_t size = 0;
  if (table.pfnBuildLogGetString(nullptr, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (table.pfnBuildLogGetString(nullptr, &size, log.data()) != ZE_RESULT_SUCCESS) return {};
  log.resize(std::min<std::size_t>(size, log.size()));
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

Result<NpuArgument> read_argument(const ze_graph_dditable_ext_t& table, ze_graph_handle_t graph, std::uint32_t i,
                                  const std::string& program) {
  ze_graph_argument_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES;
  ACCORD_ZE_RETURN_IF_ERROR("pfnGetArgumentProperties", table.pfnGetArgumentProperties(graph, i, &p),
                            "NPU program '" + program + "' argument " + std::to_string(i));
  p.name[ZE_MAX_GRAPH_ARGUMENT_NAME - 1] = '\0';
  NpuArgument a;
  a.name = p.name;
  a.output = p.type == ZE_GRAPH_ARGUMENT_TYPE_OUTPUT;
  if (p.devicePrecision != ZE_GRAPH_ARGUMENT_PRECISION_FP32)
    return unsupported_error("NPU program '" + program + "' " + argument_label(i, a) + " has precision " +
                             std::to_string(p.devicePrecision) + "; only f32 is supported");
  std::size_t elements = 1;
  a.layout = "f32[";
  for (std::size_t d = 0; d < ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE; ++d) {
    if (p.dims[d] != 0 && elements > std::numeric_limits<std::size_t>::max() / 4 / p.dims[d])
      return invalid_error("NPU program '" + program + "' " + argument_label(i, a) + " is too large");
    elements *= p.dims[d];
    a.layout += (d ? "," : "") + std::to_string(p.dims[d]);
  }
  a.layout += "]";
  a.bytes = elements * sizeof(float);
  return a;
}

}  // namespace

Status check_program_contract(const std::string& program, std::span<const NpuArgument> arguments,
                              const KernelContract& contract) {
  const std::string what = "NPU program '" + program + "'";
  if (Status status = contract.validate(); !status.ok()) return std::move(status).annotate(what);
  if (!contract.constants.empty())
    return invalid_error(what + " takes no constants; the contract has " + std::to_string(contract.constants.size()) +
                         " bytes");
  if (contract.bindings.size() != arguments.size())
    return invalid_error(what + " has " + std::to_string(arguments.size()) + " arguments; the contract declares " +
                         std::to_string(contract.bindings.size()) + " bindings");
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const NpuArgument& a = arguments[i];
    const BindingContract& b = contract.bindings[i];
    const Access expected = a.output ? Access::Write : Access::Read;
    if (b.access != expected)
      return invalid_error(what + " " + argument_label(i, a) + ": the program's access is " +
                           std::string(to_string(expected)) + "; the contract declares " +
                           std::string(to_string(b.access)));
    if (b.bytes != a.bytes)
      return invalid_error(what + " " + argument_label(i, a) + " is " + std::to_string(a.bytes) + " bytes (" +
                           a.layout + "); the contract declares " + std::to_string(b.bytes));
  }
  return Status();
}

Result<std::unique_ptr<NpuProgram>> NpuProgram::create(std::shared_ptr<const LevelZeroRuntime> runtime,
                                                       const NpuHandle& npu, const CodeImage& image,
                                                       const KernelContract& contract) {
  const NpuDriver& driver = runtime->drivers()[npu.driver];
  const ze_graph_dditable_ext_t& table = *driver.graph;
  const std::string name = image.name.empty() ? std::string("(unnamed)") : image.name;
  if (image.image.empty()) return invalid_error("NPU program '" + name + "' has an empty image");

  std::unique_ptr<NpuProgram> program(new NpuProgram());
  program->runtime_ = runtime;
  program->npu_ = &npu;
  program->table_ = &table;
  program->name_ = name;
  program->contract_ = contract;

  ze_graph_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES;
  desc.format = ZE_GRAPH_FORMAT_NATIVE;
  desc.inputSize = image.image.size();
  desc.pInput = reinterpret_cast<const std::uint8_t*>(image.image.data());
  desc.pBuildFlags = "";
  ze_graph_handle_t graph = nullptr;
  const ze_result_t created =
      table.pfnCreate(runtime->translate(ZEL_HANDLE_CONTEXT, driver.context.get()),
                      runtime->translate(ZEL_HANDLE_DEVICE, npu.device), &desc, &graph);
  if (created != ZE_RESULT_SUCCESS) {
    const std::string log = build_log(table);
    return ze_error(created, "pfnGraphCreate",
                    "NPU program '" + name + "' refused" + (log.empty() ? std::string() : ": " + log));
  }
  program->graph_ = UniqueZeGraph(graph, table.pfnDestroy);

  ze_graph_properties_t properties{};
  properties.stype = ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES;
  ACCORD_ZE_RETURN_IF_ERROR("pfnGraphGetProperties", table.pfnGetProperties(graph, &properties),
                            "NPU program '" + name + "'");
  for (std::uint32_t i = 0; i < properties.numGraphArgs; ++i) {
    ACCORD_ASSIGN_OR_RETURN(NpuArgument argument, read_argument(table, graph, i, name));
    program->arguments_.push_back(std::move(argument));
  }
  ACCORD_RETURN_IF_ERROR(check_program_contract(name, program->arguments_, contract));
  return program;
}

}  // namespace accord::devices::level_zero
